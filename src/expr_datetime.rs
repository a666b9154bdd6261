//! Date and time functions of [`crate::expr`] with PostgreSQL 15's arithmetic: `age`
//! (the symbolic difference in years, months and days), `date_bin` and the `justify_*`
//! family. Timestamps are microseconds since the epoch; a `timestamptz` is read on the
//! session zone's wall clock, as PostgreSQL reads it.

use crate::error::{Error, Result};
use crate::time::{self, US_PER_DAY, US_PER_SEC};
use crate::types::{Interval, Value};

/// The wall time of `v` (a timestamp, or a timestamptz in the session's zone).
fn wall(v: &Value) -> Result<i64> {
    match v {
        Value::Timestamp(t) => Ok(*t),
        Value::TimestampTz(t) => {
            Ok(t.saturating_add(crate::tz::current_offset_at(*t) as i64 * US_PER_SEC))
        }
        other => Err(Error::Internal(format!(
            "a date/time function of a {other:?}: the binder types its arguments"
        ))),
    }
}

fn interval_overflow() -> Error {
    Error::DatetimeFieldOverflow("interval out of range".into())
}

/// `age(a, b)`: PostgreSQL's `timestamp_age`, field by field with borrows, a day borrowed
/// from a month being that month's length.
pub(crate) fn age(a: &Value, b: &Value) -> Result<Value> {
    let (dt1, dt2) = (wall(a)?, wall(b)?);
    let (t1, t2) = (time::wall_fields(dt1), time::wall_fields(dt2));
    let flip = dt1 < dt2;
    let sign = if flip { -1 } else { 1 };
    let mut usec = sign * (t1.micros - t2.micros);
    let mut sec = sign * (t1.second - t2.second);
    let mut min = sign * (t1.minute - t2.minute);
    let mut hour = sign * (t1.hour - t2.hour);
    let mut mday = sign * (t1.day - t2.day);
    let mut mon = sign * (t1.month - t2.month);
    let mut year = sign * (t1.year - t2.year);
    while usec < 0 {
        usec += US_PER_SEC;
        sec -= 1;
    }
    while sec < 0 {
        sec += 60;
        min -= 1;
    }
    while min < 0 {
        min += 60;
        hour -= 1;
    }
    while hour < 0 {
        hour += 24;
        mday -= 1;
    }
    while mday < 0 {
        let (y, m) = if flip {
            (t1.year, t1.month)
        } else {
            (t2.year, t2.month)
        };
        mday += i64::from(time::days_in_month(y, m as u32));
        mon -= 1;
    }
    while mon < 0 {
        mon += 12;
        year -= 1;
    }
    let months = sign * (year * 12 + mon);
    let micros = sign * (((hour * 60 + min) * 60 + sec) * US_PER_SEC + usec);
    Ok(Value::Interval(Interval {
        months: i32::try_from(months).map_err(|_| interval_overflow())?,
        days: i32::try_from(sign * mday).map_err(|_| interval_overflow())?,
        micros,
    }))
}

/// `date_bin(stride, source, origin)`: the start of the bin holding `source`. Errors:
/// 0A000 for a stride with months (PostgreSQL's message), 22023 for one not positive.
pub(crate) fn date_bin(stride: &Interval, source: &Value, origin: &Value) -> Result<Value> {
    if stride.months != 0 {
        return Err(Error::FeatureNotSupported(
            "timestamps cannot be binned into intervals containing months or years".into(),
        ));
    }
    let stride_us = i128::from(stride.days) * i128::from(US_PER_DAY) + i128::from(stride.micros);
    if stride_us <= 0 {
        return Err(Error::InvalidParameterValue(
            "stride must be greater than zero".into(),
        ));
    }
    let (s, o) = match (source, origin) {
        (Value::Timestamp(s), Value::Timestamp(o))
        | (Value::TimestampTz(s), Value::TimestampTz(o)) => (i128::from(*s), i128::from(*o)),
        _ => {
            return Err(Error::Internal(
                "date_bin of mixed types: the binder coerces".into(),
            ))
        }
    };
    let binned = s - (s - o).rem_euclid(stride_us);
    let out = i64::try_from(binned)
        .map_err(|_| Error::DatetimeFieldOverflow("timestamp out of range".into()))?;
    Ok(match source {
        Value::Timestamp(_) => Value::Timestamp(out),
        _ => Value::TimestampTz(out),
    })
}

/// `justify_hours`: whole days of the time part carried into days, signs made to agree.
pub(crate) fn justify_hours(iv: Interval) -> Result<Interval> {
    let mut out = iv;
    let whole = out.micros / US_PER_DAY;
    out.micros -= whole * US_PER_DAY;
    out.days = i32::try_from(i64::from(out.days) + whole).map_err(|_| interval_overflow())?;
    days_and_time_agree(&mut out);
    Ok(out)
}

/// `justify_days`: whole 30-day periods carried into months, signs made to agree.
pub(crate) fn justify_days(iv: Interval) -> Result<Interval> {
    let mut out = iv;
    let whole = out.days / 30;
    out.days -= whole * 30;
    out.months = out
        .months
        .checked_add(whole)
        .ok_or_else(interval_overflow)?;
    if out.months > 0 && out.days < 0 {
        out.days += 30;
        out.months -= 1;
    } else if out.months < 0 && out.days > 0 {
        out.days -= 30;
        out.months += 1;
    }
    Ok(out)
}

/// Make the time part's sign agree with the days' by moving one day (PostgreSQL's last
/// step of `justify_hours` and `justify_interval`).
fn days_and_time_agree(out: &mut Interval) {
    if out.days > 0 && out.micros < 0 {
        out.micros += US_PER_DAY;
        out.days -= 1;
    } else if out.days < 0 && out.micros > 0 {
        out.micros -= US_PER_DAY;
        out.days += 1;
    }
}

/// `justify_interval`: days from the time part, months from the days, then every sign
/// made to agree (PostgreSQL's order of steps).
pub(crate) fn justify_interval(iv: Interval) -> Result<Interval> {
    let mut out = iv;
    let whole = out.micros / US_PER_DAY;
    out.micros -= whole * US_PER_DAY;
    let days = i64::from(out.days) + whole;
    let months = days / 30;
    out.days = (days - months * 30) as i32;
    out.months = i32::try_from(i64::from(out.months) + months).map_err(|_| interval_overflow())?;
    if out.months > 0 && (out.days < 0 || (out.days == 0 && out.micros < 0)) {
        out.days += 30;
        out.months -= 1;
    } else if out.months < 0 && (out.days > 0 || (out.days == 0 && out.micros > 0)) {
        out.days -= 30;
        out.months += 1;
    }
    days_and_time_agree(&mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Value {
        Value::Timestamp(time::parse_timestamp_naive(s).unwrap())
    }

    fn text(v: Value) -> String {
        v.to_text().unwrap_or_default()
    }

    /// Expected texts are PostgreSQL 15's for the same calls.
    #[test]
    fn age_borrows_as_postgresql() {
        for (a, b, pg) in [
            ("2001-01-01 10:00:00", "2000-01-01", "1 year 10:00:00"),
            (
                "2000-02-29 23:59:59",
                "2000-01-01",
                "1 mon 28 days 23:59:59",
            ),
            ("1999-12-31", "2000-01-01", "-1 days"),
            (
                "2024-06-15 12:34:56.789",
                "2000-01-01",
                "24 years 5 mons 14 days 12:34:56.789",
            ),
            ("2000-01-01", "2001-03-31", "-1 years -2 mons -30 days"),
        ] {
            assert_eq!(text(age(&ts(a), &ts(b)).unwrap()), pg, "age({a}, {b})");
        }
    }

    #[test]
    fn date_bin_floors_to_the_origin_grid() {
        let stride = Interval {
            months: 0,
            days: 0,
            micros: 15 * 60 * US_PER_SEC,
        };
        let got = date_bin(&stride, &ts("2000-02-29 23:59:59"), &ts("2000-01-01")).unwrap();
        assert_eq!(text(got), "2000-02-29 23:45:00");
        let got = date_bin(&stride, &ts("1999-12-31 23:59:00"), &ts("2000-01-01")).unwrap();
        assert_eq!(text(got), "1999-12-31 23:45:00");
        let month = Interval {
            months: 1,
            days: 0,
            micros: 0,
        };
        assert!(date_bin(&month, &ts("2000-01-01"), &ts("2000-01-01")).is_err());
    }

    #[test]
    fn justify_carries_like_postgresql() {
        let iv = |months, days, micros| Interval {
            months,
            days,
            micros,
        };
        let h = US_PER_DAY / 24;
        assert_eq!(justify_hours(iv(0, 0, 27 * h)).unwrap(), iv(0, 1, 3 * h));
        assert_eq!(justify_hours(iv(0, 1, -h)).unwrap(), iv(0, 0, 23 * h));
        assert_eq!(justify_days(iv(0, 35, 0)).unwrap(), iv(1, 5, 0));
        assert_eq!(justify_days(iv(1, -5, 0)).unwrap(), iv(0, 25, 0));
        assert_eq!(justify_interval(iv(1, -1, -h)).unwrap(), iv(0, 28, 23 * h));
    }
}
