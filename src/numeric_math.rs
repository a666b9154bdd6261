//! `exp`, `ln` and `log` of numerics as PostgreSQL 15 computes them: its result scale
//! (numeric.c's `numeric_exp`, `numeric_ln` and `log_var`: at least 16 significant digits
//! from an estimate of the result's decimal weight, never less than the argument's scale)
//! and the correctly rounded digits at that scale (half away from zero), computed in
//! big-integer fixed point with guard digits.
//!
//! ```ignore
//! // ln(2.25) = 0.8109302162163288 (16 digits: ln's weight is 0)
//! let v = numeric_ln(&(225.into(), 2)).unwrap();
//! assert_eq!(v.to_text().unwrap(), "0.8109302162163288");
//! ```

use num_bigint::{BigInt, Sign};

use crate::error::{Error, Result};
use crate::types::Value;
use crate::types_wide::{pow10, WideNumeric};

/// An exact decimal `mantissa * 10^-scale`.
pub(crate) type Exact = (BigInt, u32);

/// PostgreSQL's NUMERIC_MIN_SIG_DIGITS.
const MIN_SIG_DIGITS: i64 = 16;
/// PostgreSQL's NUMERIC_MAX_DISPLAY_SCALE.
const MAX_DISPLAY_SCALE: i64 = 1000;
/// log10(e) as PostgreSQL's numeric_exp writes it (its digits decide the result scale
/// at the boundaries).
#[allow(clippy::approx_constant)]
const PG_LOG10_E: f64 = 0.434294481903252;
/// Guard digits carried beyond the result's scale.
const GUARD: u32 = 12;

fn clamp_scale(rscale: i64, arg_scale: u32) -> u32 {
    rscale.max(i64::from(arg_scale)).clamp(0, MAX_DISPLAY_SCALE) as u32
}

/// `round(v * 10^-from)` at `to` (<= from) places, half away from zero.
fn round_to(v: &BigInt, from: u32, to: u32) -> BigInt {
    let k = pow10(from - to);
    let half = &k / 2u8;
    let q = (v.magnitude() + half.magnitude()) / k.magnitude();
    let q = BigInt::from(q);
    if v.sign() == Sign::Minus {
        -q
    } else {
        q
    }
}

/// `x` as a fixed-point integer at `p` places (truncated).
fn fixed((m, s): &Exact, p: u32) -> BigInt {
    if p >= *s {
        m * pow10(p - s)
    } else {
        m / pow10(s - p)
    }
}

/// The base-10000 digits PostgreSQL's estimates read: weight and the first one or two
/// digits of |x| (`None` for zero).
fn nbase_digits((m, s): &Exact) -> Option<(i64, i64, Option<i64>)> {
    if m.sign() == Sign::NoSign {
        return None;
    }
    let digits = m.magnitude().to_string();
    let e10 = digits.len() as i64 - 1 - i64::from(*s);
    let weight = e10.div_euclid(4);
    // Pad so that the digit string starts at a multiple of 10000^weight.
    let lead = (e10 - 4 * weight + 1) as usize; // digits in the first base-10000 digit
    let padded = format!("{}{}", digits, "0".repeat(8));
    let first: i64 = padded[..lead].parse().ok()?;
    let rest = &padded[lead..lead + 4];
    // A second digit exists when any nonzero digit follows the first.
    let second = digits[lead.min(digits.len())..]
        .bytes()
        .any(|b| b != b'0')
        .then(|| rest.parse().unwrap_or(0));
    Some((weight, first, second))
}

/// PostgreSQL's `estimate_ln_dweight`: the decimal weight of ln(x), for x > 0.
fn estimate_ln_dweight(x: &Exact) -> i64 {
    let one = (pow10(x.1), x.1);
    let near_one = {
        let tenth = |n: u32| (BigInt::from(n) * pow10(x.1) / 10u8, x.1);
        WideNumeric::cmp_exact(x, &tenth(9)).is_ge()
            && WideNumeric::cmp_exact(x, &tenth(11)).is_le()
    };
    if near_one {
        let d = (&x.0 - &one.0, x.1);
        return match nbase_digits(&d) {
            Some((w, first, _)) => w * 4 + (first as f64).log10() as i64,
            None => 0,
        };
    }
    match nbase_digits(x) {
        Some((w, first, second)) => {
            let (digits, dweight) = match second {
                Some(s) => (first * 10000 + s, w * 4 - 4),
                None => (first, w * 4),
            };
            let ln = (digits as f64).ln() + dweight as f64 * std::f64::consts::LN_10;
            ln.abs().log10() as i64
        }
        None => 0,
    }
}

/// ln(y) at `p` places for y (at `p` places) > 0: square roots bring y near 1, where
/// 2 atanh((y-1)/(y+1)) converges fast.
fn ln_fixed(y: &BigInt, p: u32) -> BigInt {
    let one = pow10(p);
    // Scale by powers of ten into [0.1, 10]: ln(y) = ln(y') + e ln(10).
    let (mut y, mut e) = (y.clone(), 0i64);
    while y > &one * 10u8 {
        y /= 10u8;
        e += 1;
    }
    while &y * 10u8 < one {
        y *= 10u8;
        e -= 1;
    }
    let mut halvings = 0u32;
    let near = &one / 100u8;
    while (&y - &one).magnitude() > near.magnitude() {
        y = (&y * &one).sqrt();
        halvings += 1;
    }
    let z = ((&y - &one) * &one) / (&y + &one);
    let z2 = &z * &z / &one;
    let (mut term, mut sum, mut k) = (z.clone(), BigInt::ZERO, 1u32);
    while term.sign() != Sign::NoSign {
        sum += &term / k;
        term = &term * &z2 / &one;
        k += 2;
    }
    let mut ln = sum * 2u8 * (BigInt::from(1u8) << halvings);
    if e != 0 {
        ln += ln_ten_reduced(p) * e;
    }
    ln
}

/// ln(10) at `p` places, as 3 ln 2 + ln 1.25 (both near 1 after a few square roots).
fn ln_ten_reduced(p: u32) -> BigInt {
    let one = pow10(p);
    let two = &one * 2u8;
    let five_fourths = &one * 5u8 / 4u8;
    ln_fixed(&two, p) * 3u8 + ln_fixed(&five_fourths, p)
}

/// exp(x) at `p` places for x at `p` places: exp(x / 2^k) by its series, squared k times.
fn exp_fixed(x: &BigInt, p: u32) -> BigInt {
    let one = pow10(p);
    let mut k = 0u32;
    let mut r = x.clone();
    let small = &one / 100u8;
    while r.magnitude() > small.magnitude() {
        r /= 2u8;
        k += 1;
    }
    let (mut term, mut sum, mut n) = (one.clone(), one.clone(), 1u32);
    loop {
        term = &term * &r / &one / n;
        if term.sign() == Sign::NoSign {
            break;
        }
        sum += &term;
        n += 1;
    }
    for _ in 0..k {
        sum = &sum * &sum / &one;
    }
    sum
}

fn log_error(x: &Exact) -> Option<Error> {
    match x.0.sign() {
        Sign::Plus => None,
        Sign::NoSign => Some(Error::InvalidArgumentForLogarithm(
            "cannot take logarithm of zero".into(),
        )),
        Sign::Minus => Some(Error::InvalidArgumentForLogarithm(
            "cannot take logarithm of a negative number".into(),
        )),
    }
}

/// PostgreSQL's `ln(numeric)`. Errors: 2201E for zero or a negative number.
pub(crate) fn numeric_ln(x: &Exact) -> Result<Value> {
    if let Some(e) = log_error(x) {
        return Err(e);
    }
    let rscale = clamp_scale(MIN_SIG_DIGITS - estimate_ln_dweight(x), x.1);
    let p = rscale + GUARD + 10;
    let ln = ln_fixed(&fixed(x, p), p);
    Ok(WideNumeric::value(round_to(&ln, p, rscale), rscale))
}

/// PostgreSQL's `log(numeric)`, `log(10, x)` (`log_var`). Errors: 2201E for zero or a
/// negative number.
pub(crate) fn numeric_log10(x: &Exact) -> Result<Value> {
    if let Some(e) = log_error(x) {
        return Err(e);
    }
    let ten = (BigInt::from(10u8), 0);
    let dweight = estimate_ln_dweight(x) - estimate_ln_dweight(&ten);
    let rscale = clamp_scale(MIN_SIG_DIGITS - dweight, x.1);
    let p = rscale + GUARD + 10;
    let ln = ln_fixed(&fixed(x, p), p);
    let q = ln * pow10(p) / ln_ten_reduced(p);
    Ok(WideNumeric::value(round_to(&q, p, rscale), rscale))
}

/// PostgreSQL's `exp(numeric)`. Errors: 22003 when the result would pass numeric's range.
pub(crate) fn numeric_exp(x: &Exact) -> Result<Value> {
    let approx = WideNumeric {
        mantissa: x.0.clone(),
        scale: x.1,
    }
    .to_f64();
    // The result's decimal weight, about; past e^6000 (2,606 digits) refused.
    let val = (approx * PG_LOG10_E).clamp(-2000.0, 2000.0);
    if approx > 6000.0 {
        return Err(Error::NumericValueOutOfRange(
            "value overflows numeric format".into(),
        ));
    }
    let rscale = clamp_scale(MIN_SIG_DIGITS - val as i64, x.1);
    // Enough places for the result's significant digits plus the guard.
    let p = rscale + GUARD + 10 + val.max(0.0) as u32;
    let e = exp_fixed(&fixed(x, p), p);
    Ok(WideNumeric::value(round_to(&e, p, rscale), rscale))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(s: &str) -> Exact {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        (format!("{int}{frac}").parse().unwrap(), frac.len() as u32)
    }

    fn text(v: Result<Value>) -> String {
        v.unwrap().to_text().unwrap()
    }

    /// PostgreSQL 15's digits for the same arguments.
    #[test]
    fn digits_match_postgresql() {
        assert_eq!(text(numeric_ln(&x("2.25"))), "0.8109302162163288");
        assert_eq!(text(numeric_ln(&x("3.5"))), "1.2527629684953680");
        assert_eq!(text(numeric_ln(&x("101.125"))), "4.6163573753786558");
        assert_eq!(text(numeric_ln(&x("1.001"))), "0.0009995003330835332");
        assert_eq!(text(numeric_ln(&x("1"))), "0.0000000000000000");
        assert_eq!(text(numeric_ln(&x("100000.99"))), "11.512935364921224");
        assert_eq!(text(numeric_log10(&x("2.25"))), "0.3521825181113625");
        assert_eq!(text(numeric_log10(&x("1.001"))), "0.0004340774793186407");
        assert_eq!(text(numeric_log10(&x("100000.99"))), "5.000004299494088");
        assert_eq!(
            text(numeric_exp(&x("0.04611686018427387904"))),
            "1.04719677941541111980"
        );
        assert_eq!(
            text(numeric_exp(&x("-0.04611686018427387904"))),
            "0.95493036233194077543"
        );
        assert_eq!(
            text(numeric_exp(&x("0.000000000000000000070000000000000000"))),
            "1.000000000000000000070000000000000000"
        );
        assert!(numeric_ln(&x("0")).is_err());
        assert!(numeric_log10(&x("-1")).is_err());
    }
}
