//! Session state that drivers rely on, over a real socket with tokio-postgres: savepoints,
//! advisory locks, LISTEN / NOTIFY between sessions, DISCARD ALL, and functions called with
//! bound parameters. The Python drivers' own APIs for the same are in clients_python.rs.

use crate::common;

use std::time::Duration;

use common::{conn_string, connect, sqlstate, start_server};
use futures::StreamExt;
use tokio_postgres::{AsyncMessage, Client, NoTls, SimpleQueryMessage};

/// Every test gives up after this long instead of hanging.
const LIMIT: Duration = Duration::from_secs(30);

/// The first column of every row a simple query returned.
async fn column(client: &Client, sql: &str) -> Vec<Option<String>> {
    client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_string)),
            _ => None,
        })
        .collect()
}

/// A connection whose notifications arrive on the returned receiver.
async fn listener(
    port: u16,
) -> (
    Client,
    tokio::sync::mpsc::UnboundedReceiver<(String, String, i32)>,
) {
    let (client, mut connection) = tokio_postgres::connect(&conn_string(port), NoTls)
        .await
        .expect("connect");
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(m)) = messages.next().await {
            if let AsyncMessage::Notification(n) = m {
                let _ = tx.send((
                    n.channel().to_string(),
                    n.payload().to_string(),
                    n.process_id(),
                ));
            }
        }
    });
    (client, rx)
}

async fn pid(client: &Client) -> i32 {
    client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn notify_reaches_an_idle_listener_and_waits_for_commit() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let (a, mut inbox) = listener(port).await;
        let b = connect(port).await;
        let b_pid = pid(&b).await;
        a.batch_execute("LISTEN jobs; LISTEN \"Other\"")
            .await
            .unwrap();
        // Delivered while `a` is idle: it sends nothing after LISTEN.
        b.batch_execute("NOTIFY jobs, 'one'").await.unwrap();
        assert_eq!(
            inbox.recv().await.unwrap(),
            ("jobs".to_string(), "one".to_string(), b_pid)
        );
        // Inside a transaction: nothing until COMMIT, repeats folded, ROLLBACK sends nothing.
        b.batch_execute(
            "BEGIN; NOTIFY jobs, 'two'; NOTIFY jobs, 'two'; SELECT pg_notify('Other', 'three')",
        )
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(inbox.try_recv().is_err(), "delivered before COMMIT");
        b.batch_execute("COMMIT").await.unwrap();
        assert_eq!(inbox.recv().await.unwrap().1, "two");
        assert_eq!(
            inbox.recv().await.unwrap(),
            ("Other".into(), "three".into(), b_pid)
        );
        b.batch_execute("BEGIN; NOTIFY jobs, 'lost'; ROLLBACK")
            .await
            .unwrap();
        // A listener's own notifications come back to it; a bound parameter as payload.
        a.execute("SELECT pg_notify('jobs', $1)", &[&"mine"])
            .await
            .unwrap();
        let (_, payload, from) = inbox.recv().await.unwrap();
        assert_eq!((payload.as_str(), from), ("mine", pid(&a).await));
        a.batch_execute("UNLISTEN *").await.unwrap();
        b.batch_execute("NOTIFY jobs, 'after unlisten'")
            .await
            .unwrap();
        a.batch_execute("SELECT 1").await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(inbox.try_recv().is_err(), "delivered after UNLISTEN *");
        let long = "x".repeat(8000);
        let e = b
            .execute("SELECT pg_notify('jobs', $1)", &[&long])
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "22023");
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn savepoints_close_later_cursors_and_recover_a_failed_block() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        c.batch_execute("CREATE STREAM sp (ts timestamp TIMESTAMPCOLUMN, v integer)")
            .await
            .unwrap();
        let e = c.batch_execute("SAVEPOINT a").await.unwrap_err();
        assert_eq!(sqlstate(&e), "25P01");
        c.batch_execute(
            "BEGIN; DECLARE early CURSOR FOR SELECT v FROM sp; SAVEPOINT a; \
             DECLARE late CURSOR FOR SELECT v FROM sp; \
             INSERT INTO sp VALUES ('2001-01-01 00:00:00', 1)",
        )
        .await
        .unwrap();
        let e = c.batch_execute("SELECT nope FROM sp").await.unwrap_err();
        assert_eq!(sqlstate(&e), "42703");
        let e = c.batch_execute("SELECT 1").await.unwrap_err();
        assert_eq!(sqlstate(&e), "25P02");
        c.batch_execute("ROLLBACK TO SAVEPOINT a").await.unwrap();
        // The block works again; the cursor declared after the savepoint is gone, the one
        // before it stays, and the tuple inserted after the savepoint was not taken back.
        assert_eq!(
            column(&c, "FETCH 1 FROM early").await,
            vec![Some("1".into())]
        );
        let e = c.batch_execute("FETCH 1 FROM late").await.unwrap_err();
        assert_eq!(sqlstate(&e), "34000");
        c.batch_execute("ROLLBACK").await.unwrap();
        let e = c
            .batch_execute("BEGIN; RELEASE SAVEPOINT nope")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "3B001");
        c.batch_execute("ROLLBACK").await.unwrap();
        c.batch_execute("BEGIN; SAVEPOINT x; SAVEPOINT y; RELEASE x")
            .await
            .unwrap();
        let e = c.batch_execute("ROLLBACK TO y").await.unwrap_err();
        assert_eq!(sqlstate(&e), "3B001", "RELEASE x also released y");
        c.batch_execute("ROLLBACK").await.unwrap();
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn advisory_locks_between_sessions() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let a = connect(port).await;
        let b = connect(port).await;
        let got = |rows: Vec<Option<String>>| rows[0].clone().unwrap();
        assert_eq!(got(column(&a, "SELECT pg_try_advisory_lock(7)").await), "t");
        assert_eq!(got(column(&b, "SELECT pg_try_advisory_lock(7)").await), "f");
        assert_eq!(
            got(column(&b, "SELECT pg_try_advisory_lock(0, 7)").await),
            "t"
        );
        // b waits for the lock; a's release lets it through.
        let waiter = tokio::spawn(async move {
            b.execute("SELECT pg_advisory_lock($1)", &[&7i64])
                .await
                .unwrap();
            b
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!waiter.is_finished(), "b took a lock a holds");
        assert_eq!(got(column(&a, "SELECT pg_advisory_unlock(7)").await), "t");
        let b = waiter.await.unwrap();
        assert_eq!(got(column(&a, "SELECT pg_try_advisory_lock(7)").await), "f");
        assert_eq!(got(column(&a, "SELECT pg_advisory_unlock(7)").await), "f");
        // Transaction-level locks end with the transaction; pg_advisory_unlock_all and
        // DISCARD ALL release session-level ones.
        b.batch_execute("SELECT pg_advisory_unlock_all()")
            .await
            .unwrap();
        a.batch_execute("BEGIN; SELECT pg_advisory_xact_lock(9)")
            .await
            .unwrap();
        assert_eq!(got(column(&b, "SELECT pg_try_advisory_lock(9)").await), "f");
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(got(column(&b, "SELECT pg_try_advisory_lock(9)").await), "t");
        let e = b.batch_execute("BEGIN; DISCARD ALL").await.unwrap_err();
        assert_eq!(sqlstate(&e), "25001");
        b.batch_execute("ROLLBACK; DISCARD ALL").await.unwrap();
        assert_eq!(got(column(&a, "SELECT pg_try_advisory_lock(9)").await), "t");
        // A session that ends releases its locks.
        drop(a);
        let c = connect(port).await;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while got(column(&c, "SELECT pg_try_advisory_lock(9)").await) != "t" {
            assert!(
                std::time::Instant::now() < deadline,
                "lock outlived its session"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn functions_take_bound_parameters() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        c.batch_execute("CREATE STREAM adv (ts timestamp TIMESTAMPCOLUMN, v integer)")
            .await
            .unwrap();
        // Both arguments bound as text, as psycopg binds Python strings.
        let row = c
            .query_one(
                "SELECT tcq_advance($1, $2)",
                &[&"adv", &"2001-01-01 00:00:05"],
            )
            .await
            .unwrap();
        let t: std::time::SystemTime = row.get(0);
        let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        assert_eq!(secs, 978_307_205, "2001-01-01 00:00:05 UTC");
        let e = c
            .query_one("SELECT tcq_advance($1, $2)", &[&"nope", &"2001-01-01"])
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "42P01");
        let e = c
            .query_one("SELECT tcq_advance($1, $2)", &[&"adv", &"not a time"])
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "22007");
        let locked: bool = c
            .query_one(
                "SELECT pg_try_advisory_lock($1, $2) AS got",
                &[&1i32, &2i32],
            )
            .await
            .unwrap()
            .get("got");
        assert!(locked);
    })
    .await
    .expect("test timed out");
}

/// `FETCH n FROM c WITH (timeout = ..)` (Materialize's syntax) returns what arrived within
/// the timeout instead of waiting for n rows, so a polling client never blocks for ever.
#[tokio::test]
async fn fetch_with_timeout_returns_what_arrived() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        let feeder = connect(port).await;
        c.batch_execute(
            "CREATE STREAM ft (ts timestamp TIMESTAMPCOLUMN, k text); BEGIN; \
             DECLARE c CURSOR FOR SELECT k, count(*) FROM ft \
             [RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k ORDER BY k",
        )
        .await
        .unwrap();
        common::wait_for_queries(&feeder, 1).await;
        assert_eq!(
            column(&c, "FETCH 10 FROM c WITH (timeout = 0)").await,
            Vec::<Option<String>>::new()
        );
        feeder
            .batch_execute(
                "INSERT INTO ft VALUES ('2001-01-01 00:00:01', 'a'), ('2001-01-01 00:00:03', 'b'), \
                 ('2001-01-01 00:00:12', 'a')",
            )
            .await
            .unwrap();
        let started = std::time::Instant::now();
        assert_eq!(
            column(&c, "FETCH 10 FROM c WITH (timeout = '300 milliseconds')").await,
            vec![Some("a".into()), Some("b".into())]
        );
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "returned before the timeout"
        );
        // Rows that arrive within the timeout are returned as soon as the count is reached.
        let fetch = tokio::spawn(async move {
            let rows = column(&c, "FETCH 1 FROM c WITH (timeout = '20s')").await;
            (rows, c)
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        feeder
            .batch_execute("INSERT INTO ft VALUES ('2001-01-01 00:00:25', 'z')")
            .await
            .unwrap();
        let (rows, c) = fetch.await.unwrap();
        assert_eq!(rows, vec![Some("a".into())]);
        let e = c
            .batch_execute("FETCH 1 FROM c WITH (timeout = '1 month')")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "22023");
    })
    .await
    .expect("test timed out");
}

/// `pg_stat_activity` lists sessions (state, query) and tcq's continuous queries;
/// `pg_cancel_backend` cancels another session's statement (57014) and
/// `pg_terminate_backend` ends its connection.
#[tokio::test]
async fn stat_activity_cancel_and_terminate_backends() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let admin = connect(port).await;
        let reader = connect(port).await;
        let idle = connect(port).await;
        admin
            .batch_execute("CREATE STREAM act (ts timestamp TIMESTAMPCOLUMN, v integer)")
            .await
            .unwrap();
        let reader_pid = pid(&reader).await;
        let idle_pid = pid(&idle).await;
        idle.batch_execute("BEGIN").await.unwrap();
        let query = "SELECT v FROM act";
        let streaming = tokio::spawn(async move { reader.simple_query(query).await });
        common::wait_for_queries(&admin, 1).await;
        let rows = admin
            .query(
                "SELECT pid, state, query, backend_type FROM pg_stat_activity",
                &[],
            )
            .await
            .unwrap();
        let seen: Vec<(Option<i32>, String, String, String)> = rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect();
        assert!(
            seen.contains(&(
                Some(reader_pid),
                "active".into(),
                query.into(),
                "client backend".into()
            )),
            "{seen:?}"
        );
        assert!(
            seen.contains(&(
                Some(idle_pid),
                "idle in transaction".into(),
                "BEGIN".into(),
                "client backend".into()
            )),
            "{seen:?}"
        );
        assert!(
            seen.contains(&(
                Some(reader_pid),
                "active".into(),
                query.into(),
                "tcq continuous query".into()
            )),
            "{seen:?}"
        );
        let cancelled: bool = admin
            .query_one("SELECT pg_cancel_backend($1)", &[&reader_pid])
            .await
            .unwrap()
            .get(0);
        assert!(cancelled);
        let e = streaming.await.unwrap().unwrap_err();
        assert_eq!(sqlstate(&e), "57014");
        let terminated: bool = admin
            .query_one("SELECT pg_terminate_backend($1)", &[&idle_pid])
            .await
            .unwrap()
            .get(0);
        assert!(terminated);
        // PostgreSQL's FATAL arrives before the connection closes.
        let e = idle.batch_execute("SELECT 1").await.unwrap_err();
        assert!(
            e.is_closed() || e.code().is_some_and(|c| c.code() == "57P01"),
            "{e:?}"
        );
        let none: bool = admin
            .query_one("SELECT pg_cancel_backend(999999)", &[])
            .await
            .unwrap()
            .get(0);
        assert!(!none);
        // The terminated session leaves the list.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let n: i64 = admin
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
                    &[&idle_pid],
                )
                .await
                .unwrap()
                .get(0);
            if n == 0 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "terminated session still listed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("test timed out");
}

/// Session state is bounded: a session holds at most 10,000 advisory locks, and a
/// transaction queues at most 10,000 NOTIFYs (54000 past either); the session goes on.
#[tokio::test]
async fn advisory_locks_and_queued_notifications_are_bounded() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        let locks: String = (0..10_000)
            .map(|k| format!("SELECT pg_try_advisory_lock({k});"))
            .collect();
        c.batch_execute(&locks).await.unwrap();
        let e = c
            .batch_execute("SELECT pg_try_advisory_lock(-1)")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "54000");
        // Taking one already held again is counted on its key, not as a new lock.
        assert_eq!(
            column(&c, "SELECT pg_try_advisory_lock(7)").await,
            vec![Some("t".into())]
        );
        c.batch_execute("SELECT pg_advisory_unlock_all()")
            .await
            .unwrap();
        let notifies: String = (0..10_000).map(|i| format!("NOTIFY n, '{i}';")).collect();
        c.batch_execute(&format!("BEGIN; {notifies}"))
            .await
            .unwrap();
        let e = c.batch_execute("NOTIFY n, 'one more'").await.unwrap_err();
        assert_eq!(sqlstate(&e), "54000");
        c.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(
            column(&c, "SELECT pg_try_advisory_lock(-1)").await,
            vec![Some("t".into())]
        );
    })
    .await
    .expect("test timed out");
}

/// A COPY FROM STDIN is one statement under `statement_timeout`, as in PostgreSQL: the
/// time the client spends sending its data counts. Before, the timer only started at
/// CopyDone, so a COPY whose data trickled in for longer than the timeout succeeded. Now
/// the COPY fails with 57014, none of its rows is kept (in a table, nor seen by a
/// continuous query over a stream), and the session and the server go on.
#[tokio::test]
async fn copy_from_past_statement_timeout_fails_whole() {
    use futures::SinkExt;
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        c.batch_execute(
            "CREATE TABLE kt (k integer PRIMARY KEY); \
             CREATE STREAM ks (ts timestamp TIMESTAMPCOLUMN, v integer)",
        )
        .await
        .unwrap();
        // A continuous query over the stream, registered before any COPY: it counts
        // every tuple that reaches the stream.
        let reader = connect(port).await;
        let counted = tokio::spawn(async move {
            column(
                &reader,
                "SELECT count(*) FROM ks [RANGE BY '10 seconds' START AT '2024-01-01'] LIMIT 1",
            )
            .await
        });
        let admin = connect(port).await;
        common::wait_for_queries(&admin, 1).await;
        c.batch_execute("SET statement_timeout = '300ms'")
            .await
            .unwrap();
        for (copy, first, rest) in [
            ("COPY kt FROM STDIN", "1\n2\n", "3\n"),
            (
                "COPY ks FROM STDIN",
                "2024-01-01 00:00:02\t1\n2024-01-01 00:00:03\t1\n",
                "2024-01-01 00:00:04\t1\n",
            ),
        ] {
            let sink = c.copy_in(copy).await.unwrap();
            let mut sink = Box::pin(sink);
            sink.send(bytes::Bytes::from(first)).await.unwrap();
            sink.flush().await.unwrap();
            tokio::time::sleep(Duration::from_millis(500)).await;
            let sent = sink.send(bytes::Bytes::from(rest)).await;
            let e = match sent {
                Err(e) => e,
                Ok(()) => sink.as_mut().finish().await.unwrap_err(),
            };
            assert_eq!(sqlstate(&e), "57014", "{copy}: {e}");
            let db = e.as_db_error().expect("a server error");
            assert_eq!(db.message(), "canceling statement due to statement timeout");
        }
        // The session goes on: nothing of the COPY is in the table, and a COPY within
        // the timeout works (a generous one, so that a busy machine cannot fail it).
        assert_eq!(
            column(&c, "SELECT count(*) FROM kt").await,
            vec![Some("0".to_string())]
        );
        c.batch_execute("SET statement_timeout = '30s'")
            .await
            .unwrap();
        let sink = c.copy_in("COPY kt FROM STDIN").await.unwrap();
        let mut sink = Box::pin(sink);
        sink.send(bytes::Bytes::from_static(b"4\n5\n"))
            .await
            .unwrap();
        assert_eq!(sink.as_mut().finish().await.unwrap(), 2);
        assert_eq!(
            column(&c, "SELECT k FROM kt ORDER BY k").await,
            vec![Some("4".to_string()), Some("5".to_string())]
        );
        // The stream got none of the failed COPY's tuples: the window [:00, :10) holds
        // only the tuple at :05 (the one at :15 closes it).
        admin
            .batch_execute(
                "INSERT INTO ks VALUES ('2024-01-01 00:00:05', 1); \
                 INSERT INTO ks VALUES ('2024-01-01 00:00:15', 1)",
            )
            .await
            .unwrap();
        assert_eq!(counted.await.unwrap(), vec![Some("1".to_string())]);
    })
    .await
    .expect("the test timed out");
}

/// `statement_timeout` was recorded and ignored; it now cancels a statement that runs
/// longer, as PostgreSQL does, with 57014 and PostgreSQL's message: a continuous query (by
/// simple query and by the extended protocol), a COPY TO STDOUT of one, and a FETCH that
/// waits for rows. SET/SHOW round-trip its value; a malformed value is 22023; 0 turns it
/// off.
#[tokio::test]
async fn statement_timeout_cancels_long_statements() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        c.batch_execute(
            "CREATE STREAM st (ts timestamp TIMESTAMPCOLUMN, v integer); \
             SET statement_timeout = '150ms'",
        )
        .await
        .unwrap();
        assert_eq!(
            column(&c, "SHOW statement_timeout").await,
            vec![Some("150ms".to_string())]
        );
        let timed_out = |e: tokio_postgres::Error| {
            assert_eq!(sqlstate(&e), "57014", "{e}");
            let db = e.as_db_error().expect("a server error");
            assert_eq!(db.message(), "canceling statement due to statement timeout");
        };
        timed_out(c.simple_query("SELECT v FROM st").await.unwrap_err());
        timed_out(c.query("SELECT v FROM st", &[]).await.unwrap_err());
        let copy = c.copy_out("COPY (SELECT v FROM st) TO STDOUT").await;
        match copy {
            Err(e) => timed_out(e),
            Ok(stream) => {
                futures::pin_mut!(stream);
                let mut last = None;
                while let Some(item) = stream.next().await {
                    if let Err(e) = item {
                        last = Some(e);
                        break;
                    }
                }
                timed_out(last.expect("the COPY ends with an error"));
            }
        }
        c.batch_execute("BEGIN; DECLARE cur CURSOR FOR SELECT v FROM st")
            .await
            .unwrap();
        timed_out(c.simple_query("FETCH 1 FROM cur").await.unwrap_err());
        c.batch_execute("ROLLBACK").await.unwrap();
        // Statements that finish in time are untouched.
        assert_eq!(column(&c, "SELECT 1").await, vec![Some("1".to_string())]);
        let e = c
            .batch_execute("SET statement_timeout = 'soon'")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "22023", "{e}");
        c.batch_execute("SET statement_timeout = '1min'")
            .await
            .unwrap();
        assert_eq!(
            column(&c, "SHOW statement_timeout").await,
            vec![Some("1min".to_string())]
        );
        c.batch_execute("SET statement_timeout = 0").await.unwrap();
        let reader = tokio::spawn(async move {
            let r = c.simple_query("SELECT v FROM st LIMIT 1").await;
            (c, r)
        });
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(
            !reader.is_finished(),
            "without a timeout the query waits for rows"
        );
        let feeder = connect(port).await;
        feeder
            .batch_execute("INSERT INTO st VALUES ('2024-01-01 00:00:01', 7)")
            .await
            .unwrap();
        let (_, r) = reader.await.unwrap();
        assert!(r.is_ok(), "{r:?}");
    })
    .await
    .expect("the test timed out");
}

/// A tester's report: `SELECT pg_cancel_backend(pg_backend_pid())` answered `t`; in
/// PostgreSQL the signal cancels the calling statement itself (57014). The session's next
/// statement is not cancelled by it.
#[tokio::test]
async fn cancelling_ones_own_backend_cancels_the_calling_statement() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        for sql in [
            "SELECT pg_cancel_backend(pg_backend_pid())",
            "SELECT pg_catalog.pg_cancel_backend(pg_backend_pid())",
        ] {
            let e = c.batch_execute(sql).await.unwrap_err();
            assert_eq!(sqlstate(&e), "57014", "{sql}");
            assert_eq!(
                e.as_db_error().unwrap().message(),
                "canceling statement due to user request"
            );
        }
        let one: i32 = c.query_one("SELECT 1", &[]).await.unwrap().get(0);
        assert_eq!(one, 1);
    })
    .await
    .expect("timed out");
}
