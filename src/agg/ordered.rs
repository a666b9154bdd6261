//! The ordered-set aggregates of finite queries: `percentile_cont(f) WITHIN GROUP (ORDER
//! BY x)`, `percentile_disc(f) WITHIN GROUP (ORDER BY x)` and `mode() WITHIN GROUP (ORDER
//! BY x)`, over a group's values already sorted in the WITHIN GROUP order, as PostgreSQL
//! 15's orderedsetaggs.c computes them: NULL values are skipped, no values give NULL.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::types::Value;

/// Which ordered-set aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum OrderedSetFunc {
    /// `percentile_cont(fraction)`: interpolated between the two nearest values (double
    /// precision or interval).
    PercentileCont,
    /// `percentile_disc(fraction)`: the first value whose position in the order reaches
    /// the fraction.
    PercentileDisc,
    /// `mode()`: the most frequent value, the first in the order among equally frequent.
    Mode,
}

impl OrderedSetFunc {
    /// How many direct arguments (before WITHIN GROUP) the aggregate takes.
    pub(crate) fn direct_args(self) -> usize {
        match self {
            OrderedSetFunc::Mode => 0,
            _ => 1,
        }
    }
}

/// `f` over `rows`, each `[direct arguments..., value]`, sorted by value in the WITHIN
/// GROUP order. The fraction is the first row's (PostgreSQL evaluates it once per group);
/// an array of fractions (its text form) gives the array of percentiles.
/// Errors: 22003 for a fraction outside [0, 1]; those of interval arithmetic.
pub(crate) fn aggregate(f: OrderedSetFunc, rows: &[Vec<Value>]) -> Result<Value> {
    let at = f.direct_args();
    let vals: Vec<&Value> = rows
        .iter()
        .filter_map(|r| r.get(at))
        .filter(|v| !v.is_null())
        .collect();
    // A single fraction is checked before the rows are looked at, as PostgreSQL's
    // percentile_*_final does (22003 even over no rows); an array of them is not.
    if let (Some(Value::Float8(p)), false) = (
        rows.first().and_then(|r| r.first()),
        f == OrderedSetFunc::Mode,
    ) {
        check_fraction(*p)?;
    }
    if vals.is_empty() {
        return Ok(Value::Null);
    }
    if f == OrderedSetFunc::Mode {
        return Ok(mode(&vals));
    }
    let p = match rows[0].first() {
        Some(Value::Float8(p)) => *p,
        // `percentile_cont(ARRAY[...])`: one percentile per fraction, NULL for NULL.
        Some(Value::Text(fractions)) => {
            let mut out = Vec::new();
            for e in crate::exec::relational::parse_array(fractions)? {
                out.push(match e {
                    None => Value::Null,
                    Some(s) => {
                        let p = crate::types::parse_value(&s, crate::types::DataType::Float8)?;
                        let Value::Float8(p) = p else {
                            return Ok(Value::Null);
                        };
                        percentile(f, &vals, p)?
                    }
                });
            }
            return Ok(Value::Text(
                crate::exec::relational::format_array(&out).into(),
            ));
        }
        _ => return Ok(Value::Null),
    };
    percentile(f, &vals, p)
}

/// Errors: 22003 for a percentile fraction `p` outside [0, 1] (NaN among them).
fn check_fraction(p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::NumericValueOutOfRange(format!(
            "percentile value {} is not between 0 and 1",
            crate::types::Value::Float8(p).to_text().unwrap_or_default()
        )));
    }
    Ok(())
}

/// The percentile `p` of `vals` (sorted, no NULLs, at least one). Errors: 22003 for `p`
/// outside [0, 1].
fn percentile(f: OrderedSetFunc, vals: &[&Value], p: f64) -> Result<Value> {
    check_fraction(p)?;
    let n = vals.len();
    if f == OrderedSetFunc::PercentileDisc {
        let row = (p * n as f64).ceil() as usize;
        return Ok(vals[row.max(1) - 1].clone());
    }
    let exact = p * (n - 1) as f64;
    let (first, second) = (exact.floor() as usize, exact.ceil() as usize);
    let lo = vals[first].clone();
    if second == first {
        return Ok(lo);
    }
    let hi = vals[second].clone();
    lerp(lo, hi, exact - first as f64)
}

/// `lo + (hi - lo) * t`, PostgreSQL's float8_lerp and interval_lerp.
fn lerp(lo: Value, hi: Value, t: f64) -> Result<Value> {
    use crate::sql::BinaryOp;
    if let (Value::Float8(a), Value::Float8(b)) = (&lo, &hi) {
        return Ok(Value::Float8(a + (b - a) * t));
    }
    let diff = crate::expr::arith(BinaryOp::Sub, hi, lo.clone())?;
    let step = crate::expr::arith(BinaryOp::Mul, diff, Value::Float8(t))?;
    crate::expr::arith(BinaryOp::Add, lo, step)
}

/// The most frequent of `sorted` (equal values are adjacent), the first among ties.
fn mode(sorted: &[&Value]) -> Value {
    let (mut best, mut best_n) = (sorted[0], 0usize);
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i + 1;
        while j < sorted.len() && crate::expr::cmp_values(sorted[i], sorted[j]) == Ordering::Equal {
            j += 1;
        }
        if j - i > best_n {
            (best, best_n) = (sorted[i], j - i);
        }
        i = j;
    }
    best.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(p: f64, xs: &[f64]) -> Vec<Vec<Value>> {
        xs.iter()
            .map(|&x| vec![Value::Float8(p), Value::Float8(x)])
            .collect()
    }

    #[test]
    fn percentiles_interpolate_or_pick_as_postgresql() {
        let xs = [1.0, 2.0, 4.0, 8.0];
        let cont = aggregate(OrderedSetFunc::PercentileCont, &rows(0.5, &xs)).unwrap();
        assert_eq!(cont, Value::Float8(3.0));
        let disc = aggregate(OrderedSetFunc::PercentileDisc, &rows(0.5, &xs)).unwrap();
        assert_eq!(disc, Value::Float8(2.0));
        let zero = aggregate(OrderedSetFunc::PercentileDisc, &rows(0.0, &xs)).unwrap();
        assert_eq!(zero, Value::Float8(1.0));
        let e = aggregate(OrderedSetFunc::PercentileCont, &rows(1.5, &xs)).unwrap_err();
        assert!(
            matches!(e.kind(), Error::NumericValueOutOfRange(_)),
            "{e:?}"
        );
    }

    #[test]
    fn mode_takes_the_first_of_the_most_frequent() {
        let r: Vec<Vec<Value>> = [1, 2, 2, 3, 3]
            .iter()
            .map(|&x| vec![Value::Int4(x)])
            .collect();
        assert_eq!(aggregate(OrderedSetFunc::Mode, &r).unwrap(), Value::Int4(2));
        assert_eq!(aggregate(OrderedSetFunc::Mode, &[]).unwrap(), Value::Null);
    }
}
