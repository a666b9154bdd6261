//! Stream fan-out and slow-client delivery, each in one place.
//!
//! A stream's statements reach two kinds of reader. Queries over one stream run inside the
//! stream's ingest task; join queries read several streams, so each gets its own task and
//! its own bounded input queue (its *feed*), and a stream keeps the feeds of the joins
//! reading it ([`JoinFeeds`]). A statement's batch is put on those feeds when the statement
//! is accepted, while it holds its stream's enqueue order, so a join sees the statements of
//! all its streams in the order the server accepted them.
//!
//! Whatever the reader, its slide events go to its output queue through [`deliver`]: a full
//! queue waits while its reader keeps taking rows, and a reader that takes nothing for
//! `output_stall_timeout` loses its query with 54000 ([`fell_behind`]).
//!
//! A leaf of the engine: it knows batches, events and output queues, not streams or
//! queries.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};

use super::outq::OutSender;
use crate::error::Error;
use crate::exec::{Batch, Event};

/// Messages a join's task consumes, in order.
pub(crate) enum JoinMsg {
    /// A batch of the join's stream number `.0`.
    Batch(usize, Arc<Batch>),
    /// Stream `.0`'s time moved to `.1` without tuples.
    Heartbeat(usize, i64),
    /// Acknowledge once everything before has been processed.
    Barrier(oneshot::Sender<()>),
    /// A stream of the join was dropped: end the query after what is queued.
    End,
}

/// A stream's link to a join reading it.
#[derive(Clone)]
pub(crate) struct JoinFeed {
    /// The join query's id.
    pub(crate) id: u64,
    /// Which of the join's streams this is.
    pub(crate) stream: usize,
    pub(crate) tx: mpsc::Sender<JoinMsg>,
}

/// The feeds of the join queries reading one stream.
#[derive(Default)]
pub(crate) struct JoinFeeds(Mutex<Vec<JoinFeed>>);

impl JoinFeeds {
    /// Add the feed of a join that starts reading the stream.
    pub(crate) fn add(&self, feed: JoinFeed) {
        self.0.lock().push(feed);
    }

    /// Remove the feeds of join `id` (its subscription was dropped).
    pub(crate) fn remove(&self, id: u64) {
        self.0.lock().retain(|f| f.id != id);
    }

    /// How many joins read the stream.
    pub(crate) fn len(&self) -> usize {
        self.0.lock().len()
    }

    /// Put a batch accepted into the stream on the feed of every join reading it.
    pub(crate) async fn forward_batch(&self, batch: &Batch) {
        let feeds: Vec<JoinFeed> = self.0.lock().clone();
        if feeds.is_empty() {
            return;
        }
        // A columnar batch (COPY) is shared as it is (its arrays are reference-counted):
        // each join reads it as rows on its own task, or reads its key columns directly.
        let shared = Arc::new(batch.clone());
        for f in feeds {
            // A join that ended has dropped its feed; nothing is lost by skipping it.
            let _ = f.tx.send(JoinMsg::Batch(f.stream, shared.clone())).await;
        }
    }

    /// Move the stream's time to `t_us` in every join reading it (`tcq_advance`).
    pub(crate) async fn forward_heartbeat(&self, t_us: i64) {
        let feeds: Vec<JoinFeed> = self.0.lock().clone();
        for f in feeds {
            let _ = f.tx.send(JoinMsg::Heartbeat(f.stream, t_us)).await;
        }
    }

    /// The server clock's heartbeat for an idle stream stamped on arrival; skipped when a
    /// feed is full (the next tick will carry a later time anyway).
    pub(crate) fn try_forward_heartbeat(&self, t_us: i64) {
        for f in self.0.lock().iter() {
            let _ = f.tx.try_send(JoinMsg::Heartbeat(f.stream, t_us));
        }
    }

    /// The stream was dropped: every join reading it ends after what it has queued.
    pub(crate) async fn end_all(&self) {
        let feeds: Vec<JoinFeed> = std::mem::take(&mut *self.0.lock());
        for f in feeds {
            let _ = f.tx.send(JoinMsg::End).await;
        }
    }
}

/// 54000 for query `id` whose reader fell behind: its output queue held `bytes_max` bytes
/// and the reader took nothing for `output_stall_timeout`.
pub(crate) fn fell_behind(id: u64, bytes_max: usize) -> Error {
    tracing::info!(
        query = id,
        "slow client: its query's output queue reached {bytes_max} bytes; ending the query"
    );
    Error::ProgramLimitExceeded(format!(
        "query {id} ended: its client fell behind and its output queue reached output_queue_bytes ({bytes_max} bytes)"
    ))
}

/// Queue the slide events of query `id` on its output queue `slot` (nothing once the
/// query is closed). A full queue waits while its reader keeps taking rows; a reader
/// that takes nothing for `stall` makes this return [`fell_behind`]'s 54000, and the
/// caller ends the query with it.
pub(crate) async fn deliver(
    slot: &Mutex<Option<OutSender>>,
    events: Vec<Event>,
    stall: std::time::Duration,
    id: u64,
) -> Result<(), Error> {
    match super::outq::deliver(slot, events, stall).await {
        Some(full) => Err(fell_behind(id, full.bytes_max)),
        None => Ok(()),
    }
}
