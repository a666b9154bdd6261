//! The speculative fold of an open COPY into a stream (`tcq.speculative_copy`): the stream's
//! queries fold a COPY's batches while it arrives, and only a COPY that commits is ever
//! seen. A failed or abandoned COPY leaves every query's results as if it never happened;
//! statements of other sessions and heartbeats during an open COPY, and LIMIT, give the
//! rows the same statements give without speculation.

use crate::common;

use bytes::Bytes;
use futures::SinkExt;
use std::collections::BTreeMap;
use tokio_postgres::Client;

const STREAM: &str = "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer)";
const O: &str = "START AT '2001-01-01 00:00:00'";

/// The queries read during each scenario, run alone (not in a shared plan) on one reader
/// connection and in shared plans on another.
fn queries() -> Vec<(String, bool)> {
    vec![
        (
            format!("SELECT wtime(*), count(*), sum(v) FROM s [RANGE BY '1 hour' {O}]"),
            false,
        ),
        (
            format!("SELECT wtime(*), count(*), sum(v) FROM s [RANGE BY '1 hour' {O}]"),
            true,
        ),
        (
            format!(
                "SELECT k, wtime(*), count(*), max(v) FROM s \
                 [RANGE BY '1 hour' SLIDE BY '10 minutes' {O}] GROUP BY k"
            ),
            true,
        ),
        (
            format!(
                "SELECT k, wtime(*), count(*), max(v) FROM s \
                 [RANGE BY '1 hour' SLIDE BY '10 minutes' {O}] GROUP BY k"
            ),
            false,
        ),
        (
            format!("SELECT wtime(*), count(*), sum(v) FROM s [RANGE BY '1 hour' {O}] LIMIT 5"),
            false,
        ),
        ("SELECT ts, v FROM s WHERE v = 7".to_string(), false),
    ]
}

/// Row `i`'s value and key: `i` seconds after 2001-01-01.
fn value(i: u64) -> i64 {
    (i * 7919 % 1000) as i64 - 500
}

/// CSV lines for rows `from..to`.
fn csv(from: u64, to: u64) -> String {
    let mut s = String::new();
    for i in from..to {
        let (d, r) = (1 + i / 86_400, i % 86_400);
        s.push_str(&format!(
            "2001-01-{d:02} {:02}:{:02}:{:02},k{},{}\n",
            r / 3600,
            r / 60 % 60,
            r % 60,
            i % 7,
            value(i)
        ));
    }
    s
}

/// `COPY s FROM STDIN` of `data` on `c`, in 64 KiB messages.
async fn copy(c: &Client, data: &str) -> Result<u64, tokio_postgres::Error> {
    common::copy_in(
        c,
        "COPY s FROM STDIN WITH (FORMAT csv)",
        data.as_bytes(),
        64 << 10,
    )
    .await
}

/// A server with stream `s` and the [`queries`] reading it, each copied out by a task
/// that returns its lines once the stream is dropped; and the feeder connection, with
/// `tcq.speculative_copy` set to `speculate`.
async fn setup(speculate: bool) -> (u16, Client, Vec<tokio::task::JoinHandle<Vec<String>>>) {
    setup_on(common::start_server(), speculate).await
}

/// [`setup`] on the server at `port`.
async fn setup_on(
    port: u16,
    speculate: bool,
) -> (u16, Client, Vec<tokio::task::JoinHandle<Vec<String>>>) {
    let feeder = common::connect(port).await;
    feeder.batch_execute(STREAM).await.unwrap();
    let on = if speculate { "on" } else { "off" };
    feeder
        .batch_execute(&format!("SET tcq.speculative_copy = {on}"))
        .await
        .unwrap();
    let mut readers = Vec::new();
    for (sql, shared) in queries() {
        let reader = common::connect(port).await;
        let share = if shared { "on" } else { "off" };
        reader
            .batch_execute(&format!("SET tcq.share_across_queries = {share}"))
            .await
            .unwrap();
        readers.push(tokio::spawn(async move {
            let out = common::copy_out_bytes(&reader, &format!("COPY ({sql}) TO STDOUT")).await;
            String::from_utf8(out)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()
        }));
    }
    common::wait_for_queries(&feeder, queries().len()).await;
    (port, feeder, readers)
}

/// Move time to `end` (the end of the last hour holding a row) and drop the stream; each
/// query's lines.
async fn finish(
    feeder: &Client,
    end: &str,
    readers: Vec<tokio::task::JoinHandle<Vec<String>>>,
) -> Vec<Vec<String>> {
    feeder
        .batch_execute(&format!("SELECT tcq_advance('s', '{end}'); DROP STREAM s"))
        .await
        .unwrap();
    let mut out = Vec::new();
    for r in readers {
        out.push(r.await.unwrap());
    }
    out
}

/// The hourly (wtime, count, sum) lines of rows `rows` (seconds after 2001-01-01, value),
/// every hour from the first to the last holding a row.
fn hourly(rows: &[(u64, i64)]) -> Vec<String> {
    let mut hours: BTreeMap<u64, (u64, i64)> = BTreeMap::new();
    for &(t, v) in rows {
        let e = hours.entry(t / 3600).or_default();
        e.0 += 1;
        e.1 += v;
    }
    let (first, last) = (*hours.keys().next().unwrap(), *hours.keys().last().unwrap());
    (first..=last)
        .map(|h| {
            let (n, sum) = hours.get(&h).copied().unwrap_or((0, 0));
            let end = h + 1;
            let sum = if n == 0 {
                "\\N".to_string()
            } else {
                sum.to_string()
            };
            format!(
                "2001-01-{:02} {:02}:00:00\t{n}\t{sum}",
                1 + end / 24,
                end % 24
            )
        })
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// A COPY that fails at its last line after many batches, and one whose client goes away
/// with the COPY open, are never seen; the good COPY after them gives exactly its rows, and
/// every query's rows equal those with speculation off.
#[tokio::test]
async fn a_failed_or_abandoned_copy_is_never_seen() {
    let mut runs = Vec::new();
    for speculate in [true, false] {
        let (port, feeder, readers) = setup(speculate).await;
        let mut bad = csv(0, 300_000);
        assert!(bad.len() > 6 << 20, "many parse chunks of 1 MiB");
        bad.push_str("2001-01-05 00:00:00,k1,not a number\n");
        let err = copy(&feeder, &bad).await.unwrap_err();
        assert_eq!(common::sqlstate(&err), "22P02", "{err}");
        // A client that goes away half way through its COPY.
        let (gone, conn) = common::connect_with_handle(port).await;
        let sink = gone
            .copy_in::<_, Bytes>("COPY s FROM STDIN WITH (FORMAT csv)")
            .await
            .unwrap();
        futures::pin_mut!(sink);
        let half = csv(0, 150_000);
        for p in half.as_bytes().chunks(64 << 10) {
            sink.send(Bytes::copy_from_slice(p)).await.unwrap();
        }
        conn.abort();
        drop(gone);
        // Every stream statement is queued after what the failed ones sent.
        let kept = common::rows(&feeder, "SELECT tuples FROM tcq_streams WHERE name = 's'").await;
        assert_eq!(
            kept,
            vec![vec!["0".to_string()]],
            "no row of a failed COPY is kept"
        );
        assert_eq!(copy(&feeder, &csv(0, 200_000)).await.unwrap(), 200_000);
        runs.push(finish(&feeder, "2001-01-03 08:00:00", readers).await);
    }
    let rows: Vec<(u64, i64)> = (0..200_000).map(|i| (i, value(i))).collect();
    let expected = hourly(&rows);
    for run in &runs {
        assert_eq!(run[0], expected, "alone");
        assert_eq!(run[1], expected, "shared");
        assert_eq!(run[4], expected[..5].to_vec(), "LIMIT 5");
        let sevens = rows.iter().filter(|r| r.1 == 7).count();
        assert_eq!(run[5].len(), sevens);
    }
    for (q, (on, off)) in runs[0].iter().zip(&runs[1]).enumerate() {
        assert!(!on.is_empty(), "query {q} has rows");
        assert_eq!(sorted(on.clone()), sorted(off.clone()), "query {q}");
    }
}

/// An INSERT from another session and a tcq_advance while a COPY is open, and a second
/// COPY, give the rows the same statements give in the same commit order without
/// speculation; the hourly rows of the first COPY and the INSERT are computed here.
#[tokio::test]
async fn statements_during_an_open_copy_give_the_rows_without_speculation() {
    let mut runs = Vec::new();
    for speculate in [true, false] {
        let (port, feeder, readers) = setup(speculate).await;
        let other = common::connect(port).await;
        // COPY A is open while the INSERT commits: the INSERT comes first.
        let sink = feeder
            .copy_in::<_, Bytes>("COPY s FROM STDIN WITH (FORMAT csv)")
            .await
            .unwrap();
        futures::pin_mut!(sink);
        let a = csv(0, 200_000);
        let (head, tail) = a.as_bytes().split_at(a.len() / 2);
        for p in head.chunks(64 << 10) {
            sink.send(Bytes::copy_from_slice(p)).await.unwrap();
        }
        // Barrier: the stream has seen what the COPY offered so far.
        common::rows(&other, "SELECT id FROM tcq_queries").await;
        other
            .batch_execute("INSERT INTO s VALUES ('2001-01-01 00:00:00', 'k0', 1000), ('2001-01-01 00:00:01', 'k1', 7)")
            .await
            .unwrap();
        for p in tail.chunks(64 << 10) {
            sink.send(Bytes::copy_from_slice(p)).await.unwrap();
        }
        assert_eq!(sink.finish().await.unwrap(), 200_000);
        let first = finish_part(&feeder).await;
        // COPY B is open while time moves to its middle: its rows before that are late.
        let sink = feeder
            .copy_in::<_, Bytes>("COPY s FROM STDIN WITH (FORMAT csv)")
            .await
            .unwrap();
        futures::pin_mut!(sink);
        let b = csv(200_000, 300_000);
        let (head, tail) = b.as_bytes().split_at(b.len() / 2);
        for p in head.chunks(64 << 10) {
            sink.send(Bytes::copy_from_slice(p)).await.unwrap();
        }
        common::rows(&other, "SELECT id FROM tcq_queries").await;
        other
            .batch_execute("SELECT tcq_advance('s', '2001-01-03 22:00:00')")
            .await
            .unwrap();
        for p in tail.chunks(64 << 10) {
            sink.send(Bytes::copy_from_slice(p)).await.unwrap();
        }
        assert_eq!(sink.finish().await.unwrap(), 100_000);
        runs.push((first, finish(&feeder, "2001-01-04 12:00:00", readers).await));
    }
    let mut rows: Vec<(u64, i64)> = vec![(0, 1000), (1, 7)];
    rows.extend((0..200_000).map(|i| (i, value(i))));
    let expected = hourly(&rows);
    for (first, run) in &runs {
        assert_eq!(*first, 200_002);
        // The hours the first COPY and the INSERT fill close before COPY B's rows.
        assert_eq!(run[0][..55].to_vec(), expected[..55].to_vec(), "alone");
        assert_eq!(run[1][..55].to_vec(), expected[..55].to_vec(), "shared");
        assert_eq!(run[4], expected[..5].to_vec(), "LIMIT 5");
    }
    for (q, (on, off)) in runs[0].1.iter().zip(&runs[1].1).enumerate() {
        assert!(!on.is_empty(), "query {q} has rows");
        assert_eq!(sorted(on.clone()), sorted(off.clone()), "query {q}");
    }
}

/// Tuples `s` holds after a barrier.
async fn finish_part(feeder: &Client) -> u64 {
    let n = common::rows(feeder, "SELECT tuples FROM tcq_streams WHERE name = 's'").await;
    n[0][0].parse().unwrap()
}

/// The setting is on by default, takes Booleans only (22023 otherwise), and RESET restores
/// it.
#[tokio::test]
async fn the_setting_is_a_boolean_on_by_default() {
    let port = common::start_server();
    let c = common::connect(port).await;
    assert_eq!(
        common::rows(&c, "SHOW tcq.speculative_copy").await,
        vec![vec!["on".to_string()]]
    );
    let err = c
        .batch_execute("SET tcq.speculative_copy = maybe")
        .await
        .unwrap_err();
    assert_eq!(common::sqlstate(&err), "22023", "{err}");
    c.batch_execute("SET tcq.speculative_copy = off")
        .await
        .unwrap();
    assert_eq!(
        common::rows(&c, "SHOW tcq.speculative_copy").await,
        vec![vec!["off".to_string()]]
    );
    c.batch_execute("RESET tcq.speculative_copy").await.unwrap();
    assert_eq!(
        common::rows(&c, "SHOW tcq.speculative_copy").await,
        vec![vec!["on".to_string()]]
    );
}

/// A COPY that moves its staged batches to a spill file part way (staging threshold
/// 2 MiB) drops what was folded and gives exactly its rows.
#[tokio::test]
async fn a_copy_that_spills_gives_exactly_its_rows() {
    let dir = common::data_dir();
    let config = tcq::engine::Config {
        limits: tcq::engine::Limits {
            statement_staging_memory_bytes: 2 << 20,
            ..tcq::engine::Limits::default()
        },
    };
    let port = common::start_server_on(config, dir.path());
    let (_, feeder, readers) = setup_on(port, true).await;
    assert_eq!(copy(&feeder, &csv(0, 200_000)).await.unwrap(), 200_000);
    let run = finish(&feeder, "2001-01-03 08:00:00", readers).await;
    let rows: Vec<(u64, i64)> = (0..200_000).map(|i| (i, value(i))).collect();
    let expected = hourly(&rows);
    assert_eq!(run[0], expected, "alone");
    assert_eq!(run[1], expected, "shared");
    assert_eq!(run[4], expected[..5].to_vec(), "LIMIT 5");
    assert_eq!(run[5].len(), rows.iter().filter(|r| r.1 == 7).count());
}
