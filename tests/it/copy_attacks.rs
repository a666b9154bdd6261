//! COPY and cancellation under attack, with continuous queries running through it: a
//! client that disconnects in the middle of a COPY FROM of many chunks, CopyFail, a cancel
//! request (the protocol's CancelRequest and `pg_cancel_backend`) during a COPY FROM, a
//! COPY TO of a continuous query and a continuous SELECT, two COPYs into one stream at once,
//! bad rows at the first line, deep in a later 1 MiB chunk and at a last line without a
//! line end, a line longer than a chunk, and a truncated binary tuple.
//!
//! After every failed COPY a good one follows, and the continuous queries (a projection
//! and a tumbling window) must give exactly the good rows, in commit order: nothing of a
//! failed COPY reaches a query, whatever COPY's commit does before CopyDone. Errors are
//! compared with PostgreSQL 15's for a COPY into a table (skipped with a message when it
//! is not installed).

use crate::common;
use crate::common::sources::fetch;
use crate::protocol_attacks::{msg, read_msg};

use std::time::Duration;

use bytes::Bytes;
use futures::SinkExt;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const STREAM: &str = "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, i integer, o text)";
const TABLE: &str = "CREATE TABLE t (ts timestamp, i integer, o text)";
const COPY_S: &str = "COPY s FROM STDIN WITH (FORMAT csv)";

/// Row `i` of hour `h` as a CSV line: its second within the hour is `i % 3600`.
fn line(h: u32, i: usize) -> String {
    format!(
        "2001-01-01 {h:02}:{:02}:{:02},{i},o{}\n",
        i / 60 % 60,
        i % 60,
        i % 97
    )
}

/// Rows `from..to` of hour `h`.
fn lines(h: u32, from: usize, to: usize) -> String {
    (from..to).map(|i| line(h, i)).collect()
}

/// Messages up to and with ReadyForQuery (at most 20 s): (type, SQLSTATE and message of
/// an ErrorResponse, else empty).
async fn until_ready(s: &mut TcpStream) -> Vec<(u8, String)> {
    let read = async {
        let mut out = Vec::new();
        while let Some((kind, body)) = read_msg(s).await {
            let mut text = String::new();
            if kind == b'E' {
                let field = |c: u8| {
                    body.split(|&b| b == 0)
                        .find_map(|f| f.strip_prefix(&[c]))
                        .map(|f| String::from_utf8_lossy(f).into_owned())
                        .unwrap_or_default()
                };
                text = format!("{} {}", field(b'C'), field(b'M'));
            }
            out.push((kind, text));
            if kind == b'Z' {
                break;
            }
        }
        out
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("no ReadyForQuery within 20 s")
}

/// A raw connection past start-up, with COPY FROM STDIN into `s` begun (CopyInResponse).
async fn raw_copy(port: u16, sql: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(&crate::protocol_attacks::startup())
        .await
        .unwrap();
    until_ready(&mut s).await;
    let mut q = sql.as_bytes().to_vec();
    q.push(0);
    s.write_all(&msg(b'Q', &q)).await.unwrap();
    let (kind, _) = read_msg(&mut s).await.expect("an answer to COPY");
    assert_eq!(kind, b'G', "CopyInResponse");
    s
}

/// Send `data` as CopyData messages of 64 KiB.
async fn send_data(s: &mut TcpStream, data: &[u8]) {
    for piece in data.chunks(64 << 10) {
        s.write_all(&msg(b'd', piece)).await.unwrap();
    }
}

/// The session with the continuous queries: cursor `q` over `SELECT i FROM s` and cursor
/// `w` over a tumbling hour window (count and sum of `i`) from 2001-01-01 00:00.
async fn watcher(port: u16) -> tokio_postgres::Client {
    let w = common::connect(port).await;
    common::exec(
        &w,
        "BEGIN; DECLARE q CURSOR FOR SELECT i FROM s; \
         DECLARE w CURSOR FOR SELECT count(*), sum(i) FROM s \
         [RANGE BY '1 hour' SLIDE BY '1 hour' START AT '2001-01-01 00:00:00']",
    )
    .await;
    w
}

/// The values of `i` cursor `q` delivers: exactly `want` of them (one more is waited for
/// a second and must not come).
async fn expect_rows(w: &tokio_postgres::Client, want: &[usize]) {
    let mut got: Vec<usize> = fetch(w, "q", want.len(), 20)
        .await
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect();
    got.extend(
        fetch(w, "q", 1, 1)
            .await
            .iter()
            .map(|r| r[0].parse::<usize>().unwrap()),
    );
    assert_eq!(got, want, "the continuous query's rows");
}

/// A good COPY into `s` of rows `from..to` of hour `h` on `c`, and the rows `q` then
/// delivers: exactly those.
async fn good_copy(
    c: &tokio_postgres::Client,
    w: &tokio_postgres::Client,
    h: u32,
    from: usize,
    to: usize,
) {
    let n = common::copy_in(c, COPY_S, lines(h, from, to).as_bytes(), 64 << 10)
        .await
        .expect("a good COPY after the failed one");
    assert_eq!(n, (to - from) as u64);
    expect_rows(w, &(from..to).collect::<Vec<_>>()).await;
}

/// A client that disconnects in the middle of a COPY of many chunks, and one that sends
/// CopyFail after megabytes: nothing reaches the queries, the server stays healthy, the
/// stream takes the next COPY whole. CopyFail is PostgreSQL's 57014 "COPY from stdin
/// failed: <the client's message>".
#[tokio::test]
async fn a_disconnect_or_copyfail_mid_copy_keeps_nothing() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, STREAM).await;
    let w = watcher(port).await;
    let big = lines(0, 0, 120_000);
    assert!(big.len() > 3 << 20, "several 1 MiB chunks");
    for round in 0..3usize {
        let mut s = raw_copy(port, COPY_S).await;
        send_data(&mut s, big.as_bytes()).await;
        if round == 1 {
            s.write_all(&msg(b'f', b"the client gave up\0"))
                .await
                .unwrap();
            let answer = until_ready(&mut s).await;
            assert_eq!(
                answer.iter().find(|m| m.0 == b'E').map(|m| m.1.as_str()),
                Some("57014 COPY from stdin failed: the client gave up"),
                "{answer:?}"
            );
            // The connection goes on.
            s.write_all(&msg(b'Q', b"SELECT 1\0")).await.unwrap();
            let after = until_ready(&mut s).await;
            assert!(after.iter().all(|m| m.0 != b'E'), "{after:?}");
        } else {
            // Half a CopyData message, then gone.
            s.write_all(b"d\x00\x01\x00\x00partial").await.unwrap();
        }
        drop(s);
        let base = 1_000_000 * (round + 1);
        good_copy(&c, &w, 1, base, base + 10).await;
    }
    common::exec(&c, "SELECT 1").await;
    assert_eq!(
        common::rows(&c, "SELECT tuples FROM tcq_streams WHERE name = 's'").await,
        vec![vec!["30".to_string()]]
    );
    assert_eq!(tcq::server::connection_panics(), 0);
}

/// A cancel request during a long COPY FROM, by the protocol's CancelRequest and by
/// `pg_cancel_backend` from another session: 57014, nothing of it kept, and the session
/// and the stream take the next COPY whole.
#[tokio::test]
async fn a_cancel_during_copy_from_keeps_nothing() {
    let port = common::start_server();
    let c = common::connect(port).await;
    let admin = common::connect(port).await;
    common::exec(&c, STREAM).await;
    let w = watcher(port).await;
    let pid: i32 = c
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    let chunk = |k: usize| lines(0, k * 20_000, (k + 1) * 20_000);
    for (round, by_function) in [false, true].into_iter().enumerate() {
        let sink = c.copy_in::<_, Bytes>(COPY_S).await.unwrap();
        futures::pin_mut!(sink);
        sink.send(Bytes::from(chunk(0))).await.unwrap();
        if by_function {
            let r = common::rows(&admin, &format!("SELECT pg_cancel_backend({pid})")).await;
            assert_eq!(r, vec![vec!["t".to_string()]]);
        } else {
            c.cancel_token()
                .cancel_query(tokio_postgres::NoTls)
                .await
                .unwrap();
        }
        // The cancel is handled on a connection of its own: let it land, then send
        // megabytes more.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let result = async {
            for k in 1..8 {
                sink.send(Bytes::from(chunk(k))).await?;
            }
            sink.finish().await
        }
        .await;
        let err = result.expect_err("the COPY was canceled");
        assert_eq!(common::sqlstate(&err), "57014", "{err:?}");
        let db = err.as_db_error().unwrap();
        assert_eq!(db.message(), "canceling statement due to user request");
        let base = 1_000_000 * (round + 1);
        good_copy(&c, &w, 0, base, base + 10).await;
    }
    // The window of hour 0 closes with a row of hour 1: the 20 good rows only.
    good_copy(&c, &w, 1, 1, 2).await;
    let sum: usize = (1_000_000..1_000_010).chain(2_000_000..2_000_010).sum();
    assert_eq!(
        fetch(&w, "w", 1, 20).await,
        vec![vec!["20".to_string(), sum.to_string()]]
    );
    assert!(fetch(&w, "w", 1, 1).await.is_empty());
}

/// A cancel request during a COPY TO of a continuous query and during a continuous
/// SELECT ends each with 57014; the session goes on, and the stream's other queries see
/// every row.
#[tokio::test]
async fn a_cancel_ends_a_copy_to_or_a_select_of_a_continuous_query() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, STREAM).await;
    let w = watcher(port).await;
    let (reader, _handle) = common::connect_with_handle(port).await;
    let cancel = reader.cancel_token();
    for copy_to in [true, false] {
        let sql = "SELECT i FROM s";
        let reader = &reader;
        let run = async move {
            if copy_to {
                use futures::TryStreamExt;
                let out = reader.copy_out(&format!("COPY ({sql}) TO STDOUT")).await?;
                futures::pin_mut!(out);
                while out.try_next().await?.is_some() {}
                Ok(())
            } else {
                reader.simple_query(sql).await.map(|_| ())
            }
        };
        let cancel = async {
            // The watcher's two queries and this one.
            common::wait_for_queries(&c, 3).await;
            good_copy(&c, &w, 0, 0, 5).await;
            cancel.cancel_query(tokio_postgres::NoTls).await.unwrap();
        };
        let (result, ()) =
            tokio::time::timeout(Duration::from_secs(30), async { tokio::join!(run, cancel) })
                .await
                .expect("the canceled query ends");
        let err = result.expect_err("canceled");
        assert_eq!(
            common::sqlstate(&err),
            "57014",
            "copy_to {copy_to}: {err:?}"
        );
        let r = reader.query_one("SELECT 1", &[]).await.unwrap();
        assert_eq!(r.get::<_, i32>(0), 1);
    }
}

/// Two COPYs into one stream at once, on two connections: each commits at its CopyDone,
/// the second opened done first, so the queries see its rows first, then the other's.
#[tokio::test]
async fn concurrent_copies_commit_in_copydone_order() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, STREAM).await;
    let w = watcher(port).await;
    let mut a = raw_copy(port, COPY_S).await;
    let mut b = raw_copy(port, COPY_S).await;
    send_data(&mut a, lines(0, 100, 20_100).as_bytes()).await;
    send_data(&mut b, lines(0, 50_000, 50_010).as_bytes()).await;
    send_data(&mut a, lines(0, 20_100, 40_000).as_bytes()).await;
    b.write_all(&msg(b'c', b"")).await.unwrap();
    let done_b = until_ready(&mut b).await;
    assert_eq!(done_b.first().map(|m| m.1.as_str()), Some(""), "{done_b:?}");
    expect_rows(&w, &(50_000..50_010).collect::<Vec<_>>()).await;
    a.write_all(&msg(b'c', b"")).await.unwrap();
    let done_a = until_ready(&mut a).await;
    assert!(done_a.iter().all(|m| m.0 != b'E'), "{done_a:?}");
    expect_rows(&w, &(100..40_000).collect::<Vec<_>>()).await;
    // A failed COPY between two good ones, all three open at once: only the good ones.
    let mut x = raw_copy(port, COPY_S).await;
    let mut y = raw_copy(port, COPY_S).await;
    send_data(&mut x, lines(0, 60_000, 60_005).as_bytes()).await;
    let short = format!("{}2001-01-01 00:00:00,1\n", lines(0, 70_000, 70_005));
    send_data(&mut y, short.as_bytes()).await;
    y.write_all(&msg(b'c', b"")).await.unwrap();
    let failed = until_ready(&mut y).await;
    assert!(
        failed.iter().any(|m| m.1.starts_with("22P04")),
        "{failed:?}"
    );
    x.write_all(&msg(b'c', b"")).await.unwrap();
    until_ready(&mut x).await;
    expect_rows(&w, &(60_000..60_005).collect::<Vec<_>>()).await;
}

/// The answer to a COPY of `data` into `rel` on `c`: `OK n`, or the SQLSTATE, message and
/// context.
async fn outcome(c: &tokio_postgres::Client, rel: &str, data: &[u8]) -> String {
    let sql = format!("COPY {rel} FROM STDIN WITH (FORMAT csv)");
    match common::copy_in(c, &sql, data, 64 << 10).await {
        Ok(n) => format!("OK {n}"),
        Err(e) => {
            let db = e.as_db_error().expect("a server error");
            format!(
                "{} {} | {}",
                db.code().code(),
                db.message(),
                db.where_().unwrap_or("")
            )
        }
    }
}

/// Bad rows at the first line, in the middle of the 5th 1 MiB chunk, and at a last line
/// without a line end; a line longer than 1 MiB, good and bad: the same SQLSTATE,
/// message and context as PostgreSQL 15 for a COPY into a table, the same again into a
/// stream (its name in the context), and after each failed COPY a good one gives the
/// queries exactly its rows.
#[tokio::test]
async fn bad_rows_anywhere_answer_as_postgresql_and_keep_nothing() {
    let cluster = common::postgres::Cluster::start();
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, &format!("{STREAM}; {TABLE}")).await;
    let w = watcher(port).await;
    let good = lines(0, 0, 200_000);
    assert!(good.len() > 5 << 20, "six chunks");
    // The line that holds the middle of the 5th chunk.
    let mid = (4 << 20) + (1 << 19);
    let start = good[..mid].rfind('\n').unwrap() + 1;
    let end = start + good[start..].find('\n').unwrap() + 1;
    let n5 = good[..start].matches('\n').count();
    let long = "y".repeat(3 << 19);
    let cases: Vec<(&str, String)> = vec![
        ("first line", format!("x,1,a\n{good}")),
        (
            "5th chunk",
            format!(
                "{}2001-01-01 00:00:00,zz,a\n{}",
                &good[..start],
                &good[end..]
            ),
        ),
        ("last line short", format!("{good}2001-01-01 00:00:00,1")),
        ("last line bad", format!("{good}2001-01-01 00:00:00,1x,a")),
        ("long line bad", format!("2001-01-01 00:00:00,q,{long}\n")),
        (
            "blank line",
            format!("{}\n{}", lines(0, 0, 4), lines(0, 4, 8)),
        ),
        (
            "extra field",
            format!("{}2001-01-01 00:00:00,1,a,b\n", lines(0, 0, 4)),
        ),
    ];
    let pg = match &cluster {
        Ok(cl) => {
            let conn = format!(
                "host=127.0.0.1 port={} user=postgres dbname=postgres",
                cl.port
            );
            let (pg, connection) = tokio_postgres::connect(&conn, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            pg.batch_execute(TABLE).await.unwrap();
            Some(pg)
        }
        Err(reason) => {
            common::skip(reason);
            None
        }
    };
    for (round, (what, data)) in cases.iter().enumerate() {
        let table = outcome(&c, "t", data.as_bytes()).await;
        assert!(!table.starts_with("OK"), "{what}: {table}");
        if *what == "5th chunk" {
            assert!(
                table.contains(&format!("COPY t, line {}", n5 + 1)),
                "{table}"
            );
        }
        if let Some(pg) = &pg {
            assert_eq!(table, outcome(pg, "t", data.as_bytes()).await, "{what}");
        }
        let stream = outcome(&c, "s", data.as_bytes()).await;
        assert_eq!(stream, table.replace("COPY t,", "COPY s,"), "{what}");
        let base = 1_000_000 * (round + 1);
        good_copy(&c, &w, 1, base, base + 3).await;
    }
    // A line longer than a chunk is read whole.
    let data = format!("2001-01-01 01:00:00,7,{long}\n2001-01-01 01:00:01,8,b\n");
    assert_eq!(outcome(&c, "s", data.as_bytes()).await, "OK 2");
    expect_rows(&w, &[7, 8]).await;
    let r = common::rows(&c, "SELECT length(o) FROM t").await;
    assert!(
        r.is_empty(),
        "nothing of the failed COPYs into the table: {r:?}"
    );
    if let Some(pg) = &pg {
        assert_eq!(outcome(pg, "t", data.as_bytes()).await, "OK 2");
    }
    assert_eq!(outcome(&c, "t", data.as_bytes()).await, "OK 2");
    assert_eq!(
        common::rows(&c, "SELECT i, length(o) FROM t ORDER BY i").await,
        common::table(&[&["7", &long.len().to_string()], &["8", "1"]])
    );
}

/// COPY BINARY with a truncated tuple (a field cut short, a field count with no fields):
/// 22P04 "unexpected EOF in COPY data" as PostgreSQL says; nothing kept; the next COPY
/// into the stream reaches the queries whole.
#[tokio::test]
async fn a_truncated_binary_tuple_keeps_nothing() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE STREAM s (i integer)").await;
    let w = common::connect(port).await;
    common::exec(&w, "BEGIN; DECLARE q CURSOR FOR SELECT i FROM s").await;
    let mut head = b"PGCOPY\n\xff\r\n\0".to_vec();
    head.extend_from_slice(&[0; 8]);
    let tuple = |v: i32| {
        let mut t = 1i16.to_be_bytes().to_vec();
        t.extend_from_slice(&4i32.to_be_bytes());
        t.extend_from_slice(&v.to_be_bytes());
        t
    };
    let many: Vec<u8> = (0..100_000).flat_map(tuple).collect();
    for (round, tail) in [
        [&1i16.to_be_bytes()[..], &4i32.to_be_bytes(), &[0, 0]].concat(),
        1i16.to_be_bytes().to_vec(),
        tuple(5)[..7].to_vec(),
    ]
    .into_iter()
    .enumerate()
    {
        let mut s = raw_copy(port, "COPY s FROM STDIN WITH (FORMAT binary)").await;
        send_data(&mut s, &[&head[..], &many, &tail].concat()).await;
        s.write_all(&msg(b'c', b"")).await.unwrap();
        let answer = until_ready(&mut s).await;
        let error = answer.iter().find(|m| m.0 == b'E').map(|m| m.1.as_str());
        assert_eq!(
            error,
            Some("22P04 unexpected EOF in COPY data"),
            "round {round}: {answer:?}"
        );
        let mut good = head.clone();
        good.extend(tuple(round as i32));
        good.extend_from_slice(&(-1i16).to_be_bytes());
        let mut s = raw_copy(port, "COPY s FROM STDIN WITH (FORMAT binary)").await;
        send_data(&mut s, &good).await;
        s.write_all(&msg(b'c', b"")).await.unwrap();
        let done = until_ready(&mut s).await;
        assert!(done.iter().all(|m| m.0 != b'E'), "{done:?}");
        let rows = fetch(&w, "q", 2, 2).await;
        assert_eq!(rows, vec![vec![round.to_string()]], "round {round}");
    }
}
