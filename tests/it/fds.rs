//! Each connection costs the server one file descriptor (issue 11: it used to cost two, a
//! duplicate being kept to notice the peer closing). The server is a `tcqd` process of its
//! own, so the descriptors other tests open in this binary do not count.

use crate::common;
use crate::common::tcqd::Tcqd;

/// The descriptors `tcqd` holds open.
fn open_fds(server: &Tcqd) -> usize {
    std::fs::read_dir(format!("/proc/{}/fd", server.child.id()))
        .expect("/proc/PID/fd")
        .count()
}

#[tokio::test]
async fn one_descriptor_per_connection() {
    let server = Tcqd::start(["--memory-only"]);
    let port = server.port;
    // Warm up: the first connection starts the server's shared machinery.
    let first = common::connect(port).await;
    first.simple_query("SELECT 1").await.unwrap();
    let before = open_fds(&server);
    let mut clients = Vec::new();
    for _ in 0..50 {
        let c = common::connect(port).await;
        c.simple_query("SELECT 1").await.unwrap();
        clients.push(c);
    }
    let after = open_fds(&server);
    // One socket per connection on the server's side.
    let added = after - before;
    assert!(
        (50..=53).contains(&added),
        "50 connections added {added} descriptors to the server, expected 50"
    );
    // A client that goes away while its query streams is still noticed.
    let (c, handle) = common::connect_with_handle(port).await;
    c.batch_execute("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let stream = tokio::spawn(async move {
        let _ = c.query_raw("SELECT v FROM s", Vec::<i32>::new()).await;
        futures::future::pending::<()>().await;
    });
    common::wait_for_queries(&first, 1).await;
    handle.abort();
    stream.abort();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let rows = first
            .simple_query("SELECT id FROM tcq_queries")
            .await
            .unwrap();
        let n = rows
            .iter()
            .filter(|m| matches!(m, tokio_postgres::SimpleQueryMessage::Row(_)))
            .count();
        if n == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the vanished client's query still runs"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    drop(clients);
}
