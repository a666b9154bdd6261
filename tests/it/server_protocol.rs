//! The wire protocol end to end, over a real socket with tokio-postgres: simple and extended
//! queries, SQLSTATEs, streamed continuous results, cancel, row-limited portals, binary
//! parameters, COPY in both directions, and clients that vanish mid-statement.

use crate::common;

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use common::{connect, connect_with_handle, sqlstate, start_server};
use futures::{SinkExt, StreamExt};
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, SimpleQueryMessage};

/// Every test gives up after this long instead of hanging.
const LIMIT: Duration = Duration::from_secs(30);

/// No parameters, typed for `query_raw`.
fn no_params() -> Vec<&'static (dyn ToSql + Sync)> {
    Vec::new()
}

/// The command tags (row counts) a simple query reported, in order.
fn counts(messages: &[SimpleQueryMessage]) -> Vec<u64> {
    messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
        .collect()
}

/// Insert one row `v` into stream `s` every 20 ms until the task is aborted, counting up
/// from `from`. Used where a reader must see rows that arrive after its query started.
fn feeder(port: u16, stream: &'static str, from: i32) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let client = connect(port).await;
        let mut v = from;
        loop {
            client
                .simple_query(&format!("INSERT INTO {stream} VALUES ({v})"))
                .await
                .expect("insert");
            v += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

/// Poll `tcq_queries` until no continuous query is registered.
async fn wait_no_queries(client: &tokio_postgres::Client) {
    loop {
        let rows = client
            .simple_query("SELECT id FROM tcq_queries")
            .await
            .expect("tcq_queries");
        let n = rows
            .iter()
            .filter(|m| matches!(m, SimpleQueryMessage::Row(_)))
            .count();
        if n == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How many tuples stream `name` has ingested, from the `tcq_streams` view.
async fn stream_tuples(client: &tokio_postgres::Client, name: &str) -> u64 {
    let rows = client
        .simple_query("SELECT name, tuples FROM tcq_streams")
        .await
        .expect("tcq_streams");
    rows.iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(r) if r.get(0) == Some(name) => r.get(1),
            _ => None,
        })
        .unwrap_or_else(|| panic!("stream {name} is not in tcq_streams"))
        .parse()
        .expect("tuples is a number")
}

#[tokio::test]
async fn empty_query_string_is_answered() {
    let port = start_server();
    let client = connect(port).await;
    let messages = client.simple_query(" ; ").await.expect("empty query");
    // tokio-postgres reports EmptyQueryResponse as a completion without rows.
    assert_eq!(counts(&messages), vec![0]);
    assert!(!messages
        .iter()
        .any(|m| matches!(m, SimpleQueryMessage::Row(_))));
}

#[tokio::test]
async fn simple_query_runs_every_statement_of_a_string() {
    let port = start_server();
    let client = connect(port).await;
    let messages = client
        .simple_query("CREATE STREAM s (v integer); INSERT INTO s VALUES (1), (2), (3); INSERT INTO s VALUES (4)")
        .await
        .expect("multi-statement string");
    assert_eq!(counts(&messages), vec![0, 3, 1]);
}

#[tokio::test]
async fn an_error_aborts_the_rest_of_the_string() {
    let port = start_server();
    let client = connect(port).await;
    let e = client
        .simple_query(
            "CREATE STREAM a (v integer); SELECT * FROM nosuch; CREATE STREAM b (v integer)",
        )
        .await
        .expect_err("unknown stream");
    assert_eq!(sqlstate(&e), "42P01");
    // The statement before the error ran; the one after it did not.
    let e = client
        .simple_query("CREATE STREAM a (v integer)")
        .await
        .expect_err("a exists");
    assert_eq!(sqlstate(&e), "42P07");
    client
        .simple_query("CREATE STREAM b (v integer)")
        .await
        .expect("b was never created");
}

#[tokio::test]
async fn errors_carry_their_sqlstate() {
    let port = start_server();
    let client = connect(port).await;
    let e = client.simple_query("SELEC 1").await.expect_err("syntax");
    assert_eq!(sqlstate(&e), "42601");
    let e = client
        .prepare("SELECT * FROM nosuch")
        .await
        .expect_err("unknown stream");
    assert_eq!(sqlstate(&e), "42P01");
    client
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let e = client
        .simple_query("SELECT nosuch FROM s")
        .await
        .expect_err("unknown column");
    assert_eq!(sqlstate(&e), "42703");
    let e = client
        .simple_query("INSERT INTO s VALUES ('x')")
        .await
        .expect_err("bad integer");
    assert_eq!(sqlstate(&e), "22P02");
    // The connection is still usable after errors in both protocols.
    client
        .simple_query("INSERT INTO s VALUES (1)")
        .await
        .expect("usable");
}

#[tokio::test]
async fn an_error_fails_the_open_transaction_block() {
    let port = start_server();
    let client = connect(port).await;
    client
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    client.simple_query("BEGIN").await.unwrap();
    client
        .simple_query("SELECT * FROM nosuch")
        .await
        .expect_err("unknown stream");
    let e = client
        .simple_query("INSERT INTO s VALUES (1)")
        .await
        .expect_err("failed block");
    assert_eq!(sqlstate(&e), "25P02");
    client
        .simple_query("ROLLBACK")
        .await
        .expect("rollback ends the block");
    client
        .simple_query("INSERT INTO s VALUES (1)")
        .await
        .expect("usable again");
}

#[tokio::test]
async fn continuous_rows_stream_as_they_arrive() {
    let port = start_server();
    let reader = connect(port).await;
    reader
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let feed = feeder(port, "s", 1);
    let rows = tokio::time::timeout(LIMIT, async {
        let stream = reader
            .query_raw("SELECT v FROM s WHERE v % 2 = 1", no_params())
            .await
            .unwrap();
        futures::pin_mut!(stream);
        let mut seen = Vec::new();
        while seen.len() < 3 {
            let row = stream.next().await.expect("row").expect("no error");
            seen.push(row.get::<_, i32>(0));
        }
        seen
    })
    .await
    .expect("rows arrive while the query runs");
    feed.abort();
    assert!(rows.iter().all(|v| v % 2 == 1), "{rows:?}");
    assert!(
        rows.windows(2).all(|w| w[1] == w[0] + 2),
        "consecutive odd values: {rows:?}"
    );
}

#[tokio::test]
async fn cancel_stops_a_streaming_query_with_57014() {
    let port = start_server();
    let client = connect(port).await;
    client
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let feed = feeder(port, "s", 1);
    let token = client.cancel_token();
    let result = tokio::time::timeout(LIMIT, async {
        let stream = client
            .query_raw("SELECT v FROM s", no_params())
            .await
            .unwrap();
        futures::pin_mut!(stream);
        // One row proves the query runs; then cancel it from another connection.
        stream.next().await.expect("row").expect("no error");
        token.cancel_query(NoTls).await.expect("cancel request");
        loop {
            match stream.next().await {
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Some(e),
                None => return None,
            }
        }
    })
    .await
    .expect("cancel is answered");
    feed.abort();
    let e = result.expect("the query ends with an error");
    assert_eq!(sqlstate(&e), "57014");
    assert_eq!(
        e.as_db_error().unwrap().message(),
        "canceling statement due to user request"
    );
    // The session survives the cancel, and the cancelled query is gone.
    client
        .simple_query("INSERT INTO s VALUES (0)")
        .await
        .expect("usable after cancel");
    tokio::time::timeout(LIMIT, wait_no_queries(&client))
        .await
        .expect("query unregistered");
}

#[tokio::test]
async fn cancel_stops_a_simple_protocol_stream() {
    let port = start_server();
    let client = connect(port).await;
    client
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let token = client.cancel_token();
    let canceller = tokio::spawn(async move {
        // Cancel only once the query runs (a cancel with nothing running is ignored).
        let watcher = connect(port).await;
        common::wait_for_queries(&watcher, 1).await;
        token.cancel_query(NoTls).await.expect("cancel request");
    });
    let e = tokio::time::timeout(LIMIT, client.simple_query("SELECT v FROM s"))
        .await
        .expect("cancel is answered")
        .expect_err("cancelled");
    canceller.await.unwrap();
    assert_eq!(sqlstate(&e), "57014");
}

#[tokio::test]
async fn portal_row_limits_suspend_and_resume_a_continuous_query() {
    let port = start_server();
    let mut client = connect(port).await;
    client
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let feed = feeder(port, "s", 1);
    let batches = tokio::time::timeout(LIMIT, async {
        let tx = client.transaction().await.unwrap();
        let portal = tx.bind("SELECT v FROM s", &[]).await.unwrap();
        let mut batches = Vec::new();
        for n in [2, 3, 1] {
            let rows = tx.query_portal(&portal, n).await.unwrap();
            batches.push(rows.iter().map(|r| r.get::<_, i32>(0)).collect::<Vec<_>>());
        }
        tx.rollback().await.unwrap();
        batches
    })
    .await
    .expect("each fetch gets its rows");
    feed.abort();
    assert_eq!(
        batches.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![2, 3, 1]
    );
    // The second fetch resumes exactly where the first stopped: no row lost or repeated.
    let all: Vec<i32> = batches.concat();
    assert!(all.windows(2).all(|w| w[1] == w[0] + 1), "{all:?}");
}

#[tokio::test]
async fn binary_parameters_and_results_round_trip() {
    let port = start_server();
    let writer = connect(port).await;
    let reader = connect(port).await;
    writer
        .simple_query(
            "CREATE STREAM t (b boolean, i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, \
             s text, vc varchar(10), ts timestamp, tz timestamptz)",
        )
        .await
        .unwrap();
    let when = SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
    let got = tokio::time::timeout(LIMIT, async {
        let stream = reader
            .query_raw("SELECT * FROM t", no_params())
            .await
            .unwrap();
        futures::pin_mut!(stream);
        common::wait_for_queries(&writer, 1).await;
        let insert = writer
            .prepare("INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
            .await
            .unwrap();
        let params: [&(dyn ToSql + Sync); 10] = [
            &true,
            &-7i16,
            &123_456i32,
            &-9_000_000_000i64,
            &1.5f32,
            &-2.25f64,
            &"tcq ✓",
            &"short",
            &when,
            &when,
        ];
        assert_eq!(writer.execute(&insert, &params).await.unwrap(), 1);
        stream.next().await.expect("row").expect("no error")
    })
    .await
    .expect("the row arrives");
    assert!(got.get::<_, bool>(0));
    assert_eq!(got.get::<_, i16>(1), -7);
    assert_eq!(got.get::<_, i32>(2), 123_456);
    assert_eq!(got.get::<_, i64>(3), -9_000_000_000);
    assert_eq!(got.get::<_, f32>(4), 1.5);
    assert_eq!(got.get::<_, f64>(5), -2.25);
    assert_eq!(got.get::<_, String>(6), "tcq ✓");
    assert_eq!(got.get::<_, String>(7), "short");
    assert_eq!(got.get::<_, SystemTime>(8), when);
    assert_eq!(got.get::<_, SystemTime>(9), when);
}

#[tokio::test]
async fn text_results_follow_postgres_output_functions() {
    let port = start_server();
    let writer = connect(port).await;
    let reader = connect(port).await;
    writer
        .simple_query("CREATE STREAM t (b boolean, f8 double precision, ts timestamp)")
        .await
        .unwrap();
    let row = tokio::time::timeout(LIMIT, async {
        // The simple protocol reads text; rows arrive while the query still runs.
        let stream = reader.simple_query_raw("SELECT * FROM t").await.unwrap();
        futures::pin_mut!(stream);
        common::wait_for_queries(&writer, 1).await;
        writer
            .simple_query("INSERT INTO t VALUES (true, 1e20, '2024-03-01 12:00:00.5')")
            .await
            .unwrap();
        loop {
            if let SimpleQueryMessage::Row(row) =
                stream.next().await.expect("message").expect("no error")
            {
                return row;
            }
        }
    })
    .await
    .expect("the row arrives");
    assert_eq!(row.get(0), Some("t"));
    assert_eq!(row.get(1), Some("1e+20"));
    assert_eq!(row.get(2), Some("2024-03-01 12:00:00.5"));
}

#[tokio::test]
async fn copy_from_stdin_ingests_all_rows() {
    let port = start_server();
    let client = connect(port).await;
    client
        .simple_query("CREATE STREAM s (v integer, name text)")
        .await
        .unwrap();
    let sink = client.copy_in("COPY s FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    sink.send(Bytes::from_static(b"1\tone\n2\t")).await.unwrap();
    sink.send(Bytes::from_static(b"\\N\n3\tthree\n"))
        .await
        .unwrap();
    assert_eq!(sink.finish().await.unwrap(), 3);
    let sink = client
        .copy_in("COPY s FROM STDIN WITH (FORMAT csv, HEADER)")
        .await
        .unwrap();
    futures::pin_mut!(sink);
    sink.send(Bytes::from_static(b"v,name\n4,\"a,b\"\n"))
        .await
        .unwrap();
    assert_eq!(sink.finish().await.unwrap(), 1);
}

#[tokio::test]
async fn a_bad_copy_row_rejects_the_copy_and_names_the_line() {
    let port = start_server();
    let client = connect(port).await;
    client
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let sink = client.copy_in("COPY s FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    sink.send(Bytes::from_static(b"1\n2\nxyz\n4\n"))
        .await
        .unwrap();
    let e = sink.finish().await.expect_err("bad row");
    assert_eq!(sqlstate(&e), "22P02");
    assert!(e.as_db_error().unwrap().message().contains("xyz"), "{e}");
    // The connection is usable, and nothing of the failed COPY was ingested.
    let sink = client.copy_in("COPY s FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    sink.send(Bytes::from_static(b"5\n")).await.unwrap();
    assert_eq!(sink.finish().await.unwrap(), 1);
    assert_eq!(
        stream_tuples(&client, "s").await,
        1,
        "only the completed COPY's row was ingested"
    );
}

#[tokio::test]
async fn copy_to_stdout_streams_lines_and_can_be_cancelled() {
    let port = start_server();
    let client = connect(port).await;
    client
        .simple_query("CREATE STREAM s (v integer, name text)")
        .await
        .unwrap();
    let writer = connect(port).await;
    let token = client.cancel_token();
    let result = tokio::time::timeout(LIMIT, async {
        let stream = client
            .copy_out("COPY (SELECT v, name FROM s) TO STDOUT")
            .await
            .unwrap();
        futures::pin_mut!(stream);
        common::wait_for_queries(&writer, 1).await;
        writer
            .simple_query("INSERT INTO s VALUES (1, 'a\tb'), (2, NULL)")
            .await
            .unwrap();
        let mut text = Vec::new();
        while text.len() < b"1\ta\\tb\n2\t\\N\n".len() {
            text.extend_from_slice(&stream.next().await.expect("data").expect("no error"));
        }
        token.cancel_query(NoTls).await.expect("cancel request");
        let end = loop {
            match stream.next().await {
                Some(Ok(_)) => continue,
                other => break other,
            }
        };
        (text, end)
    })
    .await
    .expect("COPY data arrives and the cancel is answered");
    assert_eq!(String::from_utf8(result.0).unwrap(), "1\ta\\tb\n2\t\\N\n");
    let e = result
        .1
        .expect("an error ends the COPY")
        .expect_err("cancelled");
    assert_eq!(sqlstate(&e), "57014");
}

#[tokio::test]
async fn a_client_that_vanishes_mid_stream_leaves_the_server_usable() {
    let port = start_server();
    let (doomed, connection) = connect_with_handle(port).await;
    doomed
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let other = connect(port).await;
    tokio::time::timeout(LIMIT, async {
        let stream = doomed
            .query_raw("SELECT v FROM s", no_params())
            .await
            .unwrap();
        futures::pin_mut!(stream);
        common::wait_for_queries(&other, 1).await;
        other
            .simple_query("INSERT INTO s VALUES (1)")
            .await
            .unwrap();
        stream.next().await.expect("row").expect("no error");
    })
    .await
    .expect("the doomed query runs");
    // Kill the socket without a Terminate message, as a crashed client would.
    connection.abort();
    drop(doomed);
    // The server notices, drops the query, and serves everyone else.
    tokio::time::timeout(LIMIT, wait_no_queries(&other))
        .await
        .expect("query dropped");
    for v in 0..100 {
        other
            .simple_query(&format!("INSERT INTO s VALUES ({v})"))
            .await
            .expect("insert");
    }
    let fresh = connect(port).await;
    fresh
        .simple_query("INSERT INTO s VALUES (1)")
        .await
        .expect("new sessions work");
}

#[tokio::test]
async fn a_client_that_vanishes_mid_copy_leaves_nothing_behind() {
    let port = start_server();
    let (doomed, connection) = connect_with_handle(port).await;
    doomed
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let sink = doomed
        .copy_in::<_, Bytes>("COPY s FROM STDIN")
        .await
        .unwrap();
    futures::pin_mut!(sink);
    sink.send(Bytes::from_static(b"1\n2\n3\n")).await.unwrap();
    // Give the data time to reach the server, then cut the connection mid-COPY.
    tokio::time::sleep(Duration::from_millis(200)).await;
    connection.abort();
    let other = connect(port).await;
    let sink = other.copy_in("COPY s FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    sink.send(Bytes::from_static(b"7\n")).await.unwrap();
    assert_eq!(sink.finish().await.unwrap(), 1);
    assert_eq!(
        stream_tuples(&other, "s").await,
        1,
        "only the completed COPY's row was ingested"
    );
}

#[tokio::test]
async fn finite_results_use_binary_formats_and_row_limits() {
    let port = start_server();
    let mut client = connect(port).await;
    client
        .simple_query(
            "CREATE STREAM a (v integer); CREATE STREAM b (v integer); CREATE STREAM c (v integer)",
        )
        .await
        .unwrap();
    // The extended protocol asks for binary results: a system view decodes as typed values.
    let rows = client
        .query("SELECT name FROM tcq_streams ORDER BY name", &[])
        .await
        .unwrap();
    let names: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(names, vec!["a", "b", "c"]);
    // A finite result handed out through a row-limited portal.
    let tx = client.transaction().await.unwrap();
    let portal = tx
        .bind("SELECT name FROM tcq_streams ORDER BY name", &[])
        .await
        .unwrap();
    let first = tx.query_portal(&portal, 2).await.unwrap();
    let rest = tx.query_portal(&portal, 2).await.unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].get::<_, String>(0), "c");
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn garbage_on_the_socket_harms_no_one() {
    use tokio::io::AsyncWriteExt;
    let port = start_server();
    let mut raw = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    raw.write_all(b"\x00\x00\x00\x08garbage that is not a startup packet")
        .await
        .unwrap();
    drop(raw);
    let client = connect(port).await;
    client
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .expect("server still serves");
}

#[tokio::test]
async fn copy_fail_aborts_the_copy() {
    let port = start_server();
    let client = connect(port).await;
    client
        .simple_query("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    {
        let sink = client
            .copy_in::<_, Bytes>("COPY s FROM STDIN")
            .await
            .unwrap();
        futures::pin_mut!(sink);
        sink.send(Bytes::from_static(b"1\n2\n")).await.unwrap();
        // Dropping an unfinished sink makes tokio-postgres send CopyFail.
    }
    client
        .simple_query("INSERT INTO s VALUES (3)")
        .await
        .expect("usable after CopyFail");
    assert_eq!(
        stream_tuples(&client, "s").await,
        1,
        "nothing of the failed COPY was ingested"
    );
}

/// Regression: copy-out packed a slide event's rows into one CopyData message, so clients
/// that read a row per message (psycopg `copy.rows()`, pgjdbc `readFromCopy`, tokio-postgres
/// `copy_out`) lost or merged rows. PostgreSQL sends exactly one row per CopyData; so must we.
/// The example: 10-second windows grouped by k over (a,:01) (b,:03) (a,:05) (a,:12).
#[tokio::test]
async fn copy_out_sends_one_row_per_copy_data_message() {
    let port = start_server();
    let client = connect(port).await;
    client
        .simple_query("CREATE STREAM cd (ts timestamp TIMESTAMPCOLUMN, k text)")
        .await
        .unwrap();
    let writer = connect(port).await;
    let chunks = tokio::time::timeout(LIMIT, async {
        let stream = client
            .copy_out(
                "COPY (SELECT k, count(*), wtime(*) FROM cd \
                 [RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k ORDER BY k LIMIT 3) \
                 TO STDOUT WITH (FORMAT csv, HEADER)",
            )
            .await
            .unwrap();
        futures::pin_mut!(stream);
        common::wait_for_queries(&writer, 1).await;
        writer
            .simple_query(
                "INSERT INTO cd VALUES ('2001-01-01 00:00:01', 'a'), \
                 ('2001-01-01 00:00:03', 'b'), ('2001-01-01 00:00:05', 'a'), \
                 ('2001-01-01 00:00:12', 'a'), ('2001-01-01 00:00:13', 'c'), \
                 ('2001-01-01 00:00:21', 'a')",
            )
            .await
            .unwrap();
        let mut chunks = Vec::new();
        while let Some(chunk) = stream.next().await {
            chunks.push(String::from_utf8(chunk.unwrap().to_vec()).unwrap());
        }
        chunks
    })
    .await
    .expect("the COPY ends after its LIMIT");
    assert_eq!(
        chunks,
        [
            "k,count,wtime\n",
            "a,2,2001-01-01 00:00:10\n",
            "b,1,2001-01-01 00:00:10\n",
            "a,1,2001-01-01 00:00:20\n",
        ]
    );
}

/// Regression: `SELECT` with an empty target list sent DataRows without a RowDescription, so
/// psql and psycopg failed with "server sent data without prior row description".
/// PostgreSQL describes zero columns and sends one row (none when WHERE is false).
#[tokio::test]
async fn select_with_an_empty_target_list_is_described() {
    let port = start_server();
    let client = connect(port).await;
    for (sql, rows) in [
        ("SELECT", 1),
        ("SELECT WHERE true", 1),
        ("SELECT WHERE false", 0),
    ] {
        let messages = client.simple_query(sql).await.unwrap();
        let data: Vec<usize> = messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(r.len()),
                _ => None,
            })
            .collect();
        assert_eq!(data, vec![0; rows], "{sql}");
        assert!(
            messages
                .iter()
                .any(|m| matches!(m, SimpleQueryMessage::RowDescription(d) if d.is_empty())),
            "{sql}: a RowDescription of zero columns"
        );
        assert_eq!(counts(&messages), [rows as u64], "{sql}");
        let prepared = client.query(sql, &[]).await.unwrap();
        assert_eq!(prepared.len(), rows, "{sql} over the extended protocol");
    }
}

/// Scrolling a cursor backwards is PostgreSQL's 55000 for a cursor without SCROLL (it was
/// 0A000): continuous rows are gone once fetched, so no tcq cursor scrolls.
#[tokio::test]
async fn backward_fetch_is_55000() {
    let port = start_server();
    let client = connect(port).await;
    client
        .batch_execute("CREATE STREAM bf (v integer)")
        .await
        .unwrap();
    for fetch in [
        "FETCH BACKWARD 1 FROM c",
        "FETCH PRIOR FROM c",
        "FETCH ABSOLUTE 1 FROM c",
        "FETCH -1 FROM c",
    ] {
        client
            .batch_execute("BEGIN; DECLARE c CURSOR FOR SELECT v FROM bf")
            .await
            .unwrap();
        let e = client.batch_execute(fetch).await.unwrap_err();
        assert_eq!(sqlstate(&e), "55000", "{fetch}");
        client.batch_execute("ROLLBACK").await.unwrap();
    }
}

/// A line longer than the parse chunk, sent in many messages none of which ends it, is
/// parsed once its newline arrives, whole (the parser used to rescan the unfinished line at
/// every message, quadratic in its length: a 10 MB value took seconds).
#[tokio::test]
async fn a_long_line_split_across_many_messages_arrives_whole() {
    let port = start_server();
    let client = connect(port).await;
    client
        .batch_execute("CREATE STREAM ll (v text)")
        .await
        .unwrap();
    let reader = connect(port).await;
    let lengths = tokio::spawn(async move {
        let stream = reader
            .copy_out("COPY (SELECT length(v) FROM ll LIMIT 3) TO STDOUT")
            .await
            .unwrap();
        futures::pin_mut!(stream);
        let mut text = Vec::new();
        while let Some(chunk) = stream.next().await {
            text.extend_from_slice(&chunk.unwrap());
        }
        String::from_utf8(text).unwrap()
    });
    common::wait_for_queries(&client, 1).await;
    let long = "x".repeat(3 << 20);
    let text = format!("short\n{long}\nend\n");
    let sink = client.copy_in("COPY ll FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    for chunk in text.as_bytes().chunks(8 << 10) {
        sink.send(Bytes::copy_from_slice(chunk)).await.unwrap();
    }
    assert_eq!(sink.finish().await.unwrap(), 3);
    let lengths = tokio::time::timeout(LIMIT, lengths)
        .await
        .expect("three rows")
        .unwrap();
    assert_eq!(lengths, format!("5\n{}\n3\n", 3 << 20));
}
