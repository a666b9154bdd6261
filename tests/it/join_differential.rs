//! Differential test of windowed joins over the wire: seeded random pairs and triples of
//! streams (and self-joins), random windows (tumbling, hopping, jumping; explicit START AT
//! offsets or the epoch grid), random predicates (equi-joins, general comparisons, both, a
//! filter on one side only) and random arrival interleavings with late tuples, fed through
//! INSERT and COPY in turn, some inputs with a SLACK, against a naive reference written here from the documented window semantics.
//!
//! The reference knows nothing of birth and death: it walks the arrivals in order, keeps
//! each stream's time and the global time (their minimum), and at every slide event (every
//! window end passed, one event per distinct instant) recomputes from scratch the join of
//! each input's current window (the instance with the latest end at or before the event)
//! over the tuples that had arrived by then, then aggregates it (or lists it).

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{connect, start_server};
use futures::SinkExt;
use tokio_postgres::SimpleQueryMessage;

/// xorshift64*: a seeded generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> i64 {
        (self.next() % n) as i64
    }
}

/// A time given in seconds after 2001-01-01 00:00:00 (a multiple of every slide used, so
/// the epoch grid lines up with the reference's) as a timestamp literal.
fn ts(s: i64) -> String {
    let (day, s) = if s < 0 {
        ("2000-12-31", s + 86_400)
    } else {
        ("2001-01-01", s)
    };
    format!("{day} {:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

#[derive(Clone, Copy, Debug)]
struct Win {
    range: i64,
    slide: i64,
    /// `Some(o)`: START AT o (seconds after 2001-01-01); `None`: START AT 'epoch'.
    start: Option<i64>,
    /// SLACK in seconds, when given.
    slack: Option<i64>,
}

impl Win {
    fn clause(&self) -> String {
        let start = match self.start {
            Some(o) => format!("'{}'", ts(o)),
            None => "'epoch'".into(),
        };
        let slack = self
            .slack
            .map_or(String::new(), |s| format!(" SLACK '{s} seconds'"));
        format!(
            "[RANGE BY '{} seconds' SLIDE BY '{} seconds' START AT {start}{slack}]",
            self.range, self.slide
        )
    }
    fn end(&self, m: i64) -> i64 {
        self.start.unwrap_or(0) + m * self.slide + self.range
    }
    fn lower(&self, m: i64) -> i64 {
        self.start.unwrap_or(0) + m * self.slide
    }
    /// The instance with the latest end `<= e`, if the grid has one.
    fn current(&self, e: i64) -> Option<i64> {
        let m = (e - self.start.unwrap_or(0) - self.range).div_euclid(self.slide);
        (self.start.is_none() || m >= 0).then_some(m)
    }
}

/// The key written as SQL NULL (`=` is never true for it; GROUP BY puts NULLs together).
const NULL: char = '-';

/// A predicate over the joined inputs' `(k, v)` values.
#[derive(Clone, Copy, Debug)]
enum Pred {
    /// `x.k = y.k`
    Equi(usize, usize),
    /// `x.v < y.v + 2`
    Less(usize, usize),
    /// `x.k = y.k AND abs(x.v - y.v) < 4`
    Both(usize, usize),
    /// `x.v > 1`
    Filter(usize),
}

impl Pred {
    fn sql(&self, n: &[String]) -> String {
        match *self {
            Pred::Equi(x, y) => format!("{}.k = {}.k", n[x], n[y]),
            Pred::Less(x, y) => format!("{}.v < {}.v + 2", n[x], n[y]),
            Pred::Both(x, y) => format!("{0}.k = {1}.k AND abs({0}.v - {1}.v) < 4", n[x], n[y]),
            Pred::Filter(x) => format!("{}.v > 1", n[x]),
        }
    }
    fn holds(&self, r: &[(char, i64)]) -> bool {
        match *self {
            Pred::Equi(x, y) => r[x].0 != NULL && r[x].0 == r[y].0,
            Pred::Less(x, y) => r[x].1 < r[y].1 + 2,
            Pred::Both(x, y) => r[x].0 != NULL && r[x].0 == r[y].0 && (r[x].1 - r[y].1).abs() < 4,
            Pred::Filter(x) => r[x].1 > 1,
        }
    }
}

/// A tuple of a run of arrivals on one stream: (t, k, v).
type Tuple = (i64, char, i64);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    Ungrouped,
    Grouped,
    Rows,
    /// count(*) alone, ungrouped: an equi-join of two inputs counts without forming pairs.
    Count,
    /// count(*) grouped by the join key.
    CountGrouped,
}

#[derive(Debug)]
struct Case {
    /// Per input: its stream and window.
    inputs: Vec<(usize, Win)>,
    /// Input 0's further windows (a multi-window join), in the order written.
    extra: Vec<Win>,
    /// In the reference of one window of a multi-window join: all of input 0's windows,
    /// whose largest SLACK sets its stream's time.
    slack_windows: Vec<Win>,
    preds: Vec<Pred>,
    form: Form,
    /// Arrivals: (stream, t, k, v).
    tuples: Vec<(usize, i64, char, i64)>,
}

impl Case {
    fn nstreams(&self) -> usize {
        self.inputs.iter().map(|i| i.0).max().unwrap() + 1
    }

    /// The rows the join must emit, as `|`-joined text, in emission order. A multi-window
    /// join is the joins under each of input 0's windows, each row led by that window's
    /// RANGE and current instance start, merged by slide event instant (windows in written
    /// order at one instant).
    fn reference(&self) -> Vec<String> {
        if self.extra.is_empty() {
            return self.reference_timed().into_iter().map(|(_, r)| r).collect();
        }
        let windows: Vec<Win> = std::iter::once(self.inputs[0].1)
            .chain(self.extra.iter().copied())
            .collect();
        let mut all: Vec<(i64, usize, String)> = Vec::new();
        for (j, w) in windows.iter().enumerate() {
            let mut one = Case {
                inputs: self.inputs.clone(),
                extra: vec![],
                slack_windows: windows.clone(),
                preds: self.preds.clone(),
                form: self.form,
                tuples: self.tuples.clone(),
            };
            one.inputs[0].1 = *w;
            for (e, r) in one.reference_timed() {
                let start = w.current(e).map_or(e - w.range, |m| w.lower(m));
                all.push((e, j, format!("00:00:{:02}|{}|{r}", w.range, ts(start))));
            }
        }
        // A stable sort: each window's rows of one event keep their order.
        all.sort_by_key(|(e, j, _)| (*e, *j));
        all.into_iter().map(|(_, _, r)| r).collect()
    }

    /// The rows of the join with one window per input, each with its slide event's instant.
    fn reference_timed(&self) -> Vec<(i64, String)> {
        let ns = self.nstreams();
        // A stream's time is its highest timestamp minus the largest SLACK of the windows
        // over it (input 0's stream counts all of a multi-window join's windows).
        let mut slack = vec![0; ns];
        for (s, w) in &self.inputs {
            slack[*s] = slack[*s].max(w.slack.unwrap_or(0));
        }
        let s0 = self.inputs[0].0;
        for w in &self.slack_windows {
            slack[s0] = slack[s0].max(w.slack.unwrap_or(0));
        }
        let mut times: Vec<Option<i64>> = vec![None; ns];
        let mut global: Option<i64> = None;
        let mut next_m: Vec<i64> = Vec::new();
        let mut seen: Vec<(usize, i64, char, i64)> = Vec::new();
        let mut out = Vec::new();
        for &(s, t, k, v) in &self.tuples {
            if times[s].is_none_or(|x| t - slack[s] > x) {
                times[s] = Some(t - slack[s]);
            }
            let g = times.iter().copied().min().flatten();
            if let Some(g) = g {
                if global.is_none_or(|x| g > x) {
                    if global.is_none() {
                        next_m = self
                            .inputs
                            .iter()
                            .map(|(_, w)| match w.start {
                                Some(_) => 0,
                                None => (g - w.range).div_euclid(w.slide) + 1,
                            })
                            .collect();
                    }
                    global = Some(g);
                    loop {
                        let e = (0..self.inputs.len())
                            .map(|i| self.inputs[i].1.end(next_m[i]))
                            .min()
                            .unwrap();
                        if e > g {
                            break;
                        }
                        self.event(e, &seen, &mut out);
                        for (i, (_, w)) in self.inputs.iter().enumerate() {
                            while w.end(next_m[i]) <= e {
                                next_m[i] += 1;
                            }
                        }
                    }
                }
            }
            seen.push((s, t, k, v));
        }
        out
    }

    fn event(&self, e: i64, seen: &[(usize, i64, char, i64)], out: &mut Vec<(i64, String)>) {
        // Each input's live tuples: those in its current window at e.
        let mut live: Vec<Vec<(char, i64)>> = Vec::new();
        for (s, w) in &self.inputs {
            live.push(match w.current(e) {
                None => vec![],
                Some(m) => seen
                    .iter()
                    .filter(|x| x.0 == *s && x.1 >= w.lower(m) && x.1 < w.end(m))
                    .map(|x| (x.2, x.3))
                    .collect(),
            });
        }
        let mut joined: Vec<Vec<(char, i64)>> = vec![vec![]];
        for l in &live {
            joined = joined
                .into_iter()
                .flat_map(|prefix| {
                    l.iter().map(move |x| {
                        let mut p = prefix.clone();
                        p.push(*x);
                        p
                    })
                })
                .collect();
        }
        joined.retain(|r| self.preds.iter().all(|p| p.holds(r)));
        let wtime = ts(e);
        match self.form {
            Form::Ungrouped => {
                let sum: i64 = joined.iter().map(|r| r[0].1 + r[1].1).sum();
                let min = joined.iter().map(|r| r[1].1).min();
                let max = joined.iter().map(|r| r[0].1).max();
                let opt = |x: Option<i64>| x.map_or("NULL".to_string(), |v| v.to_string());
                out.push((
                    e,
                    format!(
                        "{}|{}|{}|{}|{wtime}",
                        joined.len(),
                        opt((!joined.is_empty()).then_some(sum)),
                        opt(min),
                        opt(max)
                    ),
                ));
            }
            Form::Count => out.push((e, format!("{}|{wtime}", joined.len()))),
            Form::Grouped | Form::CountGrouped => {
                let mut groups: BTreeMap<char, (i64, i64)> = BTreeMap::new();
                for r in &joined {
                    let g = groups.entry(r[0].0).or_default();
                    g.0 += 1;
                    g.1 += r[1].1;
                }
                // ORDER BY k puts the NULL group last, as PostgreSQL does.
                let (nulls, keyed): (Vec<_>, Vec<_>) =
                    groups.into_iter().partition(|(k, _)| *k == NULL);
                for (k, (n, sum)) in keyed.into_iter().chain(nulls) {
                    let k = if k == NULL {
                        "NULL".to_string()
                    } else {
                        k.to_string()
                    };
                    if self.form == Form::Grouped {
                        out.push((e, format!("{k}|{n}|{sum}|{wtime}")));
                    } else {
                        out.push((e, format!("{k}|{n}|{n}|{wtime}")));
                    }
                }
            }
            Form::Rows => {
                let mut rows: Vec<Vec<i64>> = joined
                    .iter()
                    .map(|r| r.iter().map(|x| x.1).collect())
                    .collect();
                rows.sort();
                for r in rows {
                    let vals: Vec<String> = r.iter().map(|v| v.to_string()).collect();
                    out.push((e, format!("{}|{wtime}", vals.join("|"))));
                }
            }
        }
    }

    /// The query over streams named `names`.
    fn sql(&self, streams: &[String]) -> String {
        let aliases: Vec<String> = (0..self.inputs.len()).map(|i| format!("i{i}")).collect();
        let meta = if self.extra.is_empty() {
            ""
        } else {
            "wrange(*), wstart(*), "
        };
        let select = match self.form {
            Form::Ungrouped => "count(*), sum(i0.v + i1.v), min(i1.v), max(i0.v), wtime(*)".into(),
            Form::Grouped => "i0.k, count(*), sum(i1.v), wtime(*)".into(),
            Form::Count => "count(*), wtime(*)".into(),
            Form::CountGrouped => "i0.k, count(*), count(*), wtime(*)".into(),
            Form::Rows => {
                let cols: Vec<String> = aliases.iter().map(|a| format!("{a}.v")).collect();
                format!("{}, wtime(*)", cols.join(", "))
            }
        };
        let from: Vec<String> = self
            .inputs
            .iter()
            .zip(&aliases)
            .enumerate()
            .map(|(i, ((s, w), a))| {
                let more: String = if i == 0 {
                    self.extra
                        .iter()
                        .map(|x| format!(" {}", x.clause()))
                        .collect()
                } else {
                    String::new()
                };
                format!("{} {}{more} {a}", streams[*s], w.clause())
            })
            .collect();
        let preds: Vec<String> = self.preds.iter().map(|p| p.sql(&aliases)).collect();
        let where_ = if preds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", preds.join(" AND "))
        };
        let tail = match self.form {
            Form::Ungrouped | Form::Count => String::new(),
            Form::Grouped | Form::CountGrouped => " GROUP BY i0.k ORDER BY i0.k".into(),
            Form::Rows => {
                let cols: Vec<String> = aliases.iter().map(|a| format!("{a}.v")).collect();
                format!(" ORDER BY {}", cols.join(", "))
            }
        };
        format!(
            "SELECT {meta}{select} FROM {}{where_}{tail}",
            from.join(", ")
        )
    }
}

fn random_window(rng: &mut Rng) -> Win {
    let slide = 1 + rng.below(5);
    let range = match rng.below(3) {
        0 => slide,
        1 => slide + 1 + rng.below(4),
        _ => (slide - 1).max(1),
    };
    let start = (rng.below(3) > 0).then(|| rng.below(4));
    let slack = (rng.below(4) == 0).then(|| rng.below(4));
    Win {
        range,
        slide,
        start,
        slack,
    }
}

fn random_case(rng: &mut Rng) -> Case {
    let (inputs, nstreams) = match rng.below(4) {
        // A self-join: one stream under two windows.
        0 => (vec![(0, random_window(rng)), (0, random_window(rng))], 1),
        1 => (
            vec![
                (0, random_window(rng)),
                (1, random_window(rng)),
                (2, random_window(rng)),
            ],
            3,
        ),
        _ => (vec![(0, random_window(rng)), (1, random_window(rng))], 2),
    };
    let n = inputs.len();
    let mut preds = Vec::new();
    for (x, y) in (1..n).map(|y| (y - 1, y)) {
        preds.push(match rng.below(5) {
            0 => Pred::Less(x, y),
            1 => Pred::Both(x, y),
            2 => Pred::Filter(y),
            _ => Pred::Equi(x, y),
        });
    }
    if rng.below(4) == 0 {
        preds.push(Pred::Filter(0));
    }
    let form = match rng.below(3) {
        0 => Form::Ungrouped,
        1 => Form::Grouped,
        _ => Form::Rows,
    };
    let mut clocks: Vec<i64> = (0..nstreams).map(|_| rng.below(4)).collect();
    let mut tuples = Vec::new();
    for _ in 0..(15 + rng.below(35)) {
        let s = rng.below(nstreams as u64) as usize;
        clocks[s] += rng.below(3);
        let t = if rng.below(7) == 0 {
            (clocks[s] - rng.below(6)).max(0)
        } else {
            clocks[s]
        };
        let k = ['a', 'b', 'c', NULL][rng.below(4) as usize];
        tuples.push((s, t, k, rng.below(6)));
    }
    Case {
        inputs,
        extra: vec![],
        slack_windows: vec![],
        preds,
        form,
        tuples,
    }
}

#[tokio::test]
async fn random_joins_match_a_reference_that_recomputes_every_slide_event() {
    let port = start_server();
    let mut rng = Rng(0x6a6f_696e_7364_6966);
    let (mut rows_total, mut nonempty_events) = (0, 0);
    for case_no in 0..150 {
        let case = random_case(&mut rng);
        let expected = case.reference();
        rows_total += expected.len();
        nonempty_events += expected.iter().filter(|r| !r.starts_with("0|")).count();
        run_case(port, case_no, &case, expected).await;
    }
    // The cases must exercise the join, not only empty windows.
    assert!(
        rows_total > 1000 && nonempty_events > 500,
        "{rows_total} rows, {nonempty_events} with join tuples"
    );
}

/// count(*) alone over an equi-join of two inputs is counted per key without forming join
/// tuples (tcq's fast path); the same reference checks it, on tumbling, hopping and jumping
/// windows, self-joins, late tuples and SLACK. Three-input cases and other predicates
/// take the general path under the same forms.
#[tokio::test]
async fn count_only_joins_match_the_reference() {
    let port = start_server();
    let mut rng = Rng(0x636f_756e_7473_6f6e);
    let (mut fast, mut nonzero) = (0, 0);
    for case_no in 0..120 {
        let mut case = random_case(&mut rng);
        case.form = if rng.below(2) == 0 {
            Form::Count
        } else {
            Form::CountGrouped
        };
        if case.inputs.len() == 2 && rng.below(4) > 0 {
            case.preds[0] = Pred::Equi(0, 1);
        }
        let expect_fast = case.inputs.len() == 2 && matches!(case.preds[0], Pred::Equi(..));
        fast += usize::from(expect_fast);
        let streams: Vec<String> = (0..case.nstreams()).map(|s| format!("x{s}")).collect();
        let c = connect(port).await;
        for s in &streams {
            c.batch_execute(&format!(
                "CREATE STREAM IF NOT EXISTS {s} (ts timestamp TIMESTAMPCOLUMN, k text, v integer)"
            ))
            .await
            .unwrap();
        }
        let explain = c
            .simple_query(&format!("EXPLAIN {}", case.sql(&streams)))
            .await
            .unwrap();
        let took_fast = explain.iter().any(|m| {
            matches!(m, SimpleQueryMessage::Row(r) if r.get(0).unwrap().contains("no join tuple is formed"))
        });
        assert_eq!(took_fast, expect_fast, "{}", case.sql(&streams));
        let expected = case.reference();
        nonzero += expected
            .iter()
            .filter(|r| !r.starts_with("0|") && !r.contains("|0|"))
            .count();
        run_case(port, 1000 + case_no, &case, expected).await;
    }
    assert!(
        fast > 50 && nonzero > 300,
        "{fast} fast-path cases, {nonzero} rows with pairs"
    );
}

/// Multi-window joins: input 0 under two or three windows, each giving its own row set
/// (led by wrange(*) and wstart(*)), merged by slide event; every form, pairs, triples and
/// self-joins, late tuples and SLACK (the largest of a stream's windows).
#[tokio::test]
async fn multi_window_joins_match_the_reference_per_window() {
    let port = start_server();
    let mut rng = Rng(0x6d75_6c74_6977_696e);
    let (mut rows_total, mut nonempty) = (0, 0);
    for case_no in 0..90 {
        let mut case = random_case(&mut rng);
        case.extra = (0..1 + rng.below(2))
            .map(|_| random_window(&mut rng))
            .collect();
        if rng.below(3) == 0 {
            case.form = if rng.below(2) == 0 {
                Form::Count
            } else {
                Form::CountGrouped
            };
        }
        let expected = case.reference();
        rows_total += expected.len();
        nonempty += expected
            .iter()
            .filter(|r| r.split('|').nth(2).is_some_and(|n| n != "0"))
            .count();
        run_case(port, 2000 + case_no, &case, expected).await;
    }
    assert!(
        rows_total > 1000 && nonempty > 400,
        "{rows_total} rows, {nonempty} with join tuples"
    );
}

/// Register `case`'s query, feed its arrivals, and compare what the cursor reads with
/// `expected`.
async fn run_case(port: u16, case_no: usize, case: &Case, expected: Vec<String>) {
    let reader = connect(port).await;
    let feeder = connect(port).await;
    let streams: Vec<String> = (0..case.nstreams())
        .map(|s| format!("c{case_no}s{s}"))
        .collect();
    for s in &streams {
        reader
            .batch_execute(&format!(
                "CREATE STREAM {s} (ts timestamp TIMESTAMPCOLUMN, k text, v integer)"
            ))
            .await
            .unwrap();
    }
    let sql = case.sql(&streams);
    reader
        .batch_execute(&format!("BEGIN; DECLARE c CURSOR FOR {sql}"))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    // Runs of arrivals on one stream go in one statement: INSERT and COPY in turn.
    let mut runs: Vec<(usize, Vec<Tuple>)> = Vec::new();
    for &(s, t, k, v) in &case.tuples {
        match runs.last_mut() {
            Some((rs, r)) if *rs == s && r.len() < 4 => r.push((t, k, v)),
            _ => runs.push((s, vec![(t, k, v)])),
        }
    }
    for (i, (s, run)) in runs.iter().enumerate() {
        if i % 2 == 0 {
            let values: Vec<String> = run
                .iter()
                .map(|(t, k, v)| match *k {
                    NULL => format!("('{}', NULL, {v})", ts(*t)),
                    _ => format!("('{}', '{k}', {v})", ts(*t)),
                })
                .collect();
            feeder
                .batch_execute(&format!(
                    "INSERT INTO {} VALUES {}",
                    streams[*s],
                    values.join(", ")
                ))
                .await
                .unwrap();
        } else {
            let sink = feeder
                .copy_in(&format!("COPY {} FROM STDIN", streams[*s]))
                .await
                .unwrap();
            futures::pin_mut!(sink);
            let text: String = run
                .iter()
                .map(|(t, k, v)| match *k {
                    NULL => format!("{}\t\\N\t{v}\n", ts(*t)),
                    _ => format!("{}\t{k}\t{v}\n", ts(*t)),
                })
                .collect();
            sink.send(bytes::Bytes::from(text)).await.unwrap();
            sink.finish().await.unwrap();
        }
    }
    // Dropping a stream ends the join after every statement accepted before.
    feeder
        .batch_execute(&format!("DROP STREAM {}", streams[0]))
        .await
        .unwrap();
    let msgs = tokio::time::timeout(
        Duration::from_secs(20),
        reader.simple_query("FETCH ALL FROM c"),
    )
    .await
    .expect("FETCH ALL ends once a stream of the join is dropped")
    .unwrap();
    let got: Vec<String> = msgs
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL").replace("2001-01-01 ", ""))
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            _ => None,
        })
        .collect();
    reader.batch_execute("COMMIT").await.unwrap();
    let expected: Vec<String> = expected
        .into_iter()
        .map(|r| r.replace("2001-01-01 ", ""))
        .collect();
    assert_eq!(got, expected, "case {case_no}: {sql}\n{case:?}");
}
