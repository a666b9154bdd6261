//! Shared window aggregation along a min-cost window coverage graph.
//!
//! [`SharedWindows`] runs a [`SharedPlan`]: a forest of windows in topological order. A root
//! window folds raw tuples into the per-group partial states of every open instance that
//! contains the tuple; when an instance closes, its partial goes to each child window, which
//! merges it into every open child instance the parent instance lies inside (the `M(W, W')`
//! consecutive partials of paper Theorem 3). User-visible windows hand closed instances to
//! the caller for finalisation; factor windows never do.
//!
//! Time is a frontier (timely's habit): `base_m` is the index of a node's next instance to
//! close; every instance below it has closed and its state is gone. [`SharedWindows::advance`]
//! moves the frontier to a new current time, one slide event per distinct instance end, in
//! time order, parents before children at the same instant.
//!
//! Copy on write: a closed instance's table is shared ([`Arc`]) by every reader it goes to,
//! the user windows that show it and the child instances it is the first partial of. A
//! child instance copies it only when a second partial (or a late tuple) must be merged in
//! while another reader still holds it; the last reader takes it whole. So an instance
//! that is one parent partial costs no copy at all, and a hopping window's newest instance
//! costs at most one.
//!
//! Sliding aggregators: a node whose edge the plan gave a sliding aggregator
//! ([`crate::wcg::Slider`]) keeps no open instances; its parent's partials enter the
//! aggregator as they close and each of its instances is the aggregate of the partials that
//! cover it when it closes (`exec::slide`).
//!
//! Late tuples: a tuple is folded into every instance that has not yet closed. When the
//! parent's instance holding the tuple has closed already but the child's has not, the tuple
//! is folded straight into the child, so the shared plan gives exactly the rows of each
//! window computed on its own (the property the differential tests check).

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use super::group::{GroupDict, GroupTable};
use super::slide::Slide;
use crate::agg::{Acc, AggSpec};
use crate::error::{Error, Result};
use crate::types::Value;
use crate::wcg::{SharedPlan, Slider};
use crate::window::{floor_div, Window};

/// What [`SharedWindows::fold_in_order`] calls per piece of a run and instance:
/// `kernel(accs, specs, slots, rows)` folds the piece's arguments into the instance's states,
/// row `rows.start + k` into slot `slots[k]`, or every row into `slots[0]` when `slots`
/// holds one slot.
pub(crate) type Kernel<'a> = dyn FnMut(&mut [Acc], &[AggSpec], &[u32], Range<usize>) + 'a;

/// Real work done, per plan node, for `EXPLAIN ANALYZE`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct WorkCounters {
    /// Tuple folds into instances of each node (a tuple in 6 instances counts 6).
    pub(crate) tuples_folded: Vec<u64>,
    /// Partials merged into instances of each node (one per parent instance per child
    /// instance).
    pub(crate) partials_merged: Vec<u64>,
}

/// The user windows a closed instance is shown to: one or two held inline (a slide event
/// allocates nothing for them), more on the heap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct UserWindows {
    inline: [usize; 2],
    len: usize,
    more: Vec<usize>,
}

impl UserWindows {
    /// Add user window `u`.
    pub(crate) fn push(&mut self, u: usize) {
        if self.more.is_empty() && self.len < self.inline.len() {
            self.inline[self.len] = u;
            self.len += 1;
            return;
        }
        if self.more.is_empty() {
            self.more.extend_from_slice(&self.inline[..self.len]);
        }
        self.more.push(u);
    }
}

impl std::ops::Deref for UserWindows {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        if self.more.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.more
        }
    }
}

impl<'a> IntoIterator for &'a UserWindows {
    type Item = &'a usize;
    type IntoIter = std::slice::Iter<'a, usize>;

    fn into_iter(self) -> Self::IntoIter {
        self[..].iter()
    }
}

/// One step of [`SharedWindows::next_event`].
pub(crate) enum Step {
    /// A slide event at this instant: the user instances that closed (possibly none, when
    /// only factor windows or instances not shown closed). Hand the vector back with
    /// [`SharedWindows::recycle`] to reuse it.
    Event(Vec<ClosedInstance>),
    /// Current time is reached; what the empty-run limit skipped, if anything.
    Done(Option<Skipped>),
}

/// An instance of a user-visible window that has closed and is ready to emit.
#[derive(Clone)]
pub(crate) struct ClosedInstance {
    /// Indices of the user windows (in the query's window list) this instance belongs to.
    pub(crate) user_windows: UserWindows,
    /// The window.
    pub(crate) window: Window,
    /// Instance bounds `[lower_us, upper_us)`.
    pub(crate) lower_us: i64,
    /// Exclusive upper bound; the slide event's instant (wtime).
    pub(crate) upper_us: i64,
    /// Its groups and partial states (shared with the child instances it went to).
    pub(crate) groups: Arc<GroupTable>,
}

impl ClosedInstance {
    /// Move the bounds of each of `closed` `slides` slides of its window later (saturating):
    /// the instances of a slide event a quiet run skipped to.
    pub(crate) fn shift_all(closed: &mut [ClosedInstance], slides: i64) {
        for c in closed {
            let d = slides.saturating_mul(c.window.slide_us);
            c.lower_us = c.lower_us.saturating_add(d);
            c.upper_us = c.upper_us.saturating_add(d);
        }
    }
}

/// An open instance's partial states: its own, or the closed parent instance it started
/// from, shared until something else is merged or folded into it (see the module's
/// "copy on write").
#[derive(Clone, Debug)]
enum Instance {
    Own(GroupTable),
    Shared(Arc<GroupTable>),
}

impl Default for Instance {
    fn default() -> Self {
        Instance::Own(GroupTable::new())
    }
}

impl Instance {
    fn get(&self) -> &GroupTable {
        match self {
            Instance::Own(t) => t,
            Instance::Shared(t) => t,
        }
    }

    /// The instance's own table: a shared one is taken whole when no other reader holds
    /// it, else copied (with room for `groups_hint` groups, so merges that follow do not
    /// grow it).
    fn get_mut(&mut self, naggs: usize, groups_hint: usize) -> &mut GroupTable {
        if let Instance::Shared(t) = self {
            let t = std::mem::take(t);
            *self = Instance::Own(
                Arc::try_unwrap(t).unwrap_or_else(|t| t.clone_with_room(naggs, groups_hint)),
            );
        }
        match self {
            Instance::Own(t) => t,
            Instance::Shared(_) => unreachable!("made own above"),
        }
    }

    /// The instance's table, shared: an own one moves into a box from `spares`.
    fn into_shared(self, spares: &mut Spares) -> Arc<GroupTable> {
        match self {
            Instance::Own(t) => spares.share(t),
            Instance::Shared(t) => t,
        }
    }
}

/// Tables at most this large (capacity, [`GroupTable::heap_bytes`]) are kept for reuse.
const SPARE_TABLE_BYTES: usize = 1 << 16;
/// Tables, and boxes, kept for reuse.
const SPARES_MAX: usize = 4;

/// Emptied tables of closed instances that nobody holds any more, and the reference-counted
/// boxes they were shared in, for the next instances to open and close: a plan whose panes
/// close at every slide event (a long window sliding often) then allocates nothing per
/// event. At most [`SPARES_MAX`] of each, tables of at most [`SPARE_TABLE_BYTES`].
#[derive(Clone, Debug, Default)]
struct Spares {
    /// Empty tables, their vectors' room kept.
    tables: Vec<GroupTable>,
    /// Boxes nobody else holds, each with an empty table that owns no heap.
    boxes: Vec<Arc<GroupTable>>,
}

impl Spares {
    /// An empty table: a spare one, else one with room for `groups` groups of `naggs`.
    fn table(&mut self, naggs: usize, groups: usize) -> GroupTable {
        self.tables
            .pop()
            .unwrap_or_else(|| GroupTable::with_capacity(naggs, groups))
    }

    /// `t` shared, in a spare box when there is one.
    fn share(&mut self, t: GroupTable) -> Arc<GroupTable> {
        match self.boxes.pop() {
            Some(mut b) => match Arc::get_mut(&mut b) {
                Some(slot) => {
                    *slot = t;
                    b
                }
                None => Arc::new(t),
            },
            None => Arc::new(t),
        }
    }

    /// Keep `t`'s table (emptied) and box when nobody else holds them and there is room;
    /// else just drop this reference.
    fn reclaim(&mut self, mut t: Arc<GroupTable>) {
        if self.boxes.len() >= SPARES_MAX {
            return;
        }
        let Some(table) = Arc::get_mut(&mut t) else {
            return;
        };
        let mut table = std::mem::take(table);
        if self.tables.len() < SPARES_MAX && table.heap_bytes() <= SPARE_TABLE_BYTES {
            table.clear();
            self.tables.push(table);
        }
        self.boxes.push(t);
    }

    /// Bytes the spare tables hold (capacity).
    fn heap_bytes(&self) -> usize {
        self.tables.iter().map(GroupTable::heap_bytes).sum()
    }
}

/// What one call of [`SharedWindows::advance`] skipped under the empty-run limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Skipped {
    /// Empty slide events not emitted.
    pub(crate) slide_events: u64,
    /// First and last instant skipped over.
    pub(crate) from_us: i64,
    /// Up to this instant.
    pub(crate) to_us: i64,
}

#[derive(Clone)]
struct Node {
    window: Window,
    parent: Option<usize>,
    children: Vec<usize>,
    user_windows: Vec<usize>,
    base_m: i64,
    /// The end of instance `base_m` (the next to close), kept with `base_m`.
    end_us: i64,
    open: VecDeque<Instance>,
    /// Groups in the last instance that closed: the capacity of the next one.
    groups_hint: usize,
    /// The node's sliding aggregator over its parent's partials; `None` for panes, which
    /// keep `open` instead.
    slide: Option<Slide>,
}

/// 54000 when `w` keeps more instances open than `open_max` allows (panes only: a sliding
/// aggregator keeps none).
fn check_span(w: &Window, open_max: usize) -> Result<()> {
    let span = (w.range_us as i128 + w.slide_us as i128 - 1) / w.slide_us as i128 + 1;
    if span > open_max as i128 {
        return Err(Error::ProgramLimitExceeded(format!(
            "window {w} keeps {span} instances open; the limit is {open_max} (open_instances_max)"
        )));
    }
    Ok(())
}

impl Node {
    fn next_end(&self) -> i64 {
        self.end_us
    }

    /// Move the frontier: instance `m` is the next to close.
    fn set_base(&mut self, m: i64) {
        self.base_m = m;
        self.end_us = self.window.upper_us(m);
    }

    /// Open instance `m`, its own table (to fold or merge into), created empty (a spare
    /// one, else with room for as many groups as the last instance that closed had).
    fn instance_mut(
        &mut self,
        m: i64,
        naggs: usize,
        open_max: usize,
        spares: &mut Spares,
    ) -> Result<&mut GroupTable> {
        let hint = self.groups_hint;
        let inst =
            self.instance_entry(m, open_max, |_| Instance::Own(spares.table(naggs, hint)))?;
        Ok(inst.get_mut(naggs, hint))
    }

    /// Open instance `m` as it is; a missing one (and any before it) is made by `make`.
    fn instance_entry(
        &mut self,
        m: i64,
        open_max: usize,
        mut make: impl FnMut(usize) -> Instance,
    ) -> Result<&mut Instance> {
        debug_assert!(m >= self.base_m, "instances below the frontier have closed");
        let idx = (m - self.base_m) as usize;
        if idx >= open_max {
            return Err(Error::ProgramLimitExceeded(format!(
                "window {} would keep more than {open_max} open instances (open_instances_max)",
                self.window
            )));
        }
        while self.open.len() <= idx {
            self.open.push_back(make(self.open.len()));
        }
        Ok(&mut self.open[idx])
    }
}

/// Dictionary size below which group ids are never compacted.
const COMPACT_MIN: usize = 1 << 16;

/// Limits the executor enforces.
#[derive(Clone, Copy, Debug)]
pub struct ExecLimits {
    /// Groups per instance.
    pub groups_max: usize,
    /// Open instances per window.
    pub open_instances_max: usize,
    /// Consecutive empty slide events emitted per advance before the rest are skipped.
    pub empty_slide_events_max: u64,
    /// Distinct values per DISTINCT aggregate state (group and instance).
    pub distinct_values_max: usize,
    /// Bytes (counting each value as `size_of::<Value>()`) that a block of several small
    /// slide events stays under; 0: every event has a block of its own. The engine sets
    /// it to 1/64 of `output_queue_bytes`, so such a block is a small part of what the
    /// reader's queue holds and the queue's bound works as it does event by event.
    pub coalesce_bytes: usize,
}

/// The running state of a query's windows.
#[derive(Clone)]
pub(crate) struct SharedWindows {
    nodes: Vec<Node>,
    specs: Vec<AggSpec>,
    dict: GroupDict,
    compact_at: usize,
    emit_empty: bool,
    limits: ExecLimits,
    started: bool,
    cutoffs: Vec<Option<i64>>,
    /// Per user window: the first instance index it shows (set when time starts).
    shown_from: Vec<i64>,
    /// Measured work.
    pub(crate) counters: WorkCounters,
    /// Nodes whose closed instances the last late tuples missed (see
    /// [`SharedWindows::take_late_nodes`]).
    late_nodes: Vec<usize>,
    /// The table every empty closed instance shares.
    empty: Arc<GroupTable>,
    /// The vector of closed instances the next slide event fills ([`Step::Event`]).
    closed_buf: Vec<ClosedInstance>,
    /// Tables and boxes of closed instances, for the next ones.
    spares: Spares,
    /// Consecutive empty slide events in the current advance.
    empty_run: u64,
}

impl SharedWindows {
    /// State for `plan`, aggregating `specs` per group of `nkeys` key values. `emit_empty`:
    /// empty instances still produce a slide event (ungrouped aggregates emit one row).
    ///
    /// Errors: 54000 when a window keeps more open instances than the limit allows.
    ///
    /// `cutoffs[i]`: user window `i` is an epoch grid shown only from this instant on (a
    /// default START AT); instances starting earlier are computed for sharing but never shown.
    pub(crate) fn new(
        plan: &SharedPlan,
        specs: Vec<AggSpec>,
        nkeys: usize,
        emit_empty: bool,
        limits: ExecLimits,
        cutoffs: Vec<Option<i64>>,
    ) -> Result<SharedWindows> {
        let mut specs = specs;
        for spec in &mut specs {
            spec.distinct_values_max = limits.distinct_values_max;
        }
        let mut nodes: Vec<Node> = plan
            .nodes
            .iter()
            .map(|n| Node {
                window: n.window,
                parent: n.parent,
                children: Vec::new(),
                user_windows: n.user_windows.clone(),
                base_m: n.window.first_index(),
                end_us: n.window.upper_us(n.window.first_index()),
                open: VecDeque::new(),
                groups_hint: 0,
                slide: n.parent.and_then(|_| Slide::new(n.slider)),
            })
            .collect();
        for i in 0..nodes.len() {
            if let Some(p) = nodes[i].parent {
                assert!(p < i, "plan nodes are in topological order");
                nodes[p].children.push(i);
            }
            if nodes[i].slide.is_none() {
                check_span(&nodes[i].window, limits.open_instances_max)?;
            }
        }
        let n = nodes.len();
        Ok(SharedWindows {
            nodes,
            specs,
            dict: GroupDict::new(nkeys),
            compact_at: COMPACT_MIN,
            emit_empty,
            limits,
            started: false,
            shown_from: vec![
                i64::MIN;
                plan.nodes
                    .iter()
                    .flat_map(|n| n.user_windows.iter().map(|u| u + 1))
                    .max()
                    .unwrap_or(0)
                    .max(cutoffs.len())
            ],
            cutoffs,
            counters: WorkCounters {
                tuples_folded: vec![0; n],
                partials_merged: vec![0; n],
            },
            late_nodes: Vec::new(),
            empty: Arc::default(),
            closed_buf: Vec::new(),
            spares: Spares::default(),
            empty_run: 0,
        })
    }

    /// The aggregate specs.
    pub(crate) fn specs(&self) -> &[AggSpec] {
        &self.specs
    }

    /// Current time became defined at `now_us` (first tuple): epoch grids start with the
    /// first instance that ends after it; bounded grids start at their first instance.
    fn start(&mut self, now_us: i64) {
        // Which instance each user window shows first.
        let mut need_us = vec![i64::MAX; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            let w = node.window;
            for &u in &node.user_windows {
                let first = match (w.is_bounded(), self.cutoffs.get(u).copied().flatten()) {
                    (true, _) => w.first_index(),
                    (false, Some(c)) => {
                        floor_div(c as i128 + w.slide_us as i128 - 1, w.slide_us as i128) as i64
                    }
                    (false, None) => w.next_closing_index(now_us),
                };
                self.shown_from[u] = first;
                need_us[i] = need_us[i].min(w.lower_us(first));
            }
        }
        // A node computes from the earliest instant any node below it shows.
        for i in (0..self.nodes.len()).rev() {
            if let Some(p) = self.nodes[i].parent {
                need_us[p] = need_us[p].min(need_us[i]);
            }
        }
        for (node, need) in self.nodes.iter_mut().zip(need_us) {
            if !node.window.is_bounded() {
                let s = node.window.slide_us as i128;
                let after_now = node.window.next_closing_index(now_us);
                node.set_base(if need == i64::MAX {
                    after_now
                } else {
                    after_now.min(floor_div(need as i128 + s - 1, s) as i64)
                });
            }
        }
        self.started = true;
    }

    fn all_empty(&self) -> bool {
        self.nodes.iter().all(|n| {
            n.open.iter().all(|t| t.get().is_empty())
                && n.slide.as_ref().is_none_or(Slide::is_empty)
        })
    }

    /// The earliest end among the nodes' next instances.
    fn next_end(&self) -> i64 {
        self.nodes
            .iter()
            .map(Node::next_end)
            .min()
            .unwrap_or(i64::MAX)
    }

    /// Move current time to `now_us`: close, in end order, every instance whose end is
    /// `<= now_us`. `sink` receives each slide event's closed user instances (possibly none
    /// when `emit_empty` is false and nothing had data). Returns what the empty-run limit
    /// skipped, if anything.
    #[cfg(test)]
    pub(crate) fn advance(
        &mut self,
        now_us: i64,
        sink: &mut dyn FnMut(Vec<ClosedInstance>) -> Result<bool>,
    ) -> Result<Option<Skipped>> {
        self.advance_to(now_us);
        loop {
            match self.next_event(now_us)? {
                Step::Done(skipped) => return Ok(skipped),
                Step::Event(closed) => {
                    if !sink(closed)? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Begin moving current time to `now_us` ([`SharedWindows::next_event`] then gives its
    /// slide events one at a time, so that each can be emitted, and its tables reused,
    /// before the next closes).
    pub(crate) fn advance_to(&mut self, now_us: i64) {
        if !self.started {
            self.start(now_us);
        }
        self.empty_run = 0;
    }

    /// The next slide event up to `now_us` (after [`SharedWindows::advance_to`]), or
    /// `Done` once current time is reached.
    pub(crate) fn next_event(&mut self, now_us: i64) -> Result<Step> {
        let e = self.next_end();
        if e > now_us || e == i64::MAX {
            return Ok(Step::Done(None));
        }
        if self.all_empty() {
            if !self.emit_empty {
                self.skip_to(now_us);
                return Ok(Step::Done(None));
            }
            self.empty_run += 1;
            if self.empty_run > self.limits.empty_slide_events_max {
                let skipped = self.count_user_ends(e, now_us);
                self.skip_to(now_us);
                return Ok(Step::Done(Some(Skipped {
                    slide_events: skipped,
                    from_us: e,
                    to_us: now_us,
                })));
            }
        }
        let closed = self.close_at(e)?;
        Ok(Step::Event(closed))
    }

    /// Give back an event's vector of closed instances (emitted), so that the next event
    /// reuses it, and the tables it held can be refilled.
    pub(crate) fn recycle(&mut self, mut closed: Vec<ClosedInstance>) {
        for c in closed.drain(..) {
            self.spares.reclaim(c.groups);
        }
        self.closed_buf = closed;
    }

    /// After a slide event that closed an instance of the plan's user-visible node: skip
    /// that node's next instances ending by `now_us` that close with nothing entering or
    /// leaving (no parent instance with a tuple closes before them, no partial held
    /// leaves), each of which is the event just closed again with its bounds moved by the
    /// window's slide. Moves every frontier past them and returns their count (the caller
    /// emits them as repeats of the last event); 0 when the next event may differ, or the
    /// plan is not of the shape this knows (see [`SharedWindows::quiet_node`]), or every
    /// node is empty (the empty-run limit applies then).
    ///
    /// The factor instances skipped are empty (they would deliver nothing and nobody
    /// shows them), and the sliding aggregator skipped closes would evict nothing and
    /// find nothing new, so every state is as closing them one by one leaves it.
    pub(crate) fn skip_quiet_events(&mut self, now_us: i64) -> u64 {
        let Some(u) = self.quiet_node() else {
            return 0;
        };
        let node = &self.nodes[u];
        // Current time short of the node's next end (the usual case: time moved past one
        // end only): nothing more closes, quiet or not.
        if now_us < node.next_end() {
            return 0;
        }
        let (w, next_m) = (node.window, node.base_m);
        let just_closed = next_m.saturating_sub(1);
        let Some(slide) = node.slide.as_ref() else {
            return 0;
        };
        if !slide.is_settled()
            || node
                .user_windows
                .iter()
                .any(|&s| self.shown_from[s] > just_closed)
            || self.all_empty()
        {
            return 0;
        }
        // The first factor instance with a tuple closes at `limit_us`, and at that instant
        // (parents first) its partial enters the user node's instance ending then.
        let limit_us = self
            .nodes
            .iter()
            .filter_map(|n| {
                let k = n.open.iter().position(|t| !t.get().is_empty())?;
                Some(n.window.upper_us(n.base_m.saturating_add(k as i64)))
            })
            .min()
            .unwrap_or(i64::MAX);
        let Some(mut last) = w.current_index(now_us.min(limit_us.saturating_sub(1))) else {
            return 0;
        };
        if let (Some(oldest), Some(p)) = (slide.oldest(), node.parent) {
            last = last.min(w.last_index_covered_from(oldest, &self.nodes[p].window));
        }
        if last < next_m {
            return 0;
        }
        let last_end = w.upper_us(last);
        self.nodes[u].set_base(last + 1);
        for n in self.nodes.iter_mut().filter(|n| n.slide.is_none()) {
            let base = n.base_m.max(n.window.next_closing_index(last_end));
            let gone = usize::try_from(base - n.base_m).unwrap_or(usize::MAX);
            if gone > 0 {
                debug_assert!(n.open.iter().take(gone).all(|t| t.get().is_empty()));
                n.open.drain(..gone.min(n.open.len()));
                n.groups_hint = 0;
                n.set_base(base);
            }
        }
        u64::try_from(last - next_m + 1).unwrap_or(u64::MAX)
    }

    /// The plan's one user-visible node, when the plan is of the shape whose quiet slide
    /// events [`SharedWindows::skip_quiet_events`] skips: that node has a sliding
    /// aggregator and no child, and every other node keeps panes (open instances), shows
    /// nothing and feeds, through others like it, only that node.
    fn quiet_node(&self) -> Option<usize> {
        let mut user = None;
        for (i, n) in self.nodes.iter().enumerate() {
            match (&n.slide, n.user_windows.is_empty()) {
                (Some(_), false) if user.is_none() && n.children.is_empty() => user = Some(i),
                (None, true) => {}
                _ => return None,
            }
        }
        user
    }

    /// Slide events of user windows with ends in `[from_us, to_us]` (for the NOTICE).
    fn count_user_ends(&self, from_us: i64, to_us: i64) -> u64 {
        let mut ends = 0u64;
        for n in self.nodes.iter().filter(|n| !n.user_windows.is_empty()) {
            let last = n.window.current_index(to_us).unwrap_or(n.base_m - 1);
            let first = n.base_m.max(
                n.window
                    .current_index(from_us.saturating_sub(1))
                    .map_or(n.base_m, |m| m + 1),
            );
            ends = ends.saturating_add((last as i128 - first as i128 + 1).max(0) as u64);
        }
        ends
    }

    /// Every node is empty: jump each frontier to the first instance ending after `now_us`.
    fn skip_to(&mut self, now_us: i64) {
        for node in &mut self.nodes {
            node.set_base(node.base_m.max(node.window.next_closing_index(now_us)));
            node.open.clear();
            if let Some(slide) = &mut node.slide {
                slide.clear();
            }
        }
    }

    /// Close every node's instance that ends at `e`, parents first.
    fn close_at(&mut self, e: i64) -> Result<Vec<ClosedInstance>> {
        let mut closed = std::mem::take(&mut self.closed_buf);
        for i in 0..self.nodes.len() {
            if self.nodes[i].next_end() != e {
                continue;
            }
            let m = self.nodes[i].base_m;
            let groups = self.take_closing(i)?;
            let node = &mut self.nodes[i];
            node.groups_hint = groups.as_ref().map_or(0, |g| g.len());
            node.set_base(m + 1);
            let window = node.window;
            let node = &self.nodes[i];
            let mut shown = UserWindows::default();
            for &u in &node.user_windows {
                if m >= self.shown_from[u] {
                    shown.push(u);
                }
            }
            // An empty pane that nobody shows (a factor window's instance with no tuple,
            // most of the slide events of a long window sliding by short panes) costs no
            // table, no reference count and no delivery.
            if shown.is_empty() && groups.is_none() {
                continue;
            }
            let lower_us = window.lower_us(m);
            if let Some(groups) = &groups {
                for k in 0..node.children.len() {
                    let c = self.nodes[i].children[k];
                    self.deliver(c, m, lower_us, e, groups)?;
                }
            }
            if !shown.is_empty() {
                closed.push(ClosedInstance {
                    user_windows: shown,
                    window,
                    lower_us,
                    upper_us: e,
                    groups: groups.unwrap_or_else(|| Arc::clone(&self.empty)),
                });
            } else if let Some(groups) = groups {
                // Shown to nobody: reused once no child instance shares it.
                self.spares.reclaim(groups);
            }
        }
        Ok(closed)
    }

    /// The table of node `i`'s instance `base_m`, which closes now: its open instance
    /// (panes), or what its sliding aggregator holds once the partials of parent instances
    /// before the instance's first covering one have left. `None` for an empty pane (the
    /// caller shows it as the one shared empty table, and delivers nothing).
    fn take_closing(&mut self, i: usize) -> Result<Option<Arc<GroupTable>>> {
        let m = self.nodes[i].base_m;
        let Some(p) = self.nodes[i]
            .parent
            .filter(|_| self.nodes[i].slide.is_some())
        else {
            return Ok(match self.nodes[i].open.pop_front() {
                Some(inst) if !inst.get().is_empty() => Some(inst.into_shared(&mut self.spares)),
                _ => None,
            });
        };
        let j_min = self.nodes[i]
            .window
            .first_covering_index(m, &self.nodes[p].window);
        let slide = self.nodes[i].slide.as_mut().expect("checked");
        let (groups, merges) = slide.close(j_min, &self.specs)?;
        self.counters.partials_merged[i] += merges;
        Ok(Some(groups))
    }

    /// Merge a closed parent instance `j` = `[lower_us, upper_us)` into every open instance
    /// of child `c` that contains it. An instance with no state yet shares the table instead
    /// (what merging it into fresh states gives; see the module's "copy on write"), which
    /// is how a hopping window's newest instance starts. A child with a sliding aggregator
    /// queues the partial instead.
    fn deliver(
        &mut self,
        c: usize,
        j: i64,
        lower_us: i64,
        upper_us: i64,
        groups: &Arc<GroupTable>,
    ) -> Result<()> {
        if groups.is_empty() {
            return Ok(());
        }
        if let Some(slide) = &mut self.nodes[c].slide {
            let merges = slide.push(j, groups, &self.specs, self.limits.groups_max)?;
            self.counters.partials_merged[c] += merges;
            return Ok(());
        }
        let w = self.nodes[c].window;
        let (r, s, o) = (
            w.range_us as i128,
            w.slide_us as i128,
            w.offset_us() as i128,
        );
        let m_hi = floor_div(lower_us as i128 - o, s);
        let m_lo = floor_div(upper_us as i128 - r - o + s - 1, s);
        let m_lo = m_lo.max(self.nodes[c].base_m as i128);
        let (open_max, groups_max) = (self.limits.open_instances_max, self.limits.groups_max);
        let naggs = self.specs.len();
        for m in m_lo..=m_hi {
            let node = &mut self.nodes[c];
            let hint = node.groups_hint;
            let inst = node.instance_entry(m as i64, open_max, |_| Instance::default())?;
            if inst.get().is_empty() && groups.len() <= groups_max {
                *inst = Instance::Shared(Arc::clone(groups));
            } else {
                inst.get_mut(naggs, hint)
                    .merge_from(groups, &self.specs, groups_max)?;
            }
            self.counters.partials_merged[c] += 1;
        }
        Ok(())
    }

    /// The id of group key `key` (hash `hash`), interned in the query's dictionary.
    pub(crate) fn intern(&mut self, hash: u64, key: &[Value]) -> u32 {
        self.dict.intern(hash, key)
    }

    /// The query's group dictionary, to intern keys with (see [`SharedWindows::intern`]).
    pub(crate) fn dict_mut(&mut self) -> &mut GroupDict {
        &mut self.dict
    }

    /// The query's group dictionary (keys of the group ids in closed instances).
    pub(crate) fn dict(&self) -> &GroupDict {
        &self.dict
    }

    /// Drop dictionary ids that no open instance uses, once the dictionary has doubled since
    /// the last compaction (call after the closed instances have been emitted).
    pub(crate) fn maybe_compact(&mut self) {
        if self.dict.len() < self.compact_at {
            return;
        }
        let mut live: Vec<u32> = self
            .nodes
            .iter()
            .flat_map(|n| n.open.iter().flat_map(|t| t.get().gids().iter().copied()))
            .collect();
        for slide in self.nodes.iter().filter_map(|n| n.slide.as_ref()) {
            slide.live_gids(&mut live);
        }
        live.sort_unstable();
        live.dedup();
        let map = self.dict.compact(&live);
        for node in &mut self.nodes {
            let hint = node.groups_hint;
            for t in &mut node.open {
                t.get_mut(self.specs.len(), hint).remap(&map);
            }
            if let Some(slide) = &mut node.slide {
                slide.remap(&map);
            }
        }
        self.compact_at = (2 * self.dict.len()).max(COMPACT_MIN);
    }

    /// Fold one tuple at `t_us` of group `gid` (from [`SharedWindows::intern`]) with
    /// aggregate arguments `args`. `in_order`: `t_us` equals current time, so every instance holding it is open
    /// and only root windows take it. Returns true when the tuple missed an instance of a
    /// user window that had already closed (a late tuple).
    pub(crate) fn fold(
        &mut self,
        t_us: i64,
        gid: u32,
        args: &[Value],
        in_order: bool,
    ) -> Result<bool> {
        let mut late = false;
        for i in 0..self.nodes.len() {
            let (w, base_m, parent) = (
                self.nodes[i].window,
                self.nodes[i].base_m,
                self.nodes[i].parent,
            );
            if in_order && parent.is_some() {
                continue;
            }
            let (lo, hi) = w.instances_containing(t_us);
            if lo > hi {
                continue;
            }
            if lo < base_m && !self.nodes[i].user_windows.is_empty() {
                late = true;
                self.late_nodes.push(i);
            }
            if let (Some(p), true) = (parent, self.nodes[i].slide.is_some()) {
                if hi >= base_m {
                    self.fold_late_sliding(i, p, t_us, gid, args)?;
                }
                continue;
            }
            for m in lo.max(base_m)..=hi {
                if let Some(p) = parent {
                    if !self.parent_closed_within(p, t_us, w.lower_us(m), w.upper_us(m)) {
                        continue;
                    }
                }
                let (open_max, groups_max) =
                    (self.limits.open_instances_max, self.limits.groups_max);
                let inst =
                    self.nodes[i].instance_mut(m, self.specs.len(), open_max, &mut self.spares)?;
                let g = inst.slot(gid, &self.specs, groups_max)?;
                inst.update(g, &self.specs, args)?;
                self.counters.tuples_folded[i] += 1;
            }
        }
        Ok(late)
    }

    /// The earliest end among the plan's next instances to close (`i64::MAX` when none):
    /// tuples whose time stays below it close nothing.
    pub(crate) fn next_end_us(&self) -> i64 {
        self.next_end()
    }

    /// Fold a run of in-order tuples at `times` (each at or past current time, none moving
    /// current time to an instance end) of groups `gids` into the root windows. For each
    /// root window the run is cut where the set of instances holding a tuple changes; for
    /// each piece and each instance, `slots` receives the piece's group slots and `kernel`
    /// folds the piece's arguments into the instance's states: `kernel(accs, specs, slots,
    /// rows)` with `rows` the piece's indices into `times`. `one_group`: every id in `gids`
    /// is the same (an ungrouped query), so its slot is found once per piece and instance
    /// and `slots` holds only that one.
    ///
    /// The rows are exactly those [`SharedWindows::fold`] gives tuple by tuple. Errors: the
    /// first failure in tuple order, with the index of the tuple it came at (54000 when an
    /// instance would exceed its group or open-instance limit); the states are then
    /// unspecified and the query must end.
    pub(crate) fn fold_in_order(
        &mut self,
        times: &[i64],
        gids: &[u32],
        one_group: bool,
        slots: &mut Vec<u32>,
        kernel: &mut Kernel,
    ) -> std::result::Result<(), (usize, Error)> {
        debug_assert_eq!(times.len(), gids.len(), "one group id per tuple");
        debug_assert!(!one_group || gids.windows(2).all(|p| p[0] == p[1]));
        // The ids whose slots are looked up: all of them, or the first of one group.
        let lookups = |a: usize, stop: usize| if one_group { a..a + 1 } else { a..stop };
        let mut failed: Option<(usize, Error)> = None;
        let (open_max, groups_max) = (self.limits.open_instances_max, self.limits.groups_max);
        let naggs = self.specs.len();
        for i in 0..self.nodes.len() {
            if self.nodes[i].parent.is_some() {
                continue;
            }
            let w = self.nodes[i].window;
            let mut a = 0;
            // Rows at or past the first failure are not folded (the query ends there).
            let end =
                |failed: &Option<(usize, Error)>| failed.as_ref().map_or(times.len(), |f| f.0);
            while a < end(&failed) {
                let (lo, hi, from, to) = w.instance_span(times[a]);
                let mut b = a + 1;
                while b < end(&failed) && times[b] >= from && times[b] < to {
                    b += 1;
                }
                let node = &mut self.nodes[i];
                debug_assert!(
                    lo > hi || lo >= node.base_m,
                    "an in-order tuple's instances end after current time, so none has closed"
                );
                // Tuple order: an instance checks the piece only up to the earliest
                // failure found so far (in an earlier instance of this piece, or an
                // earlier node), so a later instance can still report an earlier tuple.
                for m in lo.max(node.base_m)..=hi {
                    let stop = end(&failed).min(b);
                    if stop <= a {
                        break;
                    }
                    let inst = match node.instance_mut(m, naggs, open_max, &mut self.spares) {
                        Ok(inst) => inst,
                        Err(e) => {
                            failed = Some((a, e));
                            break;
                        }
                    };
                    slots.clear();
                    let mut slot_failed = false;
                    for (k, &gid) in gids[lookups(a, stop)].iter().enumerate() {
                        match inst.slot(gid, &self.specs, groups_max) {
                            Ok(g) => slots.push(g as u32),
                            Err(e) => {
                                failed = Some((a + k, e));
                                slot_failed = true;
                                break;
                            }
                        }
                    }
                    if slot_failed || stop < b {
                        // The query ends at the failure: its states need not be folded.
                        continue;
                    }
                    kernel(inst.accs_mut(), &self.specs, slots, a..b);
                    self.counters.tuples_folded[i] += (b - a) as u64;
                }
                a = b;
            }
        }
        match failed {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    /// A late tuple at `t_us` (group `gid`, arguments `args`) for sliding node `i`, some of
    /// whose instances holding it are open: it joins each partial of parent `p` that holds
    /// it, has closed (an open one will bring it along) and is still needed by an open
    /// instance of `i`.
    fn fold_late_sliding(
        &mut self,
        i: usize,
        p: usize,
        t_us: i64,
        gid: u32,
        args: &[Value],
    ) -> Result<()> {
        let pw = self.nodes[p].window;
        let (plo, phi) = pw.instances_containing(t_us);
        let needed = self.nodes[i]
            .window
            .first_covering_index(self.nodes[i].base_m, &pw);
        let last_closed = self.nodes[p].base_m.saturating_sub(1);
        let specs = &self.specs;
        let slide = self.nodes[i].slide.as_mut().expect("a sliding node");
        let mut update = |states: &mut [Acc]| -> Result<()> {
            for ((a, spec), v) in states.iter_mut().zip(specs).zip(args) {
                a.update(spec, v)?;
            }
            Ok(())
        };
        for j in plo.max(needed)..=phi.min(last_closed) {
            slide.update_at(j, gid, specs, self.limits.groups_max, &mut update)?;
            self.counters.tuples_folded[i] += 1;
        }
        Ok(())
    }

    /// True when every instance of node `p` that holds `t_us` and lies inside
    /// `[lower_us, upper_us)` has closed, so a late tuple must go straight to the child.
    fn parent_closed_within(&self, p: usize, t_us: i64, lower_us: i64, upper_us: i64) -> bool {
        let pw = self.nodes[p].window;
        let (plo, phi) = pw.instances_containing(t_us);
        let (r, s, o) = (
            pw.range_us as i128,
            pw.slide_us as i128,
            pw.offset_us() as i128,
        );
        let j_min = (plo as i128).max(floor_div(lower_us as i128 - o + s - 1, s));
        let j_max = (phi as i128).min(floor_div(upper_us as i128 - r - o, s));
        j_min > j_max || j_max < self.nodes[p].base_m as i128
    }

    /// True once current time has been defined (the first tuple or heartbeat seen).
    pub(crate) fn is_started(&self) -> bool {
        self.started
    }

    /// The nodes that late tuples missed a closed instance of since the last call (one
    /// entry per miss), drained.
    pub(crate) fn take_late_nodes(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.late_nodes)
    }

    /// The running nodes as `(window, parent, user windows)`, parents before children.
    pub(crate) fn node_list(&self) -> Vec<(Window, Option<usize>, Vec<usize>)> {
        self.nodes
            .iter()
            .map(|n| (n.window, n.parent, n.user_windows.clone()))
            .collect()
    }

    /// The sliding aggregator of each running node ([`Slider::Panes`] for roots and nodes
    /// that keep open instances), parents before children.
    pub(crate) fn sliders(&self) -> Vec<Slider> {
        self.nodes
            .iter()
            .map(|n| n.slide.as_ref().map_or(Slider::Panes, Slide::slider))
            .collect()
    }

    /// The index of the running node that computes `window`, if any.
    pub(crate) fn node_of(&self, window: &Window) -> Option<usize> {
        self.nodes.iter().position(|n| n.window == *window)
    }

    /// Show user window `slot` from running node `node`, starting with instance `first_m`
    /// (which must not have closed: a query joining a running plan reads only instances
    /// that begin after every tuple it did not see).
    pub(crate) fn show_slot(&mut self, node: usize, slot: usize, first_m: i64) {
        debug_assert!(
            first_m >= self.nodes[node].base_m,
            "a joining window never shows an instance that has closed"
        );
        if self.shown_from.len() <= slot {
            self.shown_from.resize(slot + 1, i64::MIN);
        }
        self.shown_from[slot] = first_m;
        self.nodes[node].user_windows.push(slot);
    }

    /// Append a node computing `window` from node `parent`'s partials (raw tuples for
    /// `None`) into a running plan, its first instance `first_m`: instances below it are
    /// never computed. Returns the new node's index (after every existing node, so parents
    /// still precede children).
    ///
    /// Errors: 54000 when the window keeps more open instances than the limit allows.
    pub(crate) fn push_node(
        &mut self,
        window: Window,
        parent: Option<usize>,
        first_m: i64,
        slider: Slider,
    ) -> Result<usize> {
        let slide = parent.and_then(|_| Slide::new(slider));
        if slide.is_none() {
            check_span(&window, self.limits.open_instances_max)?;
        }
        let i = self.nodes.len();
        if let Some(p) = parent {
            assert!(p < i, "a parent precedes its children");
            self.nodes[p].children.push(i);
        }
        self.nodes.push(Node {
            window,
            parent,
            children: Vec::new(),
            user_windows: Vec::new(),
            base_m: first_m,
            end_us: window.upper_us(first_m),
            open: VecDeque::new(),
            groups_hint: 0,
            slide,
        });
        self.counters.tuples_folded.push(0);
        self.counters.partials_merged.push(0);
        Ok(i)
    }

    /// Append aggregate state `spec` to a running plan: every open instance of every node
    /// gains it empty. Exact only for readers of instances that begin after every tuple
    /// folded so far (the shared plan's join rule); earlier instances lack those tuples in
    /// the new state and must never be shown with it.
    pub(crate) fn add_spec(&mut self, spec: AggSpec) {
        let mut spec = spec;
        spec.distinct_values_max = self.limits.distinct_values_max;
        let naggs = self.specs.len();
        for node in &mut self.nodes {
            let hint = node.groups_hint;
            for t in &mut node.open {
                t.get_mut(naggs, hint).add_state(naggs, &spec);
            }
            if let Some(slide) = &mut node.slide {
                slide.add_state(naggs, &spec);
            }
        }
        self.specs.push(spec);
    }

    /// Stop showing the user windows `slots`, then prune every node that shows no user
    /// window and feeds no node (its open instances are dropped). The nodes that stay keep
    /// their state and their parent; indices of the remaining nodes shift down in order.
    pub(crate) fn drop_slots(&mut self, slots: &[usize]) {
        for n in &mut self.nodes {
            n.user_windows.retain(|u| !slots.contains(u));
        }
        let mut keep = vec![true; self.nodes.len()];
        for i in (0..self.nodes.len()).rev() {
            let feeds = self.nodes[i].children.iter().any(|&c| keep[c]);
            keep[i] = feeds || !self.nodes[i].user_windows.is_empty();
        }
        let mut new_index = vec![usize::MAX; self.nodes.len()];
        let mut next = 0;
        for (i, k) in keep.iter().enumerate() {
            if *k {
                new_index[i] = next;
                next += 1;
            }
        }
        let old = std::mem::take(&mut self.nodes);
        let (folded, merged) = (
            std::mem::take(&mut self.counters.tuples_folded),
            std::mem::take(&mut self.counters.partials_merged),
        );
        for (i, mut n) in old.into_iter().enumerate() {
            if !keep[i] {
                continue;
            }
            n.parent = n.parent.map(|p| new_index[p]);
            n.children = n
                .children
                .iter()
                .filter(|&&c| keep[c])
                .map(|&c| new_index[c])
                .collect();
            self.nodes.push(n);
            self.counters.tuples_folded.push(folded[i]);
            self.counters.partials_merged.push(merged[i]);
        }
        self.late_nodes.clear();
    }

    /// Instances open now, over every plan node (factor windows included); a node with a
    /// sliding aggregator counts the entries it holds instead (one per group and parent
    /// partial for Two-Stacks, one per partial for subtract-on-evict).
    pub(crate) fn open_instances(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| n.open.len() + n.slide.as_ref().map_or(0, Slide::entries))
            .sum()
    }

    /// Bytes the open instances' partial states and the group dictionary hold, estimated
    /// from their vectors' capacity (see [`GroupTable::heap_bytes`]; a table instances
    /// share counts once), and, for DISTINCT
    /// aggregates, their sets' (which walks every state).
    pub(crate) fn state_bytes(&self) -> usize {
        let distinct = self.specs.iter().any(|s| s.distinct);
        let tables: usize = self
            .nodes
            .iter()
            .flat_map(|n| n.open.iter())
            .map(|inst| {
                let t = inst.get();
                let bytes = t.heap_bytes() + if distinct { t.distinct_bytes() } else { 0 };
                // A shared table is counted once over the instances that share it.
                match inst {
                    Instance::Own(_) => bytes,
                    Instance::Shared(a) => bytes / Arc::strong_count(a),
                }
            })
            .sum();
        let slides: usize = self
            .nodes
            .iter()
            .filter_map(|n| n.slide.as_ref())
            .map(Slide::heap_bytes)
            .sum();
        tables + slides + self.dict.heap_bytes() + self.spares.heap_bytes()
    }

    /// Whether a tuple at `t_us` falls in an instance of some user window that is still
    /// open (used by windowed queries without aggregates to decide what to buffer).
    pub(crate) fn holds_open_instance(&self, t_us: i64) -> bool {
        self.nodes
            .iter()
            .filter(|n| !n.user_windows.is_empty())
            .any(|n| {
                let (lo, hi) = n.window.instances_containing(t_us);
                lo <= hi && hi >= n.base_m
            })
    }

    /// The smallest lower bound among the user windows' next instances: buffered tuples
    /// older than this can never be emitted again.
    pub(crate) fn oldest_open_lower(&self) -> i64 {
        self.nodes
            .iter()
            .filter(|n| !n.user_windows.is_empty())
            .map(|n| n.window.lower_us(n.base_m))
            .min()
            .unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::AggFunc;
    use crate::types::DataType;
    use crate::wcg::PlanNode;
    use crate::window::Start;

    const H: i64 = 3_600_000_000;

    /// count(*) and max(v) per key along a 1-hour tumbling window (user window 0) that
    /// feeds a 2-hour window sliding 1 hour (user window 1) and a 1-hour tumbling twin
    /// (user window 2, an instance that is one parent partial). Returns the closed
    /// instances of each slide event, in order.
    fn run(tuples: &[(i64, u32, i64)], until_us: i64) -> Vec<Vec<ClosedInstance>> {
        let at = |r, s| Window::new(r, s, Start::At(0)).unwrap();
        let plan = SharedPlan {
            nodes: vec![
                PlanNode {
                    window: at(H, H),
                    user_windows: vec![0],
                    parent: None,
                    slider: Slider::Panes,
                },
                PlanNode {
                    window: at(2 * H, H),
                    user_windows: vec![1],
                    parent: Some(0),
                    slider: Slider::Panes,
                },
                PlanNode {
                    window: at(H, H),
                    user_windows: vec![2],
                    parent: Some(0),
                    slider: Slider::Panes,
                },
            ],
        };
        let specs = vec![
            AggSpec::new(AggFunc::CountStar, DataType::Int8, false),
            AggSpec::new(AggFunc::Max, DataType::Int8, false),
        ];
        let limits = ExecLimits {
            groups_max: 100,
            open_instances_max: 100,
            empty_slide_events_max: 100,
            distinct_values_max: 100,
            coalesce_bytes: 0,
        };
        let mut w = SharedWindows::new(&plan, specs, 1, false, limits, vec![None; 3]).unwrap();
        let mut events = Vec::new();
        for &(t, gid, v) in tuples {
            w.advance(t, &mut |closed| {
                events.push(closed);
                Ok(true)
            })
            .unwrap();
            w.fold(t, gid, &[Value::Bool(true), Value::Int8(v)], false)
                .unwrap();
        }
        w.advance(until_us, &mut |closed| {
            events.push(closed);
            Ok(true)
        })
        .unwrap();
        events
    }

    /// (user window, lower bound in hours, gid, count, max) of every closed instance.
    fn rows(events: &[Vec<ClosedInstance>]) -> Vec<(usize, i64, u32, i64, i64)> {
        let mut out = Vec::new();
        for inst in events.iter().flatten() {
            for g in 0..inst.groups.len() {
                let (gid, accs) = inst.groups.group(g, 2);
                let int = |a: &Acc, f| match a.evaluate(&AggSpec::new(f, DataType::Int8, false)) {
                    Ok(Value::Int8(x)) => x,
                    other => panic!("{other:?}"),
                };
                for &u in &inst.user_windows {
                    out.push((
                        u,
                        inst.lower_us / H,
                        gid,
                        int(&accs[0], AggFunc::CountStar),
                        int(&accs[1], AggFunc::Max),
                    ));
                }
            }
        }
        out.sort();
        out
    }

    /// Closed instances share tables instead of copying them, and sharing changes no
    /// value: an instance that is one parent partial is the parent's table itself, and an
    /// instance that started from a shared partial and merged a second one later leaves
    /// the first (still shown to its user window) as it was.
    #[test]
    fn child_instances_share_their_first_partial_and_copy_only_on_a_second() {
        // Hours 0, 1 and 2; key 7 in every hour, key 9 only in hour 1.
        let tuples = [
            (10, 7, 5),
            (H + 10, 7, 1),
            (H + 20, 9, 8),
            (H + 30, 7, 6),
            (2 * H + 5, 7, 2),
        ];
        let events = run(&tuples, 3 * H);
        let got = rows(&events);
        let mut want = vec![
            // The 1-hour window and its twin: one row per key and hour.
            (0, 0, 7, 1, 5),
            (0, 1, 7, 2, 6),
            (0, 1, 9, 1, 8),
            (0, 2, 7, 1, 2),
            (2, 0, 7, 1, 5),
            (2, 1, 7, 2, 6),
            (2, 1, 9, 1, 8),
            (2, 2, 7, 1, 2),
            // The 2-hour window from its first instance (START AT 0): hours [0, 2), [1, 3).
            (1, 0, 7, 3, 6),
            (1, 0, 9, 1, 8),
            (1, 1, 7, 3, 6),
            (1, 1, 9, 1, 8),
        ];
        want.sort();
        assert_eq!(got, want);
        // Every slide event where the twin closed shows the very table its parent closed.
        for closed in &events {
            let of = |u: usize| closed.iter().find(|c| *c.user_windows == [u]);
            if let (Some(parent), Some(twin)) = (of(0), of(2)) {
                assert!(
                    Arc::ptr_eq(&parent.groups, &twin.groups),
                    "copied, not shared"
                );
            }
        }
    }
}
