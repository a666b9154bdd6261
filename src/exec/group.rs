//! Per-group partial aggregates of window instances.
//!
//! A query interns each group key (the GROUP BY values) once in its [`GroupDict`], which
//! hands out dense group ids. A [`GroupTable`] (one per instance) maps group ids to one
//! partial state per aggregate call, through a plain array for the first 65,536 ids and a
//! small map beyond. So a tuple costs one hash probe whatever the number of instances it
//! falls in, and merging a parent's partial into a child instance costs no hashing at all.
//! States live in flat vectors in first-seen order: emission order is deterministic and no
//! allocation happens per tuple.
//!
//! Design decision: the dictionary outlives instances, so keys that stop appearing would
//! pile up; [`GroupDict::compact`] drops the ids no open instance uses once the dictionary
//! has doubled since the last compaction, keeping memory proportional to the live groups.

use std::hash::{BuildHasher, Hasher};

use hashbrown::HashTable;

use crate::agg::{group_eq, hash_value, Acc, AggSpec};
use crate::error::{Error, Result};
use crate::types::Value;

/// Group ids below this index a table's dense array; others its map.
const DENSE_GIDS: u32 = 1 << 16;
/// No slot.
const ABSENT: u32 = u32::MAX;

/// The hasher every group table of one query shares, so partials can move between tables
/// (parent to child window) without rehashing keys.
#[derive(Clone)]
pub struct KeyHasher(ahash::RandomState);

impl KeyHasher {
    /// A hasher with fixed seeds (deterministic across runs).
    pub fn new() -> KeyHasher {
        KeyHasher(ahash::RandomState::with_seeds(
            0x7463_7100,
            0x5f77_6367,
            0x6661_6374,
            0x6f72_7321,
        ))
    }

    /// A hasher to feed a key's values to, one after the other, as [`KeyHasher::hash`] does
    /// (the columnar path hashes keys straight from their columns with it).
    pub(crate) fn start(&self) -> ahash::AHasher {
        self.0.build_hasher()
    }

    /// Hash of a group key.
    pub fn hash(&self, key: &[Value]) -> u64 {
        let mut h = self.0.build_hasher();
        for v in key {
            hash_value(v, &mut h);
        }
        h.finish()
    }
}

impl Default for KeyHasher {
    fn default() -> Self {
        KeyHasher::new()
    }
}

/// Group keys of one query, interned to dense ids.
#[derive(Clone, Debug, Default)]
pub struct GroupDict {
    index: HashTable<u32>,
    hashes: Vec<u64>,
    keys: Vec<Value>,
    nkeys: usize,
    /// Ids of short text keys already interned, for a key of one text column.
    short: ShortTextIds,
}

/// Slots of a [`ShortTextIds`] memo (a power of two).
const SHORT_TEXT_SLOTS: usize = 1024;

/// A direct-mapped memo from a short text key (at most 7 bytes, [`ShortTextIds::pack`]ed
/// into 64 bits) to the id its dictionary gave it, so that a key seen before costs one
/// multiplication and one load instead of hashing its bytes, probing the dictionary's
/// index and comparing the stored text. Slots are overwritten on collision; a slot holds
/// the id of the key it names or nothing (`ABSENT`). Ids never change while the dictionary
/// lives ([`GroupDict::compact`] builds a new dictionary, with an empty memo). Empty until
/// the first key is remembered, then `SHORT_TEXT_SLOTS` entries (16 KiB).
#[derive(Clone, Debug, Default)]
pub(crate) struct ShortTextIds {
    /// `(packed key, id)` per slot.
    slots: Box<[(u64, u32)]>,
}

impl ShortTextIds {
    /// `s` as 64 bits when it is at most 7 bytes long: its bytes little-endian, its length
    /// in the top byte (so `"a"` and `"a\0"` differ). `None` for a longer string.
    #[inline]
    pub(crate) fn pack(s: &[u8]) -> Option<u64> {
        if s.len() > 7 {
            return None;
        }
        let mut v = (s.len() as u64) << 56;
        for (k, &b) in s.iter().enumerate() {
            v |= u64::from(b) << (8 * k);
        }
        Some(v)
    }

    /// The slot of `packed` (Fibonacci hashing: the top bits of a multiplication).
    #[inline]
    fn slot(packed: u64) -> usize {
        (packed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SHORT_TEXT_SLOTS.trailing_zeros()))
            as usize
    }

    /// The id remembered for `packed`, if any.
    #[inline]
    fn get(&self, packed: u64) -> Option<u32> {
        match self.slots.get(Self::slot(packed)) {
            Some(&(p, id)) if p == packed && id != ABSENT => Some(id),
            _ => None,
        }
    }

    /// Remember `id` for `packed`, replacing whatever the slot held.
    #[inline]
    fn set(&mut self, packed: u64, id: u32) {
        if self.slots.is_empty() {
            self.slots = vec![(0, ABSENT); SHORT_TEXT_SLOTS].into_boxed_slice();
        }
        self.slots[Self::slot(packed)] = (packed, id);
    }
}

impl GroupDict {
    /// An empty dictionary of keys of `nkeys` values.
    pub fn new(nkeys: usize) -> GroupDict {
        GroupDict {
            nkeys,
            ..Default::default()
        }
    }

    /// Bytes the dictionary's vectors and index hold (capacity, not the heap behind text
    /// keys): an estimate for the console and `/metrics`.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.hashes.capacity() * 8
            + self.keys.capacity() * std::mem::size_of::<Value>()
            + self.index.capacity() * 4
            + std::mem::size_of_val(&*self.short.slots)
    }

    /// The id of the one-column text key whose [`ShortTextIds::pack`]ed bytes are
    /// `packed`, when [`GroupDict::remember_short_text`] recorded it (and no other key
    /// took its memo slot since).
    #[inline]
    pub(crate) fn short_text_id(&self, packed: u64) -> Option<u32> {
        self.short.get(packed)
    }

    /// Record that the one-column text key packed as `packed` has id `id` (an id this
    /// dictionary gave that key).
    #[inline]
    pub(crate) fn remember_short_text(&mut self, packed: u64, id: u32) {
        debug_assert_eq!(self.nkeys, 1, "a memo of one-column keys");
        self.short.set(packed, id);
    }

    /// Number of ids handed out.
    pub(crate) fn len(&self) -> usize {
        self.hashes.len()
    }

    /// The id of `key` (hash `hash`), interning a copy of it if new.
    pub fn intern(&mut self, hash: u64, key: &[Value]) -> u32 {
        debug_assert_eq!(key.len(), self.nkeys, "group key width is fixed per query");
        let (keys, nkeys) = (&self.keys, self.nkeys);
        if let Some(&g) = self.index.find(hash, |&g| {
            let k = &keys[g as usize * nkeys..(g as usize + 1) * nkeys];
            k.iter().zip(key).all(|(a, b)| group_eq(a, b))
        }) {
            return g;
        }
        let g = self.hashes.len() as u32;
        self.hashes.push(hash);
        self.keys.extend(key.iter().cloned());
        let hashes = &self.hashes;
        self.index.insert_unique(hash, g, |&x| hashes[x as usize]);
        g
    }

    /// The id of the key of no values (an ungrouped query's one group), interned if new:
    /// a dictionary of such keys holds at most that one, as id 0, so only its first call
    /// hashes.
    #[inline]
    pub(crate) fn empty_key_id(&mut self, hasher: &KeyHasher) -> u32 {
        debug_assert_eq!(self.nkeys, 0, "keys of no values");
        if self.len() > 0 {
            return 0;
        }
        self.intern(hasher.hash(&[]), &[])
    }

    /// The id of the key of hash `hash` for which `eq` holds, or, if none is interned, of
    /// the key `make` appends to the vector it is given (exactly `nkeys` values, hashing to
    /// `hash` and satisfying `eq`). The columnar path compares keys with their columns and
    /// builds [`Value`]s only for a new key.
    pub(crate) fn intern_with(
        &mut self,
        hash: u64,
        eq: impl Fn(&[Value]) -> bool,
        make: impl FnOnce(&mut Vec<Value>),
    ) -> u32 {
        let (keys, nkeys) = (&self.keys, self.nkeys);
        if let Some(&g) = self.index.find(hash, |&g| {
            eq(&keys[g as usize * nkeys..(g as usize + 1) * nkeys])
        }) {
            return g;
        }
        let g = self.hashes.len() as u32;
        self.hashes.push(hash);
        make(&mut self.keys);
        debug_assert_eq!(
            self.keys.len(),
            self.hashes.len() * nkeys,
            "make appends one key"
        );
        let hashes = &self.hashes;
        self.index.insert_unique(hash, g, |&x| hashes[x as usize]);
        g
    }

    /// The key of group `gid`.
    pub(crate) fn key(&self, gid: u32) -> &[Value] {
        &self.keys[gid as usize * self.nkeys..(gid as usize + 1) * self.nkeys]
    }

    /// Keep only the ids in `live` (ascending, distinct), renumbered from 0 in that order.
    /// Returns the map from old id to new id (`u32::MAX` for dropped ids).
    pub(crate) fn compact(&mut self, live: &[u32]) -> Vec<u32> {
        let mut map = vec![ABSENT; self.len()];
        let mut next = GroupDict::new(self.nkeys);
        for &g in live {
            let new = next.intern(self.hashes[g as usize], self.key(g));
            map[g as usize] = new;
        }
        *self = next;
        map
    }
}

/// `a.merge(spec, b)`, with the states dashboards use most (counts, integer sums, and the
/// min or max of bigints) merged inline: a shared plan merges every closed partial into
/// its children's open instances, state by state, and that loop is its hottest.
#[inline(always)]
pub(crate) fn merge_state(a: &mut Acc, b: &Acc, spec: &AggSpec) -> Result<()> {
    let min = spec.func.keeps_least();
    match (&mut *a, b) {
        (Acc::Count(x), Acc::Count(y)) => *x += y,
        (Acc::IntSum { sum, n }, Acc::IntSum { sum: s2, n: n2 }) => {
            *sum = sum
                .checked_add(*s2)
                .ok_or_else(|| crate::agg::out_of_range("numeric"))?;
            *n += n2;
        }
        (Acc::Extreme(_), Acc::Extreme(Value::Null)) => {}
        (Acc::Extreme(Value::Int4(x)), Acc::Extreme(Value::Int4(y))) => {
            *x = if min { (*x).min(*y) } else { (*x).max(*y) }
        }
        (Acc::Extreme(Value::Int8(x)), Acc::Extreme(Value::Int8(y))) => {
            *x = if min { (*x).min(*y) } else { (*x).max(*y) }
        }
        _ => return a.merge(spec, b),
    }
    Ok(())
}

/// Overwrite state `a` with a copy of `b`. The plain states of the common aggregates
/// (count, an integer sum or average, an integer min or max) are written in place, with no
/// drop of the old state and no clone call; any other pair is cloned.
#[inline]
pub(crate) fn copy_state(a: &mut Acc, b: &Acc) {
    match (&mut *a, b) {
        (Acc::Count(x), Acc::Count(y)) => *x = *y,
        (Acc::IntSum { sum, n }, Acc::IntSum { sum: s2, n: n2 }) => (*sum, *n) = (*s2, *n2),
        (Acc::Extreme(Value::Int4(x)), Acc::Extreme(Value::Int4(y))) => *x = *y,
        (Acc::Extreme(Value::Int8(x)), Acc::Extreme(Value::Int8(y))) => *x = *y,
        _ => a.clone_from(b),
    }
}

/// Where each group id sits (a slot): a plain array for the first 65,536 ids, a small map
/// beyond, so that a look-up costs no hashing for the ids a query hands out first.
#[derive(Clone, Debug, Default)]
pub(crate) struct GidIndex {
    dense: Vec<u32>,
    sparse: hashbrown::HashMap<u32, u32>,
}

impl GidIndex {
    /// The slot of `gid`, or `u32::MAX`.
    #[inline]
    pub(crate) fn get(&self, gid: u32) -> u32 {
        if gid < DENSE_GIDS {
            self.dense.get(gid as usize).copied().unwrap_or(ABSENT)
        } else {
            self.sparse.get(&gid).copied().unwrap_or(ABSENT)
        }
    }

    /// Record that `gid` lives in `slot`.
    #[inline]
    pub(crate) fn set(&mut self, gid: u32, slot: u32) {
        if gid < DENSE_GIDS {
            if self.dense.len() <= gid as usize {
                let len = (gid as usize + 1)
                    .next_power_of_two()
                    .min(DENSE_GIDS as usize);
                self.dense.resize(len, ABSENT);
            }
            self.dense[gid as usize] = slot;
        } else {
            self.sparse.insert(gid, slot);
        }
    }

    /// Forget `gid`.
    #[inline]
    pub(crate) fn remove(&mut self, gid: u32) {
        if gid < DENSE_GIDS {
            if let Some(s) = self.dense.get_mut(gid as usize) {
                *s = ABSENT;
            }
        } else {
            self.sparse.remove(&gid);
        }
    }

    /// Bytes the index holds (capacity).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.dense.capacity() * 4 + self.sparse.capacity() * 8
    }
}

/// The partial states of one instance, by group id.
#[derive(Clone, Debug, Default)]
pub struct GroupTable {
    index: GidIndex,
    gids: Vec<u32>,
    accs: Vec<Acc>,
}

impl GroupTable {
    /// An empty table sized for `groups` groups of `naggs` states (the previous instance's
    /// count is a good guess and saves growing the vectors).
    pub(crate) fn with_capacity(naggs: usize, groups: usize) -> GroupTable {
        GroupTable {
            gids: Vec::with_capacity(groups),
            accs: Vec::with_capacity(groups * naggs),
            ..Default::default()
        }
    }

    /// A copy of this table (of `naggs` states per group) with room for `groups` groups,
    /// so that merges adding groups to the copy do not grow it.
    pub(crate) fn clone_with_room(&self, naggs: usize, groups: usize) -> GroupTable {
        let groups = groups.max(self.len());
        let mut gids = Vec::with_capacity(groups);
        gids.extend_from_slice(&self.gids);
        let mut accs = Vec::with_capacity(groups * naggs);
        accs.extend_from_slice(&self.accs);
        GroupTable {
            index: self.index.clone(),
            gids,
            accs,
        }
    }

    /// An empty table.
    pub fn new() -> GroupTable {
        GroupTable::default()
    }

    /// Bytes the table's vectors hold (capacity, not the heap behind DISTINCT sets or
    /// numerics): an estimate for the console and `/metrics`.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.index.heap_bytes()
            + self.gids.capacity() * 4
            + self.accs.capacity() * std::mem::size_of::<Acc>()
    }

    /// Bytes the DISTINCT sets of the table's states hold (their hash tables' capacity
    /// times an entry's size, not text behind the values); walks every state.
    pub(crate) fn distinct_bytes(&self) -> usize {
        const ENTRY: usize = std::mem::size_of::<crate::agg::GroupValue>() + 1;
        self.accs
            .iter()
            .map(|a| match a {
                Acc::Distinct(set) => set.capacity() * ENTRY,
                _ => 0,
            })
            .sum()
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.gids.len()
    }

    /// True when no tuple or partial has reached this instance.
    pub fn is_empty(&self) -> bool {
        self.gids.is_empty()
    }

    /// The group at slot `g`: its id and its states.
    pub(crate) fn group(&self, g: usize, naggs: usize) -> (u32, &[Acc]) {
        (self.gids[g], &self.accs[g * naggs..(g + 1) * naggs])
    }

    /// Every group id present, in slot order.
    pub(crate) fn gids(&self) -> &[u32] {
        &self.gids
    }

    #[inline]
    fn lookup(&self, gid: u32) -> u32 {
        self.index.get(gid)
    }

    /// The slot of group `gid`, if present.
    pub(crate) fn slot_of(&self, gid: u32) -> Option<usize> {
        let s = self.lookup(gid);
        (s != ABSENT).then_some(s as usize)
    }

    /// Record that group `gid` lives in `slot`.
    #[inline]
    fn index(&mut self, gid: u32, slot: u32) {
        self.index.set(gid, slot);
    }

    /// Remove every group, keeping the allocations (a sliding aggregator refills one table
    /// at each slide event).
    pub(crate) fn clear(&mut self) {
        for &gid in &self.gids {
            self.index.remove(gid);
        }
        self.gids.clear();
        self.accs.clear();
    }

    /// Append group `gid` (not present) with the `naggs` states `fill` appends to the
    /// vector it is given.
    ///
    /// Errors: 54000 when the table would exceed `groups_max` groups; `fill`'s own.
    pub(crate) fn push_group(
        &mut self,
        gid: u32,
        groups_max: usize,
        fill: impl FnOnce(&mut Vec<Acc>) -> Result<()>,
    ) -> Result<()> {
        debug_assert_eq!(self.lookup(gid), ABSENT, "a group is pushed once");
        self.check_room(groups_max)?;
        let slot = self.gids.len() as u32;
        fill(&mut self.accs)?;
        self.index(gid, slot);
        self.gids.push(gid);
        Ok(())
    }

    /// Remove the group in `slot` (`naggs` states per group): the last group moves into its
    /// place, so removal is O(1) and slot order is not kept.
    pub(crate) fn remove_slot(&mut self, slot: usize, naggs: usize) {
        let gid = self.gids[slot];
        self.index.remove(gid);
        let last = self.gids.len() - 1;
        if slot != last {
            let moved = self.gids[last];
            self.gids[slot] = moved;
            self.index(moved, slot as u32);
            let (head, tail) = self.accs.split_at_mut(last * naggs);
            head[slot * naggs..(slot + 1) * naggs].swap_with_slice(&mut tail[..naggs]);
        }
        self.gids.truncate(last);
        self.accs.truncate(last * naggs);
    }

    /// The states of the group in `slot` (`naggs` per group), to update in place.
    pub(crate) fn states_mut(&mut self, slot: usize, naggs: usize) -> &mut [Acc] {
        &mut self.accs[slot * naggs..(slot + 1) * naggs]
    }

    /// Errors: 54000 when one more group would exceed `groups_max`.
    fn check_room(&self, groups_max: usize) -> Result<()> {
        if self.gids.len() >= groups_max {
            return Err(Error::ProgramLimitExceeded(format!(
                "a window instance has more than {groups_max} groups (groups_max)"
            )));
        }
        Ok(())
    }

    /// The slot of group `gid`, with fresh states if new.
    ///
    /// Errors: 54000 when the table would exceed `groups_max` groups.
    pub fn slot(&mut self, gid: u32, specs: &[AggSpec], groups_max: usize) -> Result<usize> {
        let found = self.lookup(gid);
        if found != ABSENT {
            return Ok(found as usize);
        }
        self.check_room(groups_max)?;
        let slot = self.gids.len() as u32;
        self.index(gid, slot);
        self.gids.push(gid);
        self.accs.extend(specs.iter().map(AggSpec::init));
        Ok(slot as usize)
    }

    /// Every slot's states, slot `g`'s at `g * naggs ..`: the typed kernels fold columns
    /// into them directly.
    pub fn accs_mut(&mut self) -> &mut [Acc] {
        &mut self.accs
    }

    /// Fold one tuple's argument values into slot `g`.
    pub fn update(&mut self, g: usize, specs: &[AggSpec], args: &[Value]) -> Result<()> {
        let n = specs.len();
        for (j, (spec, v)) in specs.iter().zip(args).enumerate() {
            self.accs[g * n + j].update(spec, v)?;
        }
        Ok(())
    }

    /// Merge every group of `other` (a partial of an upstream instance) into this table.
    pub fn merge_from(
        &mut self,
        other: &GroupTable,
        specs: &[AggSpec],
        groups_max: usize,
    ) -> Result<()> {
        let n = specs.len();
        if self.is_empty() && other.len() <= groups_max {
            // The first partial an instance receives: a copy, slot for slot, is what
            // merging it into fresh states gives, without a lookup, an `init` and a
            // `merge` per state (most instances of a hopping window start this way).
            debug_assert_eq!(other.accs.len(), other.len() * n, "stride is naggs");
            self.accs.extend_from_slice(&other.accs);
            for (slot, &gid) in other.gids.iter().enumerate() {
                self.index(gid, slot as u32);
            }
            self.gids.extend_from_slice(&other.gids);
            return Ok(());
        }
        for g in 0..other.len() {
            let (gid, accs) = other.group(g, n);
            let found = self.lookup(gid);
            if found == ABSENT {
                // A group new to this instance: its states are a copy of the partial's,
                // as merging them into fresh states would give, without an `init` and a
                // `merge` per state.
                self.check_room(groups_max)?;
                let slot = self.gids.len() as u32;
                self.index(gid, slot);
                self.gids.push(gid);
                self.accs.extend_from_slice(accs);
                continue;
            }
            let mine = &mut self.accs[found as usize * n..(found as usize + 1) * n];
            for ((a, b), spec) in mine.iter_mut().zip(accs).zip(specs) {
                merge_state(a, b, spec)?;
            }
        }
        Ok(())
    }

    /// Append one aggregate state, empty (`spec.init()`), to every group: the table held
    /// `naggs` states per group and holds `naggs + 1` after. A shared plan that gains a
    /// state widens its open instances this way (`exec::shared`).
    pub(crate) fn add_state(&mut self, naggs: usize, spec: &AggSpec) {
        debug_assert_eq!(self.accs.len(), self.gids.len() * naggs, "stride is naggs");
        let old = std::mem::take(&mut self.accs);
        self.accs = Vec::with_capacity(old.len() + self.gids.len());
        let mut it = old.into_iter();
        for _ in 0..self.gids.len() {
            self.accs.extend(it.by_ref().take(naggs));
            self.accs.push(spec.init());
        }
    }

    /// Roll this table's groups (keys in `dict`, states `specs`) up onto coarser keys:
    /// coarse key value `k` is fine key value `key_map[k]`, and coarse state `j` merges fine
    /// state `state_map[j]` (`out_specs[j]` is its spec). The coarse keys are interned in
    /// `out_dict` and the merged states land in `out`, in first-seen order. Exact for every
    /// aggregate whose partials merge (all but DISTINCT ones, which are never shared).
    ///
    /// Errors: 54000 when `out` would exceed `groups_max` groups; merge errors (numeric
    /// overflow) of the states.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn roll_up(
        &self,
        dict: &GroupDict,
        specs: &[AggSpec],
        key_map: &[usize],
        state_map: &[usize],
        out_specs: &[AggSpec],
        hasher: &KeyHasher,
        out_dict: &mut GroupDict,
        out: &mut GroupTable,
        groups_max: usize,
    ) -> Result<()> {
        let (n, m) = (specs.len(), out_specs.len());
        let mut key = Vec::with_capacity(key_map.len());
        for g in 0..self.len() {
            let (gid, accs) = self.group(g, n);
            let fine = dict.key(gid);
            key.clear();
            key.extend(key_map.iter().map(|&i| fine[i].clone()));
            let cgid = out_dict.intern(hasher.hash(&key), &key);
            let slot = out.slot(cgid, out_specs, groups_max)?;
            for (j, spec) in out_specs.iter().enumerate() {
                out.accs[slot * m + j].merge(spec, &accs[state_map[j]])?;
            }
        }
        Ok(())
    }

    /// Renumber group ids after [`GroupDict::compact`]; every id here must be live.
    pub(crate) fn remap(&mut self, map: &[u32]) {
        self.index = GidIndex::default();
        let gids = std::mem::take(&mut self.gids);
        for (slot, old) in gids.into_iter().enumerate() {
            let gid = map[old as usize];
            debug_assert_ne!(gid, ABSENT, "a group of an open instance is live");
            self.index(gid, slot as u32);
            self.gids.push(gid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::AggFunc;
    use crate::types::DataType;

    /// A copied state equals its source, whether written in place or cloned (another
    /// variant, a text extreme).
    #[test]
    fn copy_state_writes_the_source_state() {
        let pairs = [
            (Acc::Count(3), Acc::Count(9)),
            (
                Acc::IntSum { sum: 1, n: 1 },
                Acc::IntSum {
                    sum: -(1 << 70),
                    n: 4,
                },
            ),
            (Acc::Extreme(Value::Int4(1)), Acc::Extreme(Value::Int4(-5))),
            (
                Acc::Extreme(Value::Int8(1)),
                Acc::Extreme(Value::Int8(1 << 40)),
            ),
            (Acc::Extreme(Value::Null), Acc::Extreme(Value::Int8(2))),
            (Acc::Extreme(Value::Int8(2)), Acc::Extreme(Value::Null)),
            (
                Acc::Count(1),
                Acc::Extreme(Value::Text("x".repeat(50).into())),
            ),
        ];
        for (mut a, b) in pairs {
            copy_state(&mut a, &b);
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
    }

    #[test]
    fn short_text_memo_packs_length_and_bytes_and_forgets_on_collision() {
        let pack = |s: &str| ShortTextIds::pack(s.as_bytes());
        assert_eq!(pack(""), Some(0));
        assert_eq!(pack("AB"), Some((2 << 56) | 0x4241));
        assert_ne!(pack("A"), pack("A\0"));
        assert_eq!(pack("1234567").map(|p| p >> 56), Some(7));
        assert_eq!(pack("12345678"), None);
        let mut m = ShortTextIds::default();
        assert_eq!(
            m.get(0),
            None,
            "an empty memo holds nothing, not even the empty key"
        );
        m.set(pack("ATL").unwrap(), 7);
        m.set(pack("").unwrap(), 3);
        assert_eq!(m.get(pack("ATL").unwrap()), Some(7));
        assert_eq!(m.get(0), Some(3));
        assert_eq!(m.get(pack("SFO").unwrap()), None);
        // Two keys of one slot: the later replaces the earlier, which is then unknown.
        let a = pack("ATL").unwrap();
        let b = (1u64..)
            .map(|x| a ^ x)
            .find(|&b| ShortTextIds::slot(b) == ShortTextIds::slot(a))
            .unwrap();
        m.set(b, 9);
        assert_eq!((m.get(a), m.get(b)), (None, Some(9)));
        assert_eq!(m.slots.len(), SHORT_TEXT_SLOTS);
    }

    #[test]
    fn ids_survive_compaction_and_tables_follow() {
        let h = KeyHasher::new();
        let mut d = GroupDict::new(1);
        let specs = [AggSpec::new(AggFunc::CountStar, DataType::Int8, false)];
        let key = |s: &str| vec![Value::Text(s.into())];
        let mut t = GroupTable::new();
        for name in ["a", "b", "c", "b"] {
            let gid = d.intern(h.hash(&key(name)), &key(name));
            let slot = t.slot(gid, &specs, 10).unwrap();
            t.update(slot, &specs, &[Value::Bool(true)]).unwrap();
        }
        assert_eq!(d.len(), 3);
        // Only "b" and "c" are live; they become ids 0 and 1.
        let map = d.compact(&[1, 2]);
        assert_eq!(map, vec![u32::MAX, 0, 1]);
        let mut live = GroupTable::new();
        live.merge_from(&t, &specs, 10).ok();
        let mut only_live = GroupTable::new();
        for g in 1..3 {
            let (gid, accs) = t.group(g, 1);
            let s = only_live.slot(gid, &specs, 10).unwrap();
            only_live.accs[s] = accs[0].clone();
        }
        only_live.remap(&map);
        assert_eq!(d.key(only_live.group(0, 1).0), &key("b")[..]);
        assert_eq!(
            only_live.group(0, 1).1[0].evaluate(&specs[0]).unwrap(),
            Value::Int8(2)
        );
        assert_eq!(d.intern(h.hash(&key("c")), &key("c")), 1);
        assert!(GroupTable::new().slot(DENSE_GIDS + 5, &specs, 10).is_ok());
    }

    /// A partial merged into an empty table (copied, slot for slot) holds exactly the
    /// states merging it into fresh ones gives, for every kind of state, and a second
    /// partial merges on top of the copy as it does on top of merged states.
    #[test]
    fn first_merge_into_an_empty_table_equals_merging_into_fresh_states() {
        use rust_decimal::Decimal;
        let specs = [
            AggSpec::new(AggFunc::CountStar, DataType::Int8, false),
            AggSpec::new(AggFunc::Sum, DataType::Int4, false),
            AggSpec::new(AggFunc::Sum, DataType::Numeric, false),
            AggSpec::new(AggFunc::Avg, DataType::Float8, false),
            AggSpec::new(AggFunc::Max, DataType::Text, false),
            AggSpec::new(AggFunc::Min, DataType::Int4, false),
            AggSpec::new(AggFunc::VarSamp, DataType::Numeric, false),
            AggSpec::new(AggFunc::StddevPop, DataType::Float8, false),
        ];
        let row = |i: i64| {
            let null = i % 3 == 0;
            let or_null = |v: Value| if null { Value::Null } else { v };
            [
                Value::Bool(true),
                or_null(Value::Int4(i as i32 - 4)),
                or_null(Value::Numeric(Decimal::new(i * 125 - 700, 2))),
                or_null(Value::Float8(i as f64 * -0.5)),
                or_null(Value::Text(format!("t{i}").into())),
                or_null(Value::Int4(7 - i as i32)),
                or_null(Value::Numeric(Decimal::new(i * 3, 1))),
                or_null(Value::Float8(i as f64 / 3.0)),
            ]
        };
        let partial = |from: i64| {
            let mut t = GroupTable::new();
            // Group 5 sees only NULL arguments (row 0), so its min and max stay NULL.
            for (i, gid) in [(0, 5), (from + 1, 2), (from + 2, 70_000), (from + 4, 2)] {
                let g = t.slot(gid, &specs, 10).unwrap();
                t.update(g, &specs, &row(i)).unwrap();
            }
            t
        };
        let (a, b) = (partial(1), partial(5));
        let mut copied = GroupTable::new();
        copied.merge_from(&a, &specs, 10).unwrap();
        let mut merged = GroupTable::new();
        for g in 0..a.len() {
            let (gid, accs) = a.group(g, specs.len());
            let slot = merged.slot(gid, &specs, 10).unwrap();
            for (j, spec) in specs.iter().enumerate() {
                merged.accs[slot * specs.len() + j]
                    .merge(spec, &accs[j])
                    .unwrap();
            }
        }
        for t in [&mut copied, &mut merged] {
            t.merge_from(&b, &specs, 10).unwrap();
        }
        assert_eq!(copied.gids(), merged.gids());
        assert_eq!(format!("{:?}", copied.accs), format!("{:?}", merged.accs));
        for &gid in copied.gids() {
            assert_eq!(copied.lookup(gid), merged.lookup(gid), "group {gid}");
        }
        // Past the group limit the copy is not taken: the merge fails as it always did.
        let err = GroupTable::new().merge_from(&a, &specs, 2).unwrap_err();
        assert!(err.to_string().contains("groups_max"), "{err}");
    }

    /// The inline merges give what `Acc::merge` gives, NULL extremes and the overflow
    /// error of an integer sum included.
    #[test]
    fn inline_merges_equal_acc_merge() {
        let int8 = |x: Option<i64>| x.map_or(Value::Null, Value::Int8);
        let int4 = |x: Option<i64>| x.map_or(Value::Null, |x| Value::Int4(x as i32));
        let cases: Vec<(AggSpec, Vec<Value>)> = vec![
            (
                AggSpec::new(AggFunc::CountStar, DataType::Int8, false),
                vec![Value::Bool(true)],
            ),
            (
                AggSpec::new(AggFunc::Sum, DataType::Int8, false),
                vec![int8(Some(3)), int8(None), int8(Some(-9))],
            ),
            (
                AggSpec::new(AggFunc::Min, DataType::Int8, false),
                vec![int8(Some(3)), int8(None), int8(Some(-9))],
            ),
            (
                AggSpec::new(AggFunc::Max, DataType::Int8, false),
                vec![int8(Some(3)), int8(None), int8(Some(-9))],
            ),
            (
                AggSpec::new(AggFunc::Min, DataType::Int4, false),
                vec![int4(Some(3)), int4(None), int4(Some(-9))],
            ),
            (
                AggSpec::new(AggFunc::Max, DataType::Int4, false),
                vec![int4(Some(3)), int4(None), int4(Some(-9))],
            ),
        ];
        for (spec, values) in &cases {
            // Every pair of states: empty, or one value folded.
            let states: Vec<Acc> = std::iter::once(spec.init())
                .chain(values.iter().map(|v| {
                    let mut a = spec.init();
                    a.update(spec, v).unwrap();
                    a
                }))
                .collect();
            for a in &states {
                for b in &states {
                    let (mut inline, mut plain) = (a.clone(), a.clone());
                    merge_state(&mut inline, b, spec).unwrap();
                    plain.merge(spec, b).unwrap();
                    assert_eq!(format!("{inline:?}"), format!("{plain:?}"), "{spec:?}");
                }
            }
        }
        let sum = AggSpec::new(AggFunc::Sum, DataType::Int8, false);
        let mut big = Acc::IntSum {
            sum: i128::MAX,
            n: 1,
        };
        let err = merge_state(&mut big, &Acc::IntSum { sum: 1, n: 1 }, &sum).unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
    }

    /// (origin, dest) groups with count(*) and max(v), `rows` of (origin, dest, v).
    fn fine_table(rows: &[(&str, &str, i64)]) -> (GroupDict, GroupTable, Vec<AggSpec>) {
        let h = KeyHasher::new();
        let specs = vec![
            AggSpec::new(AggFunc::CountStar, DataType::Int8, false),
            AggSpec::new(AggFunc::Max, DataType::Int8, false),
        ];
        let mut d = GroupDict::new(2);
        let mut t = GroupTable::new();
        for (o, dest, v) in rows {
            let key = [Value::Text((*o).into()), Value::Text((*dest).into())];
            let gid = d.intern(h.hash(&key), &key);
            let g = t.slot(gid, &specs, 100).unwrap();
            t.update(g, &specs, &[Value::Bool(true), Value::Int8(*v)])
                .unwrap();
        }
        (d, t, specs)
    }

    #[test]
    fn roll_up_merges_fine_groups_onto_a_subset_of_the_keys() {
        let rows = [
            ("ATL", "ORD", 5),
            ("ATL", "SFO", 9),
            ("ORD", "ATL", 1),
            ("ATL", "ORD", 2),
            ("SFO", "ATL", 4),
            ("ORD", "SFO", 7),
        ];
        let (d, t, specs) = fine_table(&rows);
        // Per origin (key 0), states in the order max, count.
        let out_specs = [specs[1].clone(), specs[0].clone()];
        let mut cd = GroupDict::new(1);
        let mut c = GroupTable::new();
        t.roll_up(
            &d,
            &specs,
            &[0],
            &[1, 0],
            &out_specs,
            &KeyHasher::new(),
            &mut cd,
            &mut c,
            100,
        )
        .unwrap();
        let got: Vec<(Value, Value, Value)> = (0..c.len())
            .map(|g| {
                let (gid, accs) = c.group(g, 2);
                (
                    cd.key(gid)[0].clone(),
                    accs[0].evaluate(&out_specs[0]).unwrap(),
                    accs[1].evaluate(&out_specs[1]).unwrap(),
                )
            })
            .collect();
        let text = |s: &str| Value::Text(s.into());
        assert_eq!(
            got,
            vec![
                (text("ATL"), Value::Int8(9), Value::Int8(3)),
                (text("ORD"), Value::Int8(7), Value::Int8(2)),
                (text("SFO"), Value::Int8(4), Value::Int8(1)),
            ]
        );
        // Per destination (key 1) with a limit of 2 groups: SFO, ORD, ATL are 3.
        let mut c = GroupTable::new();
        let err = t
            .roll_up(
                &d,
                &specs,
                &[1],
                &[0],
                &specs[..1],
                &KeyHasher::new(),
                &mut GroupDict::new(1),
                &mut c,
                2,
            )
            .unwrap_err();
        assert!(err.to_string().contains("groups_max"), "{err}");
    }

    #[test]
    fn an_added_state_starts_empty_beside_the_old_ones() {
        let (_, mut t, mut specs) = fine_table(&[("ATL", "ORD", 5), ("ORD", "ATL", 1)]);
        let sum = AggSpec::new(AggFunc::Sum, DataType::Int4, false);
        t.add_state(2, &sum);
        specs.push(sum);
        let g = t.slot(0, &specs, 100).unwrap();
        t.update(
            g,
            &specs,
            &[Value::Bool(true), Value::Int8(3), Value::Int4(3)],
        )
        .unwrap();
        let values = |g: usize| -> Vec<Value> {
            let (_, accs) = t.group(g, 3);
            accs.iter()
                .zip(&specs)
                .map(|(a, s)| a.evaluate(s).unwrap())
                .collect()
        };
        // count and max kept their values; sum holds only the tuple folded after.
        assert_eq!(
            values(0),
            vec![Value::Int8(2), Value::Int8(5), Value::Int8(3)]
        );
        assert_eq!(values(1), vec![Value::Int8(1), Value::Int8(1), Value::Null]);
    }
}
