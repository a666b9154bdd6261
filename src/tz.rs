//! Session time zones: `SET TimeZone`, and timestamptz text in the session's zone.
//!
//! Instants stay `i64` microseconds since the Unix epoch everywhere (windows, stream time,
//! the executor): a time zone only changes how a `timestamptz` is read from and written as
//! text, and what the casts between `timestamp` and `timestamptz` and `AT TIME ZONE` mean,
//! as in PostgreSQL. [`Zone::parse`] accepts what PostgreSQL's `TimeZone` setting accepts:
//! IANA names (`America/New_York`, any case), `UTC` and its aliases, POSIX zone strings
//! (`EST5EDT`, `UTC+3`, `<-07>+07`, `+05:30`; POSIX signs are west-positive, so `UTC+3` is
//! three hours *behind* UTC, as in PostgreSQL) and plain numbers, which are hours *east* of
//! UTC (`-7`, `5.5`), PostgreSQL's one exception to the POSIX convention. The time zone
//! database is jiff's bundled copy of IANA's, so results do not depend on the machine.
//!
//! Design decision: the session's zone reaches the text formatting and parsing code through
//! a tokio task-local ([`scope`]) rather than through every signature on the way: values are
//! formatted deep inside the wire encoder, and threading a zone through it would touch every
//! caller for the benefit of one type. Outside a scope (an executor task formatting
//! `timestamptz` as text inside a continuous query) the zone is UTC.
//!
//! Local times that do not exist or exist twice follow PostgreSQL: in a spring-forward gap
//! the offset before the transition applies (02:30 in New York on the day clocks go forward
//! is 07:30 UTC, shown as 03:30-04); in a fall-back fold the offset after it (01:30 on the
//! day clocks go back is 06:30 UTC, 01:30-05).
//!
//! ```ignore
//! use tcq::tz::Zone;
//! let ny = Zone::parse("america/new_york").unwrap();
//! assert_eq!(ny.name(), "America/New_York");
//! // 2001-01-01 00:00:00 UTC is 2000-12-31 19:00:00 in New York (EST, -05).
//! assert_eq!(ny.offset_at(978_307_200_000_000), -5 * 3600);
//! assert_eq!(Zone::parse("UTC+3").unwrap().offset_at(0), -3 * 3600);
//! assert_eq!(Zone::parse("-7").unwrap().offset_at(0), -7 * 3600);
//! ```

use std::future::Future;
use std::sync::Arc;

use jiff::tz::{AmbiguousOffset, TimeZone};

use crate::error::{Error, Result};

/// A session time zone: the setting's display name and the rules.
#[derive(Clone, Debug)]
pub(crate) struct Zone {
    name: String,
    tz: TimeZone,
}

/// The zone a session shares with the code that formats its values.
pub(crate) type ZoneCell = Arc<parking_lot::RwLock<Zone>>;

tokio::task_local! {
    static SESSION_ZONE: ZoneCell;
}

/// jiff's instants span years -9999 to 9999; offsets outside are those at the nearest end.
const JIFF_MIN_US: i64 = -377_705_116_800_000_000;
const JIFF_MAX_US: i64 = 253_402_207_200_000_000;

impl Zone {
    /// UTC, the default.
    pub(crate) fn utc() -> Zone {
        Zone {
            name: "UTC".into(),
            tz: TimeZone::UTC,
        }
    }

    /// Parse a `TimeZone` setting. Errors: 22023 naming the value, as PostgreSQL's
    /// `invalid value for parameter "TimeZone"`.
    pub(crate) fn parse(setting: &str) -> Result<Zone> {
        let s = setting.trim();
        let invalid = || {
            Error::InvalidParameterValue(format!(
                "invalid value for parameter \"TimeZone\": \"{setting}\""
            ))
        };
        if s.is_empty() {
            return Err(invalid());
        }
        // A number is hours east of UTC (ISO sign convention), as PostgreSQL reads it.
        if let Ok(hours) = s.parse::<f64>() {
            return Zone::from_hours_east(hours);
        }
        if let Some(seconds) = bare_offset(s) {
            // POSIX sign convention: '+3' is three hours west of Greenwich.
            let tz =
                TimeZone::fixed(jiff::tz::Offset::from_seconds(-seconds).map_err(|_| invalid())?);
            return Ok(Zone {
                name: s.to_string(),
                tz,
            });
        }
        if let Ok(tz) = TimeZone::get(s) {
            let name = tz.iana_name().unwrap_or(s).to_string();
            return Ok(Zone { name, tz });
        }
        // A POSIX TZ string needs a zone abbreviation and an offset (`EST5EDT`, `UTC+3`).
        if s.chars().any(|c| c.is_ascii_digit()) {
            if let Ok(tz) = TimeZone::posix(s) {
                return Ok(Zone {
                    name: s.to_string(),
                    tz,
                });
            }
        }
        Err(invalid())
    }

    /// Parse a zone given to a function (`timezone(zone, t)`, `AT TIME ZONE`, `date_trunc`'s
    /// third argument): as [`Zone::parse`], except that a bare offset (`+05`, `5`, `-3:30`)
    /// follows the POSIX sign convention (`+05` is five hours west), as PostgreSQL reads a
    /// zone name there; only `SET TIME ZONE` reads a number as hours east.
    /// Errors: those of [`Zone::parse`].
    pub(crate) fn parse_arg(name: &str) -> Result<Zone> {
        let s = name.trim();
        match bare_offset(s) {
            Some(seconds) => {
                let offset = jiff::tz::Offset::from_seconds(-seconds).map_err(|_| {
                    Error::InvalidParameterValue(format!("time zone \"{name}\" not recognized"))
                })?;
                Ok(Zone {
                    name: s.to_string(),
                    tz: TimeZone::fixed(offset),
                })
            }
            None => Zone::parse(name),
        }
    }

    /// The zone for a numeric setting: hours east of UTC (ISO sign convention), shown as
    /// PostgreSQL shows it (`SET TIME ZONE -7` is `<-07>+07`).
    pub(crate) fn from_hours_east(hours: f64) -> Result<Zone> {
        let seconds = (hours * 3600.0).round();
        if !seconds.is_finite() || seconds.abs() > 15.0 * 3600.0 + 59.0 * 60.0 {
            return Err(Error::InvalidParameterValue(format!(
                "invalid value for parameter \"TimeZone\": \"{hours}\""
            )));
        }
        let seconds = seconds as i32;
        let offset = format_offset(seconds);
        let posix = format_offset(-seconds);
        let offset_tz = jiff::tz::Offset::from_seconds(seconds)
            .map_err(|e| Error::InvalidParameterValue(format!("invalid time zone offset: {e}")))?;
        Ok(Zone {
            name: format!("<{offset}>{posix}"),
            tz: TimeZone::fixed(offset_tz),
        })
    }

    /// The setting as SHOW TimeZone and the ParameterStatus message report it.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Seconds east of UTC in effect at instant `us` (Unix microseconds).
    pub(crate) fn offset_at(&self, us: i64) -> i32 {
        let us = us.clamp(JIFF_MIN_US, JIFF_MAX_US);
        match jiff::Timestamp::from_microsecond(us) {
            Ok(ts) => self.tz.to_offset(ts).seconds(),
            Err(_) => 0,
        }
    }

    /// The zone's abbreviation in effect at instant `us` (Unix microseconds), as the time
    /// zone database names it (`EST`, `IST`, `+04`; `UTC` for UTC): what `to_char`'s `TZ`
    /// writes.
    pub(crate) fn abbreviation_at(&self, us: i64) -> String {
        let us = us.clamp(JIFF_MIN_US, JIFF_MAX_US);
        match jiff::Timestamp::from_microsecond(us) {
            Ok(ts) => self.tz.to_offset_info(ts).abbreviation().to_string(),
            Err(_) => String::new(),
        }
    }

    /// The instant of a local wall-clock time, given as microseconds as if it were UTC,
    /// with PostgreSQL's rule for gaps (offset before) and folds (offset after).
    pub(crate) fn local_to_utc(&self, local_us: i64) -> i64 {
        let clamped = local_us.clamp(JIFF_MIN_US, JIFF_MAX_US);
        let Ok(ts) = jiff::Timestamp::from_microsecond(clamped) else {
            return local_us;
        };
        let civil = TimeZone::UTC.to_datetime(ts);
        let offset = match self.tz.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => offset,
            AmbiguousOffset::Gap { before, .. } => before,
            AmbiguousOffset::Fold { after, .. } => after,
        };
        local_us.saturating_sub(offset.seconds() as i64 * 1_000_000)
    }
}

/// `+05:30`, `-04:56:02`: a bare offset with minutes, in seconds as written (POSIX reads it
/// west-positive; the caller flips the sign). Plain numbers never reach here.
fn bare_offset(s: &str) -> Option<i32> {
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => (1, s),
    };
    let mut parts = rest.split(':');
    let mut next = |max: i32| -> Option<Option<i32>> {
        match parts.next() {
            None => Some(None),
            Some(p) if !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()) => {
                let v: i32 = p.parse().ok()?;
                (v <= max).then_some(Some(v))
            }
            Some(_) => None,
        }
    };
    let h = next(15)??;
    let m = next(59)?.unwrap_or(0);
    let sec = next(59)?.unwrap_or(0);
    if parts.next().is_some() {
        return None;
    }
    Some(sign * (h * 3600 + m * 60 + sec))
}

/// An offset as PostgreSQL prints it after a timestamptz: `+00`, `-05`, `+05:30`,
/// `-04:56:02`.
pub(crate) fn format_offset(seconds: i32) -> String {
    let mut out = String::with_capacity(9);
    push_offset(seconds, &mut out);
    out
}

/// Append [`format_offset`] without allocating.
pub(crate) fn push_offset(seconds: i32, out: &mut String) {
    use std::fmt::Write;
    let sign = if seconds < 0 { '-' } else { '+' };
    let a = seconds.unsigned_abs();
    let _ = write!(out, "{sign}{:02}", a / 3600);
    if !a.is_multiple_of(3600) {
        let _ = write!(out, ":{:02}", (a / 60) % 60);
        if !a.is_multiple_of(60) {
            let _ = write!(out, ":{:02}", a % 60);
        }
    }
}

/// Run `f` with `zone` as the session zone of the text formatting and parsing it does.
pub(crate) async fn scope<F: Future>(zone: ZoneCell, f: F) -> F::Output {
    SESSION_ZONE.scope(zone, f).await
}

/// The current session zone's cell (`None` outside a [`scope`]), to carry it to another
/// thread with [`sync_scope`].
pub(crate) fn current_cell() -> Option<ZoneCell> {
    SESSION_ZONE.try_with(Arc::clone).ok()
}

/// Run `f` on this thread with `zone` (from [`current_cell`]) as the session zone; with
/// `None`, in UTC as outside any scope.
pub(crate) fn sync_scope<R>(zone: Option<ZoneCell>, f: impl FnOnce() -> R) -> R {
    match zone {
        Some(zone) => SESSION_ZONE.sync_scope(zone, f),
        None => f(),
    }
}

/// Call `f` with the current session zone (UTC outside a [`scope`]).
pub(crate) fn with_current<R>(f: impl FnOnce(&Zone) -> R) -> R {
    let mut f = Some(f);
    let in_scope = SESSION_ZONE.try_with(|cell| f.take().map(|f| f(&cell.read())));
    match (in_scope, f) {
        (Ok(Some(r)), _) => r,
        (_, Some(f)) => f(&UTC_ZONE),
        (_, None) => unreachable!("f ran inside the scope and returned"),
    }
}

static UTC_ZONE: std::sync::LazyLock<Zone> = std::sync::LazyLock::new(Zone::utc);

/// Seconds east of UTC at `us` in the current session zone.
pub(crate) fn current_offset_at(us: i64) -> i32 {
    with_current(|z| z.offset_at(us))
}

/// [`Zone::abbreviation_at`] in the current session zone.
pub(crate) fn current_abbreviation_at(us: i64) -> String {
    with_current(|z| z.abbreviation_at(us))
}

/// [`Zone::local_to_utc`] in the current session zone.
pub(crate) fn current_local_to_utc(local_us: i64) -> i64 {
    with_current(|z| z.local_to_utc(local_us))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2021-03-14 and 2021-11-07 are New York's DST changes.
    fn us(text: &str) -> i64 {
        crate::time::parse_timestamp_naive(text).unwrap()
    }

    /// What `to_char`'s `TZ` writes, as PostgreSQL 15 (`SET TimeZone`, then
    /// `to_char(ts, 'TZ')`).
    #[test]
    fn abbreviations_follow_the_zone_database() {
        let ny = Zone::parse("America/New_York").unwrap();
        assert_eq!(ny.abbreviation_at(us("2021-01-15 12:00")), "EST");
        assert_eq!(ny.abbreviation_at(us("2021-07-15 12:00")), "EDT");
        let kolkata = Zone::parse("Asia/Kolkata").unwrap();
        assert_eq!(kolkata.abbreviation_at(us("2024-06-15 12:00")), "IST");
        assert_eq!(Zone::utc().abbreviation_at(0), "UTC");
    }

    #[test]
    fn gaps_and_folds_follow_postgres() {
        let ny = Zone::parse("America/New_York").unwrap();
        assert_eq!(
            ny.local_to_utc(us("2021-03-14 02:30")),
            us("2021-03-14 07:30")
        );
        assert_eq!(
            ny.local_to_utc(us("2021-11-07 01:30")),
            us("2021-11-07 06:30")
        );
        assert_eq!(
            ny.local_to_utc(us("2021-07-01 12:00")),
            us("2021-07-01 16:00")
        );
        assert_eq!(ny.offset_at(us("2021-03-14 06:59:59")), -5 * 3600);
        assert_eq!(ny.offset_at(us("2021-03-14 07:00")), -4 * 3600);
    }

    #[test]
    fn settings_postgres_accepts() {
        assert_eq!(Zone::parse("utc").unwrap().offset_at(0), 0);
        assert_eq!(Zone::parse("+3").unwrap().offset_at(0), 3 * 3600);
        assert_eq!(Zone::parse("+3").unwrap().name(), "<+03>-03");
        assert_eq!(Zone::parse("+03:00").unwrap().offset_at(0), -3 * 3600);
        assert_eq!(Zone::parse("-05:30").unwrap().offset_at(0), 5 * 3600 + 1800);
        assert_eq!(Zone::parse("EST5EDT").unwrap().offset_at(0), -5 * 3600);
        let z = Zone::from_hours_east(-7.0).unwrap();
        assert_eq!((z.name(), z.offset_at(0)), ("<-07>+07", -7 * 3600));
        assert_eq!(Zone::parse("<-07>+07").unwrap().offset_at(0), -7 * 3600);
        assert!(matches!(
            Zone::parse("Mars/Olympus"),
            Err(Error::InvalidParameterValue(_))
        ));
        // A function's zone argument reads a bare offset as POSIX (west), as PostgreSQL.
        assert_eq!(Zone::parse_arg("+05").unwrap().offset_at(0), -5 * 3600);
        assert_eq!(Zone::parse_arg("5").unwrap().offset_at(0), -5 * 3600);
        assert_eq!(
            Zone::parse_arg("-3:30").unwrap().offset_at(0),
            3 * 3600 + 1800
        );
        assert_eq!(Zone::parse_arg("UTC+3").unwrap().offset_at(0), -3 * 3600);
        assert!(Zone::parse_arg("Mars/Olympus").is_err());
        assert_eq!(format_offset(0), "+00");
        assert_eq!(format_offset(19800), "+05:30");
        assert_eq!(format_offset(-17762), "-04:56:02");
        // Far outside jiff's range, the offset at the nearest end applies.
        assert_eq!(
            Zone::parse("Asia/Kolkata").unwrap().offset_at(i64::MAX),
            19800
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::tz::Zone;
        let ny = Zone::parse("america/new_york").unwrap();
        assert_eq!(ny.name(), "America/New_York");
        // 2001-01-01 00:00:00 UTC is 2000-12-31 19:00:00 in New York (EST, -05).
        assert_eq!(ny.offset_at(978_307_200_000_000), -5 * 3600);
        assert_eq!(Zone::parse("UTC+3").unwrap().offset_at(0), -3 * 3600);
        assert_eq!(Zone::parse("-7").unwrap().offset_at(0), -7 * 3600);
    }
}
