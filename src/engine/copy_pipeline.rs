//! An all-or-nothing COPY parses each chunk of plain lines (see `copy_plain`) on a blocking
//! thread while the connection receives the next chunk, so the client is not kept waiting
//! for the parse of what it sent before.
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
use super::copy_plain::{parse_plain_halves, PlainCtx, PlainRows};
use crate::error::{Error, Result};

/// A chunk being parsed on a blocking thread (in two halves, see `parse_plain_halves`):
/// its buffer comes back with the rows (or `None`: parse it again on the one-thread path),
/// and its complete lines are its first `end` bytes.
struct PlainJob {
    handle: tokio::task::JoinHandle<(Vec<u8>, Option<PlainRows>)>,
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
    /// Forget the chunk in flight (the COPY failed); its thread finishes unobserved.
    pub(super) fn abandon(&mut self) {
        self.pending = None;
    }

    /// Wait for the chunk in flight, if any. A chunk the plain parser could not read is
    /// put back in front of `carry` (the data received since), to be parsed again.
    pub(super) async fn collect(&mut self, carry: &mut Vec<u8>) -> Result<Collected> {
        let Some(job) = self.pending.take() else {
            return Ok(Collected::Idle);
        };
        let (mut chunk, rows) = job
            .handle
            .await
            .map_err(|e| Error::Internal(format!("COPY parse thread: {e}")))?;
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

    /// Start the parse of `carry`'s first `end` bytes (complete plain lines) on a blocking
    /// thread, into `rel` as `p` says; `carry` keeps the rest (an unfinished line).
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
        let zone = crate::tz::current_cell();
        let handle = tokio::task::spawn_blocking(move || {
            let rows = std::str::from_utf8(&chunk[..end])
                .ok()
                .and_then(|text| parse_plain_halves(text, &job.ctx(), zone));
            (chunk, rows)
        });
        self.pending = Some(PlainJob { handle, end });
    }
}
