//! An all-or-nothing COPY parses each chunk of plain lines (see `copy_plain`) in two halves
//! on two of the runtime's blocking threads while the connection receives the next chunk,
//! so the client is not kept waiting for the parse of what it sent before. The blocking
//! threads outlive the chunk (the runtime keeps idle ones for a while), so a COPY starts no
//! thread per chunk.
//!
//! One chunk is in flight at a time: the next chunk, the end of the data and every other
//! parse wait for it first, so rows are staged in the order they were sent. A chunk the
//! plain parser gives up on goes back in front of the data received since, and the
//! one-thread path parses it again to report its error exactly (line, column, SQLSTATE), as
//! it does without the pipeline; the error reaches the client one message later than the
//! one that completed its chunk (or at CopyDone), and the COPY keeps nothing either way.
//! The COPY's own state (`copy::CopyIn`) drives it; this module knows only the bytes.

use std::sync::Arc;

use super::copy_fields::CopyRel;
use super::copy_plain::{halves_split, join_halves, parse_part, PlainCtx, PlainRows};
use crate::error::{Error, Result};

/// A chunk being parsed in two halves on blocking threads (see `halves_split`), each
/// giving its rows or `None` (then the chunk is parsed again on the one-thread path); the
/// chunk's complete lines are its first `end` bytes. No halves when no newline cuts them.
struct PlainJob {
    halves: Option<[tokio::task::JoinHandle<Option<PlainRows>>; 2]>,
    chunk: Arc<Vec<u8>>,
    end: usize,
}

/// The chunk in flight, if any, and the buffer the next chunk is gathered in.
#[derive(Default)]
pub(super) struct PlainPipeline {
    pending: Option<PlainJob>,
    spare: Vec<u8>,
}

/// What [`PlainPipeline::collect`] found.
pub(super) enum Collected {
    /// No chunk was in flight.
    Idle,
    /// The chunk's rows, to be staged.
    Rows(PlainRows),
    /// The chunk is back in front of the data, for the one-thread path.
    Again,
}

/// What the parse of one chunk needs, owned by its thread.
struct JobCtx {
    rel: Arc<CopyRel>,
    targets: Vec<usize>,
    untargeted: Vec<usize>,
    delimiter: u8,
    null: Vec<u8>,
    line_max: usize,
    crlf: bool,
    quote: Option<u8>,
}

impl JobCtx {
    fn ctx(&self) -> PlainCtx<'_> {
        PlainCtx {
            rel: &self.rel,
            targets: &self.targets,
            untargeted: &self.untargeted,
            delimiter: self.delimiter,
            null: &self.null,
            line_max: self.line_max,
            crlf: self.crlf,
            quote: self.quote,
        }
    }
}

impl PlainPipeline {
    /// Forget the chunk in flight (the COPY failed); its threads finish unobserved.
    pub(super) fn abandon(&mut self) {
        self.pending = None;
    }

    /// Wait for the chunk in flight, if any. A chunk the plain parser could not read is
    /// put back in front of `carry` (the data received since), to be parsed again.
    pub(super) async fn collect(&mut self, carry: &mut Vec<u8>) -> Result<Collected> {
        let Some(job) = self.pending.take() else {
            return Ok(Collected::Idle);
        };
        let rows = match job.halves {
            Some([first, second]) => {
                let first = first.await.map_err(thread_error)?;
                let second = second.await.map_err(thread_error)?;
                first.zip(second).map(|(f, s)| join_halves(f, s))
            }
            None => None,
        };
        // Both halves are done with the chunk: its buffer is ours again.
        let mut chunk = Arc::try_unwrap(job.chunk).unwrap_or_else(|c| c.as_ref().clone());
        Ok(match rows {
            Some(rows) => {
                self.spare = chunk;
                Collected::Rows(rows)
            }
            None => {
                chunk.truncate(job.end);
                chunk.extend_from_slice(carry);
                *carry = chunk;
                Collected::Again
            }
        })
    }

    /// Start the parse of `carry`'s first `end` bytes (complete plain lines) in two halves
    /// on blocking threads, into `rel` as `p` says; `carry` keeps the rest (an unfinished
    /// line).
    pub(super) fn dispatch(
        &mut self,
        carry: &mut Vec<u8>,
        end: usize,
        rel: Arc<CopyRel>,
        p: &PlainCtx<'_>,
    ) {
        let mut next = std::mem::take(&mut self.spare);
        next.clear();
        next.reserve(carry.capacity());
        next.extend_from_slice(&carry[end..]);
        let chunk = std::mem::replace(carry, next);
        let job = JobCtx {
            rel,
            targets: p.targets.to_vec(),
            untargeted: p.untargeted.to_vec(),
            delimiter: p.delimiter,
            null: p.null.to_vec(),
            line_max: p.line_max,
            crlf: p.crlf,
            quote: p.quote,
        };
        let (chunk, job) = (Arc::new(chunk), Arc::new(job));
        let zone = crate::tz::current_cell();
        let halves = halves_split(&chunk[..end]).map(|mid| {
            let spawn = |from: usize, to: usize| {
                let (chunk, job, zone) = (Arc::clone(&chunk), Arc::clone(&job), zone.clone());
                tokio::task::spawn_blocking(move || parse_part(&chunk[from..to], &job.ctx(), zone))
            };
            [spawn(0, mid), spawn(mid, end)]
        });
        self.pending = Some(PlainJob { halves, chunk, end });
    }
}

/// A parse thread's failure (a panic) as the COPY's error.
fn thread_error(e: tokio::task::JoinError) -> Error {
    Error::Internal(format!("COPY parse thread: {e}"))
}
