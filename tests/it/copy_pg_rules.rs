//! COPY read as PostgreSQL 15 reads it, through tokio-postgres's COPY API: the options'
//! checks and SQLSTATEs, backslash escapes of the delimiter and of line endings, the line
//! ending fixed by the first line (LF, CRLF or CR) and every other ending refused,
//! `\.` inside a line, FORCE_NOT_NULL / FORCE_NULL, HEADER MATCH, the order of the
//! checks on a short record, and line numbers across quoted line breaks.

use crate::common;

use bytes::Bytes;

async fn copy_in(
    c: &tokio_postgres::Client,
    sql: &str,
    data: &[u8],
) -> Result<u64, tokio_postgres::Error> {
    common::copy_in(c, sql, data, 64 << 10).await
}

/// The COPY's error: SQLSTATE and message (the server error's own text).
async fn copy_error(c: &tokio_postgres::Client, sql: &str, data: &[u8]) -> (String, String) {
    let e = copy_in(c, sql, data).await.expect_err(&format!(
        "{sql} with {:?} should fail",
        String::from_utf8_lossy(data)
    ));
    let db = e.as_db_error().expect("a server error");
    (
        db.code().code().to_string(),
        common::message_and_context(db),
    )
}

/// Regression: `COPY t FROM STDIN (LIVE)` into a table reached an `unreachable!` and
/// dropped the connection (the parser cut LIVE out before the binder's check ran).
#[tokio::test]
async fn live_copy_into_a_table_is_refused_and_the_session_lives() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE TABLE t (a integer)").await;
    for sql in [
        "COPY t FROM STDIN WITH (LIVE)",
        "COPY t FROM STDIN (FORMAT csv, LIVE)",
        "COPY t FROM STDIN (LIVE true)",
    ] {
        let e = c.copy_in::<_, Bytes>(sql).await.err().expect(sql);
        assert_eq!(common::sqlstate(&e), "0A000", "{sql}");
        let msg = e.as_db_error().expect("a server error").message();
        assert!(msg.contains("applies to streams, not tables"), "{msg}");
    }
    assert_eq!(copy_in(&c, "COPY t FROM STDIN", b"1\n").await.unwrap(), 1);
    assert_eq!(
        common::rows(&c, "SELECT a FROM t").await,
        common::table(&[&["1"]])
    );
}

/// Option faults reach the client with PostgreSQL's SQLSTATE before any data is sent.
#[tokio::test]
async fn option_faults_carry_postgresql_sqlstates() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE TABLE t (a integer, b text)").await;
    for (opts, state) in [
        ("(DELIMITER ';;')", "0A000"),
        ("(FORMAT csv, DELIMITER '\"')", "22023"),
        ("(DELIMITER 'a')", "22023"),
        ("(NULL 'x,y', DELIMITER ',')", "0A000"),
        ("(FORMAT csv, FORMAT text)", "42601"),
        ("(FORMAT binary, HEADER)", "0A000"),
        ("(ENCODING 'bogus')", "22023"),
        ("(FORMAT csv, FORCE_NULL (c))", "42703"),
    ] {
        let sql = format!("COPY t FROM STDIN {opts}");
        let e = c.copy_in::<_, Bytes>(sql.as_str()).await.err().expect(&sql);
        assert_eq!(common::sqlstate(&e), state, "{sql}: {e}");
    }
    // Accepted forms, legacy ones included.
    for (opts, data) in [
        ("(HEADER 1)", "a\tb\n1\tx\n"),
        ("(\"format\" 'csv', HEADER on)", "a,b\n2,y\n"),
        ("WITH CSV DELIMITER ';' QUOTE '\"'", "3;\"z;z\"\n"),
        ("WITH CSV HEADER ENCODING 'UTF8'", "a,b\n4,w\n"),
    ] {
        let sql = format!("COPY t FROM STDIN {opts}");
        assert_eq!(
            copy_in(&c, &sql, data.as_bytes()).await.unwrap(),
            1,
            "{sql}"
        );
    }
    assert_eq!(
        common::rows(&c, "SELECT a, b FROM t ORDER BY a").await,
        common::table(&[&["1", "x"], &["2", "y"], &["3", "z;z"], &["4", "w"]])
    );
}

/// Regression: a backslash before the delimiter did not keep the delimiter in its field,
/// so tcq could not read back its own `COPY TO ... (DELIMITER ',')` output (22P04 extra
/// data). A backslash before a line ending keeps it as data too.
#[tokio::test]
async fn a_backslash_keeps_the_delimiter_and_the_line_ending_in_the_field() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE TABLE r (s text, n integer); CREATE TABLE back (s text, n integer)",
    )
    .await;
    let values = ["x,y", "a\\b", "tab\there", "new\nline", "cr\rhere", "plain"];
    for (i, v) in values.iter().enumerate() {
        c.execute("INSERT INTO r VALUES ($1, $2)", &[v, &(i as i32)])
            .await
            .unwrap();
    }
    let dumped = common::copy_out_bytes(&c, "COPY r TO STDOUT WITH (DELIMITER ',')").await;
    assert!(
        String::from_utf8_lossy(&dumped).contains("x\\,y,0"),
        "{}",
        String::from_utf8_lossy(&dumped)
    );
    // Read back, also one byte per message (every escape cut from its byte).
    for piece in [64 << 10, 1] {
        common::exec(&c, "TRUNCATE back").await;
        let n = common::copy_in(
            &c,
            "COPY back FROM STDIN WITH (DELIMITER ',')",
            &dumped,
            piece,
        )
        .await
        .unwrap();
        assert_eq!(n, values.len() as u64);
        let rows = c.query("SELECT s FROM back ORDER BY n", &[]).await.unwrap();
        let got: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(got, values, "pieces of {piece} bytes");
    }
    // Raw escapes of a tab and of a newline, as PostgreSQL reads them.
    common::exec(&c, "TRUNCATE back").await;
    copy_in(&c, "COPY back FROM STDIN", b"x\\\ty\t1\nu\\\nv\t2\n")
        .await
        .unwrap();
    let rows = c.query("SELECT s FROM back ORDER BY n", &[]).await.unwrap();
    let got: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(got, ["x\ty", "u\nv"]);
}

/// The first line fixes the line ending; CR-only data is read; any other ending is
/// refused with PostgreSQL's 22P04 message at its line, in text and CSV, small and large
/// (the large ones take the two-thread parse).
#[tokio::test]
async fn the_first_line_fixes_the_line_ending() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE TABLE e (a integer, b text)").await;
    let count = || async { common::rows(&c, "SELECT count(*) FROM e").await[0][0].clone() };
    // CR alone ends lines when the first line ends so.
    assert_eq!(
        copy_in(&c, "COPY e FROM STDIN", b"1\tx\r2\ty\r")
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        copy_in(&c, "COPY e FROM STDIN (FORMAT csv)", b"3,\"p\nq\"\r4,z\r")
            .await
            .unwrap(),
        2
    );
    assert_eq!(count().await, "4");
    for (sql, data, message) in [
        (
            "COPY e FROM STDIN",
            &b"1\tx\n2\ty\r\n"[..],
            "literal carriage return found in data",
        ),
        (
            "COPY e FROM STDIN",
            b"1\tx\r\n2\ty\n",
            "literal newline found in data",
        ),
        (
            "COPY e FROM STDIN",
            b"1\tx\r2\ty\n",
            "literal newline found in data",
        ),
        (
            "COPY e FROM STDIN",
            b"1\tx\ry\t2\n",
            "literal newline found in data",
        ),
        (
            "COPY e FROM STDIN (FORMAT csv)",
            b"1,x\n2,a\rb\n",
            "unquoted carriage return found in data",
        ),
        (
            "COPY e FROM STDIN (FORMAT csv)",
            b"1,x\r\n2,y\n",
            "unquoted newline found in data",
        ),
    ] {
        let (state, msg) = copy_error(&c, sql, data).await;
        assert_eq!(state, "22P04", "{data:?}");
        assert!(msg.starts_with(message), "{data:?}: {msg}");
    }
    // Large data: every line CRLF is read whole; one stray CR or bare LF deep inside is
    // refused at its line, and nothing of the COPY is kept.
    let n = 60_000;
    let crlf: String = (0..n).map(|i| format!("{i}\tv{i}\r\n")).collect();
    assert!(crlf.len() > 512 << 10);
    assert_eq!(
        copy_in(&c, "COPY e FROM STDIN", crlf.as_bytes())
            .await
            .unwrap(),
        n
    );
    let sum = common::rows(&c, "SELECT sum(a), count(*) FROM e WHERE b LIKE 'v%'").await;
    assert_eq!(
        sum,
        common::table(&[&[&(n * (n - 1) / 2).to_string(), &n.to_string()]])
    );
    let bare_lf = crlf.replacen("41234\tv41234\r\n", "41234\tv41234\n", 1);
    let (state, msg) = copy_error(&c, "COPY e FROM STDIN", bare_lf.as_bytes()).await;
    assert_eq!(state, "22P04");
    assert!(msg.contains("literal newline found in data"), "{msg}");
    assert!(msg.contains("line 41235"), "{msg}");
    let lf: String = (0..n).map(|i| format!("{i},v{i}\n")).collect();
    let stray_cr = lf.replacen("50000,v50000", "50000,v5\r0000", 1);
    let (state, msg) = copy_error(&c, "COPY e FROM STDIN (FORMAT csv)", stray_cr.as_bytes()).await;
    assert_eq!(state, "22P04");
    assert!(
        msg.contains("unquoted carriage return found in data"),
        "{msg}"
    );
    assert!(msg.contains("line 50001"), "{msg}");
    assert_eq!(count().await, (4 + n).to_string());
}

/// `\.` ends the data where a line ends after it; anywhere else in text it is a corrupt
/// end marker (22P04); in CSV it is data unless it starts a line.
#[tokio::test]
async fn the_end_marker_inside_a_line() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE TABLE m (a integer, b text)").await;
    let (state, msg) = copy_error(&c, "COPY m FROM STDIN", b"1\tx\\.y\n").await;
    assert_eq!(
        (
            state.as_str(),
            msg.starts_with("end-of-copy marker corrupt")
        ),
        ("22P04", true)
    );
    let (state, _) = copy_error(&c, "COPY m FROM STDIN", b"1\tx\n\\.").await;
    assert_eq!(state, "22P04");
    assert_eq!(
        copy_in(&c, "COPY m FROM STDIN", b"2\tab\\.\n3\tlost\n")
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        copy_in(&c, "COPY m FROM STDIN (FORMAT csv)", b"4,a\\.b\n5,\\.")
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        common::rows(&c, "SELECT a, b FROM m ORDER BY a").await,
        common::table(&[&["2", "ab"], &["4", "a\\.b"], &["5", "\\."]])
    );
}

/// FORCE_NOT_NULL reads the NULL string as a value; FORCE_NULL reads a quoted one as
/// NULL; HEADER MATCH checks the header's names.
#[tokio::test]
async fn force_not_null_force_null_and_header_match() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE TABLE f (a integer, b text, c text)").await;
    let n = copy_in(
        &c,
        "COPY f FROM STDIN (FORMAT csv, FORCE_NOT_NULL (b), FORCE_NULL (c))",
        b"1,,\"\"\n2,\"\",x\n",
    )
    .await
    .unwrap();
    assert_eq!(n, 2);
    assert_eq!(
        common::rows(&c, "SELECT a, b IS NULL, b, c IS NULL FROM f ORDER BY a").await,
        common::table(&[&["1", "f", "", "t"], &["2", "f", "", "f"]])
    );
    assert_eq!(
        copy_in(
            &c,
            "COPY f (a, c) FROM STDIN (FORMAT csv, HEADER match)",
            b"a,c\n3,z\n"
        )
        .await
        .unwrap(),
        1
    );
    let (state, msg) = copy_error(
        &c,
        "COPY f (a, c) FROM STDIN (FORMAT csv, HEADER match)",
        b"a,b\n4,z\n",
    )
    .await;
    assert_eq!(state, "22P04");
    assert!(
        msg.starts_with("column name mismatch in header line field 2: got \"b\", expected \"c\""),
        "{msg}"
    );
    let (state, msg) = copy_error(&c, "COPY f FROM STDIN (HEADER match)", b"a\tb\n4\tz\ty\n").await;
    assert_eq!(state, "22P04");
    assert!(
        msg.starts_with("wrong number of fields in header line: got 2, expected 3"),
        "{msg}"
    );
}

/// A short record: PostgreSQL converts the fields there are, in order, before it finds
/// the missing one; CSV line numbers count the line breaks inside quoted fields.
#[tokio::test]
async fn short_records_and_line_numbers() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE TABLE s (a integer, b text, c text)").await;
    let (state, msg) = copy_error(&c, "COPY s FROM STDIN", b"\n").await;
    assert_eq!(state, "22P02", "{msg}");
    assert!(
        msg.starts_with("invalid input syntax for type integer: \"\""),
        "{msg}"
    );
    // An error about the record as a whole shows its text, as PostgreSQL 15 does.
    let (state, msg) = copy_error(&c, "COPY s FROM STDIN", b"7\tx\n").await;
    assert_eq!(state, "22P04");
    assert_eq!(
        msg,
        "missing data for column \"c\"\nCONTEXT: COPY s, line 1: \"7\tx\""
    );
    let (state, msg) = copy_error(&c, "COPY s FROM STDIN", b"1\ta\tb\n1\t2\t3\t4\n").await;
    assert_eq!(state, "22P04");
    assert_eq!(
        msg,
        "extra data after last expected column\nCONTEXT: COPY s, line 2: \"1\t2\t3\t4\""
    );
    // Cut at 100 bytes, as PostgreSQL's limit_printout_length cuts it.
    let long = format!("1,{},b,extra\n", "x".repeat(150));
    let (_, msg) = copy_error(&c, "COPY s FROM STDIN (FORMAT csv)", long.as_bytes()).await;
    assert_eq!(
        msg,
        format!(
            "extra data after last expected column\nCONTEXT: COPY s, line 1: \"1,{}...\"",
            "x".repeat(98)
        )
    );
    let (state, msg) = copy_error(
        &c,
        "COPY s FROM STDIN (FORMAT csv)",
        b"1,a,b\n2,\"two\nlines\",x\nbad,y,z\n",
    )
    .await;
    assert_eq!(state, "22P02");
    assert!(msg.contains("line 4"), "{msg}");
    let (state, msg) = copy_error(
        &c,
        "COPY s FROM STDIN (FORMAT csv)",
        b"1,a,b\n2,\"open\nstill\n",
    )
    .await;
    assert_eq!(state, "22P04");
    assert_eq!(
        msg,
        "unterminated CSV quoted field\nCONTEXT: COPY s, line 4: \"2,\"open\nstill\n\""
    );
}

/// Edges a differential run against PostgreSQL 15 found: the column list is checked
/// before the options, FORCE lists take no `*` and no column twice, the last record
/// without a line ending is read with its quotes (line numbers, escaped quotes, an
/// unterminated field), the header line is read but not parsed, HEADER MATCH on no data.
#[tokio::test]
async fn edges_found_against_postgresql() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE TABLE t (a integer, b text, c text)").await;
    for (sql, state) in [
        ("COPY t (a, a, b) FROM STDIN (DELIMITER 'xx')", "42701"),
        ("COPY t (a, nope) FROM STDIN (DELIMITER 'xx')", "42703"),
        (
            "COPY t (a, b) FROM STDIN (FORMAT csv, FORCE_NULL (c), FREEZE)",
            "42P10",
        ),
        ("COPY t FROM STDIN (FORMAT csv, FORCE_NOT_NULL *)", "22023"),
        (
            "COPY t FROM STDIN (FORMAT csv, FORCE_NOT_NULL (b, b))",
            "42701",
        ),
        (
            "COPY t FROM STDIN (FORMAT csv, NULL '\"', ENCODING 'LATIN1')",
            "0A000",
        ),
    ] {
        let e = c.copy_in::<_, Bytes>(sql).await.err().expect(sql);
        assert_eq!(common::sqlstate(&e), state, "{sql}: {e:?}");
    }
    let e = c
        .copy_out("COPY t (a, a) TO STDOUT")
        .await
        .err()
        .expect("refused");
    assert_eq!(common::sqlstate(&e), "42701");
    let csv = "COPY t FROM STDIN (FORMAT csv)";
    for (data, state, message, line) in [
        (
            &b"1,,\n\"\n\""[..],
            "22P02",
            "invalid input syntax for type integer",
            3,
        ),
        (
            b"1,,\n\"\n\"\r",
            "22P04",
            "unquoted carriage return found in data",
            3,
        ),
        (
            b"1,,\n2,\"x\ny",
            "22P04",
            "unterminated CSV quoted field",
            3,
        ),
    ] {
        let (s, msg) = copy_error(&c, csv, data).await;
        assert_eq!(s, state, "{data:?}: {msg}");
        assert!(msg.starts_with(message), "{data:?}: {msg}");
        assert!(msg.contains(&format!("line {line}")), "{data:?}: {msg}");
    }
    let (s, msg) = copy_error(
        &c,
        "COPY t FROM STDIN (FORMAT csv, ESCAPE '|')",
        b",,\n\"|\"\n",
    )
    .await;
    assert_eq!(s, "22P04");
    assert!(
        msg.contains("unterminated CSV quoted field") && msg.contains("line 3"),
        "{msg}"
    );
    // The last record, no line ending: an escaped quote inside quotes is not its end.
    assert_eq!(
        copy_in(
            &c,
            "COPY t FROM STDIN (FORMAT csv, ESCAPE '\\')",
            b"1,\"\\\"\",c"
        )
        .await
        .unwrap(),
        1
    );
    // A header line is skipped whatever it holds, but it must be text.
    assert_eq!(
        copy_in(&c, "COPY t FROM STDIN (FORMAT csv, HEADER)", b"a,\"b\n")
            .await
            .unwrap(),
        0
    );
    let (s, _) = copy_error(&c, "COPY t FROM STDIN (HEADER)", b"a\x00\tb\tc\n1\tb\tc\n").await;
    assert_eq!(s, "22021");
    let (s, msg) = copy_error(&c, "COPY t FROM STDIN (HEADER MATCH)", b"a\\0\tb\tc\n").await;
    assert_eq!(s, "22021", "{msg}");
    assert_eq!(
        msg,
        "invalid byte sequence for encoding \"UTF8\": 0x00\nCONTEXT: COPY t, line 1"
    );
    // HEADER MATCH: no data reads as an empty header line; the names are raw fields.
    let (s, msg) = copy_error(&c, "COPY t FROM STDIN (HEADER MATCH)", b"").await;
    assert_eq!(s, "22P04");
    assert!(
        msg.starts_with("wrong number of fields in header line: got 1, expected 3"),
        "{msg}"
    );
    let (s, msg) = copy_error(
        &c,
        "COPY t FROM STDIN (FORMAT csv, NULL 'N', HEADER MATCH, FORCE_NOT_NULL (a))",
        b"N,b,c\n",
    )
    .await;
    assert_eq!(s, "22P04");
    assert!(
        msg.starts_with("column name mismatch in header line field 1: got null value (\"N\")"),
        "{msg}"
    );
    assert_eq!(
        common::rows(&c, "SELECT a, b, c FROM t").await,
        common::table(&[&["1", "\"", "c"]])
    );
}
