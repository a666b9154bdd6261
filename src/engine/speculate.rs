//! The speculative fold of an open COPY into a stream.
//!
//! A COPY into a stream is all or nothing: its rows reach the queries only at CopyDone.
//! While it is open, the stream's thread is idle, so the COPY offers each batch it stages
//! (a clone sharing the Arrow buffers) on a bounded queue of its own ([`SpecSender`]); the
//! thread folds those batches into copies of its queries' executors and shared plans and
//! holds the events they emit ([`Speculator`]). Nothing is delivered and no state a client
//! can see changes. At commit the COPY queues its batches as always, each tagged with its
//! place in the COPY ([`SpecTag`]): if nothing else reached the queries since the copies
//! were taken, the first batch swaps the copies in, their held events are delivered, and
//! the batches they covered are skipped for them; otherwise the speculation is dropped and
//! every batch runs as it would have. A COPY that fails drops its speculation (an abort
//! message, or the next real message), so nothing it folded is ever seen.
//!
//! The offer never waits: a full queue or a batch with columns that are not Arrow arrays
//! ends the offers of that COPY; a spill to disk also drops what was folded. The fold stops (keeping what it covered)
//! once the held events pass [`HELD_BYTES_MAX`], the copies' states together pass
//! [`STATE_BYTES_MAX`], or the global memory budget refuses the two (they are charged to it
//! as query state while the speculation lives); a query or plan whose state is over [`CLONE_BYTES_MAX`] when the
//! speculation starts is not copied and runs every batch at commit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::catalog::{deliver_plan, deliver_query, PlanRun, Stream};
use super::memory::{MemoryKind, Reservation};
use super::registry::RunningQuery;
use crate::error::{Error, Result};
use crate::exec::columns::{ColumnArray, ColumnBatch};
use crate::exec::shared::SharedAgg;
use crate::exec::{Batch, Event, QueryExec};

/// Speculative batches a stream's queue holds (they share the COPY's staged buffers).
pub(crate) const SPEC_QUEUE: usize = 256;
/// Bytes of events held for one speculation before it stops folding.
const HELD_BYTES_MAX: usize = 32 << 20;
/// A query or plan is copied only while its state is under this many bytes.
const CLONE_BYTES_MAX: usize = 4 << 20;
/// The copies stop folding once their states together pass this many bytes.
const STATE_BYTES_MAX: usize = 64 << 20;

/// COPY ids, server-wide.
static NEXT_COPY_ID: AtomicU64 = AtomicU64::new(1);

/// Batch `seq` (0-based, in staging order) of COPY `copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SpecTag {
    pub(crate) copy: u64,
    pub(crate) seq: u64,
}

/// What an open COPY sends its stream's thread.
pub(crate) enum SpecMsg {
    /// A staged batch to fold speculatively.
    Batch(SpecTag, ColumnBatch),
    /// The COPY failed: drop what was folded for it.
    Abort(u64),
}

/// The COPY's side: offers its staged batches while the queue has room.
pub(crate) struct SpecSender {
    stream: Arc<Stream>,
    copy: u64,
    /// Staged batches offered so far (the next one's `seq`).
    sent: usize,
    /// No more offers (queue full, spilled, a batch not all Arrow).
    stopped: bool,
    /// Its batches were queued for real: no abort.
    committed: bool,
}

impl SpecSender {
    /// A sender for a COPY into `stream`; `None` for a stream stamped on arrival (its
    /// times are set at commit).
    pub(crate) fn new(stream: &Arc<Stream>) -> Option<SpecSender> {
        if stream.is_ingest_time() {
            return None;
        }
        Some(SpecSender {
            stream: stream.clone(),
            copy: NEXT_COPY_ID.fetch_add(1, Ordering::Relaxed),
            sent: 0,
            stopped: false,
            committed: false,
        })
    }

    /// Offer the batches of `staged` not offered yet (`staged` holds every batch staged in
    /// memory so far, in order). Never waits.
    pub(crate) fn offer(&mut self, staged: &[ColumnBatch]) {
        while !self.stopped && self.sent < staged.len() {
            let b = &staged[self.sent];
            let cheap = b.columns.iter().all(|c| matches!(c, ColumnArray::Arrow(_)));
            let tag = SpecTag {
                copy: self.copy,
                seq: self.sent as u64,
            };
            if !cheap
                || self
                    .stream
                    .spec_tx
                    .try_send(SpecMsg::Batch(tag, b.clone()))
                    .is_err()
            {
                self.stop();
            } else {
                self.sent += 1;
            }
        }
    }

    /// Offer nothing more (the queue is full, or a batch is not all Arrow arrays).
    fn stop(&mut self) {
        self.stopped = true;
    }

    /// Offer nothing more and drop what was folded: the staged batches go to a spill file,
    /// so the batches still queued must not keep their buffers alive while the stream's
    /// thread folds them for nothing (it skips them once the speculation is dropped).
    pub(crate) fn abandon(&mut self) {
        if self.sent > 0 {
            let _ = self.stream.spec_tx.try_send(SpecMsg::Abort(self.copy));
        }
        self.stopped = true;
        self.sent = 0;
    }

    /// The tag of staged batch `i` at commit.
    pub(crate) fn tag(&self, i: usize) -> SpecTag {
        SpecTag {
            copy: self.copy,
            seq: i as u64,
        }
    }

    /// The batches are queued: nothing to abort.
    pub(crate) fn commit(mut self) {
        self.committed = true;
    }
}

impl Drop for SpecSender {
    fn drop(&mut self) {
        if !self.committed && self.sent > 0 {
            // Best effort: a full queue leaves the speculation to be dropped by the next
            // real message.
            let _ = self.stream.spec_tx.try_send(SpecMsg::Abort(self.copy));
        }
    }
}

/// A copy of one query's executor and the events it emitted.
struct QuerySpec {
    q: Arc<RunningQuery>,
    exec: QueryExec,
    out: Vec<Event>,
}

/// A copy of one shared plan and of its members' executors, with their events.
struct PlanSpec {
    plan: Arc<PlanRun>,
    agg: SharedAgg,
    queries: Vec<Arc<RunningQuery>>,
    execs: Vec<QueryExec>,
    outs: Vec<Vec<Event>>,
}

/// A speculation over one COPY: copies covering its batches `0..next`.
struct Spec {
    copy: u64,
    next: u64,
    stopped: bool,
    held_bytes: usize,
    queries: Vec<QuerySpec>,
    plans: Vec<PlanSpec>,
    /// The stream's counters as the COPY's folded batches would move them, for the rate
    /// a query is planned for (as `Stream::observed_rate_per_sec` would give it).
    tuples: u64,
    first_us: Option<i64>,
    max_us: Option<i64>,
    /// The held events and the copies' states, charged to the global memory budget.
    charged: Option<Reservation>,
}

/// Queries and plans (ids) whose copies were swapped in and cover a COPY's batches
/// `0..upto`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Covered {
    copy: u64,
    upto: u64,
    pub(crate) queries: Vec<u64>,
    pub(crate) plans: Vec<u64>,
}

/// The stream thread's side (see the module docs).
#[derive(Default)]
pub(crate) struct Speculator {
    spec: Option<Spec>,
    covered: Option<Covered>,
}

impl Speculator {
    /// Drop any speculation and coverage: a query's real state moved.
    pub(crate) fn invalidate(&mut self) {
        self.spec = None;
        self.covered = None;
    }

    /// Handle a message of an open COPY: start a speculation at its first batch, fold the
    /// next batch in order, or drop the speculation on an abort.
    pub(crate) fn offered(&mut self, stream: &Arc<Stream>, msg: SpecMsg) {
        match msg {
            SpecMsg::Abort(copy) => {
                if self.spec.as_ref().is_some_and(|s| s.copy == copy) {
                    self.spec = None;
                }
            }
            SpecMsg::Batch(tag, batch) => {
                if tag.seq == 0 && self.spec.as_ref().is_none_or(|s| s.stopped) {
                    self.spec = Some(start(stream, tag.copy));
                }
                let Some(spec) = &mut self.spec else { return };
                if spec.copy != tag.copy || spec.next != tag.seq || spec.stopped {
                    return;
                }
                let batch = Batch::Columns(batch);
                let rate = spec_rate(stream, spec, &batch);
                let folded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    fold(spec, &batch, rate)
                }));
                match folded {
                    Ok(Ok(())) => spec.next += 1,
                    // A copy that failed may be half way through the batch: drop it all
                    // (the real run meets the same error and reports it).
                    _ => self.spec = None,
                }
            }
        }
    }

    /// Before a real batch with `tag` runs: at a COPY's first batch, swap in a valid
    /// speculation's copies and deliver their events. Returns what to skip for this batch
    /// (nothing for a batch no speculation covers, which also drops any speculation).
    pub(crate) async fn committed(
        &mut self,
        stream: &Arc<Stream>,
        tag: Option<SpecTag>,
    ) -> Covered {
        let Some(tag) = tag else {
            self.invalidate();
            return Covered::default();
        };
        if tag.seq == 0 {
            self.covered = None;
            match self.spec.take() {
                Some(spec) if spec.copy == tag.copy && spec.next > 0 => {
                    self.covered = Some(swap_in(stream, spec).await);
                }
                _ => {}
            }
        }
        self.spec = None;
        match &self.covered {
            Some(c) if c.copy == tag.copy && tag.seq < c.upto => c.clone(),
            _ => {
                self.covered = None;
                Covered::default()
            }
        }
    }
}

/// A speculation for COPY `copy`: copies of the stream's queries and plans small enough.
fn start(stream: &Arc<Stream>, copy: u64) -> Spec {
    let mut spec = Spec {
        copy,
        next: 0,
        stopped: false,
        held_bytes: 0,
        queries: Vec::new(),
        plans: Vec::new(),
        tuples: 0,
        first_us: None,
        max_us: None,
        charged: None,
    };
    let queries: Vec<Arc<RunningQuery>> = stream.queries.lock().clone();
    for q in queries {
        if q.is_closed() {
            continue;
        }
        let exec = q.exec.lock();
        spec.charged.get_or_insert_with(|| {
            Reservation::new(q.memory.lock().budget(), MemoryKind::QueryState)
        });
        if exec.state().state_bytes < CLONE_BYTES_MAX {
            let exec = exec.clone();
            spec.queries.push(QuerySpec {
                q: q.clone(),
                exec,
                out: Vec::new(),
            });
        }
    }
    let plans: Vec<Arc<PlanRun>> = stream.plans.lock().clone();
    for p in plans {
        let st = p.state.lock();
        spec.charged.get_or_insert_with(|| {
            Reservation::new(p.memory.lock().budget(), MemoryKind::QueryState)
        });
        if st.agg.state().state_bytes >= CLONE_BYTES_MAX {
            continue;
        }
        let execs: Vec<QueryExec> = st.queries.iter().map(|q| q.exec.lock().clone()).collect();
        spec.plans.push(PlanSpec {
            plan: p.clone(),
            agg: st.agg.clone(),
            queries: st.queries.clone(),
            outs: vec![Vec::new(); execs.len()],
            execs,
        });
    }
    spec
}

/// The event rate the real run would plan for when it reaches `batch`: the stream's
/// counters moved by the COPY's batches up to and including it.
fn spec_rate(stream: &Stream, spec: &mut Spec, batch: &Batch) -> Option<f64> {
    let times = batch.times();
    spec.tuples += times.len() as u64;
    if let Some(&max) = times.iter().max() {
        spec.max_us = Some(spec.max_us.map_or(max, |m| m.max(max)));
    }
    if spec.first_us.is_none() {
        spec.first_us = times.first().copied();
    }
    let s = stream.stats.lock();
    let tuples = s.tuples + spec.tuples;
    let first = s.first_us.or(spec.first_us);
    let now = match (s.now_us, spec.max_us) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    match (first, now) {
        (Some(a), Some(b)) if b > a && tuples > 1 => Some(tuples as f64 / ((b - a) as f64 / 1e6)),
        _ => None,
    }
}

/// Fold `batch` into every copy; stop folding past the bounds. Errors: a copy's error
/// (the speculation is then dropped).
fn fold(spec: &mut Spec, batch: &Batch, rate: Option<f64>) -> Result<()> {
    let mut held = 0;
    let mut state = 0;
    for qs in &mut spec.queries {
        let before = qs.out.len();
        if let Some(r) = rate {
            qs.exec.replan_unstarted(r)?;
        }
        qs.exec.push_batch(batch, &mut qs.out)?;
        held += qs.out[before..]
            .iter()
            .map(super::outq::event_heap_bytes)
            .sum::<usize>();
        state += qs.exec.state().state_bytes;
    }
    for ps in &mut spec.plans {
        let befores: Vec<usize> = ps.outs.iter().map(Vec::len).collect();
        let mut execs: Vec<&mut QueryExec> = ps.execs.iter_mut().collect();
        if let Some(r) = rate {
            ps.agg.replan_unstarted(r, &mut execs)?;
        }
        ps.agg.push_batch(batch, &mut execs, &mut ps.outs)?;
        if let Some((_, e)) = ps.agg.take_member_errors().into_iter().next() {
            return Err(e);
        }
        for (out, before) in ps.outs.iter().zip(befores) {
            held += out[before..]
                .iter()
                .map(super::outq::event_heap_bytes)
                .sum::<usize>();
        }
        state += ps.agg.state().state_bytes;
    }
    spec.held_bytes += held;
    let refused = spec
        .charged
        .as_mut()
        .is_some_and(|r| r.resize(spec.held_bytes + state).is_err());
    if refused || spec.held_bytes > HELD_BYTES_MAX || state > STATE_BYTES_MAX {
        tracing::debug!(
            batches = spec.next + 1,
            held_bytes = spec.held_bytes,
            state_bytes = state,
            "a COPY's speculative fold stops at its bounds"
        );
        spec.stopped = true;
    }
    Ok(())
}

/// Swap the copies of `spec` in for the queries and plans whose real state is still the
/// one copied (still attached, same members), and deliver their held events in order.
async fn swap_in(stream: &Arc<Stream>, spec: Spec) -> Covered {
    let mut covered = Covered {
        copy: spec.copy,
        upto: spec.next,
        ..Covered::default()
    };
    for qs in spec.queries {
        let q = qs.q;
        let attached = stream.queries.lock().iter().any(|x| x.id == q.id);
        if !attached || q.is_closed() {
            continue;
        }
        let (result, done) = {
            let mut exec = q.exec.lock();
            *exec = qs.exec;
            let charged = q
                .memory
                .lock()
                .charge(|| exec.state().state_bytes)
                .map_err(|r| r.error(&format!("the state of query {}", q.id)));
            (charged, exec.is_done())
        };
        covered.queries.push(q.id);
        if !deliver_query(stream, &q, qs.out, result, done).await {
            stream.queries.lock().retain(|x| x.id != q.id);
        }
    }
    for ps in spec.plans {
        if let Some(id) = swap_plan(stream, ps).await {
            covered.plans.push(id);
        }
    }
    tracing::debug!(
        stream = %stream.name,
        batches = covered.upto,
        held_bytes = spec.held_bytes,
        queries = covered.queries.len(),
        plans = covered.plans.len(),
        "a COPY's speculative fold was swapped in"
    );
    covered
}

/// Swap in a plan's copy if the plan is still running with the same members; its id when
/// it was swapped.
async fn swap_plan(stream: &Arc<Stream>, ps: PlanSpec) -> Option<u64> {
    let p = ps.plan;
    if !stream.plans.lock().iter().any(|x| Arc::ptr_eq(x, &p)) {
        return None;
    }
    let (result, done) = {
        let mut st = p.state.lock();
        let same = st.queries.len() == ps.queries.len()
            && st
                .queries
                .iter()
                .zip(&ps.queries)
                .all(|(a, b)| a.id == b.id);
        if !same {
            return None;
        }
        st.agg = ps.agg;
        let mut done = Vec::with_capacity(ps.queries.len());
        for (q, exec) in st.queries.iter().zip(ps.execs) {
            let mut real = q.exec.lock();
            *real = exec;
            done.push(real.is_done());
        }
        let agg = &st.agg;
        let result: Result<()> = p
            .memory
            .lock()
            .charge(|| agg.state().state_bytes)
            .map_err(|r| r.error(&format!("the state of shared plan {}", p.id)));
        (result, done)
    };
    let errors: Vec<Option<Error>> = vec![None; ps.queries.len()];
    deliver_plan(stream, &ps.queries, ps.outs, result, done, errors).await;
    Some(p.id)
}
