//! The array search and edit functions of the relational evaluator, as PostgreSQL 15
//! computes them over one-dimensional arrays (held as their text form): elements match
//! by IS NOT DISTINCT FROM (a NULL finds NULLs) with their type's equality (`1.0` finds
//! `1` in a numeric array), positions count from 1.

use super::relational::{format_array, int_of, parse_array, text_of};
use crate::error::{Error, Result};
use crate::types::{ElemType, Value};

/// [`call`] with the element types of its array and element arguments (the first and
/// second): elements match by their type's equality, as PostgreSQL compares them.
pub(crate) fn call_typed(
    name: &str,
    elems: (ElemType, ElemType),
    args: &[Value],
) -> Result<Option<Value>> {
    if let Some(v) = choice(name, elems, args)? {
        return Ok(Some(v));
    }
    if name == "array_nest" {
        return super::array_nd::nest(args).map(Some);
    }
    call_with(name, Some(elems), args)
}

/// `greatest(a, b)`, `least(a, b)` (a NULL argument skipped) and `nullif(a, b)` (NULL
/// when the arrays are equal) of arrays of `elems`: `None` for another name.
fn choice(name: &str, elems: (ElemType, ElemType), args: &[Value]) -> Result<Option<Value>> {
    use std::cmp::Ordering;
    if !matches!(name, "greatest" | "least" | "nullif") {
        return Ok(None);
    }
    let (a, b) = match args {
        [a, b] => (a, b),
        _ => return Ok(Some(Value::Null)),
    };
    if a.is_null() || b.is_null() {
        let kept = if name == "nullif" || b.is_null() {
            a
        } else {
            b
        };
        return Ok(Some(kept.clone()));
    }
    let (x, y) = (text_of(a), text_of(b));
    let o = super::array_cmp::array_cmp(elems.0, &x, elems.1, &y)?;
    Ok(Some(match name {
        "nullif" if o == Ordering::Equal => Value::Null,
        "nullif" => a.clone(),
        "greatest" if o == Ordering::Less => b.clone(),
        "least" if o == Ordering::Greater => b.clone(),
        _ => a.clone(),
    }))
}

/// `array_position(array, elem [, start])`, `array_positions(array, elem)`,
/// `array_remove(array, elem)`, `array_replace(array, from, to)`, `array_dims(array)`,
/// `array_ndims(array)` and
/// `array_slice(array, lo, hi)` (the binder's form of `array[lo:hi]`)
/// over evaluated `args`: `None` for another name. A NULL array gives NULL (so does a NULL
/// start). Errors: 22P02 for a malformed array, 22004 for a NULL start.
pub(crate) fn call(name: &str, args: &[Value]) -> Result<Option<Value>> {
    call_with(name, None, args)
}

/// [`call`], its elements compared with the types `elems` when given (else as text).
fn call_with(
    name: &str,
    elems_ty: Option<(ElemType, ElemType)>,
    args: &[Value],
) -> Result<Option<Value>> {
    if !matches!(
        name,
        "array_position"
            | "array_positions"
            | "array_remove"
            | "array_replace"
            | "array_dims"
            | "array_ndims"
            | "array_slice"
            | "arraycontains"
            | "arraycontained"
            | "arrayoverlap"
    ) {
        return Ok(None);
    }
    let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
    if let Some(v) = containment(name, elems_ty, arg(0), arg(1))? {
        return Ok(Some(v));
    }
    if arg(0).is_null() {
        return Ok(Some(Value::Null));
    }
    let text = text_of(arg(0));
    if matches!(name, "array_dims" | "array_ndims") && super::array_nd::is_nd(&text) {
        let dims = super::array_nd::parse_nd(&text)?.dims;
        return Ok(Some(match name {
            _ if dims.is_empty() => Value::Null,
            "array_ndims" => Value::Int4(dims.len() as i32),
            _ => Value::Text(
                dims.iter()
                    .map(|n| format!("[1:{n}]"))
                    .collect::<String>()
                    .into(),
            ),
        }));
    }
    let elems = parse_array(&text)?;
    let wanted = (!arg(1).is_null()).then(|| text_of(arg(1)));
    let same = matching(elems_ty, &elems, &wanted)?;
    let hits = || {
        (same.iter().enumerate())
            .filter(|(_, m)| **m)
            .map(|(i, _)| i as i32 + 1)
    };
    let as_value = |e: &Option<String>| e.clone().map_or(Value::Null, |s| Value::Text(s.into()));
    Ok(Some(match name {
        "array_position" => {
            let start = match args.get(2) {
                None => 1,
                Some(Value::Null) => {
                    return Err(Error::NullValueNotAllowed(
                        "initial position must not be null".into(),
                    ))
                }
                Some(v) => int_of(v).unwrap_or(1),
            };
            hits()
                .find(|p| i64::from(*p) >= start)
                .map_or(Value::Null, Value::Int4)
        }
        // `array[lo:hi]` (the binder's name for a slice): bounds clipped to the array's;
        // a NULL bound gives NULL.
        "array_slice" => {
            let (Some(lo), Some(hi)) = (int_of(arg(1)), int_of(arg(2))) else {
                return Ok(Some(Value::Null));
            };
            let lo = lo.max(1);
            let hi = hi.min(elems.len() as i64);
            let out: Vec<Value> = if lo > hi {
                vec![]
            } else {
                elems[lo as usize - 1..hi as usize]
                    .iter()
                    .map(as_value)
                    .collect()
            };
            Value::Text(format_array(&out).into())
        }
        "array_positions" => {
            let found: Vec<Value> = hits().map(Value::Int4).collect();
            Value::Text(format_array(&found).into())
        }
        "array_remove" => {
            let kept: Vec<Value> = (elems.iter().zip(&same))
                .filter(|(_, m)| !**m)
                .map(|(e, _)| as_value(e))
                .collect();
            Value::Text(format_array(&kept).into())
        }
        "array_replace" => {
            let to = as_value(&(!arg(2).is_null()).then(|| text_of(arg(2))));
            let out: Vec<Value> = (elems.iter().zip(&same))
                .map(|(e, m)| if *m { to.clone() } else { as_value(e) })
                .collect();
            Value::Text(format_array(&out).into())
        }
        // Arrays here have one dimension; an empty one has none.
        "array_ndims" if elems.is_empty() => Value::Null,
        "array_ndims" => Value::Int4(1),
        // "array_dims": the bounds of the one dimension; NULL for an empty array.
        _ if elems.is_empty() => Value::Null,
        _ => Value::Text(format!("[1:{}]", elems.len()).into()),
    }))
}

/// Whether each element of `elems` is not distinct from `wanted` (NULL from NULL), by
/// the element types `ty` (array's, wanted's) or, without them, as text.
fn matching(
    ty: Option<(ElemType, ElemType)>,
    elems: &[Option<String>],
    wanted: &Option<String>,
) -> Result<Vec<bool>> {
    (elems.iter())
        .map(|e| match (e, wanted, ty) {
            (Some(e), Some(w), Some((te, tw))) => super::array_cmp::elem_eq(te, e, tw, w),
            (e, w, _) => Ok(e == w),
        })
        .collect()
}

/// `arraycontains(a, b)` (`a @> b`), `arraycontained(a, b)` (`a <@ b`) and
/// `arrayoverlap(a, b)` (`a && b`): `None` for another name; NULL when either array is
/// NULL. NULL elements equal nothing, so they are never found. Elements compare by their
/// types `ty` (of `a`, of `b`) when given, else as text.
fn containment(
    name: &str,
    ty: Option<(ElemType, ElemType)>,
    a: &Value,
    b: &Value,
) -> Result<Option<Value>> {
    let (a, b, ty) = match name {
        "arraycontains" | "arrayoverlap" => (a, b, ty),
        "arraycontained" => (b, a, ty.map(|(x, y)| (y, x))),
        _ => return Ok(None),
    };
    if a.is_null() || b.is_null() {
        return Ok(Some(Value::Null));
    }
    let (a, b) = (parse_array(&text_of(a))?, parse_array(&text_of(b))?);
    let mut found = Vec::with_capacity(b.len());
    for e in &b {
        let hit = match e {
            None => false,
            e => matching(ty, &a, e)?.contains(&true),
        };
        found.push(hit);
    }
    Ok(Some(Value::Bool(if name == "arrayoverlap" {
        found.contains(&true)
    } else {
        !found.contains(&false)
    })))
}
