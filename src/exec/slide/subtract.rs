//! Subtract-on-evict: running totals per group over a FIFO of partials, for invertible
//! aggregates.
//!
//! Source: the subtract-on-evict aggregator of invertible aggregations, as Tangwongsan,
//! Hirzel, Schneider, Wu, "General Incremental Sliding-Window Aggregation" (PVLDB 8(7),
//! 2015, section 2) and Hirzel et al., "Sliding-Window Aggregation Algorithms" (Encyclopedia
//! of Big Data Technologies, 2018) describe it: an invertible aggregation keeps one running
//! value, combining each arriving entry in and taking each leaving entry out with the
//! inverse. Exact here for counts and integer sums (and avg's integer sum and count), which
//! are what [`crate::agg::subtracts_exactly`] admits; never floats, whose `a + b - a` need
//! not be `b`.
//!
//! Complexity: per partial, one merge per group when it enters and one subtraction per group
//! when it leaves; the totals table *is* the window's aggregate, so a slide event costs
//! nothing beyond the partials that moved. Each group counts the queued partials that hold
//! it; at zero it leaves the totals (swap-remove, O(1)), so groups that stop appearing are
//! dropped as their last partial leaves.
//!
//! The queue holds the parent's closed tables themselves ([`Arc`]), so a partial costs no
//! copy to keep. A late tuple for a queued partial copies that one table if another reader
//! still holds it.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::agg::{Acc, AggSpec};
use crate::error::Result;
use crate::exec::group::{merge_state, GroupTable};

/// Running totals over a FIFO of partial tables (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct Totals {
    /// The queued partials, oldest first, with their parent instance index.
    queue: VecDeque<(i64, Arc<GroupTable>)>,
    /// Every queued partial merged: the window's aggregate, handed out as is.
    totals: Arc<GroupTable>,
    /// Per slot of `totals`: how many queued partials hold the group.
    holders: Vec<u32>,
}

impl Totals {
    /// True when nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Queued partials.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// The oldest parent instance whose partial is queued, if any.
    pub(crate) fn oldest(&self) -> Option<i64> {
        self.queue.front().map(|(j, _)| *j)
    }

    /// Drop everything.
    pub(crate) fn clear(&mut self) {
        self.queue.clear();
        self.totals = Arc::default();
        self.holders.clear();
    }

    /// Every group id held by the totals (the queued partials hold no other).
    pub(crate) fn gids(&self) -> &[u32] {
        self.totals.gids()
    }

    /// Bytes held (capacity), the queued tables counted where they are not shared.
    pub(crate) fn heap_bytes(&self) -> usize {
        let queued: usize = self
            .queue
            .iter()
            .map(|(_, t)| t.heap_bytes() / Arc::strong_count(t))
            .sum();
        queued + self.totals.heap_bytes() + self.holders.capacity() * 4
    }

    /// Queue parent instance `j`'s partial (newer than every queued one) and add it to the
    /// totals. Returns the merges done.
    ///
    /// Errors: 54000 when the totals would exceed `groups_max` groups; 22003 from a sum.
    pub(crate) fn push(
        &mut self,
        j: i64,
        partial: &Arc<GroupTable>,
        specs: &[AggSpec],
        groups_max: usize,
    ) -> Result<u64> {
        debug_assert!(
            self.queue.back().is_none_or(|(n, _)| *n < j),
            "partials reach a sliding aggregator in the order their instances close"
        );
        let naggs = specs.len();
        let totals = Arc::make_mut(&mut self.totals);
        for g in 0..partial.len() {
            let (gid, states) = partial.group(g, naggs);
            match totals.slot_of(gid) {
                Some(s) => {
                    let mine = totals.states_mut(s, naggs);
                    for ((a, b), spec) in mine.iter_mut().zip(states).zip(specs) {
                        merge_state(a, b, spec)?;
                    }
                    self.holders[s] += 1;
                }
                None => {
                    totals.push_group(gid, groups_max, |accs| {
                        accs.extend_from_slice(states);
                        Ok(())
                    })?;
                    self.holders.push(1);
                }
            }
        }
        self.queue.push_back((j, Arc::clone(partial)));
        Ok(partial.len() as u64)
    }

    /// Take the partials of parent instances below `j_min` out of the queue and the totals.
    /// Returns the subtractions done.
    pub(crate) fn evict_before(&mut self, j_min: i64, specs: &[AggSpec]) -> Result<u64> {
        let naggs = specs.len();
        let mut done = 0;
        while self.queue.front().is_some_and(|(j, _)| *j < j_min) {
            let (_, partial) = self.queue.pop_front().expect("checked");
            if self.queue.is_empty() {
                // The last partial leaves: nothing is left to subtract from.
                self.totals = Arc::default();
                self.holders.clear();
                return Ok(done);
            }
            let totals = Arc::make_mut(&mut self.totals);
            for g in 0..partial.len() {
                let (gid, states) = partial.group(g, naggs);
                let s = totals
                    .slot_of(gid)
                    .expect("a queued partial's groups are in the totals");
                self.holders[s] -= 1;
                if self.holders[s] == 0 {
                    totals.remove_slot(s, naggs);
                    self.holders.swap_remove(s);
                } else {
                    for (a, b) in totals.states_mut(s, naggs).iter_mut().zip(states) {
                        a.subtract(b)?;
                    }
                }
                done += 1;
            }
        }
        Ok(done)
    }

    /// The window's aggregate: the totals, shared.
    pub(crate) fn aggregate(&self) -> Arc<GroupTable> {
        Arc::clone(&self.totals)
    }

    /// Apply `update` to group `gid` of the queued partial of parent instance `j` (queued
    /// empty first when there is none) and to its totals: a late tuple.
    ///
    /// Errors: 54000 past `groups_max`; `update`'s own.
    pub(crate) fn update_at(
        &mut self,
        j: i64,
        gid: u32,
        specs: &[AggSpec],
        groups_max: usize,
        update: &mut dyn FnMut(&mut [Acc]) -> Result<()>,
    ) -> Result<()> {
        let naggs = specs.len();
        let p = match self.queue.binary_search_by_key(&j, |(k, _)| *k) {
            Ok(p) => p,
            Err(p) => {
                self.queue.insert(p, (j, Arc::new(GroupTable::new())));
                p
            }
        };
        let partial = Arc::make_mut(&mut self.queue[p].1);
        let new_in_partial = partial.slot_of(gid).is_none();
        let g = partial.slot(gid, specs, groups_max)?;
        update(partial.states_mut(g, naggs))?;
        let totals = Arc::make_mut(&mut self.totals);
        let s = match totals.slot_of(gid) {
            Some(s) => s,
            None => {
                self.holders.push(0);
                totals.slot(gid, specs, groups_max)?
            }
        };
        if new_in_partial {
            self.holders[s] += 1;
        }
        update(totals.states_mut(s, naggs))
    }

    /// Append an empty state to every queued partial and to the totals.
    pub(crate) fn add_state(&mut self, naggs: usize, spec: &AggSpec) {
        for (_, t) in &mut self.queue {
            Arc::make_mut(t).add_state(naggs, spec);
        }
        Arc::make_mut(&mut self.totals).add_state(naggs, spec);
    }

    /// Renumber group ids after the dictionary's compaction.
    pub(crate) fn remap(&mut self, map: &[u32]) {
        for (_, t) in &mut self.queue {
            Arc::make_mut(t).remap(map);
        }
        Arc::make_mut(&mut self.totals).remap(map);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::AggFunc;
    use crate::types::{DataType, Value};

    /// Against recomputing the window: random partials of random groups pushed, evicted
    /// and updated late; groups come and go.
    #[test]
    fn totals_equal_recomputation() {
        let specs = vec![
            AggSpec::new(AggFunc::CountStar, DataType::Int8, false),
            AggSpec::new(AggFunc::Sum, DataType::Int4, false),
        ];
        let mut rng = crate::wcg::eval::Rng::new(11);
        for _ in 0..100 {
            let mut t = Totals::default();
            let mut model: Vec<(i64, u32, i64)> = Vec::new(); // (j, gid, v)
            let (mut next_j, mut lo) = (0i64, 0i64);
            for _ in 0..80 {
                match rng.range(0, 9) {
                    0..=4 => {
                        next_j += rng.range(1, 3);
                        let mut p = GroupTable::new();
                        for _ in 0..rng.range(0, 4) {
                            let (gid, v) = (rng.range(0, 5) as u32, rng.range(-9, 9));
                            let g = p.slot(gid, &specs, 100).unwrap();
                            p.update(g, &specs, &[Value::Bool(true), Value::Int4(v as i32)])
                                .unwrap();
                            model.push((next_j, gid, v));
                        }
                        t.push(next_j, &Arc::new(p), &specs, 100).unwrap();
                    }
                    5..=7 => {
                        lo += rng.range(0, 3);
                        t.evict_before(lo, &specs).unwrap();
                        model.retain(|(j, _, _)| *j >= lo);
                    }
                    _ => {
                        if next_j < lo {
                            continue;
                        }
                        let (j, gid, v) = (rng.range(lo, next_j), rng.range(0, 5) as u32, 3);
                        t.update_at(j, gid, &specs, 100, &mut |s: &mut [Acc]| {
                            s[0].update(&specs[0], &Value::Bool(true))?;
                            s[1].update(&specs[1], &Value::Int4(v as i32))
                        })
                        .unwrap();
                        model.push((j, gid, v));
                    }
                }
                let agg = t.aggregate();
                let mut got: Vec<(u32, Value, Value)> = (0..agg.len())
                    .map(|g| {
                        let (gid, s) = agg.group(g, 2);
                        (
                            gid,
                            s[0].evaluate(&specs[0]).unwrap(),
                            s[1].evaluate(&specs[1]).unwrap(),
                        )
                    })
                    .collect();
                got.sort_by_key(|x| x.0);
                let mut gids: Vec<u32> = model.iter().map(|x| x.1).collect();
                gids.sort_unstable();
                gids.dedup();
                let want: Vec<(u32, Value, Value)> = gids
                    .iter()
                    .map(|&g| {
                        let vs: Vec<i64> = model.iter().filter(|x| x.1 == g).map(|x| x.2).collect();
                        (
                            g,
                            Value::Int8(vs.len() as i64),
                            Value::Int8(vs.iter().sum()),
                        )
                    })
                    .collect();
                assert_eq!(got, want);
            }
        }
    }
}
