//! HAVING compiled once per query for its most common shape: comparisons of aggregate
//! results with constants, joined by AND.
//!
//! A dashboard query such as `... GROUP BY origin HAVING count(*) >= 100` finalises every
//! group of every closed instance and keeps few of them. The generic evaluator
//! ([`crate::expr::eval`]) needs a whole aggregate row (group key included) and walks the
//! expression tree per group; [`HavingFilter`] reads the finalised aggregates straight from
//! their partial states, so a rejected group costs a few comparisons and no allocation.
//!
//! Design decision: the filter is exact by construction, not by imitation. Each term
//! compares with [`crate::expr::compare`], the function the evaluator's comparison
//! operators call, after the same NULL test; the terms are visited in the order the
//! evaluator's left-to-right, short-circuiting AND visits them (a false term ends the
//! walk, a NULL one does not), so even an error (say, an aggregate compared with text)
//! surfaces for exactly the groups the evaluator would raise it for. Any other HAVING (one
//! reading a group key, OR, arithmetic, functions, window functions) is not compiled and
//! keeps the generic path.
//!
//! ```ignore
//! use tcq::agg::{Acc, AggSpec};
//! use tcq::exec::having::HavingFilter;
//! use tcq::sql::{AggFunc, BinaryOp, Expr};
//! use tcq::types::{DataType, Value};
//! // HAVING count(*) >= 2 over one group key (column 0) and one call (column 1).
//! let having = Expr::Binary {
//!     op: BinaryOp::GtEq,
//!     left: Box::new(Expr::Column(1)),
//!     right: Box::new(Expr::Literal(Value::Int8(2))),
//! };
//! let filter = HavingFilter::compile(&having, 1, 1, &[]).unwrap();
//! let specs = [AggSpec::new(AggFunc::CountStar, DataType::Int8, false)];
//! let kept = |n: i64| filter.keeps(&[Acc::Count(n)], &specs, |j| j).unwrap();
//! assert!(!kept(1));
//! assert!(kept(2));
//! ```

use std::cmp::Ordering;

use crate::agg::{Acc, AggSpec};
use crate::error::Result;
use crate::expr::{cast_value, compare};
use crate::sql::{BinaryOp, Expr};
use crate::types::Value;

/// A HAVING of the form `t1 AND t2 AND ...`, each term `call <op> constant` (or
/// `constant <op> call`) with `<op>` one of `= <> < <= > >=` and the constant a literal, a
/// bound parameter or a cast of either, compiled from the query's plan.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HavingFilter {
    terms: Vec<Term>,
}

/// `value of call <op> constant`, or `constant <op> value of call` when `swapped`.
#[derive(Clone, Debug, PartialEq)]
struct Term {
    /// The aggregate call (index among the query's calls, not the row's columns).
    call: usize,
    op: BinaryOp,
    /// The constant is the left operand: compared in that order, as the evaluator does,
    /// so that even an error names the operand types in the order the query wrote them.
    swapped: bool,
    /// The constant when it is an integer: a count is compared with it directly.
    int_constant: Option<i64>,
    /// Never NULL (a NULL constant makes every group's term NULL; such a HAVING is left to
    /// the generic path, which is as cheap for it).
    constant: Value,
}

impl HavingFilter {
    /// The filter for `having` over aggregate rows of `nkeys` group keys then `ncalls`
    /// aggregate results, with the query's bound `params`; `None` when `having` has
    /// another shape.
    pub(crate) fn compile(
        having: &Expr,
        nkeys: usize,
        ncalls: usize,
        params: &[Value],
    ) -> Option<HavingFilter> {
        let mut terms = Vec::new();
        collect(having, nkeys, ncalls, params, &mut terms)?;
        Some(HavingFilter { terms })
    }

    /// True when a group passes: `accs[state_of(j)]` is the partial state of call `j`,
    /// `specs[state_of(j)]` its spec. A term reads its call's result as
    /// [`Acc::evaluate`] gives it, without building it where it can: a count is compared
    /// as an integer with an integer constant, a min or max is read in place. NULL results
    /// fail their term, as SQL's comparisons and AND make them.
    ///
    /// Errors: those of [`compare`] (42883 for a result that cannot be compared with the
    /// constant) and of [`Acc::evaluate`], for the groups the generic evaluator raises them.
    pub(crate) fn keeps(
        &self,
        accs: &[Acc],
        specs: &[AggSpec],
        state_of: impl Fn(usize) -> usize,
    ) -> Result<bool> {
        let mut all_true = true;
        for t in &self.terms {
            let k = state_of(t.call);
            let verdict = match (&accs[k], t.int_constant) {
                // What `compare` gives for two integers.
                (Acc::Count(n), Some(c)) if t.swapped => Some(t.holds(c.cmp(n))),
                (Acc::Count(n), Some(c)) => Some(t.holds(n.cmp(&c))),
                (Acc::Extreme(v), _) => t.test(v)?,
                (acc, _) => t.test(&acc.evaluate(&specs[k])?)?,
            };
            match verdict {
                Some(true) => {}
                Some(false) => return Ok(false),
                // AND goes on past a NULL: a later false term, or an error, still decides.
                None => all_true = false,
            }
        }
        Ok(all_true)
    }
}

impl Term {
    /// The term over the non-NULL result `v` (`None` for NULL), compared in the order the
    /// query wrote it.
    fn test(&self, v: &Value) -> Result<Option<bool>> {
        if v.is_null() {
            return Ok(None);
        }
        let o = if self.swapped {
            compare_fast(&self.constant, v)?
        } else {
            compare_fast(v, &self.constant)?
        };
        Ok(Some(self.holds(o)))
    }

    /// The term's verdict given how its left operand compares with its right one.
    fn holds(&self, o: Ordering) -> bool {
        self.op.holds(o).unwrap_or(false)
    }
}

/// Flatten `e`'s AND tree into `terms` in evaluation order; `None` at the first node of
/// another shape.
fn collect(
    e: &Expr,
    nkeys: usize,
    ncalls: usize,
    params: &[Value],
    terms: &mut Vec<Term>,
) -> Option<()> {
    let Expr::Binary { op, left, right } = e else {
        return None;
    };
    if *op == BinaryOp::And {
        collect(left, nkeys, ncalls, params, terms)?;
        return collect(right, nkeys, ncalls, params, terms);
    }
    if !matches!(
        op,
        BinaryOp::Eq
            | BinaryOp::NotEq
            | BinaryOp::Lt
            | BinaryOp::LtEq
            | BinaryOp::Gt
            | BinaryOp::GtEq
    ) {
        return None;
    }
    let call = |e: &Expr| match e {
        Expr::Column(i) if *i >= nkeys && *i < nkeys + ncalls => Some(*i - nkeys),
        _ => None,
    };
    let constant = |e: &Expr| constant(e, params).filter(|v| !v.is_null());
    let term = match (call(left), call(right)) {
        (Some(call), None) => Term {
            call,
            op: *op,
            swapped: false,
            int_constant: None,
            constant: constant(right)?,
        },
        (None, Some(call)) => Term {
            call,
            op: *op,
            swapped: true,
            int_constant: None,
            constant: constant(left)?,
        },
        _ => return None,
    };
    terms.push(Term {
        int_constant: term.constant.as_i64(),
        ..term
    });
    Some(())
}

/// The value of a constant operand: a literal, a bound parameter, or either cast (`7.5::float8`;
/// the evaluator casts with [`cast_value`] per group, always to the same value). `None` for
/// other operands, and for a cast that fails: the generic path then raises its error for
/// each group, as it always did.
fn constant(e: &Expr, params: &[Value]) -> Option<Value> {
    match e {
        Expr::Literal(v) => Some(v.clone()),
        Expr::Param(i) => params.get(*i).cloned(),
        Expr::Cast { expr, to } => match &**expr {
            Expr::Literal(_) | Expr::Param(_) => cast_value(constant(expr, params)?, *to).ok(),
            _ => None,
        },
        _ => None,
    }
}

/// [`compare`], with integers against integers compared at once (what `compare` does for
/// them, without its type dispatch).
fn compare_fast(v: &Value, constant: &Value) -> Result<Ordering> {
    match (v.as_i64(), constant.as_i64()) {
        (Some(a), Some(b)) => Ok(a.cmp(&b)),
        _ => compare(v, constant),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{eval, EvalContext};
    use crate::sql::AggFunc;
    use crate::types::DataType;
    use rust_decimal::Decimal;

    fn col(i: usize) -> Box<Expr> {
        Box::new(Expr::Column(i))
    }

    fn lit(v: Value) -> Box<Expr> {
        Box::new(Expr::Literal(v))
    }

    fn cmp(op: BinaryOp, left: Box<Expr>, right: Box<Expr>) -> Expr {
        Expr::Binary { op, left, right }
    }

    fn and(a: Expr, b: Expr) -> Expr {
        cmp(BinaryOp::And, Box::new(a), Box::new(b))
    }

    /// The generic evaluator's verdict on `row` (NULL and false both reject).
    fn generic(h: &Expr, row: &[Value], params: &[Value]) -> Result<bool> {
        let c = EvalContext {
            row,
            params,
            window: None,
            now_us: 0,
            session: None,
            lazy: None,
        };
        Ok(matches!(eval(h, &c)?, Value::Bool(true)))
    }

    /// Partial states whose results are `values`, reaching every way `keeps` reads a
    /// result: integers as counts (compared as integers), numerics and floats as sums
    /// (evaluated), the rest as min/max (read in place); NULL as an empty sum or, with
    /// `alt`, an empty max.
    fn states(values: &[Value], alt: bool) -> (Vec<Acc>, Vec<AggSpec>) {
        let spec = |f, t| AggSpec::new(f, t, false);
        values
            .iter()
            .map(|v| match v {
                Value::Int8(n) => (Acc::Count(*n), spec(AggFunc::CountStar, DataType::Int8)),
                Value::Numeric(d) => (
                    Acc::NumSum { sum: *d, n: 1 },
                    spec(AggFunc::Sum, DataType::Numeric),
                ),
                Value::Float8(f) => (
                    Acc::FloatSum {
                        sum: *f,
                        n: 1,
                        nonfinite: !f.is_finite(),
                    },
                    spec(AggFunc::Sum, DataType::Float8),
                ),
                Value::Null if !alt => (
                    Acc::IntSum { sum: 0, n: 0 },
                    spec(AggFunc::Sum, DataType::Int4),
                ),
                other => (
                    Acc::Extreme(other.clone()),
                    spec(AggFunc::Max, DataType::Int4),
                ),
            })
            .unzip()
    }

    fn fast(f: &HavingFilter, row: &[Value], nkeys: usize, alt: bool) -> Result<bool> {
        let (accs, specs) = states(&row[nkeys..], alt);
        f.keeps(&accs, &specs, |j| j)
    }

    const OPS: [BinaryOp; 6] = [
        BinaryOp::Eq,
        BinaryOp::NotEq,
        BinaryOp::Lt,
        BinaryOp::LtEq,
        BinaryOp::Gt,
        BinaryOp::GtEq,
    ];

    /// Aggregate results of every kind a comparison may meet, NULL (max over no value)
    /// and NaN included.
    fn results() -> Vec<Value> {
        vec![
            Value::Null,
            Value::Int8(-3),
            Value::Int8(0),
            Value::Int8(2),
            Value::Int8(100),
            Value::Int4(2),
            Value::Int2(2),
            Value::Float8(2.0),
            Value::Float8(2.5),
            Value::Float8(f64::NAN),
            Value::Float8(-0.0),
            Value::Float4(2.5),
            Value::Numeric(Decimal::new(25, 1)),
            Value::Numeric(Decimal::new(2, 0)),
            Value::Numeric(Decimal::new(20000000000000001, 16)),
        ]
    }

    fn constants() -> Vec<Value> {
        vec![
            Value::Int8(2),
            Value::Int4(2),
            Value::Int2(-3),
            Value::Int4(100),
            Value::Float8(2.0),
            Value::Float8(2.5),
            Value::Float8(f64::NAN),
            Value::Float8(0.0),
            Value::Float4(2.5),
            Value::Numeric(Decimal::new(25, 1)),
            Value::Numeric(Decimal::new(2, 0)),
        ]
    }

    /// Every comparison operator, either side, over every pair of result and constant:
    /// the compiled filter keeps exactly the groups the generic evaluator keeps.
    #[test]
    fn one_term_agrees_with_the_evaluator() {
        let key = Value::Text("SFO".into());
        for op in OPS {
            for c in constants() {
                for swapped in [false, true] {
                    let h = if swapped {
                        cmp(op, lit(c.clone()), col(1))
                    } else {
                        cmp(op, col(1), lit(c.clone()))
                    };
                    let f = HavingFilter::compile(&h, 1, 1, &[]).expect("compiles");
                    for (v, alt) in results()
                        .into_iter()
                        .flat_map(|v| [(v.clone(), false), (v, true)])
                    {
                        let row = [key.clone(), v.clone()];
                        assert_eq!(
                            fast(&f, &row, 1, alt).unwrap(),
                            generic(&h, &row, &[]).unwrap(),
                            "{h:?} over {v:?}"
                        );
                    }
                }
            }
        }
    }

    /// AND chains, nested either way, with NULLs anywhere: same verdicts, and an error
    /// (a number compared with text) for exactly the rows the evaluator raises it for.
    #[test]
    fn and_chains_agree_with_the_evaluator_errors_included() {
        let t = |i: usize, op, c: Value| cmp(op, col(i), lit(c));
        let text = Value::Text("x".into());
        let chains = [
            and(
                t(1, BinaryOp::GtEq, Value::Int4(2)),
                t(2, BinaryOp::Lt, Value::Float8(2.5)),
            ),
            and(
                and(
                    t(1, BinaryOp::Gt, Value::Int8(0)),
                    t(2, BinaryOp::NotEq, Value::Int4(2)),
                ),
                t(3, BinaryOp::Lt, text.clone()),
            ),
            and(
                t(1, BinaryOp::Gt, Value::Int8(0)),
                and(
                    t(2, BinaryOp::LtEq, Value::Numeric(Decimal::new(25, 1))),
                    t(3, BinaryOp::Eq, text.clone()),
                ),
            ),
            // Constants on the left, text last: the error names text first, as written.
            and(
                cmp(BinaryOp::Lt, lit(Value::Int4(0)), col(1)),
                and(
                    cmp(BinaryOp::GtEq, lit(Value::Float8(2.5)), col(2)),
                    cmp(BinaryOp::Eq, lit(text), col(3)),
                ),
            ),
        ];
        for h in &chains {
            let f = HavingFilter::compile(h, 1, 3, &[]).expect("compiles");
            for a in results() {
                for b in results() {
                    for (c, alt) in [
                        (Value::Null, false),
                        (Value::Null, true),
                        (Value::Int8(1), false),
                    ] {
                        let row = [Value::Int4(7), a.clone(), b.clone(), c];
                        let want = generic(h, &row, &[]).map_err(|e| e.to_string());
                        let got = fast(&f, &row, 1, alt).map_err(|e| e.to_string());
                        assert_eq!(got, want, "{h:?} over {row:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn parameters_and_casts_are_constants() {
        let h = cmp(BinaryOp::GtEq, col(1), Box::new(Expr::Param(0)));
        let f = HavingFilter::compile(&h, 1, 1, &[Value::Int8(5)]).expect("compiles");
        let row = |n| [Value::Null, Value::Int8(n)];
        assert!(!fast(&f, &row(4), 1, false).unwrap());
        assert!(fast(&f, &row(5), 1, false).unwrap());
        // count(*) < '4.5'::float8: a float constant against an integer result.
        let cast = Box::new(Expr::Cast {
            expr: lit(Value::Text("4.5".into())),
            to: DataType::Float8,
        });
        let h = cmp(BinaryOp::Lt, col(1), cast);
        let f = HavingFilter::compile(&h, 1, 1, &[]).expect("compiles");
        for n in [4, 5] {
            assert_eq!(
                fast(&f, &row(n), 1, false).unwrap(),
                generic(&h, &row(n), &[]).unwrap()
            );
        }
        assert!(fast(&f, &row(4), 1, false).unwrap());
        // A cast that fails is left to the evaluator, which raises it per group.
        let bad = Box::new(Expr::Cast {
            expr: lit(Value::Text("x".into())),
            to: DataType::Float8,
        });
        assert_eq!(
            HavingFilter::compile(&cmp(BinaryOp::Lt, col(1), bad), 1, 1, &[]),
            None
        );
    }

    /// Shapes the filter does not claim stay with the generic evaluator.
    #[test]
    fn other_shapes_are_not_compiled() {
        let two = || lit(Value::Int8(2));
        let not_compiled = [
            // A group key.
            cmp(BinaryOp::Gt, col(0), two()),
            // Two aggregates.
            cmp(BinaryOp::Gt, col(1), col(2)),
            // OR.
            cmp(
                BinaryOp::Or,
                Box::new(cmp(BinaryOp::Gt, col(1), two())),
                Box::new(cmp(BinaryOp::Gt, col(2), two())),
            ),
            // Arithmetic on the aggregate.
            cmp(
                BinaryOp::Gt,
                Box::new(cmp(BinaryOp::Mul, col(1), two())),
                two(),
            ),
            // A NULL constant.
            cmp(BinaryOp::Gt, col(1), lit(Value::Null)),
            // A column past the aggregates.
            cmp(BinaryOp::Gt, col(3), two()),
            // A bare column.
            Expr::Column(1),
        ];
        for h in &not_compiled {
            assert_eq!(HavingFilter::compile(h, 1, 2, &[]), None, "{h:?}");
        }
        // An unbound parameter is not a constant either.
        let p = cmp(BinaryOp::Gt, col(1), Box::new(Expr::Param(3)));
        assert_eq!(HavingFilter::compile(&p, 1, 2, &[]), None);
    }

    /// The states the tests build give back the results they stand for, so the tests
    /// above compare the evaluator with `keeps` over exactly those values.
    #[test]
    fn test_states_evaluate_to_their_values() {
        let mut values = results();
        values.push(Value::Text("x".into()));
        for alt in [false, true] {
            let (accs, specs) = states(&values, alt);
            for ((acc, spec), v) in accs.iter().zip(&specs).zip(&values) {
                let got = acc.evaluate(spec).unwrap();
                assert!(got == *v || got.as_f64().is_some_and(f64::is_nan), "{v:?}");
            }
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::agg::{Acc, AggSpec};
        use crate::exec::having::HavingFilter;
        use crate::sql::{AggFunc, BinaryOp, Expr};
        use crate::types::{DataType, Value};
        // HAVING count(*) >= 2 over one group key (column 0) and one call (column 1).
        let having = Expr::Binary {
            op: BinaryOp::GtEq,
            left: Box::new(Expr::Column(1)),
            right: Box::new(Expr::Literal(Value::Int8(2))),
        };
        let filter = HavingFilter::compile(&having, 1, 1, &[]).unwrap();
        let specs = [AggSpec::new(AggFunc::CountStar, DataType::Int8, false)];
        let kept = |n: i64| filter.keeps(&[Acc::Count(n)], &specs, |j| j).unwrap();
        assert!(!kept(1));
        assert!(kept(2));
    }
}
