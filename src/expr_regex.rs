//! Regular expressions of [`crate::expr`]: the POSIX match operators (`~`, `~*`, and
//! through NOT `!~`, `!~*`), `SIMILAR TO`, `regexp_replace`, `regexp_match`,
//! `regexp_matches` and the `regexp_split_to_*` functions.
//!
//! Patterns are compiled with the `regex` crate, whose syntax covers the POSIX classes,
//! quantifiers and groups PostgreSQL users write; what it lacks (back-references,
//! look-around) is 2201B, as a pattern PostgreSQL cannot compile is. Each thread keeps the
//! last few compiled patterns, so a pattern given as a constant is compiled once per
//! statement rather than once per row; the cache is small and bounded.

use std::cell::RefCell;

use crate::error::{Error, Result};

/// Compiled patterns kept per thread.
const CACHED_MAX: usize = 16;

/// Most bytes a compiled pattern may take (the `regex` crate's size limit).
const COMPILED_BYTES_MAX: usize = 1 << 20;

thread_local! {
    static CACHE: RefCell<Vec<((String, u8), regex::Regex)>> = const { RefCell::new(Vec::new()) };
}

/// Option bits of a compiled pattern, as PostgreSQL's flag letters set them: `i`.
const RE_CI: u8 = 1;
/// `.` does not match a newline (flags `n`/`m`, `p`).
const RE_NLSTOP: u8 = 2;
/// `^` and `$` also match at the ends of lines (flags `n`/`m`, `w`).
const RE_NLANCH: u8 = 4;
/// Whitespace and `#` comments in the pattern are ignored (flag `x`).
const RE_EXPANDED: u8 = 8;
/// The pattern is literal text (flag `q`).
const RE_QUOTE: u8 = 16;

/// `pattern` compiled with the option bits `opts` (`RE_*`). Errors: 2201B.
fn compiled(pattern: &str, opts: u8) -> Result<regex::Regex> {
    CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if let Some((_, re)) = cache.iter().find(|(k, _)| k.0 == pattern && k.1 == opts) {
            return Ok(re.clone());
        }
        // PostgreSQL's regular expressions let `.` match a newline (its default is not
        // newline-sensitive); `^` and `$` anchor at the ends of the text only.
        let quoted;
        let source = if opts & RE_QUOTE != 0 {
            quoted = regex::escape(pattern);
            &quoted
        } else {
            pattern
        };
        let re = regex::RegexBuilder::new(source)
            .case_insensitive(opts & RE_CI != 0)
            .dot_matches_new_line(opts & RE_NLSTOP == 0)
            .multi_line(opts & RE_NLANCH != 0)
            .ignore_whitespace(opts & (RE_EXPANDED | RE_QUOTE) == RE_EXPANDED)
            .size_limit(COMPILED_BYTES_MAX)
            .build()
            .map_err(|e| {
                Error::InvalidRegularExpression(format!("invalid regular expression: {e}"))
            })?;
        if cache.len() >= CACHED_MAX {
            cache.remove(0);
        }
        cache.push(((pattern.to_string(), opts), re.clone()));
        Ok(re)
    })
}

/// `pattern` compiled as the other regular expression functions compile it (cached),
/// with the option bits [`match_flags`] returns. Errors: 2201B.
pub(crate) fn compiled_pattern(pattern: &str, opts: u8) -> Result<regex::Regex> {
    compiled(pattern, opts)
}

/// Append `replacement` to `out` with `caps`'s groups substituted, as regexp_replace.
pub(crate) fn substitute_groups(caps: &regex::Captures<'_>, replacement: &str, out: &mut String) {
    substitute(caps, replacement, out)
}

/// `s ~ pattern` (`~*` when `ci`).
pub(crate) fn matches(s: &str, pattern: &str, ci: bool) -> Result<bool> {
    Ok(compiled(pattern, if ci { RE_CI } else { 0 })?.is_match(s))
}

/// `s SIMILAR TO pattern`: SQL's regular expressions (`%` any text, `_` one character,
/// `|`, `*`, `+`, `?`, `{m,n}`, `(...)`, `[...]`), matched against the whole text, with
/// `\` as the escape character.
pub(crate) fn similar(s: &str, pattern: &str) -> Result<bool> {
    let mut re = String::from("^(?:");
    similar_body(pattern, Some('\\'), false, &mut re)?;
    re.push_str(")$");
    Ok(compiled(&re, 0)?.is_match(s))
}

/// `substring(s FROM pattern)`: the part of `s` the first parenthesized group of the
/// regular expression matched (`None` when that group took no part), or the whole first
/// match when the pattern has no group; `None` when nothing matches. Errors: 2201B for a
/// bad pattern.
pub(crate) fn substring(s: &str, pattern: &str) -> Result<Option<String>> {
    let re = compiled(pattern, 0)?;
    let Some(c) = re.captures(s) else {
        return Ok(None);
    };
    let m = if c.len() > 1 { c.get(1) } else { c.get(0) };
    Ok(m.map(|m| m.as_str().to_string()))
}

/// `substring(s SIMILAR pattern ESCAPE esc)` (also written `FROM pattern FOR esc`): the
/// SQL regular expression must match all of `s`; the text matched between the two
/// separators `esc"` is returned (all of it without separators; after the one separator
/// when there is one), the part before the first matched as short as possible, as
/// PostgreSQL does; `None` when `s` does not match. Errors: 22025 for an escape of more
/// than one character, 2200C for more than two separators, 2201B for a bad pattern.
pub(crate) fn similar_substring(s: &str, pattern: &str, esc: &str) -> Result<Option<String>> {
    let mut chars = esc.chars();
    let esc = chars.next();
    if chars.next().is_some() {
        return Err(Error::InvalidEscapeSequence("invalid escape string".into())
            .with_hint("Escape string must be empty or one character."));
    }
    let parts: Vec<&str> = match esc {
        Some(e) => pattern.split(&format!("{e}\"")[..]).collect(),
        None => vec![pattern],
    };
    let mut re = String::from("^");
    let (lazy_head, body, tail) = match parts[..] {
        [all] => (None, all, None),
        [head, body] => (Some(head), body, None),
        [head, body, tail] => (Some(head), body, Some(tail)),
        _ => return Err(Error::InvalidUseOfEscapeCharacter(
            "SQL regular expression may not contain more than two escape-double-quote separators"
                .into(),
        )),
    };
    if let Some(head) = lazy_head {
        re.push_str("(?:");
        similar_body(head, esc, true, &mut re)?;
        re.push(')');
    }
    re.push('(');
    similar_body(body, esc, false, &mut re)?;
    re.push(')');
    if let Some(tail) = tail {
        re.push_str("(?:");
        similar_body(tail, esc, false, &mut re)?;
        re.push(')');
    }
    re.push('$');
    let re = compiled(&re, 0)?;
    Ok(re
        .captures(s)
        .and_then(|c| c.get(1).map(|m| m.as_str().to_string())))
}

/// Append SQL regular expression `pattern` (escape character `esc`) to `re` as the
/// `regex` crate's syntax; `lazy` makes its repetitions match as little as they can.
fn similar_body(pattern: &str, esc: Option<char>, lazy: bool, re: &mut String) -> Result<()> {
    let mut chars = pattern.chars();
    let mut in_class = false;
    let lazy = if lazy { "?" } else { "" };
    while let Some(c) = chars.next() {
        match c {
            c if Some(c) == esc => match chars.next() {
                Some(e) => re.push_str(&regex::escape(&e.to_string())),
                None => {
                    return Err(Error::InvalidRegularExpression(
                        "invalid escape string: the pattern ends with the escape character".into(),
                    ))
                }
            },
            '[' => {
                in_class = true;
                re.push(c);
            }
            ']' => {
                in_class = false;
                re.push(c);
            }
            _ if in_class => re.push(c),
            '%' => {
                re.push_str(".*");
                re.push_str(lazy);
            }
            '_' => re.push('.'),
            '*' | '+' | '?' => {
                re.push(c);
                re.push_str(lazy);
            }
            '|' | '{' | '}' | '(' | ')' => re.push(c),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    Ok(())
}

/// `regexp_replace(s, pattern, replacement, flags)`: the first match replaced, or every
/// match with flag `g`; flag `i` ignores case. In `replacement`, `\1`..`\9` are the
/// groups, `\&` the whole match and `\\` a backslash. Errors: 2201B for a bad pattern,
/// 22023 for an unknown flag.
pub(crate) fn replace(s: &str, pattern: &str, replacement: &str, flags: &str) -> Result<String> {
    let (opts, global) = match_flags(flags, true, "regexp_replace")?;
    let re = compiled(pattern, opts)?;
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for caps in re.captures_iter(s) {
        let whole = caps.get(0).expect("group 0 is the match");
        out.push_str(&s[last..whole.start()]);
        substitute(&caps, replacement, &mut out);
        last = whole.end();
        if !global {
            break;
        }
    }
    out.push_str(&s[last..]);
    Ok(out)
}

/// The flags of every regular expression function, as (option bits `RE_*` for
/// [`compiled_pattern`], global), later letters overriding earlier ones as in PostgreSQL:
/// `i` ignores case, `c` does not; `n` (or `m`) is newline-sensitive (`.` stops at a
/// newline, `^`/`$` match at line ends), `p` only the former, `w` only the latter, `s`
/// neither (the default); `x` expanded syntax, `t` tight (the default); `q` a literal
/// pattern; `g` (only where `global_ok`) finds every match. Errors: 22023 for an unknown
/// flag (also `b` and `e`, the basic and extended syntaxes, not read), or `g` where
/// `fname` takes one match.
pub(crate) fn match_flags(flags: &str, global_ok: bool, fname: &str) -> Result<(u8, bool)> {
    let (mut opts, mut global) = (0u8, false);
    for f in flags.chars() {
        match f {
            'i' => opts |= RE_CI,
            'c' => opts &= !RE_CI,
            'n' | 'm' => opts |= RE_NLSTOP | RE_NLANCH,
            'p' => opts = (opts | RE_NLSTOP) & !RE_NLANCH,
            'w' => opts = (opts | RE_NLANCH) & !RE_NLSTOP,
            's' => opts &= !(RE_NLSTOP | RE_NLANCH),
            'x' => opts |= RE_EXPANDED,
            't' => opts &= !RE_EXPANDED,
            'q' => opts |= RE_QUOTE,
            'g' if global_ok => global = true,
            'g' => {
                let e = Error::InvalidParameterValue(format!(
                    "{fname}() does not support the \"global\" option"
                ));
                return Err(if fname == "regexp_match" {
                    e.with_hint("Use the regexp_matches function instead.")
                } else {
                    e
                });
            }
            _ => {
                return Err(Error::InvalidParameterValue(format!(
                    "invalid regular expression option: \"{f}\""
                )))
            }
        }
    }
    Ok((opts, global))
}

/// A match's parenthesised groups (the whole match when the pattern has none), a group
/// that took no part as `None`.
fn groups(caps: &regex::Captures<'_>) -> Vec<Option<String>> {
    let range = if caps.len() == 1 { 0..1 } else { 1..caps.len() };
    range
        .map(|i| caps.get(i).map(|m| m.as_str().to_string()))
        .collect()
}

/// `regexp_match(s, pattern, flags)`: the first match's groups (see [`groups`]); `None`
/// when nothing matches. Errors: 2201B for a bad pattern, 22023 for an unknown flag or
/// `g` (regexp_match returns one match).
pub(crate) fn first_match(
    s: &str,
    pattern: &str,
    flags: &str,
) -> Result<Option<Vec<Option<String>>>> {
    let (opts, _) = match_flags(flags, false, "regexp_match")?;
    Ok(compiled(pattern, opts)?.captures(s).map(|c| groups(&c)))
}

/// `regexp_matches(s, pattern, flags)`: the groups of the first match, or of every match
/// with flag `g`, one row each. Errors: as [`first_match`], `g` allowed.
pub(crate) fn all_matches(s: &str, pattern: &str, flags: &str) -> Result<Vec<Vec<Option<String>>>> {
    let (opts, global) = match_flags(flags, true, "regexp_matches")?;
    let re = compiled(pattern, opts)?;
    let found = re.captures_iter(s).map(|c| groups(&c));
    Ok(if global {
        found.collect()
    } else {
        found.take(1).collect()
    })
}

/// `regexp_split_to_array(s, pattern, flags)` and `regexp_split_to_table`: the pieces of
/// `s` between matches of `pattern`. As in PostgreSQL, an empty match at the start or the
/// end of the text, or right after another match, splits nothing (`regexp_split_to_array(
/// 'hello', '')` is each character). Errors: as [`first_match`], naming `fname`.
pub(crate) fn split(s: &str, pattern: &str, flags: &str, fname: &str) -> Result<Vec<String>> {
    let (opts, _) = match_flags(flags, false, fname)?;
    let re = compiled(pattern, opts)?;
    let (mut out, mut piece_start, mut prev_end) = (Vec::new(), 0, 0);
    for m in re.find_iter(s) {
        if m.start() < s.len() && m.end() > prev_end {
            out.push(s[piece_start..m.start()].to_string());
            piece_start = m.end();
            prev_end = m.end();
        }
    }
    out.push(s[piece_start..].to_string());
    Ok(out)
}

/// The replacement text with its group references filled in.
fn substitute(caps: &regex::Captures<'_>, replacement: &str, out: &mut String) {
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(d @ '1'..='9') => {
                chars.next();
                let g = d as usize - '0' as usize;
                out.push_str(caps.get(g).map_or("", |m| m.as_str()));
            }
            Some('&') => {
                chars.next();
                out.push_str(caps.get(0).map_or("", |m| m.as_str()));
            }
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            _ => out.push('\\'),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected texts are PostgreSQL 15's for the same calls.
    #[test]
    fn replace_as_postgresql() {
        assert_eq!(replace("abcb", "b", "B", "").unwrap(), "aBcb");
        assert_eq!(replace("abcb", "b", "B", "g").unwrap(), "aBcB");
        assert_eq!(replace("ABC", "b", "x", "i").unwrap(), "AxC");
        assert_eq!(
            replace("John Smith", "(\\w+) (\\w+)", "\\2, \\1", "").unwrap(),
            "Smith, John"
        );
        assert_eq!(replace("abc", "b", "[\\&]", "").unwrap(), "a[b]c");
        assert!(matches!(
            replace("a", "(", "", ""),
            Err(Error::InvalidRegularExpression(_))
        ));
        assert!(replace("a", "a", "", "z").is_err());
    }

    #[test]
    fn similar_to_is_anchored_sql_regex() {
        assert!(similar("abc", "a%").unwrap());
        assert!(!similar("xabc", "a%").unwrap());
        assert!(similar("abc", "a_c").unwrap());
        assert!(similar("abc", "(abc|xyz)").unwrap());
        assert!(!similar("a.c", "abc").unwrap());
        assert!(similar("a.c", "a.c").unwrap());
        assert!(similar("a%", "a\\%").unwrap());
    }

    #[test]
    fn matches_is_unanchored() {
        assert!(matches("a~b", "b", false).unwrap());
        assert!(matches("ABC", "^a", true).unwrap());
        assert!(!matches("ABC", "^a", false).unwrap());
    }
}
