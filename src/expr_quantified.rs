//! `x op ANY|ALL (array)` over an array a continuous query builds from each row
//! ([`ScalarFunc::Quantified`](crate::sql::ScalarFunc::Quantified)): `string_to_array`,
//! `regexp_split_to_array` and a text value cast to an array type, as PostgreSQL 15's
//! ScalarArrayOpExpr evaluates them: ANY is true when some element's comparison is true,
//! else NULL when `x` or some element is NULL (or a comparison NULL), else false; ALL
//! the same with true and false swapped. An empty array gives false for ANY and true for
//! ALL, whatever `x` is.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::sql::{ArraySource, QuantOp, QuantSpec};
use crate::types::Value;

/// `vals[0] op ANY|ALL (array of vals[1..])` by `spec`: a boolean or NULL (NULL also when
/// the array is). Errors: 22P02 for an element of `ArraySource::Text` that is no value of
/// its type or a malformed array literal, 2201B for a bad pattern, 42883 for values
/// that do not compare.
pub(crate) fn quantified(spec: QuantSpec, vals: &[Value]) -> Result<Value> {
    let (x, src) = vals.split_first().ok_or_else(arity)?;
    let text = |i: usize| match src.get(i) {
        Some(Value::Text(s)) => Ok(Some(s.as_str())),
        Some(Value::Null) | None => Ok(None),
        Some(other) => Err(Error::Internal(format!(
            "array argument {other:?} is not text"
        ))),
    };
    let Some(s) = text(0)? else {
        return Ok(Value::Null);
    };
    let mut acc = Acc {
        all: spec.all,
        decided: false,
        saw_null: false,
    };
    let mut each = |el: Option<&str>| -> Result<()> {
        let r = match (x, el) {
            (Value::Null, _) | (_, None) => None,
            (x, Some(el)) => Some(element_holds(spec, x, el)?),
        };
        acc.add(r);
        Ok(())
    };
    match spec.source {
        ArraySource::Split => {
            let null = text(2)?;
            fn el<'e>(p: &'e str, null: Option<&str>) -> Option<&'e str> {
                if Some(p) == null {
                    None
                } else {
                    Some(p)
                }
            }
            match (s, src.get(1)) {
                ("", _) => {}
                (s, Some(Value::Null)) => {
                    let mut buf = [0u8; 4];
                    for c in s.chars() {
                        each(el(c.encode_utf8(&mut buf), null))?;
                    }
                }
                (s, _) => match text(1)? {
                    Some("") | None => each(el(s, null))?,
                    Some(sep) => {
                        for p in s.split(sep) {
                            each(el(p, null))?;
                        }
                    }
                },
            }
        }
        ArraySource::RegexSplit => {
            let (Some(pattern), flags) = (text(1)?, text(2)?) else {
                return Ok(Value::Null);
            };
            if src.len() > 2 && flags.is_none() {
                return Ok(Value::Null);
            }
            let flags = flags.unwrap_or("");
            for p in crate::expr_regex::split(s, pattern, flags, "regexp_split_to_array")? {
                each(Some(&p))?;
            }
        }
        ArraySource::Text(_) => {
            for el in crate::exec::array_nd::parse_nd(s)?.elems {
                each(el.as_deref())?;
            }
        }
    }
    Ok(acc.result())
}

/// Whether `x op el` holds, `el` an element's text form read as the array's element type.
fn element_holds(spec: QuantSpec, x: &Value, el: &str) -> Result<bool> {
    let elem: Cow<'_, Value> = match (spec.source, x) {
        // Text with text: compared in place below.
        (ArraySource::Split | ArraySource::RegexSplit, _) => Cow::Owned(Value::Null),
        (ArraySource::Text(t), _) => {
            Cow::Owned(crate::expr::cast_value(Value::Text(el.into()), t)?)
        }
    };
    match spec.op {
        QuantOp::Like {
            negated,
            case_insensitive,
        } => {
            let Value::Text(s) = x else {
                return Err(Error::Internal(format!("LIKE operand {x:?} is not text")));
            };
            let pattern = match &*elem {
                Value::Text(p) => p.as_str(),
                _ => el,
            };
            Ok(crate::expr::like_match(s, pattern, case_insensitive)? != negated)
        }
        QuantOp::Cmp(op) => {
            let o = match (&*elem, x) {
                (Value::Null, Value::Text(s)) => s.as_bytes().cmp(el.as_bytes()),
                (Value::Null, other) => crate::expr::compare(other, &Value::Text(el.into()))?,
                (e, x) => crate::expr::compare(x, e)?,
            };
            Ok(op.holds(o).unwrap_or(o == Ordering::Equal))
        }
    }
}

/// The result of ANY or ALL so far: decided once an element's comparison is true (ANY)
/// or false (ALL).
struct Acc {
    all: bool,
    decided: bool,
    saw_null: bool,
}

impl Acc {
    fn add(&mut self, r: Option<bool>) {
        match r {
            None => self.saw_null = true,
            Some(b) if b != self.all => self.decided = true,
            Some(_) => {}
        }
    }

    fn result(&self) -> Value {
        if self.decided {
            Value::Bool(!self.all)
        } else if self.saw_null {
            Value::Null
        } else {
            Value::Bool(self.all)
        }
    }
}

fn arity() -> Error {
    Error::Internal("quantified comparison without arguments".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::BinaryOp;
    use crate::types::DataType;

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    fn any(source: ArraySource, op: QuantOp, vals: &[Value]) -> Result<Value> {
        let spec = QuantSpec {
            op,
            all: false,
            source,
        };
        quantified(spec, vals)
    }

    /// Expected values are PostgreSQL 15's for the same expressions.
    #[test]
    fn splits_and_null_rules_match_postgresql() {
        let eq = QuantOp::Cmp(BinaryOp::Eq);
        // NULL = ANY (string_to_array('', ',')): no element, false.
        assert_eq!(
            any(ArraySource::Split, eq, &[Value::Null, t(""), t(",")]).unwrap(),
            Value::Bool(false)
        );
        // A NULL separator splits into characters.
        assert_eq!(
            any(ArraySource::Split, eq, &[t("b"), t("abc"), Value::Null]).unwrap(),
            Value::Bool(true)
        );
        // The NULL marker makes 'x' a NULL element: no match, one NULL.
        assert_eq!(
            any(ArraySource::Split, eq, &[t("x"), t("a,x"), t(","), t("x")]).unwrap(),
            Value::Null
        );
        // An empty separator: the whole string, ALL over one equal element.
        let spec = QuantSpec {
            op: eq,
            all: true,
            source: ArraySource::Split,
        };
        assert_eq!(
            quantified(spec, &[t("a"), t("a"), t("")]).unwrap(),
            Value::Bool(true)
        );
        // A NULL flags argument: a NULL array.
        assert_eq!(
            any(
                ArraySource::RegexSplit,
                eq,
                &[t("a"), t("a"), t(","), Value::Null]
            )
            .unwrap(),
            Value::Null
        );
        let ilike = QuantOp::Like {
            negated: false,
            case_insensitive: true,
        };
        assert_eq!(
            any(ArraySource::RegexSplit, ilike, &[t("A"), t("xa"), t("x")]).unwrap(),
            Value::Bool(true)
        );
    }

    #[test]
    fn cast_arrays_read_every_element_with_its_type() {
        let eq = QuantOp::Cmp(BinaryOp::Eq);
        let ints = ArraySource::Text(DataType::Int4);
        assert_eq!(
            any(ints, eq, &[Value::Int4(3), t("{{1,2},{3,4}}")]).unwrap(),
            Value::Bool(true)
        );
        // A bad element is an error even after a match, as PostgreSQL reads the whole array.
        let err = any(ints, eq, &[Value::Int4(1), t("{1,a}")]).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidTextRepresentation(m) if m.contains("\"a\"")),
            "{err:?}"
        );
        assert_eq!(
            any(ints, eq, &[Value::Int4(1), Value::Null]).unwrap(),
            Value::Null
        );
    }
}
