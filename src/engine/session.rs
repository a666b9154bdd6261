//! One client's session: prepare, describe, execute; transaction state and cursors.

use std::sync::Arc;

use super::{Engine, Outcome};
use crate::error::{Error, Result};
use crate::types::{Column, DataType, Value};

/// A parsed statement, not yet bound (binding happens at describe/execute time, so that a
/// multi-statement string may create a stream and then read it).
#[derive(Clone, Debug)]
pub struct Statement {
    pub(crate) parsed: crate::sql::Parsed,
}

impl Statement {
    /// The statement's SQL text.
    pub fn text(&self) -> &str {
        self.parsed.text()
    }
}

/// What the extended protocol's Describe reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    /// Types of `$1..$n`.
    pub params: Vec<DataType>,
    /// Result columns; `None` for statements without rows (RowDescription vs NoData).
    pub columns: Option<Vec<Column>>,
}

/// Transaction status for ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// 'I'
    Idle,
    /// 'T'
    InBlock,
    /// 'E'
    Failed,
}

/// A client's session.
pub struct Session {
    pub(crate) engine: Arc<Engine>,
    pub(crate) pid: i32,
    pub(crate) tx: TxStatus,
}

impl Session {
    pub(crate) fn new(engine: Arc<Engine>, pid: i32) -> Session {
        Session { engine, pid, tx: TxStatus::Idle }
    }

    /// The backend id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Transaction status for ReadyForQuery.
    pub fn tx_status(&self) -> TxStatus {
        self.tx
    }

    /// Mark the open transaction block failed after an error (no-op outside a block).
    pub fn fail_transaction(&mut self) {
        if self.tx == TxStatus::InBlock {
            self.tx = TxStatus::Failed;
        }
    }

    /// Split and parse a query string into statements. Errors: 42601.
    pub fn prepare(&mut self, text: &str) -> Result<Vec<Statement>> {
        Ok(crate::sql::parse(text)?.into_iter().map(|parsed| Statement { parsed }).collect())
    }

    /// Describe a statement for the extended protocol. `param_hints` are the types the
    /// client gave in Parse (`None` = unspecified).
    pub fn describe(&mut self, _stmt: &Statement, _param_hints: &[Option<DataType>]) -> Result<Description> {
        Err(Error::FeatureNotSupported("describe".into()))
    }

    /// Execute a statement with bound parameter values.
    pub async fn execute(&mut self, _stmt: &Statement, _params: &[Value]) -> Result<Outcome> {
        Err(Error::FeatureNotSupported("execute".into()))
    }
}
