//! A finite statement's cancel flag as the executor reads it: every loop over rows counts
//! its steps here and fails with 57014 ([`Error::QueryCanceled`]) soon after the flag is
//! raised; sorts run as chunked merges that read the flag between chunks (a comparator
//! cannot fail, and one that changes its answers midway breaks the sort's contract).
//!
//! The flag is raised by whoever stops waiting for the statement (a CancelRequest,
//! `pg_cancel_backend`, `statement_timeout`, a closed socket, shutdown): see
//! `engine::rel_job`.

use std::cell::Cell;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use crate::error::{Error, Result};

/// Steps between two reads of the flag: a read costs an atomic load, a step (one
/// expression evaluation, one join probe, one merged element) far more, so the flag is
/// seen within a few milliseconds.
const CHECK_EVERY: u32 = 4096;

/// Elements sorted in one piece before the merges: sub-millisecond, so it needs no read of
/// the flag inside.
const SORT_RUN: usize = 1024;

/// Reads one statement's cancel flag (`None`: the statement cannot be cancelled).
pub(crate) struct CancelCheck<'a> {
    flag: Option<&'a AtomicBool>,
    /// Steps since the flag was last read.
    ticks: Cell<u32>,
}

impl<'a> CancelCheck<'a> {
    /// A check of `flag`.
    pub(crate) fn new(flag: Option<&'a AtomicBool>) -> Self {
        CancelCheck {
            flag,
            ticks: Cell::new(0),
        }
    }

    /// Count one step of work; every [`CHECK_EVERY`] steps, fail with 57014 if the flag is
    /// raised.
    pub(crate) fn check(&self) -> Result<()> {
        let n = self.ticks.get().wrapping_add(1);
        self.ticks.set(n);
        if n.is_multiple_of(CHECK_EVERY) {
            self.check_now()
        } else {
            Ok(())
        }
    }

    /// Count `steps` steps of work at once (an aggregate over a frame of `steps` values),
    /// reading the flag when they cross a multiple of [`CHECK_EVERY`].
    pub(crate) fn check_n(&self, steps: usize) -> Result<()> {
        let before = self.ticks.get();
        let steps = u32::try_from(steps).unwrap_or(u32::MAX);
        let after = before.wrapping_add(steps);
        self.ticks.set(after);
        if steps >= CHECK_EVERY || after / CHECK_EVERY != before / CHECK_EVERY {
            self.check_now()
        } else {
            Ok(())
        }
    }

    /// Fail with 57014 if the flag is raised, reading it now.
    pub(crate) fn check_now(&self) -> Result<()> {
        match self.flag {
            Some(f) if f.load(AtomicOrdering::Relaxed) => Err(Error::QueryCanceled),
            _ => Ok(()),
        }
    }

    /// Sort `v` stably by `cmp`, as `slice::sort_by` does, reading the flag between runs
    /// of [`SORT_RUN`] elements and every [`CHECK_EVERY`] merged elements. Sorts a
    /// permutation of indices (one `usize` per element, twice) and moves each element once
    /// at the end. Errors: 57014, with `v` unchanged.
    pub(crate) fn sort_by<T>(
        &self,
        v: &mut Vec<T>,
        mut cmp: impl FnMut(&T, &T) -> Ordering,
    ) -> Result<()> {
        let n = v.len();
        if n <= SORT_RUN {
            v.sort_by(cmp);
            return Ok(());
        }
        let mut idx: Vec<usize> = (0..n).collect();
        for run in idx.chunks_mut(SORT_RUN) {
            self.check_now()?;
            run.sort_by(|&a, &b| cmp(&v[a], &v[b]));
        }
        let mut buf = vec![0usize; n];
        let mut width = SORT_RUN;
        while width < n {
            for start in (0..n).step_by(2 * width) {
                let mid = (start + width).min(n);
                let end = (start + 2 * width).min(n);
                let (mut i, mut j) = (start, mid);
                for slot in &mut buf[start..end] {
                    self.check()?;
                    // Stable: the left run's element goes first unless it is greater.
                    let left = j >= end || (i < mid && cmp(&v[idx[i]], &v[idx[j]]).is_le());
                    if left {
                        *slot = idx[i];
                        i += 1;
                    } else {
                        *slot = idx[j];
                        j += 1;
                    }
                }
            }
            std::mem::swap(&mut idx, &mut buf);
            width *= 2;
        }
        let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
        v.extend(idx.iter().filter_map(|&i| slots[i].take()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably_as_the_standard_sort() {
        let check = CancelCheck::new(None);
        for n in [0, 1, 5, 1024, 1025, 3000, 10_000] {
            // Pairs (key, position): few keys, so stability shows.
            let mut v: Vec<(u32, usize)> = (0..n)
                .map(|i| (((i as u32).wrapping_mul(2_654_435_761)) % 97, i))
                .collect();
            let mut expected = v.clone();
            expected.sort_by_key(|a| a.0);
            check.sort_by(&mut v, |a, b| a.0.cmp(&b.0)).unwrap();
            assert_eq!(v, expected, "n = {n}");
        }
    }

    #[test]
    fn a_raised_flag_stops_a_sort_and_leaves_it_unsorted() {
        let flag = AtomicBool::new(true);
        let check = CancelCheck::new(Some(&flag));
        let mut v: Vec<u32> = (0..5000).rev().collect();
        let err = check.sort_by(&mut v, |a, b| a.cmp(b)).unwrap_err();
        assert!(matches!(err, Error::QueryCanceled));
        assert_eq!(v[0], 4999);
        assert_eq!(v.len(), 5000);
        flag.store(false, AtomicOrdering::Relaxed);
        check.sort_by(&mut v, |a, b| a.cmp(b)).unwrap();
        assert_eq!(v, (0..5000).collect::<Vec<_>>());
    }
}
