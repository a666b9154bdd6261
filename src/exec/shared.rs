//! Cross-query sharing: one window coverage graph for the aggregate queries of many clients.
//!
//! Continuous aggregate queries over one stream whose WHERE, parameter values, SLACK and
//! time zone are equal have the same [`share_key`]; [`SharedAgg::join_refusal`] decides
//! whether one joins a plan of that key. Members run as one [`SharedAgg`]: one group
//! dictionary and one [`SharedWindows`] over the union of the members' windows (factor
//! windows included), folding the union of their aggregate states once per tuple. Each
//! member reads the closed instances of its own windows and applies its own HAVING, select
//! list, ORDER BY and LIMIT ([`QueryExec::member_event`]), so queries that differ only there
//! share completely.
//!
//! Windows are compared with their START AT: two explicit START ATs make two windows; a
//! default START AT is an epoch grid with a per-member display cut-off, so members share the
//! node and each shows instances from its own first one on.
//!
//! GROUP BY keys. A plan groups by its first member's keys. A query with the same keys
//! (same expressions and types) is a plain member. A query whose keys are a non-empty strict
//! subset of the plan's is a *roll-up* member: its windows join the plan like any other,
//! and at finalisation each closed instance's fine groups are merged onto its keys (every
//! shared aggregate's partials merge exactly; count(DISTINCT) is never shared). It rolls up
//! only when the model says so ([`SharedAgg::rollup_costs`]): the plan's extra cost for its
//! windows plus one merge per fine group per closed instance must be clearly below its own
//! min-cost plan folding every tuple again. Fine groups per instance are bounded by the
//! plan's group dictionary, known once the plan has seen data; before, the model assumes one
//! group per tuple, so only a running plan takes roll-up members.
//!
//! Aggregate classes (paper Theorems 5 and 6). count/sum/avg/stddev/variance need
//! "partitioned by" edges; min/max alone allow "covered by". A min/max-only query joins a
//! "partitioned by" plan (exact: those edges are "covered by" edges too). A count-like query
//! turns a min/max plan into a "partitioned by" one if the plan has not started, or if every
//! edge it runs already partitions its child; otherwise it cannot join (a node computed
//! from overlapping parent instances would count tuples twice).
//!
//! The join rule (exact, and the design decision of this module). Before the plan has seen a
//! tuple, a joining query is simply added and the whole plan is re-optimised from scratch.
//! Once it runs, a query joins only if each of its windows shows only instances that begin
//! after the latest timestamp the plan has consumed (the join point): those instances hold
//! no tuple the query did not see, so its rows equal those it gets alone. An aggregate state
//! the plan lacks is added to every open instance, empty: only the new query reads it, and
//! only from instances that begin after the join point, so it holds every tuple they
//! contain. The plan is then re-optimised over the union of windows; nodes it keeps run on
//! unchanged (state and parent), and every new node (user or factor window) is appended
//! with its parent from the new plan, computing from its first instance that begins after
//! the join point. A query that cannot join starts a new plan of its own. When a member
//! leaves (LIMIT, cancel, disconnect, CLOSE, its own error), its windows stop being shown and
//! every node that no longer serves a member or feeds another node is pruned; the remaining
//! nodes keep their state and parents.
//!
//! Errors. An error in the shared part (WHERE, keys, aggregate arguments, a limit) ends
//! every member: they all read the same fold. An error in one member's finalisation (its
//! HAVING, select list, ORDER BY keys) ends that member alone
//! ([`SharedAgg::take_member_errors`]); the others run on.

use super::group::KeyHasher;
use std::ops::Range;

use super::columns::{ColumnBatch, ColumnView};
use super::kernels::{self, ColumnarPlan, RunBuffers};
use super::query::{sharing_of_query, stream_types, RowBatch};
use super::windowed::{ClosedInstance, ExecLimits, SharedWindows, Step};
use super::{Batch, Event, QueryExec};
use crate::agg::AggSpec;
use crate::error::Result;
use crate::expr::{eval, EvalContext};
use crate::sql::AggFunc;
use crate::sql::Expr;
use crate::types::{DataType, Value};
use crate::wcg::{self, SharedPlan, Sharing};
use crate::window::{floor_div, Window};

/// The sharing key of `exec`: queries with equal keys over one stream may run in one plan,
/// and [`SharedAgg::join_refusal`] decides whether they do (GROUP BY keys, aggregate class,
/// the roll-up cost rule and the running plan's time). `None` for a query that is not
/// shared: not a windowed aggregate, a holistic aggregate
/// (count(DISTINCT x)), or `now()` in its WHERE, keys or arguments (fixed per query).
///
/// The expressions are compared in their bound form (columns by position, types resolved),
/// so spelling, aliases and white space do not matter.
pub fn share_key(exec: &QueryExec) -> Option<String> {
    let q = exec.query();
    let agg = q.aggregate.as_ref()?;
    if exec.windows().is_empty() || exec.is_member() {
        return None;
    }
    let sharing = sharing_of_query(q, exec.windows());
    if sharing == Sharing::None {
        return None;
    }
    let args: Vec<&Option<Expr>> = agg.calls.iter().map(|c| &c.arg).collect();
    let exprs = format!("{:?}|{:?}|{:?}", q.filter, agg.group_by, args);
    if exprs.contains("Now") {
        return None;
    }
    Some(format!(
        "{:?}|{:?}|slack={}|tz={}",
        q.filter,
        exec.params(),
        exec.slack_us(),
        exec.tz()
    ))
}

/// One aggregate state of the plan: function, argument, argument type.
#[derive(Clone, Debug, PartialEq)]
struct StateDef {
    func: AggFunc,
    arg: Option<Expr>,
    arg_type: DataType,
}

/// A user window of a member, as the plan numbers them.
#[derive(Clone, Debug)]
struct Slot {
    /// Index of the member in `SharedAgg::members`.
    member: usize,
    /// The window's index in the member's query.
    window_idx: usize,
    window: Window,
    cutoff: Option<i64>,
}

/// A member query of the plan.
#[derive(Clone, Debug)]
struct Member {
    id: u64,
    slots: Vec<usize>,
    /// Still deciding whether to send the "precedes the first window" NOTICE.
    notice_pending: bool,
    /// Tuples it consumed in the current batch that were late.
    late: u64,
    /// The plan's first current time after it joined.
    started_us: Option<i64>,
    /// A roll-up member: its GROUP BY key `k` is the plan's key `rollup[k]`.
    rollup: Option<Vec<usize>>,
    /// Its finalisation failed; it gets no more instances and leaves the plan.
    failed: bool,
}

/// One node of a running plan, for `tcq_plans`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NodeInfo {
    /// The node's window.
    pub(crate) window: Window,
    /// True for a factor window (its results are shown to nobody).
    pub(crate) factor: bool,
    /// Index of the parent node; `None` for a root, which folds raw tuples.
    pub(crate) parent: Option<usize>,
    /// Ids of the member queries that read this node's window.
    pub(crate) queries: Vec<u64>,
    /// Those of `queries` that roll up from the plan's finer groups.
    pub(crate) rollups: Vec<u64>,
    /// Tuple folds into this node's instances.
    pub(crate) tuples_folded: u64,
    /// Partials merged into this node's instances.
    pub(crate) partials_merged: u64,
}

/// A cross-query shared plan and the state it runs (see the module docs for the rules).
#[derive(Clone)]
pub struct SharedAgg {
    windows: SharedWindows,
    sharing: Sharing,
    states: Vec<StateDef>,
    filter: Option<Expr>,
    group_by: Vec<Expr>,
    group_types: Vec<DataType>,
    nkeys: usize,
    params: Vec<Value>,
    slack_us: i64,
    limits: ExecLimits,
    slots: Vec<Option<Slot>>,
    members: Vec<Member>,
    now_us: Option<i64>,
    max_t_us: Option<i64>,
    hasher: KeyHasher,
    keybuf: Vec<Value>,
    argbuf: Vec<Value>,
    notices_pending: usize,
    /// Members without `started_us`.
    unstarted: usize,
    /// Members whose finalisation failed, with the error, until the engine takes them.
    member_errors: Vec<(u64, crate::error::Error)>,
    /// The event rate the plan was last optimised for from scratch.
    planned_rate_per_sec: Option<f64>,
    /// Groups per partial for the cost model: estimated from the first batch (grouped
    /// plans), unknown before.
    groups: wcg::Groups,
    /// The first batch's groups have been counted.
    groups_sampled: bool,
    /// Per member, the (window index, closed instance) pairs of the slide event being
    /// handed out, kept to reuse the vectors.
    picks: Vec<Vec<(usize, usize)>>,
    /// Per member, the quiet slide events it has been given so far (see
    /// [`SharedAgg::member_repeats`]), kept to reuse the vector.
    repeats_done: Vec<u64>,
    /// The stream's column types (for the columnar path's WHERE).
    types: Vec<DataType>,
    /// The typed kernels' vectors, and one row of a columnar batch for a tuple folded alone.
    bufs: RunBuffers,
    rowbuf: RowBatch,
    /// How columnar batches are read (`None`: as rows), for the numbers of aggregate
    /// states of the plan and of its windows it was made for: states are only ever added,
    /// so it is remade when one is.
    columnar: Option<((usize, usize), Option<ColumnarPlan>)>,
}

impl SharedAgg {
    /// An empty plan for queries with the share key of `exec` (which does not join yet).
    pub fn new(exec: &QueryExec, limits: ExecLimits) -> Result<SharedAgg> {
        let q = exec.query();
        let agg = q.aggregate.as_ref().expect("shared queries aggregate");
        let sharing = sharing_of_query(q, exec.windows());
        Ok(SharedAgg {
            windows: SharedWindows::new(
                &SharedPlan { nodes: Vec::new() },
                Vec::new(),
                agg.group_by.len(),
                agg.group_by.is_empty(),
                limits,
                Vec::new(),
            )?,
            sharing,
            states: Vec::new(),
            filter: q.filter.clone(),
            group_by: agg.group_by.clone(),
            group_types: agg.group_types.clone(),
            nkeys: agg.group_by.len(),
            params: exec.params().to_vec(),
            slack_us: exec.slack_us(),
            limits,
            slots: Vec::new(),
            members: Vec::new(),
            now_us: None,
            max_t_us: None,
            hasher: KeyHasher::new(),
            keybuf: Vec::new(),
            argbuf: Vec::new(),
            notices_pending: 0,
            unstarted: 0,
            member_errors: Vec::new(),
            planned_rate_per_sec: None,
            groups: wcg::Groups::Unknown,
            groups_sampled: false,
            picks: Vec::new(),
            repeats_done: Vec::new(),
            types: stream_types(q),
            bufs: RunBuffers::default(),
            rowbuf: RowBatch::default(),
            columnar: None,
        })
    }

    /// True once the plan has consumed a tuple or a heartbeat.
    pub fn is_running(&self) -> bool {
        self.windows.is_started()
    }

    /// Member query ids, in the order [`SharedAgg::push_batch`] expects their executors.
    pub fn member_ids(&self) -> Vec<u64> {
        self.members.iter().map(|m| m.id).collect()
    }

    /// True when no member is left.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    fn state_index(&self, def: &StateDef) -> Option<usize> {
        self.states.iter().position(|s| s == def)
    }

    fn defs_of(exec: &QueryExec) -> Vec<StateDef> {
        let agg = exec
            .query()
            .aggregate
            .as_ref()
            .expect("shared queries aggregate");
        agg.calls
            .iter()
            .map(|c| StateDef {
                func: c.func,
                arg: c.arg.clone(),
                arg_type: c.arg_type,
            })
            .collect()
    }

    /// The index of the first instance of `w` that begins after `t_us`.
    fn first_after(w: &Window, t_us: i64) -> i64 {
        let (s, o) = (w.slide_us as i128, w.offset_us() as i128);
        let m = (floor_div(t_us as i128 - o, s) + 1).clamp(i64::MIN as i128, i64::MAX as i128);
        (m as i64).max(w.first_index())
    }

    /// The first instance a window shows: its first one (explicit START AT), or the first
    /// beginning at or after its default START AT's cut-off; `None` for `START AT 'epoch'`
    /// (the query alone shows from the instance its first tuple falls in).
    fn first_shown(w: &Window, cutoff: Option<i64>) -> Option<i64> {
        match (w.is_bounded(), cutoff) {
            (true, _) => Some(w.first_index()),
            (false, Some(c)) => {
                let s = w.slide_us as i128;
                Some(floor_div(c as i128 - w.offset_us() as i128 + s - 1, s) as i64)
            }
            (false, None) => None,
        }
    }

    /// How `exec`'s GROUP BY keys fit the plan's: `Ok(None)` when they are equal,
    /// `Ok(Some(map))` when they are a non-empty strict subset (a roll-up member: its key
    /// `k` is the plan's key `map[k]`), else why not. Keys are compared with their types.
    fn key_fit(&self, exec: &QueryExec) -> std::result::Result<Option<Vec<usize>>, &'static str> {
        let agg = exec
            .query()
            .aggregate
            .as_ref()
            .expect("shared queries aggregate");
        if agg.group_by == self.group_by && agg.group_types == self.group_types {
            return Ok(None);
        }
        let mut map = Vec::with_capacity(agg.group_by.len());
        for (k, t) in agg.group_by.iter().zip(&agg.group_types) {
            let found = (0..self.nkeys).find(|&i| {
                self.group_by[i] == *k && self.group_types[i] == *t && !map.contains(&i)
            });
            match found {
                Some(i) => map.push(i),
                None => {
                    return Err("its GROUP BY keys are neither the plan's nor a subset of them")
                }
            }
        }
        if map.is_empty() {
            // An ungrouped query emits a row for an empty instance; a grouped plan has none.
            return Err("an ungrouped query does not roll up from grouped partials");
        }
        Ok(Some(map))
    }

    /// The coverage relation the plan must use with `exec` in it, or why it cannot take
    /// `exec`. A min/max-only query ("covered by") runs exactly in a "partitioned by" plan,
    /// whose edges are a subset. A count/sum/avg query needs "partitioned by": a plan that
    /// has not started is re-planned under it, a running one only when every edge it runs
    /// already partitions its child (then new nodes are placed under "partitioned by").
    fn class_fit(&self, exec: &QueryExec) -> std::result::Result<Sharing, &'static str> {
        let wanted = sharing_of_query(exec.query(), exec.windows());
        if wanted == self.sharing || wanted == Sharing::CoveredBy {
            return Ok(self.sharing);
        }
        debug_assert_eq!(
            wanted,
            Sharing::PartitionedBy,
            "shared queries are not None"
        );
        if !self.is_running() {
            return Ok(Sharing::PartitionedBy);
        }
        let list = self.windows.node_list();
        let partitioned = list.iter().all(|(w, parent, _)| {
            parent.is_none_or(|p| wcg::graph::relation_holds(Sharing::PartitionedBy, w, &list[p].0))
        });
        if partitioned {
            Ok(Sharing::PartitionedBy)
        } else {
            Err("the running plan merges overlapping instances (covered by), which its aggregates do not allow")
        }
    }

    /// For a roll-up member `exec` (keys a strict subset of the plan's): the model cost,
    /// in events per second of stream time at `eta_per_sec`, of `(rolling up, alone)`.
    /// Rolling up costs the plan's extra work for `exec`'s windows (the min-cost plan over
    /// the union with them, less the plan without them) plus, per closed instance of each
    /// of its windows, one merge per fine group; alone costs `exec`'s own min-cost plan,
    /// folding every tuple again. Fine groups per instance are bounded by the group ids the
    /// plan holds; before the plan has seen a tuple that number is unknown and the model
    /// assumes the worst, one group per tuple (`eta * range`), so a plan that has not
    /// started never takes a roll-up member. `None` when `exec` is not a roll-up.
    pub(crate) fn rollup_costs(&self, exec: &QueryExec, eta_per_sec: f64) -> Option<(f64, f64)> {
        if !matches!(self.key_fit(exec), Ok(Some(_))) {
            return None;
        }
        let sharing = self.class_fit(exec).unwrap_or(self.sharing);
        let (_, mut union) = self.live_windows();
        let workload = self.workload(eta_per_sec);
        let per_sec = |ws: &[Window], sharing: Sharing| {
            if ws.is_empty() {
                0.0
            } else {
                wcg::optimize_for(ws, sharing, &workload)
                    .chosen()
                    .total
                    .per_sec
            }
        };
        let base = per_sec(&union, sharing);
        union.extend_from_slice(exec.windows());
        let extra = (per_sec(&union, sharing) - base).max(0.0);
        let groups = if self.is_running() {
            self.windows.dict().len() as f64
        } else {
            f64::INFINITY
        };
        let merges: f64 = exec
            .windows()
            .iter()
            .map(|w| {
                let tuples = eta_per_sec * w.range_us as f64 / 1e6;
                groups.min(tuples) / (w.slide_us as f64 / 1e6)
            })
            .sum();
        let alone = per_sec(
            exec.windows(),
            sharing_of_query(exec.query(), exec.windows()),
        );
        Some((extra + merges, alone))
    }

    /// True when the model says that adding `exec`'s windows to the plan costs more than
    /// `exec` running alone: sharing never costs more than not sharing.
    /// Three runs of the optimizer (the plan's windows, with `exec`'s, `exec`'s alone),
    /// whatever the number of members.
    fn sharing_costs_more(&self, exec: &QueryExec, eta_per_sec: f64) -> bool {
        let workload = self.workload_with(exec, eta_per_sec);
        let cost = |ws: &[Window]| {
            wcg::optimize_for(ws, self.sharing, &workload)
                .chosen()
                .total
                .per_sec
        };
        let (_, mut union) = self.live_windows();
        let before = cost(&union);
        union.extend_from_slice(exec.windows());
        wcg::cost::clearly_less(before + cost(exec.windows()), cost(&union))
    }

    /// True when `exec` would be a roll-up member of this plan (its GROUP BY keys a
    /// non-empty strict subset of the plan's). The engine offers a query the plans with its
    /// own keys first.
    pub fn is_rollup_for(&self, exec: &QueryExec) -> bool {
        matches!(self.key_fit(exec), Ok(Some(_)))
    }

    /// Why `exec` cannot join this plan now, or `None` when it can (same share key
    /// assumed). `eta_per_sec`: the stream's event rate, for the roll-up cost rule.
    pub fn join_refusal(&self, exec: &QueryExec, eta_per_sec: f64) -> Option<&'static str> {
        if let Err(why) = self.key_fit(exec).and(self.class_fit(exec).map(|_| ())) {
            return Some(why);
        }
        if let Some((rollup, alone)) = self.rollup_costs(exec, eta_per_sec) {
            if !wcg::cost::clearly_less(rollup, alone) {
                return Some(
                    "rolling up from the plan's groups would cost more than running alone (model)",
                );
            }
        } else if !self.members.is_empty() && self.sharing_costs_more(exec, eta_per_sec) {
            return Some("sharing would cost more than running alone (model)");
        }
        if !self.is_running() {
            return None;
        }
        let sliders = self.workload_with(exec, eta_per_sec).sliders;
        if !self.windows.sliders().iter().all(|s| sliders.allows(*s)) {
            return Some(
                "an aggregate of it cannot run on the plan's sliding aggregators (Two-Stacks needs exactly associative merges, subtract-on-evict exact subtraction)",
            );
        }
        let join_point = self.join_point();
        let fits = exec
            .windows()
            .iter()
            .zip(exec.cutoffs())
            .all(|(w, c)| Self::first_shown(w, *c).is_some_and(|m| w.lower_us(m) > join_point));
        if !fits {
            return Some("a window of it begins before the plan's current time");
        }
        None
    }

    fn join_point(&self) -> i64 {
        self.max_t_us
            .unwrap_or(i64::MIN)
            .max(self.now_us.unwrap_or(i64::MIN))
    }

    /// Add query `id` (executor `exec`, which must pass [`SharedAgg::join_refusal`]) to the
    /// plan and make `exec` a member. `eta_per_sec`: the stream's event rate for the cost
    /// model. Errors: 54000 when a new window keeps more open instances than allowed.
    pub fn join(&mut self, id: u64, exec: &mut QueryExec, eta_per_sec: f64) -> Result<()> {
        debug_assert!(
            self.join_refusal(exec, eta_per_sec).is_none(),
            "checked by the caller"
        );
        let rollup = self.key_fit(exec).expect("checked by join_refusal");
        self.sharing = self.class_fit(exec).expect("checked by join_refusal");
        let defs = Self::defs_of(exec);
        let running = self.is_running();
        let mut spec_map = Vec::with_capacity(defs.len());
        for d in defs {
            let i = match self.state_index(&d) {
                Some(i) => i,
                None => {
                    // A running plan gains the state empty in every open instance; only
                    // this query reads it, from instances that begin after every tuple
                    // folded so far (join_refusal), so its values are exact.
                    if running {
                        self.windows
                            .add_spec(AggSpec::new(d.func, d.arg_type, false));
                    }
                    self.states.push(d);
                    self.states.len() - 1
                }
            };
            spec_map.push(i);
        }
        let member = self.members.len();
        let first_slot = self.slots.len();
        for (i, (w, c)) in exec.windows().iter().zip(exec.cutoffs()).enumerate() {
            self.slots.push(Some(Slot {
                member,
                window_idx: i,
                window: *w,
                cutoff: *c,
            }));
        }
        let slots: Vec<usize> = (first_slot..self.slots.len()).collect();
        self.members.push(Member {
            id,
            slots: slots.clone(),
            notice_pending: true,
            late: 0,
            started_us: None,
            rollup: rollup.clone(),
            failed: false,
        });
        self.unstarted += 1;
        self.notices_pending += 1;
        let placed = if running {
            self.extend_running(&slots, eta_per_sec)
        } else {
            self.rebuild(eta_per_sec)
        };
        if let Err(e) = placed {
            self.leave(id, eta_per_sec);
            return Err(e);
        }
        exec.become_member(spec_map, rollup);
        Ok(())
    }

    /// The live slots and their windows, for the optimizer.
    fn live_windows(&self) -> (Vec<usize>, Vec<Window>) {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s.window)))
            .unzip()
    }

    /// Re-plan for `eta_per_sec` events per second if the plan has not consumed a tuple or
    /// a heartbeat yet (exact: its instances hold nothing) and was made for another rate.
    /// True when it re-planned; the members' executors then record the new rate.
    pub(crate) fn replan_unstarted(
        &mut self,
        eta_per_sec: f64,
        members: &mut [&mut QueryExec],
    ) -> Result<bool> {
        if self.is_running() || self.planned_rate_per_sec == Some(eta_per_sec) {
            return Ok(false);
        }
        self.rebuild(eta_per_sec)?;
        for m in members {
            m.set_planned_rate(eta_per_sec);
        }
        Ok(true)
    }

    /// Re-plan a plan that has not started: every member's windows, from scratch.
    fn rebuild(&mut self, eta_per_sec: f64) -> Result<()> {
        // Renumber the slots densely (nothing refers to them before the plan runs).
        let live: Vec<Slot> = self.slots.drain(..).flatten().collect();
        for m in &mut self.members {
            m.slots.clear();
        }
        for (i, s) in live.iter().enumerate() {
            self.members[s.member].slots.push(i);
        }
        self.slots = live.into_iter().map(Some).collect();
        let windows: Vec<Window> = self.slots.iter().flatten().map(|s| s.window).collect();
        let cutoffs: Vec<Option<i64>> = self.slots.iter().flatten().map(|s| s.cutoff).collect();
        let members: Vec<Vec<usize>> = self.members.iter().map(|m| m.slots.clone()).collect();
        let (plan, _) = wcg::members::plan_members(
            &windows,
            &members,
            self.sharing,
            &self.workload(eta_per_sec),
        );
        self.planned_rate_per_sec = Some(eta_per_sec);
        self.windows = SharedWindows::new(
            &plan,
            self.specs(),
            self.nkeys,
            self.nkeys == 0,
            self.limits,
            cutoffs,
        )?;
        Ok(())
    }

    /// The cost model's view of the plan at `eta_per_sec`: its states' sliding aggregators
    /// and its groups per partial (see [`super::query::workload_of`]).
    pub(crate) fn workload(&self, eta_per_sec: f64) -> wcg::Workload {
        wcg::Workload {
            eta_per_sec,
            groups: if self.nkeys == 0 {
                wcg::Groups::One
            } else {
                self.groups
            },
            sliders: crate::agg::sliders_of(&self.specs()),
        }
    }

    /// [`SharedAgg::workload`] with `exec`'s aggregates added to the plan's.
    fn workload_with(&self, exec: &QueryExec, eta_per_sec: f64) -> wcg::Workload {
        let mut specs = self.specs();
        specs.extend(
            Self::defs_of(exec)
                .into_iter()
                .map(|d| AggSpec::new(d.func, d.arg_type, false)),
        );
        wcg::Workload {
            sliders: crate::agg::sliders_of(&specs),
            ..self.workload(eta_per_sec)
        }
    }

    fn specs(&self) -> Vec<AggSpec> {
        self.states
            .iter()
            .map(|d| AggSpec::new(d.func, d.arg_type, false))
            .collect()
    }

    /// Place the new `slots` into the running plan (see the module docs).
    fn extend_running(&mut self, new_slots: &[usize], eta_per_sec: f64) -> Result<()> {
        let join_point = self.join_point();
        let (live, windows) = self.live_windows();
        let plan = wcg::plan_for(&windows, self.sharing, &self.workload(eta_per_sec));
        let mut node_of = vec![usize::MAX; plan.nodes.len()];
        for (k, n) in plan.nodes.iter().enumerate() {
            let idx = match self.windows.node_of(&n.window) {
                Some(i) => i,
                None => {
                    let parent = n.parent.map(|p| node_of[p]);
                    let first = Self::first_after(&n.window, join_point);
                    self.windows.push_node(n.window, parent, first, n.slider)?
                }
            };
            node_of[k] = idx;
            for &u in &n.user_windows {
                let slot = live[u];
                if new_slots.contains(&slot) {
                    let s = self.slots[slot].as_ref().expect("live slot");
                    let first =
                        Self::first_shown(&s.window, s.cutoff).expect("checked by join_refusal");
                    self.windows.show_slot(idx, slot, first);
                }
            }
        }
        // A factor window of the new plan whose children all run already (they keep their
        // parents) would feed nothing: drop it rather than compute it for nobody.
        self.windows.drop_slots(&[]);
        Ok(())
    }

    /// Factor windows of the running plan that feed no node (none after a join: see
    /// [`SharedAgg::join`]).
    pub fn idle_factor_nodes(&self) -> usize {
        let nodes = self.windows.node_list();
        (0..nodes.len())
            .filter(|&i| nodes[i].2.is_empty() && !nodes.iter().any(|n| n.1 == Some(i)))
            .count()
    }

    /// Remove member `id`: its windows stop being shown and nodes that serve nobody are
    /// pruned (see the module docs). A plan that has not started is re-optimised.
    pub fn leave(&mut self, id: u64, eta_per_sec: f64) {
        let Some(mi) = self.members.iter().position(|m| m.id == id) else {
            return;
        };
        let member = self.members.remove(mi);
        if member.started_us.is_none() {
            self.unstarted -= 1;
        }
        if member.notice_pending {
            self.notices_pending -= 1;
        }
        for &s in &member.slots {
            self.slots[s] = None;
        }
        for s in self.slots.iter_mut().flatten() {
            if s.member > mi {
                s.member -= 1;
            }
        }
        if self.is_running() {
            self.windows.drop_slots(&member.slots);
        } else if self.rebuild(eta_per_sec).is_err() {
            // Fewer windows than a plan that was accepted cannot exceed a limit.
            debug_assert!(false, "a smaller plan fits the limits");
        }
    }

    /// The running plan's nodes, parents before children.
    pub(crate) fn nodes(&self) -> Vec<NodeInfo> {
        let counters = &self.windows.counters;
        self.windows
            .node_list()
            .into_iter()
            .enumerate()
            .map(|(i, (window, parent, users))| {
                let of_node: Vec<&Member> = users
                    .iter()
                    .filter_map(|&u| self.slots.get(u).cloned().flatten())
                    .map(|s| &self.members[s.member])
                    .collect();
                let ids = |rollups_only: bool| {
                    let mut ids: Vec<u64> = of_node
                        .iter()
                        .filter(|m| !rollups_only || m.rollup.is_some())
                        .map(|m| m.id)
                        .collect();
                    ids.sort_unstable();
                    ids.dedup();
                    ids
                };
                let (queries, rollups) = (ids(false), ids(true));
                NodeInfo {
                    window,
                    factor: users.is_empty(),
                    parent,
                    queries,
                    rollups,
                    tuples_folded: counters.tuples_folded.get(i).copied().unwrap_or(0),
                    partials_merged: counters.partials_merged.get(i).copied().unwrap_or(0),
                }
            })
            .collect()
    }

    /// The plan the running nodes form, for the cost model.
    pub(crate) fn plan(&self) -> SharedPlan {
        let sliders = self.windows.sliders();
        SharedPlan {
            nodes: self
                .windows
                .node_list()
                .into_iter()
                .zip(sliders)
                .map(|((window, parent, user_windows), slider)| wcg::PlanNode {
                    window,
                    user_windows,
                    parent,
                    slider,
                })
                .collect(),
        }
    }

    /// The model cost (paper section 3.2, events per second of stream time at
    /// `eta_per_sec`) of the members plus `extra` (a query's windows about to join, empty
    /// for none): `(shared, alone)`, where `shared` is the plan over the union of their
    /// windows ([`wcg::members::plan_members`]: never above `alone`) and `alone` the sum of
    /// each query's own min-cost plan.
    pub(crate) fn model_costs(&self, extra: &[Window], eta_per_sec: f64) -> (f64, f64) {
        let mut sets = self.member_windows();
        if !extra.is_empty() {
            sets.push(extra.to_vec());
        }
        let union: Vec<Window> = sets.iter().flatten().copied().collect();
        let mut next = 0;
        let slots: Vec<Vec<usize>> = sets
            .iter()
            .map(|ws| {
                next += ws.len();
                (next - ws.len()..next).collect()
            })
            .collect();
        let workload = self.workload(eta_per_sec);
        let (_, shared) = wcg::members::plan_members(&union, &slots, self.sharing, &workload);
        let alone = sets
            .iter()
            .map(|ws| {
                wcg::optimize_for(ws, self.sharing, &workload)
                    .chosen()
                    .total
                    .per_sec
            })
            .sum();
        (shared, alone)
    }

    /// The state the plan holds now (shared by all its members).
    pub(crate) fn state(&self) -> super::StateSummary {
        super::StateSummary {
            open_instances: self.windows.open_instances(),
            groups: self.windows.dict().len(),
            state_bytes: self.windows.state_bytes(),
        }
    }

    /// The members whose finalisation failed since the last call, with their errors
    /// (drained). They receive no more instances; the caller ends them and removes them
    /// with [`SharedAgg::leave`].
    pub(crate) fn take_member_errors(&mut self) -> Vec<(u64, crate::error::Error)> {
        std::mem::take(&mut self.member_errors)
    }

    /// The number of aggregate states the plan folds per group.
    pub fn aggregate_states(&self) -> usize {
        self.states.len()
    }

    /// The ids of the members that roll up from the plan's finer groups.
    pub fn rollup_members(&self) -> Vec<u64> {
        self.members
            .iter()
            .filter(|m| m.rollup.is_some())
            .map(|m| m.id)
            .collect()
    }

    /// The coverage relation of the plan's edges.
    pub(crate) fn sharing(&self) -> Sharing {
        self.sharing
    }

    /// Every live member window, once per member (the unshared baseline runs each query
    /// alone).
    pub(crate) fn member_windows(&self) -> Vec<Vec<Window>> {
        self.members
            .iter()
            .map(|m| {
                m.slots
                    .iter()
                    .filter_map(|&s| self.slots[s].as_ref().map(|s| s.window))
                    .collect()
            })
            .collect()
    }

    /// Consume a batch in arrival order. `members[i]` is the executor of the member
    /// `member_ids()[i]`, `outs[i]` receives its events. An error (a limit, an expression
    /// error in the shared WHERE, keys or arguments) ends every member.
    pub fn push_batch(
        &mut self,
        batch: &Batch,
        members: &mut [&mut QueryExec],
        outs: &mut [Vec<Event>],
    ) -> Result<()> {
        debug_assert_eq!(members.len(), self.members.len(), "one executor per member");
        self.plan_for_groups(batch)?;
        let n = batch.len() as u64;
        let result = match batch {
            Batch::Rows(b) => self.push_rows(b, members, outs),
            Batch::Columns(b) => self.push_columns(b, members, outs),
        };
        for (m, exec) in self.members.iter_mut().zip(members.iter_mut()) {
            exec.member_progress(n, m.late, m.started_us, self.now_us);
            m.late = 0;
        }
        result
    }

    /// Before a grouped plan's first tuple: estimate its groups from `batch` (at least
    /// [`super::query::GROUP_SAMPLE_MIN`] tuples) and re-plan for them (exact: nothing has
    /// been folded). Once per plan.
    fn plan_for_groups(&mut self, batch: &Batch) -> Result<()> {
        if self.groups_sampled || self.nkeys == 0 || self.is_running() {
            self.groups_sampled = true;
            return Ok(());
        }
        self.groups_sampled = true;
        let sampled =
            super::query::sample_groups(batch, &self.group_by, None, &self.hasher, &self.params);
        if let Some(groups) = sampled {
            self.groups = groups;
            self.rebuild(self.planned_rate_per_sec.unwrap_or(1.0))?;
        }
        Ok(())
    }

    /// Move current time to `t_us` without a tuple (heartbeat, server clock).
    pub(crate) fn heartbeat(
        &mut self,
        t_us: i64,
        members: &mut [&mut QueryExec],
        outs: &mut [Vec<Event>],
    ) -> Result<()> {
        let t = t_us.saturating_sub(self.slack_us);
        if self.now_us.is_none_or(|now| t > now) {
            self.advance(t, members, outs)?;
        }
        for (m, exec) in self.members.iter().zip(members.iter_mut()) {
            exec.member_progress(0, 0, m.started_us, self.now_us);
        }
        Ok(())
    }

    fn push_rows(
        &mut self,
        batch: &RowBatch,
        members: &mut [&mut QueryExec],
        outs: &mut [Vec<Event>],
    ) -> Result<()> {
        for i in 0..batch.len() {
            let t = batch.times[i];
            let row = batch.row(i);
            let time = t.saturating_sub(self.slack_us);
            if self.now_us.is_none_or(|now| time > now) {
                self.advance(time, members, outs)?;
            }
            self.max_t_us = Some(self.max_t_us.map_or(t, |m| m.max(t)));
            let in_order = self.now_us.is_some_and(|now| t >= now);
            let ctx = EvalContext {
                row,
                params: &self.params,
                window: None,
                now_us: 0,
                session: None,
                lazy: None,
            };
            if let Some(f) = &self.filter {
                if !matches!(eval(f, &ctx)?, Value::Bool(true)) {
                    continue;
                }
            }
            self.keybuf.clear();
            for k in &self.group_by {
                self.keybuf.push(match k {
                    Expr::Column(c) => row[*c].clone(),
                    _ => eval(k, &ctx)?,
                });
            }
            self.argbuf.clear();
            for s in &self.states {
                self.argbuf.push(match &s.arg {
                    None => Value::Bool(true),
                    Some(Expr::Column(c)) => row[*c].clone(),
                    Some(e) => eval(e, &ctx)?,
                });
            }
            let hash = self.hasher.hash(&self.keybuf);
            let gid = self.windows.intern(hash, &self.keybuf);
            if self.windows.fold(t, gid, &self.argbuf, in_order)? {
                self.count_late();
            }
            if self.notices_pending > 0 {
                self.notices(t, members, outs);
            }
        }
        Ok(())
    }

    /// The columnar path (as [`QueryExec::push_columns`]): when every key and argument is a
    /// plain column, the WHERE (if any) a column-constant comparison and every state
    /// infallible, runs of in-order tuples that close no instance go through the typed
    /// kernels; every other tuple is folded on its own as a row. Otherwise the batch is
    /// read as rows.
    fn push_columns(
        &mut self,
        batch: &ColumnBatch,
        members: &mut [&mut QueryExec],
        outs: &mut [Vec<Event>],
    ) -> Result<()> {
        let nstates = (self.states.len(), self.windows.specs().len());
        let plan = match self.columnar.take() {
            Some((n, plan)) if n == nstates => plan,
            _ => {
                let args: Vec<Option<&Expr>> = self.states.iter().map(|s| s.arg.as_ref()).collect();
                ColumnarPlan::new(&self.group_by, &args, self.filter.as_ref(), &self.types)
                    .filter(|_| self.windows.specs().iter().all(kernels::infallible))
            }
        };
        let result = match &plan {
            Some(plan) => self.push_columns_with(plan, batch, members, outs),
            None => self.push_rows(&batch.to_rows(), members, outs),
        };
        self.columnar = Some((nstates, plan));
        result
    }

    /// [`SharedAgg::push_columns`] along columnar plan `plan`.
    fn push_columns_with(
        &mut self,
        plan: &ColumnarPlan,
        batch: &ColumnBatch,
        members: &mut [&mut QueryExec],
        outs: &mut [Vec<Event>],
    ) -> Result<()> {
        let views = batch.views();
        let mut i = 0;
        // The tuple whose time this loop last moved current time to.
        let mut advanced_for = None;
        while i < batch.len() {
            let run = match self.now_us {
                Some(now) if self.unstarted == 0 => kernels::in_order_run(
                    &batch.times[i..],
                    now,
                    self.slack_us,
                    self.windows.next_end_us(),
                ),
                _ => 0,
            };
            if run > 0 {
                self.fold_run(&views, plan, &batch.times, i..i + run, members, outs)?;
                i += run;
                continue;
            }
            // An in-order tuple that closes instances moves current time first, as the row
            // path does, and then starts the next run: with short windows most runs end at
            // such a tuple, which no longer takes the row path.
            let t = batch.times[i];
            let time = t.saturating_sub(self.slack_us);
            if self.unstarted == 0
                && advanced_for != Some(i)
                && self.now_us.is_some_and(|now| t >= now && time > now)
            {
                self.advance(time, members, outs)?;
                advanced_for = Some(i);
                continue;
            }
            let mut row = std::mem::take(&mut self.rowbuf);
            row.ncols = views.len();
            row.values.clear();
            row.values.extend(views.iter().map(|v| v.value(i)));
            row.times.clear();
            row.times.push(batch.times[i]);
            let result = self.push_rows(&row, members, outs);
            self.rowbuf = row;
            result?;
            i += 1;
        }
        Ok(())
    }

    /// Fold the run `rows` with the kernels; current time, the latest timestamp and the
    /// members' NOTICEs end as folding the tuples one at a time leaves them, also when a
    /// limit stops the run.
    fn fold_run(
        &mut self,
        views: &[ColumnView],
        plan: &ColumnarPlan,
        times: &[i64],
        rows: Range<usize>,
        members: &mut [&mut QueryExec],
        outs: &mut [Vec<Event>],
    ) -> Result<()> {
        let result = kernels::fold_run(
            &mut self.windows,
            &self.hasher,
            plan,
            views,
            times,
            rows.clone(),
            &mut self.bufs,
        );
        // The row path moves time for the failing tuple too, but gives no NOTICE for it.
        let (counted, noted) = match &result {
            Ok(()) => (rows.len(), self.bufs.sel.len()),
            Err((k, _)) => (self.bufs.sel[*k] as usize - rows.start + 1, *k),
        };
        let seen = &times[rows.start..rows.start + counted];
        if let Some(&max_t) = seen.iter().max() {
            self.max_t_us = Some(self.max_t_us.map_or(max_t, |m| m.max(max_t)));
            self.now_us = self.now_us.max(Some(max_t.saturating_sub(self.slack_us)));
        }
        if self.notices_pending > 0 {
            let noted: Vec<i64> = self.bufs.sel[..noted]
                .iter()
                .map(|&i| times[i as usize])
                .collect();
            for t in noted {
                if self.notices_pending > 0 {
                    self.notices(t, members, outs);
                }
            }
        }
        result.map_err(|(_, e)| e)
    }

    /// Charge a late tuple to each member whose window missed an instance.
    fn count_late(&mut self) {
        let nodes = self.windows.take_late_nodes();
        let list = self.windows.node_list();
        let mut hit = vec![false; self.members.len()];
        for n in nodes {
            for &u in &list[n].2 {
                if let Some(s) = self.slots.get(u).cloned().flatten() {
                    hit[s.member] = true;
                }
            }
        }
        for (m, h) in self.members.iter_mut().zip(hit) {
            m.late += h as u64;
        }
    }

    fn notices(&mut self, t: i64, members: &mut [&mut QueryExec], outs: &mut [Vec<Event>]) {
        for (i, m) in self.members.iter_mut().enumerate() {
            if m.notice_pending && !members[i].member_tuple(t, &mut outs[i]) {
                m.notice_pending = false;
                self.notices_pending -= 1;
            }
        }
    }

    /// Hand one slide event's closed instances to the members that show them. A member's
    /// own finalisation error ends that member alone; the plan and the other members run on.
    fn member_events(
        &mut self,
        closed: &[ClosedInstance],
        members: &mut [&mut QueryExec],
        outs: &mut [Vec<Event>],
    ) {
        let mut per = std::mem::take(&mut self.picks);
        per.resize_with(self.members.len(), Vec::new);
        for list in per.iter_mut() {
            list.clear();
        }
        for (ci, inst) in closed.iter().enumerate() {
            for &u in &inst.user_windows {
                if let Some(s) = &self.slots[u] {
                    per[s.member].push((s.window_idx, ci));
                }
            }
        }
        let (dict, specs) = (self.windows.dict(), self.windows.specs());
        for (i, list) in per.iter_mut().enumerate() {
            if list.is_empty() || self.members[i].failed {
                continue;
            }
            if let Err(e) = members[i].member_event(closed, list, dict, specs, &mut outs[i]) {
                self.members[i].failed = true;
                self.member_errors.push((self.members[i].id, e));
            }
        }
        self.picks = per;
    }

    /// `events` slide events after the one `closed` holds, each of the same tables with
    /// its bounds moved by one more slide ([`SharedWindows::skip_quiet_events`]), to the
    /// members that showed it: a member repeats its last event's rows at once where it
    /// can ([`QueryExec::repeat_event`]), else it is given the event itself.
    fn member_repeats(
        &mut self,
        closed: &mut [ClosedInstance],
        events: u64,
        members: &mut [&mut QueryExec],
        outs: &mut [Vec<Event>],
    ) {
        let step_us = closed[0].window.slide_us;
        debug_assert!(closed.iter().all(|c| c.window.slide_us == step_us));
        let mut per = std::mem::take(&mut self.picks);
        let mut done = std::mem::take(&mut self.repeats_done);
        done.clear();
        // Members that did not show the event (or failed) have nothing to repeat.
        done.extend(per.iter().zip(&self.members).map(|(list, m)| {
            if list.is_empty() || m.failed {
                events
            } else {
                0
            }
        }));
        let (mut at, mut shifted) = (0u64, 0u64);
        while at < events {
            for i in 0..done.len() {
                if self.members[i].failed {
                    done[i] = events;
                }
                if done[i] != at {
                    continue;
                }
                let n = members[i].repeat_event(events - at, step_us, &mut outs[i]);
                if n > 0 {
                    done[i] = at + n;
                    continue;
                }
                // The next event in full: the closed instances moved to its bounds.
                let by = i64::try_from(at + 1 - shifted).unwrap_or(i64::MAX);
                ClosedInstance::shift_all(closed, by);
                shifted = at + 1;
                let (dict, specs) = (self.windows.dict(), self.windows.specs());
                if let Err(e) =
                    members[i].member_event(closed, &mut per[i], dict, specs, &mut outs[i])
                {
                    self.members[i].failed = true;
                    self.member_errors.push((self.members[i].id, e));
                }
                done[i] = at + 1;
            }
            at = done.iter().copied().min().unwrap_or(events);
        }
        self.picks = per;
        self.repeats_done = done;
    }

    fn advance(
        &mut self,
        t_us: i64,
        members: &mut [&mut QueryExec],
        outs: &mut [Vec<Event>],
    ) -> Result<()> {
        self.now_us = Some(t_us);
        if self.unstarted > 0 {
            for m in self.members.iter_mut().filter(|m| m.started_us.is_none()) {
                m.started_us = Some(t_us);
            }
            self.unstarted = 0;
        }
        self.windows.advance_to(t_us);
        // One slide event at a time, each emitted before the next closes (see
        // `QueryExec::advance`).
        let skipped = loop {
            let mut closed = match self.windows.next_event(t_us)? {
                Step::Done(skipped) => break skipped,
                Step::Event(closed) => closed,
            };
            if !closed.is_empty() {
                self.member_events(&closed, members, outs);
                let quiet = self.windows.skip_quiet_events(t_us);
                if quiet > 0 {
                    self.member_repeats(&mut closed, quiet, members, outs);
                }
            }
            self.windows.recycle(closed);
        };
        self.windows.maybe_compact();
        if let Some(s) = skipped {
            for out in outs.iter_mut() {
                out.push(Event::Notice(format!(
                    "current time jumped to {}: {} empty slide events from the window ending at {} on were not emitted (empty_slide_events_max)",
                    crate::time::format_timestamp(s.to_us),
                    s.slide_events,
                    crate::time::format_timestamp(s.from_us)
                )));
            }
        }
        Ok(())
    }
}
