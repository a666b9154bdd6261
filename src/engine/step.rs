//! How large a piece of a batch a stream's queries take in one step.

/// How many tuples of a batch the stream's queries take in one step. A step holds each
/// query's state locked and checks its memory and cancellation only when it ends, so a
/// query whose tuples are expensive (a window that keeps thousands of instances open, each
/// tuple folded into every one) would hold its lock, and ignore the memory limit and a
/// cancel, for the whole batch: seconds or minutes. Steps aim at [`StepSize::TARGET`] of
/// the queries' own time (waiting for a slow reader does not count):
/// a step that took much longer makes the next ones proportionally smaller, down to one
/// tuple; quick steps double back up to whole batches. Results do not depend on the
/// split: a query gives the same rows for a batch fed whole or in pieces.
pub(crate) struct StepSize {
    /// Tuples in the next step.
    pub(crate) rows: usize,
}

impl Default for StepSize {
    /// A stream's first steps (and its first after a query joins) take 1,024 tuples, a
    /// cheap query's batches whole soon after.
    fn default() -> StepSize {
        StepSize { rows: 1024 }
    }
}

impl StepSize {
    /// The time one step should take.
    const TARGET: std::time::Duration = std::time::Duration::from_millis(20);

    /// A step of `rows` tuples took `elapsed`.
    pub(crate) fn took(&mut self, rows: usize, elapsed: std::time::Duration) {
        if elapsed > 2 * Self::TARGET {
            let scaled = rows as f64 * Self::TARGET.as_secs_f64() / elapsed.as_secs_f64();
            self.rows = (scaled as usize).max(1);
        } else if elapsed < Self::TARGET / 4 && rows >= self.rows {
            self.rows = self.rows.saturating_mul(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn slow_steps_shrink_in_proportion_and_quick_ones_double_back() {
        let mut s = StepSize::default();
        assert_eq!(s.rows, 1024);
        // 1,024 tuples in 0.5 s: about 0.5 ms a tuple, so 40 tuples make 20 ms.
        s.took(1024, Duration::from_millis(500));
        assert_eq!(s.rows, 40);
        s.took(40, Duration::from_secs(10));
        assert_eq!(s.rows, 1, "never below one tuple");
        // Within the target band nothing changes.
        s.took(1, Duration::from_millis(30));
        assert_eq!(s.rows, 1);
        for expected in [2, 4, 8] {
            s.took(s.rows, Duration::from_millis(1));
            assert_eq!(s.rows, expected);
        }
        // A short last piece of a batch (fewer tuples than the step) says nothing.
        s.took(3, Duration::from_micros(10));
        assert_eq!(s.rows, 8);
        let mut big = StepSize { rows: usize::MAX };
        big.took(100, Duration::from_micros(1));
        assert_eq!(big.rows, usize::MAX);
    }
}
