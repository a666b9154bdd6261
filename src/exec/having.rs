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
//! ```
//! use tcq::exec::having::HavingFilter;
//! use tcq::sql::{BinaryOp, Expr};
//! use tcq::types::Value;
//! // HAVING count(*) >= 2 over one group key (column 0) and one call (column 1).
//! let having = Expr::Binary {
//!     op: BinaryOp::GtEq,
//!     left: Box::new(Expr::Column(1)),
//!     right: Box::new(Expr::Literal(Value::Int8(2))),
//! };
//! let filter = HavingFilter::compile(&having, 1, 1, &[]).unwrap();
//! let kept = |n: i64| {
//!     filter
//!         .keeps(|_| Ok(std::borrow::Cow::Owned(Value::Int8(n))))
//!         .unwrap()
//! };
//! assert!(!kept(1));
//! assert!(kept(2));
//! ```

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::agg::{Acc, AggSpec};
use crate::error::Result;
use crate::expr::compare;
use crate::sql::{BinaryOp, Expr};
use crate::types::Value;

/// A HAVING of the form `t1 AND t2 AND ...`, each term `call <op> constant` (or
/// `constant <op> call`) with `<op>` one of `= <> < <= > >=`, compiled from the query's plan.
#[derive(Clone, Debug, PartialEq)]
pub struct HavingFilter {
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
    /// Never NULL (a NULL constant makes every group's term NULL; such a HAVING is left to
    /// the generic path, which is as cheap for it).
    constant: Value,
}

impl HavingFilter {
    /// The filter for `having` over aggregate rows of `nkeys` group keys then `ncalls`
    /// aggregate results, with the query's bound `params`; `None` when `having` has
    /// another shape.
    pub fn compile(
        having: &Expr,
        nkeys: usize,
        ncalls: usize,
        params: &[Value],
    ) -> Option<HavingFilter> {
        let mut terms = Vec::new();
        collect(having, nkeys, ncalls, params, &mut terms)?;
        Some(HavingFilter { terms })
    }

    /// The aggregate calls the filter reads, in the order it reads them (a call may repeat).
    pub fn calls(&self) -> impl Iterator<Item = usize> + '_ {
        self.terms.iter().map(|t| t.call)
    }

    /// True when a group passes: `value_of(j)` gives the result of call `j` (as
    /// [`Acc::evaluate`] gives it; see [`acc_value`]). NULL results fail their term, as
    /// SQL's comparisons and AND make them.
    ///
    /// Errors: those of [`compare`] (42883 for a result that cannot be compared with the
    /// constant), and those of `value_of`, for the groups the generic evaluator raises them.
    pub fn keeps<'a>(
        &self,
        mut value_of: impl FnMut(usize) -> Result<Cow<'a, Value>>,
    ) -> Result<bool> {
        let mut all_true = true;
        for t in &self.terms {
            let v = value_of(t.call)?;
            if v.is_null() {
                // AND goes on past a NULL: a later false term, or an error, still decides.
                all_true = false;
                continue;
            }
            let o = if t.swapped {
                compare_fast(&t.constant, &v)?
            } else {
                compare_fast(&v, &t.constant)?
            };
            if !holds(t.op, o) {
                return Ok(false);
            }
        }
        Ok(all_true)
    }
}

/// The result of a partial state as [`Acc::evaluate`] gives it, borrowed where the state
/// holds it as is (min and max), so testing it clones nothing.
///
/// Errors: those of [`Acc::evaluate`].
pub fn acc_value<'a>(acc: &'a Acc, spec: &AggSpec) -> Result<Cow<'a, Value>> {
    match acc {
        Acc::Extreme(v) => Ok(Cow::Borrowed(v)),
        other => other.evaluate(spec).map(Cow::Owned),
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
    let constant = |e: &Expr| match e {
        Expr::Literal(v) => Some(v.clone()),
        Expr::Param(i) => params.get(*i).cloned(),
        _ => None,
    }
    .filter(|v| !v.is_null());
    let term = match (call(left), call(right)) {
        (Some(call), None) => Term {
            call,
            op: *op,
            swapped: false,
            constant: constant(right)?,
        },
        (None, Some(call)) => Term {
            call,
            op: *op,
            swapped: true,
            constant: constant(left)?,
        },
        _ => return None,
    };
    terms.push(term);
    Some(())
}

/// [`compare`], with integers against integers compared at once (what `compare` does for
/// them, without its type dispatch).
fn compare_fast(v: &Value, constant: &Value) -> Result<Ordering> {
    match (v.as_i64(), constant.as_i64()) {
        (Some(a), Some(b)) => Ok(a.cmp(&b)),
        _ => compare(v, constant),
    }
}

fn holds(op: BinaryOp, o: Ordering) -> bool {
    match op {
        BinaryOp::Eq => o == Ordering::Equal,
        BinaryOp::NotEq => o != Ordering::Equal,
        BinaryOp::Lt => o == Ordering::Less,
        BinaryOp::LtEq => o != Ordering::Greater,
        BinaryOp::Gt => o == Ordering::Greater,
        BinaryOp::GtEq => o != Ordering::Less,
        _ => unreachable!("only comparisons are compiled"),
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
        };
        Ok(matches!(eval(h, &c)?, Value::Bool(true)))
    }

    fn fast(f: &HavingFilter, row: &[Value], nkeys: usize) -> Result<bool> {
        f.keeps(|j| Ok(Cow::Borrowed(&row[nkeys + j])))
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
                    for v in results() {
                        let row = [key.clone(), v.clone()];
                        assert_eq!(
                            fast(&f, &row, 1).unwrap(),
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
                    t(3, BinaryOp::Eq, text),
                ),
            ),
        ];
        for h in &chains {
            let f = HavingFilter::compile(h, 1, 3, &[]).expect("compiles");
            for a in results() {
                for b in results() {
                    for c in [Value::Null, Value::Int8(1)] {
                        let row = [Value::Int4(7), a.clone(), b.clone(), c];
                        let want = generic(h, &row, &[]).map_err(|e| e.to_string());
                        let got = fast(&f, &row, 1).map_err(|e| e.to_string());
                        assert_eq!(got, want, "{h:?} over {row:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn parameters_are_constants() {
        let h = cmp(BinaryOp::GtEq, col(1), Box::new(Expr::Param(0)));
        let f = HavingFilter::compile(&h, 1, 1, &[Value::Int8(5)]).expect("compiles");
        let row = |n| [Value::Null, Value::Int8(n)];
        assert!(!fast(&f, &row(4), 1).unwrap());
        assert!(fast(&f, &row(5), 1).unwrap());
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

    /// `acc_value` gives what `evaluate` gives, for the states HAVING reads most.
    #[test]
    fn acc_value_is_evaluate() {
        let cases = [
            (AggFunc::CountStar, DataType::Int4, vec![Value::Int4(1)]),
            (AggFunc::Max, DataType::Int4, vec![Value::Int4(3), Value::Int4(9)]),
            (AggFunc::Max, DataType::Int4, vec![Value::Null]),
            (AggFunc::Avg, DataType::Int4, vec![Value::Int4(1), Value::Int4(2)]),
            (AggFunc::Sum, DataType::Float8, vec![]),
        ];
        for (func, t, inputs) in cases {
            let spec = AggSpec::new(func, t, false);
            let mut acc = spec.init();
            for v in &inputs {
                acc.update(&spec, v).unwrap();
            }
            assert_eq!(
                acc_value(&acc, &spec).unwrap().into_owned(),
                acc.evaluate(&spec).unwrap()
            );
        }
    }
}
