//! Timestamps and intervals: PostgreSQL's text input and output, on `i64` microseconds.
//!
//! Every instant in tcq is an `i64` count of microseconds since 1970-01-01 00:00:00 UTC
//! (PostgreSQL's resolution); an [`Interval`] keeps months, days and microseconds apart, as
//! PostgreSQL does. This module turns PostgreSQL's input syntax into those numbers and back:
//! - [`parse_timestamp`] / [`parse_timestamp_naive`]: `'2001-01-01 00:05:00.5'`, ISO `T`,
//!   zone suffixes (`Z`, `UTC`, `+02`, `-05:30`), `BC`, and the special values `epoch`,
//!   `now`, `today`, `yesterday`, `tomorrow`;
//! - [`format_timestamp`] / [`push_timestamptz`]: PostgreSQL's ISO output, fractional
//!   seconds only when non-zero and trimmed;
//! - [`parse_interval`] / [`format_interval`]: PostgreSQL's verbose syntax (`'1 hour 30
//!   minutes'`, `'@ 2 days ago'`, abbreviations), clock syntax (`'00:05:00'`,
//!   `'1 day 02:00:00'`) and ISO 8601 (`'PT5M'`), printed in the default `postgres` style;
//! - [`fixed_length_us`]: an interval's length when it has one (window RANGE/SLIDE).
//!
//! Design decision: calendar arithmetic is done here with integer day counts (Howard
//! Hinnant's civil-date algorithms) rather than with chrono's date types, because
//! PostgreSQL's timestamp range (4714 BC to 294276 AD) is wider than chrono's, and the range
//! checks must report PostgreSQL's errors exactly. chrono supplies only the wall clock.
//!
//! ```ignore
//! use tcq::time::{parse_timestamp, format_timestamp, parse_interval, format_interval};
//! let t = parse_timestamp("2001-01-01 00:05:00").unwrap();
//! assert_eq!(t, 978_307_500_000_000);
//! assert_eq!(format_timestamp(t), "2001-01-01 00:05:00");
//! let i = parse_interval("1 hour 30 minutes").unwrap();
//! assert_eq!(format_interval(&i), "01:30:00");
//! ```

use crate::error::{Error, Result};
use crate::types::Interval;

/// Microseconds per second.
pub(crate) const US_PER_SEC: i64 = 1_000_000;
/// Microseconds per minute.
pub(crate) const US_PER_MIN: i64 = 60 * US_PER_SEC;
/// Microseconds per hour.
pub(crate) const US_PER_HOUR: i64 = 60 * US_PER_MIN;
/// Microseconds per day (24 hours: instants are UTC; zones only change text, see `tz`).
pub(crate) const US_PER_DAY: i64 = 24 * US_PER_HOUR;

/// The earliest timestamp PostgreSQL accepts: 4714-11-24 00:00:00 BC, Unix microseconds.
pub(crate) const MIN_TIMESTAMP_US: i64 = -210_866_803_200_000_000;
/// One past the latest timestamp tcq accepts (exclusive): `i64::MAX` Unix microseconds,
/// 294247-01-10 04:00:54.775807 UTC. PostgreSQL counts from 2000 and so reaches 294276 AD;
/// counting from 1970 in an `i64` stops 30 years earlier, and such timestamps are refused
/// with PostgreSQL's out-of-range error.
pub(crate) const END_TIMESTAMP_US: i64 = i64::MAX;
/// The timestamp `infinity`, later than every other (PostgreSQL's DT_NOEND, `i64::MAX`).
pub(crate) const INFINITY_US: i64 = i64::MAX;
/// The timestamp `-infinity`, earlier than every other (PostgreSQL's DT_NOBEGIN).
pub(crate) const NEG_INFINITY_US: i64 = i64::MIN;

/// True for `infinity` and `-infinity`, which arithmetic leaves unchanged.
pub(crate) fn is_infinite(us: i64) -> bool {
    us == INFINITY_US || us == NEG_INFINITY_US
}

/// `infinity`/`-infinity` as PostgreSQL prints them; false (nothing written) when finite.
pub(crate) fn push_infinity(us: i64, out: &mut String) -> bool {
    match us {
        INFINITY_US => out.push_str("infinity"),
        NEG_INFINITY_US => out.push_str("-infinity"),
        _ => return false,
    }
    true
}

/// Days since 1970-01-01 of the proleptic Gregorian date `y-m-d` (`y` astronomical: 0 is
/// 1 BC).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Broken-down wall time: year (astronomical), month 1-12, day, hour, minute, second and
/// microsecond of the second.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WallFields {
    pub(crate) year: i64,
    pub(crate) month: i64,
    pub(crate) day: i64,
    pub(crate) hour: i64,
    pub(crate) minute: i64,
    pub(crate) second: i64,
    pub(crate) micros: i64,
}

impl WallFields {
    /// The fields of a date (`year`, `month`, `day`) and `t` microseconds into its day
    /// (an interval's may pass 24 hours: its hours are then not taken modulo a day).
    pub(crate) fn of(year: i64, month: i64, day: i64, t: i64) -> WallFields {
        WallFields {
            year,
            month,
            day,
            hour: t / US_PER_HOUR,
            minute: t / US_PER_MIN % 60,
            second: t / US_PER_SEC % 60,
            micros: t % US_PER_SEC,
        }
    }
}

/// The wall-clock fields of `us` microseconds since the epoch.
pub(crate) fn wall_fields(us: i64) -> WallFields {
    let (year, month, day) = civil_from_days(us.div_euclid(US_PER_DAY));
    WallFields::of(
        year,
        i64::from(month),
        i64::from(day),
        us.rem_euclid(US_PER_DAY),
    )
}

/// The proleptic Gregorian date `(year, month, day)` of a day count since 1970-01-01; the
/// year is astronomical (0 is 1 BC).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub(crate) fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

pub(crate) fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

fn bad_timestamp(text: &str, ty: &str) -> Error {
    Error::InvalidDatetimeFormat(format!("invalid input syntax for type {ty}: \"{text}\""))
}

fn overflow(text: &str) -> Error {
    Error::DatetimeFieldOverflow(format!("date/time field value out of range: \"{text}\""))
}

/// The wall clock, microseconds since the epoch.
pub(crate) fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// A small cursor over the bytes of a date/time string.
struct Scan<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    fn new(s: &'a str) -> Self {
        Scan {
            s: s.as_bytes(),
            i: 0,
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn skip_spaces(&mut self) -> bool {
        let start = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
        self.i > start
    }
    /// Digits as a number and the count of digits; `None` when there are none.
    fn digits(&mut self) -> Option<(i64, usize)> {
        let start = self.i;
        let mut v: i64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            v = v.saturating_mul(10).saturating_add((c - b'0') as i64);
            self.i += 1;
        }
        (self.i > start).then_some((v, self.i - start))
    }
    fn rest(&self) -> &'a [u8] {
        &self.s[self.i..]
    }
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }
}

/// A fraction's digits (after the point) as microseconds, rounded as PostgreSQL's
/// `ParseFractionalSecond` rounds them: `rint(strtod("0.<digits>") * 1e6)`, half to even
/// on the double (`.0000025` is 2, `.0000035` is 4); may return 1_000_000 when rounding
/// carries.
fn fraction_us(sc: &mut Scan) -> i64 {
    let start = sc.i;
    let mut us: i64 = 0;
    let mut n = 0;
    while let Some(c @ b'0'..=b'9') = sc.peek() {
        if n < 6 {
            us = us * 10 + (c - b'0') as i64;
        }
        n += 1;
        sc.i += 1;
    }
    if n <= 6 {
        return us * 10i64.pow(6 - n as u32);
    }
    // More than microseconds: PostgreSQL's arithmetic on a double.
    let digits = std::str::from_utf8(&sc.s[start..sc.i]).unwrap_or("0");
    let frac: f64 = format!("0.{digits}").parse().unwrap_or(0.0);
    (frac * 1e6).round_ties_even() as i64
}

/// Parsed pieces of a timestamp, before range checks.
struct Parts {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    micros: i64,
    /// Zone offset east of UTC, seconds.
    offset_s: Option<i64>,
    /// A zone written by name (`Europe/Paris`), whose offset depends on the local time.
    zone: Option<crate::tz::Zone>,
}

/// Time zone abbreviations a timestamp may end with, and their offsets east of UTC in
/// seconds: the common ones of PostgreSQL's default abbreviation set (`timezone_abbreviations
/// = 'Default'`), where a daylight-saving abbreviation (`PDT`) names its own fixed offset.
const ZONE_ABBREVIATIONS: &[(&str, i64)] = &[
    ("utc", 0),
    ("ut", 0),
    ("uct", 0),
    ("gmt", 0),
    ("z", 0),
    ("zulu", 0),
    ("wet", 0),
    ("west", 3600),
    ("bst", 3600),
    ("cet", 3600),
    ("met", 3600),
    ("cest", 7200),
    ("mest", 7200),
    ("eet", 7200),
    ("eest", 10800),
    ("sast", 7200),
    ("ist", 7200),
    ("eat", 10800),
    ("pkt", 18000),
    ("ict", 25200),
    ("hkt", 28800),
    ("sgt", 28800),
    ("awst", 28800),
    ("jst", 32400),
    ("kst", 32400),
    ("acst", 34200),
    ("aest", 36000),
    ("aedt", 39600),
    ("nzst", 43200),
    ("nzdt", 46800),
    ("ast", -14400),
    ("adt", -10800),
    ("est", -18000),
    ("edt", -14400),
    ("cst", -21600),
    ("cdt", -18000),
    ("mst", -25200),
    ("mdt", -21600),
    ("pst", -28800),
    ("pdt", -25200),
    ("akst", -32400),
    ("akdt", -28800),
    ("hst", -36000),
    ("nst", -12600),
    ("ndt", -9000),
    ("brt", -10800),
];

fn special_timestamp(lower: &str) -> Option<Result<i64>> {
    let today = || now_us().div_euclid(US_PER_DAY) * US_PER_DAY;
    match lower {
        "epoch" => Some(Ok(0)),
        "now" => Some(Ok(now_us())),
        "today" => Some(Ok(today())),
        "yesterday" => Some(Ok(today() - US_PER_DAY)),
        "tomorrow" => Some(Ok(today() + US_PER_DAY)),
        "infinity" => Some(Ok(INFINITY_US)),
        "-infinity" => Some(Ok(NEG_INFINITY_US)),
        _ => None,
    }
}

fn parse_parts(text: &str, ty: &str) -> Result<Parts> {
    let bad = || bad_timestamp(text, ty);
    let mut sc = Scan::new(text.trim());
    let Some((year, ylen)) = sc.digits() else {
        return loose_parts(text, ty, &mut sc);
    };
    let sep = sc.peek();
    if ylen <= 2 || sep == Some(b'.') {
        return loose_parts(text, ty, &mut sc);
    }
    if year == 0 {
        return Err(overflow(text));
    }
    let (month, day);
    if sep == Some(b'-') || sep == Some(b'/') {
        sc.i += 1;
        match sc.digits() {
            Some((m, _)) if sc.peek() == sep => month = m,
            _ => return loose_parts(text, ty, &mut sc),
        }
        sc.i += 1;
        day = sc.digits().ok_or_else(bad)?.0;
    } else if ylen == 8 {
        // YYYYMMDD
        month = (year / 100) % 100;
        day = year % 100;
        return parse_rest(text, ty, &mut sc, year / 10_000, month, day);
    } else {
        return loose_parts(text, ty, &mut sc);
    }
    parse_rest(text, ty, &mut sc, year, month, day)
}

/// Month names and their abbreviations, as PostgreSQL's date input reads them.
const MONTH_NAMES: &[(&str, i64)] = &[
    ("jan", 1),
    ("january", 1),
    ("feb", 2),
    ("february", 2),
    ("mar", 3),
    ("march", 3),
    ("apr", 4),
    ("april", 4),
    ("may", 5),
    ("jun", 6),
    ("june", 6),
    ("jul", 7),
    ("july", 7),
    ("aug", 8),
    ("august", 8),
    ("sep", 9),
    ("sept", 9),
    ("september", 9),
    ("oct", 10),
    ("october", 10),
    ("nov", 11),
    ("november", 11),
    ("dec", 12),
    ("december", 12),
];

/// Day names, which a date may carry and PostgreSQL ignores.
const DAY_NAMES: &[&str] = &[
    "sun",
    "sunday",
    "mon",
    "monday",
    "tue",
    "tues",
    "tuesday",
    "wed",
    "wednesday",
    "thu",
    "thur",
    "thurs",
    "thursday",
    "fri",
    "friday",
    "sat",
    "saturday",
];

/// The date of a timestamp written other than `YYYY-MM-DD` (off the common path), as
/// PostgreSQL reads it under `DateStyle = 'ISO, MDY'`: three numbers separated by `-`, `/`
/// or `.` are month, day, year (`01/02/2024`, `1.2.24`) unless the first has more than two
/// digits (`2024.01.02` is year, month, day); with a month name the numbers are day and
/// year (`Jan 2 2024`, `2 Jan 2024`, `January 2, 2024`, `02-Jan-2024`), a number of more
/// than two digits being the year. A day name is ignored (`Tue Jan 02 2024`); a year of
/// two digits is 1970-2069. The time, zone and era follow as after an ISO date. Errors:
/// 22007 for other forms; 22008 for a month or day out of range (with PostgreSQL's hint
/// about DateStyle when a month above 12 or a day above 31 suggests another field order).
fn loose_parts(text: &str, ty: &str, sc: &mut Scan) -> Result<Parts> {
    let bad = || bad_timestamp(text, ty);
    sc.i = 0;
    let mut nums: Vec<(i64, usize)> = Vec::with_capacity(3);
    let mut month_name: Option<i64> = None;
    let mut first = true;
    // The one of `-`, `/`, `.` the fields are joined by: two of them are no date.
    let mut joiner: Option<u8> = None;
    while nums.len() + usize::from(month_name.is_some()) < 3 {
        let at = sc.i;
        while let Some(c @ (b' ' | b'\t' | b',' | b'-' | b'/' | b'.')) = sc.peek() {
            if matches!(c, b'-' | b'/' | b'.') && joiner.replace(c).is_some_and(|j| j != c) {
                return Err(bad());
            }
            sc.i += 1;
        }
        if sc.i == at && !first {
            return Err(bad());
        }
        first = false;
        if let Some(n) = sc.digits() {
            if sc.peek() == Some(b':') {
                return Err(bad());
            }
            nums.push(n);
            continue;
        }
        let start = sc.i;
        while sc.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            sc.i += 1;
        }
        let word = std::str::from_utf8(&sc.s[start..sc.i])
            .map_err(|_| bad())?
            .to_ascii_lowercase();
        if let Some((_, m)) = MONTH_NAMES.iter().find(|(n, _)| *n == word) {
            if month_name.replace(*m).is_some() {
                return Err(bad());
            }
        } else if !DAY_NAMES.contains(&word.as_str()) {
            return Err(bad());
        }
    }
    let ((year, ylen), month, day) = match month_name {
        Some(m) if nums[0].1 > 2 => (nums[0], m, nums[1].0),
        Some(m) => (nums[1], m, nums[0].0),
        None if nums[0].1 > 2 => (nums[0], nums[1].0, nums[2].0),
        None => (nums[2], nums[0].0, nums[1].0),
    };
    let year = match year {
        y if ylen > 2 => y,
        y if y < 70 => y + 2000,
        y => y + 1900,
    };
    if month > 12 || day > 31 {
        return Err(overflow(text).with_hint("Perhaps you need a different \"datestyle\" setting."));
    }
    if year == 0 || month == 0 || day == 0 {
        return Err(overflow(text));
    }
    sc.eat(b',');
    parse_rest(text, ty, sc, year, month, day)
}

fn parse_rest(
    text: &str,
    ty: &str,
    sc: &mut Scan,
    year: i64,
    month: i64,
    day: i64,
) -> Result<Parts> {
    let bad = || bad_timestamp(text, ty);
    let mut p = Parts {
        year,
        month,
        day,
        hour: 0,
        minute: 0,
        second: 0,
        micros: 0,
        offset_s: None,
        zone: None,
    };
    let had_space = sc.skip_spaces();
    let had_t = !had_space && (sc.eat(b'T') || sc.eat(b't'));
    if had_space || had_t {
        if let Some((h, _)) = sc.digits() {
            p.hour = h;
            if !sc.eat(b':') {
                return Err(bad());
            }
            p.minute = sc.digits().ok_or_else(bad)?.0;
            if sc.eat(b':') {
                p.second = sc.digits().ok_or_else(bad)?.0;
                if sc.eat(b'.') {
                    p.micros = fraction_us(sc);
                }
            }
        } else if had_t {
            return Err(bad());
        }
    }
    sc.skip_spaces();
    parse_zone_and_era(text, ty, sc, &mut p)?;
    if !sc.done() {
        return Err(bad());
    }
    Ok(p)
}

fn parse_zone_and_era(text: &str, ty: &str, sc: &mut Scan, p: &mut Parts) -> Result<()> {
    let bad = || bad_timestamp(text, ty);
    let mut after_utc = false;
    loop {
        let rest = sc.rest();
        let lower: Vec<u8> = rest.iter().map(|c| c.to_ascii_lowercase()).collect();
        if rest.is_empty() {
            return Ok(());
        }
        if let Some(sign) = match rest[0] {
            b'+' => Some(1),
            b'-' => Some(-1),
            _ => None,
        } {
            sc.i += 1;
            let (v, n) = sc.digits().ok_or_else(bad)?;
            let (h, mut m) = if n > 2 { (v / 100, v % 100) } else { (v, 0) };
            if sc.eat(b':') {
                m = sc.digits().ok_or_else(bad)?.0;
            }
            if h > 15 || m > 59 {
                return Err(Error::InvalidDatetimeFormat(format!(
                    "time zone displacement out of range: \"{text}\""
                )));
            }
            // Right after `UTC` or `GMT` the sign is POSIX's (`UTC+3` is three hours west).
            let posix = std::mem::take(&mut after_utc);
            p.offset_s = Some(if posix { -sign } else { sign } * (h * 3600 + m * 60));
        } else if rest[0].is_ascii_alphabetic() {
            // A word: letters, digits, `_` and `/`, and `-` within a zone name after its `/`
            // (`America/Port-au-Prince`); a `-` before is a displacement (`UTC-3`).
            let mut len = 0;
            while let Some(&c) = rest.get(len) {
                let named = rest[..len].contains(&b'/');
                if !(c.is_ascii_alphanumeric() || c == b'_' || c == b'/' || (c == b'-' && named)) {
                    break;
                }
                len += 1;
            }
            let word = std::str::from_utf8(&lower[..len]).map_err(|_| bad())?;
            sc.i += len;
            if matches!(word, "am" | "pm") && p.hour > 12 {
                return Err(overflow(text));
            }
            zone_word(word, &rest[..len], p).ok_or_else(bad)??;
            after_utc = matches!(word, "utc" | "gmt") && matches!(sc.peek(), Some(b'+' | b'-'));
            sc.skip_spaces();
            continue;
        } else {
            return Err(bad());
        }
        after_utc = false;
        sc.skip_spaces();
    }
}

/// Apply one word after a timestamp's time: `BC`, `AD`, a zone abbreviation (`PST`, `UTC`,
/// `Z`) or a zone name (`Europe/Paris`, any case). `None` for a word that is none of them.
fn zone_word(lower: &str, written: &[u8], p: &mut Parts) -> Option<Result<()>> {
    match lower {
        "am" if p.hour == 12 => p.hour = 0,
        "pm" if p.hour < 12 => p.hour += 12,
        "am" | "pm" => {}
        "bc" if p.year > 0 => p.year = 1 - p.year,
        "bc" => return None,
        "ad" => {}
        _ => {
            if let Some((_, off)) = ZONE_ABBREVIATIONS.iter().find(|(a, _)| *a == lower) {
                p.offset_s = Some(*off);
                p.zone = None;
            } else {
                let name = std::str::from_utf8(written).ok()?;
                let name = match lower {
                    "msk" => "Europe/Moscow",
                    _ => name,
                };
                // Names of the zone database only (`EST5EDT` is one): not any POSIX string.
                let known = !name.bytes().any(|c| c.is_ascii_digit())
                    || jiff::tz::TimeZone::get(name).is_ok();
                match crate::tz::Zone::parse(name) {
                    Ok(zone) if known => p.zone = Some(zone),
                    _ if name.contains('/') => {
                        return Some(Err(Error::InvalidParameterValue(format!(
                            "time zone \"{lower}\" not recognized"
                        ))))
                    }
                    _ => return None,
                }
                p.offset_s = None;
            }
        }
    }
    Some(Ok(()))
}

fn parts_to_us(text: &str, p: &Parts, use_offset: bool) -> Result<i64> {
    if p.month > 12 || p.day > 31 {
        return Err(overflow(text).with_hint("Perhaps you need a different \"datestyle\" setting."));
    }
    if p.month < 1 || p.year > 300_000 {
        return Err(overflow(text));
    }
    if p.day < 1 || p.day > days_in_month(p.year, p.month as u32) as i64 {
        return Err(overflow(text));
    }
    let end_of_day = p.hour == 24 && p.minute == 0 && p.second == 0 && p.micros == 0;
    if (p.hour > 23 && !end_of_day) || p.minute > 59 || p.second > 60 {
        return Err(overflow(text));
    }
    let days = days_from_civil(p.year, p.month as u32, p.day as u32);
    let mut us = days as i128 * US_PER_DAY as i128
        + (p.hour * US_PER_HOUR + p.minute * US_PER_MIN + p.second * US_PER_SEC + p.micros) as i128;
    if use_offset {
        if let Some(off) = p.offset_s {
            us -= off as i128 * US_PER_SEC as i128;
        }
    }
    if us < MIN_TIMESTAMP_US as i128 || us >= END_TIMESTAMP_US as i128 {
        return Err(Error::DatetimeFieldOverflow(format!(
            "timestamp out of range: \"{text}\""
        )));
    }
    Ok(us as i64)
}

/// Parse a timestamp as PostgreSQL's `timestamptz` input does: a zone suffix (`Z`, `UTC`,
/// `+02`, `-05:30`) is converted to UTC; without one the time is in the session time zone
/// (UTC unless set, see [`crate::tz`]). Errors: 22007 when malformed, 22008 when a field or the result is out of range.
///
/// ```ignore
/// use tcq::time::parse_timestamp;
/// assert_eq!(parse_timestamp("1970-01-01 02:00+02").unwrap(), 0);
/// assert_eq!(parse_timestamp("epoch").unwrap(), 0);
/// ```
pub(crate) fn parse_timestamp(text: &str) -> Result<i64> {
    parse_with(text, true, "timestamp with time zone")
}

/// Parse a `timestamp without time zone` as PostgreSQL does: a zone suffix is accepted and
/// ignored. Errors as [`parse_timestamp`].
pub(crate) fn parse_timestamp_naive(text: &str) -> Result<i64> {
    parse_with(text, false, "timestamp")
}

/// Parse `text` as [`parse_timestamp_naive`] does, naming type `ty` in error messages
/// (`date` reads its input as a timestamp and keeps the day).
pub(crate) fn parse_naive_as(text: &str, ty: &str) -> Result<i64> {
    parse_with(text, false, ty)
}

fn parse_with(text: &str, use_offset: bool, ty: &str) -> Result<i64> {
    let trimmed = text.trim();
    if trimmed.len() <= 10 {
        let lower = trimmed.to_ascii_lowercase();
        if let Some(r) = special_timestamp(&lower) {
            return r;
        }
    }
    if trimmed.starts_with('-') {
        // PostgreSQL reads a leading sign as a zone displacement, out of range at the start.
        return Err(Error::InvalidTimeZoneDisplacement(format!(
            "time zone displacement out of range: \"{text}\""
        )));
    }
    let p = parse_parts(text, ty)?;
    let us = parts_to_us(text, &p, use_offset)?;
    if use_offset && p.offset_s.is_none() {
        // A zone by name, or none written: the wall time is in that zone, or the session's.
        let utc = match &p.zone {
            Some(zone) => zone.local_to_utc(us),
            None => crate::tz::current_local_to_utc(us),
        };
        if !(MIN_TIMESTAMP_US..END_TIMESTAMP_US).contains(&utc) {
            return Err(Error::DatetimeFieldOverflow(format!(
                "timestamp out of range: \"{text}\""
            )));
        }
        return Ok(utc);
    }
    Ok(us)
}

/// Append seconds and a trimmed fraction (`05`, `05.5`, `05.000001`).
fn push_seconds(out: &mut String, sec: i64, frac_us: i64) {
    use std::fmt::Write;
    let _ = write!(out, "{sec:02}");
    if frac_us != 0 {
        let mut f = format!("{frac_us:06}");
        while f.ends_with('0') {
            f.pop();
        }
        out.push('.');
        out.push_str(&f);
    }
}

/// Format a timestamp as PostgreSQL's ISO output: `2001-01-01 00:05:00`, fractional
/// seconds only when non-zero (`00:05:00.5`), ` BC` for years before 1 AD.
pub fn format_timestamp(us: i64) -> String {
    let mut out = String::with_capacity(32);
    push_timestamp(us, &mut out);
    out
}

/// Append `us` as [`format_timestamp`] does, without allocating; the common case (years
/// 1000 to 9999, whole seconds) writes digits directly.
pub(crate) fn push_timestamp(us: i64, out: &mut String) {
    if push_infinity(us, out) {
        return;
    }
    let days = us.div_euclid(US_PER_DAY);
    let tod = us.rem_euclid(US_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    if (1000..=9999).contains(&y) && tod % US_PER_SEC == 0 {
        let secs = tod / US_PER_SEC;
        let (h, mi, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
        let y = y as usize;
        for (i, part) in [y / 100, y % 100, m as usize, d as usize]
            .into_iter()
            .enumerate()
        {
            out.push_str(two_digits(part));
            if i > 0 && i < 3 {
                out.push('-');
            }
        }
        out.push(' ');
        out.push_str(two_digits(h as usize));
        out.push(':');
        out.push_str(two_digits(mi as usize));
        out.push(':');
        out.push_str(two_digits(s as usize));
        return;
    }
    out.push_str(&format_timestamp_slow(us));
}

/// Rewrite `text`, the [`push_timestamp`] text of `prev_us`, into that of `us` when both
/// are whole seconds of the same day and `text` has the common 19-byte form
/// (`2001-01-08 00:00:01`): only the time of day is written, the date is kept. False, and
/// `text` unchanged, otherwise. A long window sliding by the second emits one wtime a row,
/// 86,400 of them a day.
pub(crate) fn retime_same_day(text: &mut String, prev_us: i64, us: i64) -> bool {
    if text.len() != 19
        || us.div_euclid(US_PER_DAY) != prev_us.div_euclid(US_PER_DAY)
        || us.rem_euclid(US_PER_SEC) != 0
        || prev_us.rem_euclid(US_PER_SEC) != 0
        || us == i64::MAX
        || us == i64::MIN
    {
        return false;
    }
    let secs = (us.rem_euclid(US_PER_DAY) / US_PER_SEC) as usize;
    text.truncate(11);
    text.push_str(two_digits(secs / 3600));
    text.push(':');
    text.push_str(two_digits(secs / 60 % 60));
    text.push(':');
    text.push_str(two_digits(secs % 60));
    true
}

/// The two-digit text of `v` (`v < 100`), from a table: no division, no UTF-8 check.
fn two_digits(v: usize) -> &'static str {
    const DIGITS: &str = "0001020304050607080910111213141516171819\
                          2021222324252627282930313233343536373839\
                          4041424344454647484950515253545556575859\
                          6061626364656667686970717273747576777879\
                          8081828384858687888990919293949596979899";
    &DIGITS[2 * v..2 * v + 2]
}

fn format_timestamp_slow(us: i64) -> String {
    use std::fmt::Write;
    let days = us.div_euclid(US_PER_DAY);
    let tod = us.rem_euclid(US_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let (year, bc) = if y <= 0 { (1 - y, true) } else { (y, false) };
    let mut out = String::with_capacity(32);
    let _ = write!(
        out,
        "{year:04}-{m:02}-{d:02} {:02}:{:02}:",
        tod / US_PER_HOUR,
        (tod % US_PER_HOUR) / US_PER_MIN
    );
    push_seconds(&mut out, (tod % US_PER_MIN) / US_PER_SEC, tod % US_PER_SEC);
    if bc {
        out.push_str(" BC");
    }
    out
}

/// [`push_timestamptz`] into a new string.
#[cfg(test)]
pub(crate) fn format_timestamptz(us: i64) -> String {
    let mut out = String::with_capacity(36);
    push_timestamptz(us, &mut out);
    out
}

/// Append the `timestamptz` `us` in the session time zone (see [`crate::tz`]):
/// `2001-01-01 00:05:00+00`, `2000-12-31 19:05:00-05`, `... +05:30`, and `+00 BC`.
pub(crate) fn push_timestamptz(us: i64, out: &mut String) {
    if push_infinity(us, out) {
        return;
    }
    let offset = crate::tz::current_offset_at(us);
    let local = us.saturating_add(offset as i64 * US_PER_SEC);
    let start = out.len();
    push_timestamp(local, out);
    if out[start..].ends_with(" BC") {
        out.truncate(out.len() - 3);
        crate::tz::push_offset(offset, out);
        out.push_str(" BC");
    } else {
        crate::tz::push_offset(offset, out);
    }
}

fn bad_interval(text: &str) -> Error {
    Error::InvalidDatetimeFormat(format!(
        "invalid input syntax for type interval: \"{text}\""
    ))
}

fn interval_overflow(text: &str) -> Error {
    Error::DatetimeFieldOverflow(format!("interval field value out of range: \"{text}\""))
}

/// Interval being accumulated with fractional carry-down, as PostgreSQL's `DecodeInterval`.
#[derive(Default)]
struct Acc {
    months: f64,
    days: f64,
    micros: f64,
}

impl Acc {
    /// Add `whole + frac` of `unit` (`frac` read from the digits after the point, as
    /// PostgreSQL's `DecodeInterval` reads its `fval`), with PostgreSQL 15's Adjust*
    /// rules: a fraction of a day or week carries down to microseconds, of a month to
    /// 30-day days, of a year (decade, ...) to whole months, rounded.
    fn add(&mut self, unit: Unit, whole: f64, frac: f64) {
        match unit {
            Unit::Micros(f) => {
                self.micros += whole * f;
                self.add_fract_micros(frac * f);
            }
            Unit::Days(f) => {
                self.days += whole * f;
                let days = frac * f;
                let wd = days.trunc();
                self.days += wd;
                self.add_fract_micros((days - wd) * US_PER_DAY as f64);
            }
            Unit::Months(f) if f >= 12.0 => {
                self.months += whole * f + (frac * f).round_ties_even();
            }
            Unit::Months(f) => {
                self.months += whole * f;
                let days = frac * f * 30.0;
                let wd = days.trunc();
                self.days += wd;
                self.add_fract_micros((days - wd) * US_PER_DAY as f64);
            }
        }
    }

    /// PostgreSQL's AdjustFractMicroseconds: whole microseconds of `us`, and its
    /// fraction rounded with rint() (half to even).
    fn add_fract_micros(&mut self, us: f64) {
        let whole = us.trunc();
        self.micros += whole + (us - whole).round_ties_even();
    }
}

#[derive(Clone, Copy)]
enum Unit {
    Micros(f64),
    Days(f64),
    Months(f64),
}

/// The unit a word names, and its field's bit: PostgreSQL refuses a field given twice
/// (`1 day 1 day`; a bare number and a clock both give seconds).
fn unit_of(word: &str) -> Option<(Unit, u16)> {
    Some(match word {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" | "usecond" => {
            (Unit::Micros(1.0), 1)
        }
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" | "msecond" => {
            (Unit::Micros(1e3), 1 << 1)
        }
        "second" | "seconds" | "s" | "sec" | "secs" => (Unit::Micros(1e6), FIELD_SECOND),
        "minute" | "minutes" | "m" | "min" | "mins" => (Unit::Micros(6e7), FIELD_MINUTE),
        "hour" | "hours" | "h" | "hr" | "hrs" => (Unit::Micros(3.6e9), FIELD_HOUR),
        "day" | "days" | "d" => (Unit::Days(1.0), FIELD_DAY),
        "week" | "weeks" | "w" => (Unit::Days(7.0), 1 << 6),
        "month" | "months" | "mon" | "mons" => (Unit::Months(1.0), 1 << 7),
        "year" | "years" | "y" | "yr" | "yrs" => (Unit::Months(12.0), 1 << 8),
        "decade" | "decades" | "dec" | "decs" => (Unit::Months(120.0), 1 << 9),
        "century" | "centuries" | "c" | "cent" => (Unit::Months(1200.0), 1 << 10),
        "millennium" | "millennia" | "mil" | "mils" => (Unit::Months(12000.0), 1 << 11),
        _ => return None,
    })
}

const FIELD_SECOND: u16 = 1 << 2;
const FIELD_MINUTE: u16 = 1 << 3;
const FIELD_HOUR: u16 = 1 << 4;
const FIELD_DAY: u16 = 1 << 5;

/// Parse PostgreSQL interval input: `'10 seconds'`, `'1 hour 30 minutes'`, `'00:05:00'`,
/// `'2 days'`, `'1 day 02:00:00'`, `'5 min'`, `'-1 hour'`, `'@ 1 hour ago'`, `'1.5 hours'`,
/// `'1 mon'`, ISO 8601 `'PT5M'` / `'P1DT2H'`. A bare number is seconds. Errors: 22007 when
/// malformed, 22008 when out of range.
///
/// ```ignore
/// use tcq::time::parse_interval;
/// let i = parse_interval("1 day 02:00:00").unwrap();
/// assert_eq!((i.months, i.days, i.micros), (0, 1, 7_200_000_000));
/// ```
pub(crate) fn parse_interval(text: &str) -> Result<Interval> {
    let t = text.trim();
    if t.is_empty() {
        return Err(bad_interval(text));
    }
    let lower = t.to_ascii_lowercase();
    let acc = if let Some(iso) = lower.strip_prefix('p') {
        parse_iso_interval(iso).ok_or_else(|| bad_interval(text))?
    } else {
        parse_verbose_interval(&lower).ok_or_else(|| bad_interval(text))?
    };
    let months = acc.months.round();
    let days = acc.days.round();
    // PostgreSQL rounds microseconds with rint(): half to even.
    let micros = acc.micros.round_ties_even();
    if months.abs() > i32::MAX as f64 || days.abs() > i32::MAX as f64 || micros.abs() > 9.2e18 {
        return Err(interval_overflow(text));
    }
    Ok(Interval {
        months: months as i32,
        days: days as i32,
        micros: micros as i64,
    })
}

/// `seen` with the bits of `field`, or `None` when one was already given.
fn take_field(seen: u16, field: u16) -> Option<u16> {
    (seen & field == 0).then_some(seen | field)
}

/// Split `s` into tokens: numbers (with sign, point), words, clock times, `@`.
fn parse_verbose_interval(s: &str) -> Option<Acc> {
    let mut acc = Acc::default();
    let mut toks: Vec<&str> = Vec::new();
    // Separate "10seconds" and "5min" into number and unit.
    for raw in s.split_whitespace() {
        let b = raw.as_bytes();
        let split = b
            .iter()
            .position(|c| c.is_ascii_alphabetic())
            .filter(|&p| p > 0 && !raw.contains(':'));
        match split {
            Some(p) => {
                toks.push(&raw[..p]);
                toks.push(&raw[p..]);
            }
            None => toks.push(raw),
        }
    }
    let mut ago = false;
    let mut i = 0;
    let mut any = false;
    let mut seen = 0u16;
    while i < toks.len() {
        let tok = toks[i];
        i += 1;
        if tok == "@" {
            continue;
        }
        if tok == "ago" {
            if i != toks.len() {
                return None;
            }
            ago = true;
            continue;
        }
        if tok.contains(':') {
            acc.micros += parse_clock(tok)?;
            seen = take_field(seen, FIELD_HOUR | FIELD_MINUTE | FIELD_SECOND)?;
            any = true;
            continue;
        }
        let (whole, frac) = parse_number(tok)?;
        let (unit, field) = match toks.get(i).and_then(|w| unit_of(w)) {
            Some(u) => {
                i += 1;
                u
            }
            // A bare number before a clock is days (`1 2:03:04`, PostgreSQL's own
            // output form); else seconds.
            None if toks.get(i).is_some_and(|t| t.contains(':')) => (Unit::Days(1.0), FIELD_DAY),
            None => (Unit::Micros(1e6), FIELD_SECOND),
        };
        seen = take_field(seen, field)?;
        acc.add(unit, whole, frac);
        any = true;
    }
    if !any {
        return None;
    }
    if ago {
        acc.months = -acc.months;
        acc.days = -acc.days;
        acc.micros = -acc.micros;
    }
    Some(acc)
}

/// A signed decimal number as its integer part and its fraction, each with the sign
/// (`-1.5` is `(-1, -0.5)`), the fraction read from its own digits as PostgreSQL's
/// `strtod` of them.
fn parse_number(tok: &str) -> Option<(f64, f64)> {
    let body = tok.strip_prefix(['+', '-']).unwrap_or(tok);
    if body.is_empty() || !body.bytes().all(|c| c.is_ascii_digit() || c == b'.') || body == "." {
        return None;
    }
    let sign = if tok.starts_with('-') { -1.0 } else { 1.0 };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let whole: f64 = if int.is_empty() {
        0.0
    } else {
        int.parse().ok()?
    };
    let frac: f64 = if frac.is_empty() {
        0.0
    } else {
        format!("0.{frac}").parse().ok()?
    };
    Some((sign * whole, sign * frac))
}

/// `[-]hh:mm[:ss[.frac]]` as microseconds.
fn parse_clock(tok: &str) -> Option<f64> {
    let (neg, body) = match tok.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, tok.strip_prefix('+').unwrap_or(tok)),
    };
    let mut parts = body.split(':');
    let h: f64 = parts.next()?.parse::<u64>().ok()? as f64;
    let m_str = parts.next()?;
    let m: f64 = m_str.parse::<u64>().ok()? as f64;
    let s: f64 = match parts.next() {
        Some(sec) => {
            if sec.is_empty() || !sec.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
                return None;
            }
            sec.parse().ok()?
        }
        None => 0.0,
    };
    if parts.next().is_some() || m >= 60.0 || s >= 60.0 {
        return None;
    }
    let us = h * 3.6e9 + m * 6e7 + (s * 1e6).round_ties_even();
    Some(if neg { -us } else { us })
}

/// ISO 8601 `P[nY][nM][nW][nD][T[nH][nM][nS]]` (after the `P`).
fn parse_iso_interval(s: &str) -> Option<Acc> {
    let mut acc = Acc::default();
    let mut in_time = false;
    let b = s.as_bytes();
    let mut i = 0;
    let mut any = false;
    while i < b.len() {
        if b[i] == b't' {
            if in_time {
                return None;
            }
            in_time = true;
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'-' || b[i] == b'+')
        {
            i += 1;
        }
        // PostgreSQL's ParseISO8601Number: the fraction is the double's, less its
        // integer part (unlike the verbose form's).
        parse_number(&s[start..i])?;
        let v: f64 = s[start..i].parse().ok()?;
        let (whole, frac) = (v.trunc(), v - v.trunc());
        let unit = match (b.get(i)?, in_time) {
            (b'y', false) => Unit::Months(12.0),
            (b'm', false) => Unit::Months(1.0),
            (b'w', false) => Unit::Days(7.0),
            (b'd', false) => Unit::Days(1.0),
            (b'h', true) => Unit::Micros(3.6e9),
            (b'm', true) => Unit::Micros(6e7),
            (b's', true) => Unit::Micros(1e6),
            _ => return None,
        };
        i += 1;
        acc.add(unit, whole, frac);
        any = true;
    }
    any.then_some(acc)
}

const INTERVAL_UNITS: [(i64, &str); 6] = [
    (86_400_000_000, "day"),
    (3_600_000_000, "hour"),
    (60_000_000, "minute"),
    (1_000_000, "second"),
    (1_000, "millisecond"),
    (1, "microsecond"),
];

/// A duration in microseconds as words, largest unit first, the form a RANGE BY or SLIDE BY
/// clause takes: `"20 minutes"`, `"1 hour 30 minutes"`, `"500 milliseconds"`.
pub fn human_interval(us: i64) -> String {
    if us == 0 {
        return "0 seconds".to_string();
    }
    let mut rest = us.unsigned_abs();
    let mut parts = Vec::new();
    for (unit, name) in INTERVAL_UNITS {
        let n = rest / unit as u64;
        if n > 0 {
            parts.push(format!("{n} {name}{}", if n == 1 { "" } else { "s" }));
            rest %= unit as u64;
        }
    }
    let text = parts.join(" ");
    if us < 0 {
        format!("-{text}")
    } else {
        text
    }
}

/// Format an interval in PostgreSQL's default `postgres` style: `01:00:00`,
/// `1 day 02:00:00`, `00:00:00.5`, `1 mon 2 days`, `1 year 2 mons`, `-01:00:00`,
/// `-1 days +02:00:00`.
pub(crate) fn format_interval(iv: &Interval) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut is_zero = true;
    let mut is_before = false;
    let years = iv.months / 12;
    let mons = iv.months % 12;
    for (value, unit) in [
        (years as i64, "year"),
        (mons as i64, "mon"),
        (iv.days as i64, "day"),
    ] {
        if value == 0 {
            continue;
        }
        let _ = write!(
            out,
            "{}{}{} {}{}",
            if is_zero { "" } else { " " },
            if is_before && value > 0 { "+" } else { "" },
            value,
            unit,
            if value != 1 { "s" } else { "" }
        );
        is_before = value < 0;
        is_zero = false;
    }
    if is_zero || iv.micros != 0 {
        let neg = iv.micros < 0;
        let abs = iv.micros.unsigned_abs();
        let hours = abs / US_PER_HOUR as u64;
        let minutes = (abs % US_PER_HOUR as u64) / US_PER_MIN as u64;
        let secs = (abs % US_PER_MIN as u64) / US_PER_SEC as u64;
        let frac = abs % US_PER_SEC as u64;
        let _ = write!(
            out,
            "{}{}{hours:02}:{minutes:02}:",
            if is_zero { "" } else { " " },
            if neg {
                "-"
            } else if is_before {
                "+"
            } else {
                ""
            }
        );
        push_seconds(&mut out, secs as i64, frac as i64);
    }
    out
}

/// The length of an interval in microseconds when it has a fixed one: days count 24 hours;
/// months and years have no fixed length and are refused with 22023
/// ([`Error::InvalidParameterValue`]), as is a length that overflows.
pub(crate) fn fixed_length_us(iv: &Interval) -> Result<i64> {
    if iv.months != 0 {
        return Err(Error::InvalidParameterValue(format!(
            "interval \"{}\" has no fixed length: months and years vary in length; use days, hours, minutes or seconds",
            format_interval(iv)
        )));
    }
    (iv.days as i64)
        .checked_mul(US_PER_DAY)
        .and_then(|d| d.checked_add(iv.micros))
        .ok_or_else(|| {
            Error::InvalidParameterValue(format!(
                "interval \"{}\" is too long",
                format_interval(iv)
            ))
        })
}

/// An interval's total length in microseconds for arithmetic and comparison, months as 30
/// days as PostgreSQL's interval comparison does; saturates instead of overflowing.
pub(crate) fn interval_span_us(iv: &Interval) -> i128 {
    (iv.months as i128 * 30 + iv.days as i128) * US_PER_DAY as i128 + iv.micros as i128
}

/// `ts + iv` with PostgreSQL's calendar rules: months first (clamping the day to the month's
/// end), then days, then microseconds. Errors: 22008 when out of range.
pub(crate) fn timestamp_add_interval(ts: i64, iv: &Interval) -> Result<i64> {
    if is_infinite(ts) {
        return Ok(ts);
    }
    let out_of_range = || Error::DatetimeFieldOverflow("timestamp out of range".into());
    let mut t = ts as i128;
    if iv.months != 0 {
        let days = ts.div_euclid(US_PER_DAY);
        let tod = ts.rem_euclid(US_PER_DAY);
        let (y, m, d) = civil_from_days(days);
        let total = y * 12 + (m as i64 - 1) + iv.months as i64;
        let ny = total.div_euclid(12);
        let nm = (total.rem_euclid(12) + 1) as u32;
        let nd = d.min(days_in_month(ny, nm));
        t = days_from_civil(ny, nm, nd) as i128 * US_PER_DAY as i128 + tod as i128;
    }
    t += iv.days as i128 * US_PER_DAY as i128 + iv.micros as i128;
    if t < MIN_TIMESTAMP_US as i128 || t >= END_TIMESTAMP_US as i128 {
        return Err(out_of_range());
    }
    Ok(t as i64)
}

/// `a - b` of two timestamps as PostgreSQL gives it: whole days and the remaining time
/// (`interval_justify_hours`), no months.
pub(crate) fn timestamp_diff(a: i64, b: i64) -> Result<Interval> {
    if is_infinite(a) || is_infinite(b) {
        return Err(Error::DatetimeFieldOverflow(
            "cannot subtract infinite timestamps".into(),
        ));
    }
    let d = (a as i128) - (b as i128);
    let days = d / US_PER_DAY as i128;
    let micros = d % US_PER_DAY as i128;
    if days.abs() > i32::MAX as i128 {
        return Err(Error::DatetimeFieldOverflow("interval out of range".into()));
    }
    Ok(Interval {
        months: 0,
        days: days as i32,
        micros: micros as i64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retiming_a_timestamp_within_its_day_writes_what_formatting_it_does() {
        let sec = US_PER_SEC;
        let starts = [
            978_307_200 * sec,         // 2001-01-01 00:00:00
            -86_400 * sec,             // 1969-12-31: before the epoch
            -62_135_596_800 * sec,     // 0001-01-01
            -62_198_755_200 * sec,     // 0003-12-31 BC (22 bytes: never retimed)
            253_402_214_400 * sec,     // 10000-01-01 (20 bytes: never retimed)
            978_307_200 * sec + 1_500, // fractional seconds: never retimed
            INFINITY_US - 3 * sec,
            NEG_INFINITY_US,
        ];
        let steps = [
            0,
            sec,
            59 * sec,
            3_599 * sec,
            86_399 * sec,
            86_400 * sec,
            1,
            -sec,
        ];
        for start in starts {
            for step in steps {
                let Some(next) = start.checked_add(step) else {
                    continue;
                };
                let mut text = String::new();
                push_timestamp(start, &mut text);
                let mut want = String::new();
                push_timestamp(next, &mut want);
                if !retime_same_day(&mut text, start, next) {
                    let mut again = String::new();
                    push_timestamp(start, &mut again);
                    assert_eq!(text, again, "unchanged when refused: {start} {step}");
                    continue;
                }
                assert_eq!(text, want, "{start} + {step}");
                assert_eq!(text.len(), 19);
            }
        }
        let mut text = String::new();
        push_timestamp(978_307_200 * sec, &mut text);
        assert!(retime_same_day(
            &mut text,
            978_307_200 * sec,
            978_393_599 * sec
        ));
        assert_eq!(text, "2001-01-01 23:59:59");
        assert!(!retime_same_day(
            &mut text,
            978_393_599 * sec,
            978_393_600 * sec
        ));
    }

    fn iv(months: i32, days: i32, micros: i64) -> Interval {
        Interval {
            months,
            days,
            micros,
        }
    }

    /// Sub-microsecond digits and fractional units as PostgreSQL 15 reads them (each
    /// expected text is what PostgreSQL 15 printed for the same input).
    #[test]
    fn fractions_round_as_postgresql() {
        for (input, pg) in [
            ("2020-01-01 00:00:00.0000025", "2020-01-01 00:00:00.000002"),
            ("2020-01-01 00:00:00.0000035", "2020-01-01 00:00:00.000004"),
            ("2020-01-01 00:00:00.9999995", "2020-01-01 00:00:01"),
            ("2020-01-01 00:00:00.12345650", "2020-01-01 00:00:00.123456"),
        ] {
            assert_eq!(
                format_timestamp(parse_timestamp(input).unwrap()),
                pg,
                "{input}"
            );
        }
        for (input, pg) in [
            ("0.5 microseconds", "00:00:00"),
            ("1.5 microseconds", "00:00:00.000001"),
            ("2.5 us", "00:00:00.000002"),
            ("-1.5 us", "-00:00:00.000001"),
            ("00:00:00.0000025", "00:00:00.000002"),
            ("1.0000005 seconds", "00:00:01"),
            ("0.3333333 days", "07:59:59.99712"),
            ("1.7 months", "1 mon 21 days"),
            ("1.7 years", "1 year 8 mons"),
            ("1.05 decades", "10 years 6 mons"),
            ("2.5 weeks", "17 days 12:00:00"),
            ("-1.25 days", "-1 days -06:00:00"),
            ("1.23456789 hours", "01:14:04.444404"),
            ("PT1.0000005S", "00:00:01.000001"),
            ("P1.7Y", "1 year 8 mons"),
        ] {
            assert_eq!(
                format_interval(&parse_interval(input).unwrap()),
                pg,
                "{input}"
            );
        }
    }

    #[test]
    fn timestamps_parse_postgres_inputs() {
        assert_eq!(parse_timestamp("1970-01-01").unwrap(), 0);
        assert_eq!(parse_timestamp("1970/01/01").unwrap(), 0);
        assert_eq!(parse_timestamp("19700101").unwrap(), 0);
        assert!(parse_timestamp("1970-01/01").is_err());
        assert_eq!(
            parse_timestamp("2001-01-01 00:05:00").unwrap(),
            978_307_500_000_000
        );
        assert_eq!(
            parse_timestamp("2001-01-01T00:05:00.123456").unwrap(),
            978_307_500_123_456
        );
        assert_eq!(
            parse_timestamp("2001-01-01 00:05").unwrap(),
            978_307_500_000_000
        );
        assert_eq!(parse_timestamp("1970-01-01 00:00:00Z").unwrap(), 0);
        assert_eq!(parse_timestamp("1970-01-01 00:00:00 UTC").unwrap(), 0);
        assert_eq!(parse_timestamp("1970-01-01 02:00:00+02").unwrap(), 0);
        assert_eq!(
            parse_timestamp("1970-01-01 00:00:00-05:30").unwrap(),
            19_800_000_000
        );
        assert_eq!(
            parse_timestamp_naive("1970-01-01 02:00:00+02").unwrap(),
            7_200_000_000
        );
        assert_eq!(parse_timestamp("epoch").unwrap(), 0);
        assert_eq!(parse_timestamp(" EPOCH ").unwrap(), 0);
        assert_eq!(parse_timestamp("1969-12-31 23:59:59.5").unwrap(), -500_000);
        assert_eq!(
            parse_timestamp("0001-01-01 00:00:00 BC").unwrap(),
            days_from_civil(0, 1, 1) * US_PER_DAY
        );
        assert_eq!(
            parse_timestamp("2000-01-01 24:00:00").unwrap(),
            parse_timestamp("2000-01-02").unwrap()
        );
    }

    /// Dates written month-day-year, with names or dots, as PostgreSQL 15 reads them
    /// under DateStyle ISO, MDY (its answers for each input).
    #[test]
    fn loose_dates_read_as_postgresql_reads_them() {
        let jan2 = 1_704_153_600_000_000; // 2024-01-02 00:00 UTC
        for input in [
            "01/02/2024",
            "1/2/24",
            "01-02-2024",
            "01.02.2024",
            "2024.01.02",
            "2024.1.2",
            "Jan 2 2024",
            "2 Jan 2024",
            "January 2, 2024",
            "Tuesday, January 2, 2024",
            "02-Jan-2024",
            "2024-Jan-02",
            "2024 Jan 2",
            "Jan 2024 2",
            "jan 2, 24",
        ] {
            assert_eq!(parse_timestamp_naive(input), Ok(jan2), "{input}");
        }
        let ten_pm = jan2 + 22 * US_PER_HOUR;
        assert_eq!(parse_timestamp_naive("January 2 2024 10:00 pm"), Ok(ten_pm));
        assert_eq!(parse_timestamp_naive("01/02/2024T22:00"), Ok(ten_pm));
        assert_eq!(parse_timestamp_naive("Jan 2 2024, 22:00"), Ok(ten_pm));
        assert_eq!(
            parse_timestamp_naive("12/31/99 23:59"),
            Ok(946_684_740_000_000)
        );
        for bad in [
            "Janu 2 2024",
            "Jan 2",
            "2 January",
            "01-02/2024",
            "1970-01/01",
        ] {
            assert!(
                matches!(
                    parse_timestamp_naive(bad),
                    Err(Error::InvalidDatetimeFormat(_))
                ),
                "{bad}"
            );
        }
        for (input, hinted) in [
            ("13/02/2024", true),
            ("Jan 32 2024", true),
            ("02/30/2024", false),
        ] {
            let e = parse_timestamp_naive(input).unwrap_err();
            assert!(
                matches!(e.kind(), Error::DatetimeFieldOverflow(_)),
                "{input}"
            );
            assert_eq!(format!("{e:?}").contains("datestyle"), hinted, "{input}");
        }
    }

    #[test]
    fn timestamp_errors_are_postgres_errors() {
        assert_eq!(
            parse_timestamp("garbage"),
            Err(Error::InvalidDatetimeFormat(
                "invalid input syntax for type timestamp with time zone: \"garbage\"".into()
            ))
        );
        assert_eq!(
            parse_timestamp_naive("2001-01-01 00:00:00 x"),
            Err(Error::InvalidDatetimeFormat(
                "invalid input syntax for type timestamp: \"2001-01-01 00:00:00 x\"".into()
            ))
        );
        assert_eq!(
            parse_timestamp_naive("2001-13-01"),
            Err(Error::DatetimeFieldOverflow(
                "date/time field value out of range: \"2001-13-01\"".into()
            )
            .with_hint("Perhaps you need a different \"datestyle\" setting."))
        );
        assert!(matches!(
            parse_timestamp("2001-02-29"),
            Err(Error::DatetimeFieldOverflow(_))
        ));
        assert!(matches!(
            parse_timestamp("2001-01-01 25:00"),
            Err(Error::DatetimeFieldOverflow(_))
        ));
        assert!(matches!(
            parse_timestamp("294277-01-01"),
            Err(Error::DatetimeFieldOverflow(_))
        ));
        // infinity is PostgreSQL's i64::MAX; `+infinity` is not a timestamp (22007).
        assert_eq!(parse_timestamp("infinity").unwrap(), INFINITY_US);
        assert_eq!(
            parse_timestamp_naive(" -Infinity ").unwrap(),
            NEG_INFINITY_US
        );
        assert!(matches!(
            parse_timestamp("+infinity"),
            Err(Error::InvalidDatetimeFormat(_))
        ));
        let mut shown = String::new();
        push_timestamptz(INFINITY_US, &mut shown);
        push_timestamp(NEG_INFINITY_US, &mut shown);
        assert_eq!(shown, "infinity-infinity");
        let day = Interval {
            months: 1,
            days: 1,
            micros: 1,
        };
        assert_eq!(
            timestamp_add_interval(INFINITY_US, &day).unwrap(),
            INFINITY_US
        );
        assert!(timestamp_diff(INFINITY_US, 0).is_err());
        assert!(parse_timestamp("294246-12-31 23:59:59").is_ok());
        assert!(matches!(
            parse_timestamp("294276-12-31 23:59:59"),
            Err(Error::DatetimeFieldOverflow(_))
        ));
        assert!(parse_timestamp("4714-11-24 00:00:00 BC").is_ok());
        assert!(matches!(
            parse_timestamp("4714-11-23 23:59:59 BC"),
            Err(Error::DatetimeFieldOverflow(_))
        ));
    }

    #[test]
    fn timestamps_format_like_postgres() {
        assert_eq!(format_timestamp(0), "1970-01-01 00:00:00");
        assert_eq!(
            format_timestamp(978_307_500_500_000),
            "2001-01-01 00:05:00.5"
        );
        assert_eq!(
            format_timestamp(978_307_500_000_001),
            "2001-01-01 00:05:00.000001"
        );
        assert_eq!(format_timestamp(-1), "1969-12-31 23:59:59.999999");
        assert_eq!(format_timestamptz(0), "1970-01-01 00:00:00+00");
        let bc = parse_timestamp("0044-03-15 12:00 BC").unwrap();
        assert_eq!(format_timestamp(bc), "0044-03-15 12:00:00 BC");
        for s in [
            "2001-01-01 00:05:00",
            "1900-02-28 23:59:59.25",
            "2400-02-29 00:00:00",
            "294246-12-31 23:59:59",
        ] {
            assert_eq!(format_timestamp(parse_timestamp(s).unwrap()), s);
        }
    }

    #[test]
    fn intervals_parse_postgres_inputs() {
        assert_eq!(parse_interval("10 seconds").unwrap(), iv(0, 0, 10_000_000));
        assert_eq!(
            parse_interval("1 hour 30 minutes").unwrap(),
            iv(0, 0, 5_400_000_000)
        );
        assert_eq!(parse_interval("00:05:00").unwrap(), iv(0, 0, 300_000_000));
        assert_eq!(parse_interval("2 days").unwrap(), iv(0, 2, 0));
        assert_eq!(
            parse_interval("1 day 02:00:00").unwrap(),
            iv(0, 1, 7_200_000_000)
        );
        assert_eq!(parse_interval("5 min").unwrap(), iv(0, 0, 300_000_000));
        assert_eq!(parse_interval("5min").unwrap(), iv(0, 0, 300_000_000));
        assert_eq!(parse_interval("PT5M").unwrap(), iv(0, 0, 300_000_000));
        assert_eq!(
            parse_interval("P1Y2M3DT4H").unwrap(),
            iv(14, 3, 4 * US_PER_HOUR)
        );
        assert_eq!(parse_interval("1 mon").unwrap(), iv(1, 0, 0));
        assert_eq!(parse_interval("-1 hour").unwrap(), iv(0, 0, -US_PER_HOUR));
        assert_eq!(parse_interval("@ 1 hour").unwrap(), iv(0, 0, US_PER_HOUR));
        assert_eq!(
            parse_interval("@ 1 hour ago").unwrap(),
            iv(0, 0, -US_PER_HOUR)
        );
        assert_eq!(
            parse_interval("1.5 hours").unwrap(),
            iv(0, 0, 5_400_000_000)
        );
        assert_eq!(
            parse_interval("1.5 days").unwrap(),
            iv(0, 1, 12 * US_PER_HOUR)
        );
        assert_eq!(parse_interval("10").unwrap(), iv(0, 0, 10_000_000));
        assert_eq!(parse_interval("1 week").unwrap(), iv(0, 7, 0));
        assert_eq!(parse_interval("2 years").unwrap(), iv(24, 0, 0));
        assert_eq!(parse_interval("500 ms").unwrap(), iv(0, 0, 500_000));
        assert_eq!(parse_interval("-00:00:01.5").unwrap(), iv(0, 0, -1_500_000));
        assert_eq!(
            parse_interval("ten seconds"),
            Err(Error::InvalidDatetimeFormat(
                "invalid input syntax for type interval: \"ten seconds\"".into()
            ))
        );
        // A bare number before a clock is days: PostgreSQL's sql_standard output form.
        assert_eq!(
            parse_interval("1 2:03:04").unwrap(),
            iv(0, 1, 2 * US_PER_HOUR + 184_000_000)
        );
        assert_eq!(
            parse_interval("1 12:00").unwrap(),
            iv(0, 1, 12 * US_PER_HOUR)
        );
        assert_eq!(parse_interval("1 week 1 day").unwrap(), iv(0, 8, 0));
        // A field given twice is refused, as PostgreSQL refuses it.
        for twice in ["1 2", "1 day 1 day", "1 hour 01:00", "5 seconds 7"] {
            assert!(parse_interval(twice).is_err(), "{twice}");
        }
        assert!(parse_interval("").is_err());
        assert!(parse_interval("1 fortnight").is_err());
        assert!(parse_interval("00:61:00").is_err());
    }

    #[test]
    fn intervals_format_like_postgres() {
        assert_eq!(format_interval(&iv(0, 0, US_PER_HOUR)), "01:00:00");
        assert_eq!(
            format_interval(&iv(0, 1, 2 * US_PER_HOUR)),
            "1 day 02:00:00"
        );
        assert_eq!(format_interval(&iv(0, 0, 500_000)), "00:00:00.5");
        assert_eq!(format_interval(&iv(1, 2, 0)), "1 mon 2 days");
        assert_eq!(format_interval(&iv(14, 0, 0)), "1 year 2 mons");
        assert_eq!(format_interval(&iv(0, 0, -US_PER_HOUR)), "-01:00:00");
        assert_eq!(
            format_interval(&iv(0, -1, 2 * US_PER_HOUR)),
            "-1 days +02:00:00"
        );
        assert_eq!(format_interval(&iv(0, 1, -US_PER_HOUR)), "1 day -01:00:00");
        assert_eq!(format_interval(&iv(0, 0, 0)), "00:00:00");
        assert_eq!(format_interval(&iv(0, 0, 30 * US_PER_HOUR)), "30:00:00");
        for s in [
            "00:00:10",
            "01:30:00",
            "2 days",
            "1 day 02:00:00",
            "1 mon",
            "-01:00:00",
            "-1 days +02:00:00",
            "1 day -01:00:00",
            "3 years 1 mon 00:00:00.25",
        ] {
            assert_eq!(format_interval(&parse_interval(s).unwrap()), s);
        }
    }

    #[test]
    fn fixed_length_rejects_months() {
        assert_eq!(fixed_length_us(&iv(0, 2, 0)).unwrap(), 48 * US_PER_HOUR);
        assert_eq!(fixed_length_us(&iv(0, 0, 10)).unwrap(), 10);
        let e = fixed_length_us(&iv(1, 0, 0)).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidParameterValue(m) if m.contains("has no fixed length: months and years vary in length"))
        );
    }

    #[test]
    fn timestamp_arithmetic() {
        let t = parse_timestamp("2001-01-31 10:00").unwrap();
        let plus_month = timestamp_add_interval(t, &iv(1, 0, 0)).unwrap();
        assert_eq!(format_timestamp(plus_month), "2001-02-28 10:00:00");
        let d = timestamp_diff(
            parse_timestamp("2001-01-02 01:00").unwrap(),
            parse_timestamp("2001-01-01").unwrap(),
        )
        .unwrap();
        assert_eq!(format_interval(&d), "1 day 01:00:00");
        assert_eq!(
            civil_from_days(days_from_civil(-4713, 11, 24)),
            (-4713, 11, 24)
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::time::{format_interval, format_timestamp, parse_interval, parse_timestamp};
        let t = parse_timestamp("2001-01-01 00:05:00").unwrap();
        assert_eq!(t, 978_307_500_000_000);
        assert_eq!(format_timestamp(t), "2001-01-01 00:05:00");
        let i = parse_interval("1 hour 30 minutes").unwrap();
        assert_eq!(format_interval(&i), "01:30:00");
    }

    #[test]
    fn parse_timestamp_example() {
        use crate::time::parse_timestamp;
        assert_eq!(parse_timestamp("1970-01-01 02:00+02").unwrap(), 0);
        assert_eq!(parse_timestamp("epoch").unwrap(), 0);
    }

    #[test]
    fn parse_interval_example() {
        use crate::time::parse_interval;
        let i = parse_interval("1 day 02:00:00").unwrap();
        assert_eq!((i.months, i.days, i.micros), (0, 1, 7_200_000_000));
    }
}
