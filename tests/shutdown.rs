//! SIGTERM shuts `tcqd` down gracefully (issue 11): an idle client, a streaming query and a
//! COPY in flight each get FATAL 57P01, and the process exits 0.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio_postgres::NoTls;

#[tokio::test]
async fn sigterm_ends_every_client_with_57p01_and_exits_0() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args(["--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tcqd");
    let stderr = child.stderr.take().unwrap();
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let (false, Some(addr)) = (sent, line.split("tcq listening on ").nth(1)) {
                let port: u16 = addr.trim().rsplit(':').next().unwrap().parse().unwrap();
                port_tx.send(port).unwrap();
                sent = true;
            }
        }
    });
    let port = port_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("tcqd reports its address");
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
    let (copying, _copying_conn) = connect().await;
    let sink = copying.copy_in("COPY s FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    sink.send(Bytes::from_static(b"1\n2\n")).await.unwrap();
    sink.flush().await.unwrap();
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
    let err = tokio::time::timeout(Duration::from_secs(10), sink.finish())
        .await
        .expect("the COPY ends")
        .unwrap_err();
    assert_eq!(common::sqlstate(&err), "57P01");
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0), "tcqd exits 0 after SIGTERM");
}
