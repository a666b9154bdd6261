//! The Python clients in clients/ against a real in-process server: psycopg 3 (executemany,
//! `cursor.stream()`) and asyncpg (COPY via copy_to_table, executemany, portal cursors).
//! Each prints its rows; the test asserts them exactly. Skipped, with a message, when
//! python3 or the driver module is missing (.ci/run installs both, so CI runs them).

mod common;

use std::path::Path;
use std::process::Command;

/// Rows of `GROUP BY origin ORDER BY origin LIMIT 4` over 1-hour tumbling windows of the six
/// flights both clients send: [00:00, 01:00) holds ATL 5, 25 and ORD 15; [01:00, 02:00)
/// holds ORD -3 and ATL 7; the SFO flight at 02:00 closes the second window.
const EXPECTED: &str = "\
row: ATL 2 25 2001-01-01 01:00:00
row: ORD 1 15 2001-01-01 01:00:00
row: ATL 1 7 2001-01-01 02:00:00
row: ORD 1 -3 2001-01-01 02:00:00
done
";

fn python_has(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run_client(script: &str, module: &str) {
    if !python_has(module) {
        eprintln!("SKIPPED: python3 with the `{module}` module is not available (pip install it)");
        return;
    }
    let port = common::start_server();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("clients")
        .join(script);
    let output = Command::new("python3")
        .arg(&path)
        .args(["--port", &port.to_string()])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{script} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert_eq!(
        stdout, EXPECTED,
        "{script} printed other rows\nstderr:\n{stderr}"
    );
}

#[test]
fn psycopg_streams_a_continuous_query() {
    run_client("python_psycopg.py", "psycopg");
}

#[test]
fn asyncpg_reads_a_continuous_query_through_a_cursor() {
    run_client("python_asyncpg.py", "asyncpg");
}

/// psycopg named cursors (SQL DECLARE described as a protocol portal) and DEALLOCATE ALL:
/// both failed before (34000 and 0A000), found by trying tcq as a new user would.
#[test]
fn psycopg_named_cursor_and_deallocate() {
    if !python_has("psycopg") {
        eprintln!("SKIPPED: python3 with the `psycopg` module is not available (pip install it)");
        return;
    }
    let port = common::start_server();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/named_cursor.py");
    let output = Command::new("python3")
        .arg(&path)
        .args(["--port", &port.to_string()])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout,
        "columns: ['v', 'wtime']\nrows: [(7, datetime.datetime(2001, 1, 1, 0, 0, 1))]\n"
    );
}

/// psycopg's `copy.rows()` and `copy.read_row()` over `COPY (SELECT ...) TO STDOUT`: each
/// expects one row per CopyData message. When tcq packed a slide event's rows into one
/// message, `b` (and every other second row) vanished without an error.
#[test]
fn psycopg_copy_rows_reads_every_row() {
    if !python_has("psycopg") {
        eprintln!("SKIPPED: python3 with the `psycopg` module is not available (pip install it)");
        return;
    }
    let port = common::start_server();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/copy_rows.py");
    let output = Command::new("python3")
        .arg(&path)
        .args(["--port", &port.to_string()])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout,
        "rows(): a 2 2001-01-01 00:00:10\n\
         rows(): b 1 2001-01-01 00:00:10\n\
         rows(): a 1 2001-01-01 00:00:20\n\
         read_row(): ('x', '1', '2001-01-01 00:00:40')\n\
         read_row(): ('y', '1', '2001-01-01 00:00:40')\n\
         read_row(): ('z', '1', '2001-01-01 00:00:50')\n\
         read_row(): ('z', '1', '2001-01-01 00:01:00')\n"
    );
}

/// Savepoints (psycopg nested `transaction()`), LISTEN/NOTIFY through psycopg `notifies()`
/// and asyncpg `add_listener()`, bound parameters for tcq_advance, and asyncpg's pool reset
/// (`pg_advisory_unlock_all()` and `UNLISTEN *` failed with 0A000 before).
#[test]
fn session_state_through_driver_apis() {
    if !python_has("psycopg") || !python_has("asyncpg") {
        eprintln!(
            "SKIPPED: python3 with `psycopg` and `asyncpg` is not available (pip install them)"
        );
        return;
    }
    let port = common::start_server();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/session_state.py");
    let output = Command::new("python3")
        .arg(&path)
        .args(["--port", &port.to_string()])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout,
        "notify: jobs hello True\n\
         notify: jobs bound True\n\
         inner: 42703\n\
         outer continues: 1\n\
         after: IDLE\n\
         advance: 2001-01-01 00:00:05\n\
         tz: America/New_York 2021-03-14T03:00:00-04:00\n\
         lock: True\n\
         free after release: True\n\
         pool reused: 2\n\
         listener: x1\n"
    );
}
