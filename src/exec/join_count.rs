//! Counting the live join tuples of a two-input equi-join without forming them.
//!
//! A join query of the shape `SELECT k..., count(*) FROM s a [w1] JOIN t b [w2] ON a.x = b.y
//! [AND a.x2 = b.y2 ...] [WHERE <filters on one side>] [GROUP BY <join key columns>]` (the
//! "connections" benchmark is one) needs only, at each slide event `e`, the number of live
//! join tuples per key. A join tuple of base tuples `p` (input a) and `q` (input b) is live
//! at `e` iff both are (its birth is the max of theirs, its death the min), so the count of
//! key `k` at `e` is `|a_k live at e| * |b_k live at e|`. [`PairCounts`] keeps, per distinct
//! key and input, how many stored base tuples share each `(birth, death)`, and multiplies at
//! each slide event: the per-tuple work is a hash lookup and a counter increment instead of
//! a probe that materialises every matching pair.
//!
//! Design decision: the fast path keeps exactly what the general join keeps (a base tuple is
//! counted from its arrival until its death; one that dies at or before the next slide
//! event is never kept), so its rows equal the general path's on every input, late tuples
//! included; `tests/it/join_differential.rs` checks both against one reference. It applies
//! only when that equality is evident: count(*) aggregates only, two inputs, no predicate
//! over both inputs other than the equalities, the equalities between plain columns of one
//! type whose equal values print alike (integers, booleans, text, timestamps; not floats,
//! numerics or intervals, where `=` equates values that print differently), and group keys
//! that are key columns.

use super::group::{GroupDict, KeyHasher};
use crate::error::{Error, Result};
use crate::types::{DataType, Value};

/// The live-tuple counts of one key on one input: `(birth, death, tuples)` per class.
type Classes = Vec<(i64, i64, i64)>;

/// Per key: its classes on each input, and whether it is in the active list.
#[derive(Default)]
struct KeyState {
    sides: [Classes; 2],
    active: bool,
}

/// The count-only fast path of a two-input equi-join (see the module header).
pub(super) struct PairCounts {
    /// Per input (0 and 1): the key columns of its own row, in matching order.
    keys: [Vec<usize>; 2],
    /// Per group-by expression: the key position giving its value.
    group_at: Vec<usize>,
    /// How many count(*) calls the select list has (each gives the same number).
    ncounts: usize,
    /// Keys interned to ids shared by both inputs (equal under `=` means one id).
    dict: GroupDict,
    /// Per key id.
    states: Vec<KeyState>,
    /// Key ids with any class on either input.
    active: Vec<u32>,
    compact_at: usize,
    keybuf: Vec<Value>,
}

/// Dictionary size below which key ids are never compacted.
const COMPACT_MIN: usize = 1 << 16;

/// True for types whose values are equal under `=` only when they print alike.
fn prints_alike(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Bool
            | DataType::Int2
            | DataType::Int4
            | DataType::Int8
            | DataType::Text
            | DataType::Varchar(_)
            | DataType::Timestamp
            | DataType::TimestampTz
    )
}

fn same_kind(a: &DataType, b: &DataType) -> bool {
    let text = |t: &DataType| matches!(t, DataType::Text | DataType::Varchar(_));
    a == b || (text(a) && text(b))
}

impl PairCounts {
    /// The fast path for key columns `keys[0]` of input 0 equated with `keys[1]` of input
    /// 1 (`types[i][j]`: the type of input `i`'s column `j`), grouped by the key positions
    /// `group_at`, with `ncounts` count(*) calls; `None` when the shape does not allow it.
    pub(super) fn new(
        keys: [Vec<usize>; 2],
        types: [&[DataType]; 2],
        group_at: Vec<usize>,
        ncounts: usize,
    ) -> Option<PairCounts> {
        if keys[0].is_empty() || keys[0].len() != keys[1].len() {
            return None;
        }
        for (&x, &y) in keys[0].iter().zip(&keys[1]) {
            let (tx, ty) = (types[0].get(x)?, types[1].get(y)?);
            if !prints_alike(tx) || !same_kind(tx, ty) {
                return None;
            }
        }
        let width = keys[0].len();
        Some(PairCounts {
            keys,
            group_at,
            ncounts,
            dict: GroupDict::new(width),
            states: Vec::new(),
            active: Vec::new(),
            compact_at: COMPACT_MIN,
            keybuf: Vec::with_capacity(width),
        })
    }

    /// The key columns of input `side`'s row, in matching order.
    pub(super) fn key_columns(&self, side: usize) -> &[usize] {
        &self.keys[side]
    }

    /// Count a base tuple `row` of input `side` (0 or 1) live from `birth` until `death`.
    pub(super) fn insert(
        &mut self,
        side: usize,
        row: &[Value],
        birth: i64,
        death: i64,
        hasher: &KeyHasher,
    ) {
        let mut key = std::mem::take(&mut self.keybuf);
        key.clear();
        key.extend(self.keys[side].iter().map(|&c| row[c].clone()));
        self.insert_key(side, &key, birth, death, hasher);
        self.keybuf = key;
    }

    /// Count a base tuple of input `side` whose key (its [`Self::key_columns`]) is `key`.
    /// A key with a NULL never matches (`=` is never true), so such a tuple is not kept.
    pub(super) fn insert_key(
        &mut self,
        side: usize,
        key: &[Value],
        birth: i64,
        death: i64,
        hasher: &KeyHasher,
    ) {
        if key.iter().any(Value::is_null) {
            return;
        }
        let gid = self.dict.intern(hasher.hash(key), key) as usize;
        if gid >= self.states.len() {
            self.states.resize_with(gid + 1, KeyState::default);
        }
        let state = &mut self.states[gid];
        if !state.active {
            state.active = true;
            self.active.push(gid as u32);
        }
        let classes = &mut state.sides[side];
        // Tuples arrive nearly in time order: their class is almost always the last one.
        match classes
            .iter_mut()
            .rev()
            .find(|c| c.0 == birth && c.1 == death)
        {
            Some(c) => c.2 += 1,
            None => classes.push((birth, death, 1)),
        }
    }

    /// Drop the classes that die at or before `e`, and compact the key ids once the
    /// dictionary has grown past twice the keys still held.
    pub(super) fn expire(&mut self, e: i64) {
        let states = &mut self.states;
        self.active.retain(|&g| {
            let s = &mut states[g as usize];
            for side in &mut s.sides {
                side.retain(|c| c.1 > e);
            }
            s.active = !s.sides.iter().all(Vec::is_empty);
            s.active
        });
        if self.dict.len() >= self.compact_at {
            let mut live = self.active.clone();
            live.sort_unstable();
            let map = self.dict.compact(&live);
            let mut states = Vec::with_capacity(live.len());
            for &g in &live {
                states.push(std::mem::take(&mut self.states[g as usize]));
            }
            self.states = states;
            for g in &mut self.active {
                *g = map[*g as usize];
            }
            self.compact_at = (2 * self.dict.len()).max(COMPACT_MIN);
        }
    }

    fn live(classes: &Classes, e: i64) -> i64 {
        classes
            .iter()
            .filter(|c| c.0 <= e && e < c.1)
            .map(|c| c.2)
            .sum()
    }

    /// True when some join tuple is live at `e`.
    pub(super) fn any_live(&self, e: i64) -> bool {
        self.active.iter().any(|&g| {
            let s = &self.states[g as usize];
            Self::live(&s.sides[0], e) > 0 && Self::live(&s.sides[1], e) > 0
        })
    }

    /// The earliest birth after `e` of a join tuple of the tuples held.
    pub(super) fn next_birth_after(&self, e: i64) -> Option<i64> {
        let mut next: Option<i64> = None;
        for &g in &self.active {
            let s = &self.states[g as usize];
            for a in &s.sides[0] {
                for b in &s.sides[1] {
                    let (birth, death) = (a.0.max(b.0), a.1.min(b.1));
                    if birth < death && birth > e {
                        next = Some(next.map_or(birth, |n| n.min(birth)));
                    }
                }
            }
        }
        next
    }

    /// The aggregate rows of the slide event at `e`: per group (in order of the keys'
    /// first arrival among those held), its key values then `ncounts` copies of its count.
    /// Ungrouped: one row, its count possibly 0. Errors: 22003 when a count passes bigint;
    /// 54000 past `groups_max` groups.
    pub(super) fn rows(
        &self,
        e: i64,
        hasher: &KeyHasher,
        groups_max: usize,
    ) -> Result<Vec<Vec<Value>>> {
        let overflow = || {
            Error::NumericValueOutOfRange(
                "count(*) of the join is out of range for type bigint".into(),
            )
        };
        let grouped = !self.group_at.is_empty();
        let mut groups = GroupDict::new(self.group_at.len());
        let mut counts: Vec<i64> = Vec::new();
        let mut total = 0i64;
        let mut gkey = Vec::with_capacity(self.group_at.len());
        for &g in &self.active {
            let s = &self.states[g as usize];
            let na = Self::live(&s.sides[0], e);
            if na == 0 {
                continue;
            }
            let nb = Self::live(&s.sides[1], e);
            if nb == 0 {
                continue;
            }
            let n = na.checked_mul(nb).ok_or_else(overflow)?;
            if !grouped {
                total = total.checked_add(n).ok_or_else(overflow)?;
                continue;
            }
            let key = self.dict.key(g);
            gkey.clear();
            gkey.extend(self.group_at.iter().map(|&p| key[p].clone()));
            let id = groups.intern(hasher.hash(&gkey), &gkey) as usize;
            if id == counts.len() {
                if counts.len() >= groups_max {
                    return Err(Error::ProgramLimitExceeded(format!(
                        "a window instance has more than {groups_max} groups (groups_max)"
                    )));
                }
                counts.push(0);
            }
            counts[id] = counts[id].checked_add(n).ok_or_else(overflow)?;
        }
        let row = |key: &[Value], n: i64| -> Vec<Value> {
            let mut r = key.to_vec();
            r.extend(std::iter::repeat_n(Value::Int8(n), self.ncounts));
            r
        };
        if !grouped {
            return Ok(vec![row(&[], total)]);
        }
        Ok(counts
            .iter()
            .enumerate()
            .map(|(id, &n)| row(groups.key(id as u32), n))
            .collect())
    }

    /// Base tuples counted (of both inputs) that may still be live.
    /// Bytes the key dictionary and the per-key states hold, estimated from their vectors'
    /// capacity (for the memory budget).
    pub(super) fn heap_bytes(&self) -> usize {
        self.dict.heap_bytes()
            + self.states.capacity() * std::mem::size_of::<KeyState>()
            + self
                .states
                .iter()
                .flat_map(|k| k.sides.iter())
                .map(|c| c.capacity() * std::mem::size_of::<(i64, i64, i64)>())
                .sum::<usize>()
            + self.active.capacity() * 4
    }

    #[cfg(test)]
    pub(super) fn tuples_held(&self) -> usize {
        self.active
            .iter()
            .flat_map(|&g| self.states[g as usize].sides.iter().flatten())
            .map(|c| c.2 as usize)
            .sum()
    }
}
