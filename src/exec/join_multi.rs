//! Multi-window joins: a join one of whose streams carries several window clauses.
//!
//! Meaning (the one single-stream multi-window queries have): each window of the
//! multi-window input gives its own row set, exactly the rows of the same join written with
//! that window alone. `wrange(*)`, `wslide(*)` and `wstart(*)` name that input's window
//! (its RANGE, its SLIDE, the start of its current instance at the slide event), so they
//! tell the row sets apart; `wtime(*)` is the slide event's instant. Slide events of all
//! windows are merged in time order; within one instant the rows come in the order the
//! windows are written. LIMIT counts the rows of all windows together.
//!
//! Design decision: each window runs its own [`JoinExec`] fed the same batches. The windows'
//! joins keep their own tuples and partials: no state is shared between them (a WCG over
//! join partials is not built), so a k-window join costs about k single-window joins.
//! A plain join is the one-window case and runs unchanged.

use super::{Batch, Event, JoinExec, QueryStats};
use crate::error::Result;

/// A join query's executor: one [`JoinExec`] per window of its multi-window input (one in
/// all for a join without one).
pub(crate) struct MultiJoin {
    /// One join per window, in the order the windows are written.
    joins: Vec<JoinExec>,
    /// The query's LIMIT, over the rows of all windows (the joins run without one).
    rows_left: Option<u64>,
    done: bool,
    /// Rows emitted, over all windows.
    rows_out: u64,
}

impl MultiJoin {
    /// A join of one window set: `joins[i]` runs the query under the multi-window input's
    /// window `i` (built with [`JoinExec::new_for_window`] when there are several), with no
    /// LIMIT of its own; `limit` is the query's. A single join is passed through unchanged.
    pub(crate) fn new(joins: Vec<JoinExec>, limit: Option<u64>) -> MultiJoin {
        assert!(!joins.is_empty(), "a join runs at least one window");
        let multi = joins.len() > 1;
        MultiJoin {
            joins,
            rows_left: if multi { limit } else { None },
            done: multi && limit == Some(0),
            rows_out: 0,
        }
    }

    /// Consume a batch of the query's stream `stream`, appending output to `out`.
    pub(crate) fn push_batch(
        &mut self,
        stream: usize,
        batch: &Batch,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        self.step(out, |j, o| j.push_batch(stream, batch, o))
    }

    /// Move stream `stream`'s time to `t_us` (microseconds since the epoch) without tuples.
    pub(crate) fn heartbeat(
        &mut self,
        stream: usize,
        t_us: i64,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        self.step(out, |j, o| j.heartbeat(stream, t_us, o))
    }

    /// Run `f` on every window's join and merge their output by slide event instant
    /// (windows in written order at one instant; a NOTICE stays after the rows its join
    /// emitted before it).
    fn step(
        &mut self,
        out: &mut Vec<Event>,
        mut f: impl FnMut(&mut JoinExec, &mut Vec<Event>) -> Result<()>,
    ) -> Result<()> {
        if self.joins.len() == 1 {
            return f(&mut self.joins[0], out);
        }
        if self.done {
            return Ok(());
        }
        // (instant, window, order within the window, event)
        let mut tagged: Vec<(i64, usize, usize, Event)> = Vec::new();
        for (w, j) in self.joins.iter_mut().enumerate() {
            let mut mine = Vec::new();
            f(j, &mut mine)?;
            let mut times = j.take_event_times().into_iter();
            let mut at = i64::MIN;
            for (k, ev) in mine.into_iter().enumerate() {
                if matches!(ev, Event::Rows(_)) {
                    at = times.next().unwrap_or(at);
                }
                tagged.push((at, w, k, ev));
            }
        }
        tagged.sort_by_key(|(t, w, k, _)| (*t, *w, *k));
        for (_, _, _, ev) in tagged {
            match ev {
                Event::Rows(mut rows) => {
                    if let Some(left) = &mut self.rows_left {
                        if rows.len() as u64 >= *left {
                            rows.truncate(*left as usize);
                            self.done = true;
                        }
                        *left -= rows.len() as u64;
                    }
                    if !rows.is_empty() {
                        self.rows_out += rows.len() as u64;
                        out.push(Event::Rows(rows));
                    }
                    if self.done {
                        break;
                    }
                }
                notice => out.push(notice),
            }
        }
        Ok(())
    }

    /// True once the query's LIMIT is reached.
    pub(crate) fn is_done(&self) -> bool {
        self.done || self.joins.iter().all(JoinExec::is_done)
    }

    /// Counters of the query: tuples consumed and current time as any window's join sees
    /// them; rows out as emitted (after the LIMIT); slide events and late tuples summed over
    /// the windows (a slide event or a late tuple counts once per window it concerns).
    pub(crate) fn stats(&self) -> QueryStats {
        if self.joins.len() == 1 {
            return self.joins[0].stats().clone();
        }
        let first = self.joins[0].stats();
        let mut s = QueryStats {
            tuples_in: first.tuples_in,
            now_us: first.now_us,
            started_us: first.started_us,
            rows_out: self.rows_out,
            ..QueryStats::default()
        };
        for j in &self.joins {
            let st = j.stats();
            s.slide_events += st.slide_events;
            s.late_tuples += st.late_tuples;
        }
        s
    }

    /// Each stream's time, in the order of the query's distinct streams (the same in every
    /// window's join).
    pub(crate) fn stream_times(&self) -> &[Option<i64>] {
        self.joins[0].stream_times()
    }

    /// Bytes of state held, over all windows' joins ([`JoinExec::state_bytes`]).
    pub(crate) fn state_bytes(&self) -> usize {
        self.joins.iter().map(JoinExec::state_bytes).sum()
    }

    /// The plan as EXPLAIN shows it: for a plain join, [`JoinExec::explain`]; for a
    /// multi-window join, a header naming the multi-window input `names[input]`, the window
    /// coverage graph of its windows under `sharing` (the relation the query's aggregates
    /// allow, paper Theorems 5 and 6; edges by window number, 1-based), and then each
    /// window's join plan, indented. Other arguments as [`JoinExec::explain`].
    pub(crate) fn explain(
        &self,
        names: &[String],
        columns: &[String],
        table_columns: &[String],
        input: Option<usize>,
        sharing: crate::wcg::Sharing,
    ) -> Vec<String> {
        let (Some(m), true) = (input, self.joins.len() > 1) else {
            return self.joins[0].explain(names, columns, table_columns);
        };
        let mut lines = vec![format!(
            "Multi-window join: {} windows on input {} ({}), one row set per window, each window its own join (no state shared between them)",
            self.joins.len(),
            m + 1,
            names[m]
        )];
        lines.extend(self.coverage_lines(&names[m], m, sharing));
        for (i, j) in self.joins.iter().enumerate() {
            lines.push(format!(
                "  Window {}: {}",
                i + 1,
                crate::wcg::explain::window_text(&j.input_window(m))
            ));
            lines.extend(
                j.explain(names, columns, table_columns)
                    .into_iter()
                    .map(|l| format!("    {l}")),
            );
        }
        lines
    }

    /// Input `m`'s windows, one per window's join, in the order written.
    pub(crate) fn input_windows(&self, m: usize) -> Vec<crate::window::Window> {
        self.joins.iter().map(|j| j.input_window(m)).collect()
    }

    /// EXPLAIN's lines for the WCG of input `m`'s windows (named `name`), and why the join
    /// does not compute one window's aggregates from another's along it.
    fn coverage_lines(&self, name: &str, m: usize, sharing: crate::wcg::Sharing) -> Vec<String> {
        use crate::wcg::{graph::Wcg, Sharing};
        let windows = self.input_windows(m);
        let relation = match sharing {
            Sharing::None => {
                return vec![format!(
                    "  Window coverage graph of {name}'s windows: none (no aggregate whose partials could be shared)"
                )]
            }
            Sharing::PartitionedBy => "partitioned by",
            Sharing::CoveredBy => "covered by",
        };
        let wcg = Wcg::of_query(&windows, sharing);
        let number = |v: usize| wcg.vertices[v].user_windows.first().map_or(0, |w| w + 1);
        let n = wcg.edges.len();
        let mut lines = vec![format!(
            "  Window coverage graph of {name}'s windows ({relation}, {n} edge{}):",
            if n == 1 { "" } else { "s" }
        )];
        lines.extend(wcg.edges.iter().map(|e| {
            format!(
                "    Window {} <- Window {} (M = {})",
                number(e.downstream),
                number(e.upstream),
                e.multiplier
            )
        }));
        if n > 0 {
            lines.push(
                "    not followed by the join: a join tuple lives by every input's windows, so a window's live join tuples at its slide event are not the union of another window's"
                    .into(),
            );
        }
        lines
    }
}
