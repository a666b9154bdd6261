//! `date` and `time` (of day): their text forms and arithmetic, as PostgreSQL 15 gives them.
//!
//! A date is `i32` days since 1970-01-01 (PostgreSQL counts from 2000-01-01; the binary
//! wire format converts), `i32::MIN`/`i32::MAX` being `-infinity`/`infinity` as PostgreSQL's
//! DATEVAL_NOBEGIN/DATEVAL_NOEND. A time of day is `i64` microseconds since midnight, from
//! `00:00:00` to `24:00:00` inclusive. Conversions to and from timestamps use the same
//! microseconds since the Unix epoch as [`crate::time`].
//!
//! ```ignore
//! use tcq::date::{parse_date, push_date}; // crate-private: an example of the shapes
//! let d = parse_date("2001-02-03").unwrap();
//! let mut s = String::new();
//! push_date(d, &mut s);
//! assert_eq!(s, "2001-02-03");
//! ```

use crate::error::{Error, Result};
use crate::time::{
    civil_from_days, is_infinite, INFINITY_US, NEG_INFINITY_US, US_PER_DAY, US_PER_HOUR,
    US_PER_MIN, US_PER_SEC,
};
use crate::types::Interval;

/// The date `infinity`.
pub(crate) const DATE_INFINITY: i32 = i32::MAX;
/// The date `-infinity`.
pub(crate) const DATE_NEG_INFINITY: i32 = i32::MIN;

/// The first date PostgreSQL has, 4714-11-24 BC (Julian day 0), in days since 1970.
const FIRST_DAY: i64 = -2_440_588;
/// One past the last, 5874898-01-01 (Julian day 2147483494, PostgreSQL's DATE_END_JULIAN).
const END_DAY: i64 = 2_147_483_494 - 2_440_588;

fn date_out_of_range() -> Error {
    Error::DatetimeFieldOverflow("date out of range".into())
}

/// True for `infinity` and `-infinity`.
pub(crate) fn date_is_infinite(d: i32) -> bool {
    d == DATE_INFINITY || d == DATE_NEG_INFINITY
}

/// Parse a date as PostgreSQL's `date_in` does for ISO input: `2001-02-03`, a timestamp
/// whose time is dropped (`2001-02-03 10:00`), `epoch`, `today`, `infinity`, a Julian day
/// (`J2451545` = 2000-01-01).
/// Errors: 22007 when malformed, 22008 when out of range.
pub(crate) fn parse_date(text: &str) -> Result<i32> {
    if let Some(d) = julian_day(text) {
        return d;
    }
    let us = crate::time::parse_naive_as(text, "date")?;
    timestamp_to_date(us)
}

/// A Julian day alone (`J2451545`, `j0`; blanks around it): its date, or 22008 when out
/// of range; `None` for any other text.
fn julian_day(text: &str) -> Option<Result<i32>> {
    let t = text.trim();
    let digits = t.strip_prefix(['J', 'j'])?;
    if digits.is_empty() || digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let jd: i64 = digits.parse().ok()?;
    let days = jd + FIRST_DAY;
    Some(if days < END_DAY {
        i32::try_from(days).map_err(|_| date_out_of_range())
    } else {
        Err(date_out_of_range())
    })
}

/// The date of a `timestamp` (its wall-clock day); infinities stay infinite.
pub(crate) fn timestamp_to_date(us: i64) -> Result<i32> {
    match us {
        INFINITY_US => Ok(DATE_INFINITY),
        NEG_INFINITY_US => Ok(DATE_NEG_INFINITY),
        _ => i32::try_from(us.div_euclid(US_PER_DAY)).map_err(|_| date_out_of_range()),
    }
}

/// Midnight of date `d` as a `timestamp`, microseconds since the epoch; infinities stay
/// infinite. Errors: 22008 beyond the timestamp range.
pub(crate) fn date_to_timestamp(d: i32) -> Result<i64> {
    match d {
        DATE_INFINITY => Ok(INFINITY_US),
        DATE_NEG_INFINITY => Ok(NEG_INFINITY_US),
        _ => i64::from(d)
            .checked_mul(US_PER_DAY)
            .filter(|t| *t >= crate::time::MIN_TIMESTAMP_US)
            .ok_or_else(|| Error::DatetimeFieldOverflow("date out of range for timestamp".into())),
    }
}

/// Append `d` in ISO form (`2001-02-03`, `0044-03-15 BC`, `infinity`).
pub(crate) fn push_date(d: i32, out: &mut String) {
    use std::fmt::Write;
    match d {
        DATE_INFINITY => out.push_str("infinity"),
        DATE_NEG_INFINITY => out.push_str("-infinity"),
        _ => {
            let (y, m, day) = civil_from_days(i64::from(d));
            let (year, bc) = if y <= 0 { (1 - y, true) } else { (y, false) };
            let _ = write!(out, "{year:04}-{m:02}-{day:02}");
            if bc {
                out.push_str(" BC");
            }
        }
    }
}

/// `d + days` (`date + integer`, `date - integer` with a negated count); infinities stay.
/// Errors: 22008 "date out of range".
pub(crate) fn date_add_days(d: i32, days: i64) -> Result<i32> {
    if date_is_infinite(d) {
        return Ok(d);
    }
    i64::from(d)
        .checked_add(days)
        .filter(|r| (FIRST_DAY..END_DAY).contains(r))
        .map(|r| r as i32)
        .ok_or_else(date_out_of_range)
}

/// `a - b` of two dates in days. Errors: 22008 when either is infinite.
pub(crate) fn date_diff(a: i32, b: i32) -> Result<i32> {
    if date_is_infinite(a) || date_is_infinite(b) {
        return Err(Error::DatetimeFieldOverflow(
            "cannot subtract infinite dates".into(),
        ));
    }
    i32::try_from(i64::from(a) - i64::from(b)).map_err(|_| date_out_of_range())
}

fn bad_time(text: &str) -> Error {
    Error::InvalidDatetimeFormat(format!("invalid input syntax for type time: \"{text}\""))
}

/// Parse a time of day as PostgreSQL's `time_in` does for ISO input: `10:00`, `10:00:05`,
/// `10:00:05.25`, `24:00:00`, or a timestamp whose date is dropped (`2001-02-03 10:00`).
/// A zone suffix is ignored. Errors: 22007 when malformed, 22008 when a field is out of range.
pub(crate) fn parse_time(text: &str) -> Result<i64> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("allballs") {
        return Ok(0);
    }
    // A date first (`2001-02-03 04:05`): read as a timestamp, keep the time of day.
    if matches!(t.bytes().find(|b| !b.is_ascii_digit()), Some(b'-' | b'/')) {
        let us = crate::time::parse_naive_as(text, "time")?;
        if is_infinite(us) {
            return Err(bad_time(text));
        }
        return Ok(us.rem_euclid(US_PER_DAY));
    }
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
        .unwrap_or(t.len());
    let (body, rest) = t.split_at(end);
    let half_day = meridiem(rest, text)?;
    let mut fields = body.splitn(3, ':');
    let mut num = |max: i64| -> Result<Option<i64>> {
        match fields.next() {
            None => Ok(None),
            Some(f) if f.is_empty() || f.len() > 2 || !f.bytes().all(|b| b.is_ascii_digit()) => {
                Err(bad_time(text))
            }
            Some(f) => {
                let v: i64 = f.parse().map_err(|_| bad_time(text))?;
                if v > max {
                    return Err(Error::DatetimeFieldOverflow(format!(
                        "date/time field value out of range: \"{text}\""
                    )));
                }
                Ok(Some(v))
            }
        }
    };
    let mut h = num(24)?.ok_or_else(|| bad_time(text))?;
    let m = num(59)?.ok_or_else(|| bad_time(text))?;
    if let Some(pm) = half_day {
        if h > 12 {
            return Err(Error::DatetimeFieldOverflow(format!(
                "date/time field value out of range: \"{text}\""
            )));
        }
        h = match (h, pm) {
            (12, false) => 0,
            (h, true) if h < 12 => h + 12,
            (h, _) => h,
        };
    }
    let (s, frac) = match fields.next() {
        None => (0, 0),
        Some(sec) => seconds(sec, text)?,
    };
    let us = h * US_PER_HOUR + m * US_PER_MIN + s * US_PER_SEC + frac;
    if us > US_PER_DAY {
        return Err(Error::DatetimeFieldOverflow(format!(
            "date/time field value out of range: \"{text}\""
        )));
    }
    Ok(us)
}

/// What may follow a time of day: `AM`/`PM` (`Some(false)`/`Some(true)`), then a zone
/// (`+02`, `-05:30`, `Z`, `UTC`), which a time without time zone ignores.
/// Errors: 22007 for anything else.
fn meridiem(rest: &str, text: &str) -> Result<Option<bool>> {
    let rest = rest.trim_start().to_ascii_lowercase();
    let (half, zone) = match rest.get(..2) {
        Some("am") => (Some(false), &rest[2..]),
        Some("pm") => (Some(true), &rest[2..]),
        _ => (None, rest.as_str()),
    };
    let zone = zone.trim();
    let numeric = zone
        .strip_prefix(['+', '-'])
        .is_some_and(|z| !z.is_empty() && z.bytes().all(|b| b.is_ascii_digit() || b == b':'));
    if zone.is_empty() || numeric || matches!(zone, "z" | "utc" | "gmt") {
        Ok(half)
    } else {
        Err(bad_time(text))
    }
}

/// Whole seconds and microseconds of `05`, `05.25` (rounded half to even past 6 digits).
fn seconds(sec: &str, text: &str) -> Result<(i64, i64)> {
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    if whole.is_empty()
        || whole.len() > 2
        || !whole
            .bytes()
            .chain(frac.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return Err(bad_time(text));
    }
    let s: i64 = whole.parse().map_err(|_| bad_time(text))?;
    if s > 60 {
        return Err(Error::DatetimeFieldOverflow(format!(
            "date/time field value out of range: \"{text}\""
        )));
    }
    let micros = if frac.is_empty() {
        0
    } else {
        let f: f64 = format!("0.{frac}").parse().map_err(|_| bad_time(text))?;
        (f * 1e6).round_ties_even() as i64
    };
    Ok((s, micros))
}

/// Append a time of day as PostgreSQL prints it: `10:00:05`, fraction only when non-zero.
pub(crate) fn push_time(t: i64, out: &mut String) {
    use std::fmt::Write;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        t / US_PER_HOUR,
        (t % US_PER_HOUR) / US_PER_MIN,
        (t % US_PER_MIN) / US_PER_SEC
    );
    let frac = t % US_PER_SEC;
    if frac != 0 {
        let mut f = format!("{frac:06}");
        while f.ends_with('0') {
            f.pop();
        }
        out.push('.');
        out.push_str(&f);
    }
}

/// `t + sign * iv` as PostgreSQL's `time_pl_interval`: only the interval's time part counts
/// (days and months are dropped) and the result wraps around midnight.
pub(crate) fn time_add_interval(t: i64, iv: &Interval, sign: i64) -> i64 {
    let delta = (iv.micros % US_PER_DAY) * sign;
    (t + delta).rem_euclid(US_PER_DAY)
}

/// The time of day of a `timestamp` (wall clock).
pub(crate) fn timestamp_to_time(us: i64) -> i64 {
    us.rem_euclid(US_PER_DAY)
}

/// `interval::time`: the interval's time part modulo a day (days and months are dropped).
pub(crate) fn interval_to_time(iv: &Interval) -> i64 {
    iv.micros.rem_euclid(US_PER_DAY)
}

/// Units `date_part` and `extract` know for some type, beyond those of a time of day:
/// asked of a time, PostgreSQL says they are not supported rather than not recognized.
const DATE_UNITS: &[&str] = &[
    "year",
    "years",
    "month",
    "months",
    "mon",
    "mons",
    "day",
    "days",
    "dow",
    "isodow",
    "doy",
    "week",
    "weeks",
    "quarter",
    "decade",
    "decades",
    "century",
    "centuries",
    "millennium",
    "millennia",
    "isoyear",
    "julian",
    "timezone",
    "timezone_hour",
    "timezone_minute",
];

/// `date_part(field, t)` of a time of day `t` (microseconds since midnight), `field`
/// lower-cased: `hour` (24 for `24:00:00`), `minute`, `second` (with its fraction),
/// `millisecond` and `microsecond` (of the minute, as PostgreSQL counts them), `epoch`
/// (seconds since midnight). Errors: 0A000 for a date field (`day`), 22023 for a name
/// that is no field.
pub(crate) fn time_part(field: &str, t: i64) -> Result<f64> {
    let in_minute = t % US_PER_MIN;
    Ok(match field {
        "hour" | "hours" | "h" => (t / US_PER_HOUR) as f64,
        "minute" | "minutes" | "m" | "min" | "mins" => ((t % US_PER_HOUR) / US_PER_MIN) as f64,
        // Whole seconds and the fraction apart, as PostgreSQL's float8 results.
        "second" | "seconds" | "s" | "sec" | "secs" => {
            (in_minute / US_PER_SEC) as f64 + (in_minute % US_PER_SEC) as f64 / 1e6
        }
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => {
            (in_minute / US_PER_SEC) as f64 * 1000.0 + (in_minute % US_PER_SEC) as f64 / 1000.0
        }
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" => in_minute as f64,
        "epoch" => t as f64 / US_PER_SEC as f64,
        f if DATE_UNITS.contains(&f) => {
            return Err(Error::FeatureNotSupported(format!(
                "unit \"{f}\" not supported for type time without time zone"
            )))
        }
        f => {
            return Err(Error::InvalidParameterValue(format!(
                "unit \"{f}\" not recognized for type time without time zone"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date_text(s: &str) -> String {
        let mut out = String::new();
        push_date(parse_date(s).unwrap(), &mut out);
        out
    }

    fn time_text(s: &str) -> String {
        let mut out = String::new();
        push_time(parse_time(s).unwrap(), &mut out);
        out
    }

    /// Each expected text is what PostgreSQL 15 prints for the same input.
    #[test]
    fn dates_and_times_read_and_print_as_postgresql() {
        assert_eq!(date_text("2001-02-03"), "2001-02-03");
        assert_eq!(date_text(" 2001-02-03 10:30:00 "), "2001-02-03");
        assert_eq!(date_text("1969-12-31"), "1969-12-31");
        assert_eq!(date_text("0044-03-15 BC"), "0044-03-15 BC");
        assert_eq!(date_text("infinity"), "infinity");
        assert_eq!(date_text("-infinity"), "-infinity");
        assert_eq!(parse_date("epoch").unwrap(), 0);
        assert_eq!(date_text("J2451545"), "2000-01-01");
        assert_eq!(date_text(" j0 "), "4714-11-24 BC");
        assert_eq!(
            parse_date("-0044-03-15")
                .map_err(|e| crate::server::sqlstate(e.kind()))
                .unwrap_err(),
            "22009"
        );
        assert_eq!(
            parse_date("2001-02-30")
                .map_err(|e| crate::server::sqlstate(e.kind()))
                .unwrap_err(),
            "22008"
        );
        assert_eq!(
            parse_date("nope")
                .map_err(|e| crate::server::sqlstate(e.kind()))
                .unwrap_err(),
            "22007"
        );
        assert_eq!(time_text("10:00"), "10:00:00");
        assert_eq!(time_text("10:00:05.250"), "10:00:05.25");
        assert_eq!(time_text("24:00:00"), "24:00:00");
        assert_eq!(time_text("2001-02-03 04:05:06"), "04:05:06");
        assert_eq!(time_text("10:00 PM"), "22:00:00");
        assert_eq!(time_text("12:30 am"), "00:30:00");
        assert_eq!(time_text("10:00:00+02"), "10:00:00");
        assert_eq!(time_text("10:00-05:30"), "10:00:00");
        assert_eq!(time_text("allballs"), "00:00:00");
        assert_eq!(
            parse_time("13:00 PM")
                .map_err(|e| crate::server::sqlstate(e.kind()))
                .unwrap_err(),
            "22008"
        );
        assert_eq!(
            parse_time("10:00 tomorrow")
                .map_err(|e| crate::server::sqlstate(e.kind()))
                .unwrap_err(),
            "22007"
        );
        assert_eq!(
            parse_time("25:00")
                .map_err(|e| crate::server::sqlstate(e.kind()))
                .unwrap_err(),
            "22008"
        );
        assert_eq!(
            parse_time("ab")
                .map_err(|e| crate::server::sqlstate(e.kind()))
                .unwrap_err(),
            "22007"
        );
    }

    #[test]
    fn date_arithmetic_keeps_infinities_and_checks_range() {
        let d = parse_date("2001-01-01").unwrap();
        assert_eq!(
            date_add_days(d, 31).unwrap(),
            parse_date("2001-02-01").unwrap()
        );
        assert_eq!(
            date_diff(d, parse_date("2000-01-01").unwrap()).unwrap(),
            366
        );
        assert_eq!(date_add_days(DATE_INFINITY, -5).unwrap(), DATE_INFINITY);
        assert!(date_diff(DATE_INFINITY, d).is_err());
        assert!(date_add_days(i32::MAX - 1, 5).is_err());
        // PostgreSQL's last date is 5874897-12-31.
        let last = date_add_days(d, 2_145_031_582).unwrap();
        let mut shown = String::new();
        push_date(last, &mut shown);
        assert_eq!(shown, "5874897-12-31");
        assert!(date_add_days(last, 1).is_err());
        assert!(date_add_days(parse_date("4714-11-24 BC").unwrap(), -1).is_err());
        let ten = 10 * US_PER_HOUR;
        let iv = Interval {
            months: 1,
            days: 2,
            micros: 15 * US_PER_HOUR,
        };
        assert_eq!(time_add_interval(ten, &iv, 1), US_PER_HOUR);
        assert_eq!(time_add_interval(ten, &iv, -1), 19 * US_PER_HOUR);
    }
}
