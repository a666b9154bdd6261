//! The trigonometric and hyperbolic functions of double precision, with PostgreSQL 15's
//! results and errors (its `float.c`): `sin cos tan cot asin acos atan atan2`, the degree
//! forms `sind ... atan2d`, exact at the multiples of 30 and 45 degrees as PostgreSQL makes
//! them, and `sinh cosh tanh asinh acosh atanh`. A NaN argument gives NaN; an infinite
//! one to a periodic function, or one outside an inverse function's domain, is 22003
//! `input is out of range`.

use crate::error::{Error, Result};

/// One trigonometric or hyperbolic function of double precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trig {
    Sin,
    Cos,
    Tan,
    Cot,
    Asin,
    Acos,
    Atan,
    /// Two arguments: `atan2(y, x)`.
    Atan2,
    Sind,
    Cosd,
    Tand,
    Cotd,
    Asind,
    Acosd,
    Atand,
    /// Two arguments: `atan2d(y, x)`.
    Atan2d,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
}

/// PostgreSQL's `RADIANS_PER_DEGREE`.
const RADIANS_PER_DEGREE: f64 = 0.017_453_292_519_943_295;

fn out_of_range() -> Error {
    Error::NumericValueOutOfRange("input is out of range".into())
}

fn overflow(r: f64) -> Result<f64> {
    if r.is_infinite() {
        Err(Error::NumericValueOutOfRange(
            "value out of range: overflow".into(),
        ))
    } else {
        Ok(r)
    }
}

impl Trig {
    /// Whether the function takes two arguments (`atan2`, `atan2d`).
    pub(crate) fn binary(self) -> bool {
        matches!(self, Trig::Atan2 | Trig::Atan2d)
    }

    /// The function of `x` (and `y` first for the two-argument ones: `atan2(y, x)` is
    /// `eval(y, Some(x))`). Errors: 22003 for an argument outside the domain, as above.
    pub(crate) fn eval(self, a: f64, b: Option<f64>) -> Result<f64> {
        use Trig as T;
        if a.is_nan() || b.is_some_and(f64::is_nan) {
            return Ok(f64::NAN);
        }
        let periodic = matches!(
            self,
            T::Sin | T::Cos | T::Tan | T::Cot | T::Sind | T::Cosd | T::Tand | T::Cotd
        );
        let unit = matches!(self, T::Asin | T::Acos | T::Asind | T::Acosd | T::Atanh);
        if (periodic && a.is_infinite()) || (unit && !(-1.0..=1.0).contains(&a)) {
            return Err(out_of_range());
        }
        match self {
            T::Sin => overflow(a.sin()),
            T::Cos => overflow(a.cos()),
            T::Tan => Ok(a.tan()),
            T::Cot => Ok(1.0 / a.tan()),
            T::Asin => overflow(a.asin()),
            T::Acos => overflow(a.acos()),
            T::Atan => overflow(a.atan()),
            T::Atan2 => overflow(a.atan2(b.unwrap_or(f64::NAN))),
            T::Sind | T::Cosd | T::Tand | T::Cotd => Ok(degrees_periodic(self, a)),
            T::Asind => overflow(if a >= 0.0 { asind_q1(a) } else { -asind_q1(-a) }),
            T::Acosd => overflow(if a >= 0.0 {
                acosd_q1(a)
            } else {
                90.0 + asind_q1(-a)
            }),
            T::Atand => overflow(a.atan() / 1.0f64.atan() * 45.0),
            T::Atan2d => overflow(a.atan2(b.unwrap_or(f64::NAN)) / 1.0f64.atan() * 45.0),
            T::Sinh => Ok(a.sinh()),
            T::Cosh => Ok(a.cosh()),
            T::Tanh => overflow(a.tanh()),
            T::Asinh => Ok(a.asinh()),
            T::Acosh if a < 1.0 => Err(out_of_range()),
            T::Acosh => Ok(a.acosh()),
            T::Atanh if a == 1.0 || a == -1.0 => Ok(a * f64::INFINITY),
            T::Atanh => Ok(a.atanh()),
        }
    }
}

/// `sind`, `cosd`, `tand` or `cotd` of finite `x` degrees: reduced to the first quadrant
/// with the sign the quadrant gives, as PostgreSQL's dsind ... dcotd.
fn degrees_periodic(f: Trig, x: f64) -> f64 {
    let (mut x, mut sign) = (x % 360.0, 1.0);
    // sind, tand and cotd are odd, cosd even.
    let odd = f != Trig::Cosd;
    if x < 0.0 {
        x = -x;
        if odd {
            sign = -sign;
        }
    }
    if x > 180.0 {
        x = 360.0 - x;
        if odd {
            sign = -sign;
        }
    }
    if x > 90.0 {
        x = 180.0 - x;
        if f != Trig::Sind {
            sign = -sign;
        }
    }
    let r = match f {
        Trig::Sind => sign * sind_q1(x),
        Trig::Cosd => sign * cosd_q1(x),
        Trig::Tand => sign * (sind_q1(x) / cosd_q1(x)) / tan_45(),
        _ => sign * (cosd_q1(x) / sind_q1(x)) / cot_45(),
    };
    // tand(180) and cotd(270) may come out -0; PostgreSQL makes them 0.
    if matches!(f, Trig::Tand | Trig::Cotd) && r == 0.0 {
        0.0
    } else {
        r
    }
}

fn sin_30() -> f64 {
    (30.0 * RADIANS_PER_DEGREE).sin()
}

fn one_minus_cos_60() -> f64 {
    1.0 - (60.0 * RADIANS_PER_DEGREE).cos()
}

fn tan_45() -> f64 {
    sind_q1(45.0) / cosd_q1(45.0)
}

fn cot_45() -> f64 {
    cosd_q1(45.0) / sind_q1(45.0)
}

fn sind_0_to_30(x: f64) -> f64 {
    ((x * RADIANS_PER_DEGREE).sin() / sin_30()) / 2.0
}

fn cosd_0_to_60(x: f64) -> f64 {
    let one_minus_cos_x = 1.0 - (x * RADIANS_PER_DEGREE).cos();
    1.0 - (one_minus_cos_x / one_minus_cos_60()) / 2.0
}

fn sind_q1(x: f64) -> f64 {
    if x <= 30.0 {
        sind_0_to_30(x)
    } else {
        cosd_0_to_60(90.0 - x)
    }
}

fn cosd_q1(x: f64) -> f64 {
    if x <= 60.0 {
        cosd_0_to_60(x)
    } else {
        sind_0_to_30(90.0 - x)
    }
}

fn asind_q1(x: f64) -> f64 {
    if x <= 0.5 {
        (x.asin() / 0.5f64.asin()) * 30.0
    } else {
        90.0 - (x.acos() / 0.5f64.acos()) * 60.0
    }
}

fn acosd_q1(x: f64) -> f64 {
    if x <= 0.5 {
        90.0 - (x.asin() / 0.5f64.asin()) * 30.0
    } else {
        (x.acos() / 0.5f64.acos()) * 60.0
    }
}

#[cfg(test)]
mod tests {
    use super::Trig as T;

    #[test]
    fn degree_forms_are_exact_where_postgresql_makes_them_exact() {
        for (f, x, want) in [
            (T::Sind, 30.0, 0.5),
            (T::Sind, 210.0, -0.5),
            (T::Sind, -90.0, -1.0),
            (T::Cosd, 60.0, 0.5),
            (T::Cosd, 180.0, -1.0),
            (T::Tand, 45.0, 1.0),
            (T::Tand, 135.0, -1.0),
            (T::Tand, 180.0, 0.0),
            (T::Cotd, 45.0, 1.0),
            (T::Asind, 0.5, 30.0),
            (T::Acosd, -0.5, 120.0),
            (T::Atand, 1.0, 45.0),
        ] {
            assert_eq!(f.eval(x, None).unwrap(), want, "{f:?}({x})");
        }
        assert_eq!(T::Atan2d.eval(1.0, Some(-1.0)).unwrap(), 135.0);
        assert_eq!(T::Tand.eval(90.0, None).unwrap(), f64::INFINITY);
    }

    #[test]
    fn domains_and_nan() {
        for (f, x) in [(T::Sin, f64::INFINITY), (T::Cosd, f64::NEG_INFINITY)] {
            assert!(matches!(
                f.eval(x, None),
                Err(crate::error::Error::NumericValueOutOfRange(_))
            ));
        }
        for (f, x) in [
            (T::Acos, 2.0),
            (T::Asind, -1.5),
            (T::Acosh, 0.5),
            (T::Atanh, 2.0),
        ] {
            assert!(matches!(
                f.eval(x, None),
                Err(crate::error::Error::NumericValueOutOfRange(_))
            ));
        }
        assert!(T::Sin.eval(f64::NAN, None).unwrap().is_nan());
        assert!(T::Atan2.eval(1.0, Some(f64::NAN)).unwrap().is_nan());
        assert_eq!(T::Atanh.eval(-1.0, None).unwrap(), f64::NEG_INFINITY);
        assert_eq!(T::Cot.eval(0.0, None).unwrap(), f64::INFINITY);
        assert_eq!(T::Sinh.eval(1000.0, None).unwrap(), f64::INFINITY);
    }
}
