//! Sliding-window aggregators of plan nodes that read their parent's partials as a FIFO.
//!
//! A plan node whose edge the cost model gave a sliding aggregator ([`crate::wcg::Slider`])
//! keeps no open instances. Each closed partial of its parent, parent instance `j`, enters
//! the aggregator ([`Slide::push`]); when the node's instance `m` closes, the partials of
//! parent instances below `j0(m)`, the first of the `M` that cover `m` (paper Theorem 3),
//! leave, and what remains is exactly instance `m` ([`Slide::close`]): the parent's
//! instances close in time order, parents before children at one instant, so the newest
//! partial queued is the last one covering `m`.
//!
//! - [`two_stacks`]: per group, a Two-Stacks queue; any exactly associative aggregate.
//! - [`subtract`]: per group, running totals with subtract-on-evict; invertible ones.
//!
//! Per group, not per table: a group's states move only with its own partials, a slide
//! event touches the groups of the partials that enter and leave plus, for Two-Stacks, one
//! merge per group in the window to answer it; a group whose last partial leaves is dropped
//! in O(1) (swap-remove). The window's aggregate is handed out as a [`GroupTable`] in an
//! [`Arc`], refilled in place at the next slide event when nobody holds it any more, so a
//! slide event allocates nothing once the tables have grown.
//!
//! Tuples out of order within SLACK never reach an aggregator out of order: they fold into
//! the parent's instances, which stay open for SLACK, and the partials close in order (the
//! job FiBA's out-of-order insert does when a window reads tuples directly). A tuple later
//! than that (a late tuple) whose parent partial has closed already is merged into that
//! partial's entry and the aggregates covering it ([`Slide::update_at`]).

pub(crate) mod subtract;
pub(crate) mod two_stacks;

use std::sync::Arc;

use super::group::{GidIndex, GroupTable};
use crate::agg::{Acc, AggSpec};
use crate::error::{Error, Result};
use crate::wcg::Slider;

/// Per-group Two-Stacks queues of one node.
#[derive(Debug)]
pub(crate) struct GroupQueues {
    index: GidIndex,
    gids: Vec<u32>,
    queues: Vec<two_stacks::Queue>,
    /// Queues of groups that left, kept to reuse their allocations.
    spare: Vec<two_stacks::Queue>,
    /// The last aggregate handed out, refilled in place when nobody holds it.
    result: Option<Arc<GroupTable>>,
    /// Something entered or changed since `result` was computed.
    dirty: bool,
    /// The oldest parent index held (`i64::MAX` when empty): an instance whose first
    /// covering partial is no newer leaves nothing to evict.
    oldest: i64,
}

impl Default for GroupQueues {
    fn default() -> Self {
        GroupQueues {
            index: GidIndex::default(),
            gids: Vec::new(),
            queues: Vec::new(),
            spare: Vec::new(),
            result: None,
            dirty: true,
            oldest: i64::MAX,
        }
    }
}

impl GroupQueues {
    fn push(
        &mut self,
        j: i64,
        partial: &GroupTable,
        specs: &[AggSpec],
        groups_max: usize,
    ) -> Result<u64> {
        let naggs = specs.len();
        let mut merges = 0;
        self.dirty = true;
        self.oldest = self.oldest.min(j);
        for g in 0..partial.len() {
            let (gid, states) = partial.group(g, naggs);
            let slot = self.slot(gid, groups_max)?;
            merges += self.queues[slot].push(j, states, specs)?;
        }
        Ok(merges)
    }

    /// The slot of `gid`, with an empty queue if new.
    fn slot(&mut self, gid: u32, groups_max: usize) -> Result<usize> {
        let s = self.index.get(gid);
        if s != u32::MAX {
            return Ok(s as usize);
        }
        if self.gids.len() >= groups_max {
            return Err(Error::ProgramLimitExceeded(format!(
                "a window instance has more than {groups_max} groups (groups_max)"
            )));
        }
        let s = self.gids.len();
        self.index.set(gid, s as u32);
        self.gids.push(gid);
        self.queues.push(self.spare.pop().unwrap_or_default());
        Ok(s)
    }

    /// Drop slot `s` (its queue is empty): the last slot moves into its place.
    fn remove(&mut self, s: usize) {
        self.index.remove(self.gids[s]);
        self.gids.swap_remove(s);
        let q = self.queues.swap_remove(s);
        debug_assert!(q.is_empty(), "only an empty queue leaves");
        if self.spare.len() < 64 {
            self.spare.push(q);
        }
        if let Some(&moved) = self.gids.get(s) {
            self.index.set(moved, s as u32);
        }
    }

    fn close(&mut self, j_min: i64, specs: &[AggSpec]) -> Result<(Arc<GroupTable>, u64)> {
        if let Some(r) = self
            .result
            .as_ref()
            .filter(|_| !self.dirty && j_min <= self.oldest)
        {
            // Nothing entered, nothing leaves: the window holds what it held (a long window
            // sliding between sparse partials closes many instances this way).
            return Ok((Arc::clone(r), 0));
        }
        let naggs = specs.len();
        let mut result = match self.result.take() {
            Some(r) if Arc::strong_count(&r) == 1 && Arc::weak_count(&r) == 0 => r,
            // A reader still holds the last aggregate: start a new one of its size.
            _ => Arc::new(GroupTable::with_capacity(naggs, self.gids.len())),
        };
        let table = Arc::get_mut(&mut result).expect("unique");
        table.clear();
        let mut merges = 0;
        let mut s = 0;
        self.oldest = i64::MAX;
        while s < self.queues.len() {
            merges += self.queues[s].evict_before(j_min, specs)?;
            let Some(oldest) = self.queues[s].oldest() else {
                self.remove(s);
                continue;
            };
            self.oldest = self.oldest.min(oldest);
            let q = &self.queues[s];
            let mut m = 0;
            table.push_group(self.gids[s], usize::MAX, |accs| {
                m = q.query(accs, specs)?;
                Ok(())
            })?;
            merges += m;
            s += 1;
        }
        self.result = Some(Arc::clone(&result));
        self.dirty = false;
        Ok((result, merges))
    }

    fn clear(&mut self) {
        while let Some(s) = self.queues.len().checked_sub(1) {
            self.queues[s].clear();
            self.remove(s);
        }
        self.dirty = true;
        self.oldest = i64::MAX;
    }
}

/// The sliding aggregator of one plan node (see the module docs).
#[derive(Debug)]
pub(crate) enum Slide {
    /// Per-group Two-Stacks.
    TwoStacks(GroupQueues),
    /// Running totals, subtract-on-evict.
    Subtract(subtract::Totals),
}

impl Slide {
    /// The aggregator `slider` names; `None` for panes, which keep open instances instead.
    pub(crate) fn new(slider: Slider) -> Option<Slide> {
        match slider {
            Slider::Panes => None,
            Slider::TwoStacks => Some(Slide::TwoStacks(GroupQueues::default())),
            Slider::SubtractOnEvict => Some(Slide::Subtract(subtract::Totals::default())),
        }
    }

    /// Which aggregator this is.
    pub(crate) fn slider(&self) -> Slider {
        match self {
            Slide::TwoStacks(_) => Slider::TwoStacks,
            Slide::Subtract(_) => Slider::SubtractOnEvict,
        }
    }

    /// True when no partial is held.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Slide::TwoStacks(q) => q.gids.is_empty(),
            Slide::Subtract(t) => t.is_empty(),
        }
    }

    /// Entries held: queued (group, partial) pairs for Two-Stacks, partials for
    /// subtract-on-evict.
    pub(crate) fn entries(&self) -> usize {
        match self {
            Slide::TwoStacks(q) => q.queues.iter().map(two_stacks::Queue::len).sum(),
            Slide::Subtract(t) => t.len(),
        }
    }

    /// Parent instance `j`'s closed partial enters (newer than every one held). Returns the
    /// group merges done.
    ///
    /// Errors: 54000 past `groups_max` groups; 22003 from an exact sum.
    pub(crate) fn push(
        &mut self,
        j: i64,
        partial: &Arc<GroupTable>,
        specs: &[AggSpec],
        groups_max: usize,
    ) -> Result<u64> {
        match self {
            Slide::TwoStacks(q) => q.push(j, partial, specs, groups_max),
            Slide::Subtract(t) => t.push(j, partial, specs, groups_max),
        }
    }

    /// The partials of parent instances below `j_min` leave; the aggregate of the rest (the
    /// closing instance) is returned with the group merges done.
    pub(crate) fn close(
        &mut self,
        j_min: i64,
        specs: &[AggSpec],
    ) -> Result<(Arc<GroupTable>, u64)> {
        match self {
            Slide::TwoStacks(q) => q.close(j_min, specs),
            Slide::Subtract(t) => {
                let done = t.evict_before(j_min, specs)?;
                Ok((t.aggregate(), done))
            }
        }
    }

    /// Apply `update` to group `gid` in the partial of parent instance `j` (a closed
    /// instance whose partial is still needed) and to the aggregates that cover it: a late
    /// tuple.
    pub(crate) fn update_at(
        &mut self,
        j: i64,
        gid: u32,
        specs: &[AggSpec],
        groups_max: usize,
        update: &mut dyn FnMut(&mut [Acc]) -> Result<()>,
    ) -> Result<()> {
        match self {
            Slide::TwoStacks(q) => {
                let s = q.slot(gid, groups_max)?;
                q.dirty = true;
                q.oldest = q.oldest.min(j);
                q.queues[s].update_at(j, specs, update)
            }
            Slide::Subtract(t) => t.update_at(j, gid, specs, groups_max, update),
        }
    }

    /// Drop everything (the plan skipped an empty stretch).
    pub(crate) fn clear(&mut self) {
        match self {
            Slide::TwoStacks(q) => q.clear(),
            Slide::Subtract(t) => t.clear(),
        }
    }

    /// Append every group id held to `out`.
    pub(crate) fn live_gids(&self, out: &mut Vec<u32>) {
        match self {
            Slide::TwoStacks(q) => out.extend_from_slice(&q.gids),
            Slide::Subtract(t) => out.extend_from_slice(t.gids()),
        }
    }

    /// Renumber group ids after the dictionary's compaction (every id held is live).
    pub(crate) fn remap(&mut self, map: &[u32]) {
        match self {
            Slide::TwoStacks(q) => {
                q.index = GidIndex::default();
                for (s, gid) in q.gids.iter_mut().enumerate() {
                    *gid = map[*gid as usize];
                    q.index.set(*gid, s as u32);
                }
                q.result = None;
                q.dirty = true;
            }
            Slide::Subtract(t) => t.remap(map),
        }
    }

    /// Append an empty state for `spec` to everything held (`naggs` states before).
    pub(crate) fn add_state(&mut self, naggs: usize, spec: &AggSpec) {
        match self {
            Slide::TwoStacks(q) => {
                for queue in &mut q.queues {
                    queue.add_state(naggs, spec);
                }
                q.spare.clear();
                q.result = None;
                q.dirty = true;
            }
            Slide::Subtract(t) => t.add_state(naggs, spec),
        }
    }

    /// Bytes held (capacity).
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Slide::TwoStacks(q) => {
                q.queues
                    .iter()
                    .chain(&q.spare)
                    .map(two_stacks::Queue::heap_bytes)
                    .sum::<usize>()
                    + q.gids.capacity() * 4
                    + q.index.heap_bytes()
                    + q.result.as_ref().map_or(0, |r| r.heap_bytes())
            }
            Slide::Subtract(t) => t.heap_bytes(),
        }
    }
}
