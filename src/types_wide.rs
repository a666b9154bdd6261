//! `numeric` values wider than [`Decimal`] holds (28 significant digits, scale at most
//! 28): the results PostgreSQL computes exactly and prints in full, such as the variance
//! of bigints near 2^62 (`11284874413194387814985569883728021468`) or `exp` at the scale
//! of an argument with 40 decimal places. Held exactly as a big-integer mantissa and a
//! decimal scale: `mantissa * 10^-scale`.
//!
//! Design decision: a wide value is printed, sent (text and binary), compared, ordered,
//! grouped, cast (to text, floats, integers and numeric) and takes part in `+ - * / %`
//! ([`arith`], in big integers) and abs/sign/round/trunc/floor/ceil/sqrt ([`function`])
//! and exp/ln/log/power exactly as PostgreSQL does; other numeric functions (to_char)
//! and the sums of aggregates refuse it with 0A000 naming the 28-digit limit, since they
//! compute in [`Decimal`]. Any value that fits a [`Decimal`] is one ([`WideNumeric::value`]), so the
//! wide form appears only where a [`Decimal`] cannot: number literals, quotients at
//! scales past 28, products, exp/ln/log and variances.
//!
//! ```ignore
//! use num_bigint::BigInt;
//! // 10^40 + 1 at scale 40: 1.0000000000000000000000000000000000000001
//! let m = BigInt::from(10u8).pow(40) + 1;
//! let v = WideNumeric::value(m, 40);
//! assert_eq!(v.to_text().unwrap(), "1.0000000000000000000000000000000000000001");
//! ```

use std::cmp::Ordering;

use num_bigint::{BigInt, Sign};
use rust_decimal::Decimal;

use crate::error::{Error, Result};
use crate::sql::{BinaryOp, ScalarFunc};
use crate::types::Value;

/// An exact decimal `mantissa * 10^-scale` too wide for [`Decimal`].
#[derive(Clone, Debug, PartialEq)]
pub struct WideNumeric {
    /// The digits, signed.
    pub(crate) mantissa: BigInt,
    /// Decimal places (the display scale, as PostgreSQL's `dscale`).
    pub(crate) scale: u32,
}

/// The scale that marks numeric `NaN` (with mantissa 0): no finite value has it (scales
/// stop at a few thousand), so a NaN travels wherever a wide numeric does.
const NAN_SCALE: u32 = u32::MAX;

/// True for numeric `NaN`.
pub(crate) fn is_nan(v: &Value) -> bool {
    matches!(v, Value::WideNumeric(w) if w.is_nan())
}

/// 10^n as a big integer.
pub(crate) fn pow10(n: u32) -> BigInt {
    BigInt::from(10u8).pow(n)
}

impl WideNumeric {
    /// The value `m * 10^-scale` as a [`Value`]: a [`Decimal`] numeric when it holds it
    /// exactly at this scale, else a wide one.
    pub(crate) fn value(m: BigInt, scale: u32) -> Value {
        if scale <= 28 {
            if let Ok(small) = i128::try_from(&m) {
                if let Ok(d) = Decimal::try_from_i128_with_scale(small, scale) {
                    return Value::Numeric(d);
                }
            }
        }
        Value::WideNumeric(Box::new(WideNumeric { mantissa: m, scale }))
    }

    /// Numeric `NaN`, as PostgreSQL's: equal to itself, above every number, absorbing
    /// in arithmetic and aggregates.
    pub(crate) fn nan() -> Value {
        Value::WideNumeric(Box::new(WideNumeric {
            mantissa: BigInt::ZERO,
            scale: NAN_SCALE,
        }))
    }

    /// True for numeric `NaN`.
    pub(crate) fn is_nan(&self) -> bool {
        self.scale == NAN_SCALE
    }

    /// The exact value of a number as (mantissa, scale): integers, numerics (narrow or
    /// wide); `None` for floats, numeric `NaN` and other types.
    pub(crate) fn exact_of(v: &Value) -> Option<(BigInt, u32)> {
        Some(match v {
            Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => (BigInt::from(v.as_i64()?), 0),
            Value::Numeric(d) => (BigInt::from(d.mantissa()), d.scale()),
            Value::WideNumeric(w) if w.is_nan() => return None,
            Value::WideNumeric(w) => (w.mantissa.clone(), w.scale),
            _ => return None,
        })
    }

    /// The order of two exact values.
    pub(crate) fn cmp_exact(a: &(BigInt, u32), b: &(BigInt, u32)) -> Ordering {
        let s = a.1.max(b.1);
        (&a.0 * pow10(s - a.1)).cmp(&(&b.0 * pow10(s - b.1)))
    }

    /// The value without trailing fractional zeros (equal values have equal forms), as a
    /// [`Decimal`] when that holds it.
    pub(crate) fn normalized(&self) -> Result<Decimal, (BigInt, u32)> {
        if self.is_nan() {
            return Err((BigInt::ZERO, NAN_SCALE));
        }
        let (mut m, mut s) = (self.mantissa.clone(), self.scale);
        let ten = BigInt::from(10u8);
        while s > 0 && (&m % &ten) == BigInt::ZERO {
            m /= &ten;
            s -= 1;
        }
        match WideNumeric::value(m.clone(), s) {
            Value::Numeric(d) => Ok(d.normalize()),
            _ => Err((m, s)),
        }
    }

    /// The digits PostgreSQL prints: sign, integer part (at least `0`), and `scale`
    /// decimal places.
    pub(crate) fn push_text(&self, out: &mut String) {
        if self.is_nan() {
            out.push_str("NaN");
            return;
        }
        let digits = self.mantissa.magnitude().to_string();
        if self.mantissa.sign() == Sign::Minus {
            out.push('-');
        }
        crate::types::push_scaled_digits(&digits, self.scale as usize, out);
    }

    /// The nearest `f64` (correctly rounded, as `strtod` of the digits).
    pub(crate) fn to_f64(&self) -> f64 {
        let mut s = String::new();
        self.push_text(&mut s);
        s.parse().unwrap_or(f64::NAN)
    }

    /// Rounded half away from zero to an integer, as numeric-to-integer casts round.
    pub(crate) fn round_to_integer(&self) -> BigInt {
        let k = pow10(self.scale);
        let half = &k / 2u8;
        let a = self.mantissa.magnitude().clone();
        let q = BigInt::from((a + half.magnitude()) / k.magnitude());
        if self.mantissa.sign() == Sign::Minus {
            -q
        } else {
            q
        }
    }

    /// PostgreSQL's numeric binary form (`numeric_send`): digit count, weight, sign and
    /// display scale as 16-bit words, then base-10000 digits.
    pub(crate) fn send(&self) -> Vec<u8> {
        if self.is_nan() {
            // No digits, weight 0, sign NUMERIC_NAN (0xC000), display scale 0.
            return vec![0, 0, 0, 0, 0xC0, 0, 0, 0];
        }
        let digits = self.mantissa.magnitude().to_string();
        let scale = self.scale as usize;
        // Integer and fraction digits, padded to whole groups of four around the point.
        let (int_part, frac_part) = if digits.len() > scale {
            digits.split_at(digits.len() - scale)
        } else {
            ("", digits.as_str())
        };
        let frac = format!("{}{}", "0".repeat(scale - frac_part.len()), frac_part);
        let int = format!("{}{}", "0".repeat((4 - int_part.len() % 4) % 4), int_part);
        let frac = format!("{}{}", frac, "0".repeat((4 - frac.len() % 4) % 4));
        let group = |s: &str| -> Vec<u16> {
            s.as_bytes()
                .chunks(4)
                .map(|c| c.iter().fold(0u16, |a, d| a * 10 + u16::from(d - b'0')))
                .collect()
        };
        let int_groups = group(&int);
        let mut weight = int_groups.len() as i16 - 1;
        let mut groups: Vec<u16> = int_groups.into_iter().chain(group(&frac)).collect();
        while groups.first() == Some(&0) {
            groups.remove(0);
            weight -= 1;
        }
        while groups.last() == Some(&0) {
            groups.pop();
        }
        if groups.is_empty() {
            weight = 0;
        }
        let sign: u16 = if self.mantissa.sign() == Sign::Minus {
            0x4000
        } else {
            0
        };
        let mut out = Vec::with_capacity(8 + 2 * groups.len());
        out.extend((groups.len() as u16).to_be_bytes());
        out.extend(weight.to_be_bytes());
        out.extend(sign.to_be_bytes());
        out.extend((self.scale as u16).to_be_bytes());
        for g in groups {
            out.extend(g.to_be_bytes());
        }
        out
    }
}

/// `a op b` for `+ - * / %` over exact numbers, at PostgreSQL's result scales (max of
/// the scales for `+ - %`, their sum for `*`, `select_div_scale` for `/`, rounded half
/// away from zero), as a narrow numeric when it fits one. Errors: 22012 dividing by zero.
pub(crate) fn arith(op: BinaryOp, a: &(BigInt, u32), b: &(BigInt, u32)) -> Result<Value> {
    let aligned = || {
        let s = a.1.max(b.1);
        (&a.0 * pow10(s - a.1), &b.0 * pow10(s - b.1), s)
    };
    let zero = b.0.sign() == Sign::NoSign;
    Ok(match op {
        BinaryOp::Add => {
            let (x, y, s) = aligned();
            WideNumeric::value(x + y, s)
        }
        BinaryOp::Sub => {
            let (x, y, s) = aligned();
            WideNumeric::value(x - y, s)
        }
        BinaryOp::Mul => WideNumeric::value(&a.0 * &b.0, a.1 + b.1),
        BinaryOp::Div | BinaryOp::Mod if zero => return Err(Error::DivisionByZero),
        BinaryOp::Div => {
            let (num, den) = ((&a.0, a.1), (&b.0, b.1));
            let rscale = crate::agg::numeric::big_select_div_scale(num, den);
            let q = crate::agg::numeric::big_div_at_scale(num, den, rscale)
                .ok_or(Error::DivisionByZero)?;
            WideNumeric::value(q, rscale)
        }
        BinaryOp::Mod => {
            // Truncated division's remainder: the dividend's sign, as PostgreSQL's.
            let (x, y, s) = aligned();
            WideNumeric::value(x % y, s)
        }
        _ => return Err(too_wide()),
    })
}

/// A number literal (`1e300`, `0.000000000000000000000000000001`, digits with an optional
/// point and exponent) as an exact numeric, when its digits before and after the point
/// number at most 1,000 each; `None` otherwise.
pub(crate) fn parse_wide(text: &str) -> Option<Value> {
    let t = text.trim();
    let (body, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().ok()?),
        None => (t, 0),
    };
    let (neg, body) = match body.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, body.strip_prefix('+').unwrap_or(body)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = format!("{int}{frac}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // value = digits * 10^(exp - len(frac))
    let shift = exp - frac.len() as i64;
    let m: BigInt = digits.parse().ok()?;
    let (m, scale) = if shift >= 0 {
        (m * pow10(u32::try_from(shift).ok()?), 0)
    } else {
        (m, u32::try_from(-shift).ok()?)
    };
    let int_digits = m.magnitude().to_string().len() as i64 - i64::from(scale);
    if scale > 1000 || int_digits > 1000 {
        return None;
    }
    Some(WideNumeric::value(if neg { -m } else { m }, scale))
}

/// `abs`, `sign`, `round`, `trunc`, `floor`, `ceil` and `sqrt` of a wide numeric at
/// PostgreSQL's scales (`round(x, n)`/`trunc(x, n)` at `max(n, 0)` places, `floor`/`ceil`
/// at none); `None` for other functions.
pub(crate) fn function(
    func: ScalarFunc,
    w: &WideNumeric,
    places: Option<i64>,
) -> Option<Result<Value>> {
    if w.is_nan() {
        return Some(Ok(WideNumeric::nan()));
    }
    let sign = w.mantissa.sign();
    // |m| at `to` places (to <= scale): rounded half up, or truncated, or away from zero.
    let cut = |to: i64, how: Cut| -> Value {
        let drop = (i64::from(w.scale) - to).max(0) as u32;
        let k = pow10(drop);
        let mag = w.mantissa.magnitude();
        let (q, r) = (mag / k.magnitude(), mag % k.magnitude());
        let up = match how {
            Cut::Half => r * 2u8 >= *k.magnitude(),
            Cut::Zero => false,
            Cut::Away => r != num_bigint::BigUint::ZERO,
        };
        let q = BigInt::from(if up { q + 1u8 } else { q });
        let q = if sign == Sign::Minus { -q } else { q };
        // Back to `max(to, 0)` places.
        let (q, scale) = if to < 0 {
            (q * pow10(to.unsigned_abs() as u32), 0)
        } else {
            (q * pow10((to as u32).saturating_sub(w.scale)), to as u32)
        };
        WideNumeric::value(q, scale)
    };
    let n = places.unwrap_or(0).clamp(-1000, 1000);
    Some(Ok(match func {
        ScalarFunc::Abs => {
            WideNumeric::value(BigInt::from(w.mantissa.magnitude().clone()), w.scale)
        }
        ScalarFunc::Sign => WideNumeric::value(
            BigInt::from(match sign {
                Sign::Minus => -1,
                Sign::NoSign => 0,
                Sign::Plus => 1,
            }),
            0,
        ),
        ScalarFunc::Round => cut(n, Cut::Half),
        ScalarFunc::Trunc => cut(n, Cut::Zero),
        ScalarFunc::Floor if sign == Sign::Minus => cut(0, Cut::Away),
        ScalarFunc::Ceil if sign != Sign::Minus => cut(0, Cut::Away),
        ScalarFunc::Floor | ScalarFunc::Ceil => cut(0, Cut::Zero),
        ScalarFunc::Sqrt => return Some(sqrt(w)),
        _ => return None,
    }))
}

/// PostgreSQL's `sqrt(numeric)` (numeric_sqrt): at least 16 significant digits (`15 - 2w`
/// places for a first base-10000 digit of weight `w`), at least the argument's scale,
/// rounded half away from zero. Errors: 2201F for a negative argument.
fn sqrt(w: &WideNumeric) -> Result<Value> {
    if w.mantissa.sign() == Sign::Minus {
        return Err(Error::InvalidArgumentForPowerFunction(
            "cannot take square root of a negative number".into(),
        ));
    }
    let digits = w.mantissa.magnitude().to_string().len() as i64;
    let weight = if w.mantissa.sign() == Sign::NoSign {
        0
    } else {
        (digits - 1 - i64::from(w.scale)).div_euclid(4)
    };
    let rscale = (15 - 2 * weight).max(i64::from(w.scale)).clamp(0, 1000) as u32;
    let root = crate::agg::numeric::big_sqrt_at_scale((&w.mantissa, w.scale), rscale)
        .ok_or_else(too_wide)?;
    Ok(WideNumeric::value(root, rscale))
}

/// How [`function`] drops digits.
#[derive(Clone, Copy)]
enum Cut {
    /// Half away from zero.
    Half,
    /// Toward zero.
    Zero,
    /// Away from zero, when any dropped digit is not zero.
    Away,
}

/// The error of arithmetic on a numeric too wide for it: 0A000 naming the limit.
pub(crate) fn too_wide() -> Error {
    Error::FeatureNotSupported(
        "numeric functions of values of more than 28 significant digits are not supported".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide(m: &str, scale: u32) -> WideNumeric {
        WideNumeric {
            mantissa: m.parse().unwrap(),
            scale,
        }
    }

    #[test]
    fn prints_and_sends_as_postgresql() {
        let text = |w: &WideNumeric| {
            let mut s = String::new();
            w.push_text(&mut s);
            s
        };
        let v = wide("11284874413194387814985569883728021468", 0);
        assert_eq!(text(&v), "11284874413194387814985569883728021468");
        assert_eq!(
            text(&wide("-10000000000000000000000000000000000001", 40)),
            "-0.0010000000000000000000000000000000000001"
        );
        // numeric_send of 12345678.9 (scale 1): 3 digits, weight 1, 1234 5678 9000.
        let mut want = vec![0, 3, 0, 1, 0, 0, 0, 1];
        for g in [1234u16, 5678, 9000] {
            want.extend(g.to_be_bytes());
        }
        assert_eq!(wide("123456789", 1).send(), want);
        // 1e-31 at scale 31: places 29 to 32 are the digit 0010 of weight -8.
        let mut want = vec![0, 1, 0xff, 0xf8, 0, 0, 0, 31];
        want.extend(10u16.to_be_bytes());
        assert_eq!(wide("1", 31).send(), want);
    }

    #[test]
    fn narrow_values_stay_decimals_and_compare_exactly() {
        assert!(matches!(
            WideNumeric::value(BigInt::from(15), 1),
            Value::Numeric(_)
        ));
        let one = wide(&format!("1{}", "0".repeat(31)), 31);
        assert_eq!(one.normalized(), Ok(Decimal::ONE));
        let a = WideNumeric::exact_of(&Value::Int8(7)).unwrap();
        let b = (BigInt::from(70_000), 4);
        assert_eq!(WideNumeric::cmp_exact(&a, &b), Ordering::Equal);
        assert_eq!(wide("15", 1).round_to_integer(), BigInt::from(2));
        assert_eq!(wide("-25", 1).round_to_integer(), BigInt::from(-3));
        assert_eq!(wide("-24", 1).round_to_integer(), BigInt::from(-2));
    }
}

#[cfg(test)]
mod doc_examples {
    //! The module documentation's example, run as a unit test (it uses crate-private items).

    #[test]
    fn module_example() {
        use super::WideNumeric;
        use num_bigint::BigInt;
        let m = BigInt::from(10u8).pow(40) + 1;
        let v = WideNumeric::value(m, 40);
        assert_eq!(
            v.to_text().unwrap(),
            "1.0000000000000000000000000000000000000001"
        );
    }
}
