//! psql regression tests, as PostgreSQL's pg_regress runs them: every `sql/psql/NAME.sql`
//! goes through the real `psql` 15 against a fresh in-process server, and what psql prints
//! is compared exactly with `sql/psql/expected/NAME.out`.
//!
//! ```text
//! cargo test --test psql_regress                          # run every script
//! TCQ_REGRESS_ONLY=cursors cargo test --test psql_regress # scripts whose name contains "cursors"
//! TCQ_REGRESS_BLESS=1 cargo test --test psql_regress      # rewrite the expected files
//! ```
//!
//! (The same variables and comparison as `tests/regress.rs`, whose scripts under `sql/`
//! run through tokio-postgres: both use `tests/common/golden.rs`, and the psql runner is
//! `tests/common/psql.rs`. These run through psql, so they pin what a psql user sees:
//! aligned tables, `\d` and the other describe commands (`catalog.sql`), `LINE 1:`
//! carets, HINTs, `\conninfo`, `\copy`, `\set FETCH_COUNT`.)
//!
//! Each script runs as `psql -X -a -q < NAME.sql > NAME.out 2>&1` does in pg_regress: the
//! input is echoed, command tags are not printed, and errors land in the output where they
//! happen. The connection comes from PGHOST, PGPORT, PGUSER (`regress`) and PGDATABASE
//! (`regress`); other PG* variables of the caller's environment are removed so the output
//! does not depend on them. The server's port, which changes from run to run, is written
//! `<port>` in the output. A script that reads a continuous query starts a feeder in the
//! background with `\! sh sql/psql/feed.sh N psql-args &` (see that file): it waits until N
//! queries are registered, then sends its tuples. A script that does not finish within
//! 60 s is killed, which the output says. On a mismatch the test prints expected and actual
//! side by side and leaves the actual output in `target/tmp/psql_regress/NAME.out`.
//!
//! Skipped, with a message, when psql is missing or is not version 15 (other versions
//! format some output differently); .ci/run installs Debian's psql 15.

use crate::common;

use std::path::Path;

#[test]
fn psql_scripts_give_their_expected_output() {
    if let Some(reason) = common::psql::psql_missing() {
        common::skip(&reason);
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let actual_dir = common::golden::actual_dir("psql_regress");
    let mut outputs = Vec::new();
    for script in common::golden::scripts(&root.join("sql/psql")) {
        let name = script.file_stem().unwrap().to_string_lossy().into_owned();
        let actual_path = actual_dir.join(format!("{name}.out"));
        outputs.push((name, common::psql::run_script(root, &script, &actual_path)));
    }
    common::golden::check("psql_regress", &root.join("sql/psql/expected"), &outputs);
}

/// psql's Ctrl-C: a SIGINT while a continuous query runs makes psql send a CancelRequest,
/// as it does against PostgreSQL; psql prints `Cancel request sent` and the 57014 error,
/// exits with status 1, and the server goes on (the query is gone from tcq_queries). The
/// client matrix's psql "cancel" cell claimed this without a test.
#[test]
fn psql_ctrl_c_cancels_a_running_continuous_query() {
    if let Some(reason) = common::psql::psql_missing() {
        common::skip(&reason);
        return;
    }
    let port = common::start_server();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let admin = runtime.block_on(async {
        let c = common::connect(port).await;
        common::exec(
            &c,
            "CREATE STREAM ticks (ts timestamp TIMESTAMPCOLUMN, v integer)",
        )
        .await;
        c
    });
    let child = common::psql::command(port)
        .args(["-X", "-c", "SELECT v FROM ticks"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run psql");
    runtime.block_on(common::wait_for_queries(&admin, 1));
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(sent, 0, "kill -INT psql");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let output = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("psql did not end within 30 s of Ctrl-C")
        .expect("psql's output");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "Cancel request sent\nERROR:  canceling statement due to user request\n"
    );
    assert_eq!(output.status.code(), Some(1));
    // The cancelled query is unregistered (as its connection's state is dropped, which
    // may trail psql's exit by a moment) and the server answers.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let queries = runtime.block_on(common::rows(&admin, "SELECT count(*) FROM tcq_queries"));
        if queries == common::table(&[&["0"]]) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still registered after 10 s: {queries:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
