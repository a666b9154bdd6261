//! `to_char(value, format)`: PostgreSQL's formatting of numbers, timestamps and intervals
//! by a template, for the patterns people write.
//!
//! Numbers: `9` (a digit, a blank where a leading zero would be), `0` (a digit, zeros
//! kept), `.`/`D` (the decimal point), `,`/`G` (a group separator, blank before the first
//! digit), `S`, `MI`, `PL`, `SG` and `PR` (where the sign goes), `FM` (no padding, no
//! trailing zeros of `9` places). Without a sign pattern a blank or `-` goes just before
//! the first digit, and a value with more integer digits than the template has is `#`s.
//! Rounding is half away from zero for integers and numerics, and as `printf` rounds the
//! binary value for floats, as in PostgreSQL.
//!
//! Dates and times: `YYYY`, `YYY`, `YY`, `Y`, `Y,YYY`, `IYYY`, `CC`, `Q`, `MM`, `MON`/`Mon`/
//! `mon`, `MONTH`/`Month`/`month`, `WW`, `IW`, `W`, `DDD`, `DD`, `D`, `ID`, `DAY`/`Day`/`day`,
//! `DY`/`Dy`/`dy`, `J`, `HH24`, `HH12`/`HH`, `MI`, `SS`, `MS`, `US`, `SSSS`, `AM`/`PM`
//! (and `am`, `A.M.`, ...), `TZ`, `OF`, the `FM` prefix and the `TH`/`th` suffix, `"text"`
//! and `\` escapes; anything else is copied.
//!
//! Design decision: one left-to-right pass over the template per value, with no cached
//! parse: templates are short and the cost is small next to the formatting itself.

use rust_decimal::RoundingStrategy;

use crate::error::{Error, Result};
use crate::time::{self, US_PER_DAY, US_PER_SEC};
use crate::types::Value;

/// `to_char(v, fmt)` for a value of any type `to_char` takes.
pub(crate) fn to_char(v: &Value, fmt: &str) -> Result<Value> {
    let out = match v {
        Value::Timestamp(t) => datetime(&wall_fields(*t, None), fmt)?,
        Value::TimestampTz(t) => {
            let offset = crate::tz::current_offset_at(*t);
            let local = t.saturating_add(i64::from(offset) * US_PER_SEC);
            let mut tm = wall_fields(local, Some(offset));
            tm.instant = Some(*t);
            datetime(&tm, fmt)?
        }
        Value::Interval(iv) => datetime(&interval_fields(iv), fmt)?,
        _ => number(v, fmt)?,
    };
    Ok(Value::Text(out.into()))
}

// ---------------------------------------------------------------- numbers

/// The pieces of a number template.
#[derive(Clone, Copy, PartialEq, Debug)]
enum NumTok {
    Nine,
    Zero,
    Point,
    Group,
    /// `S`: the sign, `+` or `-`.
    Sign,
    /// `MI`: `-` or a blank.
    Minus,
    /// `PL`: `+` or a blank.
    Plus,
    /// `SG`: `+` or `-`.
    SignGlyph,
    Lit(char),
}

/// A number template's pieces, whether it has `FM`, and where (in the pieces) its first
/// `PR` is.
fn number_tokens(fmt: &str) -> (Vec<NumTok>, bool, Option<usize>) {
    let chars: Vec<char> = fmt.chars().collect();
    let (mut out, mut fill, mut pr) = (Vec::new(), false, None);
    let mut i = 0;
    while i < chars.len() {
        // Two-letter patterns are all upper or all lower case (`PR`, `pr`), as PostgreSQL's
        // keywords are; `Pr` is two literal letters.
        let raw: String = chars[i..].iter().take(2).collect();
        let rest = raw.to_uppercase();
        let rest = if raw == rest || raw == raw.to_lowercase() {
            rest
        } else {
            String::new()
        };
        let (tok, n) = match (chars[i], rest.as_str()) {
            (_, "FM") => {
                fill = true;
                i += 2;
                continue;
            }
            (_, "PR") => {
                pr.get_or_insert(out.len());
                i += 2;
                continue;
            }
            (_, "MI") => (NumTok::Minus, 2),
            (_, "PL") => (NumTok::Plus, 2),
            (_, "SG") => (NumTok::SignGlyph, 2),
            ('9', _) => (NumTok::Nine, 1),
            ('0', _) => (NumTok::Zero, 1),
            ('.' | 'D' | 'd', _) => (NumTok::Point, 1),
            (',' | 'G' | 'g', _) => (NumTok::Group, 1),
            ('S' | 's', _) => (NumTok::Sign, 1),
            (c, _) => (NumTok::Lit(c), 1),
        };
        out.push(tok);
        i += n;
    }
    (out, fill, pr)
}

/// The value's digits rounded to `places` decimals: (negative, integer digits without
/// leading zeros, exactly `places` fraction digits).
fn number_digits(v: &Value, places: usize) -> Result<(bool, String, String)> {
    let text = match v {
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => {
            let i = v.as_i64().expect("an integer");
            format!(
                "{}{}{}",
                i,
                if places > 0 { "." } else { "" },
                "0".repeat(places)
            )
        }
        Value::Float4(f) => {
            let f = f64::from(*f);
            format!("{:.*}", float_places(f, places, 6), f)
        }
        Value::Float8(f) => format!("{:.*}", float_places(*f, places, 15), f),
        Value::Numeric(d) => {
            let mut r = d.round_dp_with_strategy(
                places.min(28) as u32,
                RoundingStrategy::MidpointAwayFromZero,
            );
            r.rescale(places.min(28) as u32);
            let mut s = r.to_string();
            if places > 28 {
                s.push_str(&"0".repeat(places - 28));
            }
            s
        }
        other => {
            return Err(Error::Internal(format!(
                "to_char of a {other:?}: the binder types its arguments"
            )))
        }
    };
    let negative = text.starts_with('-');
    let body = text.trim_start_matches(['-', '+']);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let int = int.trim_start_matches('0').to_string();
    Ok((negative, int, frac.to_string()))
}

/// The fraction digits a float shows: PostgreSQL keeps a float's digits within its
/// precision (`DBL_DIG` 15, `FLT_DIG` 6), dropping fraction places past it.
fn float_places(f: f64, places: usize, precision: usize) -> usize {
    let int_digits = format!("{:.0}", f.abs()).len();
    if int_digits >= precision {
        0
    } else {
        places.min(precision - int_digits)
    }
}

/// `to_char(v, '9.99EEEE')`: scientific notation, a sign column (blank or `-`), one
/// integer digit, the template's fraction digits and an exponent of at least two digits
/// (`' 1.00e+10'`). Numerics round half away from zero, floats as C's `%e` does.
fn scientific(v: &Value, fmt: &str) -> Result<String> {
    let frac = fmt.split_once('.').map_or(0, |(_, f)| {
        f.chars().take_while(|c| matches!(c, '9' | '0')).count()
    });
    let (negative, mantissa, exp) = match v {
        Value::Numeric(d) if !d.is_zero() => {
            let digits = d.mantissa().unsigned_abs().to_string();
            let mut exp = digits.len() as i64 - 1 - i64::from(d.scale());
            let mut m = rust_decimal::Decimal::from_str_exact(&digits)
                .map_err(|e| Error::Internal(e.to_string()))?;
            m.set_scale(digits.len() as u32 - 1)
                .map_err(|e| Error::Internal(e.to_string()))?;
            let mut m = m.round_dp_with_strategy(
                frac.min(27) as u32,
                RoundingStrategy::MidpointAwayFromZero,
            );
            if m >= rust_decimal::Decimal::TEN {
                m /= rust_decimal::Decimal::TEN;
                exp += 1;
            }
            m.rescale(frac.min(27) as u32);
            (d.is_sign_negative(), m.to_string(), exp)
        }
        Value::Numeric(_) => (false, format!("{:.*}", frac, 0.0), 0),
        other => {
            let f = match other {
                Value::Float4(f) => f64::from(*f),
                Value::Float8(f) => *f,
                _ => other.as_i64().expect("an integer") as f64,
            };
            let text = format!("{:.*e}", frac, f.abs());
            let (m, e) = text.split_once('e').unwrap_or((&text, "0"));
            (f < 0.0, m.to_string(), e.parse().unwrap_or(0))
        }
    };
    Ok(format!(
        "{}{mantissa}e{}{:02}",
        if negative { '-' } else { ' ' },
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    ))
}

fn number(v: &Value, fmt: &str) -> Result<String> {
    let plain = matches!(
        v,
        Value::Int2(_)
            | Value::Int4(_)
            | Value::Int8(_)
            | Value::Float4(_)
            | Value::Float8(_)
            | Value::Numeric(_)
    );
    if plain && fmt.to_ascii_uppercase().contains("EEEE") {
        return scientific(v, fmt);
    }
    if let Some(lower) = roman_template(fmt) {
        return roman(v, fmt.len() > 2, lower);
    }
    let (toks, fill, pr_at) = number_tokens(fmt);
    let pr = pr_at.is_some();
    sign_conflict(&toks, pr)?;
    digits_before_pr(&toks, pr_at)?;
    let is_digit = |t: &NumTok| matches!(t, NumTok::Nine | NumTok::Zero);
    let point = toks.iter().position(|t| *t == NumTok::Point);
    let int_places = toks[..point.unwrap_or(toks.len())]
        .iter()
        .filter(|t| is_digit(t))
        .count();
    let frac_places = point.map_or(0, |p| toks[p..].iter().filter(|t| is_digit(t)).count());
    let (negative, mut int, frac) = number_digits(v, frac_places)?;
    if int.is_empty() && frac_places == 0 {
        // A zero integer part shows its one digit where no fraction follows (`    0`);
        // before a fraction it is a blank (`  .50`), as PostgreSQL writes it.
        int.push('0');
    }
    let overflow = int.len() > int_places;
    let first_digit = toks.iter().position(|t| is_digit(t) || *t == NumTok::Point);
    // An `S` before the digits is anchored to the number, as the implicit sign is.
    let anchored = toks
        .iter()
        .position(|t| *t == NumTok::Sign)
        .is_some_and(|s| first_digit.is_none_or(|d| s < d));
    // PL writes a plus beside the implicit sign, which stays (`+ 123`, ` -123`).
    let explicit = toks
        .iter()
        .any(|t| matches!(t, NumTok::Minus | NumTok::SignGlyph))
        || (toks.contains(&NumTok::Sign) && !anchored)
        || pr;
    let mut out = String::new();
    let (mut int_seen, mut started, mut after_point) = (0, false, false);
    let mut started_int = false;
    let mut frac_digits = frac.chars();
    // Positions in `out` of fraction digits written for `9` places (FM trims their zeros).
    let mut nines: Vec<usize> = Vec::new();
    let mut sign_at: Option<usize> = None;
    for t in &toks {
        match t {
            NumTok::Nine | NumTok::Zero if !after_point => {
                let k = int_places - int_seen; // 1-based place counted from the point
                int_seen += 1;
                if overflow {
                    sign_at.get_or_insert(out.len());
                    out.push('#');
                } else if k > int.len() && *t == NumTok::Nine && !started {
                    if !fill {
                        out.push(' ');
                    }
                } else {
                    if !started {
                        started = true;
                        sign_at = Some(out.len());
                    }
                    started_int = true;
                    out.push(
                        int.as_bytes()
                            .get(int.len().wrapping_sub(k))
                            .map_or('0', |b| *b as char),
                    );
                }
            }
            NumTok::Nine | NumTok::Zero => {
                if *t == NumTok::Nine {
                    nines.push(out.len());
                } else {
                    nines.clear();
                }
                // A float past its precision has fewer fraction digits than places.
                match frac_digits.next() {
                    Some(d) => out.push(if overflow { '#' } else { d }),
                    None => {
                        nines.pop_if(|at| *at == out.len());
                    }
                }
            }
            NumTok::Point => {
                if !started {
                    started = true;
                    sign_at.get_or_insert(out.len());
                }
                after_point = true;
                out.push('.');
            }
            NumTok::Group if started || overflow => out.push(','),
            NumTok::Group if !fill => out.push(' '),
            NumTok::Group => {}
            NumTok::Sign if anchored => {}
            NumTok::Sign | NumTok::SignGlyph => out.push(if negative { '-' } else { '+' }),
            NumTok::Minus if negative => out.push('-'),
            NumTok::Minus if !fill => out.push(' '),
            NumTok::Minus => {}
            NumTok::Plus if !negative => out.push('+'),
            NumTok::Plus if !fill => out.push(' '),
            NumTok::Plus => {}
            NumTok::Lit(c) => out.push(*c),
        }
    }
    if fill {
        // FM drops the trailing zeros of `9` places at the end of the fraction.
        while let Some(&at) = nines.last() {
            if out.as_bytes()[at] != b'0' || at + 1 != out.len() {
                break;
            }
            out.pop();
            nines.pop();
        }
        // A zero whose fraction FM dropped entirely keeps its digit (`0.`).
        if !started_int && !overflow && out.ends_with('.') {
            out.insert(out.len() - 1, '0');
        }
    }
    if pr {
        // `<` takes the implicit sign's place beside the number (` <12>`), `>` the end.
        let at = sign_at.unwrap_or(out.len());
        return Ok(match (negative, fill) {
            (true, _) => format!("{}<{}>", &out[..at], &out[at..]),
            (false, true) => out,
            (false, false) => format!("{} {} ", &out[..at], &out[at..]),
        });
    }
    if explicit {
        return Ok(out);
    }
    let sign = match (negative, anchored, fill) {
        (true, _, _) => "-",
        (false, true, _) => "+",
        (false, false, true) => "",
        (false, false, false) => " ",
    };
    // The sign has its own place, just before the first digit (or the point).
    let at = sign_at.unwrap_or(out.len());
    Ok(format!("{}{sign}{}", &out[..at], &out[at..]))
}

/// 42601 for a `9` or `0` after `PR` (at piece `pr_at`), with PostgreSQL's message.
fn digits_before_pr(toks: &[NumTok], pr_at: Option<usize>) -> Result<()> {
    let after = pr_at.map_or(&[][..], |at| &toks[at..]);
    let digit = after.iter().find_map(|t| match t {
        NumTok::Nine => Some('9'),
        NumTok::Zero => Some('0'),
        _ => None,
    });
    match digit {
        Some(d) => Err(Error::Syntax(format!(r#""{d}" must be ahead of "PR""#))),
        None => Ok(()),
    }
}

/// 42601 for `S` beside `PL`, `MI`, `SG` or `PR`, with PostgreSQL's message for the one
/// written second.
fn sign_conflict(toks: &[NumTok], pr: bool) -> Result<()> {
    let (mut s, mut plus, mut minus) = (false, false, false);
    for t in toks {
        let clash = match t {
            NumTok::Sign if plus || minus => Some(r#""S" and "PL"/"MI"/"SG"/"PR""#),
            NumTok::Sign => {
                s = true;
                None
            }
            NumTok::Plus if s => Some(r#""S" and "PL""#),
            NumTok::Minus if s => Some(r#""S" and "MI""#),
            NumTok::SignGlyph if s => Some(r#""S" and "SG""#),
            NumTok::Plus => {
                plus = true;
                None
            }
            NumTok::Minus => {
                minus = true;
                None
            }
            NumTok::SignGlyph => {
                (plus, minus) = (true, true);
                None
            }
            _ => None,
        };
        if let Some(c) = clash {
            return Err(Error::Syntax(format!("cannot use {c} together")));
        }
    }
    if pr && (s || plus || minus) {
        return Err(Error::Syntax(
            r#"cannot use "PR" and "S"/"PL"/"MI"/"SG" together"#.into(),
        ));
    }
    Ok(())
}

/// Whether `fmt` is the Roman numeral template (`RN`, `rn`, with or without `FM`):
/// `Some(lower case)`.
fn roman_template(fmt: &str) -> Option<bool> {
    let rest = fmt
        .strip_prefix("FM")
        .or_else(|| fmt.strip_prefix("fm"))
        .unwrap_or(fmt);
    match rest {
        "RN" => Some(false),
        "rn" => Some(true),
        _ => None,
    }
}

/// `to_char(v, 'RN')`: `v` rounded to an integer in Roman numerals, right-aligned in 15
/// places (FM: not padded), lower case for `rn`; `###############` outside 1..3999, as
/// PostgreSQL writes them.
fn roman(v: &Value, fill: bool, lower: bool) -> Result<String> {
    let n = match v {
        Value::Float4(f) => f64::from(*f).round_ties_even(),
        Value::Float8(f) => f.round_ties_even(),
        Value::Numeric(d) => d
            .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
            .try_into()
            .unwrap_or(f64::MAX),
        other => other.as_i64().map_or(f64::MAX, |i| i as f64),
    };
    if !(1.0..=3999.0).contains(&n) {
        return Ok("#".repeat(15));
    }
    const DIGITS: [(u32, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut n = n as u32;
    let mut out = String::new();
    for (value, glyphs) in DIGITS {
        while n >= value {
            out.push_str(glyphs);
            n -= value;
        }
    }
    if lower {
        out.make_ascii_lowercase();
    }
    Ok(if fill { out } else { format!("{out:>15}") })
}

// ---------------------------------------------------------------- dates and times

/// The date/time template patterns, as PostgreSQL's formatting.c lists them (`DCH_keywords`):
/// case matters (`Month`, `MONTH` and `month` are patterns, `MOnth` is text), and at each
/// position of a template the first name of this list that starts there is the pattern, so
/// longer names come before their prefixes (`HH24` before `HH`, `DDD` before `DD`).
/// `to_char` writes them and `to_date`/`to_timestamp` ([`crate::expr_format_parse`]) read them.
pub(crate) const PATTERNS: &[&str] = &[
    "A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
    "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW",
    "IYYY", "IYY", "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon", "OF", "P.M.",
    "PM", "Q", "RM", "SSSSS", "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY",
    "YYY", "YY", "Y", "a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy",
    "d", "ff1", "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12", "hh", "iddd", "id", "iw",
    "iyyy", "iyy", "iy", "i", "j", "mi", "mm", "month", "mon", "ms", "of", "p.m.", "pm", "q", "rm",
    "sssss", "ssss", "ss", "tzh", "tzm", "tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy", "yy", "y",
];

/// The pattern of [`PATTERNS`] that `s` starts with, as written (`Mon`), if any.
pub(crate) fn pattern_at(s: &str) -> Option<&'static str> {
    PATTERNS.iter().copied().find(|p| s.starts_with(p))
}

/// True when the pattern (upper-cased) reads digits: a number just before such a pattern
/// is read at its fixed width, one before any other up to its first non-digit.
pub(crate) fn pattern_reads_digits(key: &str) -> bool {
    !matches!(
        key,
        "A.D."
            | "A.M."
            | "AD"
            | "AM"
            | "B.C."
            | "BC"
            | "DAY"
            | "DY"
            | "FX"
            | "MONTH"
            | "MON"
            | "OF"
            | "P.M."
            | "PM"
            | "RM"
            | "TZ"
            | "TZH"
    )
}

/// Broken-down time for the template: year (astronomical), month, day, hour (of the day,
/// or the interval's whole hours), minute, second, microsecond, day of year, day of week
/// (0 = Sunday), Julian day, zone offset in seconds.
struct Tm {
    wall: time::WallFields,
    yday: i64,
    wday: i64,
    julian: i64,
    offset: Option<i32>,
    /// An interval's fields (era, zone and offset patterns are refused for it).
    interval: bool,
    /// The instant of a `timestamptz` (Unix microseconds), whose zone abbreviation `TZ`
    /// writes; `None` for other values (`TZ` writes nothing for them).
    instant: Option<i64>,
}

impl std::ops::Deref for Tm {
    type Target = time::WallFields;
    fn deref(&self) -> &time::WallFields {
        &self.wall
    }
}

fn wall_fields(us: i64, offset: Option<i32>) -> Tm {
    let days = us.div_euclid(US_PER_DAY);
    let wall = time::wall_fields(us);
    let yday = days - time::days_from_civil(wall.year, 1, 1) + 1;
    Tm {
        wall,
        yday,
        wday: (days + 4).rem_euclid(7),
        julian: days + 2_440_588,
        offset,
        interval: false,
        instant: None,
    }
}

fn interval_fields(iv: &crate::types::Interval) -> Tm {
    Tm {
        wall: time::WallFields::of(
            i64::from(iv.months / 12),
            i64::from(iv.months % 12),
            i64::from(iv.days),
            iv.micros,
        ),
        yday: 0,
        wday: 0,
        julian: 0,
        offset: None,
        interval: true,
        instant: None,
    }
}

pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
pub(crate) const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// The ISO 8601 (year, week) of a date.
fn iso_week(tm: &Tm) -> (i64, i64) {
    let days = time::days_from_civil(tm.year, tm.month as u32, tm.day as u32);
    let iso_dow = (days + 3).rem_euclid(7); // 0 = Monday
    let thursday = days - iso_dow + 3;
    let (y, _, _) = time::civil_from_days(thursday);
    let week = (thursday - time::days_from_civil(y, 1, 1)) / 7 + 1;
    (y, week)
}

fn ordinal(n: i64, upper: bool) -> &'static str {
    let s = match (n % 100, n % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    match (upper, s) {
        (false, s) => s,
        (true, "st") => "ST",
        (true, "nd") => "ND",
        (true, "rd") => "RD",
        (true, _) => "TH",
    }
}

/// A name in the case the keyword was written in (`MONTH`, `Month`, `month`), padded to
/// nine characters unless `fill`.
fn name(word: &str, written: &str, pad: usize, fill: bool) -> String {
    let s = if written.chars().all(|c| c.is_ascii_uppercase()) {
        word.to_uppercase()
    } else if written.chars().all(|c| c.is_ascii_lowercase()) {
        word.to_lowercase()
    } else {
        word.to_string()
    };
    if fill {
        s
    } else {
        format!("{s:<pad$}")
    }
}

/// The numeric patterns `to_char` writes (upper-cased names of [`PATTERNS`]).
const NUMERIC_KEYS: &[&str] = &[
    "Y,YYY", "HH24", "HH12", "IYYY", "IYY", "IY", "I", "IDDD", "SSSSS", "SSSS", "YYYY", "DDD",
    "YYY", "HH", "MI", "SS", "MS", "US", "YY", "MM", "DD", "WW", "IW", "CC", "ID", "OF", "Y", "D",
    "Q", "W", "J",
];

/// The name patterns `to_char` writes, as written in a template.
const NAME_KEYS: &[&str] = &[
    "MONTH", "Month", "month", "MON", "Mon", "mon", "DAY", "Day", "day", "DY", "Dy", "dy", "A.M.",
    "P.M.", "a.m.", "p.m.", "AM", "PM", "am", "pm", "TZ", "tz",
];

fn numeric_key(tm: &Tm, key: &str) -> (i64, usize) {
    let year = if tm.year <= 0 { 1 - tm.year } else { tm.year };
    let hour12 = match tm.hour % 12 {
        0 => 12,
        h => h,
    };
    match key {
        "YYYY" => (year, 4),
        "YYY" => (year % 1000, 3),
        "YY" => (year % 100, 2),
        "Y" => (year % 10, 1),
        "IYYY" => (iso_week(tm).0, 4),
        "IYY" => (iso_week(tm).0 % 1000, 3),
        "IY" => (iso_week(tm).0 % 100, 2),
        "I" => (iso_week(tm).0 % 10, 1),
        "IDDD" => {
            let iso_dow = if tm.wday == 0 { 7 } else { tm.wday };
            ((iso_week(tm).1 - 1) * 7 + iso_dow, 3)
        }
        "CC" => ((year + 99) / 100, 2),
        "Q" => ((tm.month + 2) / 3, 1),
        "MM" => (tm.month, 2),
        "WW" => ((tm.yday - 1) / 7 + 1, 2),
        "IW" => (iso_week(tm).1, 2),
        "W" => ((tm.day - 1) / 7 + 1, 1),
        "DDD" => (tm.yday, 3),
        "DD" => (tm.day, 2),
        "D" => (tm.wday + 1, 1),
        "ID" => (if tm.wday == 0 { 7 } else { tm.wday }, 1),
        "J" => (tm.julian, 1),
        "HH24" => (tm.hour, 2),
        "HH12" | "HH" => (hour12, 2),
        "MI" => (tm.minute, 2),
        "SS" => (tm.second, 2),
        "MS" => (tm.micros / 1000, 3),
        "US" => (tm.micros, 6),
        _ => (tm.hour * 3600 + tm.minute * 60 + tm.second, 1),
    }
}

fn name_key(tm: &Tm, key: &str, fill: bool) -> String {
    let month = MONTHS[(tm.month.clamp(1, 12) - 1) as usize];
    let day = DAYS[tm.wday as usize];
    let pm = tm.hour % 24 >= 12;
    match key {
        "MONTH" | "Month" | "month" => name(month, key, 9, fill),
        "MON" | "Mon" | "mon" => name(&month[..3], key, 3, true),
        "DAY" | "Day" | "day" => name(day, key, 9, fill),
        "DY" | "Dy" | "dy" => name(&day[..3], key, 3, true),
        "AM" | "PM" => (if pm { "PM" } else { "AM" }).into(),
        "am" | "pm" => (if pm { "pm" } else { "am" }).into(),
        "A.M." | "P.M." => (if pm { "P.M." } else { "A.M." }).into(),
        "a.m." | "p.m." => (if pm { "p.m." } else { "a.m." }).into(),
        _ => match tm.instant {
            Some(us) => {
                let abbreviation = crate::tz::current_abbreviation_at(us);
                if key == "TZ" {
                    abbreviation
                } else {
                    abbreviation.to_lowercase()
                }
            }
            None => String::new(),
        },
    }
}

fn offset_text(o: i32) -> String {
    let sign = if o < 0 { '-' } else { '+' };
    let (h, m) = (o.abs() / 3600, o.abs() / 60 % 60);
    if m == 0 {
        format!("{sign}{h:02}")
    } else {
        format!("{sign}{h:02}:{m:02}")
    }
}

/// Roman numerals of the months, January first (`RM`).
const ROMAN_MONTHS: [&str; 12] = [
    "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII",
];

/// The era (`AD`, `B.C.`, ...), Roman month (`RM`, `rm`), zone displacement (`TZH`, `TZM`)
/// and second fraction (`FF1`..`FF6`) patterns, as PostgreSQL 15's `DCH_to_char` writes
/// them; `None` for other patterns. A timestamp without time zone has offset +00:00.
/// Errors: 22007 for an era or zone pattern of an interval.
fn era_zone_fraction(tm: &Tm, pat: &str, fill: bool) -> Result<Option<String>> {
    let key = pat.to_ascii_uppercase();
    let zoned = matches!(key.as_str(), "TZH" | "TZM" | "TZ" | "OF");
    let era = matches!(key.as_str(), "AD" | "BC" | "A.D." | "B.C.");
    if tm.interval && (zoned || era) {
        return Err(Error::InvalidDatetimeFormat(
            "invalid format specification for an interval value".into(),
        )
        .with_hint("Intervals are not tied to specific calendar dates."));
    }
    let offset = tm.offset.unwrap_or(0);
    let text = match key.as_str() {
        _ if era => {
            let bc = tm.year <= 0;
            let upper = pat.starts_with(|c: char| c.is_ascii_uppercase());
            let word = match (bc, pat.contains('.')) {
                (false, false) => "AD",
                (true, false) => "BC",
                (false, true) => "A.D.",
                (true, true) => "B.C.",
            };
            if upper {
                word.to_string()
            } else {
                word.to_ascii_lowercase()
            }
        }
        "RM" => {
            let Some(m) = roman_month(tm) else {
                return Ok(Some(String::new()));
            };
            let m = if pat == "RM" {
                m.to_string()
            } else {
                m.to_ascii_lowercase()
            };
            if fill {
                m
            } else {
                format!("{m:<4}")
            }
        }
        "TZH" => format!(
            "{}{:02}",
            if offset < 0 { '-' } else { '+' },
            offset.abs() / 3600
        ),
        "TZM" => format!("{:02}", offset.abs() % 3600 / 60),
        "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
            let digits = usize::from(key.as_bytes()[2] - b'0');
            let scaled = tm.micros / 10i64.pow(6 - digits as u32);
            format!("{:0digits$}", scaled)
        }
        _ => return Ok(None),
    };
    Ok(Some(text))
}

/// The Roman numeral `RM` writes: the month of a date; for an interval its months past the
/// whole years (`XII` for whole positive years, `I` for negative ones, counted back from
/// December when negative), nothing for an interval of no years and no months.
fn roman_month(tm: &Tm) -> Option<&'static str> {
    let m = tm.month;
    if !tm.interval {
        return Some(ROMAN_MONTHS[(m.clamp(1, 12) - 1) as usize]);
    }
    match m {
        0 if tm.year == 0 => None,
        0 => Some(if tm.year >= 0 { "XII" } else { "I" }),
        m if m < 0 => Some(ROMAN_MONTHS[(12 + m) as usize]),
        m => Some(ROMAN_MONTHS[(m - 1) as usize]),
    }
}

fn datetime(tm: &Tm, fmt: &str) -> Result<String> {
    let chars: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..].iter().collect();
        let mut at = rest.as_str();
        let fill = ["FM", "fm"].iter().any(|p| rest.starts_with(p));
        if let Some(prefix) = ["FM", "fm", "TM", "tm"]
            .iter()
            .find(|p| rest.starts_with(**p))
        {
            at = &at[prefix.len()..];
        }
        let prefix = rest.len() - at.len();
        if let Some(pat) = pattern_at(at) {
            i += prefix + pat.chars().count();
            let key = pat.to_ascii_uppercase();
            if let Some(text) = era_zone_fraction(tm, pat, fill)? {
                out.push_str(&text);
            } else if NAME_KEYS.contains(&pat) {
                // `TM` (translation mode) names are not padded either.
                out.push_str(&name_key(tm, pat, prefix > 0));
            } else if key == "OF" {
                out.push_str(&tm.offset.map(offset_text).unwrap_or_else(|| "+00".into()));
            } else if key == "Y,YYY" {
                let y = numeric_key(tm, "YYYY").0;
                out.push_str(&format!("{},{:03}", y / 1000, y % 1000));
            } else if NUMERIC_KEYS.contains(&key.as_str()) {
                let (n, width) = numeric_key(tm, &key);
                let neg = if n < 0 { "-" } else { "" };
                if fill {
                    out.push_str(&format!("{neg}{}", n.abs()));
                } else {
                    out.push_str(&format!("{neg}{:0width$}", n.abs()));
                }
                let after: String = chars[i..].iter().take(2).collect();
                if after == "TH" || after == "th" {
                    out.push_str(ordinal(n, after == "TH"));
                    i += 2;
                }
            }
            continue;
        }
        match chars[i] {
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    out.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '\\' if i + 1 < chars.len() => {
                out.push(chars[i + 1]);
                i += 2;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(v: Value, f: &str) -> String {
        to_char(&v, f).unwrap().to_text().unwrap()
    }

    /// Each expected text is PostgreSQL 15's for the same call.
    #[test]
    fn numbers_format_as_postgresql() {
        let n = |s: &str| Value::Numeric(s.parse().unwrap());
        for (v, f, pg) in [
            (Value::Int4(1), "999D99", "   1.00"),
            (Value::Int4(0), "999D99", "    .00"),
            (Value::Int4(-3), "999D99", "  -3.00"),
            (n("0.5"), "999D99", "    .50"),
            (n("-0.5"), "999D99", "   -.50"),
            (Value::Float8(1e10), "999D99", " ###.##"),
            (n("1234.567"), "FM9,999.00", "1,234.57"),
            (n("1234.5"), "9G999D9S", "1,234.5+"),
            (Value::Int4(-12), "S999", " -12"),
            (Value::Int4(7), "000", " 007"),
            (Value::Int4(-7), "000", "-007"),
            (Value::Float4(421.36), "999D99", " 421.36"),
            (Value::Float8(-0.0), "999D99", "   -.00"),
            (Value::Int4(12), "FM999", "12"),
            (n("12.5"), "FM999.99", "12.5"),
            (n("-12.5"), "MI99.9", "-12.5"),
            (n("12.5"), "99.9PR", " 12.5 "),
            (n("-12.5"), "99.9PR", "<12.5>"),
            (n("-12"), "999PR", " <12>"),
            (n("12"), "999PR", "  12 "),
            (n("-1"), "999PRPR", "  <1>"),
            (n("-12.5"), "FM999.9PR", "<12.5>"),
            (Value::Int4(-1), "9pr", "<1>"),
            (Value::Int4(-1), "9Pr", "-1Pr"),
            (Value::Int4(-1), "9mI", "-1mI"),
        ] {
            assert_eq!(num(v.clone(), f), pg, "to_char({v:?}, {f})");
        }
    }

    #[test]
    fn timestamps_format_as_postgresql() {
        let ts = Value::Timestamp(time::parse_timestamp_naive("2024-06-15 12:34:56.789").unwrap());
        for (f, pg) in [
            ("YYYY-MM-DD HH24:MI", "2024-06-15 12:34"),
            ("Day, DD Month YYYY", "Saturday , 15 June      2024"),
            ("FMDay, FMDD FMMonth YYYY", "Saturday, 15 June 2024"),
            ("HH12:MI:SS.MS AM", "12:34:56.789 PM"),
            ("DDD IW Q \"quarter\" DDth", "167 24 2 quarter 15th"),
            ("Mon dy YY", "Jun sat 24"),
            ("YYYY AD B.C. bc a.d.", "2024 AD A.D. ad a.d."),
            ("RM|rm|FMRM|", "VI  |vi  |VI|"),
            (
                "HH24:MI:SS.FF1 FF2 FF3 FF4 FF5 FF6",
                "12:34:56.7 78 789 7890 78900 789000",
            ),
            ("TZH:TZM TZ OF", "+00:00  +00"),
        ] {
            assert_eq!(num(ts.clone(), f), pg, "to_char(ts, {f})");
        }
        let bc = Value::Timestamp(time::parse_timestamp_naive("0044-03-15 00:00:00 BC").unwrap());
        assert_eq!(num(bc, "YYYY BC A.D. RM"), "0044 BC B.C. III ");
        let iv = |months: i32| {
            let iv = crate::types::Interval {
                months,
                days: 0,
                micros: 0,
            };
            to_char(&Value::Interval(iv), "RM")
                .unwrap()
                .to_text()
                .unwrap()
        };
        assert_eq!(
            [iv(0), iv(14), iv(24), iv(-1), iv(-24)],
            ["", "II  ", "XII ", "XII ", "I   "]
        );
        let hour = crate::types::Interval {
            months: 0,
            days: 0,
            micros: 3_600_000_000,
        };
        for (f, msg) in [
            ("PR999", r#""9" must be ahead of "PR""#),
            ("FMPR0", r#""0" must be ahead of "PR""#),
        ] {
            let err = to_char(&Value::Int4(-12), f).unwrap_err();
            assert!(
                matches!(err.kind(), Error::Syntax(m) if m == msg),
                "{err:?}"
            );
        }
        let err = to_char(&Value::Interval(hour), "HH24 TZH").unwrap_err();
        assert!(
            matches!(err.kind(), Error::InvalidDatetimeFormat(_)),
            "{err:?}"
        );
    }
}
