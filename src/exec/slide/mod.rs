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
//! Per group, not per table: a group's states move only with its own partials, and a slide
//! event touches only the groups of the partials that enter and leave (for Two-Stacks, one
//! merge each to answer it: [`groups`]); a group whose last partial leaves is dropped in
//! O(1) (swap-remove). The window's aggregate is a [`GroupTable`] kept across slide events
//! and handed out in an [`Arc`], updated in place at the next slide event when nobody holds
//! it any more, so a slide event allocates nothing once the tables have grown.
//!
//! Tuples out of order within SLACK never reach an aggregator out of order: they fold into
//! the parent's instances, which stay open for SLACK, and the partials close in order (the
//! job FiBA's out-of-order insert does when a window reads tuples directly). A tuple later
//! than that (a late tuple) whose parent partial has closed already is merged into that
//! partial's entry and the aggregates covering it ([`Slide::update_at`]).

pub(crate) mod groups;
pub(crate) mod subtract;
pub(crate) mod two_stacks;

use std::sync::Arc;

use self::groups::GroupQueues;
use super::group::GroupTable;
use crate::agg::{Acc, AggSpec};
use crate::error::Result;
use crate::wcg::Slider;

/// The sliding aggregator of one plan node (see the module docs).
#[derive(Clone, Debug)]
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
            Slide::TwoStacks(q) => q.len() == 0,
            Slide::Subtract(t) => t.is_empty(),
        }
    }

    /// The oldest parent instance whose partial is held (`None` when empty): a slide event
    /// whose first covering parent instance is at most this one evicts nothing.
    pub(crate) fn oldest(&self) -> Option<i64> {
        match self {
            Slide::TwoStacks(q) => q.oldest(),
            Slide::Subtract(t) => t.oldest(),
        }
    }

    /// True when a slide event that evicts nothing, with nothing pushed since the last
    /// one, returns the aggregate the last one returned (what it holds is unchanged).
    pub(crate) fn is_settled(&self) -> bool {
        match self {
            Slide::TwoStacks(q) => q.is_settled(),
            Slide::Subtract(_) => true,
        }
    }

    /// Entries held: queued (group, partial) pairs for Two-Stacks, partials for
    /// subtract-on-evict.
    pub(crate) fn entries(&self) -> usize {
        match self {
            Slide::TwoStacks(q) => q.entries(),
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
            Slide::TwoStacks(q) => q.update_at(j, gid, specs, groups_max, update),
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
            Slide::TwoStacks(q) => out.extend_from_slice(q.gids()),
            Slide::Subtract(t) => out.extend_from_slice(t.gids()),
        }
    }

    /// Renumber group ids after the dictionary's compaction (every id held is live).
    pub(crate) fn remap(&mut self, map: &[u32]) {
        match self {
            Slide::TwoStacks(q) => q.remap(map),
            Slide::Subtract(t) => t.remap(map),
        }
    }

    /// Append an empty state for `spec` to everything held (`naggs` states before).
    pub(crate) fn add_state(&mut self, naggs: usize, spec: &AggSpec) {
        match self {
            Slide::TwoStacks(q) => q.add_state(naggs, spec),
            Slide::Subtract(t) => t.add_state(naggs, spec),
        }
    }

    /// Bytes held (capacity).
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Slide::TwoStacks(q) => q.heap_bytes(),
            Slide::Subtract(t) => t.heap_bytes(),
        }
    }
}
