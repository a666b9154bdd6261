//! The streaming executor: batches of tuples in, rows out. It knows nothing of sockets.
//!
//! - [`group`]: per-group partial aggregates of one window instance;
//! - [`having`]: HAVING compiled for its common shape (aggregate results against constants);
//! - [`windowed`]: shared window aggregation along the WCG forest, slide events, late tuples;
//! - `slide`: the sliding-window aggregators (Two-Stacks, subtract-on-evict) of plan nodes
//!   that read their parent's partials as a FIFO;
//! - [`query`]: one continuous query (time, WHERE, GROUP BY, HAVING, projection, ORDER BY
//!   within a slide event, LIMIT);
//! - [`join`]: windowed joins of several streams (global current time, birth and death of
//!   join tuples);
//! - [`table_join`]: stream-table joins, each table read as it is at every slide event;
//! - [`finite`]: finite queries over system views and tables;
//! - [`columns`]: columnar batches (Arrow arrays) as COPY builds them;
//! - [`block`]: result rows of one slide event held as columns ([`typed`]: by type).
//!
//! Design decision: the executor is fed whole batches and is synchronous. The engine decides
//! where its output goes; the executor only appends [`Event`]s to a vector it is given.

pub(crate) mod array_cmp;
mod array_funcs;
pub(crate) mod array_nd;
pub(crate) mod block;
pub(crate) mod cancel;
pub mod columns;
pub(crate) mod finite;
pub mod group;
pub(crate) mod having;
pub(crate) mod join;
mod join_count;
pub(crate) mod join_multi;
pub mod kernels;
pub mod query;
pub(crate) mod relational;
pub(crate) mod relational_funcs;
pub mod shared;
mod slide;
pub(crate) mod table_join;
pub(crate) mod typed;
pub(crate) mod windowed;

pub(crate) use join::{JoinExec, JoinInputPlan};
pub(crate) use join_multi::MultiJoin;
pub use query::{plan_windows, QueryExec, RowBatch};
pub(crate) use query::{QueryStats, StateSummary};
pub use windowed::ExecLimits;
pub(crate) use windowed::WorkCounters;

use crate::types::Value;
pub(crate) use block::RowBlock;
use columns::ColumnBatch;

/// A batch of tuples in arrival order, as a stream's ingest queue carries it: rows (INSERT)
/// or typed columns (COPY). Both give a query exactly the same rows.
#[derive(Clone, Debug)]
pub enum Batch {
    /// Rows of values.
    Rows(RowBatch),
    /// Typed columns.
    Columns(ColumnBatch),
}

impl Batch {
    /// Number of tuples.
    pub fn len(&self) -> usize {
        self.times().len()
    }

    /// True when the batch holds no tuple.
    pub fn is_empty(&self) -> bool {
        self.times().is_empty()
    }

    /// Each tuple's timestamp, microseconds since the epoch.
    pub fn times(&self) -> &[i64] {
        match self {
            Batch::Rows(b) => &b.times,
            Batch::Columns(b) => &b.times,
        }
    }

    /// Approximate heap bytes held, for queue budgets.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Batch::Rows(b) => b.heap_bytes(),
            Batch::Columns(b) => b.heap_bytes(),
        }
    }

    /// The tuples `rows` of this batch, in order, as a batch of their own (Arrow columns
    /// are sliced without copying; rows and numeric/interval values are copied). Panics
    /// when `rows` is out of bounds.
    pub fn slice(&self, rows: std::ops::Range<usize>) -> Batch {
        match self {
            Batch::Rows(b) => Batch::Rows(RowBatch {
                ncols: b.ncols,
                values: b.values[rows.start * b.ncols..rows.end * b.ncols].to_vec(),
                times: b.times[rows].to_vec(),
            }),
            Batch::Columns(b) => Batch::Columns(b.slice(rows)),
        }
    }
}

impl From<RowBatch> for Batch {
    fn from(b: RowBatch) -> Batch {
        Batch::Rows(b)
    }
}

impl From<ColumnBatch> for Batch {
    fn from(b: ColumnBatch) -> Batch {
        Batch::Columns(b)
    }
}

/// One unit of a query's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Rows of one slide event (or of one batch of pass-through tuples), in ORDER BY order.
    Rows(Vec<Vec<Value>>),
    /// Rows of one slide event as columns (aggregate queries whose select list names only
    /// group keys, aggregates and window metadata, without ORDER BY).
    Block(RowBlock),
    /// A NOTICE for the client.
    Notice(String),
}

impl Event {
    /// Number of rows the event carries (0 for a NOTICE).
    pub fn row_count(&self) -> usize {
        match self {
            Event::Rows(r) => r.len(),
            Event::Block(b) => b.len(),
            Event::Notice(_) => 0,
        }
    }

    /// The event's rows, one vector of values each (none for a NOTICE).
    pub fn into_rows(self) -> Vec<Vec<Value>> {
        match self {
            Event::Rows(r) => r,
            Event::Block(b) => b.into_rows(),
            Event::Notice(_) => Vec::new(),
        }
    }
}
