//! COPY FROM STDIN and the session around it, through tokio-postgres's own COPY API: the
//! session's time zone on both threads of the two-thread parse, a cancel request sent
//! while the data arrives, and data after the `\.` end marker.

use crate::common;

use bytes::Bytes;
use futures::SinkExt;

/// Send `data` in CopyData messages of 64 KiB, then CopyDone.
async fn copy(
    c: &tokio_postgres::Client,
    sql: &str,
    data: &[u8],
) -> Result<u64, tokio_postgres::Error> {
    common::copy_in(c, sql, data, 64 << 10).await
}

/// Regression: a large COPY parses the plain lines of each 1 MiB chunk on two threads,
/// and the second thread read timestamptz fields in UTC instead of the session's zone, so
/// about half the rows of a COPY under `SET TIME ZONE` landed hours off. Every row must be
/// read in the session's zone, as the first row is.
#[tokio::test]
async fn a_large_copy_reads_every_timestamptz_in_the_session_zone() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute(
        "CREATE TABLE tz_big (tz timestamptz, i integer); SET TIME ZONE 'America/New_York'",
    )
    .await
    .unwrap();
    let n = 100_000;
    let mut data = String::new();
    for i in 0..n {
        let (d, s) = (1 + i / 86_400, i % 86_400);
        data.push_str(&format!(
            "2001-01-{d:02} {:02}:{:02}:{:02},{i}\n",
            s / 3600,
            s / 60 % 60,
            s % 60
        ));
    }
    assert!(data.len() > 2 << 20, "chunks large enough for two threads");
    let copied = copy(
        &c,
        "COPY tz_big FROM STDIN WITH (FORMAT csv)",
        data.as_bytes(),
    )
    .await
    .unwrap();
    assert_eq!(copied, n as u64);
    let rows = common::rows(&c, "SELECT i, tz FROM tz_big").await;
    assert_eq!(rows.len(), n);
    let wrong: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| {
            let i: usize = r[0].parse().unwrap();
            let (d, s) = (1 + i / 86_400, i % 86_400);
            // Read in New York (UTC-5 in January) and shown there again: the same text.
            r[1] != format!(
                "2001-01-{d:02} {:02}:{:02}:{:02}-05",
                s / 3600,
                s / 60 % 60,
                s % 60
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} rows off, e.g. {:?}",
        wrong.len(),
        wrong.first()
    );
}

/// Regression: a cancel request sent while a COPY's data arrived was dropped when
/// CopyDone came, and the COPY committed. It now fails the COPY with 57014 and keeps none
/// of its rows, whether the cancel is seen at a later chunk of data or at CopyDone; the
/// session goes on.
#[tokio::test]
async fn a_cancel_during_copy_data_fails_the_copy_and_keeps_nothing() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute("CREATE TABLE cc (i integer, t text)")
        .await
        .unwrap();
    let line = |i: usize| format!("{i},some text to make the line longer\n");
    for more in [0usize, 3 << 20] {
        let sink = c
            .copy_in::<_, Bytes>("COPY cc FROM STDIN WITH (FORMAT csv)")
            .await
            .unwrap();
        futures::pin_mut!(sink);
        let first: String = (0..1000).map(line).collect();
        sink.send(Bytes::from(first)).await.unwrap();
        c.cancel_token()
            .cancel_query(tokio_postgres::NoTls)
            .await
            .unwrap();
        // A cancel request is handled on a connection of its own, as in PostgreSQL: let it
        // land before the rest of the COPY.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        // More data after the cancel (megabytes: the cancel is seen at a chunk), or none
        // (it is seen at CopyDone).
        let result = async {
            let mut sent = 0;
            let mut i = 1000;
            while sent < more {
                let piece: String = (i..i + 1000).map(line).collect();
                sent += piece.len();
                i += 1000;
                sink.send(Bytes::from(piece)).await?;
            }
            sink.finish().await
        }
        .await;
        let err = result.expect_err("the COPY was canceled");
        assert_eq!(common::sqlstate(&err), "57014", "{err:?}");
        assert_eq!(
            common::rows(&c, "SELECT count(*) FROM cc").await,
            vec![vec!["0".to_string()]]
        );
    }
    // The session goes on: the next COPY is not canceled.
    let ok = copy(&c, "COPY cc FROM STDIN WITH (FORMAT csv)", b"1,a\n2,b\n")
        .await
        .unwrap();
    assert_eq!(ok, 2);
}

/// Regression: data after the `\.` end marker was kept and scanned again at each chunk,
/// so enough of it failed the COPY with 54000 (a line longer than copy_line_bytes_max).
/// PostgreSQL ignores everything after the marker up to CopyDone, and so does tcq.
#[tokio::test]
async fn data_after_the_end_marker_is_ignored() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute("CREATE TABLE em (i integer)")
        .await
        .unwrap();
    let mut data: Vec<u8> = (0..10)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect();
    data.extend_from_slice(b"\\.\n");
    // 20 MiB without a newline: one line past the 16 MiB limit, were it read.
    data.extend(std::iter::repeat_n(b'x', 20 << 20));
    let n = copy(&c, "COPY em FROM STDIN", &data).await.unwrap();
    assert_eq!(n, 10);
    assert_eq!(
        common::rows(&c, "SELECT count(*), sum(i) FROM em").await,
        vec![vec!["10".to_string(), "45".to_string()]]
    );
}

/// A large COPY parses each 1 MiB chunk of plain lines on other threads while the next
/// chunk arrives. A bad row deep in a later chunk (an integer out of range, invalid UTF-8,
/// a missing field, a stray CR) is still reported with its SQLSTATE and its exact line,
/// nothing of the COPY is kept, and the same data without the fault is stored whole, in
/// order.
#[tokio::test]
async fn a_bad_row_in_a_later_chunk_of_a_large_copy_names_its_line() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute(
        "CREATE STREAM lc (ts timestamp TIMESTAMPCOLUMN, i integer, o text); \
         CREATE TABLE lt (ts timestamp, i integer, o text)",
    )
    .await
    .unwrap();
    let n = 150_000usize;
    let line = |i: usize| {
        format!(
            "2001-01-01 {:02}:{:02}:{:02},{i},o{}\n",
            i / 3600 % 24,
            i / 60 % 60,
            i % 60,
            i % 97
        )
    };
    let good: String = (0..n).map(line).collect();
    assert!(good.len() > 4 << 20, "several chunks");
    let bad_at = 123_457; // 0-based row; PostgreSQL's line number is one more
    let replace = |with: &[u8]| {
        let from = good.find(&line(bad_at)).unwrap();
        let mut data = good.as_bytes()[..from].to_vec();
        data.extend_from_slice(with);
        data.extend_from_slice(&good.as_bytes()[from + line(bad_at).len()..]);
        data
    };
    for (what, data, state) in [
        (
            "out of range",
            replace(b"2001-01-01 00:00:01,2147483648,x\n"),
            "22003",
        ),
        (
            "invalid UTF-8",
            replace(b"2001-01-01 00:00:01,1,\xff\n"),
            "22021",
        ),
        (
            "a field missing",
            replace(b"2001-01-01 00:00:01,1\n"),
            "22P04",
        ),
        (
            "a stray CR",
            replace(b"2001-01-01 00:00:01,1,a\rb\n"),
            "22P04",
        ),
    ] {
        for rel in ["lc", "lt"] {
            let sql = format!("COPY {rel} FROM STDIN WITH (FORMAT csv)");
            let err = copy(&c, &sql, &data).await.expect_err(what);
            let db = err.as_db_error().expect("a server error");
            let msg = common::message_and_context(db);
            assert_eq!(common::sqlstate(&err), state, "{what} into {rel}: {msg}");
            assert!(
                msg.contains(&format!("COPY {rel}, line {}", bad_at + 1)),
                "{what} into {rel}: {msg}"
            );
        }
    }
    let kept = common::rows(&c, "SELECT tuples FROM tcq_streams WHERE name = 'lc'").await;
    assert_eq!(
        kept,
        vec![vec!["0".to_string()]],
        "nothing of a failed COPY"
    );
    for rel in ["lc", "lt"] {
        let sql = format!("COPY {rel} FROM STDIN WITH (FORMAT csv)");
        assert_eq!(copy(&c, &sql, good.as_bytes()).await.unwrap(), n as u64);
    }
    // Every row of the table, in the order sent.
    let rows = common::rows(&c, "SELECT i FROM lt").await;
    let order: Vec<usize> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(order, (0..n).collect::<Vec<_>>());
}
