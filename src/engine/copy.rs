//! `COPY ... FROM STDIN`: a sink the server feeds with CopyData bytes.
//!
//! Rows are parsed once, as they arrive (PostgreSQL's text format or CSV), straight into
//! typed columns ([`ColumnBatch`]es of [`BATCH_ROWS`](super::copy_fields::BATCH_ROWS) rows); nothing reaches any query until
//! [`CopyIn::finish`] succeeds, so a bad row rejects the whole COPY (PostgreSQL's
//! all-or-nothing rule). Errors name the line number and column as PostgreSQL's COPY
//! context does. Staged batches stay in memory up to `statement_staging_memory_bytes`
//! (three million flights fit), then move to a temporary file in a compact binary form that
//! is decoded, not parsed again, at commit; the whole statement is bounded by
//! `statement_staging_bytes_max`.
//!
//! `COPY s FROM STDIN WITH (FORMAT csv, LIVE)` is for never-ending feeds
//! (`tail -f feed.csv | psql -c "COPY ... LIVE"`): the complete lines of each CopyData
//! message are parsed and queued for the stream's queries at once, nothing is staged, and a
//! bad row ends the COPY with the usual error plus the number of rows before it, which stay.

use std::sync::Arc;

use super::catalog::StatementLog;
use super::copy_fields::{append_field, with_message, BinaryState, CopyDest, CopyRel};
use super::copy_pipeline::Collected;
use super::copy_plain::PlainCtx;
use crate::error::{Error, Result};
use crate::exec::columns::{ColumnBatch, ColumnBatchBuilder};
use crate::exec::Batch;
use crate::sql::{CopyFormat, CopyOptions};
use crate::types::{parse_value, DataType, Value};

/// Bytes of CopyData gathered before their complete lines are parsed (a LIVE COPY parses
/// every message). Large enough that each half of a chunk parsed on two threads fills
/// most of a batch.
pub(crate) const PARSE_CHUNK_BYTES: usize = 1 << 20;

/// An open COPY FROM STDIN.
pub struct CopyIn {
    pub(crate) rel: Arc<CopyRel>,
    pub(crate) engine: Arc<super::Engine>,
    pub(crate) targets: Vec<usize>,
    pub(crate) options: CopyOptions,
    pub(crate) carry: Vec<u8>,
    pub(crate) line: u64,
    pub(crate) header_pending: bool,
    pub(crate) ended: bool,
    /// The line ending the data uses, fixed by its first line (PostgreSQL's rule).
    pub(crate) eol: Eol,
    pub(crate) builder: ColumnBatchBuilder,
    pub(crate) staged: Vec<ColumnBatch>,
    pub(crate) staged_bytes: usize,
    /// `staged_bytes` as charged to the global memory budget (a LIVE COPY, which queues
    /// after each message, charges nothing).
    pub(crate) memory: super::memory::Reservation,
    /// Rows a LIVE COPY has queued for the stream's queries.
    pub(crate) delivered: u64,
    /// The log position a LIVE COPY's deliveries reached in an archived stream's log.
    pub(crate) logged: Option<u64>,
    pub(crate) error: Option<Error>,
    pub(crate) staging_max: usize,
    pub(crate) staging_memory: usize,
    pub(crate) fields: Vec<Span>,
    pub(crate) scratch: String,
    /// Columns the COPY's column list leaves out (NULL in every row).
    pub(crate) untargeted: Vec<usize>,
    /// What the chunk being parsed holds (see [`ChunkBytes`]).
    pub(crate) chunk: ChunkBytes,
    pub(crate) spill: Option<super::spill::Spill>,
    /// Set for `FORMAT binary` (see `copy_binary`).
    pub(crate) binary: Option<BinaryState>,
    /// Where each row came from, for a table's errors found when the rows are inserted
    /// at the end (see [`CopyIn::line_of_row`]): the line of the first row (2 after a
    /// header line), and for each record whose quoted fields hold line breaks, its row
    /// index and the lines beyond their first of it and every such record before it.
    pub(crate) first_data_line: u64,
    pub(crate) multiline_rows: Vec<(u64, u64)>,
    /// The chunk of plain lines being parsed on a blocking thread (see `copy_pipeline`).
    pub(super) pipeline: super::copy_pipeline::PlainPipeline,
    /// Offers the staged batches to the stream's queries for a speculative fold (see
    /// `speculate`); `None`: no speculation (a table, LIVE, off for the session).
    pub(super) spec: Option<super::speculate::SpecSender>,
}

/// Where a field's text is: NULL, a slice of the record, or a slice of the scratch buffer
/// (after unescaping). Spans avoid one allocation per field on the ingest path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Span {
    Null,
    Record(usize, usize),
    Scratch(usize, usize),
}

impl CopyIn {
    pub(crate) fn new(
        engine: Arc<super::Engine>,
        rel: CopyRel,
        targets: Vec<usize>,
        options: CopyOptions,
    ) -> CopyIn {
        let ncols = rel.columns.len();
        let types: Vec<DataType> = rel.columns.iter().map(|c| c.data_type).collect();
        let builder = super::copy_fields::copy_builder(&rel, &types);
        let rel = Arc::new(rel);
        let memory = super::memory::Reservation::new(
            engine.catalog.memory(),
            super::memory::MemoryKind::CopyStaging,
        );
        let untargeted = (0..ncols).filter(|c| !targets.contains(c)).collect();
        CopyIn {
            staging_max: engine.config.limits.statement_staging_bytes_max,
            staging_memory: engine.config.limits.statement_staging_memory_bytes,
            engine,
            rel,
            targets,
            header_pending: options.header,
            options,
            carry: Vec::new(),
            line: 0,
            ended: false,
            eol: Eol::Unknown,
            builder,
            staged: Vec::new(),
            staged_bytes: 0,
            memory,
            delivered: 0,
            logged: None,
            error: None,
            fields: Vec::new(),
            scratch: String::new(),
            untargeted,
            chunk: ChunkBytes::default(),
            spill: None,
            binary: None,
            first_data_line: 1,
            multiline_rows: Vec::new(),
            pipeline: Default::default(),
            spec: None,
        }
    }

    /// Let the stream's queries fold the staged batches while the COPY is open
    /// (`tcq.speculative_copy`); a COPY into a table or a LIVE one is not speculated.
    pub(crate) fn speculate(&mut self) {
        if let (CopyDest::Stream(s), false) = (&self.rel.dest, self.options.live) {
            self.spec = super::speculate::SpecSender::new(s);
        }
    }

    /// Number of columns per row (for CopyInResponse).
    pub(crate) fn column_count(&self) -> usize {
        self.targets.len()
    }

    /// True for CSV, false for text (both are sent as the textual COPY format).
    pub(crate) fn is_csv(&self) -> bool {
        self.options.format == CopyFormat::Csv
    }

    /// Feed one CopyData payload. Lines are parsed once [`PARSE_CHUNK_BYTES`] have
    /// gathered (and at `finish`), so a bad row is reported by the call that completes its
    /// chunk. The first error is remembered and returned again by `finish`; after an error
    /// further data is ignored.
    ///
    /// With `LIVE`, the complete lines of every message are parsed and queued for the
    /// stream's queries at once; a bad row ends the COPY with an error that says how many
    /// rows before it were accepted (those stay, including the earlier rows of its message).
    pub async fn feed(&mut self, data: &[u8]) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        // After the `\.` end marker everything up to CopyDone is ignored, as PostgreSQL
        // ignores it: it is neither kept nor scanned again.
        if self.ended {
            self.carry = Vec::new();
            return Ok(());
        }
        self.carry.extend_from_slice(data);
        let line_max = self.engine.config.limits.copy_line_bytes_max;
        // Clients such as psql send one CopyData message per line: text and CSV parsing
        // waits for a chunk of lines (or a line over the length limit), so the per-message
        // work is a copy. A LIVE COPY parses every message.
        // A message without a newline ends no record: parsing would only rescan the same
        // unfinished line, which made one long line quadratic in its length.
        if !self.is_binary() {
            let no_record_end = memchr::memchr2(b'\n', b'\r', data).is_none();
            let short = self.carry.len() < PARSE_CHUNK_BYTES.min(line_max.saturating_add(1));
            if self.carry.len() <= line_max && (no_record_end || (short && !self.options.live)) {
                return Ok(());
            }
        }
        let result = if self.options.live {
            self.live_step(false).await
        } else if self.is_binary() {
            self.parse_available(false)
        } else {
            self.parse_pipelined().await
        };
        let result = match result {
            Ok(()) if self.binary.is_none() && self.carry.len() > line_max => {
                Err(self.line_too_long(self.line + 1))
            }
            other => other,
        };
        if let Err(e) = &result {
            self.error = Some(e.clone());
            self.carry = Vec::new();
            self.pipeline.abandon();
            self.staged = Vec::new();
            self.spill = None;
        }
        result
    }

    /// LIVE: parse the complete lines (all at the end), then queue every parsed row, also
    /// when a bad row stopped the parse.
    async fn live_step(&mut self, at_end: bool) -> Result<()> {
        let parsed = self.parse_available(at_end);
        self.seal_batch();
        self.deliver_staged().await?;
        parsed.map_err(|e| {
            let n = self.delivered;
            with_message(e, |m| {
                format!("{m}; the {n} rows before it were accepted (COPY ... LIVE)")
            })
        })
    }

    /// Queue the staged batches for the stream's queries, in order.
    async fn deliver_staged(&mut self) -> Result<()> {
        let CopyDest::Stream(stream) = &self.rel.dest else {
            unreachable!("the binder refuses LIVE for a table");
        };
        let stream = stream.clone();
        let now = stream.is_ingest_time().then(crate::time::now_us);
        let _whole = stream.enqueue_order.lock().await;
        // Each delivery is a statement of its own in the archive: its rows stay (LIVE).
        let log = StatementLog::begin(&stream);
        for mut b in std::mem::take(&mut self.staged) {
            if let Some(now) = now {
                b.times = vec![now; b.len()].into();
            }
            let n = b.len() as u64;
            let b = Batch::Columns(b);
            log.append(&stream, &b)?;
            self.engine.catalog.send_batch(&stream, b).await?;
            self.delivered += n;
        }
        self.staged_bytes = 0;
        if let Some(p) = log.commit(&stream).await? {
            self.logged = Some(p);
        }
        Ok(())
    }

    /// CopyDone: parse the rest, then ingest every staged row at once. Returns the row count
    /// for the `COPY n` tag.
    pub async fn finish(mut self) -> Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.options.live {
            self.live_step(true).await?;
            if let CopyDest::Stream(stream) = &self.rel.dest {
                stream.wait_durable(self.logged).await?;
            }
            return Ok(self.delivered);
        }
        // The last chunk's complete lines in halves too, unless the chunk before came
        // back for the one-thread path (which then reads everything from it on).
        if self.collect_plain().await? && self.dispatch_plain() {
            self.collect_plain().await?;
        }
        self.parse_available(true)?;
        self.seal_batch();
        let stream = match &self.rel.dest {
            CopyDest::Stream(s) => s.clone(),
            CopyDest::Table(t) => {
                let t = t.clone();
                let stall = self.engine.limits().output_stall_timeout;
                self.engine
                    .catalog
                    .barrier_table_readers(&t.name, stall)
                    .await;
                let n = self.finish_table(&t)?;
                self.engine.catalog.table_durable(t.oid).await?;
                return Ok(n);
            }
        };
        let now = stream.is_ingest_time().then(crate::time::now_us);
        let stamp = |times: &mut Vec<i64>| {
            if let Some(now) = now {
                times.iter_mut().for_each(|t| *t = now);
            }
        };
        let catalog = &self.engine.catalog;
        let mut n = 0u64;
        let position = {
            // Every batch of this COPY is queued (and logged) before any other statement's.
            let _whole = stream.enqueue_order.lock().await;
            let log = StatementLog::begin(&stream);
            // The spilled batches came first, then those still in memory.
            if let Some(spill) = &mut self.spill {
                let mut reader = spill.read_batches()?;
                while let Some(mut b) = reader.next_batch()? {
                    stamp(&mut b.times);
                    n += b.len() as u64;
                    let b = Batch::Rows(b);
                    log.append(&stream, &b)?;
                    catalog.send_batch(&stream, b).await?;
                }
            }
            // Batches staged in memory carry their place for a speculative fold, unless
            // some went to the spill file (then none was offered past it).
            let spec = self.spec.as_ref().filter(|_| self.spill.is_none());
            for (i, mut b) in std::mem::take(&mut self.staged).into_iter().enumerate() {
                if let Some(now) = now {
                    b.times = vec![now; b.len()].into();
                }
                n += b.len() as u64;
                let b = Batch::Columns(b);
                log.append(&stream, &b)?;
                let tag = spec.map(|s| s.tag(i));
                catalog.send_batch_tagged(&stream, b, tag).await?;
            }
            if let Some(spec) = self.spec.take() {
                spec.commit();
            }
            log.commit(&stream).await?
        };
        // The tag goes out once the COPY is durable (per --sync); other statements may
        // write meanwhile and share the fsync.
        stream.wait_durable(position).await?;
        Ok(n)
    }

    /// A table's COPY ends with one insert of every staged row: all or nothing, keys and
    /// NOT NULL checked as INSERT checks them.
    fn finish_table(&mut self, table: &crate::table::Table) -> Result<u64> {
        // Columns the COPY leaves out take their DEFAULT, evaluated once per statement.
        let mut fill: Vec<(usize, Value)> = Vec::new();
        for (c, d) in table.defaults.iter().enumerate() {
            if let (Some(e), false) = (d, self.targets.contains(&c)) {
                let v = crate::expr::eval(e, &crate::expr::EvalContext::new(&[], &[], None))?;
                fill.push((c, v));
            }
        }
        let mut rows: Vec<Vec<Value>> = Vec::new();
        let mut take = |b: &crate::exec::RowBatch| {
            if rows.len() + b.len() > table.rows_max {
                return Err(Error::ProgramLimitExceeded(format!(
                    "COPY {} has more rows than table_rows_max ({})",
                    table.name, table.rows_max
                )));
            }
            rows.extend((0..b.len()).map(|i| {
                let mut row = b.row(i).to_vec();
                for (c, v) in &fill {
                    row[*c] = v.clone();
                }
                row
            }));
            Ok(())
        };
        if let Some(spill) = &mut self.spill {
            let mut reader = spill.read_batches()?;
            while let Some(b) = reader.next_batch()? {
                take(&b)?;
            }
        }
        for b in std::mem::take(&mut self.staged) {
            take(&b.to_rows())?;
        }
        let name = &self.rel.name;
        table.insert_numbered(rows, crate::table::Conflict::Error, &|i, e| {
            copy_context(e, name, self.line_of_row(i as u64))
        })
    }

    /// The line PostgreSQL names for row `i` (0-based) of this COPY: the last line of its
    /// record.
    fn line_of_row(&self, i: u64) -> u64 {
        let n = self.multiline_rows.partition_point(|r| r.0 <= i);
        let extra = n.checked_sub(1).map_or(0, |k| self.multiline_rows[k].1);
        self.first_data_line + i + extra
    }

    /// CopyFail or disconnect: drop every staged row.
    pub(crate) fn abort(self) {}

    fn parse_complete_lines(&mut self, at_end: bool) -> Result<()> {
        let carry = std::mem::take(&mut self.carry);
        // UTF-8 is checked once for the whole message; records are then slices of it (a
        // record ends at an ASCII newline, so it starts and ends on character boundaries).
        // A record past the valid prefix is checked alone, to report its line.
        let valid = match std::str::from_utf8(&carry) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&carry[..e.valid_up_to()]).unwrap_or_default(),
        };
        // Bytes that call for the careful paths are looked for once per chunk: most chunks
        // have no quote (CSV), backslash (text) or NUL at all.
        self.chunk = ChunkBytes {
            quote: self.is_csv() && memchr::memchr(self.options.quote, &carry).is_some(),
            backslash: !self.is_csv() && memchr::memchr(b'\\', &carry).is_some(),
            nul: memchr::memchr(0, &carry).is_some(),
        };
        if self.eol == Eol::Unknown {
            self.eol = Eol::of_first_line(&carry, self.is_csv(), self.options.quote);
        }
        // Chunks of plain lines were parsed on two threads (`dispatch_plain`); what is
        // here is parsed on this one.
        let mut pos = 0;
        // A record longer than the limit is refused whether or not one message holds it
        // whole (the check on the unfinished tail in `feed` sees only the ones cut).
        let line_max = self.engine.config.limits.copy_line_bytes_max;
        while pos < carry.len() && !self.ended {
            if let Some(next) = self.plain_record(&carry, valid, pos)? {
                pos = next;
                continue;
            }
            let rec = match self.next_record(&carry[pos..], at_end) {
                Ok(Some(rec)) => rec,
                Ok(None) => break,
                Err(e) => {
                    // The line the fault is on (PostgreSQL counts the line being read).
                    self.line += 1;
                    return Err(self.context(e));
                }
            };
            if rec.len > line_max {
                return Err(self.line_too_long(self.line + 1));
            }
            let from = pos;
            pos += rec.next;
            self.line += 1 + rec.inner_lines;
            if rec.inner_lines > 0
                && !self.header_pending
                && matches!(self.rel.dest, CopyDest::Table(_))
            {
                let before = self.multiline_rows.last().map_or(0, |r| r.1);
                let row = self.line - rec.inner_lines - self.first_data_line - before;
                self.multiline_rows.push((row, before + rec.inner_lines));
            }
            if rec.open_quote && !self.header_pending {
                // PostgreSQL shows what it read of the record, its line endings included.
                let read = String::from_utf8_lossy(&carry[from..pos]);
                return Err(self.record_context(
                    Error::BadCopyFileFormat("unterminated CSV quoted field".into()),
                    &read,
                ));
            }
            if rec.end_marker {
                self.ended = true;
                if rec.len == 0 {
                    break;
                }
            }
            let to = from + rec.len;
            match valid.get(from..to) {
                Some(text) => self.record_text(text)?,
                None => self.record(&carry[from..to])?,
            }
        }
        // The unfinished tail moves to the front of the same buffer, which keeps its room
        // for the next chunk (unless one long record grew it far past a chunk).
        let mut rest = carry;
        if self.ended {
            // What follows the end marker is ignored.
            rest.clear();
        }
        rest.drain(..pos.min(rest.len()));
        if rest.capacity() > 4 * PARSE_CHUNK_BYTES {
            rest.shrink_to(2 * PARSE_CHUNK_BYTES);
        }
        // HEADER MATCH on data without a header line: PostgreSQL reads an empty one.
        if at_end && self.header_pending && self.options.header_match {
            self.header_pending = false;
            self.line = self.line.max(1);
            return self.match_header("").map_err(|e| self.context(e));
        }
        self.carry = rest;
        self.spill_if_large()
    }

    /// Where the complete lines of `carry` end when the plain parser may try them all: an
    /// all-or-nothing text or CSV COPY past its header and before any end marker, without
    /// FORCE options, at least `PARALLEL_PARSE_BYTES` of lines whose line ending is the
    /// data's. Whether the lines are free of quotes (CSV), backslashes, NULs and stray CRs,
    /// and valid UTF-8, is the parser's to check, on its threads (see `copy_plain`).
    pub(crate) fn plain_chunk_end(&self, carry: &[u8]) -> Option<usize> {
        let eligible = !self.options.live
            && !self.is_binary()
            && !self.header_pending
            && !self.ended
            && self.plain_options()
            && matches!(self.eol, Eol::Nl | Eol::CrNl);
        if !eligible || carry.len() < PARALLEL_PARSE_BYTES {
            return None;
        }
        Some(memchr::memrchr(b'\n', carry)? + 1)
    }

    /// What `parse_plain` needs of this COPY.
    pub(super) fn plain_ctx(&self) -> PlainCtx<'_> {
        PlainCtx {
            rel: &self.rel,
            targets: &self.targets,
            untargeted: &self.untargeted,
            delimiter: self.options.delimiter,
            null: self.options.null.as_bytes(),
            line_max: self.engine.config.limits.copy_line_bytes_max,
            crlf: self.eol == Eol::CrNl,
            quote: self.is_csv().then_some(self.options.quote),
        }
    }

    /// Stage rows the plain parser read, after the rows before them; its unfinished batch
    /// is the one the next rows go to.
    pub(super) fn stage_plain(&mut self, rows: super::copy_plain::PlainRows) {
        // The batch being built is done: usually the previous chunk's last, whose
        // vectors are handed over rather than copied.
        let before = std::mem::replace(&mut self.builder, rows.builder);
        if !before.is_empty() {
            let b = before.into_batch();
            self.staged_bytes += b.heap_bytes();
            self.staged.push(b);
        }
        for b in rows.batches {
            self.staged_bytes += b.heap_bytes();
            self.staged.push(b);
        }
        self.line += rows.lines;
    }

    /// 54000 for record `line` (1-based) longer than `copy_line_bytes_max`.
    fn line_too_long(&self, line: u64) -> Error {
        Error::ProgramLimitExceeded(format!(
            "COPY {} line {line} is longer than copy_line_bytes_max ({} bytes)",
            self.rel.name, self.engine.config.limits.copy_line_bytes_max
        ))
    }

    /// The fast path for the common record: complete, valid UTF-8, and free of quotes (CSV),
    /// backslashes (text) and NULs. One pass over its bytes finds both the field
    /// delimiters and the newline; the fields go to [`CopyIn::stage`] as slices of the
    /// record. Returns where the next record starts, or `None` (nothing consumed) for a
    /// record the general path must read: one with those bytes, the header, or an
    /// incomplete last line.
    fn plain_record(&mut self, carry: &[u8], valid: &str, pos: usize) -> Result<Option<usize>> {
        if self.header_pending || !self.plain_options() || !matches!(self.eol, Eol::Nl | Eol::CrNl)
        {
            return Ok(None);
        }
        let d = self.options.delimiter;
        let special = if self.is_csv() {
            self.options.quote
        } else {
            b'\\'
        };
        let mut fields = std::mem::take(&mut self.fields);
        fields.clear();
        let bytes = &carry[pos..];
        let mut start = 0;
        let mut newline = None;
        for (i, &b) in bytes.iter().enumerate() {
            if b == d {
                fields.push(Span::Record(start, i));
                start = i + 1;
            } else if b == b'\n' {
                newline = Some(i);
                break;
            } else if b == special || b == 0 || b == b'\r' {
                // A CR ends a CRLF line; anywhere else the general path reports it.
                if b == b'\r' && self.eol == Eol::CrNl && bytes.get(i + 1) == Some(&b'\n') {
                    newline = Some(i + 1);
                }
                break;
            }
        }
        let text = newline.and_then(|n| {
            let to = if self.eol == Eol::CrNl {
                if n == 0 || bytes[n - 1] != b'\r' {
                    return None; // a bare LF in CRLF data: the general path reports it
                }
                n - 1
            } else {
                n
            };
            valid.get(pos..pos + to)
        });
        // `\.` alone ends the data (a backslash the CSV scan does not stop at).
        let (Some(n), Some(text)) = (newline, text.filter(|t| *t != "\\.")) else {
            self.fields = fields;
            return Ok(None);
        };
        if n > self.engine.config.limits.copy_line_bytes_max {
            self.fields = fields;
            return Err(self.line_too_long(self.line + 1));
        }
        // A CR right after the last delimiter leaves that field empty.
        fields.push(Span::Record(start.min(text.len()), text.len()));
        let null = self.options.null.as_bytes();
        for f in fields.iter_mut() {
            if let Span::Record(a, b) = *f {
                if &text.as_bytes()[a..b] == null {
                    *f = Span::Null;
                }
            }
        }
        self.line += 1;
        let staged = self.stage(text, &fields, "");
        self.fields = fields;
        staged.map_err(|e| self.record_context(e, text))?;
        Ok(Some(pos + n + 1))
    }

    /// Parse what has arrived before a chunk boundary (not LIVE, not binary): stage the
    /// chunk in flight, then hand the complete lines of this one to a blocking thread when
    /// the plain parser may read them, else parse them here (see `copy_pipeline`).
    pub(crate) async fn parse_pipelined(&mut self) -> Result<()> {
        if self.collect_plain().await? && self.dispatch_plain() {
            return Ok(());
        }
        self.parse_available(false)
    }

    /// Wait for the chunk in flight and stage its rows. False when it has to be parsed
    /// again (it is back in front of the data), true otherwise.
    pub(crate) async fn collect_plain(&mut self) -> Result<bool> {
        Ok(match self.pipeline.collect(&mut self.carry).await? {
            Collected::Rows(rows) => {
                self.stage_plain(rows);
                self.spill_if_large()?;
                true
            }
            Collected::Idle => true,
            Collected::Again => false,
        })
    }

    /// Start the parse of the buffer's complete lines on a blocking thread when the plain
    /// parser may read them and the unfinished line left is within `copy_line_bytes_max`;
    /// the buffer keeps that line. False when nothing was started.
    fn dispatch_plain(&mut self) -> bool {
        let line_max = self.engine.config.limits.copy_line_bytes_max;
        if self.eol == Eol::Unknown {
            // As `parse_complete_lines` finds it from the same first line.
            self.eol = Eol::of_first_line(&self.carry, self.is_csv(), self.options.quote);
        }
        let Some(end) = self.plain_chunk_end(&self.carry) else {
            return false;
        };
        if self.carry.len() - end > line_max {
            return false;
        }
        let mut carry = std::mem::take(&mut self.carry);
        let mut pipeline = std::mem::take(&mut self.pipeline);
        pipeline.dispatch(&mut carry, end, self.rel.clone(), &self.plain_ctx());
        (self.carry, self.pipeline) = (carry, pipeline);
        true
    }

    /// Parse what has arrived: complete lines (all at the end), or binary tuples (checking
    /// at the end that the data stopped on a tuple boundary).
    pub(crate) fn parse_available(&mut self, at_end: bool) -> Result<()> {
        match self.binary.take() {
            Some(mut state) => {
                let r = if at_end {
                    self.finish_binary(&state)
                } else {
                    self.parse_binary(&mut state)
                };
                self.binary = Some(state);
                r
            }
            None if self.is_binary() => Err(Error::Internal(
                "binary COPY started without the server's decoder".into(),
            )),
            None => self.parse_complete_lines(at_end),
        }
    }

    /// Move the staged batches to the spill file once they pass
    /// `statement_staging_memory_bytes` or the global memory budget refuses them, and
    /// refuse a COPY past `statement_staging_bytes_max`.
    pub(crate) fn spill_if_large(&mut self) -> Result<()> {
        // A LIVE COPY queues what it parsed after each message: it never spills.
        if self.options.live {
            return Ok(());
        }
        let refused = self.memory.resize(self.staged_bytes).is_err();
        if refused || self.staged_bytes > self.staging_memory {
            if let Some(spec) = &mut self.spec {
                spec.abandon();
            }
            self.spill_staged()?;
        }
        if let (Some(spec), None) = (&mut self.spec, &self.spill) {
            spec.offer(&self.staged);
        }
        Ok(())
    }

    /// Close the batch being built and stage it.
    pub(crate) fn seal_batch(&mut self) {
        if self.builder.is_empty() {
            return;
        }
        let b = self.builder.finish();
        self.staged_bytes += b.heap_bytes();
        self.staged.push(b);
    }

    /// Move the batches staged in memory to the temporary file.
    fn spill_staged(&mut self) -> Result<()> {
        if self.spill.is_none() {
            let dir = self.engine.staging.dir()?;
            self.spill = Some(super::spill::Spill::create_in(dir, self.rel.columns.len())?);
        }
        let Some(spill) = &mut self.spill else {
            return Ok(());
        };
        for b in std::mem::take(&mut self.staged) {
            spill.write(&b.to_rows())?;
            if spill.bytes > self.staging_max as u64 {
                return Err(Error::ProgramLimitExceeded(format!(
                    "COPY staged more than {} bytes (statement_staging_bytes_max); send the rows in several COPY statements",
                    self.staging_max
                )));
            }
        }
        self.staged_bytes = 0;
        self.memory.force_resize(0);
        Ok(())
    }

    /// True when no option needs the general path for every record (FORCE_NOT_NULL and
    /// FORCE_NULL are read by the CSV splitter only).
    fn plain_options(&self) -> bool {
        self.options.force_not_null.is_empty() && self.options.force_null.is_empty()
    }

    /// The next record of `buf` as PostgreSQL's `CopyReadLine` finds it: up to the line
    /// ending fixed by the first line (LF, CRLF or CR), a backslash taking the byte after
    /// it (text format), line endings inside quotes kept (CSV), and the `\.` end marker.
    /// `None` when `buf` holds no complete record yet (at the end of the data, the rest is
    /// the last record, without a line ending). Errors (22P04): a line ending of another
    /// style ("literal carriage return found in data" and the like), a corrupt end marker.
    fn next_record(&mut self, buf: &[u8], at_end: bool) -> Result<Option<Rec>> {
        let csv = self.is_csv();
        let (q, e) = (self.options.quote, self.options.escape);
        let marker = |at: usize, eol: Eol| end_marker(buf, at, eol, at_end, csv);
        if csv && buf.starts_with(b"\\.") {
            if let Some(r) = marker(0, self.eol)? {
                return Ok(r);
            }
        }
        let (mut i, mut in_q, mut inner) = (0, false, 0u64);
        // PostgreSQL's count of lines inside quotes: their LFs in LF data, else their CRs.
        let inner_eol = if self.eol == Eol::Nl { b'\n' } else { b'\r' };
        let special = if csv { q } else { b'\\' };
        while i < buf.len() {
            // Skip to the next byte that can matter in the current state.
            let next = if csv && in_q {
                memchr::memchr3(q, e, inner_eol, &buf[i..])
            } else {
                memchr::memchr3(special, b'\r', b'\n', &buf[i..])
            };
            let Some(k) = next else {
                break;
            };
            i += k;
            let c = buf[i];
            if csv && in_q {
                if c == e && e != q && matches!(buf.get(i + 1), Some(&n) if n == q || n == e) {
                    i += 2;
                    continue;
                }
                if c == q {
                    if e == q {
                        match buf.get(i + 1) {
                            Some(&n) if n == q => {
                                i += 2;
                                continue;
                            }
                            // A doubled quote cannot be told from a closing one yet.
                            None if !at_end => return Ok(None),
                            _ => {}
                        }
                    }
                    in_q = false;
                } else if c == inner_eol {
                    inner += 1;
                }
                i += 1;
                continue;
            }
            match c {
                b'\\' if !csv => match buf.get(i + 1) {
                    None if !at_end => return Ok(None),
                    None => i += 1,
                    Some(b'.') => {
                        if let Some(r) = marker(i, self.eol)? {
                            return Ok(r);
                        }
                        i += 2;
                    }
                    Some(_) => i += 2,
                },
                _ if csv && c == q => {
                    in_q = true;
                    i += 1;
                }
                b'\r' => return self.after_cr(buf, i, at_end, inner),
                b'\n' => {
                    if matches!(self.eol, Eol::Cr | Eol::CrNl) {
                        self.line += inner;
                        return Err(eol_in_data(csv, "newline"));
                    }
                    self.eol = Eol::Nl;
                    return Ok(Some(Rec {
                        len: i,
                        next: i + 1,
                        inner_lines: inner,
                        end_marker: false,
                        open_quote: false,
                    }));
                }
                _ => i += 1,
            }
        }
        // At the end of the data the rest is the last record, without a line ending.
        Ok((at_end && !buf.is_empty()).then_some(Rec {
            len: buf.len(),
            next: buf.len(),
            inner_lines: inner,
            end_marker: false,
            open_quote: in_q,
        }))
    }

    /// The record of `buf` ending at the carriage return at `i`, the line ending style
    /// fixed by it when still unknown; `None` when the byte after it has not arrived.
    /// Errors (22P04): a CR in data whose lines end otherwise.
    fn after_cr(&mut self, buf: &[u8], i: usize, at_end: bool, inner: u64) -> Result<Option<Rec>> {
        let next = match self.eol {
            Eol::Nl => {
                self.line += inner;
                return Err(eol_in_data(self.is_csv(), "carriage return"));
            }
            Eol::Cr => i + 1,
            Eol::Unknown | Eol::CrNl => match buf.get(i + 1) {
                Some(b'\n') => {
                    self.eol = Eol::CrNl;
                    i + 2
                }
                None if !at_end => return Ok(None),
                _ if self.eol == Eol::CrNl => {
                    self.line += inner;
                    return Err(eol_in_data(self.is_csv(), "carriage return"));
                }
                _ => {
                    self.eol = Eol::Cr;
                    i + 1
                }
            },
        };
        Ok(Some(Rec {
            len: i,
            next,
            inner_lines: inner,
            end_marker: false,
            open_quote: false,
        }))
    }

    fn record(&mut self, rec: &[u8]) -> Result<()> {
        match std::str::from_utf8(rec) {
            Ok(text) => self.record_text(text),
            // The header line too must be UTF-8 (PostgreSQL converts it as any line).
            Err(e) => Err(self.context(Error::CharacterNotInRepertoire(format!(
                "invalid byte sequence for encoding \"UTF8\": {}",
                invalid_sequence(&rec[e.valid_up_to()..]),
            )))),
        }
    }

    fn record_text(&mut self, text: &str) -> Result<()> {
        // The `\.` end marker was found by `next_record` (or by `plain_record`'s check).
        if self.header_pending {
            self.header_pending = false;
            self.first_data_line = self.line + 1;
            // The header line is text like any line: no NUL.
            if memchr::memchr(0, text.as_bytes()).is_some() {
                return Err(self.context(Error::CharacterNotInRepertoire(
                    "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
                )));
            }
            if self.options.header_match {
                return self.match_header(text).map_err(|e| self.context(e));
            }
            return Ok(());
        }
        let mut fields = std::mem::take(&mut self.fields);
        let mut scratch = std::mem::take(&mut self.scratch);
        fields.clear();
        scratch.clear();
        let split = if self.is_csv() {
            split_csv(
                text,
                &self.options,
                self.chunk.quote || !self.plain_options(),
                &mut fields,
                &mut scratch,
            )
        } else {
            split_text(
                text,
                &self.options,
                self.chunk.backslash,
                &mut fields,
                &mut scratch,
            )
        };
        let result = split.and_then(|()| {
            // A NUL, raw or escaped (`\000`), is not text in PostgreSQL.
            let raw_nul = self.chunk.nul && memchr::memchr(0, text.as_bytes()).is_some();
            if raw_nul || (!scratch.is_empty() && scratch.contains('\0')) {
                return Err(Error::CharacterNotInRepertoire(
                    "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
                ));
            }
            self.stage(text, &fields, &scratch)
        });
        self.fields = fields;
        self.scratch = scratch;
        result.map_err(|e| self.record_context(e, text))
    }

    fn context(&self, e: Error) -> Error {
        copy_context(e, &self.rel.name, self.line)
    }

    /// [`copy_context`] showing the text of the record the error is about.
    fn record_context(&self, e: Error, record: &str) -> Error {
        copy_context_of_line(e, &self.rel.name, self.line, Some(record))
    }

    /// `HEADER MATCH`: the header line's fields must be the COPY's column names, in order
    /// (22P04 otherwise, in PostgreSQL's words).
    fn match_header(&mut self, text: &str) -> Result<()> {
        let (mut fields, mut scratch) = (Vec::new(), String::new());
        // The names are read as raw fields: FORCE_NOT_NULL and FORCE_NULL do not apply.
        let options = CopyOptions {
            force_not_null: Vec::new(),
            force_null: Vec::new(),
            ..self.options.clone()
        };
        if self.is_csv() {
            split_csv(text, &options, true, &mut fields, &mut scratch)?;
        } else {
            split_text(text, &options, true, &mut fields, &mut scratch)?;
        }
        // An escaped NUL (`\0`) is no more text in a name than in a value.
        if scratch.contains('\0') {
            return Err(Error::CharacterNotInRepertoire(
                "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
            ));
        }
        if fields.len() != self.targets.len() {
            return Err(Error::BadCopyFileFormat(format!(
                "wrong number of fields in header line: got {}, expected {}",
                fields.len(),
                self.targets.len()
            )));
        }
        for (k, (f, &c)) in fields.iter().zip(&self.targets).enumerate() {
            let expected = &self.rel.columns[c].name;
            let got = match *f {
                Span::Null => {
                    return Err(Error::BadCopyFileFormat(format!(
                        "column name mismatch in header line field {}: got null value (\"{}\"), expected \"{expected}\"",
                        k + 1,
                        self.options.null
                    )))
                }
                Span::Record(a, b) => &text[a..b],
                Span::Scratch(a, b) => &scratch[a..b],
            };
            if got != expected {
                return Err(Error::BadCopyFileFormat(format!(
                    "column name mismatch in header line field {}: got \"{got}\", expected \"{expected}\"",
                    k + 1
                )));
            }
        }
        Ok(())
    }

    fn stage(&mut self, rec: &str, fields: &[Span], scratch: &str) -> Result<()> {
        if fields.len() > self.targets.len() {
            return Err(Error::BadCopyFileFormat(
                "extra data after last expected column".into(),
            ));
        }
        if fields.len() < self.targets.len() {
            // PostgreSQL reads the fields there are, column by column, before it finds
            // the first missing one: a bad value among them is the error.
            for (f, &c) in fields.iter().zip(&self.targets) {
                let text = match *f {
                    Span::Null => continue,
                    Span::Record(a, b) => &rec[a..b],
                    Span::Scratch(a, b) => &scratch[a..b],
                };
                let col = &self.rel.columns[c];
                parse_value(text, col.data_type).map_err(|e| in_field(e, &col.name, text))?;
            }
            let missing = &self.rel.columns[self.targets[fields.len()]].name;
            return Err(Error::BadCopyFileFormat(format!(
                "missing data for column \"{missing}\""
            )));
        }
        // Fields go straight into their columns; a bad one drops what its row appended
        // (`truncate`), so the columns hold whole rows only.
        let result = append_row(
            &mut self.builder,
            &self.rel,
            &self.targets,
            &self.untargeted,
            rec,
            fields,
            scratch,
        );
        match result {
            Ok(()) if self.builder.is_full() => self.seal_batch(),
            Ok(()) => {}
            Err(_) => self.builder.truncate(),
        }
        result
    }
}

/// Append one row's fields (`fields[i]` to column `targets[i]`, NULL to the `untargeted`
/// columns) and close the row with its timestamp. On an error the row is left half
/// appended: the caller truncates it.
fn append_row(
    builder: &mut ColumnBatchBuilder,
    rel: &CopyRel,
    targets: &[usize],
    untargeted: &[usize],
    rec: &str,
    fields: &[Span],
    scratch: &str,
) -> Result<()> {
    let cols = &rel.columns;
    let mut t = None;
    for (f, &c) in fields.iter().zip(targets) {
        let text = match *f {
            Span::Null => {
                builder.append_null(c);
                continue;
            }
            Span::Record(a, b) => &rec[a..b],
            Span::Scratch(a, b) => &scratch[a..b],
        };
        let ts = match cols[c].typmod {
            // numeric(p, s): the value rounded to the scale, its size checked; a time
            // rounded to its digits.
            Some(tm) => parse_value(text, cols[c].data_type).and_then(|mut v| {
                crate::types::conform(&mut v, Some(tm))?;
                let ts = v.as_timestamp();
                builder.append_value(c, &mut v);
                Ok(ts)
            }),
            None => append_field(builder, c, text, cols[c].data_type),
        }
        .map_err(|e| in_field(e, &cols[c].name, text))?;
        if rel.ts_col == Some(c) {
            t = ts;
        }
    }
    for &c in untargeted {
        builder.append_null(c);
    }
    let t = match rel.ts_col {
        None => 0,
        Some(c) => t.ok_or_else(|| {
            Error::NotNullViolation(format!(
                "null value in column \"{}\" violates not-null constraint: it is the stream's TIMESTAMPCOLUMN",
                cols[c].name
            ))
        })?,
    };
    builder.end_row(t);
    Ok(())
}

/// Bytes of complete lines an all-or-nothing COPY parses on two threads at once (see
/// `CopyIn::dispatch_plain`); a smaller chunk is not worth a thread.
const PARALLEL_PARSE_BYTES: usize = 256 << 10;

/// Which bytes that need the careful paths a chunk of COPY data holds anywhere.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ChunkBytes {
    /// The CSV quote character.
    pub(crate) quote: bool,
    /// A backslash (text format escapes).
    pub(crate) backslash: bool,
    /// A NUL byte (refused as text).
    pub(crate) nul: bool,
}

/// The line ending of COPY data, fixed by its first line as PostgreSQL fixes it: every
/// other line must end the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Eol {
    /// No line has ended yet.
    Unknown,
    /// `\n`
    Nl,
    /// `\r\n`
    CrNl,
    /// `\r` alone.
    Cr,
}

impl Eol {
    /// The line ending of data whose first bytes are `buf`, when its first line holds
    /// no byte that could hide or stand for a line ending (a backslash in text, the quote
    /// in CSV); else [`Eol::Unknown`], and `CopyIn::next_record` finds it.
    fn of_first_line(buf: &[u8], csv: bool, quote: u8) -> Eol {
        let Some(end) = memchr::memchr2(b'\n', b'\r', buf) else {
            return Eol::Unknown;
        };
        let special = if csv { quote } else { b'\\' };
        if memchr::memchr(special, &buf[..end]).is_some() {
            return Eol::Unknown;
        }
        match (buf[end], buf.get(end + 1)) {
            (b'\n', _) => Eol::Nl,
            (b'\r', Some(b'\n')) => Eol::CrNl,
            (b'\r', Some(_)) => Eol::Cr,
            _ => Eol::Unknown,
        }
    }
}

/// A record `CopyIn::next_record` found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rec {
    /// Bytes of the record before its line ending (or end marker).
    pub(crate) len: usize,
    /// Bytes consumed: the record, its line ending (all of the rest after an end marker).
    pub(crate) next: usize,
    /// Line endings inside its quoted CSV fields (PostgreSQL counts each as a line).
    pub(crate) inner_lines: u64,
    /// The record ended at the `\.` end marker: no data follows.
    pub(crate) end_marker: bool,
    /// The last record of the data ends inside a quoted CSV field.
    pub(crate) open_quote: bool,
}

/// The same error kind with its message rewritten (to add COPY context).
/// Mark a field's error with its column and raw text, for [`copy_context`]: they travel
/// after NULs in the message (a value's error names neither).
pub(crate) fn in_field(e: Error, column: &str, text: &str) -> Error {
    with_message(e, |m| format!("{m}\u{0}{column}\u{0}{text}"))
}

/// Bytes of a field's text a COPY error's context shows, as PostgreSQL's
/// `limit_printout_length` (MAX_COPY_DATA_DISPLAY).
const CONTEXT_VALUE_BYTES: usize = 100;

/// PostgreSQL's CONTEXT for an error in record `line` (1-based) of a COPY into `rel`:
/// `COPY t, line 2, column v: "x"` for a field's error (marked by [`in_field`], or with
/// the column alone after one NUL, as the binary format marks it), `COPY t, line 2`
/// otherwise. The message keeps only its own words, as PostgreSQL's does.
pub(crate) fn copy_context(e: Error, rel: &str, line: u64) -> Error {
    copy_context_of_line(e, rel, line, None)
}

/// [`copy_context`] for a record whose text is `record`: an error about the record as a
/// whole (extra or missing data, an unterminated quoted field) shows it, as PostgreSQL's
/// `COPY t, line 2: "1,2,3"`, cut at 100 bytes. An invalid byte sequence shows no text
/// (PostgreSQL has no valid line to show then).
pub(crate) fn copy_context_of_line(e: Error, rel: &str, line: u64, record: Option<&str>) -> Error {
    let record = record.filter(|_| !matches!(e, Error::CharacterNotInRepertoire(_)));
    let mut place = None;
    let e = with_message(e, |m| {
        let mut parts = m.splitn(3, '\u{0}');
        let msg = parts.next().unwrap_or_default();
        place = match (parts.next(), parts.next()) {
            (Some(col), Some(text)) => Some(format!(
                "COPY {rel}, line {line}, column {col}: \"{}\"",
                printout(text)
            )),
            (Some(col), None) => Some(format!("COPY {rel}, line {line}, column {col}")),
            _ => None,
        };
        msg.to_string()
    });
    let place = place.unwrap_or_else(|| match record {
        Some(text) => format!("COPY {rel}, line {line}: \"{}\"", printout(text)),
        None => format!("COPY {rel}, line {line}"),
    });
    e.with_context(place)
}

/// `text` as a COPY context shows it: cut to [`CONTEXT_VALUE_BYTES`] at a character
/// boundary, with `...` when cut (PostgreSQL's `limit_printout_length`).
fn printout(text: &str) -> std::borrow::Cow<'_, str> {
    let mut cut = text.len().min(CONTEXT_VALUE_BYTES);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if cut < text.len() {
        format!("{}...", &text[..cut]).into()
    } else {
        text.into()
    }
}

/// Split a text-format line: delimiter-separated, backslash escapes, the NULL marker.
///
/// `escapes`: the line may hold a backslash (false: every field is taken as it stands).
fn split_text(
    line: &str,
    o: &CopyOptions,
    escapes: bool,
    out: &mut Vec<Span>,
    scratch: &mut String,
) -> Result<()> {
    let b = line.as_bytes();
    // A backslash takes the byte after it, also a delimiter (`x\,y` is one field).
    if escapes {
        text_spans(
            line,
            escaped_fields_of(b, o.delimiter),
            o,
            true,
            out,
            scratch,
        )
    } else {
        text_spans(line, fields_of(b, o.delimiter), o, false, out, scratch)
    }
}

/// The spans of a text-format line's fields (`fields`, their byte ranges): the NULL
/// marker as written, the rest as they stand or unescaped into `scratch`.
fn text_spans(
    line: &str,
    fields: impl Iterator<Item = (usize, usize)>,
    o: &CopyOptions,
    escapes: bool,
    out: &mut Vec<Span>,
    scratch: &mut String,
) -> Result<()> {
    let b = line.as_bytes();
    let null = o.null.as_bytes();
    for (start, end) in fields {
        let raw = &b[start..end];
        let span = if raw == null {
            Span::Null
        } else if !escapes || memchr::memchr(b'\\', raw).is_none() {
            Span::Record(start, end)
        } else {
            let from = scratch.len();
            unescape_text(&line[start..end], scratch)?;
            Span::Scratch(from, scratch.len())
        };
        out.push(span);
    }
    Ok(())
}

/// The `[start, end)` byte ranges of the fields of `b` split at the ASCII `delimiter`
/// (COPY delimiters are single-byte, so a split never cuts a UTF-8 sequence).
fn fields_of(b: &[u8], delimiter: u8) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    memchr::memchr_iter(delimiter, b)
        .chain(std::iter::once(b.len()))
        .map(move |end| {
            let field = (start, end);
            start = end + 1;
            field
        })
}

/// The fields of a text-format line holding backslashes: a delimiter right after a
/// backslash belongs to its field, as PostgreSQL's `CopyReadAttributesText` reads it.
fn escaped_fields_of(b: &[u8], delimiter: u8) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let mut i = start;
        while let Some(k) = b
            .get(i..)
            .and_then(|rest| memchr::memchr2(b'\\', delimiter, rest))
        {
            let at = i + k;
            if b[at] == b'\\' {
                i = at + 2;
                continue;
            }
            let field = (start, at);
            start = at + 1;
            return Some(field);
        }
        done = true;
        Some((start, b.len()))
    })
}

fn unescape_text(raw: &str, s: &mut String) -> Result<()> {
    let b = raw.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let Some(&c) = b.get(i) else {
            break; // a backslash ending the field stands for nothing
        };
        i += 1;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            // One to three octal digits: the byte with that value (its low 8 bits).
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    match b.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xff) as u8);
            }
            // `x` and one or two hex digits: the byte with that value; without a digit,
            // an `x`.
            b'x' => {
                let hex = |d: Option<&u8>| d.and_then(|&d| (d as char).to_digit(16));
                match hex(b.get(i)) {
                    Some(h) => {
                        i += 1;
                        let mut v = h;
                        if let Some(l) = hex(b.get(i)) {
                            v = v * 16 + l;
                            i += 1;
                        }
                        out.push(v as u8);
                    }
                    None => out.push(b'x'),
                }
            }
            other => out.push(other),
        }
    }
    // The bytes escapes make must still be UTF-8 (and no NUL), as PostgreSQL checks them.
    match String::from_utf8(out) {
        Ok(text) => {
            s.push_str(&text);
            Ok(())
        }
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            Err(Error::CharacterNotInRepertoire(format!(
                "invalid byte sequence for encoding \"UTF8\": {}",
                invalid_sequence(&e.as_bytes()[at..])
            )))
        }
    }
}

/// The bytes of an invalid UTF-8 sequence as PostgreSQL's message shows them: as many as
/// its first byte announces (one for a byte no sequence starts with), up to the end.
pub(crate) fn invalid_sequence(bad: &[u8]) -> String {
    let n = match bad.first() {
        Some(0xc0..=0xdf) => 2,
        Some(0xe0..=0xef) => 3,
        Some(0xf0..=0xf7) => 4,
        _ => 1,
    };
    let hex: Vec<String> = bad.iter().take(n).map(|b| format!("0x{b:02x}")).collect();
    hex.join(" ")
}

/// Split a CSV record: quoted fields, doubled quotes or the escape character, NULL as the
/// unquoted NULL string (empty by default).
///
/// `quotes`: the line may hold the quote character (false: no field is quoted).
fn split_csv(
    line: &str,
    o: &CopyOptions,
    quotes: bool,
    out: &mut Vec<Span>,
    scratch: &mut String,
) -> Result<()> {
    let (d, q, e) = (o.delimiter, o.quote, o.escape);
    let b = line.as_bytes();
    let forced = !o.force_not_null.is_empty() || !o.force_null.is_empty();
    if !forced && (!quotes || memchr::memchr(q, b).is_none()) {
        let null = o.null.as_bytes();
        for (start, end) in fields_of(b, d) {
            out.push(if &b[start..end] == null {
                Span::Null
            } else {
                Span::Record(start, end)
            });
        }
        return Ok(());
    }
    let mut i = 0;
    loop {
        let from = scratch.len();
        let mut quoted = false;
        let mut in_q = false;
        let mut field = Vec::new();
        while i < b.len() {
            let c = b[i];
            if in_q {
                if c == e && i + 1 < b.len() && (b[i + 1] == q || (b[i + 1] == e && e != q)) {
                    field.push(b[i + 1]);
                    i += 2;
                    continue;
                }
                if c == q {
                    in_q = false;
                } else {
                    field.push(c);
                }
            } else if c == q {
                in_q = true;
                quoted = true;
            } else if c == d {
                break;
            } else {
                field.push(c);
            }
            i += 1;
        }
        if in_q {
            return Err(Error::BadCopyFileFormat(
                "unterminated CSV quoted field".into(),
            ));
        }
        let text = String::from_utf8(field).unwrap_or_default();
        // FORCE_NOT_NULL: never NULL; FORCE_NULL: NULL even quoted.
        let k = out.len();
        let null = text == o.null
            && if quoted {
                o.force_null.contains(&k)
            } else {
                !o.force_not_null.contains(&k)
            };
        if null {
            out.push(Span::Null);
        } else {
            scratch.push_str(&text);
            out.push(Span::Scratch(from, scratch.len()));
        }
        if i >= b.len() {
            return Ok(());
        }
        i += 1; // the delimiter
    }
}

/// PostgreSQL's error for a line ending (`what`: "carriage return" or "newline") inside
/// data whose lines end otherwise (22P04), with its hint for the format.
fn eol_in_data(csv: bool, what: &str) -> Error {
    let (kind, hint) = match (csv, what) {
        (true, "newline") => ("unquoted", "Use quoted CSV field to represent newline."),
        (true, _) => (
            "unquoted",
            "Use quoted CSV field to represent carriage return.",
        ),
        (false, "newline") => ("literal", "Use \"\\n\" to represent newline."),
        (false, _) => ("literal", "Use \"\\r\" to represent carriage return."),
    };
    Error::BadCopyFileFormat(format!("{kind} {what} found in data")).with_hint(hint)
}

/// The end-of-copy marker `\.` at `at` of `buf` (at the start of a record in CSV, anywhere
/// in text), then the line ending of style `eol`: `Some(Some(rec))` for the marker,
/// `Some(None)` when its ending has not arrived yet, `None` when it is CSV data after all.
/// Errors (22P04): a marker whose line ending differs from the data's, a corrupt marker.
fn end_marker(
    buf: &[u8],
    at: usize,
    eol: Eol,
    at_end: bool,
    csv: bool,
) -> Result<Option<Option<Rec>>> {
    let after = &buf[at + 2..];
    let ending = match (after.first(), after.get(1)) {
        (Some(b'\r'), Some(b'\n')) if eol != Eol::Cr => Some(2),
        (Some(b'\r'), None) if !at_end && eol != Eol::Cr => return Ok(Some(None)),
        (Some(b'\r'), _) if eol != Eol::CrNl => Some(1),
        (Some(b'\n'), _) if eol != Eol::CrNl && eol != Eol::Cr => Some(1),
        (Some(b'\r' | b'\n'), _) if !csv => {
            return Err(Error::BadCopyFileFormat(
                "end-of-copy marker does not match previous newline style".into(),
            ))
        }
        (None, _) if !at_end => return Ok(Some(None)),
        _ => None,
    };
    match ending {
        Some(_) => Ok(Some(Some(Rec {
            len: at,
            next: buf.len(),
            inner_lines: 0,
            end_marker: true,
            open_quote: false,
        }))),
        None if csv => Ok(None), // data after all
        None => Err(Error::BadCopyFileFormat(
            "end-of-copy marker corrupt".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::copy_fields::fast_timestamp;
    use super::*;

    #[test]
    fn text_and_csv_fields_split_as_postgresql_reads_them() {
        let resolve = |line: &str, spans: &[Span], scratch: &str| -> Vec<Option<String>> {
            spans
                .iter()
                .map(|s| match *s {
                    Span::Null => None,
                    Span::Record(a, b) => Some(line[a..b].to_string()),
                    Span::Scratch(a, b) => Some(scratch[a..b].to_string()),
                })
                .collect()
        };
        let (mut out, mut scratch) = (Vec::new(), String::new());
        let line = "a\\tb\t\\N\t\\\\x\tplain\ta\\x41b\t\\x4a2\t\\xg\t\\303\\251\t\\101\\1012";
        split_text(
            line,
            &CopyOptions::defaults(CopyFormat::Text),
            true,
            &mut out,
            &mut scratch,
        )
        .unwrap();
        assert_eq!(
            resolve(line, &out, &scratch),
            vec![
                Some("a\tb".into()),
                None,
                Some("\\x".into()),
                Some("plain".into()),
                // Hex escapes: one or two digits; `\x` without one is an `x`.
                Some("aAb".into()),
                Some("J2".into()),
                Some("xg".into()),
                // Octal escapes are bytes: two of them can make one character.
                Some("\u{e9}".into()),
                Some("AA2".into()),
            ]
        );
        // A backslash takes the byte after it: an escaped delimiter (here a comma, and a
        // tab) stays in its field; the NULL marker is compared before unescaping.
        let comma = CopyOptions {
            delimiter: b',',
            ..CopyOptions::defaults(CopyFormat::Text)
        };
        out.clear();
        scratch.clear();
        let line = "x\\,y,1,\\N,a\\\\,b\\\tc\\";
        split_text(line, &comma, true, &mut out, &mut scratch).unwrap();
        assert_eq!(
            resolve(line, &out, &scratch),
            vec![
                Some("x,y".into()),
                Some("1".into()),
                None,
                Some("a\\".into()),
                Some("b\tc".into()),
            ]
        );
        // A byte escape that leaves invalid UTF-8 is refused (22021), as a NUL is.
        for bad in ["\\351", "a\\xe9b", "\\xff"] {
            out.clear();
            scratch.clear();
            let err = split_text(
                bad,
                &CopyOptions::defaults(CopyFormat::Text),
                true,
                &mut out,
                &mut scratch,
            )
            .unwrap_err();
            assert!(
                matches!(err, Error::CharacterNotInRepertoire(_)),
                "{bad}: {err}"
            );
        }
        out.clear();
        scratch.clear();
        let line = "1,\"a,b\",,\"\",\"x\"\"y\"";
        split_csv(
            line,
            &CopyOptions::defaults(CopyFormat::Csv),
            true,
            &mut out,
            &mut scratch,
        )
        .unwrap();
        assert_eq!(
            resolve(line, &out, &scratch),
            vec![
                Some("1".into()),
                Some("a,b".into()),
                None,
                Some("".into()),
                Some("x\"y".into())
            ]
        );
        out.clear();
        let line = "2001-01-01 00:05:00,,x";
        split_csv(
            line,
            &CopyOptions::defaults(CopyFormat::Csv),
            true,
            &mut out,
            &mut scratch,
        )
        .unwrap();
        assert_eq!(
            resolve(line, &out, &scratch),
            vec![Some("2001-01-01 00:05:00".into()), None, Some("x".into())]
        );
        assert_eq!(
            fast_timestamp(b"2001-01-01 00:05:00"),
            Some(978_307_500_000_000)
        );
        assert_eq!(fast_timestamp(b"2001-02-30 00:05:00"), None);
        assert_eq!(
            fast_timestamp(b"2001-01-01 00:05:00.25"),
            Some(978_307_500_250_000)
        );
        assert_eq!(
            fast_timestamp(b"2001-01-01 00:05:00.000001"),
            Some(978_307_500_000_001)
        );
        // The date of the previous timestamp is reused; a new date is checked afresh.
        for (text, want) in [
            ("2001-01-01 23:59:59", Some(978_393_599_000_000)),
            ("2001-01-01 24:00:00", None),
            ("2001-02-29 00:00:00", None),
            ("2001-02-28 00:00:00", Some(983_318_400_000_000)),
            ("2001-02-28 00:00:01", Some(983_318_401_000_000)),
            ("2001-02-29 00:00:01", None),
            ("2000-02-29 00:00:00", Some(951_782_400_000_000)),
            ("2000-02-29T00:00:00", Some(951_782_400_000_000)),
            ("0000-01-01 00:00:00", None),
            ("2001-01-01 0a:00:00", None),
            ("2001-01-01 00-00:00", None),
            ("2001-01-01 00:00:0/", None),
        ] {
            assert_eq!(fast_timestamp(text.as_bytes()), want, "{text}");
        }
    }

    /// The word-at-a-time `HH:MM:SS` reader agrees with a byte-by-byte one on every
    /// spelling of each byte position from a set of digits, colons and near misses, and on
    /// every pair of digits in each place (the range limits 23 and 59 and their
    /// neighbours among them).
    #[test]
    fn seconds_of_day_reads_exactly_two_digit_pairs_and_colons() {
        use super::super::copy_fields::seconds_of_day as time_of_day;
        let reference = |b: [u8; 8]| -> Option<i64> {
            let digit = |i: usize| b[i].is_ascii_digit().then(|| (b[i] - b'0') as i64);
            if b[2] != b':' || b[5] != b':' {
                return None;
            }
            let pair = |i: usize| Some(digit(i)? * 10 + digit(i + 1)?);
            let (h, m, s) = (pair(0)?, pair(3)?, pair(6)?);
            (h <= 23 && m <= 59 && s <= 59).then_some(h * 3600 + m * 60 + s)
        };
        for h in 0..100u8 {
            for m in 0..100u8 {
                for s in 0..100u8 {
                    let [a, b, c, d, e, f] = [h / 10, h % 10, m / 10, m % 10, s / 10, s % 10];
                    let t = [a, b, b':' - b'0', c, d, b':' - b'0', e, f].map(|x| x + b'0');
                    assert_eq!(time_of_day(t), reference(t), "{h}:{m}:{s}");
                }
            }
        }
        assert_eq!(time_of_day(*b"23:59:59"), Some(86_399));
        assert_eq!(time_of_day(*b"00:00:00"), Some(0));
        let near = [
            b'0',
            b'5',
            b'9',
            b':',
            b'/',
            b';',
            b'\x7f',
            0x80 | b'0',
            0,
            b' ',
            0xff,
        ];
        let base = *b"12:34:56";
        assert_eq!(time_of_day(base), Some(45_296));
        for i in 0..8 {
            for &x in &near {
                let mut b = base;
                b[i] = x;
                assert_eq!(time_of_day(b), reference(b), "{b:?}");
                for j in i + 1..8 {
                    for &y in &near {
                        let mut c = b;
                        c[j] = y;
                        assert_eq!(time_of_day(c), reference(c), "{c:?}");
                    }
                }
            }
        }
    }
}
