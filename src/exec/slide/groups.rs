//! Per-group Two-Stacks queues of one node, with the window's aggregate kept in place.
//!
//! Each group keeps its own [`Queue`]; the window's aggregate is one [`GroupTable`] whose
//! slot `s` is the aggregate of queue `s`, kept across slide events. A slide event
//! recomputes only the rows of the groups it touched: those of the partials that entered
//! since the last one, those of the partials that leave now (found through a per-partial
//! list of its groups, so a group that no partial touches costs nothing), and those a late
//! tuple changed. A group whose last partial leaves is dropped from its queue's slot and
//! from the table by swap-remove, O(1). Per slide event the work is O(groups of the
//! partials that enter and leave), amortised: the Two-Stacks flips, per group, as
//! [`super::two_stacks`] says.
//!
//! The table is handed out in an [`Arc`] and updated in place at the next slide event when
//! nobody holds it any more; a reader that still holds it (an open instance of a child
//! sharing it) makes the next update copy it first, as any copy on write.

use std::collections::VecDeque;
use std::sync::Arc;

use super::two_stacks::Queue;
use crate::agg::{Acc, AggSpec};
use crate::error::{Error, Result};
use crate::exec::group::{GidIndex, GroupTable};

/// Per-group Two-Stacks queues of one node (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupQueues {
    index: GidIndex,
    gids: Vec<u32>,
    queues: Vec<Queue>,
    /// Per slot: listed in `touched` since the last slide event.
    marked: Vec<bool>,
    /// Queues of groups that left, kept to reuse their allocations.
    spare: Vec<Queue>,
    /// Per queued parent instance, oldest first: its index and the groups it holds (a
    /// group may be listed again after it left and came back; eviction is idempotent).
    panes: VecDeque<(i64, Vec<u32>)>,
    /// Group lists of panes that left, kept to reuse their allocations.
    spare_lists: Vec<Vec<u32>>,
    /// Groups whose aggregate changed since the last slide event.
    touched: Vec<u32>,
    /// The window's aggregate, slot for slot with `queues` after each slide event; `None`
    /// until the first one, or after a change of every state (recomputed in full then).
    result: Option<Arc<GroupTable>>,
}

impl GroupQueues {
    /// Groups held.
    pub(crate) fn len(&self) -> usize {
        self.gids.len()
    }

    /// Every group id held, in slot order.
    pub(crate) fn gids(&self) -> &[u32] {
        &self.gids
    }

    /// (group, partial) entries queued.
    pub(crate) fn entries(&self) -> usize {
        self.queues.iter().map(Queue::len).sum()
    }

    /// The oldest parent instance whose partial is held, if any: a slide event whose first
    /// covering parent instance is at most this one evicts nothing.
    pub(crate) fn oldest(&self) -> Option<i64> {
        self.panes.front().map(|(j, _)| *j)
    }

    /// True when the aggregate the last slide event returned is current: nothing entered
    /// since, so a slide event that evicts nothing returns it unchanged.
    pub(crate) fn is_settled(&self) -> bool {
        self.result.is_some() && self.touched.is_empty()
    }

    /// Parent instance `j`'s partial enters (newer than every one held). Returns the
    /// merges done.
    ///
    /// Errors: 54000 past `groups_max` groups; 22003 from an exact sum.
    pub(crate) fn push(
        &mut self,
        j: i64,
        partial: &GroupTable,
        specs: &[AggSpec],
        groups_max: usize,
    ) -> Result<u64> {
        let naggs = specs.len();
        let mut merges = 0;
        for g in 0..partial.len() {
            let (gid, states) = partial.group(g, naggs);
            let slot = self.slot(gid, groups_max)?;
            merges += self.queues[slot].push(j, states, specs)?;
            self.touch(slot);
        }
        let mut list = self.spare_lists.pop().unwrap_or_default();
        list.extend_from_slice(partial.gids());
        self.panes.push_back((j, list));
        Ok(merges)
    }

    /// Mark slot `s`'s aggregate as changed.
    fn touch(&mut self, s: usize) {
        if !self.marked[s] {
            self.marked[s] = true;
            self.touched.push(self.gids[s]);
        }
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
        self.marked.push(false);
        self.queues.push(self.spare.pop().unwrap_or_default());
        Ok(s)
    }

    /// Drop slot `s` (its queue is empty) here and in `table`: the last slot moves into
    /// its place in both.
    fn remove(&mut self, s: usize, table: &mut GroupTable, naggs: usize) {
        self.index.remove(self.gids[s]);
        self.gids.swap_remove(s);
        self.marked.swap_remove(s);
        let q = self.queues.swap_remove(s);
        debug_assert!(q.is_empty(), "only an empty queue leaves");
        if self.spare.len() < 64 {
            self.spare.push(q);
        }
        if let Some(&moved) = self.gids.get(s) {
            self.index.set(moved, s as u32);
        }
        table.remove_slot(s, naggs);
    }

    /// The partials of parent instances below `j_min` leave; the aggregate of the rest is
    /// returned with the merges done.
    pub(crate) fn close(
        &mut self,
        j_min: i64,
        specs: &[AggSpec],
    ) -> Result<(Arc<GroupTable>, u64)> {
        let leaving = self.panes.front().is_some_and(|(j, _)| *j < j_min);
        if let Some(r) = &self.result {
            if !leaving && self.touched.is_empty() {
                // Nothing entered, nothing leaves: the window holds what it held (a long
                // window sliding between sparse partials closes many instances this way).
                return Ok((Arc::clone(r), 0));
            }
        }
        let mut merges = self.evict(j_min, specs)?;
        let naggs = specs.len();
        let mut result = match self.result.take() {
            Some(r) => r,
            None => self.rebuild_all(naggs),
        };
        // A reader still holding the last aggregate makes this one a copy of it.
        let table = Arc::make_mut(&mut result);
        for s in table.len()..self.gids.len() {
            table.push_group(self.gids[s], usize::MAX, |accs| {
                accs.extend(specs.iter().map(AggSpec::init));
                Ok(())
            })?;
        }
        let mut touched = std::mem::take(&mut self.touched);
        for &gid in &touched {
            let s = self.index.get(gid);
            if s == u32::MAX {
                continue;
            }
            let s = s as usize;
            self.marked[s] = false;
            if self.queues[s].is_empty() {
                self.remove(s, table, naggs);
            } else {
                merges += self.queues[s].query_into(table.states_mut(s, naggs), specs)?;
            }
        }
        touched.clear();
        self.touched = touched;
        debug_assert_eq!(table.len(), self.gids.len(), "slot for slot");
        self.result = Some(Arc::clone(&result));
        Ok((result, merges))
    }

    /// Evict the partials below `j_min` from the queues of the groups they hold.
    fn evict(&mut self, j_min: i64, specs: &[AggSpec]) -> Result<u64> {
        let mut merges = 0;
        while self.panes.front().is_some_and(|(j, _)| *j < j_min) {
            let (_, mut list) = self.panes.pop_front().expect("checked");
            for &gid in &list {
                let s = self.index.get(gid);
                if s == u32::MAX {
                    continue;
                }
                let s = s as usize;
                merges += self.queues[s].evict_before(j_min, specs)?;
                self.touch(s);
            }
            list.clear();
            if self.spare_lists.len() < 64 {
                self.spare_lists.push(list);
            }
        }
        Ok(merges)
    }

    /// An empty table, every group marked to be computed (the first slide event, or one
    /// after every state changed).
    fn rebuild_all(&mut self, naggs: usize) -> Arc<GroupTable> {
        for s in 0..self.gids.len() {
            self.touch(s);
        }
        Arc::new(GroupTable::with_capacity(naggs, self.gids.len()))
    }

    /// Apply `update` to group `gid` in the partial of parent instance `j` and to the
    /// aggregates that cover it: a late tuple.
    ///
    /// Errors: 54000 past `groups_max` groups; `update`'s own.
    pub(crate) fn update_at(
        &mut self,
        j: i64,
        gid: u32,
        specs: &[AggSpec],
        groups_max: usize,
        update: &mut dyn FnMut(&mut [Acc]) -> Result<()>,
    ) -> Result<()> {
        let s = self.slot(gid, groups_max)?;
        if !self.queues[s].contains(j) {
            // The group joins partial `j`: list it there so that it leaves with it.
            let p = self.panes.partition_point(|(k, _)| *k < j);
            if self.panes.get(p).is_none_or(|(k, _)| *k != j) {
                let list = self.spare_lists.pop().unwrap_or_default();
                self.panes.insert(p, (j, list));
            }
            self.panes[p].1.push(gid);
        }
        self.touch(s);
        self.queues[s].update_at(j, specs, update)
    }

    /// Drop everything.
    pub(crate) fn clear(&mut self) {
        self.index = GidIndex::default();
        self.gids.clear();
        self.marked.clear();
        for mut q in self.queues.drain(..) {
            q.clear();
            if self.spare.len() < 64 {
                self.spare.push(q);
            }
        }
        while let Some((_, mut list)) = self.panes.pop_front() {
            list.clear();
            if self.spare_lists.len() < 64 {
                self.spare_lists.push(list);
            }
        }
        self.touched.clear();
        if let Some(r) = self.result.as_mut().and_then(Arc::get_mut) {
            r.clear();
        } else {
            self.result = None;
        }
    }

    /// Renumber group ids after the dictionary's compaction (every id held is live).
    pub(crate) fn remap(&mut self, map: &[u32]) {
        self.index = GidIndex::default();
        for (s, gid) in self.gids.iter_mut().enumerate() {
            *gid = map[*gid as usize];
            self.index.set(*gid, s as u32);
        }
        for (_, list) in &mut self.panes {
            // A listed group that left (and whose id may be gone) is not listed again.
            list.retain(|&g| (g as usize) < map.len() && map[g as usize] != u32::MAX);
            for g in list.iter_mut() {
                *g = map[*g as usize];
            }
        }
        self.touched.clear();
        self.marked.iter_mut().for_each(|m| *m = false);
        self.result = None;
    }

    /// Append an empty state for `spec` to everything held (`naggs` states before).
    pub(crate) fn add_state(&mut self, naggs: usize, spec: &AggSpec) {
        for queue in &mut self.queues {
            queue.add_state(naggs, spec);
        }
        self.spare.clear();
        self.touched.clear();
        self.marked.iter_mut().for_each(|m| *m = false);
        self.result = None;
    }

    /// Bytes held (capacity).
    pub(crate) fn heap_bytes(&self) -> usize {
        let lists: usize = self
            .panes
            .iter()
            .map(|(_, l)| l)
            .chain(&self.spare_lists)
            .map(|l| l.capacity() * 4 + 16)
            .sum();
        self.queues
            .iter()
            .chain(&self.spare)
            .map(Queue::heap_bytes)
            .sum::<usize>()
            + self.gids.capacity() * 4
            + self.marked.capacity()
            + self.touched.capacity() * 4
            + lists
            + self.index.heap_bytes()
            + self.result.as_ref().map_or(0, |r| r.heap_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::AggFunc;
    use crate::types::{DataType, Value};
    use std::collections::BTreeMap;

    fn specs() -> Vec<AggSpec> {
        vec![
            AggSpec::new(AggFunc::CountStar, DataType::Int8, false),
            AggSpec::new(AggFunc::Max, DataType::Int8, false),
        ]
    }

    fn fold(specs: &[AggSpec], s: &mut [Acc], v: i64) -> Result<()> {
        s[0].update(&specs[0], &Value::Bool(true))?;
        s[1].update(&specs[1], &Value::Int8(v))
    }

    /// The table's rows as (gid, count, max), sorted.
    fn rows(specs: &[AggSpec], t: &GroupTable) -> Vec<(u32, Value, Value)> {
        let mut out: Vec<_> = (0..t.len())
            .map(|g| {
                let (gid, s) = t.group(g, specs.len());
                let v = |k: usize| s[k].evaluate(&specs[k]).unwrap();
                (gid, v(0), v(1))
            })
            .collect();
        out.sort_by_key(|r| r.0);
        out
    }

    /// Against recomputing each slide event's window from the partials it holds: random
    /// partials whose groups come and go, slides that evict none, some or all of them, late
    /// tuples into held partials, readers holding the last table, and renumbered ids.
    #[test]
    fn kept_table_equals_recomputation() {
        let specs = specs();
        let mut rng = crate::wcg::eval::Rng::new(33);
        for _ in 0..150 {
            let mut q = GroupQueues::default();
            // The model: parent index -> (gid -> values).
            let mut model: BTreeMap<i64, BTreeMap<u32, Vec<i64>>> = BTreeMap::new();
            let (mut next_j, mut lo) = (0i64, 0i64);
            let mut held = None;
            for _ in 0..80 {
                match rng.range(0, 9) {
                    0..=3 => {
                        next_j += rng.range(1, 3);
                        let mut part = GroupTable::new();
                        let mut groups = BTreeMap::new();
                        for _ in 0..rng.range(0, 5) {
                            let (gid, v) = (rng.range(0, 7) as u32, rng.range(-9, 9));
                            let s = part.slot(gid, &specs, 100).unwrap();
                            fold(&specs, part.states_mut(s, 2), v).unwrap();
                            groups.entry(gid).or_insert_with(Vec::new).push(v);
                        }
                        q.push(next_j, &part, &specs, 100).unwrap();
                        model.insert(next_j, groups);
                    }
                    4..=6 => {
                        lo += rng.range(0, 4);
                        let (table, _) = q.close(lo, &specs).unwrap();
                        model.retain(|j, _| *j >= lo);
                        let mut want: BTreeMap<u32, Vec<i64>> = BTreeMap::new();
                        for groups in model.values() {
                            for (g, vs) in groups {
                                want.entry(*g).or_default().extend(vs);
                            }
                        }
                        let want: Vec<_> = want
                            .into_iter()
                            .map(|(g, vs)| {
                                let max = *vs.iter().max().unwrap();
                                (g, Value::Int8(vs.len() as i64), Value::Int8(max))
                            })
                            .collect();
                        assert_eq!(rows(&specs, &table), want, "{model:?}");
                        assert_eq!(q.len(), want.len());
                        // Sometimes a reader keeps the table past the next slide event.
                        held = (rng.range(0, 3) == 0).then_some(table);
                    }
                    7 => {
                        if next_j < lo {
                            continue;
                        }
                        let (j, gid, v) = (rng.range(lo, next_j), rng.range(0, 7) as u32, 50);
                        q.update_at(j, gid, &specs, 100, &mut |s| fold(&specs, s, v))
                            .unwrap();
                        let groups = model.entry(j).or_default();
                        groups.entry(gid).or_default().push(v);
                    }
                    _ => {
                        // Renumbering: every id held moves up by one (ids left are gone).
                        let mut live = q.gids().to_vec();
                        live.sort_unstable();
                        let map: Vec<u32> = (0..8)
                            .map(|g| if live.contains(&g) { g + 1 } else { u32::MAX })
                            .collect();
                        q.remap(&map);
                        let old = std::mem::take(&mut model);
                        for (j, groups) in old {
                            let groups = groups.into_iter().map(|(g, v)| (map[g as usize], v));
                            model.insert(j, groups.collect());
                        }
                        // Back to ids 0..7 for the next draws.
                        let back: Vec<u32> = (0..9)
                            .map(|g| if g == 0 { u32::MAX } else { g - 1 })
                            .collect();
                        q.remap(&back);
                        let old = std::mem::take(&mut model);
                        for (j, groups) in old {
                            let groups = groups.into_iter().map(|(g, v)| (back[g as usize], v));
                            model.insert(j, groups.collect());
                        }
                    }
                }
            }
            drop(held);
        }
    }
}
