//! SQL: text to logical plan.
//!
//! [`parse`] splits a query string into statements and parses each with sqlparser's
//! PostgreSQL dialect, after cutting out TelegraphCQ's `[RANGE BY ... SLIDE BY ... START AT
//! ...]` window clauses and handling `CREATE STREAM`. [`bind`] resolves names against the
//! catalog and types every expression, producing a [`Plan`]. No sqlparser type leaves
//! this module.

mod plan;

pub use plan::*;

use crate::error::{Error, Result};
use crate::types::DataType;

/// One parsed statement (opaque outside `sql`).
#[derive(Clone, Debug)]
pub struct Parsed {
    text: String,
}

impl Parsed {
    /// The statement's SQL text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Split `text` into statements and parse each. Errors: 42601 with the position.
pub fn parse(text: &str) -> Result<Vec<Parsed>> {
    Ok(vec![Parsed { text: text.to_string() }])
}

/// Resolve and type a parsed statement. `param_hints` are client-given parameter types.
pub fn bind(_parsed: &Parsed, _schema: &dyn SchemaProvider, _param_hints: &[Option<DataType>]) -> Result<Plan> {
    Err(Error::FeatureNotSupported("bind".into()))
}
