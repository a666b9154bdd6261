//! Differential test over the wire: seeded random streams through random windows, against a
//! naive evaluator written here from the documented window semantics.
//!
//! Each case declares a stream, registers `SELECT [k,] count(*), sum(v), min(v), max(v),
//! wstart(*), wtime(*)` over one random window (tumbling, hopping or jumping; explicit or
//! epoch start) through a cursor, feeds random tuples (gaps, duplicate timestamps, ties on
//! instance boundaries, late tuples) in several INSERT and COPY statements from another
//! connection, drops the stream (which ends the query after every accepted tuple), and
//! compares `FETCH ALL` with the reference, which walks current time tuple by tuple and
//! aggregates each instance over the tuples that had arrived when its end was passed.

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

const SEC: i64 = 1_000_000;
const BASE: i64 = 978_307_200 * SEC; // 2001-01-01 00:00:00

fn ts(us: i64) -> String {
    let s = (us - BASE).div_euclid(SEC);
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
    /// `Some(o)`: START AT o (seconds after BASE); `None`: START AT 'epoch'.
    start: Option<i64>,
}

impl Win {
    fn clause(&self) -> String {
        let start = match self.start {
            Some(o) => format!("'{}'", ts(BASE + o * SEC)),
            None => "'epoch'".into(),
        };
        format!(
            "[RANGE BY '{} seconds' SLIDE BY '{} seconds' START AT {start}]",
            self.range, self.slide
        )
    }
    /// Instance `m` in seconds after BASE (the epoch grid is aligned since BASE is a
    /// multiple of every slide used here: whole minutes).
    fn bounds(&self, m: i64) -> (i64, i64) {
        let lo = self.start.unwrap_or(0) + m * self.slide;
        (lo, lo + self.range)
    }
}

/// The reference: rows as text, in emission order grouped by slide event.
fn reference(w: &Win, tuples: &[(i64, &str, i64)], grouped: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut now: Option<i64> = None;
    let mut next_m: Option<i64> = None;
    let mut seen: Vec<(i64, &str, i64)> = Vec::new();
    for &(t, k, v) in tuples {
        if now.is_none_or(|n| t > n) {
            if next_m.is_none() {
                // Bounded grids start at their first instance; the epoch grid with the first
                // instance that ends after the first tuple.
                next_m = Some(match w.start {
                    Some(_) => 0,
                    None => (t - w.range).div_euclid(w.slide) + 1,
                });
            }
            now = Some(t);
            while w.bounds(next_m.unwrap()).1 <= t {
                let (lo, hi) = w.bounds(next_m.unwrap());
                let inside: Vec<&(i64, &str, i64)> =
                    seen.iter().filter(|x| x.0 >= lo && x.0 < hi).collect();
                let mut groups: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
                if !grouped {
                    groups.insert("", inside.iter().map(|x| x.2).collect());
                } else {
                    for x in &inside {
                        groups.entry(x.1).or_default().push(x.2);
                    }
                }
                for (k, vals) in groups {
                    let agg = |f: fn(&[i64]) -> Option<i64>| {
                        f(&vals).map_or("NULL".to_string(), |v| v.to_string())
                    };
                    let key = if grouped {
                        format!("{k}|")
                    } else {
                        String::new()
                    };
                    out.push(format!(
                        "{key}{}|{}|{}|{}|{}|{}",
                        vals.len(),
                        agg(|v| (!v.is_empty()).then(|| v.iter().sum())),
                        agg(|v| v.iter().min().copied()),
                        agg(|v| v.iter().max().copied()),
                        ts(BASE + lo * SEC),
                        ts(BASE + hi * SEC)
                    ));
                }
                next_m = Some(next_m.unwrap() + 1);
            }
        }
        seen.push((t, k, v));
    }
    out
}

#[tokio::test]
async fn random_streams_through_random_windows_match_the_reference() {
    let port = start_server();
    let mut rng = Rng(0x7463_7164_6966_6631);
    for case in 0..120 {
        let slides = [60, 120, 300, 600];
        let slide = slides[rng.below(4) as usize];
        let range = match rng.below(3) {
            0 => slide,                      // tumbling
            1 => slide * (2 + rng.below(3)), // hopping
            _ => (slide / 2).max(30),        // jumping
        };
        let start = if rng.below(2) == 0 {
            Some(rng.below(4) * 60)
        } else {
            None
        };
        let w = Win {
            range,
            slide,
            start,
        };
        let grouped = rng.below(2) == 0;
        // Tuples: mostly in order with gaps (some on instance boundaries), duplicates and
        // late ones.
        let mut t = rng.below(300);
        let keys = ["a", "b", "c"];
        let mut tuples = Vec::new();
        for _ in 0..(20 + rng.below(60)) {
            t += match rng.below(6) {
                0 => 0,
                1 => 60 - t.rem_euclid(60),
                _ => rng.below(200),
            };
            let at = if rng.below(8) == 0 {
                (t - rng.below(400)).max(0)
            } else {
                t
            };
            tuples.push((at, keys[rng.below(3) as usize], rng.below(50) - 10));
        }
        let expected = reference(&w, &tuples, grouped);

        let reader = connect(port).await;
        let feeder = connect(port).await;
        let stream = format!("s{case}");
        reader
            .batch_execute(&format!(
                "CREATE STREAM {stream} (ts timestamp TIMESTAMPCOLUMN, k text, v integer)"
            ))
            .await
            .unwrap();
        let key = if grouped { "k, " } else { "" };
        let group = if grouped {
            " GROUP BY k ORDER BY k"
        } else {
            ""
        };
        let sql = format!(
            "BEGIN; DECLARE c CURSOR FOR SELECT {key}count(*), sum(v), min(v), max(v), wstart(*), wtime(*) FROM {stream} {}{group}",
            w.clause()
        );
        reader.batch_execute(&sql).await.unwrap();
        // Feed in pieces: INSERTs and COPYs alternate, preserving arrival order.
        for (i, chunk) in tuples.chunks(7).enumerate() {
            if i % 2 == 0 {
                let values: Vec<String> = chunk
                    .iter()
                    .map(|(t, k, v)| format!("('{}', '{k}', {v})", ts(BASE + t * SEC)))
                    .collect();
                feeder
                    .batch_execute(&format!(
                        "INSERT INTO {stream} VALUES {}",
                        values.join(", ")
                    ))
                    .await
                    .unwrap();
            } else {
                let sink = feeder
                    .copy_in(&format!("COPY {stream} FROM STDIN"))
                    .await
                    .unwrap();
                futures::pin_mut!(sink);
                let text: String = chunk
                    .iter()
                    .map(|(t, k, v)| format!("{}\t{k}\t{v}\n", ts(BASE + t * SEC)))
                    .collect();
                sink.send(bytes::Bytes::from(text)).await.unwrap();
                sink.finish().await.unwrap();
            }
        }
        feeder
            .batch_execute(&format!("DROP STREAM {stream}"))
            .await
            .unwrap();
        let msgs = tokio::time::timeout(
            Duration::from_secs(20),
            reader.simple_query("FETCH ALL FROM c"),
        )
        .await
        .expect("FETCH ALL ends once the stream is dropped")
        .unwrap();
        let got: Vec<String> = msgs
            .into_iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(
                    (0..r.len())
                        .map(|i| r.get(i).unwrap_or("NULL"))
                        .collect::<Vec<_>>()
                        .join("|"),
                ),
                _ => None,
            })
            .collect();
        reader.batch_execute("COMMIT").await.unwrap();
        assert_eq!(
            got, expected,
            "case {case}: window {w:?}, grouped {grouped}, tuples {tuples:?}"
        );
    }
}
