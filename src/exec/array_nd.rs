//! Multidimensional arrays held as their text form (`{{1,2},{3,4}}`), as PostgreSQL 15
//! reads and prints them: every sub-array of one level has the same dimensions, elements
//! are stored in row-major order, every dimension's lower bound is 1.

use crate::error::{Error, Result};
use crate::types::Value;

/// A parsed array: its dimensions (none for an empty array) and its elements in
/// row-major order, `None` for NULL.
#[derive(Debug, PartialEq)]
pub(crate) struct Nd {
    /// The length of each dimension, outermost first.
    pub(crate) dims: Vec<usize>,
    /// The elements, `dims`' product of them.
    pub(crate) elems: Vec<Option<String>>,
}

/// Whether `text` is an array of more than one dimension (`{{...`).
pub(crate) fn is_nd(text: &str) -> bool {
    let t = text.trim_start();
    t.strip_prefix('{')
        .is_some_and(|r| r.trim_start().starts_with('{'))
}

/// Parse an array's text form of any number of dimensions. Errors: 22P02 for a
/// malformed literal, sub-arrays of different dimensions among them.
pub(crate) fn parse_nd(text: &str) -> Result<Nd> {
    let bad = || Error::InvalidTextRepresentation(format!("malformed array literal: \"{text}\""));
    let mut p = Parser {
        chars: text.trim().chars().peekable(),
        elems: Vec::new(),
    };
    if p.chars.next() != Some('{') {
        return Err(bad());
    }
    let dims = p.level().ok_or_else(bad)?;
    if p.chars.next().is_some() {
        return Err(bad());
    }
    Ok(match dims.contains(&0) {
        true => Nd {
            dims: vec![],
            elems: vec![],
        },
        false => Nd {
            dims,
            elems: p.elems,
        },
    })
}

struct Parser<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    elems: Vec<Option<String>>,
}

impl Parser<'_> {
    fn blanks(&mut self) {
        while self.chars.peek().is_some_and(|c| c.is_whitespace()) {
            self.chars.next();
        }
    }

    /// One level after its `{`, through its `}`: its dimensions; `None` when malformed.
    fn level(&mut self) -> Option<Vec<usize>> {
        self.blanks();
        if self.chars.peek() == Some(&'}') {
            self.chars.next();
            return Some(vec![0]);
        }
        let (mut n, mut sub, mut scalars) = (0, None::<Vec<usize>>, None::<bool>);
        loop {
            self.blanks();
            if self.chars.peek() == Some(&'{') {
                self.chars.next();
                let d = self.level()?;
                if scalars == Some(true) || sub.as_ref().is_some_and(|s| *s != d) {
                    return None;
                }
                (scalars, sub) = (Some(false), Some(d));
            } else {
                if scalars == Some(false) {
                    return None;
                }
                scalars = Some(true);
                let e = self.scalar()?;
                self.elems.push(e);
            }
            n += 1;
            self.blanks();
            match self.chars.next()? {
                ',' => {}
                '}' => break,
                _ => return None,
            }
        }
        let mut dims = vec![n];
        dims.extend(sub.unwrap_or_default());
        Some(dims)
    }

    /// One element: quoted (with `\` escapes) or bare (trailing blanks dropped, `NULL`
    /// is NULL).
    fn scalar(&mut self) -> Option<Option<String>> {
        let mut item = String::new();
        if self.chars.peek() == Some(&'"') {
            self.chars.next();
            loop {
                match self.chars.next()? {
                    '\\' => item.push(self.chars.next()?),
                    '"' => return Some(Some(item)),
                    c => item.push(c),
                }
            }
        }
        let (mut kept, mut escaped) = (0, false);
        while let Some(&c) = self.chars.peek() {
            match c {
                ',' | '}' => break,
                '{' | '"' => return None,
                '\\' => {
                    self.chars.next();
                    item.push(self.chars.next()?);
                    (kept, escaped) = (item.len(), true);
                }
                c => {
                    self.chars.next();
                    item.push(c);
                    if !c.is_whitespace() {
                        kept = item.len();
                    }
                }
            }
        }
        item.truncate(kept);
        match item.is_empty() {
            true => None,
            false => Some((escaped || !item.eq_ignore_ascii_case("null")).then_some(item)),
        }
    }
}

/// The text form of an array of dimensions `dims` whose elements (row-major) are
/// `elems`; `{}` when it has none.
pub(crate) fn format_nd(dims: &[usize], elems: &[Value]) -> String {
    match dims {
        [] | [_] => super::relational::format_array(elems),
        [n, rest @ ..] => {
            let step = rest.iter().product::<usize>().max(1);
            let parts: Vec<String> = (0..*n)
                .map(|i| format_nd(rest, elems.get(i * step..(i + 1) * step).unwrap_or(&[])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

/// `ARRAY[a, b, ...]` of arrays (`ARRAY[ARRAY[1, 2], ARRAY[3, 4]]`): one more dimension.
/// Errors: 2202E for sub-arrays of different dimensions or a NULL one (unless all are
/// empty or NULL, which give `{}`), 22P02 for a malformed one.
pub(crate) fn nest(subs: &[Value]) -> Result<Value> {
    let mismatch = || {
        Error::ArraySubscript(
            "multidimensional arrays must have array expressions with matching dimensions".into(),
        )
    };
    let mut dims: Option<Vec<usize>> = None;
    let mut elems = Vec::new();
    for s in subs {
        let nd = match s {
            Value::Null => Nd {
                dims: vec![],
                elems: vec![],
            },
            s => parse_nd(&super::relational::text_of(s))?,
        };
        if dims.as_ref().is_some_and(|d| *d != nd.dims) {
            return Err(mismatch());
        }
        dims = Some(nd.dims);
        elems.extend(nd.elems);
    }
    let inner = dims.unwrap_or_default();
    if inner.is_empty() {
        return Ok(Value::Text("{}".into()));
    }
    let mut all = vec![subs.len()];
    all.extend(inner);
    let vals: Vec<Value> = (elems.into_iter())
        .map(|e| e.map_or(Value::Null, |s| Value::Text(s.into())))
        .collect();
    Ok(Value::Text(format_nd(&all, &vals).into()))
}

/// The element of `text` (an array of any number of dimensions) at 1-based `index`
/// (one subscript per dimension): NULL when the subscripts are too few or too many or
/// out of bounds, as in PostgreSQL. Errors: 22P02 for a malformed array.
pub(crate) fn element_at(text: &str, index: &[i64]) -> Result<Value> {
    let nd = parse_nd(text)?;
    if index.len() != nd.dims.len() {
        return Ok(Value::Null);
    }
    let mut at = 0usize;
    for (&i, &n) in index.iter().zip(&nd.dims) {
        match usize::try_from(i) {
            Ok(i) if (1..=n).contains(&i) => at = at * n + (i - 1),
            _ => return Ok(Value::Null),
        }
    }
    Ok((nd.elems.into_iter().nth(at).flatten()).map_or(Value::Null, |s| Value::Text(s.into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_of_several_dimensions_parse_and_print() {
        let nd = parse_nd("{{1,2,3},{4,NULL,\"a b\"}}").unwrap();
        assert_eq!(nd.dims, vec![2, 3]);
        assert_eq!(nd.elems[4], None);
        let vals: Vec<Value> = (nd.elems.iter())
            .map(|e| e.clone().map_or(Value::Null, |s| Value::Text(s.into())))
            .collect();
        assert_eq!(format_nd(&nd.dims, &vals), "{{1,2,3},{4,NULL,\"a b\"}}");
        assert_eq!(parse_nd("{{},{}}").unwrap().dims, Vec::<usize>::new());
        assert!(parse_nd("{{1},{2,3}}").is_err());
        assert!(parse_nd("{{1},2}").is_err());
        assert!(is_nd(" { {1}}") && !is_nd("{1}"));
    }

    #[test]
    fn nesting_and_subscripts() {
        let a = |s: &str| Value::Text(s.into());
        assert_eq!(nest(&[a("{1,2}"), a("{3,4}")]).unwrap(), a("{{1,2},{3,4}}"));
        assert!(nest(&[a("{1,2}"), a("{3}")]).is_err());
        assert!(nest(&[a("{1,2}"), Value::Null]).is_err());
        assert_eq!(nest(&[Value::Null, Value::Null]).unwrap(), a("{}"));
        assert_eq!(element_at("{{1,2},{3,4}}", &[2, 1]).unwrap(), a("3"));
        assert_eq!(element_at("{{1,2},{3,4}}", &[1]).unwrap(), Value::Null);
        assert_eq!(element_at("{{1,2},{3,4}}", &[3, 1]).unwrap(), Value::Null);
    }
}
