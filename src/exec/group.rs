//! Per-group partial aggregates of one window instance.
//!
//! A [`GroupTable`] maps a group key (the GROUP BY values) to one partial state per aggregate
//! call. Keys, hashes and states live in flat vectors in first-seen order, so emission order
//! is deterministic and no allocation happens per tuple: a tuple whose group exists costs one
//! probe of a `hashbrown::HashTable` with a hash computed once per tuple and reused for every
//! instance the tuple falls in.

use std::hash::{BuildHasher, Hasher};

use hashbrown::HashTable;

use crate::agg::{group_eq, hash_value, Acc, AggSpec};
use crate::error::{Error, Result};
use crate::types::Value;

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

/// Groups of one instance: keys (stride `nkeys`) and states (stride `naggs`).
#[derive(Clone, Debug, Default)]
pub struct GroupTable {
    index: HashTable<u32>,
    hashes: Vec<u64>,
    keys: Vec<Value>,
    accs: Vec<Acc>,
    nkeys: usize,
}

impl GroupTable {
    /// An empty table for keys of `nkeys` values.
    pub fn new(nkeys: usize) -> GroupTable {
        GroupTable {
            nkeys,
            ..Default::default()
        }
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when no tuple or partial has reached this instance.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The group at `g`: its key and its states.
    pub fn group(&self, g: usize, naggs: usize) -> (&[Value], &[Acc]) {
        (
            &self.keys[g * self.nkeys..(g + 1) * self.nkeys],
            &self.accs[g * naggs..(g + 1) * naggs],
        )
    }

    /// The hash of group `g`'s key.
    pub fn hash_of(&self, g: usize) -> u64 {
        self.hashes[g]
    }

    /// Index of the group with `key` (hash `hash`), inserted with fresh states if new.
    ///
    /// Errors: 54000 when the table would exceed `groups_max` groups.
    pub fn find_or_insert(
        &mut self,
        hash: u64,
        key: &[Value],
        specs: &[AggSpec],
        groups_max: usize,
    ) -> Result<usize> {
        debug_assert_eq!(key.len(), self.nkeys, "group key width is fixed per query");
        let (keys, nkeys) = (&self.keys, self.nkeys);
        if let Some(&g) = self.index.find(hash, |&g| {
            let k = &keys[g as usize * nkeys..(g as usize + 1) * nkeys];
            k.iter().zip(key).all(|(a, b)| group_eq(a, b))
        }) {
            return Ok(g as usize);
        }
        if self.hashes.len() >= groups_max {
            return Err(Error::ProgramLimitExceeded(format!(
                "a window instance has more than {groups_max} groups (groups_max)"
            )));
        }
        let g = self.hashes.len();
        self.hashes.push(hash);
        self.keys.extend(key.iter().cloned());
        self.accs.extend(specs.iter().map(AggSpec::init));
        let hashes = &self.hashes;
        self.index
            .insert_unique(hash, g as u32, |&x| hashes[x as usize]);
        Ok(g)
    }

    /// Fold one tuple's argument values into group `g`.
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
        for g in 0..other.len() {
            let (key, accs) = other.group(g, n);
            let mine = self.find_or_insert(other.hashes[g], key, specs, groups_max)?;
            for (j, spec) in specs.iter().enumerate() {
                self.accs[mine * n + j].merge(spec, &accs[j])?;
            }
        }
        Ok(())
    }
}
