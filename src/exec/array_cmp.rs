//! Comparison of one-dimensional arrays held as their text form (`{1,"b c",NULL}`), as
//! PostgreSQL 15's `array_cmp` and `array_eq` (arrayfuncs.c) compare them: element by
//! element with the element type's own comparison (`{2} < {10}` for integers,
//! `{1.0} = {1}` for numerics), a NULL element equal to a NULL and greater than any value,
//! then the shorter array first. The elements are walked in place: no allocation per
//! comparison unless an element carries escapes.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::types::{ElemType, Value};

/// The elements of an array's text form, each `None` for NULL; malformed text is
/// handed to [`super::relational::parse_array`] for its error (22P02, 0A000 nested).
struct Elems<'a> {
    text: &'a str,
    rest: &'a str,
    done: bool,
}

/// The elements of `text`. Errors: 22P02 for text that is no array literal.
fn elems(text: &str) -> Result<Elems<'_>> {
    let t = text.trim();
    let inner = t
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .ok_or_else(|| malformed(text))?;
    Ok(Elems {
        text,
        done: inner.trim().is_empty(),
        rest: inner,
    })
}

fn malformed(text: &str) -> Error {
    match super::relational::parse_array(text) {
        Err(e) => e,
        Ok(_) => Error::InvalidTextRepresentation(format!("malformed array literal: \"{text}\"")),
    }
}

impl<'a> Iterator for Elems<'a> {
    type Item = Result<Option<Cow<'a, str>>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let s = self.rest.trim_start();
        let (item, after) = if let Some(q) = s.strip_prefix('"') {
            let mut escaped = false;
            let mut end = None;
            let mut skip = false;
            for (i, c) in q.char_indices() {
                if skip {
                    skip = false;
                } else if c == '\\' {
                    escaped = true;
                    skip = true;
                } else if c == '"' {
                    end = Some(i);
                    break;
                }
            }
            let Some(end) = end else {
                self.done = true;
                return Some(Err(malformed(self.text)));
            };
            let raw = &q[..end];
            let item = if escaped {
                let mut out = String::with_capacity(raw.len());
                let mut chars = raw.chars();
                while let Some(c) = chars.next() {
                    out.push(if c == '\\' {
                        chars.next().unwrap_or(c)
                    } else {
                        c
                    });
                }
                Cow::Owned(out)
            } else {
                Cow::Borrowed(raw)
            };
            (Some(item), q[end + 1..].trim_start())
        } else {
            let end = s.find(',').unwrap_or(s.len());
            let raw = s[..end].trim_end();
            if raw.is_empty() || raw.contains(['{', '}', '"', '\\']) {
                // Nested arrays, escapes in unquoted elements, empty elements: the
                // full parser's answer (an error, or the element it means).
                self.done = true;
                return Some(self.slow());
            }
            let item = (!raw.eq_ignore_ascii_case("null")).then_some(Cow::Borrowed(raw));
            (item, &s[end..])
        };
        match after.strip_prefix(',') {
            Some(rest) => self.rest = rest,
            None if after.is_empty() => self.done = true,
            None => {
                self.done = true;
                return Some(Err(malformed(self.text)));
            }
        }
        Some(Ok(item))
    }
}

impl<'a> Elems<'a> {
    /// An element only the full parser reads: its error, or (a backslash escape in an
    /// unquoted element) the rest of the array from the full parse is not walked here.
    fn slow(&self) -> Result<Option<Cow<'a, str>>> {
        super::relational::parse_array(self.text)?;
        Err(Error::FeatureNotSupported(
            "escaped characters in unquoted array elements are not supported here".into(),
        ))
    }
}

/// `text` (of any number of dimensions) parsed.
fn parse_nd(text: &str) -> Result<super::array_nd::Nd> {
    super::array_nd::parse_nd(text)
}

/// Whether an element type compares as text (bytewise, as the C collation).
fn textual(e: ElemType) -> bool {
    matches!(
        e,
        ElemType::Text | ElemType::Varchar | ElemType::Name | ElemType::Char | ElemType::Bpchar
    )
}

/// An element's value as its type reads it. Errors: 22P02 and friends of the type's input.
fn value(e: ElemType, s: &str) -> Result<Value> {
    crate::types::parse_value(s, e.held_as())
}

/// Compare elements `a` of type `ta` and `b` of type `tb` (non-NULL) with their types'
/// comparison: text bytewise (`character` without trailing blanks), anything else as
/// values (numbers across types). Errors: 42883 for types that do not compare.
pub(crate) fn elem_cmp(ta: ElemType, a: &str, tb: ElemType, b: &str) -> Result<Ordering> {
    if textual(ta) && textual(tb) {
        let trim = |t: ElemType, s: &'_ str| -> usize {
            match t {
                ElemType::Bpchar => s.trim_end_matches(' ').len(),
                _ => s.len(),
            }
        };
        let (a, b) = (&a[..trim(ta, a)], &b[..trim(tb, b)]);
        return Ok(a.as_bytes().cmp(b.as_bytes()));
    }
    crate::expr::compare(&value(ta, a)?, &value(tb, b)?)
}

/// Compare arrays `a` (elements of `ta`) and `b` (of `tb`), given as their text forms,
/// as PostgreSQL's `array_cmp`: the first unequal pair of elements decides (a NULL
/// element above any value, two NULLs equal), then the shorter array is less.
/// Errors: 22P02 for a malformed array, those of [`elem_cmp`].
pub(crate) fn array_cmp(ta: ElemType, a: &str, tb: ElemType, b: &str) -> Result<Ordering> {
    let (mut x, mut y) = (elems(a)?, elems(b)?);
    loop {
        let (p, q) = match (x.next().transpose(), y.next().transpose()) {
            (Err(e), _) | (_, Err(e)) => return fallback(ta, a, tb, b, e),
            (Ok(p), Ok(q)) => (p, q),
        };
        let o = match (p, q) {
            (None, None) => return Ok(Ordering::Equal),
            (None, Some(_)) => return Ok(Ordering::Less),
            (Some(_), None) => return Ok(Ordering::Greater),
            (Some(p), Some(q)) => match (p, q) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(p), Some(q)) => elem_cmp(ta, &p, tb, &q)?,
            },
        };
        if o != Ordering::Equal {
            return Ok(o);
        }
    }
}

/// [`array_cmp`] over the full parser's elements, for text the walk leaves to it (escapes
/// in bare elements, several dimensions: the elements in row-major order, then the
/// element count, the number of dimensions and their lengths, as `array_cmp` does).
fn fallback(ta: ElemType, a: &str, tb: ElemType, b: &str, walk: Error) -> Result<Ordering> {
    if !matches!(walk, Error::FeatureNotSupported(_)) {
        return Err(walk);
    }
    let (x, y) = (parse_nd(a)?, parse_nd(b)?);
    let o = flat_cmp(ta, &x.elems, tb, &y.elems)?;
    Ok(o.then_with(|| x.dims.len().cmp(&y.dims.len()))
        .then_with(|| x.dims.cmp(&y.dims)))
}

/// Elements in order (a NULL above any value), then the shorter first.
fn flat_cmp(
    ta: ElemType,
    x: &[Option<String>],
    tb: ElemType,
    y: &[Option<String>],
) -> Result<Ordering> {
    for (p, q) in x.iter().zip(y) {
        let o = match (p, q) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(p), Some(q)) => elem_cmp(ta, p, tb, q)?,
        };
        if o != Ordering::Equal {
            return Ok(o);
        }
    }
    Ok(x.len().cmp(&y.len()))
}

/// Whether non-NULL elements `a` (of `ta`) and `b` (of `tb`) are equal by their types'
/// equality. Errors: those of [`elem_cmp`].
pub(crate) fn elem_eq(ta: ElemType, a: &str, tb: ElemType, b: &str) -> Result<bool> {
    Ok(elem_cmp(ta, a, tb, b)? == Ordering::Equal)
}

/// A key of array text `a` (of `e`) equal for arrays PostgreSQL's `array_eq` finds equal
/// (numerics without trailing zeros, -0 as 0, intervals by their span, `character`
/// without trailing blanks): for grouping, DISTINCT, set operations and hash joins.
/// Malformed text is its own key.
pub(crate) fn array_key(e: ElemType, a: &str) -> String {
    let Ok(nd) = parse_nd(a) else {
        return a.to_string();
    };
    let items = nd.elems;
    let mut out = String::with_capacity(a.len() + 2);
    if nd.dims.len() > 1 {
        // Equal arrays have equal dimensions.
        out.push_str(&format!("{:?}", nd.dims));
    }
    for item in items {
        out.push('\u{1}');
        match item {
            None => out.push('\u{0}'),
            Some(s) => match e {
                ElemType::Bpchar => out.push_str(s.trim_end_matches(' ')),
                _ if textual(e) => out.push_str(&s),
                _ => match value(e, &s) {
                    Ok(v) => push_elem_key(&mut out, &v),
                    Err(_) => out.push_str(&s),
                },
            },
        }
    }
    out
}

/// An element value's key: integers and numerics by value, floats with -0 as 0,
/// intervals by their span in microseconds (a month as 30 days, as `interval_cmp`).
fn push_elem_key(out: &mut String, v: &Value) {
    use std::fmt::Write;
    let _ = match v {
        Value::Numeric(d) => write!(out, "{}", d.normalize()),
        Value::WideNumeric(w) => match w.normalized() {
            Ok(d) => write!(out, "{d}"),
            Err(_) => write!(out, "{}", super::relational::text_of(v)),
        },
        Value::Float4(x) if *x == 0.0 => write!(out, "0"),
        Value::Float8(x) if *x == 0.0 => write!(out, "0"),
        Value::Interval(i) => write!(out, "{}", crate::time::interval_span_us(i)),
        other => write!(out, "{}", super::relational::text_of(other)),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElemType as E;

    fn cmp(e: ElemType, a: &str, b: &str) -> Ordering {
        array_cmp(e, a, e, b).unwrap()
    }

    #[test]
    fn elements_compare_by_their_type_then_length() {
        assert_eq!(cmp(E::Int4, "{2}", "{10}"), Ordering::Less);
        assert_eq!(cmp(E::Text, "{2}", "{10}"), Ordering::Greater);
        assert_eq!(cmp(E::Int4, "{1,2}", "{1,2,3}"), Ordering::Less);
        assert_eq!(cmp(E::Text, "{b}", "{a,z}"), Ordering::Greater);
        assert_eq!(cmp(E::Numeric, "{1.0}", "{1}"), Ordering::Equal);
        assert_eq!(cmp(E::Int4, "{}", "{NULL}"), Ordering::Less);
        assert_eq!(cmp(E::Int4, "{NULL}", "{5}"), Ordering::Greater);
        assert_eq!(cmp(E::Int4, "{NULL,1}", "{NULL,1}"), Ordering::Equal);
        assert_eq!(
            cmp(E::Text, r#"{"a b","c\"d"}"#, r#"{"a b","c\"d"}"#),
            Ordering::Equal
        );
        assert_eq!(cmp(E::Text, r#"{"NULL"}"#, "{NULL}"), Ordering::Less);
        assert_eq!(cmp(E::Bpchar, "{\"a  \"}", "{a}"), Ordering::Equal);
        assert_eq!(cmp(E::Float8, "{NaN}", "{Infinity}"), Ordering::Greater);
        assert_eq!(
            array_cmp(E::Int4, "{1}", E::Numeric, "{1.5}").unwrap(),
            Ordering::Less
        );
    }

    #[test]
    fn malformed_arrays_are_errors() {
        assert!(array_cmp(E::Int4, "1", E::Int4, "{1}").is_err());
        assert!(array_cmp(E::Int4, "{1,}", E::Int4, "{1}").is_err());
        assert!(array_cmp(E::Int4, "{{1},{2,3}}", E::Int4, "{1}").is_err());
        assert!(array_cmp(E::Int4, "{x}", E::Int4, "{1}").is_err());
    }

    #[test]
    fn arrays_of_several_dimensions_compare_flat_then_by_shape() {
        assert_eq!(
            cmp(E::Int4, "{{1,2},{3,4}}", "{{1,2},{3,5}}"),
            Ordering::Less
        );
        assert_eq!(
            cmp(E::Int4, "{{1,2},{3,4}}", "{1,2,3,4}"),
            Ordering::Greater
        );
        assert_eq!(
            cmp(E::Int4, "{{1,2},{3,4}}", "{{1,2,3,4}}"),
            Ordering::Greater
        );
        assert_eq!(cmp(E::Numeric, "{{1.0}}", "{{1}}"), Ordering::Equal);
        assert_eq!(
            array_key(E::Numeric, "{{1.0}}"),
            array_key(E::Numeric, "{{1}}")
        );
        assert_ne!(array_key(E::Int4, "{{1,2}}"), array_key(E::Int4, "{1,2}"));
    }

    #[test]
    fn keys_are_equal_for_equal_arrays() {
        assert_eq!(
            array_key(E::Numeric, "{1.0,NULL}"),
            array_key(E::Numeric, "{1,NULL}")
        );
        assert_ne!(
            array_key(E::Numeric, "{1}"),
            array_key(E::Numeric, "{1,NULL}")
        );
        assert_eq!(array_key(E::Float8, "{-0}"), array_key(E::Float8, "{0}"));
        assert_ne!(
            array_key(E::Text, "{NULL}"),
            array_key(E::Text, "{\"NULL\"}")
        );
        assert_eq!(
            array_key(E::Interval, "{\"1 mon\"}"),
            array_key(E::Interval, "{\"30 days\"}")
        );
    }
}
