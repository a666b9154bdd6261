//! The Python clients in clients/ against a real in-process server, through each driver's
//! own API: psycopg 3 and asyncpg, every ingest path and streaming API they have, cancel,
//! and asyncpg's pool. Each prints its rows; the test asserts them exactly. Skipped, with a
//! message, when python3 or the driver module is missing (.ci/run installs both).

use crate::common;

use std::path::Path;
use std::process::Command;

/// The three rows every reader prints: the window ending at :10 holds a (tuples at :01 and
/// :05, sum 4) and b (:03, 2); the one ending at :20 holds a (:12, 10); the tuple at :25
/// closes it, and LIMIT 3 ends the query.
fn rows(api: &str) -> String {
    format!(
        "{api}: a 2 4 2001-01-01 00:00:10\n{api}: b 1 2 2001-01-01 00:00:10\n{api}: a 1 10 2001-01-01 00:00:20\n"
    )
}

fn run_client(script: &str, module: &str, expected: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("clients")
        .join(script);
    let Some(stdout) = common::run_python(&path, module) else {
        return;
    };
    assert_eq!(stdout, expected, "{script} printed other rows");
}

/// psycopg: COPY in (text and binary) and executemany; `cursor.stream()`, `copy.rows()`
/// over text and binary COPY, a named cursor; `Connection.cancel()`.
#[test]
fn psycopg_ingests_and_streams_by_every_api() {
    let expected = ["stream", "copy_text", "copy_binary", "named_cursor"]
        .map(rows)
        .concat()
        + "cancel: 57014\ndone\n";
    run_client("python_psycopg.py", "psycopg", &expected);
}

/// asyncpg: copy_records_to_table (binary COPY), copy_to_table (CSV) and executemany; a
/// cursor, copy_from_query, a pooled connection's cursor; the pool's reset; cancel by
/// timeout; introspection (set_type_codec's type lookup, a catalog query by `fetch`, typed
/// arrays and an oid decoded from binary into lists and an int; `smallint[]` has no
/// built-in asyncpg codec, so asyncpg first runs its type introspection query, which binds
/// `$1::oid[]` and calls `set_config`).
#[test]
fn asyncpg_ingests_and_streams_by_every_api() {
    let expected = ["cursor", "copy_from_query", "pool_cursor"]
        .map(rows)
        .concat()
        + "pool reused: 1\ncancel: timed out, then 1\n"
        + "codec: numeric 1.5\n"
        + "catalog: public apg_cancel timestamp without time zone\n"
        + "catalog: public apg_copy_from_query timestamp without time zone\n"
        + "catalog: public apg_cursor timestamp without time zone\n"
        + "catalog: public apg_pool_cursor timestamp without time zone\n"
        + "arrays: ['v', 'k', 'ts'] [1, 2, 3] int ['x y', None]\n"
        + "done\n";
    run_client("python_asyncpg.py", "asyncpg", &expected);
}

/// psycopg named cursors (SQL DECLARE described as a protocol portal) and DEALLOCATE ALL:
/// both failed before (34000 and 0A000), found by trying tcq as a new user would.
#[test]
fn psycopg_named_cursor_and_deallocate() {
    let Some(stdout) = psycopg_script("named_cursor.py") else {
        return;
    };
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
    if !common::python_modules(&["psycopg"], "'psycopg[binary]'") {
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
    if !common::python_modules(&["psycopg", "asyncpg"], "'psycopg[binary]' asyncpg") {
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
         terminate: True\n\
         terminated: 57P01\n\
         lock: True\n\
         free after release: True\n\
         pool reused: 2\n\
         startup tz: Asia/Tokyo 2001-01-01 09:00:00+09\n\
         startup tz refused: 22023\n\
         listener: x1\n"
    );
}

/// The catalogs through Python's introspection: psycopg's `TypeInfo.fetch` (a missing type
/// is `None`), SQLAlchemy 2's `engine.connect()` and inspector (a stream is a foreign
/// table with its columns, the TIMESTAMPCOLUMN NOT NULL; a table's primary key, UNIQUE
/// constraint and its index, in key order), and `pandas.read_sql` of a LIMITed continuous
/// query. The key reflection read `array_agg` and `indkey` results, which were sent as
/// `text`: psycopg handed SQLAlchemy strings, so the primary key's columns were `['{']`
/// and `get_indexes` failed; they are typed arrays now. `Table(..., autoload_with=engine)`
/// reflects the table (it failed on `current_setting('default_table_access_method')`),
/// and the inspector works through SQLAlchemy's asyncpg dialect too (asyncpg's type
/// introspection in a transaction first failed on `current_setting('jit')` and
/// `set_config`, and it decodes `int2vector` as PostgreSQL's pg_type describes it, an
/// array of `int2`).
#[test]
fn sqlalchemy_inspector_and_pandas_read_the_catalogs() {
    if !common::python_modules(
        &["sqlalchemy", "pandas", "asyncpg", "greenlet"],
        "'sqlalchemy[asyncio]' pandas asyncpg",
    ) {
        return;
    }
    let expected = "typeinfo int8: oid 20 array 1016\n\
        typeinfo text: oid 25 array 1009\n\
        typeinfo timestamptz: oid 1184 array 1185\n\
        typeinfo numeric: oid 1700 array 1231\n\
        typeinfo hstore: None\n\
        connect: 1\n\
        schemas: ['information_schema', 'public']\n\
        tables: ['airports']\n\
        foreign tables: ['flights']\n\
        views: []\n\
        column: ts TIMESTAMP nullable=False\n\
        column: k VARCHAR(8) nullable=True\n\
        column: v INTEGER nullable=True\n\
        column: code VARCHAR(4) nullable=False\n\
        column: name TEXT nullable=False\n\
        column: city TEXT nullable=True\n\
        pk: airports_pkey ['code']\n\
        unique: airports_city_name_key ['city', 'name']\n\
        index: airports_city_name_key ['city', 'name'] unique airports_city_name_key\n\
        foreign keys: []\n\
        reflected: ['code', 'name', 'city'] ['code'] [('city', 'name')]\n\
        asyncpg pk: airports_pkey ['code']\n\
        asyncpg unique: airports_city_name_key ['city', 'name']\n\
        asyncpg index: airports_city_name_key ['city', 'name']\n\
        asyncpg columns: ['ts', 'k', 'v']\n\
        read_sql: a 2 4 2001-01-01 00:00:10\n\
        read_sql: b 1 2 2001-01-01 00:00:10\n\
        read_sql: a 1 10 2001-01-01 00:00:20\n\
        done\n";
    run_client("python_sqlalchemy.py", "sqlalchemy", expected);
}

/// psycopg's `conn.cancel()` stops a SELECT over a table that would run for minutes (it
/// held the server's async workers, out of a cancel's reach); the connection goes on.
#[test]
fn psycopg_cancel_stops_a_slow_table_select() {
    let Some(stdout) = psycopg_script("cancel_select.py") else {
        return;
    };
    assert_eq!(
        stdout,
        "error: 57014 canceling statement due to user request\nafter: (1,)\n"
    );
}

/// Run `tests/python/NAME` against a fresh server and return what it printed; `None`
/// (skipped, with a message) when psycopg is missing. Fails when the script fails.
fn psycopg_script(name: &str) -> Option<String> {
    if !common::python_modules(&["psycopg"], "'psycopg[binary]'") {
        return None;
    }
    let port = common::start_server();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(name);
    let output = Command::new("python3")
        .arg(&path)
        .args(["--port", &port.to_string()])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(stdout)
}
