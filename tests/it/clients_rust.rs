//! The Rust client in clients/rust_tokio_postgres.rs against a real in-process server,
//! through tokio-postgres's own APIs: binary COPY in (`BinaryCopyInWriter`) and out
//! (`BinaryCopyOutStream`), a parameterised INSERT, `query_raw`, row-limited portals and
//! `cancel_token`, and introspection by tokio-postgres's type lookup query. The program's `lines` runs here as a module; `cargo run --example
//! tokio_postgres_client` runs the same code against a server of your own.

use crate::common;

#[path = "../../clients/rust_tokio_postgres.rs"]
mod client;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_postgres_ingests_and_streams_by_every_api() {
    let port = common::start_server();
    let lines = tokio::time::timeout(std::time::Duration::from_secs(60), client::lines(port))
        .await
        .expect("the client timed out")
        .expect("the client failed");
    // The window ending at :10 holds a (tuples at :01 and :05, sum 4) and b (:03, 2); the
    // one ending at :20 holds a (:12, 10); the tuple at :25 closes it.
    let mut expected = Vec::new();
    for api in ["query_raw", "portal", "binary_copy"] {
        expected.push(format!("{api}: a 2 4 2001-01-01 00:00:10"));
        expected.push(format!("{api}: b 1 2 2001-01-01 00:00:10"));
        expected.push(format!("{api}: a 1 10 2001-01-01 00:00:20"));
    }
    expected.push("cancel: 57014".into());
    expected.push("typeinfo 23: int4 b elem 0 range None pg_catalog".into());
    expected.push("typeinfo 1007: _int4 b elem 23 range None pg_catalog".into());
    expected.push("columns: ts timestamp without time zone, k text, v integer".into());
    expected.push("done".into());
    assert_eq!(lines, expected);
}
