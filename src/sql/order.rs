//! One reading of an ORDER BY item's direction, `ASC | DESC | USING op` and `NULLS FIRST |
//! LAST`, for both plan builders (a query's ORDER BY, an aggregate's, a window's).

use sqlparser::ast;

use crate::error::{Error, Result};

/// An ORDER BY item's direction: descending, and whether NULLs come first (by default
/// they sort as larger than any value: last ascending, first descending, as PostgreSQL).
/// `USING <` is ascending and `USING >` descending (also as `OPERATOR(pg_catalog.>)`).
/// Errors: 42809 for another comparison operator (`USING <=`: not an ordering operator),
/// 42883 for any other operator.
pub(crate) fn sort_order(o: &ast::OrderByOptions) -> Result<(bool, bool)> {
    let descending = match &o.sort {
        None | Some(ast::OrderBySort::Asc) => false,
        Some(ast::OrderBySort::Desc) => true,
        Some(ast::OrderBySort::Using(op)) => using_descending(op)?,
    };
    Ok((descending, o.nulls_first.unwrap_or(descending)))
}

fn using_descending(op: &ast::ObjectName) -> Result<bool> {
    let parts: Vec<String> = op.0.iter().map(|p| p.to_string()).collect();
    let (schema, name) = match parts.as_slice() {
        [name] => (None, name.as_str()),
        [schema, name] => (Some(schema.as_str()), name.as_str()),
        _ => (Some(""), ""),
    };
    if !matches!(schema, None | Some("pg_catalog")) {
        return Err(Error::UndefinedFunction(format!(
            "operator does not exist: {op}"
        )));
    }
    match name {
        "<" => Ok(false),
        ">" => Ok(true),
        "=" | "<>" | "!=" | "<=" | ">=" => Err(Error::WrongObjectType(format!(
            "operator {name} is not a valid ordering operator"
        ))
        .with_hint(
            "Ordering operators must be \"<\" or \">\" members of btree operator families.",
        )),
        _ => Err(Error::UndefinedFunction(format!(
            "operator does not exist: {name}"
        ))),
    }
}
