//! Two-Stacks: a FIFO of partial states whose aggregate costs amortised O(1) merges.
//!
//! Source: the Two-Stacks algorithm as Tangwongsan, Hirzel and Schneider present it in
//! "Low-Latency Sliding-Window Aggregation in Worst-Case Constant Time" (DEBS 2017, section
//! 3; a queue made of two stacks, each front element keeping the aggregate of itself and
//! everything newer). New entries go to the back list, whose running aggregate is merged as
//! they come; when the oldest entry must leave and the front stack is empty, the back list
//! is *flipped* onto the front stack, each entry merged once into the suffix aggregate of
//! the entries newer than it. The window's aggregate is the front top's suffix merged with
//! the back aggregate: one merge.
//!
//! Complexity, per entry: one merge when it arrives, one when it is flipped, none when it
//! leaves; per query one merge; the flip itself is O(entries) once per that many
//! evictions, so O(1) amortised (DABA makes it worst-case O(1) at a higher constant; panes
//! absorb the per-slide burst well enough that the amortised bound is the cheaper one here).
//!
//! Merges keep time order, older into newer (`older.merge(newer)`), so an extreme that ties
//! keeps the earlier value, as merging the panes of an instance in order does. An entry may
//! also be updated out of order (a late tuple for a partial that is already queued): the
//! update is merged into the entry and into every aggregate that covers it, O(distance to
//! the oldest entry) (see [`Queue::update_at`]).
//!
//! One [`Queue`] holds one group's partials: `naggs` states per entry, the entry's parent
//! instance index `j` beside it.

use crate::agg::{Acc, AggSpec};
use crate::error::Result;
use crate::exec::group::merge_state;

/// One group's Two-Stacks queue of partial states (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct Queue {
    /// Front stack: parent indices, newest first, the oldest last (the top).
    front_j: Vec<i64>,
    /// The front's suffix aggregates: entry `i`'s states merged with every newer front
    /// entry's, `naggs` per entry.
    front_agg: Vec<Acc>,
    /// Back list: parent indices, oldest first.
    back_j: Vec<i64>,
    /// The back entries' own states, `naggs` per entry.
    back_val: Vec<Acc>,
    /// The back entries merged in order (`naggs` states), kept from the second back entry
    /// on: while the back list holds one entry its aggregate is that entry's states, so a
    /// group whose partials are sparse (one per window, the common case of a small group
    /// under short panes) is copied once, not twice.
    back_agg: Vec<Acc>,
}

/// Overwrite `dst` with copies of `src` (as many states), in place where they are plain.
fn copy_all(dst: &mut [Acc], src: &[Acc]) {
    debug_assert_eq!(dst.len(), src.len(), "state for state");
    for (a, b) in dst.iter_mut().zip(src) {
        crate::exec::group::copy_state(a, b);
    }
}

/// `dst[k].merge(src[k])` for every state.
fn merge_all(dst: &mut [Acc], src: &[Acc], specs: &[AggSpec]) -> Result<()> {
    for ((a, b), spec) in dst.iter_mut().zip(src).zip(specs) {
        merge_state(a, b, spec)?;
    }
    Ok(())
}

impl Queue {
    /// True when the queue holds no entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.front_j.is_empty() && self.back_j.is_empty()
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.front_j.len() + self.back_j.len()
    }

    /// Bytes held (capacity).
    pub(crate) fn heap_bytes(&self) -> usize {
        let acc = std::mem::size_of::<Acc>();
        (self.front_j.capacity() + self.back_j.capacity()) * 8
            + (self.front_agg.capacity() + self.back_val.capacity() + self.back_agg.capacity())
                * acc
    }

    /// Drop every entry, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        self.front_j.clear();
        self.front_agg.clear();
        self.back_j.clear();
        self.back_val.clear();
        self.back_agg.clear();
    }

    /// Append the entry of parent instance `j` (newer than every entry held) with `states`.
    /// Returns the merges done (one, or none for the first back entry).
    pub(crate) fn push(&mut self, j: i64, states: &[Acc], specs: &[AggSpec]) -> Result<u64> {
        debug_assert!(
            self.back_j
                .last()
                .or(self.front_j.first())
                .is_none_or(|&n| n < j),
            "partials reach a sliding aggregator in the order their instances close"
        );
        self.back_j.push(j);
        self.back_val.extend_from_slice(states);
        if self.back_j.len() == 1 {
            return Ok(0);
        }
        if self.back_agg.is_empty() {
            // The second entry: the back aggregate starts as the first entry's states.
            self.back_agg
                .extend_from_slice(&self.back_val[..specs.len()]);
        }
        merge_all(&mut self.back_agg, states, specs)?;
        Ok(1)
    }

    /// The back list's aggregate (`naggs` states; the back list must not be empty).
    fn back_aggregate(&self, naggs: usize) -> &[Acc] {
        if self.back_j.len() == 1 {
            &self.back_val[..naggs]
        } else {
            &self.back_agg
        }
    }

    /// Drop the entries of parent instances below `j_min`. Returns the merges done (those
    /// of a flip).
    pub(crate) fn evict_before(&mut self, j_min: i64, specs: &[AggSpec]) -> Result<u64> {
        let naggs = specs.len();
        let mut merges = 0;
        loop {
            if self.front_j.is_empty() {
                match self.back_j.last() {
                    None => return Ok(merges),
                    // Everything leaves: no flip needed.
                    Some(&newest) if newest < j_min => {
                        self.clear();
                        return Ok(merges);
                    }
                    Some(_) if self.back_j[0] >= j_min => return Ok(merges),
                    Some(_) => merges += self.flip(specs)?,
                }
            }
            if self.front_j[0] < j_min {
                // The whole front stack leaves.
                self.front_j.clear();
                self.front_agg.clear();
                continue;
            }
            match self.front_j.last() {
                Some(&top) if top < j_min => {
                    self.front_j.pop();
                    self.front_agg.truncate(self.front_agg.len() - naggs);
                }
                _ => return Ok(merges),
            }
        }
    }

    /// Move the back list onto the (empty) front stack, computing suffix aggregates from
    /// the newest entry to the oldest.
    fn flip(&mut self, specs: &[AggSpec]) -> Result<u64> {
        debug_assert!(self.front_j.is_empty(), "flip onto an empty front stack");
        let naggs = specs.len();
        let n = self.back_j.len();
        self.front_j.reserve(n);
        self.front_agg.reserve(n * naggs);
        for i in (0..n).rev() {
            let start = self.front_agg.len();
            // Moved, not cloned: the back list is emptied below.
            self.front_agg.extend(self.back_val.drain(i * naggs..));
            if start > 0 {
                // This entry (older) merged with the suffix of the entries newer than it.
                let (newer, this) = self.front_agg.split_at_mut(start);
                merge_all(this, &newer[start - naggs..], specs)?;
            }
            self.front_j.push(self.back_j[i]);
        }
        self.back_j.clear();
        self.back_val.clear();
        self.back_agg.clear();
        Ok(n.saturating_sub(1) as u64)
    }

    /// Overwrite `out` (`naggs` states) with the aggregate of every entry held, reusing
    /// its allocations. Returns the merges done (one when both stacks hold entries). The
    /// queue must not be empty.
    pub(crate) fn query_into(&self, out: &mut [Acc], specs: &[AggSpec]) -> Result<u64> {
        let naggs = specs.len();
        debug_assert!(!self.is_empty(), "an empty queue has no aggregate");
        if self.front_j.is_empty() {
            copy_all(out, self.back_aggregate(naggs));
            return Ok(0);
        }
        copy_all(out, &self.front_agg[self.front_agg.len() - naggs..]);
        if self.back_j.is_empty() {
            return Ok(0);
        }
        merge_all(out, self.back_aggregate(naggs), specs)?;
        Ok(1)
    }

    /// True when an entry of parent instance `j` is held.
    pub(crate) fn contains(&self, j: i64) -> bool {
        self.back_j.binary_search(&j).is_ok() || self.front_j.binary_search_by(|x| j.cmp(x)).is_ok()
    }

    /// Apply `update` to the entry of parent instance `j` (created empty, from `specs`,
    /// when the queue has none) and to every aggregate that covers it: a late tuple for a
    /// partial already queued. O(entries older than `j`).
    pub(crate) fn update_at(
        &mut self,
        j: i64,
        specs: &[AggSpec],
        update: &mut dyn FnMut(&mut [Acc]) -> Result<()>,
    ) -> Result<()> {
        let naggs = specs.len();
        let fresh = || specs.iter().map(AggSpec::init);
        if self.front_j.first().is_none_or(|&newest| j > newest) {
            // The back list (or an empty queue).
            match self.back_j.binary_search(&j) {
                Ok(p) => update(&mut self.back_val[p * naggs..(p + 1) * naggs])?,
                Err(p) => {
                    self.back_j.insert(p, j);
                    let at = p * naggs;
                    self.back_val.splice(at..at, fresh());
                    update(&mut self.back_val[at..at + naggs])?;
                    if self.back_j.len() == 2 {
                        // The back aggregate starts with the second entry: both merged
                        // in order (the new one is still empty but for the update).
                        self.back_agg.clear();
                        self.back_agg.extend_from_slice(&self.back_val[..naggs]);
                        merge_all(&mut self.back_agg, &self.back_val[naggs..], specs)?;
                        return Ok(());
                    }
                }
            }
            if self.back_j.len() == 1 {
                // The one entry is its own aggregate, updated above.
                return Ok(());
            }
            return update(&mut self.back_agg);
        }
        // The front stack, newest first: entries at positions >= p are j or older.
        let p = self.front_j.partition_point(|&x| x > j);
        let older_from = if self.front_j.get(p) == Some(&j) {
            p
        } else {
            self.front_j.insert(p, j);
            let at = p * naggs;
            self.front_agg.splice(at..at, fresh());
            if p > 0 {
                // Its suffix: itself (empty so far) merged with the newer entries' suffix.
                let (newer, this) = self.front_agg.split_at_mut(at);
                merge_all(&mut this[..naggs], &newer[at - naggs..], specs)?;
            }
            update(&mut self.front_agg[at..at + naggs])?;
            p + 1
        };
        for i in older_from..self.front_j.len() {
            update(&mut self.front_agg[i * naggs..(i + 1) * naggs])?;
        }
        Ok(())
    }

    /// Append an empty state (`spec.init()`) to every entry and aggregate: the queue held
    /// `naggs` states per entry and holds `naggs + 1` after.
    pub(crate) fn add_state(&mut self, naggs: usize, spec: &AggSpec) {
        for v in [&mut self.front_agg, &mut self.back_val, &mut self.back_agg] {
            let old = std::mem::take(v);
            let entries = old.len() / naggs.max(1);
            v.reserve(entries * (naggs + 1));
            let mut it = old.into_iter();
            for _ in 0..entries {
                v.extend(it.by_ref().take(naggs));
                v.push(spec.init());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::AggFunc;
    use crate::types::{DataType, Value};

    fn specs() -> Vec<AggSpec> {
        vec![
            AggSpec::new(AggFunc::CountStar, DataType::Int8, false),
            AggSpec::new(AggFunc::Max, DataType::Int8, false),
        ]
    }

    fn entry(specs: &[AggSpec], vals: &[i64]) -> Vec<Acc> {
        let mut s: Vec<Acc> = specs.iter().map(AggSpec::init).collect();
        for v in vals {
            s[0].update(&specs[0], &Value::Bool(true)).unwrap();
            s[1].update(&specs[1], &Value::Int8(*v)).unwrap();
        }
        s
    }

    fn eval(specs: &[AggSpec], q: &Queue) -> (Value, Value) {
        let mut out: Vec<Acc> = specs.iter().map(AggSpec::init).collect();
        q.query_into(&mut out, specs).unwrap();
        (
            out[0].evaluate(&specs[0]).unwrap(),
            out[1].evaluate(&specs[1]).unwrap(),
        )
    }

    /// Against recomputing the window from its entries: random pushes, evictions and
    /// out-of-order updates.
    #[test]
    fn queue_equals_recomputation() {
        let specs = specs();
        let mut rng = crate::wcg::eval::Rng::new(5);
        for _ in 0..200 {
            let mut q = Queue::default();
            // The model: (j, values) in order.
            let mut model: Vec<(i64, Vec<i64>)> = Vec::new();
            let (mut next_j, mut lo) = (0i64, 0i64);
            for _ in 0..60 {
                match rng.range(0, 9) {
                    0..=4 => {
                        next_j += rng.range(1, 3);
                        let vals: Vec<i64> =
                            (0..rng.range(1, 3)).map(|_| rng.range(-9, 9)).collect();
                        q.push(next_j, &entry(&specs, &vals), &specs).unwrap();
                        model.push((next_j, vals));
                    }
                    5..=7 => {
                        lo += rng.range(0, 3);
                        q.evict_before(lo, &specs).unwrap();
                        model.retain(|(j, _)| *j >= lo);
                    }
                    _ => {
                        if next_j < lo {
                            continue;
                        }
                        let j = rng.range(lo, next_j);
                        let v = rng.range(-20, 20);
                        q.update_at(j, &specs, &mut |s: &mut [Acc]| {
                            s[0].update(&specs[0], &Value::Bool(true))?;
                            s[1].update(&specs[1], &Value::Int8(v))
                        })
                        .unwrap();
                        match model.iter_mut().find(|(k, _)| *k == j) {
                            Some((_, vals)) => vals.push(v),
                            None => {
                                let p = model.partition_point(|(k, _)| *k < j);
                                model.insert(p, (j, vec![v]));
                            }
                        }
                    }
                }
                assert_eq!(q.len(), model.len());
                if !model.is_empty() {
                    let all: Vec<i64> = model.iter().flat_map(|(_, v)| v.clone()).collect();
                    let want = (
                        Value::Int8(all.len() as i64),
                        Value::Int8(*all.iter().max().unwrap()),
                    );
                    assert_eq!(eval(&specs, &q), want, "{model:?}");
                }
            }
        }
    }

    #[test]
    fn ties_keep_the_older_value() {
        let spec = [AggSpec::new(AggFunc::Max, DataType::Float8, false)];
        let one = |x: f64| {
            let mut a = spec[0].init();
            a.update(&spec[0], &Value::Float8(x)).unwrap();
            vec![a]
        };
        for evict in [0, 1] {
            let mut q = Queue::default();
            for (j, x) in [(0, -5.0), (1, 0.0), (2, -0.0), (3, -1.0)] {
                q.push(j, &one(x), &spec).unwrap();
            }
            // Evicting entry 0 flips the back list onto the front stack.
            q.evict_before(evict, &spec).unwrap();
            let mut out = vec![spec[0].init()];
            q.query_into(&mut out, &spec).unwrap();
            // 0.0 came first: it stays, as merging the instance's partials in order keeps
            // it, with or without a flip.
            assert_eq!(out[0].evaluate(&spec[0]).unwrap().to_text().unwrap(), "0");
        }
    }
}
