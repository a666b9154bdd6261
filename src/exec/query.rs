//! One continuous query over one stream: time, slide events, and the rows they produce.
//!
//! [`QueryExec::push`] takes a [`RowBatch`] in arrival order. For each tuple it first moves
//! the query's current time (the highest timestamp consumed; docs/sql.md, Windows) — also for
//! tuples the WHERE clause rejects, so a selective query's windows still close on time —
//! emitting one [`Event::Rows`] per slide event passed, in time order; then it folds the
//! tuple into every instance that has not closed. Splitting a batch where it crosses a
//! window end is implicit: time advances tuple by tuple, so a batch gives exactly the rows
//! feeding its tuples one at a time would give.
//!
//! Three modes, by the plan's shape:
//! - pass-through (no window clause): each matching tuple is projected and emitted at once;
//! - aggregate (window clause and aggregates or GROUP BY): [`SharedWindows`] along the WCG;
//! - live tuples (window clause, no aggregates): each slide event emits the tuples of the
//!   closing instance, so `count(*)` of the same query equals the rows emitted per wtime.

use std::collections::VecDeque;

use std::ops::Range;

use super::columns::{ColumnBatch, ColumnView};
use super::group::{GroupDict, GroupTable, KeyHasher};
use super::having::HavingFilter;
use super::kernels::{self, ColumnarPlan, RunBuffers};
use super::windowed::{ClosedInstance, ExecLimits, SharedWindows, Step, WorkCounters};
use super::{Batch, Event, RowBlock};
use crate::agg::{compare_values, Acc, AggSpec};
use crate::error::{Error, Result};
use crate::expr::{eval, EvalContext, WindowMetaValues};
use crate::sql::{Expr, Query, SortKey, WindowMeta};
use crate::types::{DataType, Value};
use crate::wcg::{self, SharedPlan};
use crate::window::Window;

/// A batch of tuples in arrival order: `values` holds `times.len()` rows of `ncols` values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowBatch {
    /// Values per row.
    pub(crate) ncols: usize,
    /// Row-major values.
    pub(crate) values: Vec<Value>,
    /// Each row's timestamp, microseconds since the epoch.
    pub(crate) times: Vec<i64>,
}

impl RowBatch {
    /// An empty batch of rows with `ncols` values.
    pub fn new(ncols: usize) -> RowBatch {
        RowBatch {
            ncols,
            values: Vec::new(),
            times: Vec::new(),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True when the batch holds no row.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[Value] {
        &self.values[i * self.ncols..(i + 1) * self.ncols]
    }

    /// Append a row with its timestamp.
    pub fn push(&mut self, row: impl IntoIterator<Item = Value>, t_us: i64) {
        self.values.extend(row);
        self.times.push(t_us);
        debug_assert_eq!(
            self.values.len(),
            self.times.len() * self.ncols,
            "rows have ncols values"
        );
    }

    /// Approximate heap bytes held, for staging limits.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<Value>() + self.times.capacity() * 8
    }
}

/// Counters shown by `tcq_queries`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryStats {
    /// Tuples consumed (before WHERE).
    pub tuples_in: u64,
    /// Rows emitted.
    pub(crate) rows_out: u64,
    /// Tuples that missed at least one closed instance.
    pub(crate) late_tuples: u64,
    /// Current time, once defined.
    pub(crate) now_us: Option<i64>,
    /// The query's first current time: `now_us - started_us` is the stream time its work
    /// counters cover.
    pub(crate) started_us: Option<i64>,
    /// Slide events emitted.
    pub(crate) slide_events: u64,
}

/// What a query holds between slide events ([`QueryExec::state`]), for the console and
/// `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StateSummary {
    /// Window instances open now, over every plan node (factor windows included).
    pub(crate) open_instances: usize,
    /// Group keys the query holds ids for.
    pub(crate) groups: usize,
    /// Bytes of partial states, group keys, DISTINCT sets and buffered tuples, estimated
    /// from vector and hash table capacities (text behind values is not counted).
    pub(crate) state_bytes: usize,
}

#[derive(Clone)]
enum Mode {
    Pass,
    Agg(AggMode),
    Live(LiveMode),
    /// A member of a cross-query shared plan ([`super::shared::SharedAgg`]): the plan folds
    /// the tuples; the member finalises its own windows' closed instances.
    Member(MemberMode),
}

/// What a member of a shared plan keeps: where its aggregates sit among the plan's.
#[derive(Clone)]
struct MemberMode {
    /// `spec_map[j]`: the plan's aggregate state that computes this query's call `j`.
    spec_map: Vec<usize>,
    /// This query's group keys.
    nkeys: usize,
    /// A roll-up member: its key `k` is the plan's key `rollup[k]`, and each closed
    /// instance's fine groups are merged onto its coarser keys before finalising. `None`:
    /// the plan's keys are this query's.
    rollup: Option<Vec<usize>>,
}

#[derive(Clone)]
struct AggMode {
    windows: SharedWindows,
    group_by: Vec<Expr>,
    args: Vec<Option<Expr>>,
    /// With plain columns as group keys and arguments and no WHERE or a simple one: what
    /// is read straight from columnar batches.
    columnar: Option<std::sync::Arc<ColumnarPlan>>,
    /// Every aggregate folds without failing, so runs of in-order tuples of a columnar
    /// batch go through the typed kernels ([`super::kernels`]).
    kernels: bool,
    hasher: KeyHasher,
    /// Selected rows, their times, group ids and slots of the run being folded (kept to
    /// reuse their allocations).
    bufs: Box<RunBuffers>,
}

#[derive(Clone)]
struct LiveMode {
    windows: SharedWindows,
    buffers: Vec<VecDeque<(i64, Vec<Value>)>>,
    live_tuples_max: usize,
}

/// A registered continuous query's executor. Knows nothing of sockets or channels.
#[derive(Clone)]
pub struct QueryExec {
    query: Query,
    params: Vec<Value>,
    windows: Vec<Window>,
    cutoffs: Vec<Option<i64>>,
    plan: SharedPlan,
    mode: Mode,
    tz: bool,
    stats: QueryStats,
    rows_left: Option<u64>,
    done: bool,
    keybuf: Vec<Value>,
    argbuf: Vec<Value>,
    any_in_window: bool,
    notice_sent: bool,
    now_us: i64,
    fast_projection: Option<Vec<FastItem>>,
    /// HAVING compiled for aggregate results against constants, when it has that shape.
    having_filter: Option<HavingFilter>,
    /// SLACK: the query's current time is the highest timestamp consumed minus this.
    slack_us: i64,
    /// The event rate (events per second) `plan` was chosen for, when known: the console
    /// re-derives the optimizer's report for the plan from it.
    planned_rate_per_sec: Option<f64>,
    /// The groups per partial `plan` was chosen for: estimated from the first batch of a
    /// grouped query ([`QueryExec::push_batch`]), unknown before.
    planned_groups: wcg::Groups,
    /// The first batch's groups have been counted (or the query is not grouped).
    groups_sampled: bool,
    limits: ExecLimits,
    /// Rows the last slide event left in the last block of the output, when it was of the
    /// block shape and small enough to join a block ([`QueryExec::repeat_event`]).
    last_event_rows: Option<usize>,
}

/// A context with `now()` fixed at the query's registration (no clock read per tuple).
fn ctx<'a>(
    row: &'a [Value],
    params: &'a [Value],
    window: Option<WindowMetaValues>,
    now_us: i64,
) -> EvalContext<'a> {
    EvalContext {
        row,
        params,
        window,
        now_us,
        session: None,
        lazy: None,
    }
}

impl QueryExec {
    /// An executor for `query` with its windows resolved (START AT filled in), the shared
    /// plan to run them along, and bound parameter values. `tz`: wtime/wstart are
    /// timestamptz.
    ///
    /// Errors: 0A000 for an aggregate without a window clause; 54000 for windows over the
    /// open-instance limit.
    ///
    /// `cutoffs[i]`: window `i` is an epoch grid standing for a default START AT, shown from
    /// this instant on (see [`SharedWindows::new`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        query: Query,
        windows: Vec<Window>,
        cutoffs: Vec<Option<i64>>,
        plan: SharedPlan,
        params: Vec<Value>,
        tz: bool,
        limits: ExecLimits,
        live_tuples_max: usize,
    ) -> Result<QueryExec> {
        let mode =
            match (&query.aggregate, windows.is_empty()) {
                (None, true) => Mode::Pass,
                (Some(_), true) => return Err(Error::FeatureNotSupported(
                    "an aggregate over a stream needs a window clause, e.g. [RANGE BY '1 minute']"
                        .into(),
                )),
                (Some(agg), false) => {
                    let windows = agg_windows(agg, &plan, limits, &cutoffs)?;
                    let kernels = windows.specs().iter().all(super::kernels::infallible);
                    Mode::Agg(AggMode {
                        windows,
                        group_by: agg.group_by.clone(),
                        args: agg.calls.iter().map(|c| c.arg.clone()).collect(),
                        columnar: columnar_plan(&query, agg).map(std::sync::Arc::new),
                        kernels,
                        hasher: KeyHasher::new(),
                        bufs: Box::default(),
                    })
                }
                (None, false) => Mode::Live(LiveMode {
                    windows: SharedWindows::new(
                        &SharedPlan::unshared(&windows),
                        Vec::new(),
                        0,
                        false,
                        limits,
                        cutoffs.clone(),
                    )?,
                    buffers: vec![VecDeque::new(); windows.len()],
                    live_tuples_max,
                }),
            };
        let done = query.limit == Some(0);
        Ok(QueryExec {
            now_us: crate::time::now_us(),
            fast_projection: fast_items(&query.projection),
            having_filter: having_filter(&query, &params),
            cutoffs,
            rows_left: query.limit,
            query,
            params,
            windows,
            plan,
            mode,
            tz,
            stats: QueryStats::default(),
            done,
            keybuf: Vec::new(),
            argbuf: Vec::new(),
            any_in_window: false,
            notice_sent: false,
            slack_us: 0,
            planned_rate_per_sec: None,
            planned_groups: wcg::Groups::Unknown,
            groups_sampled: false,
            limits,
            last_event_rows: None,
        })
    }

    /// Tolerate tuples up to `slack_us` microseconds behind the stream's time: current time
    /// becomes the highest timestamp consumed minus the slack, so windows close that much
    /// later (`SLACK` in the window clause, `WITH (slack = ...)` on the stream).
    pub fn set_slack(&mut self, slack_us: i64) {
        self.slack_us = slack_us.max(0);
    }

    /// The plan the query runs along.
    pub fn plan(&self) -> &SharedPlan {
        &self.plan
    }

    /// Record the event rate (events per second) the plan was chosen for.
    pub fn set_planned_rate(&mut self, eta_per_sec: f64) {
        self.planned_rate_per_sec = Some(eta_per_sec);
    }

    /// Keep the plan the executor was built with: no re-planning for the rate or the groups
    /// of the first batch (benchmarks that compare plans on the same data).
    pub fn fix_plan(&mut self, eta_per_sec: f64) {
        self.planned_rate_per_sec = Some(eta_per_sec);
        self.groups_sampled = true;
    }

    /// Re-plan the windows for `eta_per_sec` events per second if the query has not yet
    /// consumed a tuple or a heartbeat (its instances hold nothing, so the new plan gives
    /// exactly the rows the old one would) and the rate differs from the one planned for.
    /// True when it re-planned; false for a query that runs already, has no aggregates or
    /// is a member of a shared plan (the plan re-plans itself,
    /// [`super::shared::SharedAgg::replan_unstarted`]).
    pub fn replan_unstarted(&mut self, eta_per_sec: f64) -> Result<bool> {
        if self.planned_rate_per_sec == Some(eta_per_sec) {
            return Ok(false);
        }
        let Mode::Agg(a) = &mut self.mode else {
            return Ok(false);
        };
        if a.windows.is_started() || self.stats.tuples_in > 0 {
            return Ok(false);
        }
        let Some(agg) = &self.query.aggregate else {
            return Ok(false);
        };
        let workload = workload_of(&self.query, eta_per_sec, self.planned_groups);
        let plan = plan_windows_for(&self.query, &self.windows, &workload);
        a.windows = agg_windows(agg, &plan, self.limits, &self.cutoffs)?;
        self.plan = plan;
        self.planned_rate_per_sec = Some(eta_per_sec);
        Ok(true)
    }

    /// Before a grouped query's first tuple: estimate its groups from `batch` (the first
    /// one it gets, at least [`GROUP_SAMPLE_MIN`] tuples) and re-plan for them (exact: its
    /// instances hold nothing yet). Once per query.
    fn plan_for_groups(&mut self, batch: &Batch) -> Result<()> {
        if self.groups_sampled {
            return Ok(());
        }
        let Mode::Agg(a) = &mut self.mode else {
            self.groups_sampled = true;
            return Ok(());
        };
        if a.group_by.is_empty() || a.windows.is_started() || self.stats.tuples_in > 0 {
            self.groups_sampled = true;
            return Ok(());
        }
        self.groups_sampled = true;
        let sampled = sample_groups(
            batch,
            &a.group_by,
            a.columnar.as_deref(),
            &a.hasher,
            &self.params,
        );
        let Some(groups) = sampled else {
            return Ok(());
        };
        self.planned_groups = groups;
        let eta = self.planned_rate_per_sec.unwrap_or(1.0);
        let workload = workload_of(&self.query, eta, groups);
        let plan = plan_windows_for(&self.query, &self.windows, &workload);
        if plan != self.plan {
            let agg = self.query.aggregate.as_ref().expect("an aggregate query");
            a.windows = agg_windows(agg, &plan, self.limits, &self.cutoffs)?;
            self.plan = plan;
        }
        Ok(())
    }

    /// The cost model's view of the query at `eta_per_sec` with the groups its plan was
    /// chosen for: [`crate::wcg::optimize_for`] of its windows under it gives its plan.
    pub(crate) fn workload(&self, eta_per_sec: f64) -> wcg::Workload {
        workload_of(&self.query, eta_per_sec, self.planned_groups)
    }

    /// The event rate the plan was chosen for, if recorded ([`QueryExec::set_planned_rate`]).
    pub(crate) fn planned_rate(&self) -> Option<f64> {
        self.planned_rate_per_sec
    }

    /// The query's windows, START AT resolved, in the order of its window clauses.
    pub fn windows(&self) -> &[Window] {
        &self.windows
    }

    /// The coverage relation the query's aggregates allow (paper Theorems 5 and 6).
    pub(crate) fn sharing(&self) -> wcg::Sharing {
        sharing_of_query(&self.query, &self.windows)
    }

    /// Counters for `tcq_queries`.
    pub fn stats(&self) -> &QueryStats {
        &self.stats
    }

    /// Measured work along the WCG, for `EXPLAIN ANALYZE`.
    pub(crate) fn work(&self) -> Option<&WorkCounters> {
        match &self.mode {
            Mode::Agg(a) => Some(&a.windows.counters),
            _ => None,
        }
    }

    /// The state the query holds now: open instances, groups and an estimate of its bytes.
    pub(crate) fn state(&self) -> StateSummary {
        match &self.mode {
            Mode::Agg(a) => StateSummary {
                open_instances: a.windows.open_instances(),
                groups: a.windows.dict().len(),
                state_bytes: a.windows.state_bytes(),
            },
            Mode::Live(l) => StateSummary {
                open_instances: l.windows.open_instances(),
                groups: 0,
                state_bytes: l
                    .buffers
                    .iter()
                    .map(|b| {
                        b.iter()
                            .map(|(_, row)| 8 + row.capacity() * std::mem::size_of::<Value>())
                            .sum::<usize>()
                    })
                    .sum(),
            },
            Mode::Pass | Mode::Member(_) => StateSummary::default(),
        }
    }

    /// Group keys the query currently holds ids for (bounded by compaction).
    pub fn group_ids(&self) -> usize {
        match &self.mode {
            Mode::Agg(a) => a.windows.dict().len(),
            _ => 0,
        }
    }

    /// True once the query has ended (LIMIT reached).
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Consume a batch in arrival order, appending output to `out`.
    ///
    /// Errors end the query (a limit exceeded, an expression error such as division by zero).
    pub fn push(&mut self, batch: &RowBatch, out: &mut Vec<Event>) -> Result<()> {
        let mut pass_rows = Vec::new();
        let result = self.push_rows(batch, out, &mut pass_rows);
        // Rows of the tuples before a failing one are emitted, as feeding the tuples one at
        // a time would have emitted them.
        if !pass_rows.is_empty() {
            self.finish_event(pass_rows, out);
        }
        result
    }

    fn push_rows(
        &mut self,
        batch: &RowBatch,
        out: &mut Vec<Event>,
        pass_rows: &mut Vec<(Vec<Value>, Vec<Value>)>,
    ) -> Result<()> {
        for i in 0..batch.len() {
            if self.done {
                break;
            }
            let t = batch.times[i];
            let row = batch.row(i);
            let Some(in_order) = self.tuple_time(t, out)? else {
                break;
            };
            if let Some(f) = &self.query.filter {
                if !predicate(f, row, &self.params, self.now_us)? {
                    continue;
                }
            }
            match &mut self.mode {
                // A shared plan folds its members' tuples; it never pushes batches to them.
                Mode::Member(_) => break,
                Mode::Pass => {
                    let projected =
                        project(&self.query.projection, row, &self.params, None, self.now_us)?;
                    pass_rows.push(projected);
                    if self.rows_left.is_some_and(|n| pass_rows.len() as u64 >= n) {
                        break;
                    }
                }
                Mode::Agg(a) => {
                    self.keybuf.clear();
                    for k in &a.group_by {
                        self.keybuf
                            .push(eval_ref(k, row, &self.params, self.now_us)?);
                    }
                    self.argbuf.clear();
                    for arg in &a.args {
                        self.argbuf.push(match arg {
                            None => Value::Bool(true),
                            Some(e) => eval_ref(e, row, &self.params, self.now_us)?,
                        });
                    }
                    self.fold_buffers(t, in_order)?;
                }
                Mode::Live(l) => {
                    // The windows' instances track which hold data (an empty group per
                    // tuple), so empty instances are skipped as for grouped queries.
                    let open = l.windows.holds_open_instance(t);
                    if l.windows.fold(t, 0, &[], in_order)? {
                        self.stats.late_tuples += 1;
                    }
                    if open {
                        let live: usize = l.buffers.iter().map(VecDeque::len).sum();
                        if live >= l.live_tuples_max {
                            return Err(Error::ProgramLimitExceeded(format!(
                                "the query keeps more than {} live tuples (live_tuples_max)",
                                l.live_tuples_max
                            )));
                        }
                        for (w, buf) in self.windows.iter().zip(l.buffers.iter_mut()) {
                            let (lo, hi) = w.instances_containing(t);
                            if lo <= hi {
                                buf.push_back((t, row.to_vec()));
                            }
                        }
                    }
                }
            }
            if !matches!(self.mode, Mode::Pass) {
                self.note_window_membership(t, out);
            }
        }
        Ok(())
    }

    /// Count a tuple at `t` and move current time for it (the highest timestamp consumed,
    /// less SLACK), emitting the slide events passed. Returns whether the tuple is in order
    /// (at or past current time, so every instance holding it is open), or `None` once the
    /// query has ended.
    fn tuple_time(&mut self, t: i64, out: &mut Vec<Event>) -> Result<Option<bool>> {
        self.stats.tuples_in += 1;
        let time = t.saturating_sub(self.slack_us);
        if self.stats.now_us.is_none_or(|now| time > now) {
            self.advance(time, out)?;
        }
        if self.done {
            return Ok(None);
        }
        Ok(Some(self.stats.now_us.is_some_and(|now| t >= now)))
    }

    /// Fold the tuple at `t` whose group key is in `keybuf` and aggregate arguments in
    /// `argbuf` into the aggregate windows.
    fn fold_buffers(&mut self, t: i64, in_order: bool) -> Result<()> {
        let Mode::Agg(a) = &mut self.mode else {
            unreachable!("only aggregate queries fold group keys");
        };
        let hash = a.hasher.hash(&self.keybuf);
        let gid = a.windows.intern(hash, &self.keybuf);
        if a.windows.fold(t, gid, &self.argbuf, in_order)? {
            self.stats.late_tuples += 1;
        }
        Ok(())
    }

    /// The executor limits the query was built with.
    pub fn limits(&self) -> ExecLimits {
        self.limits
    }

    /// The query as planned.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// Bound parameter values.
    pub(crate) fn params(&self) -> &[Value] {
        &self.params
    }

    /// Per window: the display cut-off of a default START AT (see [`QueryExec::new`]).
    pub(crate) fn cutoffs(&self) -> &[Option<i64>] {
        &self.cutoffs
    }

    /// The query's SLACK, microseconds.
    pub(crate) fn slack_us(&self) -> i64 {
        self.slack_us
    }

    /// True when wtime/wstart are timestamptz.
    pub(crate) fn tz(&self) -> bool {
        self.tz
    }

    /// True when this query runs as a member of a cross-query shared plan.
    pub(crate) fn is_member(&self) -> bool {
        matches!(self.mode, Mode::Member(_))
    }

    /// Hand the query's tuples over to a cross-query shared plan: from now on it only
    /// finalises the closed instances the plan gives it ([`QueryExec::member_event`]).
    /// `spec_map[j]` is the plan's aggregate state that computes the query's call `j`;
    /// `rollup` (a roll-up member, see `exec::shared`): its key `k` is the plan's key
    /// `rollup[k]`.
    pub(crate) fn become_member(&mut self, spec_map: Vec<usize>, rollup: Option<Vec<usize>>) {
        let nkeys = self
            .query
            .aggregate
            .as_ref()
            .map_or(0, |a| a.group_by.len());
        self.mode = Mode::Member(MemberMode {
            spec_map,
            nkeys,
            rollup,
        });
    }

    /// One slide event of a member: `picks` holds (window index in this query, index into
    /// `closed`) of the query's windows that closed at this instant; `dict` and `specs` are
    /// the plan's. Applies HAVING, the select list, ORDER BY and LIMIT as the query alone does.
    pub(crate) fn member_event(
        &mut self,
        closed: &[ClosedInstance],
        picks: &mut [(usize, usize)],
        dict: &GroupDict,
        specs: &[AggSpec],
        out: &mut Vec<Event>,
    ) -> Result<()> {
        if self.done {
            return Ok(());
        }
        if !matches!(self.mode, Mode::Member(_)) {
            unreachable!("only members receive a shared plan's instances");
        }
        picks.sort_by_key(|(w, _)| *w);
        let mut rows = Vec::new();
        let bound = picks
            .iter()
            .map(|&(_, i)| closed[i].groups.len().max(1))
            .sum();
        let before = self.open_block(self.block_shape(), bound, out);
        let block = before.and_then(|_| last_block(out));
        let built = self
            .member_rows(closed, picks, dict, specs, &mut rows, block)
            .map(|()| rows);
        let ended = self.end_event(built, before, out);
        if bound > COALESCE_EVENT_ROWS && self.last_event_rows != Some(0) {
            // Its rows joined no earlier block: a repeat of it would not join its block.
            self.last_event_rows = None;
        }
        ended
    }

    /// Emit up to `events` slide events that repeat the last one (the same closed tables,
    /// their bounds moved by `step_us` each) at once, where its rows allow: none (HAVING
    /// kept no group; the events are only counted), or one row at the end of the last
    /// block of `out`, which then holds the repeats in O(1) as a run of that row with
    /// wtime and wstart stepping by `step_us`. The block takes as many events as it would
    /// one by one, and LIMIT counts them the same. Returns the events emitted (all of
    /// them once the query is done); 0 when the next must be computed in full.
    pub(crate) fn repeat_event(&mut self, events: u64, step_us: i64, out: &mut [Event]) -> u64 {
        if self.done {
            return events;
        }
        match self.last_event_rows {
            Some(0) => {
                self.stats.slide_events += events;
                return events;
            }
            Some(1) => {}
            _ => return 0,
        }
        let (Some(len_max), Some(items), Some(block)) = (
            self.coalesce_len_max(self.width()),
            self.fast_projection.as_deref(),
            last_block(out),
        ) else {
            return 0;
        };
        let room = (len_max + 1).saturating_sub(block.len()) as u64;
        let n = events.min(room).min(self.rows_left.unwrap_or(u64::MAX));
        let shift = |c: usize| match items[c] {
            FastItem::Meta(WindowMeta::Wtime | WindowMeta::Wstart) => step_us,
            _ => 0,
        };
        if n == 0 || !block.repeat_last(n as usize, shift) {
            return 0;
        }
        block.add_slide_events(n as usize);
        let kept = self.take_rows(n as usize);
        debug_assert_eq!(kept as u64, n, "LIMIT was counted in");
        self.stats.slide_events += n;
        n
    }

    /// The rows of one slide event's closed instances for a member, into `rows` or
    /// `block`.
    fn member_rows(
        &self,
        closed: &[ClosedInstance],
        picks: &[(usize, usize)],
        dict: &GroupDict,
        specs: &[AggSpec],
        rows: &mut Vec<(Vec<Value>, Vec<Value>)>,
        mut block: Option<&mut RowBlock>,
    ) -> Result<()> {
        let Mode::Member(m) = &self.mode else {
            unreachable!("only members receive a shared plan's instances");
        };
        for inst in picks.iter().map(|&(_, i)| &closed[i]) {
            let meta = WindowMetaValues {
                lower_us: inst.lower_us,
                upper_us: inst.upper_us,
                range_us: inst.window.range_us,
                slide_us: inst.window.slide_us,
                tz: self.tz,
            };
            match &m.rollup {
                None => self.agg_rows(
                    dict,
                    specs,
                    Some(&m.spec_map),
                    m.nkeys,
                    &inst.groups,
                    meta,
                    &mut EventRows::new(rows, block.as_deref_mut()),
                )?,
                Some(key_map) => {
                    // Roll the plan's fine groups up onto this query's keys: one merge per
                    // fine group and call, instead of folding every tuple again.
                    let coarse_specs: Vec<AggSpec> =
                        m.spec_map.iter().map(|&k| specs[k].clone()).collect();
                    let mut cdict = GroupDict::new(m.nkeys);
                    let mut coarse = GroupTable::with_capacity(coarse_specs.len(), 0);
                    inst.groups.roll_up(
                        dict,
                        specs,
                        key_map,
                        &m.spec_map,
                        &coarse_specs,
                        &KeyHasher::new(),
                        &mut cdict,
                        &mut coarse,
                        self.limits.groups_max,
                    )?;
                    self.agg_rows(
                        &cdict,
                        &coarse_specs,
                        None,
                        m.nkeys,
                        &coarse,
                        meta,
                        &mut EventRows::new(rows, block.as_deref_mut()),
                    )?;
                }
            }
        }
        Ok(())
    }

    /// A member consumed `tuples` more tuples (`late` of them late); its plan's current
    /// time is `now_us`, and was `started_us` first after the member joined.
    pub(crate) fn member_progress(
        &mut self,
        tuples: u64,
        late: u64,
        started_us: Option<i64>,
        now_us: Option<i64>,
    ) {
        self.stats.tuples_in += tuples;
        self.stats.late_tuples += late;
        self.stats.now_us = now_us.or(self.stats.now_us);
        self.stats.started_us = self.stats.started_us.or(started_us);
    }

    /// A member saw a tuple at `t_us`: the NOTICE of a query whose tuples all precede its
    /// first window, as the query alone gives it. False once the NOTICE is settled (sent,
    /// or a tuple fell in a window), so the plan can stop asking.
    pub(crate) fn member_tuple(&mut self, t_us: i64, out: &mut Vec<Event>) -> bool {
        self.note_window_membership(t_us, out);
        !(self.any_in_window || self.notice_sent)
    }

    /// Consume a batch of either form in arrival order (see [`QueryExec::push`] and
    /// [`QueryExec::push_columns`]).
    pub fn push_batch(&mut self, batch: &Batch, out: &mut Vec<Event>) -> Result<()> {
        self.plan_for_groups(batch)?;
        match batch {
            Batch::Rows(b) => self.push(b, out),
            Batch::Columns(b) => self.push_columns(b, out),
        }
    }

    /// Consume a columnar batch in arrival order, appending output to `out`; the rows are
    /// exactly those [`QueryExec::push`] gives for the same tuples as a [`RowBatch`].
    ///
    /// An aggregate query whose group keys and arguments are plain columns, without WHERE or
    /// with a WHERE comparing a column with a constant ([`ColumnFilter`]), reads the typed
    /// columns directly (no row of values is built); every other query reads the batch as
    /// rows. When every aggregate folds without failing, runs of in-order tuples that close
    /// no instance are filtered by a selection vector and folded a column at a time by the
    /// typed kernels; a tuple that closes an instance or comes late is folded on its own.
    pub fn push_columns(&mut self, batch: &ColumnBatch, out: &mut Vec<Event>) -> Result<()> {
        let (plan, kernels) = match &self.mode {
            Mode::Agg(a) => (a.columnar.clone(), a.kernels),
            _ => (None, false),
        };
        let Some(plan) = plan else {
            return self.push(&batch.to_rows(), out);
        };
        let views = batch.views();
        let mut i = 0;
        while i < batch.len() {
            if self.done {
                break;
            }
            let run = if kernels {
                self.in_order_run(&batch.times[i..])
            } else {
                0
            };
            if run > 0 {
                self.fold_run(&views, &plan, &batch.times, i..i + run, out)?;
                i += run;
                continue;
            }
            let t = batch.times[i];
            let Some(in_order) = self.tuple_time(t, out)? else {
                break;
            };
            let row = i;
            i += 1;
            if let Some(f) = &plan.filter {
                if !f.holds(&views[f.column], row) {
                    continue;
                }
            }
            self.keybuf.clear();
            self.keybuf
                .extend(plan.keys.iter().map(|&c| views[c].value(row)));
            self.argbuf.clear();
            self.argbuf.extend(plan.args.iter().map(|c| match c {
                None => Value::Bool(true),
                Some(c) => views[*c].value(row),
            }));
            self.fold_buffers(t, in_order)?;
            self.note_window_membership(t, out);
        }
        Ok(())
    }

    /// How many tuples at the head of `times` are in order (at or past current time as it
    /// moves with them) and move current time to no instance end, so that they close
    /// nothing: 0 before current time is defined.
    fn in_order_run(&self, times: &[i64]) -> usize {
        match (self.stats.now_us, &self.mode) {
            (Some(now), Mode::Agg(a)) => {
                kernels::in_order_run(times, now, self.slack_us, a.windows.next_end_us())
            }
            _ => 0,
        }
    }

    /// Fold the run `rows` of a columnar batch found by [`QueryExec::in_order_run`] with the
    /// typed kernels: the WHERE clause's selection vector, group ids of the selected rows,
    /// then each aggregate's column into each instance. Stats, current time and NOTICEs end
    /// as folding the tuples one at a time leaves them, also when a limit stops the run.
    fn fold_run(
        &mut self,
        views: &[ColumnView],
        plan: &ColumnarPlan,
        times: &[i64],
        rows: Range<usize>,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        let Mode::Agg(a) = &mut self.mode else {
            unreachable!("only aggregate queries fold runs");
        };
        let result = kernels::fold_run(
            &mut a.windows,
            &a.hasher,
            plan,
            views,
            times,
            rows.clone(),
            &mut a.bufs,
        );
        let sel = &a.bufs.sel;
        // The row path counts the failing tuple (and every tuple WHERE rejected before it)
        // and moves time for it, but notes no window membership for it.
        let (counted, noted) = match &result {
            Ok(()) => (rows.len(), sel.len()),
            Err((k, _)) => (sel[*k] as usize - rows.start + 1, *k),
        };
        let seen = &times[rows.start..rows.start + counted];
        self.stats.tuples_in += counted as u64;
        if let Some(max) = seen.iter().map(|t| t.saturating_sub(self.slack_us)).max() {
            self.stats.now_us = self.stats.now_us.max(Some(max));
        }
        if !(self.any_in_window || self.notice_sent) {
            let noted: Vec<i64> = sel[..noted].iter().map(|&i| times[i as usize]).collect();
            for t in noted {
                self.note_window_membership(t, out);
            }
        }
        result.map_err(|(_, e)| e)
    }

    /// A NOTICE, once, when the query's tuples so far all precede its first window.
    fn note_window_membership(&mut self, t: i64, out: &mut Vec<Event>) {
        if self.any_in_window || self.notice_sent {
            return;
        }
        let first_of = |i: usize, w: &Window| match (w.start, self.cutoffs[i]) {
            (_, Some(c)) => Some(c),
            (crate::window::Start::At(o), None) => Some(o),
            (crate::window::Start::Epoch, None) => None,
        };
        let firsts: Vec<Option<i64>> = self
            .windows
            .iter()
            .enumerate()
            .map(|(i, w)| first_of(i, w))
            .collect();
        if firsts.iter().any(|f| f.is_none_or(|f| t >= f)) {
            self.any_in_window = true;
            return;
        }
        let first = firsts.iter().flatten().min().copied().unwrap_or(0);
        // The hint only where it helps: a query with a START AT has given one already.
        let starts = if self.cutoffs.iter().all(Option::is_some) {
            "when the query was submitted (no START AT); to replay older data give an explicit START AT".to_string()
        } else {
            format!(
                "at {} (its START AT): the tuple is in no window",
                crate::time::format_timestamp(first)
            )
        };
        out.push(Event::Notice(format!(
            "tuple at {} precedes the first window of this query, which starts {starts}",
            crate::time::format_timestamp(t),
        )));
        self.notice_sent = true;
    }

    /// Move current time to `t_us` without a tuple (heartbeat / server clock).
    pub fn heartbeat(&mut self, t_us: i64, out: &mut Vec<Event>) -> Result<()> {
        let t_us = t_us.saturating_sub(self.slack_us);
        if self.stats.now_us.is_none_or(|now| t_us > now) {
            self.advance(t_us, out)?;
        }
        Ok(())
    }

    fn advance(&mut self, t_us: i64, out: &mut Vec<Event>) -> Result<()> {
        self.stats.now_us = Some(t_us);
        self.stats.started_us.get_or_insert(t_us);
        match &mut self.mode {
            // A member's time moves with its shared plan's.
            Mode::Pass | Mode::Member(_) => return Ok(()),
            Mode::Agg(a) => a.windows.advance_to(t_us),
            Mode::Live(l) => l.windows.advance_to(t_us),
        }
        // One slide event at a time: it is emitted, and its closed tables dropped, before
        // the next closes, so a sliding aggregator refills the same table each time.
        let skipped = loop {
            if self.done {
                break None;
            }
            let step = match &mut self.mode {
                Mode::Agg(a) => a.windows.next_event(t_us)?,
                Mode::Live(l) => l.windows.next_event(t_us)?,
                Mode::Pass | Mode::Member(_) => unreachable!("returned above"),
            };
            let mut closed = match step {
                Step::Done(skipped) => break skipped,
                Step::Event(closed) => closed,
            };
            // No instance shown (only factor windows, or instances before the first one
            // shown, closed at this instant): not a slide event of the query (a shared
            // plan's members are not called for such instants either).
            let emitted = if closed.is_empty() {
                Ok(())
            } else {
                self.own_event(&mut closed, out)
                    .and_then(|()| self.own_repeats(&mut closed, t_us, out))
            };
            match &mut self.mode {
                Mode::Agg(a) => a.windows.recycle(closed),
                Mode::Live(l) => l.windows.recycle(closed),
                Mode::Pass | Mode::Member(_) => {}
            }
            emitted?;
        };
        if let Mode::Agg(a) = &mut self.mode {
            a.windows.maybe_compact();
        }
        if let Mode::Live(l) = &mut self.mode {
            let oldest = l.windows.oldest_open_lower();
            for buf in &mut l.buffers {
                while buf.front().is_some_and(|(t, _)| *t < oldest) {
                    buf.pop_front();
                }
            }
        }
        if let Some(s) = skipped {
            out.push(Event::Notice(format!(
                "current time jumped to {}: {} empty slide events from the window ending at {} on were not emitted (empty_slide_events_max)",
                crate::time::format_timestamp(s.to_us),
                s.slide_events,
                crate::time::format_timestamp(s.from_us)
            )));
        }
        Ok(())
    }

    /// Emit one slide event of the query's own plan: its closed instances `closed`.
    fn own_event(&mut self, closed: &mut [ClosedInstance], out: &mut Vec<Event>) -> Result<()> {
        let shape = matches!(self.mode, Mode::Agg(_)) && self.block_shape();
        let bound = closed
            .iter()
            .map(|c| c.groups.len().max(1) * c.user_windows.len())
            .sum();
        let before = self.open_block(shape, bound, out);
        let block = before.and_then(|_| last_block(out));
        let built = self.rows_of_event(closed, block);
        let ended = self.end_event(built, before, out);
        if bound > COALESCE_EVENT_ROWS && self.last_event_rows != Some(0) {
            self.last_event_rows = None;
        }
        ended
    }

    /// After the own plan's slide event `closed`: the quiet events that follow it up to
    /// `now_us` ([`SharedWindows::skip_quiet_events`]), repeated at once where the rows
    /// allow ([`QueryExec::repeat_event`]), else each emitted in full from `closed` with
    /// its bounds moved (the same tables: nothing entered or left).
    fn own_repeats(
        &mut self,
        closed: &mut [ClosedInstance],
        now_us: i64,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        let Mode::Agg(a) = &mut self.mode else {
            return Ok(());
        };
        let events = a.windows.skip_quiet_events(now_us);
        let step_us = closed.first().map_or(0, |c| c.window.slide_us);
        // Events emitted so far, and the one whose bounds `closed` holds (0: its own).
        let (mut at, mut shifted) = (0u64, 0u64);
        while at < events && !self.done {
            let n = self.repeat_event(events - at, step_us, out);
            if n > 0 {
                at += n;
                continue;
            }
            let by = i64::try_from(at + 1 - shifted).unwrap_or(i64::MAX);
            ClosedInstance::shift_all(closed, by);
            shifted = at + 1;
            self.own_event(closed, out)?;
            at += 1;
        }
        Ok(())
    }

    /// Sort one slide event's rows, apply LIMIT, and emit them.
    fn finish_event(&mut self, mut rows: Vec<(Vec<Value>, Vec<Value>)>, out: &mut Vec<Event>) {
        if !self.query.order_by.is_empty() {
            let keys = &self.query.order_by;
            rows.sort_by(|a, b| compare_sort_keys(keys, &a.1, &b.1));
        }
        let mut rows: Vec<Vec<Value>> = rows.into_iter().map(|(r, _)| r).collect();
        rows.truncate(self.take_rows(rows.len()));
        if !rows.is_empty() {
            out.push(Event::Rows(rows));
        }
    }

    /// How many of a slide event's `n` rows LIMIT lets out; counts them, and ends the query
    /// once LIMIT is reached.
    fn take_rows(&mut self, n: usize) -> usize {
        let mut keep = n;
        if let Some(left) = &mut self.rows_left {
            if n as u64 >= *left {
                keep = *left as usize;
                self.done = true;
            }
            *left -= keep as u64;
        }
        self.stats.rows_out += keep as u64;
        keep
    }

    /// Make the last event of `out` the block a slide event's rows go to, and say how many
    /// rows of earlier events it holds (`None`: the event is not of the block shape). A
    /// small event (`bound`: at most that many rows) joins the block of the events before
    /// it in this batch, in place, when that is the last thing queued and has room: the
    /// rows are the same, and a run of one-row slide events costs one block and one queue
    /// entry instead of one each.
    fn open_block(&self, shape: bool, bound: usize, out: &mut Vec<Event>) -> Option<usize> {
        if !shape {
            return None;
        }
        let room = |b: &RowBlock| {
            self.coalesce_len_max(b.width())
                .is_some_and(|max| b.len() <= max)
        };
        match out.last() {
            Some(Event::Block(b)) if bound <= COALESCE_EVENT_ROWS && room(b) => Some(b.len()),
            _ => {
                out.push(Event::Block(RowBlock::new(self.width())));
                Some(0)
            }
        }
    }

    /// The most rows a block of `width` columns may hold and still take a small event's
    /// rows (its bytes, `COALESCE_EVENT_ROWS` rows more, within `coalesce_bytes`; fewer
    /// than `COALESCE_BLOCK_ROWS`); `None` when no block takes a second event.
    fn coalesce_len_max(&self, width: usize) -> Option<usize> {
        let row_bytes = width * std::mem::size_of::<Value>();
        let rows = self
            .limits
            .coalesce_bytes
            .checked_div(row_bytes)
            .unwrap_or(usize::MAX);
        let max = rows.checked_sub(COALESCE_EVENT_ROWS)?;
        Some(max.min(COALESCE_BLOCK_ROWS - 1))
    }

    /// Queue one slide event's rows (`built`), or, for the block shape (`before`: the rows
    /// of earlier events in the last block of `out`), count the rows appended there. A
    /// failed event still lets the earlier events' rows out, before its error.
    #[allow(clippy::type_complexity)]
    fn end_event(
        &mut self,
        built: Result<Vec<(Vec<Value>, Vec<Value>)>>,
        before: Option<usize>,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        self.last_event_rows = None;
        let rows = match built {
            Ok(rows) => rows,
            Err(e) => {
                if let Some(before) = before {
                    Self::cut_block(out, before);
                }
                return Err(e);
            }
        };
        self.stats.slide_events += 1;
        match before {
            Some(before) => self.finish_block(before, out),
            None => self.finish_event(rows, out),
        }
        Ok(())
    }

    /// Apply LIMIT to the last block of `out`, whose rows from `before` on are this
    /// event's (the ones before, of earlier events, were counted already).
    fn finish_block(&mut self, before: usize, out: &mut Vec<Event>) {
        let Some(block) = last_block(out) else {
            unreachable!("open_block queued a block");
        };
        if before > 0 {
            block.add_slide_event();
        }
        let n = block.len() - before;
        let keep = self.take_rows(n);
        Self::cut_block(out, before + keep);
        self.last_event_rows = Some(keep);
    }

    /// Keep the first `n` rows of the last block of `out`; drop the block when none is left.
    fn cut_block(out: &mut Vec<Event>, n: usize) {
        if let Some(block) = last_block(out) {
            block.truncate(n);
            if block.is_empty() {
                out.pop();
            }
        }
    }

    /// True when this query's aggregate rows are emitted as a [`RowBlock`]: the select list
    /// names only group keys, aggregates and window metadata, there is no ORDER BY, and
    /// HAVING is absent or compiled.
    fn block_shape(&self) -> bool {
        self.fast_projection.is_some()
            && self.query.order_by.is_empty()
            && (self.query.having.is_none() || self.having_filter.is_some())
    }

    /// Number of output columns.
    fn width(&self) -> usize {
        self.query.projection.len()
    }

    /// Finalise the closed instances of one slide event into (row, sort key) pairs, or
    /// onto `block` for the block shape, in the order the windows were written.
    fn rows_of_event(
        &self,
        closed: &mut [ClosedInstance],
        mut block: Option<&mut RowBlock>,
    ) -> Result<Vec<(Vec<Value>, Vec<Value>)>> {
        closed.sort_by_key(|c| c.user_windows[0]);
        let mut rows = Vec::new();
        for inst in closed.iter() {
            let meta = WindowMetaValues {
                lower_us: inst.lower_us,
                upper_us: inst.upper_us,
                range_us: inst.window.range_us,
                slide_us: inst.window.slide_us,
                tz: self.tz,
            };
            for _ in &inst.user_windows {
                match &self.mode {
                    Mode::Agg(a) => self.agg_rows(
                        a.windows.dict(),
                        a.windows.specs(),
                        None,
                        a.group_by.len(),
                        &inst.groups,
                        meta,
                        &mut EventRows::new(&mut rows, block.as_deref_mut()),
                    )?,
                    Mode::Live(l) => {
                        let w = inst.user_windows[0];
                        for (t, row) in &l.buffers[w] {
                            if *t >= inst.lower_us && *t < inst.upper_us {
                                if let Some(r) = self.output_row(row, meta)? {
                                    rows.push(r);
                                }
                            }
                        }
                    }
                    Mode::Pass | Mode::Member(_) => {}
                }
            }
        }
        Ok(rows)
    }

    /// The aggregate rows of one closed instance: its group keys from `dict`, then each
    /// call's state `accs[spec_map[j]]` (the identity for a query's own plan) finalised.
    #[allow(clippy::too_many_arguments)]
    fn agg_rows(
        &self,
        dict: &GroupDict,
        specs: &[AggSpec],
        spec_map: Option<&[usize]>,
        nkeys: usize,
        groups: &GroupTable,
        meta: WindowMetaValues,
        out: &mut EventRows<'_>,
    ) -> Result<()> {
        let rows = &mut *out.rows;
        if let Some(block) = out.block.as_deref_mut() {
            if !groups.is_empty() {
                return self.block_rows(dict, specs, spec_map, nkeys, groups, meta, block);
            }
            // An ungrouped query's empty instance: its one row (or none, under HAVING) as
            // the row path builds it.
            let mut one = Vec::new();
            self.agg_rows(
                dict,
                specs,
                spec_map,
                nkeys,
                groups,
                meta,
                &mut EventRows::new(&mut one, None),
            )?;
            for (row, _) in one {
                block.push_row(row);
            }
            return Ok(());
        }
        let ncalls = spec_map.map_or(specs.len(), <[usize]>::len);
        let state_of = |j: usize| spec_map.map_or(j, |m| m[j]);
        let mut agg_row = Vec::with_capacity(nkeys + ncalls);
        let emit = |agg_row: &[Value], rows: &mut Vec<(Vec<Value>, Vec<Value>)>| -> Result<()> {
            if let Some(r) = self.output_row(agg_row, meta)? {
                rows.push(r);
            }
            Ok(())
        };
        if groups.is_empty() {
            if nkeys == 0 {
                for j in 0..ncalls {
                    let s = &specs[state_of(j)];
                    agg_row.push(s.init().evaluate(s)?);
                }
                emit(&agg_row, rows)?;
            }
            return Ok(());
        }
        let Some(h) = &self.query.having else {
            for g in 0..groups.len() {
                let (gid, accs) = groups.group(g, specs.len());
                agg_row.clear();
                agg_row.extend(dict.key(gid).iter().cloned());
                for j in 0..ncalls {
                    let k = state_of(j);
                    agg_row.push(accs[k].evaluate(&specs[k])?);
                }
                emit(&agg_row, rows)?;
            }
            return Ok(());
        };
        if let Some(filter) = &self.having_filter {
            // The compiled HAVING reads the partial states themselves: a rejected group
            // costs its comparisons only, and no row is built for it.
            for g in 0..groups.len() {
                let (gid, accs) = groups.group(g, specs.len());
                if filter.keeps(accs, specs, state_of)? {
                    agg_row.clear();
                    agg_row.extend(dict.key(gid).iter().cloned());
                    for j in 0..ncalls {
                        let k = state_of(j);
                        agg_row.push(accs[k].evaluate(&specs[k])?);
                    }
                    rows.push(self.project_row(&agg_row, meta)?);
                }
            }
            return Ok(());
        }
        // Otherwise a group's row is built in two steps: first the key columns and the
        // aggregates HAVING reads (NULL in the others' places), then, only for the groups
        // it keeps, the rest. Most groups of a selective HAVING are then never finalised
        // in full (avg's numeric division is the costly one), and the rows are the same.
        let mut reads = vec![false; nkeys + ncalls];
        super::join::walk(h, &mut |e| {
            if let Expr::Column(i) = e {
                if let Some(r) = reads.get_mut(*i) {
                    *r = true;
                }
            }
        });
        let reads_key = reads[..nkeys].iter().any(|r| *r);
        for g in 0..groups.len() {
            let (gid, accs) = groups.group(g, specs.len());
            let key = dict.key(gid);
            agg_row.clear();
            if reads_key {
                agg_row.extend(key.iter().cloned());
            } else {
                agg_row.resize(nkeys, Value::Null);
            }
            for j in 0..ncalls {
                let k = state_of(j);
                agg_row.push(if reads[nkeys + j] {
                    accs[k].evaluate(&specs[k])?
                } else {
                    Value::Null
                });
            }
            let c = ctx(&agg_row, &self.params, Some(meta), self.now_us);
            if !truthy(&eval(h, &c)?) {
                continue;
            }
            if !reads_key {
                agg_row[..nkeys].clone_from_slice(key);
            }
            for j in 0..ncalls {
                if !reads[nkeys + j] {
                    let k = state_of(j);
                    agg_row[nkeys + j] = accs[k].evaluate(&specs[k])?;
                }
            }
            rows.push(self.project_row(&agg_row, meta)?);
        }
        Ok(())
    }

    /// [`QueryExec::agg_rows`] for the block shape ([`QueryExec::block_shape`]): appends
    /// the rows of the groups HAVING keeps to `block`, column by column. `groups` is not
    /// empty.
    #[allow(clippy::too_many_arguments)]
    fn block_rows(
        &self,
        dict: &GroupDict,
        specs: &[AggSpec],
        spec_map: Option<&[usize]>,
        nkeys: usize,
        groups: &GroupTable,
        meta: WindowMetaValues,
        block: &mut RowBlock,
    ) -> Result<()> {
        let items = self
            .fast_projection
            .as_deref()
            .expect("the block shape has a plain select list");
        let state_of = |j: usize| spec_map.map_or(j, |m| m[j]);
        let nspecs = specs.len();
        // The groups HAVING keeps (every group without one: no list is built).
        let kept: Option<Vec<usize>> = match &self.having_filter {
            None => None,
            Some(filter) => {
                let mut kept = Vec::new();
                for g in 0..groups.len() {
                    if filter.keeps(groups.group(g, nspecs).1, specs, state_of)? {
                        kept.push(g);
                    }
                }
                Some(kept)
            }
        };
        let n = kept.as_ref().map_or(groups.len(), Vec::len);
        let group_at = |r: usize| kept.as_ref().map_or(r, |k| k[r]);
        let fresh = block.is_empty();
        block.set_same_rows(n, |c| match items[c] {
            FastItem::Meta(m) => Some(meta_value(m, &meta)),
            FastItem::Column(_) => None,
        });
        if fresh && n > COALESCE_EVENT_ROWS {
            let fill = TypedFill {
                items,
                dict,
                specs,
                spec_map,
                nkeys,
                meta,
            };
            return fill.rows(groups, n, group_at, block);
        }
        block.reserve(n);
        for r in 0..n {
            let (gid, accs) = groups.group(group_at(r), nspecs);
            for (c, item) in items.iter().enumerate() {
                if !block.is_stored(c) {
                    continue;
                }
                block.push_value(match *item {
                    FastItem::Meta(m) => meta_value(m, &meta),
                    FastItem::Column(i) if i < nkeys => copy_value(&dict.key(gid)[i]),
                    FastItem::Column(i) => {
                        let k = state_of(i - nkeys);
                        // count and min/max are their states: built in place, without
                        // a call and its Result.
                        match &accs[k] {
                            Acc::Count(n) => Value::Int8(*n),
                            Acc::Extreme(v) => copy_value(v),
                            Acc::IntSum { sum, n }
                                if *n > 0 && specs[k].func == crate::sql::AggFunc::Avg =>
                            {
                                crate::agg::int_avg(*sum, *n)?
                            }
                            acc => acc.evaluate(&specs[k])?,
                        }
                    }
                });
            }
        }
        block.rows_appended(n);
        Ok(())
    }

    /// HAVING, projection and sort keys over one aggregate (or input) row.
    fn output_row(
        &self,
        row: &[Value],
        meta: WindowMetaValues,
    ) -> Result<Option<(Vec<Value>, Vec<Value>)>> {
        if self.query.having.is_none() && self.query.order_by.is_empty() {
            if let Some(items) = &self.fast_projection {
                return Ok(Some((fast_project(items, row, meta), Vec::new())));
            }
        }
        if let Some(h) = &self.query.having {
            let c = ctx(row, &self.params, Some(meta), self.now_us);
            if !truthy(&eval(h, &c)?) {
                return Ok(None);
            }
        }
        self.project_row(row, meta).map(Some)
    }

    /// Projection and sort keys over one row that passed HAVING.
    fn project_row(
        &self,
        row: &[Value],
        meta: WindowMetaValues,
    ) -> Result<(Vec<Value>, Vec<Value>)> {
        let c = ctx(row, &self.params, Some(meta), self.now_us);
        let projected = self
            .query
            .projection
            .iter()
            .map(|e| eval(e, &c))
            .collect::<Result<Vec<_>>>()?;
        let keys = self
            .query
            .order_by
            .iter()
            .map(|k| eval(&k.expr, &c))
            .collect::<Result<Vec<_>>>()?;
        Ok((projected, keys))
    }
}

/// The compiled HAVING of an aggregate query whose HAVING compares aggregate results with
/// constants ([`HavingFilter::compile`]).
fn having_filter(query: &Query, params: &[Value]) -> Option<HavingFilter> {
    let agg = query.aggregate.as_ref()?;
    HavingFilter::compile(
        query.having.as_ref()?,
        agg.group_by.len(),
        agg.calls.len(),
        params,
    )
}

/// Evaluate with a cheap path for plain column references.
fn eval_ref(e: &Expr, row: &[Value], params: &[Value], now_us: i64) -> Result<Value> {
    match e {
        Expr::Column(i) => Ok(row[*i].clone()),
        _ => eval(e, &ctx(row, params, None, now_us)),
    }
}

/// How an aggregate query can read columnar batches directly ([`ColumnarPlan::new`]).
fn columnar_plan(query: &Query, agg: &crate::sql::Aggregate) -> Option<ColumnarPlan> {
    let args: Vec<Option<&Expr>> = agg.calls.iter().map(|c| c.arg.as_ref()).collect();
    ColumnarPlan::new(
        &agg.group_by,
        &args,
        query.filter.as_ref(),
        &stream_types(query),
    )
}

/// The column types of the stream `query` reads (empty for other sources).
pub(crate) fn stream_types(query: &Query) -> Vec<DataType> {
    match &query.source {
        crate::sql::Source::Stream { columns, .. } => columns.iter().map(|c| c.data_type).collect(),
        _ => Vec::new(),
    }
}

/// Where one slide event's rows gather: (row, sort key) pairs, or a block for the block
/// shape.
struct EventRows<'a> {
    rows: &'a mut Vec<(Vec<Value>, Vec<Value>)>,
    block: Option<&'a mut RowBlock>,
}

impl<'a> EventRows<'a> {
    fn new(
        rows: &'a mut Vec<(Vec<Value>, Vec<Value>)>,
        block: Option<&'a mut RowBlock>,
    ) -> EventRows<'a> {
        EventRows { rows, block }
    }
}

/// What [`QueryExec::block_rows`] fills a typed block ([`RowBlock::begin_typed`]) from.
struct TypedFill<'a> {
    items: &'a [FastItem],
    dict: &'a GroupDict,
    specs: &'a [AggSpec],
    spec_map: Option<&'a [usize]>,
    nkeys: usize,
    meta: WindowMetaValues,
}

impl TypedFill<'_> {
    /// Append `n` rows, the `r`-th of group `group_at(r)` of `groups`, to the empty
    /// `block` as typed columns: keys' text, counts and integer extremes go in as they
    /// are, an average of integers as its sum and count. Errors: an aggregate's.
    fn rows(
        &self,
        groups: &GroupTable,
        n: usize,
        group_at: impl Fn(usize) -> usize,
        block: &mut RowBlock,
    ) -> Result<()> {
        use super::typed::IntType;
        let nspecs = self.specs.len();
        let state_of = |j: usize| self.spec_map.map_or(j, |m| m[j]);
        // The stored columns' items, in order (the window metadata is the same in every
        // row of the event: not stored).
        let stored: Vec<FastItem> = (0..self.items.len())
            .filter(|&c| block.is_stored(c))
            .map(|c| self.items[c])
            .collect();
        block.begin_typed(n);
        for r in 0..n {
            let (gid, accs) = groups.group(group_at(r), nspecs);
            for (k, item) in stored.iter().enumerate() {
                let col = block.typed_column(k);
                match *item {
                    FastItem::Meta(m) => col.push_general(meta_value(m, &self.meta)),
                    FastItem::Column(i) if i < self.nkeys => match &self.dict.key(gid)[i] {
                        Value::Text(s) => col.push_text(s),
                        v => col.push_ref(v),
                    },
                    FastItem::Column(i) => {
                        let j = state_of(i - self.nkeys);
                        match &accs[j] {
                            Acc::Count(c) => col.push_int(IntType::Int8, *c),
                            Acc::Extreme(v) => col.push_ref(v),
                            Acc::IntSum { sum, n }
                                if *n > 0 && self.specs[j].func == crate::sql::AggFunc::Avg =>
                            {
                                col.push_avg(*sum, *n)?
                            }
                            acc => col.push_general(acc.evaluate(&self.specs[j])?),
                        }
                    }
                }
            }
        }
        block.typed_rows_appended(n);
        Ok(())
    }
}

/// Rows a slide event may have at most to join the previous event's [`RowBlock`] (see
/// [`QueryExec::member_event`]); a larger event keeps its window metadata once per block.
const COALESCE_EVENT_ROWS: usize = 64;

/// Rows past which a block takes no further event.
const COALESCE_BLOCK_ROWS: usize = 1024;

/// A projection item that needs no evaluator: a column of the row or a window function.
#[derive(Clone, Copy)]
enum FastItem {
    Column(usize),
    Meta(WindowMeta),
}

fn fast_items(projection: &[Expr]) -> Option<Vec<FastItem>> {
    projection
        .iter()
        .map(|e| match e {
            Expr::Column(i) => Some(FastItem::Column(*i)),
            Expr::WindowMeta(m) => Some(FastItem::Meta(*m)),
            _ => None,
        })
        .collect()
}

/// The select list of `fast_items` over `row`.
fn fast_project(items: &[FastItem], row: &[Value], meta: WindowMetaValues) -> Vec<Value> {
    items
        .iter()
        .map(|item| match item {
            FastItem::Column(i) => row[*i].clone(),
            FastItem::Meta(m) => meta_value(*m, &meta),
        })
        .collect()
}

/// A clone of `v` with the variants result rows mostly hold (integers, numerics, inline
/// text) copied in place rather than through `Value::clone`'s call and dispatch.
#[inline(always)]
fn copy_value(v: &Value) -> Value {
    match v {
        Value::Int4(x) => Value::Int4(*x),
        Value::Int8(x) => Value::Int8(*x),
        Value::Numeric(d) => Value::Numeric(*d),
        Value::Text(s) => Value::Text(s.clone()),
        v => v.clone(),
    }
}

fn meta_value(m: WindowMeta, w: &WindowMetaValues) -> Value {
    let ts = |t| {
        if w.tz {
            Value::TimestampTz(t)
        } else {
            Value::Timestamp(t)
        }
    };
    // As the evaluator gives them (whole days apart), so a query's rows do not depend on
    // whether it has a HAVING or ORDER BY.
    let iv = |us| Value::Interval(crate::expr::interval_from_us(us));
    match m {
        WindowMeta::Wtime => ts(w.upper_us),
        WindowMeta::Wstart => ts(w.lower_us),
        WindowMeta::Wrange => iv(w.range_us),
        WindowMeta::Wslide => iv(w.slide_us),
    }
}

fn truthy(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

fn predicate(e: &Expr, row: &[Value], params: &[Value], now_us: i64) -> Result<bool> {
    Ok(truthy(&eval(e, &ctx(row, params, None, now_us))?))
}

fn project(
    exprs: &[Expr],
    row: &[Value],
    params: &[Value],
    meta: Option<WindowMetaValues>,
    now_us: i64,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let c = ctx(row, params, meta, now_us);
    Ok((
        exprs
            .iter()
            .map(|e| eval(e, &c))
            .collect::<Result<Vec<_>>>()?,
        Vec::new(),
    ))
}

/// ORDER BY comparison with PostgreSQL's NULL placement.
pub(crate) fn compare_sort_keys(keys: &[SortKey], a: &[Value], b: &[Value]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    for (k, (x, y)) in keys.iter().zip(a.iter().zip(b)) {
        let ord = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if k.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if k.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            _ => {
                let o = compare_values(x, y);
                if k.descending {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// The instances of aggregate `agg` along `plan`, one partial state per call (see
/// [`SharedWindows::new`] for `cutoffs` and the errors).
fn agg_windows(
    agg: &crate::sql::Aggregate,
    plan: &SharedPlan,
    limits: ExecLimits,
    cutoffs: &[Option<i64>],
) -> Result<SharedWindows> {
    let specs: Vec<AggSpec> = agg
        .calls
        .iter()
        .map(|c| AggSpec::new(c.func, c.arg_type, c.distinct))
        .collect();
    SharedWindows::new(
        plan,
        specs,
        agg.group_by.len(),
        agg.group_by.is_empty(),
        limits,
        cutoffs.to_vec(),
    )
}

/// The coverage relation `query`'s aggregates allow over `windows` (paper Theorems 5 and
/// 6); `None` without aggregates or windows.
pub fn sharing_of_query(query: &Query, windows: &[Window]) -> wcg::Sharing {
    match &query.aggregate {
        Some(agg) if !windows.is_empty() => {
            let specs: Vec<AggSpec> = agg
                .calls
                .iter()
                .map(|c| AggSpec::new(c.func, c.arg_type, c.distinct))
                .collect();
            crate::agg::sharing_of(&specs)
        }
        _ => wcg::Sharing::None,
    }
}

/// Plan the query's windows along the WCG for its aggregates (unshared for `Sharing::None`),
/// before its groups are known ([`workload_of`]).
pub fn plan_windows(query: &Query, windows: &[Window], eta_per_sec: f64) -> SharedPlan {
    let workload = workload_of(query, eta_per_sec, wcg::Groups::Unknown);
    plan_windows_for(query, windows, &workload)
}

/// Plan the query's windows under `workload` (see [`workload_of`]).
pub(crate) fn plan_windows_for(
    query: &Query,
    windows: &[Window],
    workload: &wcg::Workload,
) -> SharedPlan {
    wcg::plan_for(windows, sharing_of_query(query, windows), workload)
}

/// What the cost model needs of `query` at `eta_per_sec` events per second: the sliding
/// aggregators its aggregates allow ([`crate::agg::sliders_of`]) and its groups per
/// partial: one without GROUP BY, else `groups` (an estimate, or unknown).
pub fn workload_of(query: &Query, eta_per_sec: f64, groups: wcg::Groups) -> wcg::Workload {
    let Some(agg) = &query.aggregate else {
        return wcg::Workload::paper(eta_per_sec);
    };
    let specs: Vec<AggSpec> = agg
        .calls
        .iter()
        .map(|c| AggSpec::new(c.func, c.arg_type, c.distinct))
        .collect();
    wcg::Workload {
        eta_per_sec,
        groups: if agg.group_by.is_empty() {
            wcg::Groups::One
        } else {
            groups
        },
        sliders: crate::agg::sliders_of(&specs),
    }
}

/// A grouped query estimates its groups from a first batch of at least this many tuples.
pub(crate) const GROUP_SAMPLE_MIN: usize = 256;

/// Tuples of a batch whose keys the estimate reads at most.
const GROUP_SAMPLE_MAX: usize = 1 << 16;

/// The groups a query keyed by `group_by` would see, estimated from the distinct keys among
/// the first tuples of `batch` ([`wcg::Groups::estimate`]); `None` for a batch of fewer than
/// [`GROUP_SAMPLE_MIN`] tuples. Keys are hashed, not compared, and the WHERE clause is not
/// applied: an estimate for the cost model, not a count. A key that fails to evaluate is
/// skipped (its error comes with the fold).
pub(crate) fn sample_groups(
    batch: &Batch,
    group_by: &[Expr],
    columnar: Option<&ColumnarPlan>,
    hasher: &KeyHasher,
    params: &[Value],
) -> Option<wcg::Groups> {
    let n = batch.len().min(GROUP_SAMPLE_MAX);
    if n < GROUP_SAMPLE_MIN {
        return None;
    }
    let mut seen = hashbrown::HashSet::with_capacity(n.min(4096));
    let mut key = Vec::with_capacity(group_by.len());
    match (batch, columnar) {
        (Batch::Columns(b), Some(plan)) => {
            let views = b.views();
            for i in 0..n {
                key.clear();
                key.extend(plan.keys.iter().map(|&c| views[c].value(i)));
                seen.insert(hasher.hash(&key));
            }
        }
        _ => {
            let rows = match batch {
                Batch::Rows(r) => std::borrow::Cow::Borrowed(r),
                Batch::Columns(c) => std::borrow::Cow::Owned(c.slice(0..n).to_rows()),
            };
            for i in 0..n {
                key.clear();
                for k in group_by {
                    match eval_ref(k, rows.row(i), params, 0) {
                        Ok(v) => key.push(v),
                        Err(_) => break,
                    }
                }
                if key.len() == group_by.len() {
                    seen.insert(hasher.hash(&key));
                }
            }
        }
    }
    Some(wcg::Groups::estimate(seen.len(), n))
}

/// The block queued last in `out`, if the last event is one.
fn last_block(out: &mut [Event]) -> Option<&mut RowBlock> {
    match out.last_mut() {
        Some(Event::Block(b)) => Some(b),
        _ => None,
    }
}
