//! `to_date(text, format)` and `to_timestamp(text, format)`: PostgreSQL 15's reading of a
//! date/time by a template (formatting.c's `DCH_from_char` and `do_to_timestamp`), with the
//! patterns `to_char` writes ([`crate::expr_format::PATTERNS`]).
//!
//! The rules, as PostgreSQL's: the template is split into patterns (with the `FM`/`TM`
//! prefixes and the `TH`/`th`/`SP` suffixes), `"quoted text"`, separators (ASCII
//! punctuation), spaces and other characters. Outside `FX` mode spaces before a field are
//! skipped, a template separator or space matches one input separator or space or nothing,
//! and a template character skips one input character. A number is read at the pattern's
//! width (`YYYY` four characters) unless `FM` is given or the next template item is not a
//! digit field, when it runs to its first non-digit. Names (`Mon`, `Day`, `AM`, `BC`) match
//! case-insensitively. Input left over after the template, or template left after the
//! input, is ignored. `YYY`, `YY` and `Y` read fewer than four digits as the year nearest
//! 2020; `CC` with a two-digit year picks the century.
//!
//! Errors (SQLSTATE as PostgreSQL's): 22007 for input a pattern cannot read, a source
//! string too short for a fixed-width field, conflicting values for one field, an hour
//! outside 1..12 with `AM`/`PM`, ISO and Gregorian patterns mixed; 22008 for a field value
//! out of range (`to_date('2001-13-01', 'YYYY-MM-DD')`) or a result out of range; 22009 for
//! a `TZH`/`TZM` zone displacement out of range; 0A000 for `TZ` and `OF`, which only
//! `to_char` writes.

use crate::error::{Error, Result};
use crate::expr_format::{pattern_at, pattern_reads_digits, DAYS, MONTHS};
use crate::time::{self, US_PER_DAY, US_PER_SEC};

/// One item of a parsed template.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Node {
    /// A pattern: its name as written (`Mon`), its upper-cased name, the `FM` prefix and
    /// a `TH`/`th` suffix.
    Field {
        name: &'static str,
        key: &'static str,
        fill: bool,
        th: bool,
    },
    /// A space character of the template.
    Space,
    /// A separator: ASCII punctuation outside double quotes.
    Separator,
    /// Any other character, or one inside double quotes.
    Char(char),
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

fn is_separator(c: char) -> bool {
    c.is_ascii_graphic() && !c.is_ascii_alphanumeric()
}

/// The template split into its items, as formatting.c's `parse_format` does.
fn template(fmt: &str) -> Vec<Node> {
    let mut nodes = Vec::new();
    let mut rest = fmt;
    while !rest.is_empty() {
        let mut fill = false;
        if let Some(prefix) = ["FM", "fm", "TM", "tm"]
            .iter()
            .find(|p| rest.starts_with(**p))
        {
            fill = prefix.eq_ignore_ascii_case("FM");
            rest = &rest[2..];
        }
        if let Some(name) = pattern_at(rest) {
            rest = &rest[name.len()..];
            let th = rest.starts_with("TH") || rest.starts_with("th");
            if th || rest.starts_with("SP") {
                rest = &rest[2..];
            }
            nodes.push(Node::Field {
                name,
                key: upper_key(name),
                fill,
                th,
            });
            continue;
        }
        let mut chars = rest.chars();
        let Some(mut c) = chars.next() else { break };
        if c == '"' {
            let mut escaped = false;
            for q in chars.by_ref() {
                match (q, escaped) {
                    ('"', false) => break,
                    ('\\', false) => escaped = true,
                    _ => {
                        nodes.push(Node::Char(q));
                        escaped = false;
                    }
                }
            }
            rest = chars.as_str();
            continue;
        }
        if c == '\\' && chars.as_str().starts_with('"') {
            c = chars.next().unwrap_or('"');
        }
        nodes.push(if is_separator(c) {
            Node::Separator
        } else if is_space(c) {
            Node::Space
        } else {
            Node::Char(c)
        });
        rest = chars.as_str();
    }
    nodes
}

/// The pattern's upper-case name, the one table entry spelled so.
fn upper_key(name: &'static str) -> &'static str {
    let upper = name.to_ascii_uppercase();
    crate::expr_format::PATTERNS
        .iter()
        .copied()
        .find(|p| *p == upper)
        .unwrap_or(name)
}

/// Which calendar the date patterns used: none yet, Gregorian or ISO 8601 week dates.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Mode {
    #[default]
    None,
    Gregorian,
    IsoWeek,
}

/// The fields read from the input (formatting.c's `TmFromChar`); 0 means not given.
#[derive(Debug, Default)]
struct Fields {
    mode: Mode,
    hh: i64,
    pm: i64,
    mi: i64,
    ss: i64,
    ssss: i64,
    d: i64,
    dd: i64,
    ddd: i64,
    mm: i64,
    ms: i64,
    year: i64,
    bc: i64,
    ww: i64,
    w: i64,
    cc: i64,
    j: i64,
    us: i64,
    yysz: i64,
    clock12: bool,
    tzsign: i64,
    tzh: i64,
    tzm: i64,
}

fn bad_format(msg: String) -> Error {
    Error::InvalidDatetimeFormat(msg)
}

/// Store `value` in a field, as `from_char_set_int`. Errors: 22007 when the template
/// already gave the field another value.
fn set(dest: &mut i64, value: i64, name: &str) -> Result<()> {
    if *dest != 0 && *dest != value {
        return Err(bad_format(format!(
            "conflicting values for \"{name}\" field in formatting string"
        ))
        .with_detail("This value contradicts a previous setting for the same field type."));
    }
    *dest = value;
    Ok(())
}

/// C's `strtol` over `input[from..]`: leading spaces, a sign, digits. Returns the value
/// (saturated) and the index after the digits, or `from` when there are none.
fn strtol(input: &[char], from: usize) -> (i128, usize) {
    let mut at = from;
    while at < input.len() && is_space(input[at]) {
        at += 1;
    }
    let negative = input.get(at) == Some(&'-');
    if matches!(input.get(at), Some('-' | '+')) {
        at += 1;
    }
    let start = at;
    let mut v: i128 = 0;
    while let Some(d) = input.get(at).and_then(|c| c.to_digit(10)) {
        v = (v * 10 + i128::from(d)).min(i128::from(i64::MAX) + 1);
        at += 1;
    }
    if at == start {
        return (0, from);
    }
    (if negative { -v } else { v }, at)
}

/// Read an integer for pattern `name`, as `from_char_parse_int_len`: `len` characters
/// exactly unless `greedy` (FM, or a non-digit item next), when all its digits. Returns the
/// value and the characters used (spaces before it included).
fn read_int(
    input: &[char],
    s: &mut usize,
    len: usize,
    name: &str,
    greedy: bool,
) -> Result<(i64, usize)> {
    let init = *s;
    let mut at = init;
    while at < input.len() && is_space(input[at]) {
        at += 1;
    }
    let copy: Vec<char> = input[at..].iter().copied().take(len).collect();
    let shown: String = copy.iter().collect();
    let value = if greedy {
        let (v, end) = strtol(input, init);
        at = end;
        v
    } else {
        if copy.len() < len {
            return Err(bad_format(format!(
                "source string too short for \"{name}\" formatting field"
            ))
            .with_detail(format!(
                "Field requires {len} characters, but only {} remain.",
                copy.len()
            ))
            .with_hint(
                "If your source string is not fixed-width, try using the \"FM\" modifier.",
            ));
        }
        let (v, used) = strtol(&copy, 0);
        if used > 0 && used < len {
            return Err(
                bad_format(format!("invalid value \"{shown}\" for \"{name}\""))
                    .with_detail(format!(
                        "Field requires {len} characters, but only {used} could be parsed."
                    ))
                    .with_hint(
                        "If your source string is not fixed-width, try using the \"FM\" modifier.",
                    ),
            );
        }
        at += used;
        v
    };
    if at == init {
        return Err(
            bad_format(format!("invalid value \"{shown}\" for \"{name}\""))
                .with_detail("Value must be an integer."),
        );
    }
    let value = i32::try_from(value).map_err(|_| {
        Error::DatetimeFieldOverflow(format!(
            "value for \"{name}\" in source string is out of range"
        ))
        .with_detail("Value must be in the range -2147483648 to 2147483647.")
    })?;
    *s = at;
    Ok((i64::from(value), at - init))
}

/// Match one of `words` case-insensitively at `input[*s..]`, as `from_char_seq_search`.
/// Errors: 22007 naming the input up to its next space.
fn seq(input: &[char], s: &mut usize, words: &[&str], name: &str) -> Result<i64> {
    let rest = &input[*s..];
    for (i, w) in words.iter().enumerate() {
        let n = w.chars().count();
        if rest.len() >= n
            && rest[..n]
                .iter()
                .zip(w.chars())
                .all(|(a, b)| a.eq_ignore_ascii_case(&b))
        {
            *s += n;
            return Ok(i as i64);
        }
    }
    let shown: String = rest.iter().take_while(|c| !is_space(**c)).collect();
    Err(
        bad_format(format!("invalid value \"{shown}\" for \"{name}\""))
            .with_detail("The given value did not match any of the allowed values for this field."),
    )
}

/// The calendar a date pattern belongs to (formatting.c's `date_mode`).
fn mode_of(key: &str) -> Mode {
    match key {
        "IDDD" | "ID" | "IW" | "IYYY" | "IYY" | "IY" | "I" => Mode::IsoWeek,
        "D" | "DDD" | "DD" | "MM" | "MONTH" | "MON" | "RM" | "W" | "WW" | "Y,YYY" | "YYYY"
        | "YYY" | "YY" | "Y" => Mode::Gregorian,
        _ => Mode::None,
    }
}

/// PostgreSQL's `adjust_partial_year_to_2020`: a year of fewer than four digits as the
/// year nearest 2020 (`69` is 2069, `70` is 1970, `519` is 2519, `520` is 1520).
fn year_near_2020(year: i64) -> i64 {
    match year {
        ..70 => year + 2000,
        70..100 => year + 1900,
        100..520 => year + 2000,
        520..1000 => year + 1000,
        _ => year,
    }
}

/// The input position, template state and template of one read.
struct Reader<'a> {
    input: &'a [char],
    s: usize,
    extra: i64,
    fx: bool,
    f: Fields,
}

impl Reader<'_> {
    /// Read the field of `nodes[i]` (a [`Node::Field`]).
    fn field(&mut self, nodes: &[Node], i: usize) -> Result<()> {
        let Node::Field {
            name,
            key,
            fill,
            th,
        } = nodes[i]
        else {
            return Ok(());
        };
        let mode = mode_of(key);
        if mode != Mode::None {
            if self.f.mode != Mode::None && self.f.mode != mode {
                return Err(bad_format("invalid combination of date conventions".into())
                    .with_hint(
                    "Do not mix Gregorian and ISO week date conventions in a formatting template.",
                ));
            }
            self.f.mode = mode;
        }
        let greedy = fill || th || next_is_separator(nodes, i);
        if self.name_field(key, name)? {
            return Ok(());
        }
        if self.special_field(key, name, greedy)? {
            self.skip_th(th);
            return Ok(());
        }
        let (width, dest) = match key {
            "HH" | "HH12" => {
                self.f.clock12 = true;
                (2, &mut self.f.hh)
            }
            "HH24" => (2, &mut self.f.hh),
            "MI" => (2, &mut self.f.mi),
            "SS" => (2, &mut self.f.ss),
            "SSSS" | "SSSSS" => (key.len(), &mut self.f.ssss),
            "DDD" | "IDDD" => (3, &mut self.f.ddd),
            "DD" => (2, &mut self.f.dd),
            "D" => (1, &mut self.f.d),
            "MM" => (2, &mut self.f.mm),
            "WW" | "IW" => (2, &mut self.f.ww),
            "CC" => (2, &mut self.f.cc),
            "W" => (1, &mut self.f.w),
            "J" => (1, &mut self.f.j),
            _ => return Ok(()),
        };
        let (v, _) = read_int(self.input, &mut self.s, width, name, greedy)?;
        set(dest, v, name)?;
        self.skip_th(th);
        Ok(())
    }

    /// `TH`/`th` after a number: two characters skipped.
    fn skip_th(&mut self, th: bool) {
        if th {
            self.s = (self.s + 2).min(self.input.len());
        }
    }

    /// The name patterns (`Mon`, `Day`, `AM`, `BC`, `RM`) and `FX`; false for others.
    fn name_field(&mut self, key: &str, name: &str) -> Result<bool> {
        const AMPM: [&str; 4] = ["am", "pm", "AM", "PM"];
        const AMPM_LONG: [&str; 4] = ["a.m.", "p.m.", "A.M.", "P.M."];
        const ADBC: [&str; 4] = ["ad", "bc", "AD", "BC"];
        const ADBC_LONG: [&str; 4] = ["a.d.", "b.c.", "A.D.", "B.C."];
        const ROMAN: [&str; 12] = [
            "xii", "xi", "x", "ix", "viii", "vii", "vi", "v", "iv", "iii", "ii", "i",
        ];
        let (input, s) = (self.input, &mut self.s);
        match key {
            "FX" => self.fx = true,
            "AM" | "PM" | "A.M." | "P.M." => {
                let words = if key.len() == 2 { AMPM } else { AMPM_LONG };
                let v = seq(input, s, &words, name)?;
                set(&mut self.f.pm, v % 2, name)?;
                self.f.clock12 = true;
            }
            "AD" | "BC" | "A.D." | "B.C." => {
                let words = if key.len() == 2 { ADBC } else { ADBC_LONG };
                let v = seq(input, s, &words, name)?;
                set(&mut self.f.bc, v % 2, name)?;
            }
            "MONTH" | "MON" => {
                let short: Vec<&str> = MONTHS.iter().map(|m| &m[..3]).collect();
                let words = if key == "MON" {
                    &short[..]
                } else {
                    &MONTHS[..]
                };
                let v = seq(input, s, words, name)?;
                set(&mut self.f.mm, v + 1, name)?;
            }
            "DAY" | "DY" => {
                let short: Vec<&str> = DAYS.iter().map(|d| &d[..3]).collect();
                let words = if key == "DY" { &short[..] } else { &DAYS[..] };
                let v = seq(input, s, words, name)?;
                set(&mut self.f.d, v, name)?;
                self.f.d += 1;
            }
            "RM" => {
                let v = seq(input, s, &ROMAN, name)?;
                set(&mut self.f.mm, 12 - v, name)?;
            }
            "TZ" | "OF" => {
                return Err(Error::FeatureNotSupported(format!(
                    "formatting field \"{name}\" is only supported in to_char"
                )))
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Years, `Y,YYY`, `MS`, `US`, `FF1`..`FF6`, `TZH`, `TZM`, `ID`, `Q`; false for others.
    fn special_field(&mut self, key: &str, name: &str, greedy: bool) -> Result<bool> {
        let (input, s) = (self.input, &mut self.s);
        match key {
            "YYYY" | "IYYY" | "YYY" | "IYY" | "YY" | "IY" | "Y" | "I" => {
                let width = key.len();
                let (v, used) = read_int(input, s, width, name, greedy)?;
                let v = if width < 4 && used < 4 {
                    year_near_2020(v)
                } else {
                    v
                };
                set(&mut self.f.year, v, name)?;
                self.f.yysz = width as i64;
            }
            "Y,YYY" => {
                let (millennia, end) = strtol(input, *s);
                let (years, after) = match (end > *s, input.get(end)) {
                    (true, Some(',')) => {
                        let digits: Vec<char> = input[end + 1..].iter().copied().take(3).collect();
                        let (y, used) = strtol(&digits, 0);
                        (y, (used > 0).then_some(end + 1 + used))
                    }
                    _ => (0, None),
                };
                let Some(after) = after else {
                    return Err(bad_format("invalid input string for \"Y,YYY\"".into()));
                };
                let v = i64::try_from(millennia * 1000 + years).unwrap_or(i64::MAX);
                set(&mut self.f.year, v, name)?;
                self.f.yysz = 4;
                *s = after;
            }
            "MS" => {
                let (v, used) = read_int(input, s, 3, name, greedy)?;
                set(&mut self.f.ms, v * [100, 10, 1][used.clamp(1, 3) - 1], name)?;
            }
            "US" | "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
                let width = if key == "US" {
                    6
                } else {
                    usize::from(key.as_bytes()[2] - b'0')
                };
                let (v, used) = read_int(input, s, width, name, greedy)?;
                set(
                    &mut self.f.us,
                    v * 10_i64.pow(6 - used.clamp(1, 6) as u32),
                    name,
                )?;
            }
            "TZH" => {
                self.f.tzsign = match input.get(*s) {
                    Some('+' | ' ') => 1,
                    Some('-') => -1,
                    _ if self.extra > 0 && *s > 0 && input[*s - 1] == '-' => -1,
                    _ => 1,
                };
                if matches!(input.get(*s), Some('+' | '-' | ' ')) {
                    *s += 1;
                }
                let (v, _) = read_int(input, s, 2, name, greedy)?;
                set(&mut self.f.tzh, v, name)?;
            }
            "TZM" => {
                if self.f.tzsign == 0 {
                    self.f.tzsign = 1;
                }
                let (v, _) = read_int(input, s, 2, name, greedy)?;
                set(&mut self.f.tzm, v, name)?;
            }
            "ID" => {
                let (v, _) = read_int(input, s, 1, name, greedy)?;
                set(&mut self.f.d, v, name)?;
                self.f.d = if self.f.d + 1 > 7 { 1 } else { self.f.d + 1 };
            }
            "Q" => {
                read_int(input, s, 1, name, greedy)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// formatting.c's `is_next_separator`: whether the number of `nodes[i]` runs to its first
/// non-digit because what follows it is no digit field.
fn next_is_separator(nodes: &[Node], i: usize) -> bool {
    match nodes.get(i + 1) {
        None => true,
        Some(Node::Field { key, .. }) => !pattern_reads_digits(key),
        Some(Node::Char(c)) => !c.is_ascii_digit(),
        Some(_) => true,
    }
}

/// Read `input` by `fmt`: formatting.c's `DCH_from_char`.
fn read(input: &[char], fmt: &str) -> Result<Fields> {
    let nodes = template(fmt);
    let mut r = Reader {
        input,
        s: 0,
        extra: 0,
        fx: false,
        f: Fields::default(),
    };
    for (i, n) in nodes.iter().enumerate() {
        if r.s >= input.len() {
            break;
        }
        let is_fx = matches!(n, Node::Field { key: "FX", .. });
        if !r.fx && !is_fx && (matches!(n, Node::Field { .. }) || i == 0) {
            r.skip_spaces();
        }
        match n {
            Node::Space | Node::Separator if r.fx => r.s += 1,
            Node::Space | Node::Separator => {
                r.extra -= 1;
                if is_space(input[r.s]) || is_separator(input[r.s]) {
                    r.s += 1;
                    r.extra += 1;
                }
            }
            Node::Char(_) if !r.fx && r.extra > 0 => r.extra -= 1,
            Node::Char(_) => r.s += 1,
            Node::Field { .. } => {
                r.field(&nodes, i)?;
                if !r.fx {
                    r.extra = 0;
                    r.skip_spaces();
                }
            }
        }
    }
    Ok(r.f)
}

impl Reader<'_> {
    fn skip_spaces(&mut self) {
        while self.s < self.input.len() && is_space(self.input[self.s]) {
            self.s += 1;
            self.extra += 1;
        }
    }
}

/// A broken-down date and time (astronomical year: 0 is 1 BC) and the zone the input gave,
/// in seconds east of UTC.
struct Tm {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    fsec: i64,
    zone_east: Option<i64>,
}

/// Julian day number of a proleptic Gregorian date (PostgreSQL's `date2j`).
fn date2j(y: i64, m: i64, d: i64) -> i64 {
    // Months out of 1..12 cannot reach here: the date fields were validated or defaulted.
    time::days_from_civil(y, m.clamp(1, 12) as u32, 1) + d - 1 + 2_440_588
}

fn j2date(j: i64) -> (i64, i64, i64) {
    let (y, m, d) = time::civil_from_days(j - 2_440_588);
    (y, i64::from(m), i64::from(d))
}

/// The Julian day of the Monday of ISO week `week` of ISO year `year`.
fn isoweek2j(year: i64, week: i64) -> i64 {
    let day4 = date2j(year, 1, 4);
    let day0 = (day4 - 1 + 1).rem_euclid(7);
    (week - 1) * 7 + (day4 - day0)
}

fn field_overflow(text: &str) -> Error {
    Error::DatetimeFieldOverflow(format!("date/time field value out of range: \"{text}\""))
}

/// The fields read as a date and time, formatting.c's `do_to_timestamp` after the read.
fn assemble(mut f: Fields, text: &str) -> Result<Tm> {
    let mut tm = Tm {
        year: 0,
        mon: 1,
        mday: 1,
        hour: 0,
        min: 0,
        sec: 0,
        fsec: 0,
        zone_east: None,
    };
    if f.ssss != 0 {
        (tm.hour, tm.min, tm.sec) = (f.ssss / 3600, f.ssss % 3600 / 60, f.ssss % 60);
    }
    if f.ss != 0 {
        tm.sec = f.ss;
    }
    if f.mi != 0 {
        tm.min = f.mi;
    }
    if f.hh != 0 {
        tm.hour = f.hh;
    }
    if f.clock12 {
        if !(1..=12).contains(&tm.hour) {
            return Err(bad_format(format!(
                "hour \"{}\" is invalid for the 12-hour clock",
                tm.hour
            ))
            .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        if f.pm != 0 && tm.hour < 12 {
            tm.hour += 12;
        } else if f.pm == 0 && tm.hour == 12 {
            tm.hour = 0;
        }
    }
    let (mut has_year, mut has_mon, mut has_day) = (false, false, false);
    if f.year != 0 {
        tm.year = year_of(&mut f);
        has_year = true;
    } else if f.cc != 0 {
        let cc = if f.bc != 0 { -f.cc } else { f.cc };
        tm.year = if cc >= 0 {
            (cc - 1) * 100 + 1
        } else {
            cc * 100 + 1
        };
        has_year = true;
    }
    if f.j != 0 {
        (tm.year, tm.mon, tm.mday) = j2date(f.j);
        (has_year, has_mon, has_day) = (true, true, true);
    }
    if f.ww != 0 {
        if f.mode == Mode::IsoWeek {
            let mut j = isoweek2j(tm.year, f.ww);
            if f.d != 0 {
                j += if f.d > 1 { f.d - 2 } else { 6 };
            }
            (tm.year, tm.mon, tm.mday) = j2date(j);
            (has_year, has_mon, has_day) = (true, true, true);
        } else {
            f.ddd = (f.ww - 1) * 7 + 1;
        }
    }
    if f.w != 0 {
        f.dd = (f.w - 1) * 7 + 1;
    }
    if f.dd != 0 {
        tm.mday = f.dd;
        has_day = true;
    }
    if f.mm != 0 {
        tm.mon = f.mm;
        has_mon = true;
    }
    if f.ddd != 0 && (tm.mon <= 1 || tm.mday <= 1) {
        day_of_year(&f, &mut tm)?;
        (has_mon, has_day) = (true, true);
    }
    tm.fsec = f.ms * 1000 + f.us;
    let bad_date = (has_mon && !(1..=12).contains(&tm.mon))
        || (has_day && !(1..=31).contains(&tm.mday))
        || (has_year
            && has_mon
            && has_day
            && tm.mday > i64::from(time::days_in_month(tm.year, tm.mon as u32)));
    if bad_date
        || !(0..24).contains(&tm.hour)
        || !(0..60).contains(&tm.min)
        || !(0..60).contains(&tm.sec)
        || !(0..US_PER_SEC).contains(&tm.fsec)
    {
        return Err(field_overflow(text));
    }
    if f.tzsign != 0 {
        if !(0..=15).contains(&f.tzh) || !(0..60).contains(&f.tzm) {
            return Err(Error::InvalidTimeZoneDisplacement(format!(
                "time zone displacement out of range: \"{text}\""
            )));
        }
        tm.zone_east = Some(f.tzsign * (f.tzh * 3600 + f.tzm * 60));
    }
    Ok(tm)
}

/// The year of `YYYY`..`Y` with `CC` and `BC`, astronomical (0 is 1 BC).
fn year_of(f: &mut Fields) -> i64 {
    if f.cc != 0 && f.yysz <= 2 {
        if f.bc != 0 {
            f.cc = -f.cc;
        }
        let yy = f.year % 100;
        if yy == 0 {
            f.cc * 100 + if f.cc >= 0 { 0 } else { 1 }
        } else if f.cc >= 0 {
            yy + (f.cc - 1) * 100
        } else {
            (f.cc + 1) * 100 - yy + 1
        }
    } else {
        let y = if f.bc != 0 { -f.year } else { f.year };
        if y < 0 {
            y + 1
        } else {
            y
        }
    }
}

/// Month and day from the day of the year (`DDD`, or `IDDD` of an ISO year).
fn day_of_year(f: &Fields, tm: &mut Tm) -> Result<()> {
    if tm.year == 0 && f.bc == 0 {
        return Err(bad_format(
            "cannot calculate day of year without year information".into(),
        ));
    }
    if f.mode == Mode::IsoWeek {
        (tm.year, tm.mon, tm.mday) = j2date(isoweek2j(tm.year, 1) - 1 + f.ddd);
        return Ok(());
    }
    let leap = time::is_leap(tm.year);
    let sum = |m: i64| -> i64 {
        (1..m)
            .map(|k| {
                i64::from(time::days_in_month(
                    if leap { 2000 } else { 2001 },
                    k as u32,
                ))
            })
            .sum()
    };
    let month = (1..=12).find(|m| f.ddd <= sum(m + 1)).unwrap_or(13);
    if tm.mon <= 1 {
        tm.mon = month;
    }
    if tm.mday <= 1 {
        tm.mday = f.ddd - sum(month);
    }
    Ok(())
}

/// PostgreSQL's `IS_VALID_JULIAN`: from 4714-11-24 BC to before 5874898-06-01.
fn valid_julian(tm: &Tm) -> bool {
    (tm.year > -4713 || (tm.year == -4713 && tm.mon >= 11))
        && (tm.year < 5_874_898 || (tm.year == 5_874_898 && tm.mon < 6))
}

/// `to_date(text, fmt)`: the date `text` reads as by template `fmt`, days since
/// 1970-01-01. Errors: see the module.
pub(crate) fn to_date(text: &str, fmt: &str) -> Result<i32> {
    let input: Vec<char> = text.chars().collect();
    let tm = assemble(read(&input, fmt)?, text)?;
    let out_of_range = || Error::DatetimeFieldOverflow(format!("date out of range: \"{text}\""));
    if !valid_julian(&tm) {
        return Err(out_of_range());
    }
    let j = date2j(tm.year, tm.mon, tm.mday);
    if !(0..2_147_483_494).contains(&j) {
        return Err(out_of_range());
    }
    i32::try_from(j - 2_440_588).map_err(|_| out_of_range())
}

/// `to_timestamp(text, fmt)`: the `timestamptz` `text` reads as by template `fmt`,
/// microseconds since the Unix epoch; a wall-clock time without `TZH` is in the session's
/// time zone. Errors: see the module; 22008 when out of the timestamp range.
pub(crate) fn to_timestamp(text: &str, fmt: &str) -> Result<i64> {
    let input: Vec<char> = text.chars().collect();
    let tm = assemble(read(&input, fmt)?, text)?;
    let out_of_range = || Error::DatetimeFieldOverflow("timestamp out of range".into());
    if !valid_julian(&tm) {
        return Err(out_of_range());
    }
    let days = i128::from(date2j(tm.year, tm.mon, tm.mday) - 2_440_588);
    let tod = ((tm.hour * 60 + tm.min) * 60 + tm.sec) * US_PER_SEC + tm.fsec;
    let local = days * i128::from(US_PER_DAY) + i128::from(tod);
    let local = i64::try_from(local).map_err(|_| out_of_range())?;
    let utc = match tm.zone_east {
        Some(east) => local
            .checked_sub(east * US_PER_SEC)
            .ok_or_else(out_of_range)?,
        None => crate::tz::current_local_to_utc(local),
    };
    if !(time::MIN_TIMESTAMP_US..time::END_TIMESTAMP_US).contains(&utc) {
        return Err(out_of_range());
    }
    Ok(utc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(text: &str, fmt: &str) -> String {
        let mut out = String::new();
        crate::date::push_date(to_date(text, fmt).unwrap(), &mut out);
        out
    }

    /// Each expected date is PostgreSQL 15's answer to the same call.
    #[test]
    fn dates_read_as_postgresql() {
        for (text, fmt, pg) in [
            ("2001-02-16", "YYYY-MM-DD", "2001-02-16"),
            ("16 Feb 2001", "DD Mon YYYY", "2001-02-16"),
            ("20010216", "YYYYMMDD", "2001-02-16"),
            ("2001 / 2 - 3", "YYYY-MM-DD", "2001-02-03"),
            ("01-02-03", "YY-MM-DD", "2001-02-03"),
            ("101-02-03", "YYY-MM-DD", "2101-02-03"),
            ("2001 060", "YYYY DDD", "2001-03-01"),
        ] {
            assert_eq!(date(text, fmt), pg, "to_date({text:?}, {fmt:?})");
        }
    }

    #[test]
    fn bad_input_has_postgresql_sqlstates() {
        let code = |e: Error| match e.kind() {
            Error::InvalidDatetimeFormat(_) => "22007",
            Error::DatetimeFieldOverflow(_) => "22008",
            _ => "other",
        };
        assert_eq!(
            code(to_date("2001-13-01", "YYYY-MM-DD").unwrap_err()),
            "22008"
        );
        assert_eq!(code(to_date("nope", "YYYY").unwrap_err()), "22007");
        assert_eq!(
            code(to_date("2001-02-30", "YYYY-MM-DD").unwrap_err()),
            "22008"
        );
    }
}
