//! Differential test of stream-table joins over the wire: seeded random windows (tumbling,
//! hopping, jumping, with a START AT offset), random streams of tuples (some late) fed by
//! INSERT and COPY in turn, and random INSERT / UPDATE / DELETE on a keyed table between
//! them, against a naive reference written here from the rule in the README: at each slide
//! event, the join of the stream's current window (the tuples arrived by then) with the
//! table as it is at that moment, aggregated or listed.
//!
//! The reference keeps the stream's time (the highest timestamp so far) and, at every
//! window end it passes, recomputes the event's rows from scratch. A statement's slide
//! events all read the table as it was before the statement, since table statements and
//! stream statements are ordered as the server accepts them.

use crate::common;

use std::collections::BTreeMap;

use common::{connect, exec, rows, start_server};
use futures::SinkExt;
use tokio_postgres::Client;

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

/// Seconds after 2001-01-01 00:00:00 as a timestamp literal.
fn ts(s: i64) -> String {
    format!(
        "2001-01-01 {:02}:{:02}:{:02}",
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

/// One statement of a case, in the order sent.
enum Op {
    /// Stream rows `(t, k, v)`; by COPY when `copy`.
    Stream {
        rows: Vec<(i64, i64, i64)>,
        copy: bool,
    },
    /// `INSERT ... ON CONFLICT DO NOTHING` of `(k, g, w)`.
    Insert(i64, String, i64),
    /// `UPDATE dim SET g = .., w = .. WHERE k = ..`.
    Update(i64, String, i64),
    /// `DELETE FROM dim WHERE k = ..`.
    Delete(i64),
}

#[derive(Clone, Copy, Debug)]
struct Win {
    range: i64,
    slide: i64,
    start: i64,
}

const QUERIES: [&str; 3] = [
    "SELECT d.g, count(*), sum(s.v + d.w), wtime(*) FROM s {W} JOIN dim d ON s.k = d.k GROUP BY d.g",
    "SELECT count(*), sum(d.w), wtime(*) FROM s {W} JOIN dim d ON s.k = d.k AND d.w > 2",
    "SELECT s.k, s.v, d.g, wtime(*) FROM s {W} LEFT JOIN dim d ON d.k = s.k",
];

type Dim = BTreeMap<i64, (String, i64)>;

/// The reference rows of query `q` at the slide event ending at `e`, over the stream
/// tuples `arrived` and the table `dim` as it is at the event.
fn event_rows(q: usize, w: Win, e: i64, arrived: &[(i64, i64, i64)], dim: &Dim) -> Vec<String> {
    let live: Vec<(i64, i64)> = arrived
        .iter()
        .filter(|(t, _, _)| *t >= e - w.range && *t < e && *t >= w.start)
        .map(|&(_, k, v)| (k, v))
        .collect();
    let at = ts(e);
    match q {
        0 => {
            let mut groups: BTreeMap<String, (i64, i64)> = BTreeMap::new();
            for (k, v) in &live {
                if let Some((g, dw)) = dim.get(k) {
                    let e = groups.entry(g.clone()).or_default();
                    e.0 += 1;
                    e.1 += v + dw;
                }
            }
            groups
                .into_iter()
                .map(|(g, (n, s))| format!("{g}|{n}|{s}|{at}"))
                .collect()
        }
        1 => {
            let ws: Vec<i64> = live
                .iter()
                .filter_map(|(k, _)| dim.get(k).map(|(_, dw)| *dw).filter(|dw| *dw > 2))
                .collect();
            let sum = if ws.is_empty() {
                "NULL".to_string()
            } else {
                ws.iter().sum::<i64>().to_string()
            };
            vec![format!("{}|{sum}|{at}", ws.len())]
        }
        _ => live
            .iter()
            .map(|(k, v)| {
                let g = dim.get(k).map_or("NULL".to_string(), |(g, _)| g.clone());
                format!("{k}|{v}|{g}|{at}")
            })
            .collect(),
    }
}

/// Every query's reference rows for the whole case, per query, events in order.
fn reference(w: Win, ops: &[Op]) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); QUERIES.len()];
    let mut dim: Dim = BTreeMap::new();
    let mut arrived: Vec<(i64, i64, i64)> = Vec::new();
    let mut now: Option<i64> = None;
    // The next window end not yet passed: m-th instance ends at start + m*slide + range.
    let mut next_m = 0i64;
    for op in ops {
        match op {
            Op::Stream { rows, .. } => {
                for &(t, k, v) in rows {
                    if now.is_none_or(|n| t > n) {
                        now = Some(t);
                        loop {
                            let e = w.start + next_m * w.slide + w.range;
                            if e > t {
                                break;
                            }
                            for (q, rows) in out.iter_mut().enumerate() {
                                let mut r = event_rows(q, w, e, &arrived, &dim);
                                r.sort();
                                // A grouped or row-listing query emits nothing for an
                                // empty event; the ungrouped one emits its one row.
                                rows.extend(r);
                            }
                            next_m += 1;
                        }
                    }
                    arrived.push((t, k, v));
                }
            }
            Op::Insert(k, g, dw) => {
                dim.entry(*k).or_insert((g.clone(), *dw));
            }
            Op::Update(k, g, dw) => {
                if let Some(x) = dim.get_mut(k) {
                    *x = (g.clone(), *dw);
                }
            }
            Op::Delete(k) => {
                dim.remove(k);
            }
        }
    }
    out
}

fn random_case(rng: &mut Rng) -> (Win, Vec<Op>) {
    let range = [10, 20, 30][rng.below(3) as usize];
    let slide = match rng.below(3) {
        0 => range,
        1 => range / 2,
        _ => range + 10,
    };
    let w = Win {
        range,
        slide,
        start: 5 * rng.below(3),
    };
    let mut ops = Vec::new();
    let mut t = 0i64;
    let groups = ["east", "west", "north"];
    for k in 0..4 {
        ops.push(Op::Insert(
            k,
            groups[rng.below(3) as usize].into(),
            rng.below(6),
        ));
    }
    for _ in 0..25 {
        match rng.below(6) {
            0..=2 => {
                let n = 1 + rng.below(4);
                let mut rows = Vec::new();
                for _ in 0..n {
                    t += rng.below(12);
                    // Now and then a tuple a little behind the stream's time.
                    let at = if rng.below(6) == 0 {
                        (t - 15).max(0)
                    } else {
                        t
                    };
                    rows.push((at, rng.below(6), rng.below(10)));
                }
                ops.push(Op::Stream {
                    rows,
                    copy: rng.below(2) == 0,
                });
            }
            3 => ops.push(Op::Insert(
                rng.below(6),
                groups[rng.below(3) as usize].into(),
                rng.below(6),
            )),
            4 => ops.push(Op::Update(
                rng.below(6),
                groups[rng.below(3) as usize].into(),
                rng.below(6),
            )),
            _ => ops.push(Op::Delete(rng.below(6))),
        }
    }
    (w, ops)
}

async fn send(c: &Client, op: &Op) {
    match op {
        Op::Stream { rows, copy: false } => {
            let values: Vec<String> = rows
                .iter()
                .map(|(t, k, v)| format!("('{}', {k}, {v})", ts(*t)))
                .collect();
            exec(c, &format!("INSERT INTO s VALUES {}", values.join(", "))).await;
        }
        Op::Stream { rows, copy: true } => {
            let data: String = rows
                .iter()
                .map(|(t, k, v)| format!("{}\t{k}\t{v}\n", ts(*t)))
                .collect();
            let sink = c.copy_in("COPY s FROM STDIN").await.unwrap();
            let mut sink = Box::pin(sink);
            sink.send(bytes::Bytes::from(data)).await.unwrap();
            sink.as_mut().finish().await.unwrap();
        }
        Op::Insert(k, g, w) => {
            exec(
                c,
                &format!("INSERT INTO dim VALUES ({k}, '{g}', {w}) ON CONFLICT DO NOTHING"),
            )
            .await
        }
        Op::Update(k, g, w) => {
            exec(
                c,
                &format!("UPDATE dim SET g = '{g}', w = {w} WHERE k = {k}"),
            )
            .await
        }
        Op::Delete(k) => exec(c, &format!("DELETE FROM dim WHERE k = {k}")).await,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_table_joins_equal_the_per_event_reference() {
    let port = start_server();
    let cases: u64 = std::env::var("TCQ_TABLE_JOIN_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let mut rng = Rng(0x7461_626c_6573 ^ 0x9e37_79b9);
    for case in 0..cases {
        let (w, ops) = random_case(&mut rng);
        let c = connect(port).await;
        exec(
            &c,
            "DROP STREAM IF EXISTS s; DROP TABLE IF EXISTS dim; \
             CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k integer, v integer); \
             CREATE TABLE dim (k integer PRIMARY KEY, g text, w integer)",
        )
        .await;
        let clause = format!(
            "[RANGE BY '{} seconds' SLIDE BY '{} seconds' START AT '{}']",
            w.range,
            w.slide,
            ts(w.start)
        );
        exec(&c, "BEGIN").await;
        for (i, q) in QUERIES.iter().enumerate() {
            exec(
                &c,
                &format!("DECLARE c{i} CURSOR FOR {}", q.replace("{W}", &clause)),
            )
            .await;
        }
        for op in &ops {
            send(&c, op).await;
        }
        let want = reference(w, &ops);
        for (i, want) in want.iter().enumerate() {
            let mut got: Vec<String> = if want.is_empty() {
                Vec::new()
            } else {
                rows(&c, &format!("FETCH {} FROM c{i}", want.len()))
                    .await
                    .into_iter()
                    .map(|r| r.join("|"))
                    .collect()
            };
            // Rows within one event come in no fixed order: compare each event's as a set.
            let mut want = want.clone();
            let event_key = |r: &String| r.rsplit('|').next().unwrap_or("").to_string();
            got.sort_by_key(|r| (event_key(r), r.clone()));
            want.sort_by_key(|r| (event_key(r), r.clone()));
            assert_eq!(got, want, "case {case}, window {w:?}, query {}", QUERIES[i]);
        }
        exec(&c, "COMMIT").await;
    }
}
