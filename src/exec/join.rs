//! Windowed joins of two or more streams: a global current time, birth and death of base
//! and join tuples, and the rows of each slide event (docs/sql.md, Windows).
//!
//! [`JoinExec`] is fed batches of each stream it reads, in the order the server accepted
//! them ([`JoinExec::push`]), and heartbeats ([`JoinExec::heartbeat`]). Each input (a stream
//! under its window; a self-join reads one stream as two inputs) keeps the base tuples that
//! may still be live. Time:
//! - a stream's time is the highest timestamp it has delivered; the query's current time is
//!   the lowest of its streams' times, undefined until every stream has delivered;
//! - slide events are the instants where the current window of at least one input changes:
//!   the union of the inputs' instance ends. Ends at the same instant are one event; a jump
//!   of current time over several ends gives one event per end, in time order.
//!
//! Birth and death (TelegraphCQ's implementation note): a base tuple in instances
//! `lo..=hi` of its window is born at the end of `lo` and dies at the end of `hi + 1`; it is
//! live at a slide event `e` iff `birth <= e < death`, which is exactly "it lies in its
//! stream's current window at `e`". A join tuple is born at the max of its components'
//! births and dies at the min of their deaths. Tuples in no instance are never born.
//!
//! Execution: a symmetric join. A tuple arriving on input `k` passes `k`'s own predicates,
//! then probes the other inputs' stores in a fixed order, by hash where an equi-predicate
//! links the next input to the inputs joined so far (nested loops only where none does),
//! and the join tuples it completes are folded at once, keyed by their `(birth, death)`:
//! per-group partial aggregates with aggregates, the rows themselves without. At a slide
//! event `e` the partials of every `(birth, death)` with `birth <= e < death` are merged and
//! finalised (or the live rows emitted). Base tuples and partials whose death is at or
//! before the next slide event are dropped, so state is bounded by the windows.
//!
//! Design decision: partials are kept per `(birth, death)` pair rather than per join tuple
//! so that every aggregate (min and max included) is exact without retraction, and the
//! number of partials is bounded by the pairs of instance ends a window span holds.
//!
//! Late tuples: a tuple joins every slide event not yet emitted; one that would have been
//! live at an event already emitted is counted late.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use super::group::{GroupDict, GroupTable, KeyHasher};
use super::join_count::PairCounts;
use super::query::{compare_sort_keys, QueryStats};
use super::windowed::ExecLimits;
use super::Event;
use crate::agg::{group_eq, AggSpec};
use crate::error::{Error, Result};
use crate::expr::{eval, EvalContext, WindowMetaValues};
use crate::sql::{BinaryOp, Expr, Query, Source, WindowMeta};
use crate::types::{DataType, Value};
use crate::window::Window;

/// One input of a join as the executor runs it.
#[derive(Clone, Debug)]
pub(crate) struct JoinInputPlan {
    /// The input's window, START AT resolved.
    pub(crate) window: Window,
    /// Index of the first instance tuples may belong to: 0 for `START AT` a timestamp, the
    /// first instance at or after the submission time for a default START AT, `i64::MIN`
    /// for `START AT 'epoch'`.
    pub(crate) first_index: i64,
    /// Which of the join's streams (see [`JoinExec::new`]) feeds this input.
    pub(crate) stream: usize,
}

/// A tuple an input keeps while it may still be live: one allocation holding its row, then
/// its key under each of the input's hash indexes.
struct Stored {
    vals: Box<[Value]>,
    birth: i64,
    death: i64,
}

/// A hash index of an input's stored tuples on some of its expressions.
struct HashIndex {
    /// Key expressions over the input's own row.
    exprs: Vec<Expr>,
    /// Where the key starts in a stored tuple's values.
    at: usize,
    map: HashMap<u64, Vec<usize>>,
}

impl HashIndex {
    fn key<'a>(&self, s: &'a Stored) -> &'a [Value] {
        &s.vals[self.at..self.at + self.exprs.len()]
    }
}

/// The tuples an input keeps, in a slab whose dead slots are reclaimed by compaction.
#[derive(Default)]
struct Store {
    /// Columns of the input's row.
    ncols: usize,
    slots: Vec<Option<Stored>>,
    live: usize,
    expiry: BinaryHeap<Reverse<(i64, usize)>>,
    indexes: Vec<HashIndex>,
}

impl Store {
    fn row<'a>(&self, s: &'a Stored) -> &'a [Value] {
        &s.vals[..self.ncols]
    }

    /// Keep `s`; a key with a NULL value is left out of its index (`=` is never true then).
    fn insert(&mut self, s: Stored, hasher: &KeyHasher) {
        let slot = self.slots.len();
        for ix in self.indexes.iter_mut() {
            let k = ix.key(&s);
            if !k.iter().any(Value::is_null) {
                ix.map.entry(hasher.hash(k)).or_default().push(slot);
            }
        }
        self.expiry.push(Reverse((s.death, slot)));
        self.slots.push(Some(s));
        self.live += 1;
    }

    /// Drop every tuple that dies at or before `e`.
    fn expire(&mut self, e: i64, hasher: &KeyHasher) {
        while let Some(Reverse((death, slot))) = self.expiry.peek().copied() {
            if death > e {
                break;
            }
            self.expiry.pop();
            if self.slots[slot].take().is_some() {
                self.live -= 1;
            }
        }
        if self.slots.len() > 2 * self.live + 64 {
            self.compact(hasher);
        }
    }

    /// Renumber the live tuples from 0 and rebuild the indexes.
    fn compact(&mut self, hasher: &KeyHasher) {
        let old = std::mem::take(&mut self.slots);
        self.expiry.clear();
        self.live = 0;
        for ix in &mut self.indexes {
            ix.map.clear();
        }
        for s in old.into_iter().flatten() {
            self.insert(s, hasher);
        }
    }
}

/// One step of the probe order for a tuple arriving on some input: join `input`, by hash
/// through `index` when equi-predicates link it to the inputs joined so far.
#[derive(Clone, Debug)]
struct ProbeStep {
    input: usize,
    /// The index of `input` and, for each of its key expressions, the joined input and the
    /// expression over that input's row giving the value to look up.
    hash: Option<(usize, Vec<(usize, Expr)>)>,
}

struct Input {
    window: Window,
    first_index: i64,
    /// Index of the next instance whose end has not been a slide event.
    next_m: i64,
    offset: usize,
    ncols: usize,
    /// Predicates over this input's row alone, checked on arrival.
    filter: Vec<Expr>,
    /// The probe order for a tuple arriving here.
    steps: Vec<ProbeStep>,
    store: Store,
}

enum Mode {
    /// Aggregates: per-group partials by `(birth, death)`.
    Agg {
        specs: Vec<AggSpec>,
        group_by: Vec<Expr>,
        args: Vec<Option<Expr>>,
        dict: GroupDict,
        compact_at: usize,
        buckets: BTreeMap<(i64, i64), GroupTable>,
    },
    /// Only count(*) of a two-input equi-join grouped by key columns: per key, the base
    /// tuples' counts by `(birth, death)`, multiplied at each slide event
    /// ([`super::join_count`]).
    Count(Box<PairCounts>),
    /// No aggregates: the join rows by `(birth, death)`.
    Live {
        buckets: BTreeMap<(i64, i64), Vec<Vec<Value>>>,
        rows: usize,
    },
}

/// A registered join query's executor. Knows nothing of sockets or channels.
pub(crate) struct JoinExec {
    query: Query,
    params: Vec<Value>,
    tz: bool,
    inputs: Vec<Input>,
    /// Per stream: the highest timestamp it has delivered.
    stream_times: Vec<Option<i64>>,
    /// Per stream: the inputs it feeds, in order.
    stream_inputs: Vec<Vec<usize>>,
    started: bool,
    last_event: Option<i64>,
    /// The next slide event's instant: a tuple or partial that dies at or before it can
    /// never be live at an event still to come, so it is dropped (or never kept).
    dead_before: Option<i64>,
    /// Predicates checked once a join tuple is complete, over its compact row.
    residual: Vec<Expr>,
    /// The columns of the joined row that the fold reads, as (input, column of its row):
    /// a join tuple is materialised as these values only (its *compact row*). Residual
    /// predicates, group keys and aggregate arguments are rewritten over it.
    needed: Vec<(usize, usize)>,
    /// The join tuples a probe found (buffers reused across tuples).
    found: Found,
    keybuf: Vec<Value>,
    argbuf: Vec<Value>,
    /// `(range, slide)` when every input's window has the same range, slide and grid, so
    /// that wstart(*), wrange(*) and wslide(*) have one meaning.
    grid: Option<(i64, i64)>,
    /// In one window's join of a multi-window join: the multi-window input, whose window
    /// wstart(*), wrange(*) and wslide(*) name ([`JoinExec::new_for_window`]).
    meta_input: Option<usize>,
    /// With `meta_input` set: the instant of each `Event::Rows` pushed since the last
    /// [`JoinExec::take_event_times`], in order (a multi-window join merges its windows'
    /// events by these, after every step, so this holds one step's events at most).
    event_times: Vec<i64>,
    hasher: KeyHasher,
    mode: Mode,
    emit_empty: bool,
    limits: ExecLimits,
    live_tuples_max: usize,
    stats: QueryStats,
    rows_left: Option<u64>,
    done: bool,
    clock_us: i64,
    /// Per stream: SLACK, subtracted from its timestamps to give its time.
    slack_us: Vec<i64>,
    /// A stream-table join's table stage: at each slide event it joins the live tuples to
    /// the tables and computes the rows (see [`super::table_join`]).
    tables: Option<Box<super::table_join::TableStage>>,
}

/// Join tuples found by one probe: their compact rows concatenated, and each one's birth
/// and death.
#[derive(Default)]
struct Found {
    rows: Vec<Value>,
    times: Vec<(i64, i64)>,
}

/// Most inputs a join may have (its probes keep the joined rows on the stack).
pub(crate) const INPUTS_MAX: usize = 16;

/// Dictionary size below which group ids are never compacted.
const COMPACT_MIN: usize = 1 << 16;

impl JoinExec {
    #[cfg(test)]
    /// An executor for the join `query` (its source is [`Source::Join`]) whose inputs run
    /// under `inputs` (in the query's input order); `nstreams` distinct streams feed them.
    /// `tz`: wtime(*) is timestamptz.
    ///
    /// Errors: 0A000 for wstart(*), wrange(*) or wslide(*) when the windows do not share one
    /// grid; 54000 for a window over the open-instance limit.
    pub(crate) fn new(
        query: Query,
        inputs: Vec<JoinInputPlan>,
        nstreams: usize,
        params: Vec<Value>,
        tz: bool,
        limits: ExecLimits,
        live_tuples_max: usize,
    ) -> Result<JoinExec> {
        Self::new_for_window(
            query,
            inputs,
            nstreams,
            params,
            tz,
            limits,
            live_tuples_max,
            None,
        )
    }

    /// [`JoinExec::new`] for one window's join of a multi-window join: with `meta_input`
    /// set, wstart(*), wrange(*) and wslide(*) name that input's window (its RANGE, its
    /// SLIDE, and the start of its current instance at the slide event) whatever the
    /// other inputs' windows are. Errors as [`JoinExec::new`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_for_window(
        query: Query,
        inputs: Vec<JoinInputPlan>,
        nstreams: usize,
        params: Vec<Value>,
        tz: bool,
        limits: ExecLimits,
        live_tuples_max: usize,
        meta_input: Option<usize>,
    ) -> Result<JoinExec> {
        let Source::Join {
            inputs: sources, ..
        } = &query.source
        else {
            return Err(Error::Internal("a join executor needs a join".into()));
        };
        assert_eq!(sources.len(), inputs.len(), "one plan per join input");
        if inputs.len() > INPUTS_MAX {
            return Err(Error::FeatureNotSupported(format!(
                "a join reads at most {INPUTS_MAX} streams, not {}",
                inputs.len()
            )));
        }
        let (mut runs, stream_inputs) = input_runs(&inputs, sources, nstreams, &limits)?;
        let grid = shared_grid(&runs);
        if grid.is_none() && meta_input.is_none() && uses_instance_meta(&query) {
            return Err(Error::FeatureNotSupported(
                "wstart(*), wrange(*) and wslide(*) in a join need every stream under the same window (same RANGE BY, SLIDE BY and grid); wtime(*) is the slide event's instant".into(),
            ));
        }
        let mut residual = plan_predicates(&query, &mut runs);
        let (group_by, args, needed) = compact_row(&query, &mut residual, &runs);
        let (mode, emit_empty) = fold_mode(&query, group_by, args, &residual, &runs, sources);
        Ok(JoinExec {
            rows_left: query.limit,
            done: query.limit == Some(0),
            query,
            params,
            tz,
            inputs: runs,
            stream_times: vec![None; nstreams],
            stream_inputs,
            started: false,
            last_event: None,
            dead_before: None,
            residual,
            needed,
            found: Found::default(),
            keybuf: Vec::new(),
            argbuf: Vec::new(),
            grid,
            meta_input,
            event_times: Vec::new(),
            hasher: KeyHasher::new(),
            mode,
            emit_empty,
            limits,
            live_tuples_max,
            stats: QueryStats::default(),
            clock_us: crate::time::now_us(),
            slack_us: vec![0; nstreams],
            tables: None,
        })
    }

    /// Make this the streams' join of a stream-table join: built for the streams' query of
    /// [`super::table_join::split`] (no aggregates), it hands the live tuples of each slide
    /// event to `stage`. Errors: 0A000 for wstart(*), wrange(*) or wslide(*) when the
    /// windows do not share one grid.
    pub(crate) fn set_table_stage(&mut self, stage: super::table_join::TableStage) -> Result<()> {
        debug_assert!(
            matches!(self.mode, Mode::Live { .. }),
            "the streams of a stream-table join keep their live tuples"
        );
        if self.grid.is_none() && uses_instance_meta(stage.query()) {
            return Err(Error::FeatureNotSupported(
                "wstart(*), wrange(*) and wslide(*) in a join need every stream under the same window (same RANGE BY, SLIDE BY and grid); wtime(*) is the slide event's instant".into(),
            ));
        }
        self.emit_empty = stage.emits_empty_events();
        self.tables = Some(Box::new(stage));
        Ok(())
    }

    /// Tolerate tuples of stream `stream` up to `slack_us` behind its time: the stream's
    /// time becomes its highest timestamp minus the slack (`SLACK`, `WITH (slack = ...)`).
    pub(crate) fn set_slack(&mut self, stream: usize, slack_us: i64) {
        self.slack_us[stream] = slack_us.max(0);
    }

    /// Counters for `tcq_queries`; `now_us` is the query's global current time.
    pub(crate) fn stats(&self) -> &QueryStats {
        &self.stats
    }

    /// Each stream's time (the highest timestamp it has delivered, minus its SLACK), by
    /// stream index.
    pub(crate) fn stream_times(&self) -> &[Option<i64>] {
        &self.stream_times
    }

    /// True once the query has ended (LIMIT reached).
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Bytes of state the join holds: its inputs' stored tuples and hash indexes, and its
    /// partials, pair counts or buffered join rows, estimated from vectors' capacities and
    /// the values' inline size (text behind values is not counted). For the memory budget;
    /// it walks the partials' buckets, not the tuples.
    pub(crate) fn state_bytes(&self) -> usize {
        const VALUE: usize = std::mem::size_of::<Value>();
        let stores: usize = self
            .inputs
            .iter()
            .map(|i| {
                let s = &i.store;
                let width: usize = s.ncols + s.indexes.iter().map(|x| x.exprs.len()).sum::<usize>();
                let indexed: usize = s.indexes.iter().map(|x| x.map.capacity() * 32).sum();
                s.slots.capacity() * std::mem::size_of::<Option<Stored>>()
                    + s.live * (width * VALUE + 8 * s.indexes.len())
                    + s.expiry.capacity() * 16
                    + indexed
            })
            .sum();
        let mode = match &self.mode {
            Mode::Agg { dict, buckets, .. } => {
                dict.heap_bytes() + buckets.values().map(GroupTable::heap_bytes).sum::<usize>()
            }
            Mode::Count(c) => c.heap_bytes(),
            Mode::Live { buckets, rows } => {
                let width = buckets
                    .values()
                    .find_map(|b| b.first())
                    .map_or(0, |r| r.capacity());
                rows * (std::mem::size_of::<Vec<Value>>() + width * VALUE)
            }
        };
        stores + mode
    }

    #[cfg(test)]
    /// Base tuples kept over all inputs (bounded by the windows).
    pub(crate) fn stored_tuples(&self) -> usize {
        let counted = match &self.mode {
            Mode::Count(c) => c.tuples_held(),
            _ => 0,
        };
        counted + self.inputs.iter().map(|i| i.store.live).sum::<usize>()
    }

    /// Consume a batch of stream `stream`, in arrival order, appending output to `out`.
    ///
    /// Errors end the query (a limit exceeded, an expression error such as division by zero).
    pub(crate) fn push(
        &mut self,
        stream: usize,
        batch: &super::RowBatch,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        for i in 0..batch.len() {
            if self.done {
                break;
            }
            let t = batch.times[i];
            self.stats.tuples_in += 1;
            self.move_stream(stream, t, out)?;
            if self.done {
                break;
            }
            let row = batch.row(i);
            let mut late = false;
            for j in 0..self.stream_inputs[stream].len() {
                let k = self.stream_inputs[stream][j];
                late |= self.insert(k, row, t)?;
            }
            if late {
                self.stats.late_tuples += 1;
            }
        }
        Ok(())
    }

    /// Consume a batch of stream `stream` as the ingest queue carries it. A columnar batch
    /// feeding the count fast path ([`super::join_count`]) with no arrival filter is read
    /// column by column, only its key columns; any other is read as rows ([`Self::push`]).
    ///
    /// Errors: as [`Self::push`].
    pub(crate) fn push_batch(
        &mut self,
        stream: usize,
        batch: &super::Batch,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        match batch {
            super::Batch::Rows(b) => self.push(stream, b, out),
            super::Batch::Columns(b) => {
                let direct = matches!(self.mode, Mode::Count(_))
                    && self.stream_inputs[stream]
                        .iter()
                        .all(|&k| self.inputs[k].filter.is_empty());
                if direct {
                    self.push_counted_columns(stream, b, out)
                } else {
                    self.push(stream, &b.to_rows(), out)
                }
            }
        }
    }

    /// [`Self::push`] for the count fast path over a columnar batch: per tuple, its time
    /// and the key columns of each input it feeds, as the row path reads them.
    fn push_counted_columns(
        &mut self,
        stream: usize,
        batch: &super::columns::ColumnBatch,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        let views = batch.views();
        let feeds = self.stream_inputs[stream].clone();
        let mut key = Vec::new();
        for (i, &t) in batch.times.iter().enumerate() {
            if self.done {
                break;
            }
            self.stats.tuples_in += 1;
            self.move_stream(stream, t, out)?;
            if self.done {
                break;
            }
            let mut late = false;
            for &k in &feeds {
                let input = &self.inputs[k];
                let Some((birth, death)) = birth_and_death(&input.window, input.first_index, t)
                else {
                    continue;
                };
                late |= self.last_event.is_some_and(|e| birth <= e);
                if self.dead_before.is_some_and(|h| death <= h) {
                    continue;
                }
                let Mode::Count(c) = &mut self.mode else {
                    unreachable!("only the count fast path reads columns")
                };
                key.clear();
                key.extend(c.key_columns(k).iter().map(|&col| views[col].value(i)));
                c.insert_key(k, &key, birth, death, &self.hasher);
            }
            if late {
                self.stats.late_tuples += 1;
            }
        }
        Ok(())
    }

    /// Move stream `stream`'s time to `t_us` without a tuple (`tcq_advance`, server clock).
    pub(crate) fn heartbeat(
        &mut self,
        stream: usize,
        t_us: i64,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        self.move_stream(stream, t_us, out)
    }

    fn move_stream(&mut self, stream: usize, t_us: i64, out: &mut Vec<Event>) -> Result<()> {
        let t_us = t_us.saturating_sub(self.slack_us[stream]);
        let st = &mut self.stream_times[stream];
        if st.is_some_and(|now| now >= t_us) {
            return Ok(());
        }
        *st = Some(t_us);
        let global = self.stream_times.iter().copied().min().flatten();
        if let Some(g) = global {
            if self.stats.now_us.is_none_or(|now| g > now) {
                self.advance(g, out)?;
            }
        }
        Ok(())
    }

    /// A tuple arriving on input `k`: join it with the other inputs and keep it. Returns
    /// true when it would have been live at a slide event already emitted (late).
    fn insert(&mut self, k: usize, row: &[Value], t: i64) -> Result<bool> {
        let input = &self.inputs[k];
        let local = &row[..input.ncols];
        for f in &input.filter {
            if !truthy(&eval(f, &self.ctx(local, None))?) {
                return Ok(false);
            }
        }
        let Some((birth, death)) = birth_and_death(&input.window, input.first_index, t) else {
            return Ok(false);
        };
        let late = self.last_event.is_some_and(|e| birth <= e);
        if self.dead_before.is_some_and(|h| death <= h) {
            return Ok(late);
        }
        if let Mode::Count(c) = &mut self.mode {
            c.insert(k, local, birth, death, &self.hasher);
            return Ok(late);
        }
        let nkeys: usize = input.store.indexes.iter().map(|ix| ix.exprs.len()).sum();
        let mut vals = Vec::with_capacity(local.len() + nkeys);
        vals.extend_from_slice(local);
        for ix in &input.store.indexes {
            for e in &ix.exprs {
                vals.push(match e {
                    Expr::Column(c) => local[*c].clone(),
                    _ => eval(e, &self.ctx(local, None))?,
                });
            }
        }
        let mut found = std::mem::take(&mut self.found);
        found.rows.clear();
        found.times.clear();
        let mut parts: [Option<&[Value]>; INPUTS_MAX] = [None; INPUTS_MAX];
        parts[k] = Some(local);
        let probed = self.extend(k, 0, &mut parts, (birth, death), &mut found);
        self.inputs[k].store.insert(
            Stored {
                vals: vals.into_boxed_slice(),
                birth,
                death,
            },
            &self.hasher,
        );
        let w = self.needed.len();
        let mut folded = probed;
        for (i, &(b, d)) in found.times.iter().enumerate() {
            if folded.is_err() {
                break;
            }
            folded = self.fold(&found.rows[i * w..(i + 1) * w], b, d);
        }
        self.found = found;
        folded.map(|()| late)
    }

    /// Depth-first over the probe steps of input `k` from step `i`: every combination of
    /// stored tuples that matches the parts joined so far and is live at some future slide
    /// event.
    fn extend<'a>(
        &'a self,
        k: usize,
        i: usize,
        parts: &mut [Option<&'a [Value]>; INPUTS_MAX],
        (birth, death): (i64, i64),
        found: &mut Found,
    ) -> Result<()> {
        let steps = &self.inputs[k].steps;
        if i == steps.len() {
            for &(input, col) in &self.needed {
                found
                    .rows
                    .push(parts[input].expect("every input is joined")[col].clone());
            }
            found.times.push((birth, death));
            return Ok(());
        }
        let step = &steps[i];
        let store = &self.inputs[step.input].store;
        let mut visit =
            |s: &'a Stored, parts: &mut [Option<&'a [Value]>; INPUTS_MAX]| -> Result<()> {
                let (b, d) = (birth.max(s.birth), death.min(s.death));
                if b >= d || self.dead_before.is_some_and(|h| d <= h) {
                    return Ok(());
                }
                parts[step.input] = Some(store.row(s));
                self.extend(k, i + 1, parts, (b, d), found)?;
                parts[step.input] = None;
                Ok(())
            };
        match &step.hash {
            Some((ix, probe)) => {
                let mut key = Vec::with_capacity(probe.len());
                for (src, e) in probe {
                    let row = parts[*src].expect("joined before");
                    let v = match e {
                        Expr::Column(c) => row[*c].clone(),
                        _ => eval(e, &self.ctx(row, None))?,
                    };
                    if v.is_null() {
                        return Ok(());
                    }
                    key.push(v);
                }
                let index = &store.indexes[*ix];
                let Some(slots) = index.map.get(&self.hasher.hash(&key)) else {
                    return Ok(());
                };
                for &slot in slots {
                    let Some(s) = &store.slots[slot] else {
                        continue;
                    };
                    let matches = index.key(s).iter().zip(&key).all(|(a, b)| group_eq(a, b));
                    if matches {
                        visit(s, parts)?;
                    }
                }
            }
            None => {
                for s in store.slots.iter().flatten() {
                    visit(s, parts)?;
                }
            }
        }
        Ok(())
    }

    /// Fold a complete join tuple (its compact row) that passes the residual predicates.
    fn fold(&mut self, full: &[Value], birth: i64, death: i64) -> Result<()> {
        for p in &self.residual {
            if !truthy(&eval(p, &self.ctx(full, None))?) {
                return Ok(());
            }
        }
        let groups_max = self.limits.groups_max;
        let (params, clock) = (&self.params, self.clock_us);
        let c = |row| EvalContext {
            row,
            params,
            window: None,
            now_us: clock,
            session: None,
            lazy: None,
        };
        match &mut self.mode {
            Mode::Agg {
                specs,
                group_by,
                args,
                dict,
                buckets,
                ..
            } => {
                let (key, argv) = (&mut self.keybuf, &mut self.argbuf);
                key.clear();
                for e in group_by.iter() {
                    key.push(match e {
                        Expr::Column(i) => full[*i].clone(),
                        _ => eval(e, &c(full))?,
                    });
                }
                argv.clear();
                for a in args.iter() {
                    argv.push(match a {
                        None => Value::Bool(true),
                        Some(Expr::Column(i)) => full[*i].clone(),
                        Some(e) => eval(e, &c(full))?,
                    });
                }
                let gid = dict.intern(self.hasher.hash(key), key);
                let table = buckets.entry((birth, death)).or_default();
                let slot = table.slot(gid, specs, groups_max)?;
                table.update(slot, specs, argv)?;
            }
            Mode::Count(_) => unreachable!("the count fast path forms no join tuples"),
            Mode::Live { buckets, rows } => {
                if *rows >= self.live_tuples_max {
                    return Err(Error::ProgramLimitExceeded(format!(
                        "the join keeps more than {} live join tuples (live_tuples_max)",
                        self.live_tuples_max
                    )));
                }
                *rows += 1;
                buckets
                    .entry((birth, death))
                    .or_default()
                    .push(full.to_vec());
            }
        }
        Ok(())
    }

    /// Current time became `now_us`: one slide event per instance end up to it, in order.
    fn advance(&mut self, now_us: i64, out: &mut Vec<Event>) -> Result<()> {
        if !self.started {
            for input in &mut self.inputs {
                input.next_m = if input.first_index == i64::MIN {
                    input.window.next_closing_index(now_us)
                } else {
                    input.first_index
                };
            }
            self.started = true;
            self.expire_before_next_event();
        }
        self.stats.now_us = Some(now_us);
        let mut empty_run = 0u64;
        while !self.done {
            let e = self.next_end();
            if e > now_us || e == i64::MAX {
                break;
            }
            if !self.any_live(e) {
                if self.emit_empty {
                    empty_run += 1;
                    if empty_run > self.limits.empty_slide_events_max {
                        let skipped = self.skip_before(now_us.saturating_add(1));
                        out.push(Event::Notice(format!(
                            "current time jumped to {}: {skipped} empty slide events from {} on were not emitted (empty_slide_events_max)",
                            crate::time::format_timestamp(now_us),
                            crate::time::format_timestamp(e)
                        )));
                        break;
                    }
                } else {
                    // Nothing is live: go straight to the next birth (or past now).
                    let next_birth = self.next_birth_after(e);
                    let target = next_birth.map_or(now_us.saturating_add(1), |b| {
                        b.min(now_us.saturating_add(1))
                    });
                    if target > e {
                        self.skip_before(target);
                        continue;
                    }
                }
            }
            self.slide_event(e, out)?;
            for input in &mut self.inputs {
                while input.window.upper_us(input.next_m) <= e {
                    input.next_m += 1;
                }
            }
            self.last_event = Some(e);
            self.expire_before_next_event();
        }
        Ok(())
    }

    /// Drop what dies at or before the next slide event.
    fn expire_before_next_event(&mut self) {
        let h = self.next_end();
        self.dead_before = Some(h);
        self.expire(h);
    }

    fn next_end(&self) -> i64 {
        self.inputs
            .iter()
            .map(|i| i.window.upper_us(i.next_m))
            .min()
            .unwrap_or(i64::MAX)
    }

    fn any_live(&self, e: i64) -> bool {
        let live = |(b, d): &(i64, i64)| *b <= e && e < *d;
        match &self.mode {
            Mode::Agg { buckets, .. } => buckets.keys().any(live),
            Mode::Count(c) => c.any_live(e),
            Mode::Live { buckets, .. } => buckets.keys().any(live),
        }
    }

    fn next_birth_after(&self, e: i64) -> Option<i64> {
        let keys: Vec<(i64, i64)> = match &self.mode {
            Mode::Agg { buckets, .. } => buckets.keys().copied().collect(),
            Mode::Count(c) => return c.next_birth_after(e),
            Mode::Live { buckets, .. } => buckets.keys().copied().collect(),
        };
        keys.into_iter().map(|(b, _)| b).filter(|b| *b > e).min()
    }

    /// Pass every slide event before `x` without emitting; returns how many were passed.
    fn skip_before(&mut self, x: i64) -> u64 {
        let mut skipped = 0u64;
        let mut last = self.last_event;
        for input in &mut self.inputs {
            let m = input
                .window
                .next_closing_index(x.saturating_sub(1))
                .max(input.first_index);
            if m > input.next_m {
                skipped = skipped.saturating_add((m as i128 - input.next_m as i128) as u64);
                let end = input.window.upper_us(m - 1);
                last = Some(last.map_or(end, |l| l.max(end)));
                input.next_m = m;
            }
        }
        if let Some(l) = last {
            self.last_event = Some(l);
        }
        self.expire_before_next_event();
        skipped
    }

    /// Drop base tuples and partials that die at or before `e`.
    fn expire(&mut self, e: i64) {
        for input in &mut self.inputs {
            input.store.expire(e, &self.hasher);
        }
        match &mut self.mode {
            Mode::Agg {
                buckets,
                dict,
                compact_at,
                ..
            } => {
                buckets.retain(|(_, d), _| *d > e);
                if dict.len() >= *compact_at {
                    let mut live: Vec<u32> = buckets
                        .values()
                        .flat_map(|t| t.gids().iter().copied())
                        .collect();
                    live.sort_unstable();
                    live.dedup();
                    let map = dict.compact(&live);
                    for t in buckets.values_mut() {
                        t.remap(&map);
                    }
                    *compact_at = (2 * dict.len()).max(COMPACT_MIN);
                }
            }
            Mode::Count(c) => c.expire(e),
            Mode::Live { buckets, rows } => {
                buckets.retain(|(_, d), v| {
                    if *d <= e {
                        *rows -= v.len();
                    }
                    *d > e
                });
            }
        }
    }

    /// Emit the rows of the slide event at `e`.
    fn slide_event(&mut self, e: i64, out: &mut Vec<Event>) -> Result<()> {
        let meta = match self.meta_input {
            Some(i) => {
                let w = self.inputs[i].window;
                WindowMetaValues {
                    // The start of the input's current instance (its latest end at or
                    // before e); before its first instance ends, e - RANGE.
                    lower_us: w
                        .current_index(e)
                        .map_or(e.saturating_sub(w.range_us), |m| w.lower_us(m)),
                    upper_us: e,
                    range_us: w.range_us,
                    slide_us: w.slide_us,
                    tz: self.tz,
                }
            }
            None => WindowMetaValues {
                lower_us: self.grid.map_or(e, |(r, _)| e.saturating_sub(r)),
                upper_us: e,
                range_us: self.grid.map_or(0, |(r, _)| r),
                slide_us: self.grid.map_or(0, |(_, s)| s),
                tz: self.tz,
            },
        };
        let live = |(b, d): &(i64, i64)| *b <= e && e < *d;
        let mut rows = Vec::new();
        match &self.mode {
            Mode::Agg {
                specs,
                dict,
                buckets,
                group_by,
                ..
            } => {
                let tables: Vec<&GroupTable> = buckets
                    .iter()
                    .filter(|(k, _)| live(k))
                    .map(|(_, t)| t)
                    .collect();
                let merged;
                let table = match tables[..] {
                    [] => None,
                    [one] => Some(one),
                    _ => {
                        let mut m = GroupTable::new();
                        for t in &tables {
                            m.merge_from(t, specs, self.limits.groups_max)?;
                        }
                        merged = m;
                        Some(&merged)
                    }
                };
                let empty = group_by.is_empty();
                aggregate_rows(specs, dict, table, empty, &mut |agg_row| {
                    self.output_row(agg_row, meta, &mut rows)
                })?;
            }
            Mode::Count(c) => {
                for agg_row in c.rows(e, &self.hasher, self.limits.groups_max)? {
                    self.output_row(&agg_row, meta, &mut rows)?;
                }
            }
            Mode::Live { buckets, .. } => match &self.tables {
                Some(stage) => {
                    let tuples: Vec<&[Value]> = buckets
                        .iter()
                        .filter(|(k, _)| live(k))
                        .flat_map(|(_, v)| v.iter().map(Vec::as_slice))
                        .collect();
                    rows = stage.event(meta, &tuples)?;
                }
                None => {
                    for (_, v) in buckets.iter().filter(|(k, _)| live(k)) {
                        for r in v {
                            self.output_row(r, meta, &mut rows)?;
                        }
                    }
                }
            },
        }
        self.stats.slide_events += 1;
        let before = out.len();
        self.finish_event(rows, out);
        if out.len() > before && self.meta_input.is_some() {
            self.event_times.push(e);
        }
        Ok(())
    }

    /// Input `i`'s window (`i` < the number of inputs).
    pub(crate) fn input_window(&self, i: usize) -> crate::window::Window {
        self.inputs[i].window
    }

    /// The instants of the `Event::Rows` this executor pushed since the last call, in
    /// order, microseconds since the epoch.
    pub(crate) fn take_event_times(&mut self) -> Vec<i64> {
        std::mem::take(&mut self.event_times)
    }

    fn ctx<'a>(&'a self, row: &'a [Value], window: Option<WindowMetaValues>) -> EvalContext<'a> {
        EvalContext {
            row,
            params: &self.params,
            window,
            now_us: self.clock_us,
            session: None,
            lazy: None,
        }
    }

    /// HAVING, projection and sort keys over one aggregate (or join) row.
    fn output_row(
        &self,
        row: &[Value],
        meta: WindowMetaValues,
        rows: &mut Vec<(Vec<Value>, Vec<Value>)>,
    ) -> Result<()> {
        output_row(&self.query, &self.ctx(row, Some(meta)), rows)
    }

    /// Sort one slide event's rows, apply LIMIT, and emit them.
    fn finish_event(&mut self, mut rows: Vec<(Vec<Value>, Vec<Value>)>, out: &mut Vec<Event>) {
        sort_rows(&self.query, &mut rows);
        let mut rows: Vec<Vec<Value>> = rows.into_iter().map(|(r, _)| r).collect();
        if let Some(left) = &mut self.rows_left {
            if rows.len() as u64 >= *left {
                rows.truncate(*left as usize);
                self.done = true;
            }
            *left -= rows.len() as u64;
        }
        self.stats.rows_out += rows.len() as u64;
        if !rows.is_empty() {
            out.push(Event::Rows(rows));
        }
    }

    /// The plan as EXPLAIN shows it: inputs, windows, probe order and hash keys.
    /// `names[i]` is input `i`'s display name (`stream AS alias`), `columns` the joined
    /// row's column names as the plan prints them (`alias.column`).
    /// `table_columns` names the full row's columns of a stream-table join (streams and
    /// tables in the order written); it is not read otherwise.
    pub(crate) fn explain(
        &self,
        names: &[String],
        columns: &[String],
        table_columns: &[String],
    ) -> Vec<String> {
        let mut lines = vec![match &self.tables {
            None => format!(
                "Windowed join of {} inputs (symmetric hash join; slide events at every window end)",
                self.inputs.len()
            ),
            Some(stage) => format!(
                "Stream-table join of {} stream input(s) and {} table(s) (slide events at every window end)",
                self.inputs.len(),
                stage.table_count()
            ),
        }];
        for (i, input) in self.inputs.iter().enumerate() {
            lines.push(format!(
                "  Input {}: {}  window {}  instances {}{}",
                i + 1,
                names[i],
                crate::wcg::explain::window_text(&input.window),
                if input.first_index == i64::MIN {
                    "unbounded (START AT 'epoch')".to_string()
                } else {
                    format!(
                        "from {}",
                        crate::time::format_timestamp(input.window.lower_us(input.first_index))
                    )
                },
                if input.filter.is_empty() {
                    String::new()
                } else {
                    format!("  filter: {} predicate(s)", input.filter.len())
                }
            ));
        }
        let col = |input: usize, e: &Expr| match e {
            Expr::Column(c) => columns
                .get(self.inputs[input].offset + c)
                .cloned()
                .unwrap_or_else(|| "?".into()),
            _ => format!("<expression over {}>", names[input]),
        };
        for (k, input) in self.inputs.iter().enumerate() {
            let mut parts = Vec::new();
            for step in &input.steps {
                parts.push(match &step.hash {
                    Some((ix, probe)) => {
                        let exprs = &self.inputs[step.input].store.indexes[*ix].exprs;
                        let preds: Vec<String> = exprs
                            .iter()
                            .zip(probe)
                            .map(|(mine, (src, theirs))| {
                                format!("{} = {}", col(step.input, mine), col(*src, theirs))
                            })
                            .collect();
                        format!(
                            "hash probe {} on {}",
                            names[step.input],
                            preds.join(" AND ")
                        )
                    }
                    None => format!("nested loop over {}", names[step.input]),
                });
            }
            if parts.is_empty() {
                continue;
            }
            lines.push(format!(
                "  Arrival on {}: {}",
                names[k],
                parts.join(", then ")
            ));
        }
        if !self.residual.is_empty() {
            lines.push(format!(
                "  Join filter: {} predicate(s) checked on each join tuple",
                self.residual.len()
            ));
        }
        if let Some(stage) = &self.tables {
            lines.extend(stage.explain(table_columns));
            lines.push(
                "  At each slide event: join the live tuples to the tables, then aggregate or emit the rows".into(),
            );
            return lines;
        }
        lines.push(match &self.mode {
            Mode::Agg { .. } => {
                "  Aggregate over the live join tuples at each slide event (partials by birth and death)".into()
            }
            Mode::Count(_) => {
                "  Count the live join tuples at each slide event as the product of each key's live tuples on both sides (no join tuple is formed)".into()
            }
            Mode::Live { .. } => "  Emit every live join tuple at each slide event".into(),
        });
        lines
    }
}

/// HAVING, projection and ORDER BY keys of `query` over one aggregate (or joined) row, the
/// row and window values in `c`: appends `(projected row, sort keys)` unless HAVING rejects
/// it. Shared by joins of streams and stream-table joins.
pub(super) fn output_row(
    query: &Query,
    c: &EvalContext<'_>,
    rows: &mut Vec<(Vec<Value>, Vec<Value>)>,
) -> Result<()> {
    if let Some(h) = &query.having {
        if !truthy(&eval(h, c)?) {
            return Ok(());
        }
    }
    let projected = query
        .projection
        .iter()
        .map(|e| eval(e, c))
        .collect::<Result<Vec<_>>>()?;
    let keys = query
        .order_by
        .iter()
        .map(|k| eval(&k.expr, c))
        .collect::<Result<Vec<_>>>()?;
    rows.push((projected, keys));
    Ok(())
}

/// Sort one slide event's `(row, sort keys)` by `query`'s ORDER BY (stable: without ORDER
/// BY the order is kept).
pub(super) fn sort_rows(query: &Query, rows: &mut [(Vec<Value>, Vec<Value>)]) {
    if !query.order_by.is_empty() {
        let keys = &query.order_by;
        rows.sort_by(|a, b| compare_sort_keys(keys, &a.1, &b.1));
    }
}

/// Hand each aggregate row of `table` (group key values, then each aggregate's value) to
/// `take`, in group order; with no table (no live tuple) and `emit_empty` (no GROUP BY),
/// the one row of the aggregates' initial values.
pub(super) fn aggregate_rows(
    specs: &[AggSpec],
    dict: &GroupDict,
    table: Option<&GroupTable>,
    emit_empty: bool,
    take: &mut dyn FnMut(&[Value]) -> Result<()>,
) -> Result<()> {
    let mut agg_row = Vec::new();
    match table {
        None if emit_empty => {
            for s in specs {
                agg_row.push(s.init().evaluate(s)?);
            }
            take(&agg_row)
        }
        None => Ok(()),
        Some(t) => {
            for g in 0..t.len() {
                let (gid, accs) = t.group(g, specs.len());
                agg_row.clear();
                agg_row.extend(dict.key(gid).iter().cloned());
                for (acc, s) in accs.iter().zip(specs) {
                    agg_row.push(acc.evaluate(s)?);
                }
                take(&agg_row)?;
            }
            Ok(())
        }
    }
}

/// A base tuple at `t`'s birth (end of its first instance) and death (end of the instance
/// after its last), or `None` when no instance from `first_index` on holds it. Plain `i64`
/// arithmetic when it cannot overflow (the common case, and the hot path), else the
/// window algebra's wide arithmetic.
fn birth_and_death(w: &Window, first_index: i64, t: i64) -> Option<(i64, i64)> {
    let (r, s, o) = (w.range_us, w.slide_us, w.offset_us());
    let fast = t.checked_sub(o).and_then(|rel| {
        let hi = rel.div_euclid(s);
        let lo = (rel.checked_sub(r)?.div_euclid(s) + 1).max(first_index);
        let upper = |m: i64| m.checked_mul(s)?.checked_add(o)?.checked_add(r);
        Some((lo, hi, upper(lo)?, upper(hi.checked_add(1)?)?))
    });
    let (lo, hi, birth, death) = match fast {
        Some(x) => x,
        None => {
            let (lo, hi) = w.instances_containing(t);
            let lo = lo.max(first_index);
            (lo, hi, w.upper_us(lo), w.upper_us(hi.saturating_add(1)))
        }
    };
    (lo <= hi).then_some((birth, death))
}

/// One [`Input`] per join input (empty, its predicates not yet planned), and per stream the
/// inputs it feeds. Errors: 54000 for a window over the open-instance limit.
fn input_runs(
    inputs: &[JoinInputPlan],
    sources: &[crate::sql::JoinInput],
    nstreams: usize,
    limits: &ExecLimits,
) -> Result<(Vec<Input>, Vec<Vec<usize>>)> {
    let mut runs: Vec<Input> = Vec::with_capacity(inputs.len());
    let mut stream_inputs = vec![Vec::new(); nstreams];
    for (i, (plan, src)) in inputs.iter().zip(sources).enumerate() {
        let w = plan.window;
        let span = (w.range_us as i128 + w.slide_us as i128 - 1) / w.slide_us as i128 + 1;
        if span > limits.open_instances_max as i128 {
            return Err(Error::ProgramLimitExceeded(format!(
                "window {w} keeps {span} instances open; the limit is {} (open_instances_max)",
                limits.open_instances_max
            )));
        }
        stream_inputs[plan.stream].push(i);
        runs.push(Input {
            window: w,
            first_index: plan.first_index,
            next_m: plan.first_index,
            offset: src.offset,
            ncols: src.columns.len(),
            filter: Vec::new(),
            steps: Vec::new(),
            store: Store {
                ncols: src.columns.len(),
                ..Store::default()
            },
        });
    }
    Ok((runs, stream_inputs))
}

/// The group keys, the aggregate arguments and the kept columns of [`compact_row`].
type CompactRow = (Vec<Expr>, Vec<Option<Expr>>, Vec<(usize, usize)>);

/// The compact row of a join tuple: with aggregates, only the columns the fold reads
/// (`residual`, the group keys and the aggregate arguments are rewritten over it);
/// without, the whole joined row (the projection reads it at emission). Returns the group
/// keys, the aggregate arguments and the kept columns as (input, column of its row).
fn compact_row(query: &Query, residual: &mut [Expr], runs: &[Input]) -> CompactRow {
    let mut group_by: Vec<Expr> = query
        .aggregate
        .as_ref()
        .map_or(Vec::new(), |a| a.group_by.clone());
    let mut args: Vec<Option<Expr>> = query.aggregate.as_ref().map_or(Vec::new(), |a| {
        a.calls.iter().map(|c| c.arg.clone()).collect()
    });
    let needed_global: Vec<usize> = if query.aggregate.is_some() {
        let mut cols = Vec::new();
        for e in residual
            .iter()
            .chain(&group_by)
            .chain(args.iter().flatten())
        {
            walk(e, &mut |x| {
                if let Expr::Column(c) = x {
                    cols.push(*c);
                }
            });
        }
        cols.sort_unstable();
        cols.dedup();
        let compact = |c: usize| cols.binary_search(&c).expect("a column read is kept");
        for e in residual
            .iter_mut()
            .chain(&mut group_by)
            .chain(args.iter_mut().flatten())
        {
            *e = map_columns(e, &compact);
        }
        cols
    } else {
        (0..runs.iter().map(|r| r.ncols).sum()).collect()
    };
    let needed = needed_global
        .iter()
        .map(|&c| {
            let i = runs
                .iter()
                .position(|r| c >= r.offset && c < r.offset + r.ncols)
                .expect("every column belongs to an input");
            (i, c - runs[i].offset)
        })
        .collect();
    (group_by, args, needed)
}

/// How the join folds its tuples, and whether a slide event with no group emits a row
/// (an aggregate without GROUP BY): an aggregate (a pair count when the query allows
/// [`count_fast_path`]) or the live join tuples.
fn fold_mode(
    query: &Query,
    group_by: Vec<Expr>,
    args: Vec<Option<Expr>>,
    residual: &[Expr],
    runs: &[Input],
    sources: &[crate::sql::JoinInput],
) -> (Mode, bool) {
    let Some(agg) = &query.aggregate else {
        let live = Mode::Live {
            buckets: BTreeMap::new(),
            rows: 0,
        };
        return (live, false);
    };
    if residual.is_empty() {
        if let Some(c) = count_fast_path(query, runs, sources) {
            return (Mode::Count(Box::new(c)), agg.group_by.is_empty());
        }
    }
    let mode = Mode::Agg {
        specs: agg
            .calls
            .iter()
            .map(|c| AggSpec::new(c.func, c.arg_type, c.distinct))
            .collect(),
        group_by,
        args,
        dict: GroupDict::new(agg.group_by.len()),
        compact_at: COMPACT_MIN,
        buckets: BTreeMap::new(),
    };
    (mode, agg.group_by.is_empty())
}

/// The count-only fast path ([`super::join_count`]) for `query` when its shape allows it:
/// count(*) calls only, two inputs equated on plain columns (the probe step of input 0),
/// grouped by nothing or by key columns. The caller has checked that no predicate spans
/// both inputs beyond the equalities.
fn count_fast_path(
    query: &Query,
    runs: &[Input],
    sources: &[crate::sql::JoinInput],
) -> Option<PairCounts> {
    let agg = query.aggregate.as_ref()?;
    if runs.len() != 2
        || agg.calls.is_empty()
        || agg
            .calls
            .iter()
            .any(|c| c.func != crate::sql::AggFunc::CountStar || c.distinct)
    {
        return None;
    }
    let [step] = &runs[0].steps[..] else {
        return None;
    };
    let (ix, probe) = step.hash.as_ref()?;
    let column = |e: &Expr| match e {
        Expr::Column(c) => Some(*c),
        _ => None,
    };
    let mut keys: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for (mine, (src, theirs)) in runs[1].store.indexes[*ix].exprs.iter().zip(probe) {
        if *src != 0 {
            return None;
        }
        keys[0].push(column(theirs)?);
        keys[1].push(column(mine)?);
    }
    let group_at = agg
        .group_by
        .iter()
        .map(|e| {
            let c = column(e)?;
            (0..2).find_map(|i| {
                let local = c
                    .checked_sub(runs[i].offset)
                    .filter(|&l| l < runs[i].ncols)?;
                keys[i].iter().position(|&k| k == local)
            })
        })
        .collect::<Option<Vec<usize>>>()?;
    let types: Vec<Vec<DataType>> = sources
        .iter()
        .map(|s| s.columns.iter().map(|c| c.data_type).collect())
        .collect();
    PairCounts::new(keys, [&types[0], &types[1]], group_at, agg.calls.len())
}

/// `(range, slide)` when all inputs share one window grid.
fn shared_grid(inputs: &[Input]) -> Option<(i64, i64)> {
    let w0 = inputs.first()?.window;
    let same = inputs.iter().all(|i| {
        let w = i.window;
        w.range_us == w0.range_us
            && w.slide_us == w0.slide_us
            && (w.offset_us() as i128 - w0.offset_us() as i128).rem_euclid(w.slide_us as i128) == 0
    });
    same.then_some((w0.range_us, w0.slide_us))
}

pub(super) fn uses_instance_meta(q: &Query) -> bool {
    let mut found = false;
    let mut check = |e: &Expr| {
        if matches!(
            e,
            Expr::WindowMeta(WindowMeta::Wstart | WindowMeta::Wrange | WindowMeta::Wslide)
        ) {
            found = true;
        }
    };
    for e in q
        .projection
        .iter()
        .chain(q.having.iter())
        .chain(q.order_by.iter().map(|k| &k.expr))
    {
        walk(e, &mut check);
    }
    found
}

pub(super) fn truthy(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

/// Visit `e` and every subexpression.
pub(super) fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match e {
        Expr::Column(_) | Expr::Literal(_) | Expr::Param(_) | Expr::WindowMeta(_) => {}
        Expr::Unary { expr, .. } | Expr::Cast { expr, .. } | Expr::IsNull { expr, .. } => {
            walk(expr, f)
        }
        Expr::Binary { left, right, .. } => {
            walk(left, f);
            walk(right, f);
        }
        Expr::Func { args, .. } => args.iter().for_each(|a| walk(a, f)),
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            if let Some(o) = operand {
                walk(o, f);
            }
            for (w, t) in branches {
                walk(w, f);
                walk(t, f);
            }
            if let Some(o) = otherwise {
                walk(o, f);
            }
        }
        Expr::InList { expr, list, .. } => {
            walk(expr, f);
            list.iter().for_each(|a| walk(a, f));
        }
        Expr::Like { expr, pattern, .. } => {
            walk(expr, f);
            walk(pattern, f);
        }
    }
}

/// `e` with every column index `c` replaced by `c - by` (an expression over one input's
/// columns, rebased to that input's own row).
fn rebase(e: &Expr, by: usize) -> Expr {
    map_columns(e, &|c| c - by)
}

/// `e` with every column index `c` replaced by `f(c)`.
pub(super) fn map_columns(e: &Expr, f: &dyn Fn(usize) -> usize) -> Expr {
    let by = f;
    let rebase = map_columns;
    let r = |x: &Expr| Box::new(rebase(x, by));
    match e {
        Expr::Column(c) => Expr::Column(by(*c)),
        Expr::Literal(_) | Expr::Param(_) | Expr::WindowMeta(_) => e.clone(),
        Expr::Unary { op, expr } => Expr::Unary {
            op: *op,
            expr: r(expr),
        },
        Expr::Cast { expr, to } => Expr::Cast {
            expr: r(expr),
            to: *to,
        },
        Expr::IsNull { expr, negated } => Expr::IsNull {
            expr: r(expr),
            negated: *negated,
        },
        Expr::Binary { op, left, right } => Expr::Binary {
            op: *op,
            left: r(left),
            right: r(right),
        },
        Expr::Func { func, args } => Expr::Func {
            func: *func,
            args: args.iter().map(|a| rebase(a, by)).collect(),
        },
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => Expr::Case {
            operand: operand.as_ref().map(|o| r(o)),
            branches: branches
                .iter()
                .map(|(w, t)| (rebase(w, by), rebase(t, by)))
                .collect(),
            otherwise: otherwise.as_ref().map(|o| r(o)),
        },
        Expr::InList {
            expr,
            list,
            negated,
        } => Expr::InList {
            expr: r(expr),
            list: list.iter().map(|a| rebase(a, by)).collect(),
            negated: *negated,
        },
        Expr::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
        } => Expr::Like {
            expr: r(expr),
            pattern: r(pattern),
            negated: *negated,
            case_insensitive: *case_insensitive,
        },
    }
}

/// The inputs whose columns `e` reads, as a bit set (`None` past 64 inputs or for an
/// expression that reads window metadata, which only exists at emission).
fn inputs_of(e: &Expr, inputs: &[Input]) -> Option<u64> {
    let mut mask = 0u64;
    let mut ok = true;
    walk(e, &mut |x| match x {
        Expr::Column(c) => match inputs
            .iter()
            .position(|i| *c >= i.offset && *c < i.offset + i.ncols)
        {
            Some(i) if i < 64 => mask |= 1 << i,
            _ => ok = false,
        },
        Expr::WindowMeta(_) => ok = false,
        _ => {}
    });
    ok.then_some(mask)
}

pub(super) fn conjuncts(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        _ => out.push(e.clone()),
    }
}

/// An equi-predicate between two inputs: `(input a, expr over a's row, input b, expr over
/// b's row)`.
type Equi = (usize, Expr, usize, Expr);

/// Split the query's predicates: those over one input become that input's arrival filter,
/// equalities between expressions of two inputs become hash keys, the rest are checked on
/// each complete join tuple (returned). Fills each input's probe order.
fn plan_predicates(q: &Query, inputs: &mut [Input]) -> Vec<Expr> {
    let mut all = Vec::new();
    if let Some(f) = &q.filter {
        conjuncts(f, &mut all);
    }
    let mut residual = Vec::new();
    let mut equis: Vec<Equi> = Vec::new();
    let single = |m: u64| (m != 0 && m & (m - 1) == 0).then(|| m.trailing_zeros() as usize);
    for c in all {
        let Some(mask) = inputs_of(&c, inputs) else {
            residual.push(c);
            continue;
        };
        if let Some(i) = single(mask) {
            let by = inputs[i].offset;
            inputs[i].filter.push(rebase(&c, by));
            continue;
        }
        if let Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
        } = &c
        {
            let (l, r) = (inputs_of(left, inputs), inputs_of(right, inputs));
            if let (Some(a), Some(b)) = (l.and_then(single), r.and_then(single)) {
                if a != b {
                    let (oa, ob) = (inputs[a].offset, inputs[b].offset);
                    equis.push((a, rebase(left, oa), b, rebase(right, ob)));
                    continue;
                }
            }
        }
        residual.push(c);
    }
    for k in 0..inputs.len() {
        let steps = probe_order(k, inputs, &equis);
        inputs[k].steps = steps;
    }
    residual
}

/// The probe order for a tuple arriving on input `k`: greedily the input with the most
/// equi-predicates to those joined so far (hash), else the next one in order (nested loop).
fn probe_order(k: usize, inputs: &mut [Input], equis: &[Equi]) -> Vec<ProbeStep> {
    let n = inputs.len();
    let mut joined = vec![false; n];
    joined[k] = true;
    let mut steps = Vec::new();
    for _ in 1..n {
        // For each candidate, the equi-predicates linking it to the joined inputs, as
        // (expr over the candidate, joined input, expr over that input).
        let links = |j: usize| -> Vec<(Expr, usize, Expr)> {
            equis
                .iter()
                .filter_map(|(a, ea, b, eb)| {
                    if *a == j && joined[*b] {
                        Some((ea.clone(), *b, eb.clone()))
                    } else if *b == j && joined[*a] {
                        Some((eb.clone(), *a, ea.clone()))
                    } else {
                        None
                    }
                })
                .collect()
        };
        let j = (0..n)
            .filter(|&j| !joined[j])
            .max_by_key(|&j| (links(j).len(), Reverse(j)))
            .expect("an input is left to join");
        let l = links(j);
        let hash = if l.is_empty() {
            None
        } else {
            let exprs: Vec<Expr> = l.iter().map(|(e, _, _)| e.clone()).collect();
            let store = &mut inputs[j].store;
            let at = store.ncols + store.indexes.iter().map(|x| x.exprs.len()).sum::<usize>();
            let indexes = &mut store.indexes;
            let ix = match indexes.iter().position(|x| x.exprs == exprs) {
                Some(ix) => ix,
                None => {
                    indexes.push(HashIndex {
                        exprs,
                        at,
                        map: HashMap::new(),
                    });
                    indexes.len() - 1
                }
            };
            Some((ix, l.into_iter().map(|(_, src, e)| (src, e)).collect()))
        };
        steps.push(ProbeStep { input: j, hash });
        joined[j] = true;
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{bind, parse, Plan, SchemaProvider};
    use crate::types::{Column, DataType};
    use crate::window::Start;

    const SEC: i64 = 1_000_000;

    struct Schema;
    impl SchemaProvider for Schema {
        fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
            ["a", "b", "c"].contains(&name).then(|| {
                (
                    vec![
                        Column::new("ts", DataType::Timestamp),
                        Column::new("k", DataType::Text),
                        Column::new("v", DataType::Int4),
                    ],
                    Some(0),
                )
            })
        }
        fn system_view(&self, _: &str) -> Option<Vec<Column>> {
            None
        }
    }

    fn exec(sql: &str) -> JoinExec {
        let Plan::Query(q) = bind(&parse(sql).unwrap()[0], &Schema, &[]).unwrap() else {
            panic!("{sql} is a query")
        };
        let Source::Join { inputs, .. } = &q.source else {
            panic!("{sql} is a join")
        };
        let plans = inputs
            .iter()
            .enumerate()
            .map(|(i, _)| JoinInputPlan {
                window: Window::new(10 * SEC, 10 * SEC, Start::Epoch).unwrap(),
                first_index: i64::MIN,
                stream: i,
            })
            .collect::<Vec<_>>();
        let n = plans.len();
        let limits = ExecLimits {
            groups_max: 100,
            open_instances_max: 100,
            empty_slide_events_max: 100,
            distinct_values_max: 100,
            coalesce_bytes: 0,
        };
        JoinExec::new(*q, plans, n, vec![], false, limits, 100).unwrap()
    }

    #[test]
    fn predicates_split_into_arrival_filters_hash_keys_and_a_join_filter() {
        let j = exec(
            "SELECT count(*) FROM a [RANGE BY '10 seconds'] JOIN b [RANGE BY '10 seconds'] \
             ON a.k = b.k AND a.v + 1 = b.v WHERE a.v > 2 AND a.v < b.v",
        );
        // a.v > 2 is a's own; the two equalities are hash keys; a.v < b.v is left.
        assert_eq!(j.inputs[0].filter.len(), 1);
        assert!(j.inputs[1].filter.is_empty());
        assert_eq!(j.residual.len(), 1);
        let step = &j.inputs[0].steps[0];
        assert_eq!(step.input, 1);
        let (ix, probe) = step.hash.as_ref().expect("a hash probe");
        assert_eq!(probe.len(), 2);
        assert_eq!(
            j.inputs[1].store.indexes[*ix].exprs[0],
            Expr::Column(1),
            "b.k over b's own row"
        );
        // The compact row holds only the columns the fold reads: a.v and b.v.
        assert_eq!(j.needed, vec![(0, 2), (1, 2)]);
    }

    #[test]
    fn three_inputs_probe_through_the_equi_predicates_and_loop_only_where_none_links() {
        let j = exec(
            "SELECT count(*) FROM a [RANGE BY '10 seconds'], b [RANGE BY '10 seconds'], \
             c [RANGE BY '10 seconds'] WHERE b.k = c.k AND a.v < c.v",
        );
        let order = |k: usize| -> Vec<(usize, bool)> {
            j.inputs[k]
                .steps
                .iter()
                .map(|s| (s.input, s.hash.is_some()))
                .collect()
        };
        // From a nothing links by equality: loop over b (the first), then hash into c.
        assert_eq!(order(0), vec![(1, false), (2, true)]);
        assert_eq!(order(1), vec![(2, true), (0, false)]);
        assert_eq!(order(2), vec![(1, true), (0, false)]);
    }

    /// A batch of `(t seconds, k, v)` rows of the test streams.
    fn batch(rows: &[(i64, &str, i32)]) -> crate::exec::RowBatch {
        let mut b = crate::exec::RowBatch::new(3);
        for &(t, k, v) in rows {
            b.push(
                [
                    Value::Timestamp(t * SEC),
                    Value::Text(k.into()),
                    Value::Int4(v),
                ],
                t * SEC,
            );
        }
        b
    }

    /// A day of one tuple per second on each stream, 8 keys, through `sql`: the most base
    /// tuples kept at once, the executor, and the rows emitted.
    fn a_day_of_tuples(sql: &str) -> (usize, JoinExec, usize) {
        let mut j = exec(sql);
        let mut out = Vec::new();
        let mut most = 0;
        for t in 0..86_400i64 {
            let k = ["p", "q", "r", "s", "t", "u", "v", "w"][(t % 8) as usize];
            j.push(0, &batch(&[(t, k, 1)]), &mut out).unwrap();
            j.push(1, &batch(&[(t, k, 1)]), &mut out).unwrap();
            most = most.max(j.stored_tuples());
        }
        let rows: usize = out.iter().map(Event::row_count).sum();
        (most, j, rows)
    }

    #[test]
    fn kept_state_is_bounded_by_the_windows_not_the_stream() {
        let (most, j, rows) = a_day_of_tuples(
            "SELECT a.k, count(*), sum(b.v) FROM a [RANGE BY '10 seconds'] \
             JOIN b [RANGE BY '10 seconds'] ON a.k = b.k GROUP BY a.k",
        );
        // Each stream keeps at most the tuples of the instance being filled (10 s) and the
        // one after it: a tuple is dropped once no slide event to come can see it live.
        assert!(most <= 2 * 11, "kept up to {most} tuples");
        let Mode::Agg { buckets, dict, .. } = &j.mode else {
            panic!("an aggregate join")
        };
        assert!(buckets.len() <= 2 && dict.len() <= 8);
        // Every instance closed so far emitted its 8 groups.
        assert_eq!(rows, 8 * (86_400 / 10 - 1));
    }

    #[test]
    fn the_count_fast_path_keeps_state_bounded_by_the_windows_too() {
        let (most, j, rows) = a_day_of_tuples(
            "SELECT a.k, count(*) FROM a [RANGE BY '10 seconds'] JOIN b [RANGE BY '10 seconds'] \
             ON a.k = b.k GROUP BY a.k",
        );
        assert!(most <= 2 * 11, "kept up to {most} tuples");
        let Mode::Count(c) = &j.mode else {
            panic!("count(*) of an equi-join grouped by its key takes the fast path")
        };
        assert!(c.tuples_held() <= 2 * 11);
        assert_eq!(rows, 8 * (86_400 / 10 - 1));
    }

    #[test]
    fn the_count_fast_path_is_taken_only_where_it_is_exact() {
        let fast = |sql: &str| matches!(exec(sql).mode, Mode::Count(_));
        let from = "FROM a [RANGE BY '10 seconds'] JOIN b [RANGE BY '10 seconds']";
        assert!(fast(&format!("SELECT count(*) {from} ON a.k = b.k")));
        assert!(fast(&format!(
            "SELECT b.k, count(*), count(*) {from} ON a.k = b.k AND a.v = b.v WHERE a.v > 1 GROUP BY b.k"
        )));
        // Another aggregate, a group key off the join key, a predicate over both inputs,
        // a key that is an expression: the general path.
        assert!(!fast(&format!(
            "SELECT count(*), sum(a.v) {from} ON a.k = b.k"
        )));
        assert!(!fast(&format!(
            "SELECT a.v, count(*) {from} ON a.k = b.k GROUP BY a.v"
        )));
        assert!(!fast(&format!(
            "SELECT count(*) {from} ON a.k = b.k AND a.v < b.v"
        )));
        assert!(!fast(&format!("SELECT count(*) {from} ON a.v + 1 = b.v")));
        assert!(!fast(&format!("SELECT count(*) {from} ON a.v < b.v")));
    }

    #[test]
    fn a_far_future_jump_emits_a_bounded_run_of_empty_events_and_says_so() {
        let mut j = exec(
            "SELECT count(*) FROM a [RANGE BY '10 seconds'] JOIN b [RANGE BY '10 seconds'] \
             ON a.k = b.k",
        );
        let mut out = Vec::new();
        j.push(0, &batch(&[(1, "x", 1)]), &mut out).unwrap();
        j.push(1, &batch(&[(2, "x", 1)]), &mut out).unwrap();
        let century = 100 * 365 * 86_400;
        j.push(0, &batch(&[(century, "x", 1)]), &mut out).unwrap();
        j.push(1, &batch(&[(century, "x", 1)]), &mut out).unwrap();
        let rows: Vec<&Vec<Vec<Value>>> = out
            .iter()
            .filter_map(|e| match e {
                Event::Rows(r) => Some(r),
                Event::Block(_) | Event::Notice(_) => None,
            })
            .collect();
        // The limit is 100 empty events per jump: the first event (1 pair), then 100 empty.
        assert_eq!(rows.len(), 1 + 100);
        assert_eq!(rows[0][0][0], Value::Int8(1));
        assert!(out.iter().any(
            |e| matches!(e, Event::Notice(n) if n.contains("empty slide events") && n.contains("empty_slide_events_max"))
        ));
    }

    #[test]
    fn birth_and_death_follow_the_instances_holding_a_tuple() {
        let w = |r, s, o| Window::new(r * SEC, s * SEC, Start::At(o * SEC)).unwrap();
        // Tumbling 10 s from 0: t = 3 is in [0,10) only: born 10, dies 20.
        assert_eq!(
            birth_and_death(&w(10, 10, 0), 0, 3 * SEC),
            Some((10 * SEC, 20 * SEC))
        );
        // Hopping 10/5 from 0: t = 7 is in [0,10) and [5,15): born 10, dies 20.
        assert_eq!(
            birth_and_death(&w(10, 5, 0), 0, 7 * SEC),
            Some((10 * SEC, 20 * SEC))
        );
        // Jumping 4/6: t = 5 lies in the gap [4,6); before START AT nothing holds a tuple.
        assert_eq!(birth_and_death(&w(4, 6, 0), 0, 5 * SEC), None);
        assert_eq!(birth_and_death(&w(4, 6, 0), 0, -SEC), None);
        // The far ends of time fall back to the wide arithmetic without overflowing.
        let epoch = Window::new(10 * SEC, 10 * SEC, Start::Epoch).unwrap();
        let (b, d) = birth_and_death(&epoch, i64::MIN, i64::MAX - 1).unwrap();
        assert!(b <= d);
        let (b, _) = birth_and_death(&epoch, i64::MIN, i64::MIN + 1).unwrap();
        assert!(b > i64::MIN);
    }
}
