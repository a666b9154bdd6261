//! Scalar functions of [`crate::expr`] that are strict (a NULL argument gives NULL) and
//! read their argument values only: `trunc`, `sign`, `power`, `exp`, `ln`, `log`, `lpad`,
//! `rpad`, `reverse`, `repeat`, `strpos`, `initcap`, `ascii`, `chr`, `to_hex`, with
//! PostgreSQL 15's results and errors. The binder has typed and coerced the arguments
//! (`crate::sql::functions` has their rows), so each sees the types it expects.

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};

use crate::error::{Error, Result};
use crate::sql::ScalarFunc;
use crate::types::Value;

/// Longest text `repeat`, `lpad`/`rpad` and `format` build, in bytes (PostgreSQL's 1 GB limit for a
/// value, kept well below so one call cannot take the server's memory).
pub(crate) const TEXT_BYTES_MAX: usize = 64 * 1024 * 1024;

/// `func` over `vals` when it is one of this module's functions, else `None`.
pub(crate) fn strict(func: ScalarFunc, vals: &[Value]) -> Option<Result<Value>> {
    use ScalarFunc as F;
    if !matches!(
        func,
        F::Trunc
            | F::Sign
            | F::Power
            | F::Exp
            | F::Ln
            | F::Log10
            | F::Lpad
            | F::Rpad
            | F::Reverse
            | F::Repeat
            | F::Strpos
            | F::Initcap
            | F::Ascii
            | F::Chr
            | F::ToHex
            | F::BitAnd
            | F::BitOr
            | F::BitXor
            | F::BitNot
            | F::ShiftLeft
            | F::ShiftRight
            | F::Md5
            | F::RegexpReplace
            | F::RegexpCount
            | F::RegexpInstr
            | F::RegexpLike
            | F::RegexpSubstr
            | F::RegexMatch
            | F::RegexIMatch
            | F::SimilarTo
            | F::RegexSubstr
            | F::SimilarSubstr
            | F::ToChar
            | F::Age
            | F::DateBin
            | F::JustifyHours
            | F::JustifyDays
            | F::JustifyInterval
            | F::WidthBucket
            | F::BpcharText
    ) {
        return None;
    }
    if vals.iter().any(Value::is_null) {
        return Some(Ok(Value::Null));
    }
    Some(match func {
        F::Trunc => trunc(vals),
        F::Sign => sign(&vals[0]),
        F::Power => power(&vals[0], &vals[1]),
        F::Log10 if vals.len() == 2 => log_base(&vals[0], &vals[1]),
        F::Exp | F::Ln | F::Log10 => logarithmic(func, &vals[0]),
        F::BitAnd | F::BitOr | F::BitXor | F::BitNot | F::ShiftLeft | F::ShiftRight => {
            bitwise(func, vals)
        }
        F::WidthBucket => width_bucket(vals),
        F::BpcharText => Ok(match &vals[0] {
            Value::Text(s) => Value::Text(s.trim_end_matches(' ').into()),
            other => other.clone(),
        }),
        F::RegexpCount | F::RegexpInstr | F::RegexpLike | F::RegexpSubstr => {
            crate::expr_regexp15::call(func, vals)
        }
        F::RegexpReplace if vals.len() > 4 || matches!(vals.get(3), Some(Value::Int4(_))) => {
            crate::expr_regexp15::replace_from(vals)
        }
        F::Md5
        | F::RegexpReplace
        | F::RegexMatch
        | F::RegexIMatch
        | F::SimilarTo
        | F::RegexSubstr
        | F::SimilarSubstr => pattern_function(func, vals),
        F::ToChar | F::Age | F::DateBin | F::JustifyHours | F::JustifyDays | F::JustifyInterval => {
            time_function(func, vals)
        }
        _ => text_function(func, vals),
    })
}

/// The integer bit operators, on two operands of one integer type (the shift count an
/// integer), as PostgreSQL's `int2and` ... `int8shr`: a shift count is taken modulo the
/// operand's width, as the C shift PostgreSQL runs does on x86.
fn bitwise(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    use ScalarFunc as F;
    let a = int(&vals[0])?;
    let b = match vals.get(1) {
        Some(v) => int(v)?,
        None => 0,
    };
    let (width, wrap): (u32, fn(i64) -> Value) = match &vals[0] {
        Value::Int2(_) => (16, |x| Value::Int2(x as i16)),
        Value::Int4(_) => (32, |x| Value::Int4(x as i32)),
        _ => (64, Value::Int8),
    };
    let shift = (b as u32) % if width == 64 { 64 } else { 32 };
    let r = match func {
        F::BitAnd => a & b,
        F::BitOr => a | b,
        F::BitXor => a ^ b,
        F::BitNot => !a,
        F::ShiftLeft if width == 64 => a.wrapping_shl(shift),
        F::ShiftLeft => ((a as i32).wrapping_shl(shift)) as i64,
        F::ShiftRight if width == 64 => a.wrapping_shr(shift),
        _ => ((a as i32).wrapping_shr(shift)) as i64,
    };
    Ok(wrap(r))
}

/// `width_bucket(x, low, high, count)` of PostgreSQL 15, for double precision or numeric
/// operands. Errors: 2201G for a count not positive or equal bounds, 22003 when count + 1
/// overflows.
fn width_bucket(vals: &[Value]) -> Result<Value> {
    let count = int(&vals[3])?;
    if count <= 0 {
        return Err(Error::InvalidArgumentForWidthBucket(
            "count must be greater than zero".into(),
        ));
    }
    let (x, lo, hi) = (float(&vals[0])?, float(&vals[1])?, float(&vals[2])?);
    if x.is_nan() || lo.is_nan() || hi.is_nan() {
        return Err(Error::InvalidArgumentForWidthBucket(
            "operand, lower bound, and upper bound cannot be NaN".into(),
        ));
    }
    if lo.is_infinite() || hi.is_infinite() {
        return Err(Error::InvalidArgumentForWidthBucket(
            "lower and upper bounds must be finite".into(),
        ));
    }
    let over = || {
        i32::try_from(count + 1)
            .map_err(|_| Error::NumericValueOutOfRange("integer out of range".into()))
    };
    let bucket = |num: f64, den: f64| -> i32 { ((num * count as f64) / den).floor() as i32 + 1 };
    let exact = |a: &Value, b: &Value, c: &Value, d: &Value| -> Option<i32> {
        // Numeric operands: the bucket from exact decimal arithmetic.
        let dec = |v: &Value| match v {
            Value::Numeric(d) => Some(*d),
            _ => None,
        };
        let (a, b, c, d) = (dec(a)?, dec(b)?, dec(c)?, dec(d)?);
        let q = ((a - b) * Decimal::from(count)).checked_div(c - d)?;
        q.floor().to_i32().map(|v| v + 1)
    };
    let r = if lo < hi {
        if x < lo {
            0
        } else if x >= hi {
            over()?
        } else {
            exact(&vals[0], &vals[1], &vals[2], &vals[1]).unwrap_or_else(|| bucket(x - lo, hi - lo))
        }
    } else if lo > hi {
        if x > lo {
            0
        } else if x <= hi {
            over()?
        } else {
            exact(&vals[1], &vals[0], &vals[1], &vals[2]).unwrap_or_else(|| bucket(lo - x, lo - hi))
        }
    } else {
        return Err(Error::InvalidArgumentForWidthBucket(
            "lower bound cannot equal upper bound".into(),
        ));
    };
    Ok(Value::Int4(r))
}

fn pattern_function(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    use ScalarFunc as F;
    let s = text(&vals[0])?;
    Ok(match func {
        F::Md5 => Value::Text(format!("{:x}", md5::compute(s.as_bytes())).into()),
        F::RegexMatch | F::RegexIMatch => Value::Bool(crate::expr_regex::matches(
            s,
            text(&vals[1])?,
            func == F::RegexIMatch,
        )?),
        F::SimilarTo => Value::Bool(crate::expr_regex::similar(s, text(&vals[1])?)?),
        F::RegexSubstr | F::SimilarSubstr => {
            let found = match func {
                F::RegexSubstr => crate::expr_regex::substring(s, text(&vals[1])?)?,
                _ => crate::expr_regex::similar_substring(s, text(&vals[1])?, text(&vals[2])?)?,
            };
            found.map_or(Value::Null, |t| Value::Text(t.into()))
        }
        _ => {
            let flags = vals.get(3).map(text).transpose()?.unwrap_or("");
            let out = crate::expr_regex::replace(s, text(&vals[1])?, text(&vals[2])?, flags)?;
            Value::Text(out.into())
        }
    })
}

fn time_function(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    use crate::expr_datetime as dt;
    use ScalarFunc as F;
    let interval = |v: &Value| match v {
        Value::Interval(iv) => Ok(*iv),
        other => Err(bad("an interval function", other)),
    };
    Ok(match func {
        F::ToChar => return crate::expr_format::to_char(&vals[0], text(&vals[1])?),
        F::Age => return dt::age(&vals[0], &vals[1]),
        F::DateBin => return dt::date_bin(&interval(&vals[0])?, &vals[1], &vals[2]),
        F::JustifyHours => Value::Interval(dt::justify_hours(interval(&vals[0])?)?),
        F::JustifyDays => Value::Interval(dt::justify_days(interval(&vals[0])?)?),
        _ => Value::Interval(dt::justify_interval(interval(&vals[0])?)?),
    })
}

fn bad(what: &str, v: &Value) -> Error {
    Error::Internal(format!("{what} of a {v:?}: the binder types its arguments"))
}

fn float(v: &Value) -> Result<f64> {
    v.as_f64().ok_or_else(|| bad("a number function", v))
}

fn int(v: &Value) -> Result<i64> {
    v.as_i64().ok_or_else(|| bad("an integer argument", v))
}

fn text(v: &Value) -> Result<&str> {
    v.as_str().ok_or_else(|| bad("a text function", v))
}

fn overflow() -> Error {
    Error::NumericValueOutOfRange("value out of range: overflow".into())
}

fn trunc(vals: &[Value]) -> Result<Value> {
    match &vals[0] {
        Value::Numeric(d) => {
            let places = vals.get(1).map(int).transpose()?.unwrap_or(0);
            if places < 0 {
                // trunc(1234.5, -2) is 1200: toward zero to a multiple of 10^-places, scale 0.
                let Some(factor) = 10i128
                    .checked_pow(places.unsigned_abs().min(29) as u32)
                    .filter(|f| *f <= Decimal::MAX.mantissa())
                else {
                    return Ok(Value::Numeric(Decimal::ZERO));
                };
                let factor = Decimal::from_i128_with_scale(factor, 0);
                let mut r = d - d % factor;
                r.rescale(0);
                return Ok(Value::Numeric(r));
            }
            let places = places.min(28) as u32;
            let mut r = d.round_dp_with_strategy(places, RoundingStrategy::ToZero);
            r.rescale(places);
            Ok(Value::Numeric(r))
        }
        v => Ok(Value::Float8(float(v)?.trunc())),
    }
}

fn sign(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Numeric(d) => Value::Numeric(if d.is_zero() {
            Decimal::ZERO
        } else if d.is_sign_negative() {
            Decimal::NEGATIVE_ONE
        } else {
            Decimal::ONE
        }),
        v => {
            let f = float(v)?;
            Value::Float8(if f > 0.0 {
                1.0
            } else if f < 0.0 {
                -1.0
            } else {
                0.0
            })
        }
    })
}

/// PostgreSQL's errors for a power that has no real value.
fn power_domain(base: f64, exponent: f64) -> Result<()> {
    if base == 0.0 && exponent < 0.0 {
        return Err(Error::InvalidArgumentForPowerFunction(
            "zero raised to a negative power is undefined".into(),
        ));
    }
    if base < 0.0 && exponent.fract() != 0.0 {
        return Err(Error::InvalidArgumentForPowerFunction(
            "a negative number raised to a non-integer power yields a complex result".into(),
        ));
    }
    Ok(())
}

fn power(a: &Value, b: &Value) -> Result<Value> {
    use crate::types_wide::WideNumeric;
    let numeric = |v: &Value| matches!(v, Value::Numeric(_) | Value::WideNumeric(_));
    if numeric(a) || numeric(b) {
        use crate::types_wide::is_nan;
        if is_nan(a) || is_nan(b) {
            // NaN ^ 0 and 1 ^ NaN are 1, as in PostgreSQL; NaN otherwise.
            let is = |v: &Value, x: i64| {
                !is_nan(v) && crate::expr::compare(v, &Value::Int8(x)).is_ok_and(|o| o.is_eq())
            };
            if is(b, 0) || is(a, 1) {
                return Ok(Value::Numeric(Decimal::ONE));
            }
            return Ok(WideNumeric::nan());
        }
        if let (Some(x), Some(y)) = (WideNumeric::exact_of(a), WideNumeric::exact_of(b)) {
            return crate::numeric_math::numeric_power(&x, &y);
        }
    }
    let (x, y) = (float(a)?, float(b)?);
    power_domain(x, y)?;
    let r = x.powf(y);
    if r.is_infinite() {
        return Err(overflow());
    }
    Ok(Value::Float8(r))
}

fn logarithmic(func: ScalarFunc, v: &Value) -> Result<Value> {
    // Numerics at PostgreSQL's scale and digits, exactly.
    if let Some(x) = crate::types_wide::WideNumeric::exact_of(v).filter(|_| v.as_i64().is_none()) {
        return match func {
            ScalarFunc::Exp => crate::numeric_math::numeric_exp(&x),
            ScalarFunc::Ln => crate::numeric_math::numeric_ln(&x),
            _ => crate::numeric_math::numeric_log10(&x),
        };
    }
    let x = float(v)?;
    if func != ScalarFunc::Exp && x <= 0.0 {
        return Err(Error::InvalidArgumentForLogarithm(if x == 0.0 {
            "cannot take logarithm of zero".into()
        } else {
            "cannot take logarithm of a negative number".into()
        }));
    }
    let r = match func {
        ScalarFunc::Exp => x.exp(),
        ScalarFunc::Ln => x.ln(),
        _ => x.log10(),
    };
    if r.is_infinite() {
        return Err(overflow());
    }
    Ok(Value::Float8(r))
}

/// `log(b, x)` of numerics, as PostgreSQL's log_var; NaN for a NaN argument. Errors: 2201E
/// for a base or number at or below zero, 22012 for base 1.
fn log_base(b: &Value, x: &Value) -> Result<Value> {
    use crate::types_wide::WideNumeric;
    match (WideNumeric::exact_of(b), WideNumeric::exact_of(x)) {
        (Some(b), Some(x)) => crate::numeric_math::numeric_log(&b, &x),
        _ => Ok(WideNumeric::nan()),
    }
}

fn text_function(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    use ScalarFunc as F;
    let out: String = match func {
        F::Lpad | F::Rpad => {
            let fill = vals.get(2).map(text).transpose()?.unwrap_or(" ");
            pad(text(&vals[0])?, int(&vals[1])?, fill, func == F::Lpad)?
        }
        F::Reverse => text(&vals[0])?.chars().rev().collect(),
        F::Repeat => {
            let s = text(&vals[0])?;
            let n = int(&vals[1])?.max(0) as usize;
            if s.len().saturating_mul(n) > TEXT_BYTES_MAX {
                return Err(too_long());
            }
            s.repeat(n)
        }
        F::Strpos => return Ok(Value::Int4(strpos(text(&vals[0])?, text(&vals[1])?))),
        F::Initcap => initcap(text(&vals[0])?),
        F::Ascii => {
            let c = text(&vals[0])?.chars().next().map_or(0, |c| c as i32);
            return Ok(Value::Int4(c));
        }
        F::Chr => chr(int(&vals[0])?)?.to_string(),
        F::ToHex => match &vals[0] {
            Value::Int8(n) => format!("{:x}", *n as u64),
            v => format!("{:x}", int(v)? as i32 as u32),
        },
        _ => return Err(bad("a text function", &vals[0])),
    };
    Ok(Value::Text(out.into()))
}

pub(crate) fn too_long() -> Error {
    Error::ProgramLimitExceeded(format!(
        "requested length too large (at most {TEXT_BYTES_MAX} bytes)"
    ))
}

/// `lpad`/`rpad`: `s` cut or filled to `n` characters with `fill` repeated.
fn pad(s: &str, n: i64, fill: &str, left: bool) -> Result<String> {
    let n = n.max(0) as usize;
    let have = s.chars().count();
    if have >= n || fill.is_empty() {
        return Ok(s.chars().take(n).collect());
    }
    if n.saturating_mul(4) > TEXT_BYTES_MAX {
        return Err(too_long());
    }
    let filler: String = fill.chars().cycle().take(n - have).collect();
    Ok(if left {
        filler + s
    } else {
        s.to_string() + &filler
    })
}

fn strpos(s: &str, sub: &str) -> i32 {
    match s.find(sub) {
        Some(byte) => s[..byte].chars().count() as i32 + 1,
        None => 0,
    }
}

/// PostgreSQL's initcap: the first letter of each run of letters and digits upper case,
/// the others lower case.
fn initcap(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_word = false;
    for c in s.chars() {
        out.push(if in_word {
            lower_char(c)
        } else {
            upper_char(c)
        });
        in_word = c.is_alphanumeric();
    }
    out
}

/// `upper(s)` / `lower(s)` as PostgreSQL under a libc UTF-8 locale: character by
/// character (`towupper`/`towlower`), so `upper('ß')` is `ß` and `lower('İ')` is `i`.
pub(crate) fn case_mapped(s: &str, upper: bool) -> String {
    s.chars()
        .map(if upper { upper_char } else { lower_char })
        .collect()
}

/// The simple uppercase of `c`: itself where Unicode's full mapping has more than one
/// character (`ß`, `ﬀ`).
fn upper_char(c: char) -> char {
    one_char(c, c.to_uppercase())
}

/// The simple lowercase of `c`: the first character of the full mapping, which has more
/// than one only for `İ` (`i` and a combining dot; its simple mapping is `i`).
fn lower_char(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// A character's case mapping where it is one character, else the character itself:
/// PostgreSQL maps case character by character (`towupper`), so `ß` stays `ß` where
/// Unicode's full mapping gives `SS`.
fn one_char(c: char, mut mapped: impl Iterator<Item = char> + Clone) -> char {
    match (mapped.next(), mapped.next()) {
        (Some(m), None) => m,
        _ => c,
    }
}

fn chr(n: i64) -> Result<char> {
    if n < 0 {
        return Err(Error::InvalidParameterValue(
            "character number must be positive".into(),
        ));
    }
    if n == 0 {
        return Err(Error::ProgramLimitExceeded(
            "null character not permitted".into(),
        ));
    }
    u32::try_from(n)
        .ok()
        .and_then(char::from_u32)
        .ok_or_else(|| {
            Error::ProgramLimitExceeded("requested character too large for encoding".into())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    fn call(f: ScalarFunc, vals: &[Value]) -> Value {
        strict(f, vals).expect("one of ours").expect("no error")
    }

    #[test]
    fn text_functions_answer_as_postgresql() {
        assert_eq!(
            call(ScalarFunc::Lpad, &[t("abc"), Value::Int4(6), t("*")]),
            t("***abc")
        );
        assert_eq!(
            call(ScalarFunc::Rpad, &[t("日本"), Value::Int4(3)]),
            t("日本 ")
        );
        assert_eq!(
            call(ScalarFunc::Lpad, &[t("abcdef"), Value::Int4(2)]),
            t("ab")
        );
        assert_eq!(call(ScalarFunc::Reverse, &[t("äbc")]), t("cbä"));
        assert_eq!(
            call(ScalarFunc::Strpos, &[t("日本語"), t("語")]),
            Value::Int4(3)
        );
        assert_eq!(
            call(ScalarFunc::Strpos, &[t("abc"), t("x")]),
            Value::Int4(0)
        );
        assert_eq!(
            call(ScalarFunc::Initcap, &[t("hello wORLD a1b")]),
            t("Hello World A1b")
        );
        assert_eq!(call(ScalarFunc::Initcap, &[t("ßtraße ǆa")]), t("ßtraße Ǆa"));
        assert_eq!(call(ScalarFunc::Ascii, &[t("A")]), Value::Int4(65));
        assert_eq!(call(ScalarFunc::ToHex, &[Value::Int4(-1)]), t("ffffffff"));
        assert_eq!(call(ScalarFunc::ToHex, &[Value::Int8(255)]), t("ff"));
        assert_eq!(call(ScalarFunc::Repeat, &[t("ab"), Value::Int4(-1)]), t(""));
        assert_eq!(
            call(ScalarFunc::Lpad, &[Value::Null, Value::Int4(2)]),
            Value::Null
        );
    }

    #[test]
    fn math_functions_answer_as_postgresql() {
        assert_eq!(
            call(ScalarFunc::Trunc, &[Value::Float8(-2.7)]),
            Value::Float8(-2.0)
        );
        let n = |s: &str| Value::Numeric(s.parse().unwrap());
        assert_eq!(
            call(ScalarFunc::Trunc, &[n("2.567"), Value::Int4(2)]),
            n("2.56")
        );
        // Negative places truncate toward zero left of the point, as PostgreSQL does.
        for (x, places, want) in [
            ("1234.5678", -2, "1200"),
            ("-1299.9", -2, "-1200"),
            ("99", -2, "0"),
            ("5", -40, "0"),
        ] {
            let got = call(ScalarFunc::Trunc, &[n(x), Value::Int4(places)]);
            assert!(
                matches!(&got, Value::Numeric(d) if d.to_string() == want),
                "trunc({x}, {places}) = {got:?}"
            );
        }
        assert_eq!(
            call(ScalarFunc::Sign, &[Value::Float8(-3.0)]),
            Value::Float8(-1.0)
        );
        assert_eq!(
            call(
                ScalarFunc::Power,
                &[Value::Float8(2.0), Value::Float8(10.0)]
            ),
            Value::Float8(1024.0)
        );
        assert_eq!(
            call(ScalarFunc::Power, &[n("1.5"), n("2")])
                .to_text()
                .unwrap(),
            "2.2500000000000000"
        );
        assert!(matches!(
            strict(ScalarFunc::Ln, &[Value::Float8(0.0)]),
            Some(Err(Error::InvalidArgumentForLogarithm(_)))
        ));
        assert!(matches!(
            strict(
                ScalarFunc::Power,
                &[Value::Float8(-8.0), Value::Float8(0.5)]
            ),
            Some(Err(Error::InvalidArgumentForPowerFunction(_)))
        ));
    }
}
