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

/// PostgreSQL's `log(b, x)` of numerics (`log_var`): at least 16 significant digits, at
/// least either argument's scale. Errors: 2201E for an argument at or below zero, 22012
/// for base 1 (its logarithm is zero).
pub(crate) fn numeric_log(base: &Exact, x: &Exact) -> Result<Value> {
    if let Some(e) = log_error(base).or_else(|| log_error(x)) {
        return Err(e);
    }
    let dweight = estimate_ln_dweight(x) - estimate_ln_dweight(base);
    let rscale = clamp_scale(MIN_SIG_DIGITS - dweight, x.1.max(base.1));
    let p = rscale + GUARD + 10;
    let ln_base = ln_fixed(&fixed(base, p), p);
    if ln_base.sign() == Sign::NoSign {
        return Err(Error::DivisionByZero);
    }
    let q = ln_fixed(&fixed(x, p), p) * pow10(p) / ln_base;
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

/// PostgreSQL's NUMERIC_MAX_RESULT_SCALE.
const MAX_RESULT_SCALE: f64 = 2000.0;

/// The decimal position of the leading digit of |x| (10^w <= |x| < 10^(w+1)); `None` for 0.
fn dweight((m, s): &Exact) -> Option<i64> {
    (m.sign() != Sign::NoSign).then(|| m.magnitude().to_string().len() as i64 - 1 - i64::from(*s))
}

/// PostgreSQL's base-10000 weight of x (0 for zero).
fn nweight(x: &Exact) -> i64 {
    dweight(x).map_or(0, |d| d.div_euclid(4))
}

/// log10(|x|) as a double, from the leading 17 digits (no overflow for wide values).
fn log10_abs((m, s): &Exact) -> f64 {
    let digits = m.magnitude().to_string();
    let lead: f64 = digits[..digits.len().min(17)].parse().unwrap_or(0.0);
    lead.log10() + (digits.len() as f64 - digits.len().min(17) as f64) - f64::from(*s)
}

/// `x` at `to` places: rounded half away from zero when it has more, padded when fewer.
fn at_scale((m, s): &Exact, to: u32) -> Exact {
    if *s > to {
        (round_to(m, *s, to), to)
    } else {
        (m * pow10(to - s), to)
    }
}

/// `a * b` at `rscale` places, as PostgreSQL's mul_var rounds it.
fn mul_at(a: &Exact, b: &Exact, rscale: i64) -> Exact {
    at_scale(
        &(&a.0 * &b.0, a.1 + b.1),
        rscale.clamp(0, 4 * MAX_DISPLAY_SCALE) as u32,
    )
}

/// `1 / x` at `rscale` places, rounded half away from zero (div_var). Errors: 22012.
fn recip_at(x: &Exact, rscale: u32) -> Result<Exact> {
    if x.0.sign() == Sign::NoSign {
        return Err(Error::DivisionByZero);
    }
    // 10^(rscale + 1 + s) / m is 1/x at rscale + 1 places, truncated; then rounded.
    let q = pow10(rscale + 1 + x.1) / &x.0;
    Ok((round_to(&q, rscale + 1, rscale), rscale))
}

fn numeric_overflow() -> Error {
    Error::NumericValueOutOfRange("value overflows numeric format".into())
}

/// PostgreSQL's `power(numeric, numeric)` (numeric.c's power_var): an integral exponent
/// by repeated squaring at the scales power_var_int keeps, another through exp(ln(x) * y);
/// the result at PostgreSQL's scale (at least 16 places, at least the arguments' scales).
/// Errors: 2201F for zero to a negative power and a negative base to a non-integral one,
/// 22003 when the result passes numeric's range.
pub(crate) fn numeric_power(base: &Exact, exp: &Exact) -> Result<Value> {
    let (b_sign, e_sign) = (base.0.sign(), exp.0.sign());
    let integral = &exp.0 % pow10(exp.1) == BigInt::ZERO;
    if b_sign == Sign::NoSign && e_sign == Sign::Minus {
        return Err(Error::InvalidArgumentForPowerFunction(
            "zero raised to a negative power is undefined".into(),
        ));
    }
    if b_sign == Sign::Minus && !integral {
        return Err(Error::InvalidArgumentForPowerFunction(
            "a negative number raised to a non-integer power yields a complex result".into(),
        ));
    }
    if integral {
        let k = i64::try_from(&exp.0 / pow10(exp.1)).ok();
        if let Some(k) = k.filter(|k| i32::try_from(*k).is_ok()) {
            let rscale = clamp_scale(MIN_SIG_DIGITS, base.1);
            let (m, s) = power_int(base, k, rscale)?;
            return Ok(WideNumeric::value(m, s));
        }
    }
    if b_sign == Sign::NoSign {
        return Ok(WideNumeric::value(BigInt::ZERO, MIN_SIG_DIGITS as u32));
    }
    let ln_val = log10_abs(base)
        * std::f64::consts::LN_10
        * WideNumeric {
            mantissa: exp.0.clone(),
            scale: exp.1,
        }
        .to_f64();
    if ln_val.abs() > MAX_RESULT_SCALE * 3.01 {
        if ln_val > 0.0 {
            return Err(numeric_overflow());
        }
        return Ok(WideNumeric::value(BigInt::ZERO, MAX_DISPLAY_SCALE as u32));
    }
    let val = ln_val * PG_LOG10_E;
    let rscale = clamp_scale(MIN_SIG_DIGITS - val as i64, base.1.max(exp.1));
    // Places for ln(x) so that ln(x) * y keeps the result's digits.
    let ey = dweight(exp).unwrap_or(0).max(0) as u32;
    let p = rscale + GUARD + 10 + val.max(0.0) as u32 + ey;
    let ln = ln_fixed(&fixed(base, p), p);
    let product = ln * &exp.0 / pow10(exp.1);
    let e = exp_fixed(&product, p);
    Ok(WideNumeric::value(round_to(&e, p, rscale), rscale))
}

/// power_var_int: `base ^ k` for an integer k, at `rscale` places, multiplying at the
/// scales PostgreSQL's repeated squaring keeps (its significant digits plus guards).
fn power_int(base: &Exact, k: i64, rscale: u32) -> Result<Exact> {
    match k {
        0 => return Ok((pow10(rscale), rscale)),
        1 => return Ok(at_scale(base, rscale)),
        -1 => return recip_at(base, rscale),
        2 => return Ok(mul_at(base, base, i64::from(rscale))),
        _ => {}
    }
    if base.0.sign() == Sign::NoSign {
        if k < 0 {
            return Err(Error::DivisionByZero);
        }
        return Ok((BigInt::ZERO, rscale));
    }
    let f = k as f64 * log10_abs(base);
    if f > 3.0 * f64::from(i16::MAX) * 4.0 {
        return Err(numeric_overflow());
    }
    if f + 1.0 < -f64::from(rscale) || f + 1.0 < -(MAX_DISPLAY_SCALE as f64) {
        return Ok((BigInt::ZERO, rscale));
    }
    let sig = 1 + i64::from(rscale) + f as i64 + (k.unsigned_abs() as f64).ln() as i64 + 8;
    let mut mask = k.unsigned_abs();
    let mut prod = base.clone();
    let mut result = if mask & 1 == 1 {
        base.clone()
    } else {
        (BigInt::from(1u8), 0)
    };
    let limit = i64::from(i16::MAX);
    while {
        mask >>= 1;
        mask > 0
    } {
        let local = (sig - 2 * nweight(&prod) * 4)
            .min(2 * i64::from(prod.1))
            .max(0);
        prod = mul_at(&prod, &prod, local);
        if mask & 1 == 1 {
            let local = (sig - (nweight(&prod) + nweight(&result)) * 4)
                .min(i64::from(prod.1 + result.1))
                .max(0);
            result = mul_at(&prod, &result, local);
        }
        if nweight(&prod) > limit || nweight(&result) > limit {
            if k > 0 {
                return Err(numeric_overflow());
            }
            return Ok((BigInt::ZERO, rscale));
        }
    }
    if k < 0 {
        recip_at(&result, rscale)
    } else {
        Ok(at_scale(&result, rscale))
    }
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

    /// power(numeric, numeric) as PostgreSQL 15 prints it: integral exponents exactly at
    /// 16 places or the base's scale, others through exp(ln(x) * y).
    #[test]
    fn powers_match_postgresql() {
        let two_10000 = text(numeric_power(&x("2.0"), &x("10000")));
        assert!(two_10000.starts_with("199506311688075838488374216268358508382349683188"));
        assert!(two_10000.ends_with("04792596709376.0000000000000000"));
        assert_eq!(two_10000.len(), 3028);
        assert_eq!(
            text(numeric_power(&x("1.5"), &x("100"))),
            "406561177535215237.3972797075670417"
        );
        assert_eq!(
            text(numeric_power(&x("1.1"), &(BigInt::from(-300), 0))),
            "0.0000000000003821"
        );
        assert_eq!(
            text(numeric_power(&x("2.0"), &x("0.5"))),
            "1.4142135623730950"
        );
        assert_eq!(
            text(numeric_power(&x("10.0"), &x("30.5"))),
            "3162277660168379331998893544432.7"
        );
        assert_eq!(
            text(numeric_power(&x("1.000001"), &x("1000000"))),
            "2.7182804693193769"
        );
        assert_eq!(
            text(numeric_power(&x("0.5"), &x("100"))),
            "0.0000000000000000"
        );
        let e = numeric_power(&x("10.0"), &x("131072")).unwrap_err();
        assert!(
            matches!(e.kind(), Error::NumericValueOutOfRange(_)),
            "{e:?}"
        );
        let e = numeric_power(&x("0.0"), &(BigInt::from(-1), 0)).unwrap_err();
        assert!(
            matches!(e.kind(), Error::InvalidArgumentForPowerFunction(_)),
            "{e:?}"
        );
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
