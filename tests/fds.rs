//! Each connection costs the server one file descriptor (issue 11: it used to cost two, a
//! duplicate being kept to notice the peer closing). Alone in its binary, so no other test
//! opens descriptors while this one counts them.

mod common;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .count()
}

#[tokio::test]
async fn one_descriptor_per_connection() {
    let port = common::start_server();
    // Warm up: the first connection starts the server's shared machinery.
    let first = common::connect(port).await;
    first.simple_query("SELECT 1").await.unwrap();
    let before = open_fds();
    let mut clients = Vec::new();
    for _ in 0..50 {
        let c = common::connect(port).await;
        c.simple_query("SELECT 1").await.unwrap();
        clients.push(c);
    }
    let after = open_fds();
    // Client and server share this process: 50 client sockets and 50 server sockets.
    let added = after - before;
    assert!(
        (100..=105).contains(&added),
        "50 connections added {added} descriptors (client and server side), expected 100"
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
