//! The Node.js client in clients/node/ against a real in-process server, through
//! node-postgres's own APIs: COPY FROM STDIN and COPY TO STDOUT with pg-copy-streams, a
//! parameterised INSERT, pg-cursor, pg-query-stream, a CancelRequest, a catalog query
//! with a parameter and one whose arrays and oid node-postgres parses by their types.
//! Skipped, with a message, when node or the npm packages are missing (.ci/run installs
//! them with `npm ci --prefix clients/node`).

use crate::common;

use std::path::Path;
use std::process::Command;

#[test]
fn node_postgres_ingests_and_streams_by_every_api() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/node");
    if Command::new("node").arg("--version").output().is_err() {
        common::skip("node is not installed");
        return;
    }
    if !dir.join("node_modules/pg-copy-streams").exists() {
        common::skip("the npm packages are missing: run `npm ci --prefix clients/node`");
        return;
    }
    let port = common::start_server();
    let output = Command::new("node")
        .arg(dir.join("node_pg.js"))
        .arg(port.to_string())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "node_pg.js failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    // The window ending at :10 holds a (tuples at :01 and :05, sum 4) and b (:03, 2); the
    // one ending at :20 holds a (:12, 10); the tuple at :25 closes it.
    let rows = |api: &str| {
        format!(
            "{api}: a 2 4 2001-01-01 00:00:10\n{api}: b 1 2 2001-01-01 00:00:10\n{api}: a 1 10 2001-01-01 00:00:20\n"
        )
    };
    let expected = ["cursor", "query_stream", "copy_to"].map(rows).concat()
        + "cancel: 57014\n"
        + "catalog: public node_cancel timestamp without time zone\n"
        + "catalog: public node_copy_to timestamp without time zone\n"
        + "catalog: public node_cursor timestamp without time zone\n"
        + "catalog: public node_query_stream timestamp without time zone\n"
        + "arrays: [\"ts\",\"k\",\"v\"] [1,2,3] number\n"
        + "done\n";
    assert_eq!(stdout, expected, "stderr:\n{stderr}");
}
