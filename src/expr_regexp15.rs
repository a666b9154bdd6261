//! PostgreSQL 15's regular expression functions with positions: `regexp_count`,
//! `regexp_instr`, `regexp_like`, `regexp_substr`, and `regexp_replace` with a start
//! position and the number of the match to replace. Positions count characters from 1.
//! Matches are found as PostgreSQL finds them: each search starts where the previous
//! match ended (one character later after an empty match), from the start position on;
//! `^` anchors at the text's beginning only. Flags `i` and `c` as for the other regular
//! expression functions; `g` is 22023 but for regexp_replace, as in PostgreSQL.

use crate::error::{Error, Result};
use crate::sql::ScalarFunc;
use crate::types::Value;

fn bad_param(name: &str, v: i64) -> Error {
    Error::InvalidParameterValue(format!("invalid value for parameter \"{name}\": {v}"))
}

/// The byte offset of 1-based character position `start` of `s` (its length past the
/// end), or 22023 for a position below 1.
fn byte_start(s: &str, start: i64) -> Result<Option<usize>> {
    if start < 1 {
        return Err(bad_param("start", start));
    }
    let skip = usize::try_from(start - 1).unwrap_or(usize::MAX);
    Ok(match s.char_indices().nth(skip) {
        Some((b, _)) => Some(b),
        None if skip == s.chars().count() => Some(s.len()),
        None => None,
    })
}

/// The 1-based character position of byte offset `b` of `s`.
fn char_pos(s: &str, b: usize) -> i64 {
    s[..b].chars().count() as i64 + 1
}

/// The matches of `re` in `s` from byte `from` on, PostgreSQL's way (see the module),
/// stopping after `limit` (`None`: all).
fn matches_from<'h>(
    re: &regex::Regex,
    s: &'h str,
    from: Option<usize>,
    limit: Option<usize>,
) -> Vec<regex::Captures<'h>> {
    let mut out = Vec::new();
    let Some(mut at) = from else {
        return out;
    };
    while at <= s.len() && limit.is_none_or(|l| out.len() < l) {
        let Some(caps) = re.captures_at(s, at) else {
            break;
        };
        let m = caps.get(0).expect("group 0 is the match");
        at = if m.is_empty() {
            // One character past an empty match.
            m.end() + s[m.end()..].chars().next().map_or(1, char::len_utf8)
        } else {
            m.end()
        };
        out.push(caps);
    }
    out
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn int(v: Option<&Value>, default: i64) -> i64 {
    v.and_then(Value::as_i64).unwrap_or(default)
}

/// `func` over non-NULL `vals`, typed by the binder: `regexp_count(s, p [, start [,
/// flags]])`, `regexp_instr(s, p [, start [, n [, endoption [, flags [, subexpr]]]]])`,
/// `regexp_like(s, p [, flags])`, `regexp_substr(s, p [, start [, n [, flags [,
/// subexpr]]]])`. Errors: 22023 for a start or n below 1, an endoption other than 0 or 1,
/// a negative subexpr, a bad flag; 2201B for a bad pattern.
pub(crate) fn call(func: ScalarFunc, vals: &[Value]) -> Result<Value> {
    use ScalarFunc as F;
    let s = text(&vals[0]);
    let (name, flags_at) = match func {
        F::RegexpCount => ("regexp_count", 3),
        F::RegexpInstr => ("regexp_instr", 5),
        F::RegexpLike => ("regexp_like", 2),
        _ => ("regexp_substr", 4),
    };
    let (opts, _) =
        crate::expr_regex::match_flags(vals.get(flags_at).map_or("", text), false, name)?;
    let re = crate::expr_regex::compiled_pattern(text(&vals[1]), opts)?;
    if func == F::RegexpLike {
        return Ok(Value::Bool(re.is_match(s)));
    }
    let from = byte_start(s, int(vals.get(2), 1))?;
    if func == F::RegexpCount {
        let n = matches_from(&re, s, from, None).len();
        return Ok(Value::Int4(i32::try_from(n).unwrap_or(i32::MAX)));
    }
    let n = int(vals.get(3), 1);
    if n < 1 {
        return Err(bad_param("n", n));
    }
    let end_option = if func == F::RegexpInstr {
        let e = int(vals.get(4), 0);
        if e != 0 && e != 1 {
            return Err(bad_param("endoption", e));
        }
        e == 1
    } else {
        false
    };
    let subexpr = int(vals.get(flags_at + 1), 0);
    if subexpr < 0 {
        return Err(bad_param("subexpr", subexpr));
    }
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let found = matches_from(&re, s, from, Some(limit));
    let group = found
        .get(limit - 1)
        .and_then(|c| c.get(usize::try_from(subexpr).unwrap_or(usize::MAX)));
    Ok(match (func, group) {
        (F::RegexpInstr, None) => Value::Int4(0),
        (F::RegexpInstr, Some(m)) => {
            let b = if end_option { m.end() } else { m.start() };
            Value::Int4(i32::try_from(char_pos(s, b)).unwrap_or(i32::MAX))
        }
        (_, None) => Value::Null,
        (_, Some(m)) => Value::Text(m.as_str().into()),
    })
}

/// `regexp_replace(s, p, r, start [, n [, flags]])`: the `n`th match from character
/// `start` on replaced (every one when `n` is 0, or when it is not given and `flags` has
/// `g`). Errors: 22023 for a start below 1, a negative n or a bad flag; 2201B.
pub(crate) fn replace_from(vals: &[Value]) -> Result<Value> {
    let s = text(&vals[0]);
    let (opts, global) =
        crate::expr_regex::match_flags(vals.get(5).map_or("", text), true, "regexp_replace")?;
    let from = byte_start(s, int(vals.get(3), 1))?;
    let n = match vals.get(4) {
        Some(v) => int(Some(v), 0),
        None if global => 0,
        None => 1,
    };
    if n < 0 {
        return Err(bad_param("n", n));
    }
    let re = crate::expr_regex::compiled_pattern(text(&vals[1]), opts)?;
    let limit = usize::try_from(n).ok().filter(|n| *n > 0);
    let found = matches_from(&re, s, from, limit);
    let chosen: Vec<&regex::Captures<'_>> = match limit {
        None => found.iter().collect(),
        Some(k) => found.get(k - 1).into_iter().collect(),
    };
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for caps in chosen {
        let whole = caps.get(0).expect("group 0 is the match");
        out.push_str(&s[last..whole.start()]);
        crate::expr_regex::substitute_groups(caps, text(&vals[2]), &mut out);
        last = whole.end();
    }
    out.push_str(&s[last..]);
    Ok(Value::Text(out.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    #[test]
    fn positions_count_characters_from_the_start_given() {
        let count = |v: &[Value]| call(ScalarFunc::RegexpCount, v).unwrap();
        assert_eq!(count(&[t("abcabc"), t("b")]), Value::Int4(2));
        assert_eq!(
            count(&[t("abcabc"), t("b"), Value::Int4(3)]),
            Value::Int4(1)
        );
        assert_eq!(count(&[t("abc"), t("b*")]), Value::Int4(4));
        let instr = |v: &[Value]| call(ScalarFunc::RegexpInstr, v).unwrap();
        assert_eq!(
            instr(&[t("日本語日本"), t("本"), Value::Int4(1), Value::Int4(2)]),
            Value::Int4(5)
        );
        assert_eq!(
            instr(&[
                t("abcabc"),
                t("b(c)"),
                Value::Int4(1),
                Value::Int4(1),
                Value::Int4(1),
                t(""),
                Value::Int4(1)
            ]),
            Value::Int4(4)
        );
        let substr = |v: &[Value]| call(ScalarFunc::RegexpSubstr, v).unwrap();
        assert_eq!(
            substr(&[t("abc123def45"), t("\\d+"), Value::Int4(1), Value::Int4(2)]),
            t("45")
        );
        assert_eq!(substr(&[t("abc"), t("x")]), Value::Null);
        let r = replace_from(&[t("abcabc"), t("b"), t("X"), Value::Int4(1), Value::Int4(2)]);
        assert_eq!(r.unwrap(), t("abcaXc"));
        let r = replace_from(&[t("abcabc"), t("b"), t("X"), Value::Int4(3)]);
        assert_eq!(r.unwrap(), t("abcaXc"));
    }

    #[test]
    fn bad_parameters_are_22023() {
        for v in [
            vec![t("a"), t("a"), Value::Int4(0)],
            vec![t("a"), t("a"), Value::Int4(1), Value::Int4(0)],
            vec![
                t("a"),
                t("a"),
                Value::Int4(1),
                Value::Int4(1),
                Value::Int4(2),
            ],
            vec![
                t("a"),
                t("a"),
                Value::Int4(1),
                Value::Int4(1),
                Value::Int4(0),
                t("g"),
            ],
        ] {
            assert!(matches!(
                call(ScalarFunc::RegexpInstr, &v),
                Err(Error::InvalidParameterValue(_))
            ));
        }
    }
}
