//! The units of `date_part`, `extract` and `date_trunc` as PostgreSQL 15 reads them: every
//! spelling its tables know (`y`, `yrs`, `mon`, `h`, `min`, `s`, `msec`, `qtr`, `c`, `mil`,
//! `j`, ...; a unit is matched on its first 10 characters, as PostgreSQL's TOKMAXLEN), each
//! to one canonical name, and which units each type has: a unit PostgreSQL knows but the
//! type has not is 0A000 `unit "hour" not supported for type date`, a word that is no unit
//! 22023 `unit "foo" not recognized for type interval`.

use crate::error::{Error, Result};

/// The units of intervals and relative times (PostgreSQL's `deltatktbl`), with their
/// canonical names. `date_trunc` reads only these.
const DELTA_UNITS: &[(&str, &str)] = &[
    ("c", "century"),
    ("cent", "century"),
    ("centuries", "century"),
    ("century", "century"),
    ("d", "day"),
    ("day", "day"),
    ("days", "day"),
    ("dec", "decade"),
    ("decade", "decade"),
    ("decades", "decade"),
    ("decs", "decade"),
    ("h", "hour"),
    ("hour", "hour"),
    ("hours", "hour"),
    ("hr", "hour"),
    ("hrs", "hour"),
    ("m", "minute"),
    ("microsecon", "microseconds"),
    ("mil", "millennium"),
    ("millennia", "millennium"),
    ("millennium", "millennium"),
    ("millisecon", "milliseconds"),
    ("mils", "millennium"),
    ("min", "minute"),
    ("mins", "minute"),
    ("minute", "minute"),
    ("minutes", "minute"),
    ("mon", "month"),
    ("mons", "month"),
    ("month", "month"),
    ("months", "month"),
    ("ms", "milliseconds"),
    ("msec", "milliseconds"),
    ("msecond", "milliseconds"),
    ("mseconds", "milliseconds"),
    ("msecs", "milliseconds"),
    ("qtr", "quarter"),
    ("quarter", "quarter"),
    ("s", "second"),
    ("sec", "second"),
    ("second", "second"),
    ("seconds", "second"),
    ("secs", "second"),
    ("timezone", "timezone"),
    ("timezone_h", "timezone_hour"),
    ("timezone_m", "timezone_minute"),
    ("us", "microseconds"),
    ("usec", "microseconds"),
    ("usecond", "microseconds"),
    ("useconds", "microseconds"),
    ("usecs", "microseconds"),
    ("w", "week"),
    ("week", "week"),
    ("weeks", "week"),
    ("y", "year"),
    ("year", "year"),
    ("years", "year"),
    ("yr", "year"),
    ("yrs", "year"),
];

/// The units only the date/time table has (`dow`, `julian`, ...; PostgreSQL's
/// `datetktbl`), which `date_part` and `extract` read after [`DELTA_UNITS`], and `epoch`.
const SPECIAL_UNITS: &[(&str, &str)] = &[
    ("dow", "dow"),
    ("doy", "doy"),
    ("epoch", "epoch"),
    ("isodow", "isodow"),
    ("isoyear", "isoyear"),
    ("j", "julian"),
    ("jd", "julian"),
    ("julian", "julian"),
    ("mm", "minute"),
    // Reserved words, no units: 0A000 of a timestamp or date, 22023 of the others.
    ("-infinity", RESERVED),
    ("allballs", RESERVED),
    ("infinity", RESERVED),
    ("now", RESERVED),
    ("today", RESERVED),
    ("tomorrow", RESERVED),
    ("yesterday", RESERVED),
];

/// The canonical name of PostgreSQL's reserved date words (`today`, `now`, ...), which
/// no type has as a unit.
const RESERVED: &str = "reserved";

/// The units of a timestamp without time zone.
pub(crate) const TIMESTAMP: &[&str] = &[
    "microseconds",
    "milliseconds",
    "second",
    "minute",
    "hour",
    "day",
    "month",
    "quarter",
    "week",
    "year",
    "decade",
    "century",
    "millennium",
    "julian",
    "isoyear",
    "dow",
    "isodow",
    "doy",
    "epoch",
];

/// The zone units a timestamptz has beyond [`TIMESTAMP`]'s.
pub(crate) const ZONE: &[&str] = &["timezone", "timezone_hour", "timezone_minute"];

/// The units of an interval.
pub(crate) const INTERVAL: &[&str] = &[
    "microseconds",
    "milliseconds",
    "second",
    "minute",
    "hour",
    "day",
    "month",
    "quarter",
    "year",
    "decade",
    "century",
    "millennium",
    "epoch",
];

/// The units of a time of day.
pub(crate) const TIME: &[&str] = &[
    "microseconds",
    "milliseconds",
    "second",
    "minute",
    "hour",
    "epoch",
];

/// The units `extract` reads of a date (no time of day, no zone).
pub(crate) const DATE: &[&str] = &[
    "day",
    "month",
    "quarter",
    "week",
    "year",
    "decade",
    "century",
    "millennium",
    "julian",
    "isoyear",
    "dow",
    "isodow",
    "doy",
    "epoch",
];

/// The units `date_trunc` truncates a timestamp to (an interval: all but `week`).
pub(crate) const TRUNC: &[&str] = &[
    "microseconds",
    "milliseconds",
    "second",
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "quarter",
    "year",
    "decade",
    "century",
    "millennium",
];

/// The canonical name of unit `lower` (lower-cased), read on its first 10 characters;
/// `delta_only` reads only [`DELTA_UNITS`], as `date_trunc` does. `None` for no unit.
fn canonical(lower: &str, delta_only: bool) -> Option<&'static str> {
    let token = match lower.char_indices().nth(10) {
        Some((b, _)) => &lower[..b],
        None => lower,
    };
    let find =
        |table: &[(&str, &'static str)]| table.iter().find(|(t, _)| *t == token).map(|(_, u)| *u);
    find(DELTA_UNITS).or_else(|| {
        if delta_only {
            None
        } else {
            find(SPECIAL_UNITS)
        }
    })
}

/// The canonical name of `date_part`/`extract` unit `raw` (any case), `None` for no unit.
pub(crate) fn canonical_unit(raw: &str) -> Option<&'static str> {
    canonical(&raw.to_lowercase(), false)
}

/// Unit `raw` of a value of type `ty` (PostgreSQL's name, for the message) having units
/// `has` (and `also`): its canonical name. `trunc` reads it as `date_trunc` does. Errors:
/// 0A000 for a unit the type has not, 22023 for a word that is no unit (`epoch` included
/// where the type has no epoch, as PostgreSQL's).
pub(crate) fn unit(
    raw: &str,
    ty: &str,
    has: &[&'static str],
    also: &[&'static str],
    trunc: bool,
) -> Result<&'static str> {
    // The canonical names themselves, as most queries write them, without a search.
    if let Some(u) = has.iter().chain(also).find(|u| **u == raw) {
        return Ok(u);
    }
    let lower = raw.to_lowercase();
    // PostgreSQL refuses a reserved word as not supported of a timestamp or date only.
    let reserved_known = ty.starts_with("timestamp") || ty == "date";
    match canonical(&lower, trunc) {
        Some(u) if has.contains(&u) || also.contains(&u) => Ok(u),
        Some(RESERVED) if !reserved_known => Err(Error::InvalidParameterValue(format!(
            "unit \"{lower}\" not recognized for type {ty}"
        ))),
        Some(u) if u != "epoch" => Err(Error::FeatureNotSupported(format!(
            "unit \"{lower}\" not supported for type {ty}"
        ))),
        _ => Err(Error::InvalidParameterValue(format!(
            "unit \"{lower}\" not recognized for type {ty}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_read_as_postgresql_reads_them() {
        let ts = |raw| unit(raw, "timestamp without time zone", TIMESTAMP, &[], false);
        assert_eq!(ts("Y").unwrap(), "year");
        assert_eq!(ts("m").unwrap(), "minute");
        assert_eq!(ts("mon").unwrap(), "month");
        assert_eq!(ts("MilliSecondsXYZ").unwrap(), "milliseconds");
        assert_eq!(ts("jd").unwrap(), "julian");
        assert!(matches!(ts("timezone"), Err(Error::FeatureNotSupported(_))));
        assert!(matches!(
            ts("fortnight"),
            Err(Error::InvalidParameterValue(_))
        ));
        let iv = |raw| unit(raw, "interval", INTERVAL, &[], false);
        assert_eq!(iv("qtr").unwrap(), "quarter");
        assert!(matches!(iv("dow"), Err(Error::FeatureNotSupported(_))));
        let trunc = |raw| unit(raw, "timestamp without time zone", TRUNC, &[], true);
        assert_eq!(trunc("hrs").unwrap(), "hour");
        assert!(matches!(trunc("dow"), Err(Error::InvalidParameterValue(_))));
        assert!(matches!(
            trunc("epoch"),
            Err(Error::InvalidParameterValue(_))
        ));
        let date = |raw| unit(raw, "date", DATE, &[], false);
        assert!(matches!(date("hour"), Err(Error::FeatureNotSupported(_))));
        assert_eq!(date("epoch").unwrap(), "epoch");
    }
}
