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

use std::sync::Arc;

use super::copy::CopyIn;
use super::copy_fields::CopyRel;
use super::copy_plain::{parse_plain_halves, PlainCtx, PlainRows};
use crate::error::{Error, Result};

/// A chunk being parsed on a blocking thread (in two halves, see `parse_plain_halves`):
/// its buffer comes back with the rows (or `None`: parse it again on the one-thread path),
/// and its complete lines are its first `end` bytes.
pub(crate) struct PlainJob {
    handle: tokio::task::JoinHandle<(Vec<u8>, Option<PlainRows>)>,
    end: usize,
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
        }
    }
}

impl CopyIn {
    /// Parse what has arrived before a chunk boundary (not LIVE, not binary): stage the
    /// chunk in flight, then hand the complete lines of this one to a blocking thread when
    /// the plain parser may read them, else parse them here.
    pub(crate) async fn parse_pipelined(&mut self) -> Result<()> {
        if self.collect_plain().await? && self.dispatch_plain() {
            return Ok(());
        }
        self.parse_available(false)
    }

    /// Wait for the chunk in flight and stage its rows. False when it has to be parsed
    /// again (it is back in front of the data), true otherwise.
    pub(crate) async fn collect_plain(&mut self) -> Result<bool> {
        let Some(job) = self.pending.take() else {
            return Ok(true);
        };
        let (mut chunk, rows) = job
            .handle
            .await
            .map_err(|e| Error::Internal(format!("COPY parse thread: {e}")))?;
        match rows {
            Some(rows) => {
                self.stage_plain(rows);
                self.spare = chunk;
                self.spill_if_large()?;
                Ok(true)
            }
            None => {
                chunk.truncate(job.end);
                chunk.extend_from_slice(&self.carry);
                self.carry = chunk;
                Ok(false)
            }
        }
    }

    /// Start the parse of the buffer's complete lines on a blocking thread when the plain
    /// parser may read them and the unfinished line left is within `copy_line_bytes_max`;
    /// the buffer keeps that line. False when nothing was started.
    fn dispatch_plain(&mut self) -> bool {
        let line_max = self.engine.config.limits.copy_line_bytes_max;
        let Some(end) = self.plain_chunk_end(&self.carry) else {
            return false;
        };
        if self.carry.len() - end > line_max {
            return false;
        }
        let mut next = std::mem::take(&mut self.spare);
        next.clear();
        next.reserve(self.carry.capacity());
        next.extend_from_slice(&self.carry[end..]);
        let chunk = std::mem::replace(&mut self.carry, next);
        let p = self.plain_ctx();
        let job = JobCtx {
            rel: self.rel.clone(),
            targets: p.targets.to_vec(),
            untargeted: p.untargeted.to_vec(),
            delimiter: p.delimiter,
            null: p.null.to_vec(),
            line_max: p.line_max,
            crlf: p.crlf,
        };
        let zone = crate::tz::current_cell();
        let handle = tokio::task::spawn_blocking(move || {
            let rows = std::str::from_utf8(&chunk[..end])
                .ok()
                .and_then(|text| parse_plain_halves(text, &job.ctx(), zone));
            (chunk, rows)
        });
        self.pending = Some(PlainJob { handle, end });
        true
    }
}
