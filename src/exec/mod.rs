//! The streaming executor: batches of tuples in, rows out. It knows nothing of sockets.
//!
//! - [`group`]: per-group partial aggregates of one window instance;
//! - [`windowed`]: shared window aggregation along the WCG forest, slide events, late tuples;
//! - [`query`]: one continuous query (time, WHERE, GROUP BY, HAVING, projection, ORDER BY
//!   within a slide event, LIMIT);
//! - [`join`]: windowed joins of several streams (global current time, birth and death of
//!   join tuples);
//! - [`finite`]: finite queries over system views.
//!
//! Design decision: the executor is fed whole batches and is synchronous. The engine decides
//! where its output goes; the executor only appends [`Event`]s to a vector it is given.

pub mod finite;
pub mod group;
pub mod join;
pub mod query;
pub mod windowed;

pub use join::{JoinExec, JoinInputPlan};
pub use query::{plan_windows, QueryExec, QueryStats, RowBatch};
pub use windowed::{ExecLimits, WorkCounters};

use crate::types::Value;

/// One unit of a query's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Rows of one slide event (or of one batch of pass-through tuples), in ORDER BY order.
    Rows(Vec<Vec<Value>>),
    /// A NOTICE for the client.
    Notice(String),
}
