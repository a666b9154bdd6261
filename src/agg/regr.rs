//! The two-argument statistics aggregates over double precision pairs `(Y, X)`: `corr`,
//! `covar_pop`, `covar_samp` and the `regr_*` family (SQL:2003's linear regression
//! functions), computed as PostgreSQL 15 computes them (float.c's float8_regr_accum and
//! final functions), so the last digits agree.
//!
//! The state is PostgreSQL's: `N`, `Sx`, `Sxx`, `Sy`, `Syy`, `Sxy`, where the second
//! moments are kept with the Youngs-Cramer update (sums of squared and crossed deviations
//! from the running means), not as raw sums of squares.

use crate::error::{Error, Result};
use crate::types::Value;

/// Which statistic of the pairs an aggregate returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RegrFunc {
    /// `regr_count(Y, X)`: bigint, the pairs with neither value NULL.
    Count,
    /// `regr_sxx(Y, X)`: sum of squared deviations of X.
    Sxx,
    /// `regr_syy(Y, X)`: sum of squared deviations of Y.
    Syy,
    /// `regr_sxy(Y, X)`: sum of products of the deviations.
    Sxy,
    /// `regr_avgx(Y, X)`: mean of X.
    AvgX,
    /// `regr_avgy(Y, X)`: mean of Y.
    AvgY,
    /// `regr_r2(Y, X)`: square of the correlation coefficient.
    R2,
    /// `regr_slope(Y, X)`: slope of the least-squares line.
    Slope,
    /// `regr_intercept(Y, X)`: y-intercept of the least-squares line.
    Intercept,
    /// `covar_pop(Y, X)`: population covariance.
    CovarPop,
    /// `covar_samp(Y, X)`: sample covariance.
    CovarSamp,
    /// `corr(Y, X)`: correlation coefficient.
    Corr,
}

/// PostgreSQL's float8 regression state over the pairs folded so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Regr {
    n: f64,
    sx: f64,
    sxx: f64,
    sy: f64,
    syy: f64,
    sxy: f64,
}

fn overflow() -> Error {
    Error::NumericValueOutOfRange("value out of range: overflow".into())
}

impl Regr {
    /// Fold the pair (`y`, `x`), as float8_regr_accum does. Errors: 22003 "value out of
    /// range: overflow" when a sum overflows from finite inputs.
    pub(crate) fn update(&mut self, y: f64, x: f64) -> Result<()> {
        let s = *self;
        let n = s.n + 1.0;
        let sx = s.sx + x;
        let sy = s.sy + y;
        let (mut sxx, mut syy, mut sxy) = (s.sxx, s.syy, s.sxy);
        if s.n > 0.0 {
            let tmp_x = x * n - sx;
            let tmp_y = y * n - sy;
            let scale = 1.0 / (n * s.n);
            sxx += tmp_x * tmp_x * scale;
            syy += tmp_y * tmp_y * scale;
            sxy += tmp_x * tmp_y * scale;
            let inf = f64::is_infinite;
            if inf(sx) || inf(sxx) || inf(sy) || inf(syy) || inf(sxy) {
                let x_finite = !inf(s.sx) && !inf(x);
                let y_finite = !inf(s.sy) && !inf(y);
                if ((inf(sx) || inf(sxx)) && x_finite)
                    || ((inf(sy) || inf(syy)) && y_finite)
                    || (inf(sxy) && x_finite && y_finite)
                {
                    return Err(overflow());
                }
                for v in [&mut sxx, &mut syy, &mut sxy] {
                    if inf(*v) {
                        *v = f64::NAN;
                    }
                }
            }
        } else {
            // A first input that is infinite or NaN makes the dependent sums NaN.
            if !x.is_finite() {
                sxx = f64::NAN;
                sxy = f64::NAN;
            }
            if !y.is_finite() {
                syy = f64::NAN;
                sxy = f64::NAN;
            }
        }
        *self = Regr {
            n,
            sx,
            sxx,
            sy,
            syy,
            sxy,
        };
        Ok(())
    }

    /// The statistic `f` of the pairs folded, as PostgreSQL's final functions compute it:
    /// NULL without pairs (and for the slope, intercept, r2 and correlation of a vertical
    /// or horizontal line where PostgreSQL gives NULL), `regr_count` 0 without pairs.
    pub(crate) fn evaluate(&self, f: RegrFunc) -> Value {
        let Regr {
            n,
            sx,
            sxx,
            sy,
            syy,
            sxy,
        } = *self;
        if f == RegrFunc::Count {
            return Value::Int8(n as i64);
        }
        let least = if f == RegrFunc::CovarSamp { 2.0 } else { 1.0 };
        if n < least {
            return Value::Null;
        }
        let v = match f {
            RegrFunc::Count => unreachable!("handled above"),
            RegrFunc::Sxx => sxx,
            RegrFunc::Syy => syy,
            RegrFunc::Sxy => sxy,
            RegrFunc::AvgX => sx / n,
            RegrFunc::AvgY => sy / n,
            RegrFunc::CovarPop => sxy / n,
            RegrFunc::CovarSamp => sxy / (n - 1.0),
            RegrFunc::Corr if sxx == 0.0 || syy == 0.0 => return Value::Null,
            RegrFunc::Corr => sxy / (sxx * syy).sqrt(),
            _ if sxx == 0.0 => return Value::Null,
            RegrFunc::R2 if syy == 0.0 => 1.0,
            RegrFunc::R2 => (sxy * sxy) / (sxx * syy),
            RegrFunc::Slope => sxy / sxx,
            RegrFunc::Intercept => (sy - sx * sxy / sxx) / n,
        };
        Value::Float8(v)
    }
}

/// `f` over `pairs` (each `[Y, X, ...]`, already double precision or NULL): pairs with a
/// NULL are skipped. Errors: 22003 on overflow.
pub(crate) fn aggregate(f: RegrFunc, pairs: &[Vec<Value>]) -> Result<Value> {
    let mut acc = Regr::default();
    for p in pairs {
        if let (Some(Value::Float8(y)), Some(Value::Float8(x))) = (p.first(), p.get(1)) {
            acc.update(*y, *x)?;
        }
    }
    Ok(acc.evaluate(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pairs: &[(f64, f64)], f: RegrFunc) -> Value {
        let rows: Vec<Vec<Value>> = pairs
            .iter()
            .map(|&(y, x)| vec![Value::Float8(y), Value::Float8(x)])
            .collect();
        aggregate(f, &rows).unwrap()
    }

    #[test]
    fn a_line_has_its_slope_and_intercept_and_full_correlation() {
        let line = [(3.0, 1.0), (5.0, 2.0), (7.0, 3.0)];
        assert_eq!(of(&line, RegrFunc::Slope), Value::Float8(2.0));
        assert_eq!(of(&line, RegrFunc::Intercept), Value::Float8(1.0));
        assert_eq!(of(&line, RegrFunc::Corr), Value::Float8(1.0));
        assert_eq!(of(&line, RegrFunc::Count), Value::Int8(3));
        assert_eq!(of(&line, RegrFunc::AvgX), Value::Float8(2.0));
        assert_eq!(of(&line, RegrFunc::CovarSamp), Value::Float8(2.0));
    }

    #[test]
    fn no_pairs_and_vertical_lines_give_null() {
        assert_eq!(of(&[], RegrFunc::Corr), Value::Null);
        assert_eq!(of(&[], RegrFunc::Count), Value::Int8(0));
        assert_eq!(of(&[(1.0, 1.0)], RegrFunc::CovarSamp), Value::Null);
        assert_eq!(of(&[(1.0, 2.0), (3.0, 2.0)], RegrFunc::Slope), Value::Null);
        assert_eq!(
            of(&[(1.0, 1.0), (1.0, 2.0)], RegrFunc::R2),
            Value::Float8(1.0)
        );
    }

    #[test]
    fn finite_inputs_that_overflow_are_22003() {
        let mut acc = Regr::default();
        acc.update(1e308, 1.0).unwrap();
        let e = acc.update(1e308, 2.0).unwrap_err();
        assert!(
            matches!(e.kind(), Error::NumericValueOutOfRange(_)),
            "{e:?}"
        );
    }
}
