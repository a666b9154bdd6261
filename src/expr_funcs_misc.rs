//! Scalar functions of [`crate::expr`] with PostgreSQL 15's results and errors:
//! `translate`, `isfinite`, `cbrt`, `degrees`, `radians`, `pi`, `gcd`, `lcm`, `div`,
//! `scale`, `make_date`, `make_time`, `btrim`, `ltrim`, `rtrim`, `like_escape`, `factorial`,
//! `to_number` (strict: a
//! NULL argument gives NULL) and
//! `num_nulls`, `num_nonnulls` (which count NULL arguments). The binder
//! (`sql/bind/func_math.rs`) has typed and coerced the arguments.

use rust_decimal::Decimal;

use crate::error::{Error, Result};
use crate::sql::ScalarFunc;
use crate::types::Value;

/// PostgreSQL's `RADIANS_PER_DEGREE`: `degrees` divides by it, `radians` multiplies.
const RADIANS_PER_DEGREE: f64 = 0.017_453_292_519_943_295;

/// `func` over `vals` when it is one of this module's functions, else `None`.
pub(crate) fn function(func: ScalarFunc, vals: &[Value]) -> Option<Result<Value>> {
    use ScalarFunc as F;
    let counted = |null: bool| {
        let n = vals.iter().filter(|v| v.is_null() == null).count();
        Some(Ok(Value::Int4(n.min(i32::MAX as usize) as i32)))
    };
    match func {
        F::NumNulls => return counted(true),
        F::Overlaps => return Some(Ok(overlaps(vals))),
        F::NumNonNulls => return counted(false),
        F::Translate
        | F::IsFinite
        | F::Cbrt
        | F::Degrees
        | F::Radians
        | F::Pi
        | F::Gcd
        | F::Lcm
        | F::Div
        | F::Scale
        | F::MakeDate
        | F::MakeTime
        | F::MakeTimestamp
        | F::MakeInterval
        | F::MakeTimestampTz
        | F::Btrim
        | F::Ltrim
        | F::Rtrim
        | F::LikeEscape
        | F::Factorial
        | F::ToNumber
        | F::Trig(_)
        | F::MinScale
        | F::TrimScale => {}
        _ => return None,
    }
    if vals.iter().any(Value::is_null) {
        return Some(Ok(Value::Null));
    }
    Some(strict(func, vals))
}

/// One of the strict functions, on arguments known to be non-NULL.
fn strict(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    use ScalarFunc as F;
    match func {
        F::Translate => translate(vals),
        F::IsFinite => Ok(Value::Bool(match vals[0] {
            Value::Date(d) => !crate::date::date_is_infinite(d),
            Value::Timestamp(us) | Value::TimestampTz(us) => !crate::time::is_infinite(us),
            _ => true,
        })),
        F::Cbrt | F::Degrees | F::Radians => float(&vals[0]).map(|x| {
            Value::Float8(match func {
                F::Cbrt => libm_cbrt(x),
                F::Degrees => x / RADIANS_PER_DEGREE,
                _ => x * RADIANS_PER_DEGREE,
            })
        }),
        F::Pi => Ok(Value::Float8(std::f64::consts::PI)),
        F::Gcd | F::Lcm => gcd_lcm(func == F::Gcd, &vals[0], &vals[1]),
        F::Div => div(&vals[0], &vals[1]),
        F::Scale | F::MinScale | F::TrimScale => scales(func, &vals[0]),
        F::Trig(f) => {
            let b = vals.get(1).map(float).transpose()?;
            f.eval(float(&vals[0])?, b).map(Value::Float8)
        }
        F::MakeDate => make_date(int(&vals[0])?, int(&vals[1])?, int(&vals[2])?),
        F::MakeTimestamp => make_timestamp(vals),
        F::MakeInterval => make_interval(vals),
        F::MakeTimestampTz => make_timestamptz(vals),
        F::Btrim | F::Ltrim | F::Rtrim => trim(func, vals),
        F::LikeEscape => like_escape(text(&vals[0])?, text(&vals[1])?),
        F::Factorial => factorial(int(&vals[0])?),
        F::ToNumber => to_number(text(&vals[0])?, text(&vals[1])?),
        _ => make_time(int(&vals[0])?, int(&vals[1])?, float(&vals[2])?),
    }
}

/// `scale`, `min_scale` (the scale without trailing fraction zeros) or `trim_scale` (the
/// number at that scale) of a numeric, narrow or wide; NaN has no scale (NULL) and trims
/// to itself, as in PostgreSQL.
fn scales(func: ScalarFunc, v: &Value) -> Result<Value> {
    use crate::types_wide::WideNumeric;
    let (m, s) = match v {
        Value::WideNumeric(w) if w.is_nan() => {
            return Ok(match func {
                ScalarFunc::TrimScale => v.clone(),
                _ => Value::Null,
            })
        }
        Value::WideNumeric(w) if func == ScalarFunc::Scale => {
            return Ok(Value::Int4(w.scale.min(i32::MAX as u32) as i32))
        }
        Value::WideNumeric(w) => match w.normalized() {
            Ok(d) => (Value::Numeric(d), d.scale()),
            Err((m, s)) => (WideNumeric::value(m, s), s),
        },
        Value::Numeric(d) if func == ScalarFunc::Scale => (v.clone(), d.scale()),
        Value::Numeric(d) => (Value::Numeric(d.normalize()), d.normalize().scale()),
        v => return Err(type_error("scale", v)),
    };
    Ok(match func {
        ScalarFunc::TrimScale => m,
        _ => Value::Int4(s.min(i32::MAX as u32) as i32),
    })
}

/// `to_number(s, fmt)` as PostgreSQL reads a number by a template: each digit position
/// (`9`, `0`) takes one character of `s`, a digit when it is one (a sign just before the
/// first digit is taken with it, leading blanks all go to one position); `.`/`D` takes a point, `,`/`G` a comma, `S`, `MI`, `PL`,
/// `SG` a sign, `PR` angle brackets, any other template character one character of `s`.
/// Characters past the template are ignored; the scale is that of the fraction digits
/// read. Errors: 22P02 when no digit is read, as PostgreSQL's numeric input refuses the
/// blank it is left with.
fn to_number(s: &str, fmt: &str) -> Result<Value> {
    let mut input = s.chars().peekable();
    let (mut digits, mut scale, mut after_point) = (String::new(), 0u32, false);
    let mut negative = false;
    // PR reads the angle brackets around the number, wherever the template writes it.
    if fmt.to_ascii_uppercase().contains("PR") && input.next_if_eq(&'<').is_some() {
        negative = true;
    }
    let f: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    while i < f.len() {
        let two: String = f[i..]
            .iter()
            .take(2)
            .collect::<String>()
            .to_ascii_uppercase();
        if matches!(two.as_str(), "FM" | "MI" | "PL" | "SG" | "PR") {
            i += 2;
            match (two.as_str(), input.peek()) {
                ("FM" | "PR", _) => {}
                (_, Some('-')) => {
                    input.next();
                    negative = true;
                }
                (_, Some('+')) => {
                    input.next();
                }
                _ => {}
            }
            continue;
        }
        let c = f[i];
        i += 1;
        match (c, input.peek().copied()) {
            (_, None) => break,
            ('9' | '0', Some(d)) => {
                let mut d = d;
                if matches!(d, '-' | '+') && digits.is_empty() {
                    negative = d == '-';
                    input.next();
                    match input.peek().copied() {
                        Some(n) => d = n,
                        None => break,
                    }
                }
                input.next();
                if d.is_ascii_digit() {
                    digits.push(d);
                    scale += u32::from(after_point);
                } else if d == ' ' && digits.is_empty() {
                    // Leading blanks all go to one position.
                    while input.next_if_eq(&' ').is_some() {}
                }
            }
            ('.' | 'D' | 'd', Some('.')) => {
                input.next();
                after_point = true;
            }
            ('.' | 'D' | 'd', _) => after_point = true,
            (',' | 'G' | 'g', Some(',')) => {
                input.next();
            }
            (',' | 'G' | 'g', _) => {}
            ('S' | 's', Some(sign @ ('-' | '+'))) => {
                input.next();
                negative = sign == '-';
            }
            ('S' | 's', _) => {}
            _ => {
                input.next();
            }
        }
    }
    if input.peek() == Some(&'>') {
        input.next();
    }
    if digits.is_empty() {
        return Err(Error::InvalidTextRepresentation(
            "invalid input syntax for type numeric: \" \"".into(),
        ));
    }
    let m: num_bigint::BigInt = digits.parse().unwrap_or_default();
    let m = if negative { -m } else { m };
    Ok(crate::types_wide::WideNumeric::value(m, scale))
}

/// The largest n whose n! PostgreSQL's numeric holds (131072 digits before the point).
const FACTORIAL_MAX: i64 = 32177;

/// `factorial(n)`: n! exactly (0! and 1! are 1). Errors: 22003 for a negative n, or one
/// past [`FACTORIAL_MAX`], as PostgreSQL's numeric overflows there.
fn factorial(n: i64) -> Result<Value> {
    if n < 0 {
        return Err(Error::NumericValueOutOfRange(
            "factorial of a negative number is undefined".into(),
        ));
    }
    if n > FACTORIAL_MAX {
        return Err(Error::NumericValueOutOfRange(
            "value overflows numeric format".into(),
        ));
    }
    let mut acc = num_bigint::BigInt::from(1u8);
    for i in 2..=n {
        acc *= i;
    }
    Ok(crate::types_wide::WideNumeric::value(acc, 0))
}

fn type_error(name: &str, v: &Value) -> Error {
    Error::Internal(format!("{name}: unexpected argument {v:?}"))
}

fn float(v: &Value) -> Result<f64> {
    v.as_f64().ok_or_else(|| type_error("float argument", v))
}

fn int(v: &Value) -> Result<i64> {
    v.as_i64().ok_or_else(|| type_error("integer argument", v))
}

/// `translate(s, from, to)` as PostgreSQL: a character's first position in `from` picks
/// its replacement in `to`; past `to`'s end the character is dropped.
fn translate(vals: &[Value]) -> Result<Value> {
    let text = |v: &Value| {
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| type_error("translate", v))
    };
    let (s, from, to) = (text(&vals[0])?, text(&vals[1])?, text(&vals[2])?);
    let to: Vec<char> = to.chars().collect();
    let out: String = s
        .chars()
        .filter_map(|c| match from.chars().position(|f| f == c) {
            Some(i) => to.get(i).copied(),
            None => Some(c),
        })
        .collect();
    Ok(Value::Text(out.into()))
}

fn text(v: &Value) -> Result<&str> {
    v.as_str().ok_or_else(|| type_error("text argument", v))
}

/// `btrim`, `ltrim`, `rtrim` of `vals[0]`: the characters of `vals[1]` (a blank when
/// absent) taken off the ends.
fn trim(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    let s = text(&vals[0])?;
    let set: Vec<char> = match vals.get(1) {
        Some(v) => text(v)?.chars().collect(),
        None => vec![' '],
    };
    let f = |c: char| set.contains(&c);
    Ok(Value::Text(
        match func {
            ScalarFunc::Ltrim => s.trim_start_matches(f),
            ScalarFunc::Rtrim => s.trim_end_matches(f),
            _ => s.trim_matches(f),
        }
        .into(),
    ))
}

/// `like_escape(pattern, esc)`: `pattern` with escape character `esc` rewritten to the
/// backslash escapes LIKE reads (a backslash of its own doubled); an empty `esc`
/// escapes nothing. Errors: 22025 for an `esc` of more than one character.
fn like_escape(pattern: &str, esc: &str) -> Result<Value> {
    let mut esc_chars = esc.chars();
    let esc = esc_chars.next();
    if esc_chars.next().is_some() {
        return Err(Error::InvalidEscapeSequence("invalid escape string".into())
            .with_hint("Escape string must be empty or one character."));
    }
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if Some(c) == esc {
            out.push('\\');
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    Ok(Value::Text(out.into()))
}

/// `gcd`/`lcm` of two values of one type (int4, int8, numeric), non-negative as
/// PostgreSQL's. Errors: 22003 when the result does not fit the type
/// (`gcd(-2147483648, 0)`).
fn gcd_lcm(gcd: bool, a: &Value, b: &Value) -> Result<Value> {
    if let (Value::Numeric(x), Value::Numeric(y)) = (a, b) {
        return numeric_gcd_lcm(gcd, *x, *y).map(Value::Numeric);
    }
    let (x, y) = (i128::from(int(a)?), i128::from(int(b)?));
    let g = euclid(x.unsigned_abs(), y.unsigned_abs());
    let r = if gcd {
        g
    } else if x == 0 || y == 0 {
        0
    } else {
        (x.unsigned_abs() / g) * y.unsigned_abs()
    };
    match a {
        Value::Int8(_) => i64::try_from(r)
            .map(Value::Int8)
            .map_err(|_| Error::NumericValueOutOfRange("bigint out of range".into())),
        _ => i32::try_from(r)
            .map(Value::Int4)
            .map_err(|_| Error::NumericValueOutOfRange("integer out of range".into())),
    }
}

fn euclid(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Numeric `gcd`/`lcm`: the result carries the larger of the two scales, as PostgreSQL's.
fn numeric_gcd_lcm(gcd: bool, x: Decimal, y: Decimal) -> Result<Decimal> {
    let overflow = || Error::NumericValueOutOfRange("value overflows numeric format".into());
    let scale = x.scale().max(y.scale());
    let (mut a, mut b) = (x.abs(), y.abs());
    while !b.is_zero() {
        let r = a.checked_rem(b).ok_or_else(overflow)?;
        (a, b) = (b, r);
    }
    let mut r = if gcd {
        a
    } else if x.is_zero() || y.is_zero() {
        Decimal::ZERO
    } else {
        (x.abs().checked_div(a).ok_or_else(overflow)?)
            .checked_mul(y.abs())
            .ok_or_else(overflow)?
    };
    r.rescale(scale);
    Ok(r)
}

/// `div(a, b)`: the numeric quotient truncated toward zero, scale 0. Errors: 22012 for a
/// zero divisor.
fn div(a: &Value, b: &Value) -> Result<Value> {
    let (Value::Numeric(a), Value::Numeric(b)) = (a, b) else {
        return Err(type_error("div", a));
    };
    if b.is_zero() {
        return Err(Error::DivisionByZero);
    }
    let overflow = || Error::NumericValueOutOfRange("value overflows numeric format".into());
    // a - (a % b) is an exact multiple of b, so the division is exact.
    let rem = a.checked_rem(*b).ok_or_else(overflow)?;
    let q = (*a - rem).checked_div(*b).ok_or_else(overflow)?.trunc();
    Ok(Value::Numeric(if q.is_zero() { Decimal::ZERO } else { q }))
}

/// `make_date(year, month, day)`: a negative year counts BC. Errors: 22008 "date field
/// value out of range" for year 0 or a day the month does not have.
fn make_date(y: i64, m: i64, d: i64) -> Result<Value> {
    make_date_days(y, m, d).map(Value::Date)
}

/// The date of [`make_date`] in days since 1970-01-01.
fn make_date_days(y: i64, m: i64, d: i64) -> Result<i32> {
    let bad = || {
        Error::DatetimeFieldOverflow(format!("date field value out of range: {y}-{m:02}-{d:02}"))
    };
    let astronomical = if y < 0 { y + 1 } else { y };
    if y == 0 || !(1..=12).contains(&m) || d < 1 {
        return Err(bad());
    }
    if d > i64::from(crate::time::days_in_month(astronomical, m as u32)) {
        return Err(bad());
    }
    let days = crate::time::days_from_civil(astronomical, m as u32, d as u32);
    i32::try_from(days)
        .ok()
        .filter(|d| !crate::date::date_is_infinite(*d))
        .ok_or_else(|| {
            Error::DatetimeFieldOverflow(format!("date out of range: {y}-{m:02}-{d:02}"))
        })
}

/// `make_time(hour, min, sec)`, microseconds since midnight (24:00:00 is allowed).
/// Errors: 22008 "time field value out of range".
fn make_time(h: i64, m: i64, sec: f64) -> Result<Value> {
    make_time_us(h, m, sec).map(Value::Time)
}

/// The time of [`make_time`] in microseconds since midnight.
fn make_time_us(h: i64, m: i64, sec: f64) -> Result<i64> {
    const US_PER_DAY: i64 = 86_400_000_000;
    let fields_ok = (0..=24).contains(&h) && (0..=59).contains(&m) && (0.0..=60.0).contains(&sec);
    // Only fields in range are multiplied out, so the product cannot overflow.
    let us = fields_ok
        .then(|| (h * 60 + m) * 60_000_000 + (sec * 1e6).round_ties_even() as i64)
        .filter(|&us| us <= US_PER_DAY);
    let Some(us) = us else {
        let s = if sec.fract() == 0.0 && (0.0..10.0).contains(&sec) {
            format!("0{sec}")
        } else {
            format!("{sec}")
        };
        return Err(Error::DatetimeFieldOverflow(format!(
            "time field value out of range: {h}:{m:02}:{s}"
        )));
    };
    Ok(us)
}

/// `make_timestamp(year, month, mday, hour, min, sec)` in microseconds since the epoch:
/// the date of [`make_date`] plus the time of day of [`make_time`]. Errors: 22008 for a
/// field out of range (a year below 1, as PostgreSQL 15) or a timestamp out of range.
fn make_timestamp(vals: &[Value]) -> Result<Value> {
    let (y, m, d) = (int(&vals[0])?, int(&vals[1])?, int(&vals[2])?);
    if y < 1 {
        return Err(Error::DatetimeFieldOverflow(format!(
            "date field value out of range: {y}-{m:02}-{d:02}"
        )));
    }
    let days = make_date_days(y, m, d)?;
    let tod = make_time_us(int(&vals[3])?, int(&vals[4])?, float(&vals[5])?)?;
    i64::from(days)
        .checked_mul(86_400_000_000)
        .and_then(|us| us.checked_add(tod))
        .filter(|us| !crate::time::is_infinite(*us))
        .map(Value::Timestamp)
        .ok_or_else(|| {
            Error::DatetimeFieldOverflow(format!("timestamp out of range: {y}-{m:02}-{d:02}"))
        })
}

/// `make_timestamptz(y, m, d, h, mi, s [, zone])`: the wall-clock time of
/// `make_timestamp` in the given zone, else the session's (gaps take the offset before,
/// folds the offset after, as PostgreSQL). Errors: make_timestamp's, and 22023 for a zone
/// not recognized.
fn make_timestamptz(vals: &[Value]) -> Result<Value> {
    let local = match make_timestamp(&vals[..6])? {
        Value::Timestamp(t) => t,
        other => return Err(type_error("make_timestamptz", &other)),
    };
    let utc = match vals.get(6) {
        None => crate::tz::current_local_to_utc(local),
        Some(z) => {
            let name = text(z)?;
            let zone = crate::tz::Zone::parse(name).map_err(|_| {
                Error::InvalidParameterValue(format!("time zone \"{name}\" not recognized"))
            })?;
            zone.local_to_utc(local)
        }
    };
    Ok(Value::TimestampTz(utc))
}

/// `make_interval(years, months, weeks, days, hours, mins, secs)` as PostgreSQL 15's:
/// months and days wrap as its C integers do, seconds round half to even to microseconds,
/// and seconds beyond the 64-bit range become its minimum as x86's conversion makes them.
/// Errors: 22008 for infinite or NaN seconds.
fn make_interval(vals: &[Value]) -> Result<Value> {
    let mut f = [0i32; 6];
    for (slot, v) in f.iter_mut().zip(vals) {
        *slot = i32::try_from(int(v)?).unwrap_or_default();
    }
    let secs = float(&vals[6])?;
    if !secs.is_finite() {
        return Err(Error::DatetimeFieldOverflow("interval out of range".into()));
    }
    let us = (secs * 1e6).round_ties_even();
    let us = if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&us) {
        us as i64
    } else {
        i64::MIN
    };
    Ok(Value::Interval(crate::types::Interval {
        months: f[0].wrapping_mul(12).wrapping_add(f[1]),
        days: f[2].wrapping_mul(7).wrapping_add(f[3]),
        micros: i64::from(f[4])
            .wrapping_mul(3_600_000_000)
            .wrapping_add(i64::from(f[5]).wrapping_mul(60_000_000))
            .wrapping_add(us),
    }))
}

/// `(s1, e1) OVERLAPS (s2, e2)` over values of one date/time type, as PostgreSQL's
/// `overlaps_timestamp`: each pair is ordered (a NULL end counts as its start), and the
/// answer is NULL where a NULL end could decide it.
fn overlaps(vals: &[Value]) -> Value {
    let key = |v: &Value| match v {
        Value::Date(d) => Some(i64::from(*d)),
        Value::Timestamp(t) | Value::TimestampTz(t) | Value::Time(t) => Some(*t),
        _ => None,
    };
    // One pair as (start, end or None): NULL when both are NULL.
    let pair = |s: Option<i64>, e: Option<i64>| match (s, e) {
        (None, None) => None,
        (None, Some(e)) | (Some(e), None) => Some((e, None)),
        (Some(s), Some(e)) => Some((s.min(e), Some(s.max(e)))),
    };
    let k: Vec<Option<i64>> = vals.iter().map(key).collect();
    let (Some((s1, e1)), Some((s2, e2))) = (pair(k[0], k[1]), pair(k[2], k[3])) else {
        return Value::Null;
    };
    let answer = match s1.cmp(&s2) {
        std::cmp::Ordering::Greater => match e2 {
            None => None,
            Some(e2) if s1 < e2 => Some(true),
            Some(_) => e1.map(|_| false),
        },
        std::cmp::Ordering::Less => match e1 {
            None => None,
            Some(e1) if s2 < e1 => Some(true),
            Some(_) => e2.map(|_| false),
        },
        std::cmp::Ordering::Equal => (e1.is_some() && e2.is_some()).then_some(true),
    };
    answer.map_or(Value::Null, Value::Bool)
}

/// glibc's `cbrt`, which PostgreSQL's `cbrt` calls: Rust's `f64::cbrt` is correctly
/// rounded and so differs from glibc's in the last digit for some arguments (`cbrt(2.5)`).
/// Linked by glibc's alias `cbrtf64`, as the plain name may bind to the Rust runtime's own
/// `cbrt`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn libm_cbrt(x: f64) -> f64 {
    #[link(name = "m")]
    extern "C" {
        fn cbrtf64(x: f64) -> f64;
    }
    // SAFETY: cbrtf64 is a pure function of one double in the C math library.
    unsafe { cbrtf64(x) }
}

/// Other C libraries: Rust's cube root.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn libm_cbrt(x: f64) -> f64 {
    x.cbrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn call(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
        function(func, vals).expect("a function of this module")
    }

    fn num(s: &str) -> Value {
        Value::Numeric(s.parse().expect("decimal"))
    }

    #[test]
    fn gcd_and_lcm_as_postgresql() {
        use ScalarFunc as F;
        assert_eq!(
            call(F::Gcd, &[Value::Int4(12), Value::Int4(-18)]).unwrap(),
            Value::Int4(6)
        );
        assert_eq!(
            call(F::Lcm, &[Value::Int8(-4), Value::Int8(6)]).unwrap(),
            Value::Int8(12)
        );
        assert_eq!(
            call(F::Gcd, &[num("12.5"), num("7.5")]).unwrap(),
            num("2.5")
        );
        assert_eq!(
            call(F::Lcm, &[num("12.0"), num("8.00")]).unwrap(),
            num("24.00")
        );
        assert!(matches!(
            call(F::Gcd, &[Value::Int4(i32::MIN), Value::Int4(0)]),
            Err(Error::NumericValueOutOfRange(_))
        ));
        assert!(matches!(
            call(F::Lcm, &[Value::Int4(i32::MAX), Value::Int4(i32::MAX - 1)]),
            Err(Error::NumericValueOutOfRange(_))
        ));
    }

    #[test]
    fn div_truncates_and_refuses_zero() {
        use ScalarFunc as F;
        assert_eq!(call(F::Div, &[num("-7.5"), num("2")]).unwrap(), num("-3"));
        assert_eq!(call(F::Div, &[num("-1"), num("2")]).unwrap(), num("0"));
        assert!(matches!(
            call(F::Div, &[num("1"), num("0")]),
            Err(Error::DivisionByZero)
        ));
    }

    #[test]
    fn translate_make_date_and_null_counts() {
        use ScalarFunc as F;
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(
            call(F::Translate, &[t("abcb"), t("ab"), t("x")]).unwrap(),
            t("xc")
        );
        assert_eq!(
            call(
                F::MakeDate,
                &[Value::Int4(1970), Value::Int4(1), Value::Int4(2)]
            )
            .unwrap(),
            Value::Date(1)
        );
        assert!(matches!(
            call(F::MakeDate, &[Value::Int4(2001), Value::Int4(2), Value::Int4(29)]),
            Err(Error::DatetimeFieldOverflow(m)) if m == "date field value out of range: 2001-02-29"
        ));
        assert_eq!(
            call(F::NumNulls, &[Value::Null, Value::Int4(1), Value::Null]).unwrap(),
            Value::Int4(2)
        );
        assert_eq!(call(F::Cbrt, &[Value::Null]).unwrap(), Value::Null);
    }
}
