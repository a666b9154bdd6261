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

mod common;

use std::path::Path;

#[test]
fn psql_scripts_give_their_expected_output() {
    if let Some(reason) = common::psql::psql_missing() {
        eprintln!("SKIPPED: {reason}");
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
