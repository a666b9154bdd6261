//! A continuous query's output as the server reads it.
//!
//! A [`Subscription`] is the receiving end of a registered query's bounded output queue.
//! Each [`Event`] is the rows of one slide event (or a batch of pass-through tuples) or a
//! NOTICE. The query ends when `next` returns `None` (LIMIT reached, stream dropped); it
//! ends with an error (e.g. 54000 when its reader fell behind by `output_queue_bytes`). Dropping the subscription
//! unregisters the query: that is how cancel and disconnect stop it.

use super::outq::{OutReceiver, TryRecv};
use crate::error::Result;
pub(crate) use crate::exec::Event;
use crate::types::Column;

/// The receiving end of a continuous query.
pub struct Subscription {
    pub(crate) columns: Vec<Column>,
    pub(crate) rx: OutReceiver,
    pub(crate) guard: Option<Box<dyn Send + Sync>>,
    pub(crate) query_id: u64,
    /// Set when the query failed; reported once the queue is drained.
    pub(crate) failure: Option<std::sync::Arc<parking_lot::Mutex<Option<crate::Error>>>>,
}

impl Subscription {
    /// The result columns.
    pub(crate) fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The query's id, as `tcq_queries` shows it.
    pub(crate) fn query_id(&self) -> u64 {
        self.query_id
    }

    /// The next event; `None` when the query has ended normally. Cancel-safe.
    pub(crate) async fn next(&mut self) -> Option<Result<Event>> {
        match self.rx.recv().await {
            Some(ev) => Some(ev),
            None => self.take_failure(),
        }
    }

    fn take_failure(&mut self) -> Option<Result<Event>> {
        self.failure.as_ref().and_then(|f| f.lock().take()).map(Err)
    }

    /// The next event if one is ready now: `Some(Some(..))` an event, `Some(None)` the
    /// query ended, `None` nothing ready (the time to flush).
    pub(crate) fn try_next(&mut self) -> Option<Option<Result<Event>>> {
        match self.rx.try_recv() {
            TryRecv::Event(ev) => Some(Some(ev)),
            TryRecv::Empty => None,
            TryRecv::Closed => Some(self.take_failure()),
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // Dropping the guard unregisters the query from its stream.
        self.guard.take();
    }
}
