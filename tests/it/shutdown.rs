//! SIGTERM shuts `tcqd` down gracefully (issue 11): an idle client, a streaming query and a
//! COPY in flight each get FATAL 57P01, and the process exits 0.

use crate::common;

use std::process::Command;
use std::time::Duration;

use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_postgres::NoTls;

/// A raw connection that has started `COPY s FROM STDIN` and sent two rows.
async fn raw_copy_in(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut startup = 196_608i32.to_be_bytes().to_vec();
    startup.extend_from_slice(b"user\0tcq\0\0");
    let mut m = (startup.len() as i32 + 4).to_be_bytes().to_vec();
    m.extend(startup);
    s.write_all(&m).await.unwrap();
    let query = b"COPY s FROM STDIN\0";
    let mut q = vec![b'Q'];
    q.extend_from_slice(&(query.len() as i32 + 4).to_be_bytes());
    q.extend_from_slice(query);
    s.write_all(&q).await.unwrap();
    // Read until CopyInResponse ('G').
    loop {
        let mut head = [0u8; 5];
        s.read_exact(&mut head).await.unwrap();
        let len = i32::from_be_bytes(head[1..5].try_into().unwrap()) as usize;
        let mut body = vec![0u8; len - 4];
        s.read_exact(&mut body).await.unwrap();
        if head[0] == b'G' {
            break;
        }
    }
    s.write_all(b"d\0\0\0\x081\n2\n").await.unwrap();
    s
}

/// The limits are options of `tcqd` too.
#[tokio::test]
async fn tcqd_takes_its_limits_from_the_command_line() {
    let (mut child, port) = common::spawn_tcqd(&["--max-connections", "1"]);
    let (first, conn) = tokio_postgres::connect(&common::conn_string(port), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    first.simple_query("SELECT 1").await.unwrap();
    let err = tokio_postgres::connect(&common::conn_string(port), NoTls)
        .await
        .err()
        .expect("a second connection is refused");
    assert_eq!(common::sqlstate(&err), "53300");
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn sigterm_ends_every_client_with_57p01_and_exits_0() {
    let (mut child, port) = common::spawn_tcqd(&[]);
    let connect = || async move {
        let (client, connection) = tokio_postgres::connect(&common::conn_string(port), NoTls)
            .await
            .unwrap();
        (client, tokio::spawn(connection))
    };
    let (idle, idle_conn) = connect().await;
    idle.batch_execute("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let (streaming, _streaming_conn) = connect().await;
    let rows = streaming
        .query_raw("SELECT v FROM s", Vec::<i32>::new())
        .await
        .unwrap();
    // The COPY speaks the protocol by hand, so the test sees exactly what the server sends.
    let mut copying = raw_copy_in(port).await;
    common::wait_for_queries(&idle, 1).await;

    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);

    futures::pin_mut!(rows);
    let err = tokio::time::timeout(Duration::from_secs(10), rows.next())
        .await
        .expect("the streaming query ends")
        .expect("an error, not the end of the rows")
        .unwrap_err();
    assert_eq!(common::sqlstate(&err), "57P01");
    assert_eq!(
        err.as_db_error().unwrap().message(),
        "terminating connection due to administrator command"
    );
    let err = tokio::time::timeout(Duration::from_secs(10), idle_conn)
        .await
        .expect("the idle connection ends")
        .unwrap()
        .unwrap_err();
    assert_eq!(common::sqlstate(&err), "57P01");
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), copying.read_to_end(&mut rest))
        .await
        .expect("the COPY's connection closes")
        .unwrap();
    assert_eq!(rest[0], b'E', "an ErrorResponse: {rest:?}");
    assert!(
        rest.windows(6).any(|w| w == b"C57P01"),
        "SQLSTATE 57P01 in {rest:?}"
    );
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0), "tcqd exits 0 after SIGTERM");
}

/// Without a password file, tcqd refuses to listen beyond loopback unless told --insecure.
#[test]
fn tcqd_refuses_to_listen_beyond_loopback_without_authentication() {
    let out = Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args(["--listen", "0.0.0.0:0", "--memory-only"])
        .output()
        .expect("run tcqd");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("without authentication: give --password-file, or --insecure"),
        "{stderr}"
    );
}

/// SIGTERM stops SELECTs over tables that would run for minutes (correlated subqueries in
/// correlated subqueries; a single-table sort by an md5 per row of a million): their
/// clients get 57P01 and tcqd exits 0, as with any query.
#[tokio::test]
async fn sigterm_stops_slow_table_selects_and_exits_0() {
    let (mut child, port) = common::spawn_tcqd(&[]);
    let connect = || async move {
        let (client, connection) = tokio_postgres::connect(&common::conn_string(port), NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
    };
    let admin = connect().await;
    let values: Vec<String> = (1..=1500).map(|i| format!("({i})")).collect();
    admin
        .batch_execute(&format!(
            "CREATE TABLE t (i int); INSERT INTO t VALUES {}; CREATE TABLE big (i int)",
            values.join(",")
        ))
        .await
        .unwrap();
    let data: String = (1..=1_000_000).map(|i| format!("{i}\n")).collect();
    let copied = common::copy_in(&admin, "COPY big FROM STDIN", data.as_bytes(), 1 << 16);
    assert_eq!(copied.await.unwrap(), 1_000_000);
    let slow = [
        "SELECT count(*) FROM t a WHERE (SELECT count(*) FROM t b \
         WHERE b.i < a.i + (SELECT count(*) FROM t c WHERE c.i > b.i)) > 0",
        "SELECT i FROM big ORDER BY md5(repeat(i::text, 200)) LIMIT 1",
    ];
    let mut running = Vec::new();
    for statement in slow {
        let c = connect().await;
        let pid: i32 = c
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap()
            .get(0);
        running.push(tokio::spawn(async move { c.query(statement, &[]).await }));
        // The statement's own text: the session's earlier one can still show as active.
        let active = "SELECT count(*) FROM pg_stat_activity \
            WHERE pid = $1 AND state = 'active' AND query = $2";
        while admin
            .query_one(active, &[&pid, &statement])
            .await
            .unwrap()
            .get::<_, i64>(0)
            == 0
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    for task in running {
        let err = tokio::time::timeout(Duration::from_secs(30), task)
            .await
            .expect("the slow statement ends")
            .unwrap()
            .unwrap_err();
        assert_eq!(common::sqlstate(&err), "57P01", "{err:?}");
        let message = err.as_db_error().unwrap().message();
        assert_eq!(
            message,
            "terminating connection due to administrator command"
        );
    }
    let pid = child.id() as i32;
    let status = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || child.wait()),
    )
    .await;
    let Ok(status) = status else {
        // SAFETY: as above; the child that ignored SIGTERM must not outlive the test.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        panic!("tcqd did not exit after SIGTERM");
    };
    assert_eq!(status.unwrap().unwrap().code(), Some(0));
}
