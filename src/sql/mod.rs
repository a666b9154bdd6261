//! SQL: text to logical plan.
//!
//! [`parse`] splits a query string into statements and parses each with sqlparser's
//! PostgreSQL dialect, after cutting out TelegraphCQ's `[RANGE BY ... SLIDE BY ... START AT
//! ...]` window clauses and handling `CREATE STREAM` and the utility statements sqlparser
//! lacks (`FETCH c`, `MOVE`). [`bind`] resolves names against the catalog and types every
//! expression, producing a [`Plan`]. No sqlparser type leaves this module.
//!
//! Parsing and binding are separate because a multi-statement string may create a stream
//! and then read it: every statement is parsed up front (a syntax error anywhere rejects the
//! whole string, as PostgreSQL does), and each is bound just before it runs.
//!
//! ```ignore
//! use tcq::sql::{parse, bind, Plan, SchemaProvider, StartSpec};
//! use tcq::types::{Column, DataType};
//!
//! struct Catalog;
//! impl SchemaProvider for Catalog {
//!     fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
//!         (name == "flights").then(|| (vec![
//!             Column::new("ts", DataType::Timestamp),
//!             Column::new("delay", DataType::Int4),
//!         ], Some(0)))
//!     }
//!     fn system_view(&self, _: &str) -> Option<Vec<Column>> { None }
//! }
//!
//! let stmts = parse("SELECT avg(delay), wtime(*) FROM flights [RANGE BY '1 hour' SLIDE BY '10 minutes']").unwrap();
//! let Plan::Query(q) = bind(&stmts[0], &Catalog, &[]).unwrap() else { panic!() };
//! assert_eq!(q.windows[0].range_us, 3_600_000_000);
//! assert_eq!(q.windows[0].slide_us, 600_000_000);
//! assert_eq!(q.windows[0].start, StartSpec::Default);
//! assert_eq!(q.columns[0].data_type, DataType::Numeric);
//! ```

mod bind;
pub(crate) mod functions;
mod order;
mod parse;
mod plan;
mod relational;
mod relational_pushdown;
pub(crate) mod types;

pub(crate) use bind::advance_of_no_stream;
pub(crate) use bind::stream_name_of;
pub(crate) use order::sort_order;
pub use plan::*;
pub(crate) use relational::{
    array_elem, AnyOp, CmpOp, FrameBound, FrameUnits, JoinKind, RExpr, RelAgg, RelBody, RelFrame,
    RelFrom, RelGroup, RelQuery, RelSelect, RelWindow, RelWindowFunc, RelationProvider, SetOp,
};
pub(crate) use relational_pushdown::{cols as relational_cols, map_cols as relational_map_cols};
pub(crate) use types::{type_oid_of_name, RType, RegKind};

/// SQL key words for `pg_get_keywords()`: (word, reserved in PostgreSQL).
pub(crate) fn keywords() -> Vec<(&'static str, bool)> {
    const RESERVED: &[&str] = &[
        "ALL",
        "ANALYSE",
        "ANALYZE",
        "AND",
        "ANY",
        "ARRAY",
        "AS",
        "ASC",
        "ASYMMETRIC",
        "BOTH",
        "CASE",
        "CAST",
        "CHECK",
        "COLLATE",
        "COLUMN",
        "CONSTRAINT",
        "CREATE",
        "CURRENT_CATALOG",
        "CURRENT_DATE",
        "CURRENT_ROLE",
        "CURRENT_TIME",
        "CURRENT_TIMESTAMP",
        "CURRENT_USER",
        "DEFAULT",
        "DEFERRABLE",
        "DESC",
        "DISTINCT",
        "DO",
        "ELSE",
        "END",
        "EXCEPT",
        "FALSE",
        "FETCH",
        "FOR",
        "FOREIGN",
        "FROM",
        "GRANT",
        "GROUP",
        "HAVING",
        "IN",
        "INITIALLY",
        "INTERSECT",
        "INTO",
        "LATERAL",
        "LEADING",
        "LIMIT",
        "LOCALTIME",
        "LOCALTIMESTAMP",
        "NOT",
        "NULL",
        "OFFSET",
        "ON",
        "ONLY",
        "OR",
        "ORDER",
        "PLACING",
        "PRIMARY",
        "REFERENCES",
        "RETURNING",
        "SELECT",
        "SESSION_USER",
        "SOME",
        "SYMMETRIC",
        "TABLE",
        "THEN",
        "TO",
        "TRAILING",
        "TRUE",
        "UNION",
        "UNIQUE",
        "USER",
        "USING",
        "VARIADIC",
        "WHEN",
        "WHERE",
        "WINDOW",
        "WITH",
    ];
    sqlparser::keywords::ALL_KEYWORDS
        .iter()
        .map(|k| (*k, RESERVED.contains(k)))
        .collect()
}

#[cfg(test)]
/// Parse and bind one finite relational query (a SELECT over `provider`'s relations)
/// without the engine: for tests and examples. Errors as [`bind`] gives them.
pub(crate) fn bind_relational(text: &str, provider: &dyn RelationProvider) -> Result<RelQuery> {
    let stmts = parse(text)?;
    let stmt = stmts
        .first()
        .ok_or_else(|| crate::Error::Syntax("empty query".into()))?;
    relational::bind_parsed(&stmt.inner, provider)
}

use crate::error::Result;
use crate::types::DataType;

/// One parsed statement (opaque outside `sql`).
#[derive(Clone, Debug)]
pub struct Parsed {
    inner: parse::ParsedStmt,
}

impl Parsed {
    /// The statement's SQL text (without the terminating `;`).
    pub(crate) fn text(&self) -> &str {
        &self.inner.text
    }

    /// For `DEALLOCATE [PREPARE] name`, `Some(Some(name))` (case kept when quoted, else
    /// lower-cased); for `DEALLOCATE ALL`, `Some(None)`; else `None`. The server forgets
    /// the connection's prepared statements it names.
    pub(crate) fn deallocates(&self) -> Option<Option<String>> {
        match &self.inner.stmt {
            parse::Stmt::Ast(s) => match &**s {
                sqlparser::ast::Statement::Deallocate { name, .. } => Some(deallocate_name(name)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Identifiers the statement wrote longer than 63 bytes (PostgreSQL's NAMEDATALEN - 1),
    /// each with the name it was cut to (on a character boundary) and means: PostgreSQL
    /// sends a NOTICE (42622) for each.
    pub(crate) fn truncated_identifiers(&self) -> &[(String, String)] {
        &self.inner.truncated
    }
}

/// The statement a `DEALLOCATE` names (`None`: ALL), as PostgreSQL folds identifiers.
pub(crate) fn deallocate_name(name: &sqlparser::ast::Ident) -> Option<String> {
    if name.quote_style.is_some() {
        Some(name.value.clone())
    } else {
        let n = name.value.to_ascii_lowercase();
        (n != "all").then_some(n)
    }
}

/// Split `text` into statements and parse each. An empty string (or a lone `;`) gives one
/// empty statement, which binds to [`Plan::Empty`]. Errors: 42601
/// ([`crate::Error::Syntax`]) with PostgreSQL's wording.
pub fn parse(text: &str) -> Result<Vec<Parsed>> {
    Ok(parse::parse_all(text)?
        .into_iter()
        .map(|inner| Parsed { inner })
        .collect())
}

/// Resolve and type a parsed statement. `param_hints` are client-given parameter types
/// (`None` = unspecified); unhinted parameters take their type from context (a comparison
/// with a column, an INSERT target column), else `text`.
pub fn bind(
    parsed: &Parsed,
    schema: &dyn SchemaProvider,
    param_hints: &[Option<DataType>],
) -> Result<Plan> {
    bind::bind(&parsed.inner, schema, param_hints)
}

/// The most parameters a statement may have: the protocol's Bind message counts them in
/// 16 bits, so PostgreSQL can be sent no more either.
pub(crate) const PARAMS_MAX: usize = 65_535;

/// The 0-based index of a placeholder token (`$1` is 0). Errors: 42P02 `there is no
/// parameter $n` for `$0` and for a number past [`PARAMS_MAX`] (which no Bind could fill,
/// and whose type slots would otherwise be allocated up to it).
pub(crate) fn placeholder_index(p: &str) -> Result<usize> {
    let digits = p.strip_prefix('$').unwrap_or(p);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(crate::Error::Syntax(format!(
            "syntax error at or near \"{p}\""
        )));
    }
    match digits.parse::<usize>() {
        Ok(n) if (1..=PARAMS_MAX).contains(&n) => Ok(n - 1),
        _ => Err(crate::Error::UndefinedParameter(format!(
            "there is no parameter {p}"
        ))),
    }
}

/// Run a step of a recursion over expressions with enough stack: the stack grows in 4 MiB
/// segments whenever less than 256 KiB remain, so no expression depth overflows a thread.
pub(crate) fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, f)
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::sql::{bind, parse, Plan, SchemaProvider, StartSpec};
        use crate::types::{Column, DataType};

        struct Catalog;
        impl SchemaProvider for Catalog {
            fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
                (name == "flights").then(|| {
                    (
                        vec![
                            Column::new("ts", DataType::Timestamp),
                            Column::new("delay", DataType::Int4),
                        ],
                        Some(0),
                    )
                })
            }
            fn system_view(&self, _: &str) -> Option<Vec<Column>> {
                None
            }
        }

        let stmts = parse(
            "SELECT avg(delay), wtime(*) FROM flights [RANGE BY '1 hour' SLIDE BY '10 minutes']",
        )
        .unwrap();
        let Plan::Query(q) = bind(&stmts[0], &Catalog, &[]).unwrap() else {
            panic!()
        };
        assert_eq!(q.windows[0].range_us, 3_600_000_000);
        assert_eq!(q.windows[0].slide_us, 600_000_000);
        assert_eq!(q.windows[0].start, StartSpec::Default);
        assert_eq!(q.columns[0].data_type, DataType::Numeric);
    }
}
