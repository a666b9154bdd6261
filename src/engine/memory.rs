//! The global memory budget: one server-wide bound (`memory_limit_bytes`) over the memory
//! the engine tracks.
//!
//! Tracked, each as its own [`MemoryKind`]: the state of continuous queries (window
//! instances' partial aggregates and DISTINCT sets, group dictionaries, live tuples of
//! windowed queries without aggregates, shared plans, joins' stored tuples, indexes and
//! partials), the rows queued for subscribers, the batches a COPY keeps in memory before
//! it commits, and prepared statements (estimated from their text,
//! [`prepared_statement_bytes`]). Each holder owns a [`Reservation`] that it resizes as
//! it grows and shrinks, and that gives its bytes back when dropped, so memory is returned
//! when a query, COPY or connection ends. A query's state is re-measured after its steps
//! (no more often than once a millisecond), so it can pass the limit by what one step
//! adds before it is refused (a stream's queries take a large batch in steps of about
//! 20 ms of work, see `step`).
//!
//! Who gets refused: whoever would take the total past the limit. A query whose state
//! would cross it ends with 53200 (its reader gets the rows already queued, then the
//! error) and the other queries and ingest go on; a Parse that would cross it is refused
//! with 53200; a COPY whose in-memory batches would cross it moves them to its temporary
//! file early instead (nothing is refused, only slower). Output queues are counted but
//! never refused by the budget: their rows are results already computed, each queue has its
//! own bound (`output_queue_bytes`), and what they hold makes the others meet the limit
//! sooner.
//!
//! Design decision: the figures are estimates from vectors' capacities (the same ones the
//! console and `/metrics` show per query), not an allocator hook. They are cheap to take,
//! they follow what grows without bound (groups, instances, queued rows, staged batches),
//! and the process's real footprint (allocator slack, text behind values, the tables a
//! stream-table join reads, the runtime) sits outside them, so the limit should be set
//! below the memory the server may use. Measured against the RSS, a query with up to a
//! million groups took 0.97 to 1.34 times the bytes it was charged.
//!
//! ```ignore
//! use tcq::engine::memory::{MemoryBudget, MemoryKind, Reservation};
//! let budget = MemoryBudget::new(1000);
//! let mut a = Reservation::new(&budget, MemoryKind::QueryState);
//! a.resize(600).unwrap();
//! let mut b = Reservation::new(&budget, MemoryKind::PreparedStatements);
//! assert!(b.resize(500).is_err()); // 600 + 500 > 1000: refused, nothing charged
//! assert_eq!(budget.used(), 600);
//! drop(a);
//! b.resize(500).unwrap();
//! assert_eq!(budget.used(), 500);
//! ```

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// What tracked memory is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemoryKind {
    /// Continuous queries' state: partial aggregates of open instances, group
    /// dictionaries, buffered live tuples, shared plans, joins' stored tuples.
    QueryState,
    /// Result rows queued for subscribers (each queue also bounded by
    /// `output_queue_bytes`).
    OutputQueues,
    /// Parsed batches a COPY keeps in memory until it commits.
    CopyStaging,
    /// Prepared statements, estimated from their SQL text ([`prepared_statement_bytes`]).
    PreparedStatements,
}

impl MemoryKind {
    /// Every kind, in the order `tcq_memory` lists them.
    pub(crate) const ALL: [MemoryKind; 4] = [
        MemoryKind::QueryState,
        MemoryKind::OutputQueues,
        MemoryKind::CopyStaging,
        MemoryKind::PreparedStatements,
    ];

    /// The kind's name in `tcq_memory` and `/metrics` (`query_state`, ...).
    pub(crate) fn name(self) -> &'static str {
        match self {
            MemoryKind::QueryState => "query_state",
            MemoryKind::OutputQueues => "output_queues",
            MemoryKind::CopyStaging => "copy_staging",
            MemoryKind::PreparedStatements => "prepared_statements",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The server-wide budget: the limit in bytes and what is tracked against it now.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
    by_kind: [AtomicUsize; 4],
    refusals: AtomicU64,
}

/// A request the budget refused: the bytes asked for on top of what the holder had, the
/// total tracked at that moment and the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    /// Bytes the holder asked to add.
    pub(crate) asked: usize,
    /// Bytes tracked server-wide when it asked.
    pub(crate) used: usize,
    /// `memory_limit_bytes`.
    pub(crate) limit: usize,
}

impl Refused {
    /// The 53200 error for `what` ("query 7", "a prepared statement") that would have
    /// crossed the limit.
    pub(crate) fn error(&self, what: &str) -> crate::Error {
        crate::Error::OutOfMemory(format!(
            "{what} would take the server's tracked memory past memory_limit ({} bytes): {} bytes in use, {} more asked",
            self.limit, self.used, self.asked
        ))
    }
}

impl MemoryBudget {
    /// A budget of `limit` bytes with nothing tracked.
    pub(crate) fn new(limit: usize) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            limit,
            used: AtomicUsize::new(0),
            by_kind: Default::default(),
            refusals: AtomicU64::new(0),
        })
    }

    /// `memory_limit_bytes`.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes tracked now, all kinds.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Bytes tracked now for `kind`.
    pub(crate) fn used_by(&self, kind: MemoryKind) -> usize {
        self.by_kind[kind.index()].load(Ordering::Relaxed)
    }

    /// Requests refused since start.
    pub(crate) fn refusals(&self) -> u64 {
        self.refusals.load(Ordering::Relaxed)
    }

    /// Add `bytes` if the total stays within the limit.
    fn try_grow(&self, kind: MemoryKind, bytes: usize) -> Result<(), Refused> {
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let next = used.saturating_add(bytes);
            if next > self.limit {
                self.refusals.fetch_add(1, Ordering::Relaxed);
                return Err(Refused {
                    asked: bytes,
                    used,
                    limit: self.limit,
                });
            }
            match self
                .used
                .compare_exchange_weak(used, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => used = now,
            }
        }
        self.by_kind[kind.index()].fetch_add(bytes, Ordering::Relaxed);
        Ok(())
    }

    /// Add `bytes` whatever the total (for holders the budget counts but never refuses).
    fn force_grow(&self, kind: MemoryKind, bytes: usize) {
        self.used.fetch_add(bytes, Ordering::AcqRel);
        self.by_kind[kind.index()].fetch_add(bytes, Ordering::Relaxed);
    }

    fn shrink(&self, kind: MemoryKind, bytes: usize) {
        let before = self.used.fetch_sub(bytes, Ordering::AcqRel);
        debug_assert!(
            before >= bytes,
            "a reservation gives back only what it took"
        );
        self.by_kind[kind.index()].fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// One holder's share of the budget; gives its bytes back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    budget: Arc<MemoryBudget>,
    kind: MemoryKind,
    bytes: usize,
}

impl Reservation {
    /// An empty reservation of `kind` against `budget`.
    pub(crate) fn new(budget: &Arc<MemoryBudget>, kind: MemoryKind) -> Reservation {
        Reservation {
            budget: budget.clone(),
            kind,
            bytes: 0,
        }
    }

    /// Bytes held now.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Hold `bytes` from now on. Shrinking always succeeds; growing fails with [`Refused`]
    /// when the server-wide total would pass the limit, and then the reservation keeps what
    /// it had.
    pub(crate) fn resize(&mut self, bytes: usize) -> Result<(), Refused> {
        if bytes > self.bytes {
            self.budget.try_grow(self.kind, bytes - self.bytes)?;
        } else {
            self.budget.shrink(self.kind, self.bytes - bytes);
        }
        self.bytes = bytes;
        Ok(())
    }

    /// Hold `bytes` from now on, past the limit if need be (counted, never refused).
    pub(crate) fn force_resize(&mut self, bytes: usize) {
        if bytes > self.bytes {
            self.budget.force_grow(self.kind, bytes - self.bytes);
        } else {
            self.budget.shrink(self.kind, self.bytes - bytes);
        }
        self.bytes = bytes;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.shrink(self.kind, self.bytes);
    }
}

/// The bytes a prepared statement of `text_bytes` bytes of SQL is charged: its bound plan
/// is far larger than its text. Measured on the debug build with 900 to 100 statements
/// of each shape: an INSERT of three parameters (40 bytes of SQL) took about 15 KiB, a
/// windowed aggregate with a WHERE (80 bytes) about 29 KiB, a select list of 2,000
/// literals (10.9 KB) about 1.7 MB; 16 KiB plus 160 bytes per byte of text covers them.
pub fn prepared_statement_bytes(text_bytes: usize) -> usize {
    (16 << 10) + text_bytes.saturating_mul(160)
}

/// How a query or shared plan charges its state: re-measured after its steps, at most
/// every millisecond and never more often than 20 times the last measurement took (a
/// windowed query without aggregates measures by walking its live tuples), so measuring
/// costs at most about 5% of the work it watches.
#[derive(Debug)]
pub(crate) struct StateMeter {
    res: Reservation,
    next_at: std::time::Instant,
}

/// The shortest time between two measurements of one query's state.
const MEASURE_EVERY: std::time::Duration = std::time::Duration::from_millis(1);

impl StateMeter {
    pub(crate) fn new(budget: &Arc<MemoryBudget>) -> StateMeter {
        StateMeter {
            res: Reservation::new(budget, MemoryKind::QueryState),
            next_at: std::time::Instant::now(),
        }
    }

    /// Re-measure with `measure` (bytes of state) when due and charge the result; `Err`
    /// when the budget refuses the growth.
    pub(crate) fn charge(&mut self, measure: impl FnOnce() -> usize) -> Result<(), Refused> {
        let start = std::time::Instant::now();
        if start < self.next_at {
            return Ok(());
        }
        let bytes = measure();
        let now = std::time::Instant::now();
        self.next_at = now + MEASURE_EVERY.max((now - start) * 20);
        self.res.resize(bytes)
    }

    /// The budget charged.
    pub(crate) fn budget(&self) -> &Arc<MemoryBudget> {
        &self.res.budget
    }

    /// Give everything back (the query ended).
    pub(crate) fn release(&mut self) {
        self.res.force_resize(0);
    }
}

/// Parse a size with an optional unit: `1073741824`, `512MB`, `1 GiB`, `64kB`. Units are
/// powers of 1024 (PostgreSQL's `kB`, `MB`, `GB`, `TB`, and `KiB`, `MiB`, `GiB`, `TiB`;
/// case-insensitive) and `B`. Errors name the text.
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: usize = digits
        .parse()
        .map_err(|_| format!("invalid size \"{text}\": expected a number of bytes with an optional unit (kB, MB, GB, TB)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "invalid size \"{text}\": unknown unit \"{}\" (use kB, MB, GB or TB)",
                unit.trim()
            ))
        }
    };
    n.checked_mul(1usize << shift)
        .ok_or_else(|| format!("invalid size \"{text}\": too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_bytes("1024"), Ok(1024));
        assert_eq!(parse_bytes("64kB"), Ok(64 << 10));
        assert_eq!(parse_bytes("512 MB"), Ok(512 << 20));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert_eq!(parse_bytes("2tb"), Ok(2 << 40));
        assert!(parse_bytes("12 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_bytes("MB").is_err());
        assert!(parse_bytes("99999999999999 TB")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn kinds_add_up_and_refusals_change_nothing() {
        let b = MemoryBudget::new(100);
        let mut q = Reservation::new(&b, MemoryKind::QueryState);
        let mut o = Reservation::new(&b, MemoryKind::OutputQueues);
        q.resize(70).unwrap();
        o.force_resize(50);
        assert_eq!(b.used(), 120);
        let refused = q.resize(80).unwrap_err();
        assert_eq!((refused.asked, refused.used, refused.limit), (10, 120, 100));
        assert_eq!(q.bytes(), 70);
        assert_eq!(b.refusals(), 1);
        q.resize(20).unwrap();
        assert_eq!(b.used_by(MemoryKind::QueryState), 20);
        assert_eq!(b.used_by(MemoryKind::OutputQueues), 50);
        drop(o);
        drop(q);
        assert_eq!(b.used(), 0);
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::engine::memory::{MemoryBudget, MemoryKind, Reservation};
        let budget = MemoryBudget::new(1000);
        let mut a = Reservation::new(&budget, MemoryKind::QueryState);
        a.resize(600).unwrap();
        let mut b = Reservation::new(&budget, MemoryKind::PreparedStatements);
        assert!(b.resize(500).is_err()); // 600 + 500 > 1000: refused, nothing charged
        assert_eq!(budget.used(), 600);
        drop(a);
        b.resize(500).unwrap();
        assert_eq!(budget.used(), 500);
    }
}
