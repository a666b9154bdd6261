//! The columnar result path over a real socket. An aggregate query whose select list names
//! only group keys, aggregates and window metadata, without ORDER BY and with no HAVING or a
//! compiled one, leaves the executor as a `RowBlock` (src/exec/block.rs); the server encodes
//! it column by column (`block_messages` in src/server/conn.rs, `copy_block` in
//! src/server/encode.rs), and cursors, row-limited portals and LIMIT take rows from it.
//! Every test here asserts the exact bytes or values that path must produce: a lost,
//! repeated or misplaced row, a wrong field or a bad escape fails it. Each result is checked
//! twice where the query can run either way: as a member of a cross-query shared plan (the
//! default) and alone (`SET tcq.share_across_queries = off`), the two places that build
//! blocks.

use crate::common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{connect, exec, sqlstate, start_server};
use futures::StreamExt;
use rust_decimal::Decimal;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, SimpleQueryMessage};

/// Every test gives up after this long instead of hanging.
const LIMIT: Duration = Duration::from_secs(60);

const STREAM: &str = "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer, \
                      f double precision, t text)";

/// The dashboard query: a text key whose values need quoting or escaping, wtime(*), and
/// count, sum and avg over an integer, min/max over text and over a float.
const SELECT: &str = "SELECT k, wtime(*), count(*), sum(v), avg(v), min(t), max(t), min(f), \
                      max(f) FROM s [RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k";

/// One input tuple: seconds after 2001-01-01 00:00:00, k, v, f, t.
type Tuple = (
    u64,
    Option<&'static str>,
    Option<i32>,
    Option<f64>,
    Option<&'static str>,
);

/// The input. The instance [:00, :10) holds every key below :10, in this first-seen order;
/// the tuple at :15 is alone in [:10, :20), and the one at :25 closes that instance (its
/// own instance never closes).
const TUPLES: &[Tuple] = &[
    (1, Some("a,b"), Some(1), Some(2.5), Some("pear")),
    (1, Some("say \"hi\""), Some(2), Some(-0.125), Some("apple")),
    (2, Some("back\\slash"), Some(3), None, None),
    (2, Some("tab\there"), Some(4), Some(0.1), Some("tab\tin t")),
    (3, Some("new\nline"), Some(5), None, None),
    (3, Some("cr\rx"), None, None, None),
    (4, Some(""), Some(6), None, Some("")),
    (4, None, Some(7), Some(1e20), Some("x")),
    (5, Some("naïve café ☕"), Some(8), None, Some("ü")),
    (
        5,
        Some("a key longer than twenty-four bytes"),
        Some(9),
        None,
        None,
    ),
    (6, Some("\\."), Some(10), None, None),
    (6, Some("vt\u{b}x"), Some(11), None, None),
    (6, Some("semi;colon"), Some(12), None, None),
    (6, Some("it's"), Some(13), None, None),
    (6, Some("NULL"), Some(14), None, None),
    (7, Some("a,b"), Some(2), Some(7.75), Some("zebra")),
    (8, Some("say \"hi\""), None, None, None),
    (8, None, Some(8), Some(-3.0), Some("x")),
    (15, Some("a,b"), Some(10), Some(1.0), Some("mid")),
    (25, Some("end"), Some(0), Some(0.0), Some("end")),
];

const T10: &str = "2001-01-01 00:00:10";
const T20: &str = "2001-01-01 00:00:20";

/// The rows of [`SELECT`] over [`TUPLES`] as PostgreSQL's text output gives each value
/// (`None` is NULL), in emission order: the groups of [:00, :10) in first-seen order, then
/// the one group of [:10, :20).
#[rustfmt::skip]
fn expected_values() -> Vec<Vec<Option<&'static str>>> {
    let n = None;
    let row = |k: Option<&'static str>, w, c, s, a, t: [Option<&'static str>; 2], f: [_; 2]| {
        vec![k, Some(w), Some(c), s, a, t[0], t[1], f[0], f[1]]
    };
    let one = |k, s: &'static str, a: &'static str| {
        row(Some(k), T10, "1", Some(s), Some(a), [n, n], [n, n])
    };
    vec![
        row(Some("a,b"), T10, "2", Some("3"), Some("1.5000000000000000"), [Some("pear"), Some("zebra")], [Some("2.5"), Some("7.75")]),
        row(Some("say \"hi\""), T10, "2", Some("2"), Some("2.0000000000000000"), [Some("apple"); 2], [Some("-0.125"); 2]),
        one("back\\slash", "3", "3.0000000000000000"),
        row(Some("tab\there"), T10, "1", Some("4"), Some("4.0000000000000000"), [Some("tab\tin t"); 2], [Some("0.1"); 2]),
        one("new\nline", "5", "5.0000000000000000"),
        row(Some("cr\rx"), T10, "1", n, n, [n, n], [n, n]),
        row(Some(""), T10, "1", Some("6"), Some("6.0000000000000000"), [Some(""); 2], [n, n]),
        row(n, T10, "2", Some("15"), Some("7.5000000000000000"), [Some("x"); 2], [Some("-3"), Some("1e+20")]),
        row(Some("naïve café ☕"), T10, "1", Some("8"), Some("8.0000000000000000"), [Some("ü"); 2], [n, n]),
        one("a key longer than twenty-four bytes", "9", "9.0000000000000000"),
        one("\\.", "10", "10.0000000000000000"),
        one("vt\u{b}x", "11", "11.0000000000000000"),
        one("semi;colon", "12", "12.0000000000000000"),
        one("it's", "13", "13.0000000000000000"),
        one("NULL", "14", "14.0000000000000000"),
        row(Some("a,b"), T20, "1", Some("10"), Some("10.0000000000000000"), [Some("mid"); 2], [Some("1"); 2]),
    ]
}

/// 2001-01-01 00:00:00 UTC plus `secs`.
fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(978_307_200 + secs)
}

/// Seconds of `t` after 2001-01-01 00:00:00 UTC.
fn secs_of(t: SystemTime) -> u64 {
    t.duration_since(at(0)).unwrap().as_secs()
}

/// A fresh server with stream `s`; the reader connection, with sharing across queries on
/// or off, and a feeder connection.
async fn setup(shared: bool) -> (Client, Client) {
    let port = start_server();
    let reader = connect(port).await;
    let feeder = connect(port).await;
    exec(&feeder, STREAM).await;
    let share = if shared { "on" } else { "off" };
    exec(&reader, &format!("SET tcq.share_across_queries = {share}")).await;
    (reader, feeder)
}

/// Once `queries` continuous queries are registered, push `tuples` into `s` with one binary
/// COPY and drop the stream, which ends every query reading it after its last slide event.
async fn feed_and_drop(feeder: &Client, queries: usize, tuples: &[Tuple]) {
    common::wait_for_queries(feeder, queries).await;
    push(feeder, tuples).await;
    exec(feeder, "DROP STREAM s").await;
}

/// Push `tuples` into `s` with one binary COPY.
async fn push(feeder: &Client, tuples: &[Tuple]) {
    let sink = feeder
        .copy_in("COPY s (ts, k, v, f, t) FROM STDIN (FORMAT binary)")
        .await
        .unwrap();
    let writer = BinaryCopyInWriter::new(
        sink,
        &[
            Type::TIMESTAMP,
            Type::TEXT,
            Type::INT4,
            Type::FLOAT8,
            Type::TEXT,
        ],
    );
    futures::pin_mut!(writer);
    for (secs, k, v, f, t) in tuples {
        writer
            .as_mut()
            .write(&[&at(*secs), k, v, f, t])
            .await
            .unwrap();
    }
    assert_eq!(writer.finish().await.unwrap(), tuples.len() as u64);
}

/// Run `COPY (query) TO STDOUT options` on `reader` while [`TUPLES`] are fed and the stream
/// dropped; returns every CopyData message, in order.
async fn copy_messages(
    reader: Client,
    feeder: &Client,
    query: &str,
    options: &str,
) -> Vec<Vec<u8>> {
    copy_messages_of(reader, feeder, query, options, TUPLES).await
}

/// [`copy_messages`] over `tuples`.
async fn copy_messages_of(
    reader: Client,
    feeder: &Client,
    query: &str,
    options: &str,
    tuples: &[Tuple],
) -> Vec<Vec<u8>> {
    let sql = format!("COPY ({query}) TO STDOUT {options}");
    let reading = tokio::spawn(async move {
        let out = reader.copy_out(sql.as_str()).await.unwrap();
        futures::pin_mut!(out);
        let mut messages = Vec::new();
        while let Some(m) = out.next().await {
            messages.push(m.unwrap().to_vec());
        }
        messages
    });
    feed_and_drop(feeder, 1, tuples).await;
    reading.await.unwrap()
}

/// Expected COPY lines: each row's fields joined by `delimiter`, with a newline.
fn lines(delimiter: &str, rows: &[&[&str]]) -> Vec<String> {
    rows.iter()
        .map(|fields| fields.join(delimiter) + "\n")
        .collect()
}

/// Compare CopyData messages with expected lines, one line per message, showing both.
fn assert_lines(got: &[Vec<u8>], expected: &[String], what: &str) {
    let got: Vec<String> = got
        .iter()
        .map(|m| String::from_utf8(m.clone()).expect("COPY text is UTF-8"))
        .collect();
    assert_eq!(
        got, expected,
        "{what}: CopyData messages (left) differ from expected (right)"
    );
}

/// COPY text, default options: backslash escapes for backslash, tab, newline, carriage
/// return and vertical tab, `\N` for NULL, UTF-8 as it is.
#[rustfmt::skip]
fn text_default() -> Vec<String> {
    let w = T10;
    let n = r"\N";
    lines(
        "\t",
        &[
            &["a,b", w, "2", "3", "1.5000000000000000", "pear", "zebra", "2.5", "7.75"],
            &["say \"hi\"", w, "2", "2", "2.0000000000000000", "apple", "apple", "-0.125", "-0.125"],
            &[r"back\\slash", w, "1", "3", "3.0000000000000000", n, n, n, n],
            &[r"tab\there", w, "1", "4", "4.0000000000000000", r"tab\tin t", r"tab\tin t", "0.1", "0.1"],
            &[r"new\nline", w, "1", "5", "5.0000000000000000", n, n, n, n],
            &[r"cr\rx", w, "1", n, n, n, n, n, n],
            &["", w, "1", "6", "6.0000000000000000", "", "", n, n],
            &[n, w, "2", "15", "7.5000000000000000", "x", "x", "-3", "1e+20"],
            &["naïve café ☕", w, "1", "8", "8.0000000000000000", "ü", "ü", n, n],
            &["a key longer than twenty-four bytes", w, "1", "9", "9.0000000000000000", n, n, n, n],
            &[r"\\.", w, "1", "10", "10.0000000000000000", n, n, n, n],
            &[r"vt\vx", w, "1", "11", "11.0000000000000000", n, n, n, n],
            &["semi;colon", w, "1", "12", "12.0000000000000000", n, n, n, n],
            &["it's", w, "1", "13", "13.0000000000000000", n, n, n, n],
            &["NULL", w, "1", "14", "14.0000000000000000", n, n, n, n],
            &["a,b", T20, "1", "10", "10.0000000000000000", "mid", "mid", "1", "1"],
        ],
    )
}

/// COPY text with DELIMITER ':' and NULL 'nil': the delimiter is escaped wherever it
/// occurs, also in wtime, which a block formats once for all its rows.
#[rustfmt::skip]
fn text_colon() -> Vec<String> {
    let w = r"2001-01-01 00\:00\:10";
    let n = "nil";
    lines(
        ":",
        &[
            &["a,b", w, "2", "3", "1.5000000000000000", "pear", "zebra", "2.5", "7.75"],
            &["say \"hi\"", w, "2", "2", "2.0000000000000000", "apple", "apple", "-0.125", "-0.125"],
            &[r"back\\slash", w, "1", "3", "3.0000000000000000", n, n, n, n],
            &[r"tab\there", w, "1", "4", "4.0000000000000000", r"tab\tin t", r"tab\tin t", "0.1", "0.1"],
            &[r"new\nline", w, "1", "5", "5.0000000000000000", n, n, n, n],
            &[r"cr\rx", w, "1", n, n, n, n, n, n],
            &["", w, "1", "6", "6.0000000000000000", "", "", n, n],
            &[n, w, "2", "15", "7.5000000000000000", "x", "x", "-3", "1e+20"],
            &["naïve café ☕", w, "1", "8", "8.0000000000000000", "ü", "ü", n, n],
            &["a key longer than twenty-four bytes", w, "1", "9", "9.0000000000000000", n, n, n, n],
            &[r"\\.", w, "1", "10", "10.0000000000000000", n, n, n, n],
            &[r"vt\vx", w, "1", "11", "11.0000000000000000", n, n, n, n],
            &["semi;colon", w, "1", "12", "12.0000000000000000", n, n, n, n],
            &["it's", w, "1", "13", "13.0000000000000000", n, n, n, n],
            &["NULL", w, "1", "14", "14.0000000000000000", n, n, n, n],
            &["a,b", r"2001-01-01 00\:00\:20", "1", "10", "10.0000000000000000", "mid", "mid", "1", "1"],
        ],
    )
}

/// COPY CSV with HEADER: a field is quoted when it holds the delimiter, the quote, a
/// newline or a carriage return, or is empty (the NULL marker is the empty string); quotes
/// are doubled. `\.` is quoted only when it is a row's only field, as PostgreSQL does.
#[rustfmt::skip]
fn csv_default() -> Vec<String> {
    let w = T10;
    let mut out = lines(
        ",",
        &[&[
            "k", "wtime", "count", "sum", "avg", "min", "max", "min", "max",
        ]],
    );
    out.extend(lines(
        ",",
        &[
            &["\"a,b\"", w, "2", "3", "1.5000000000000000", "pear", "zebra", "2.5", "7.75"],
            &["\"say \"\"hi\"\"\"", w, "2", "2", "2.0000000000000000", "apple", "apple", "-0.125", "-0.125"],
            &["back\\slash", w, "1", "3", "3.0000000000000000", "", "", "", ""],
            &["tab\there", w, "1", "4", "4.0000000000000000", "tab\tin t", "tab\tin t", "0.1", "0.1"],
            &["\"new\nline\"", w, "1", "5", "5.0000000000000000", "", "", "", ""],
            &["\"cr\rx\"", w, "1", "", "", "", "", "", ""],
            &["\"\"", w, "1", "6", "6.0000000000000000", "\"\"", "\"\"", "", ""],
            &["", w, "2", "15", "7.5000000000000000", "x", "x", "-3", "1e+20"],
            &["naïve café ☕", w, "1", "8", "8.0000000000000000", "ü", "ü", "", ""],
            &["a key longer than twenty-four bytes", w, "1", "9", "9.0000000000000000", "", "", "", ""],
            &["\\.", w, "1", "10", "10.0000000000000000", "", "", "", ""],
            &["vt\u{b}x", w, "1", "11", "11.0000000000000000", "", "", "", ""],
            &["semi;colon", w, "1", "12", "12.0000000000000000", "", "", "", ""],
            &["it's", w, "1", "13", "13.0000000000000000", "", "", "", ""],
            &["NULL", w, "1", "14", "14.0000000000000000", "", "", "", ""],
            &["\"a,b\"", T20, "1", "10", "10.0000000000000000", "mid", "mid", "1", "1"],
        ],
    ));
    out
}

/// COPY CSV with DELIMITER ';', QUOTE '''', ESCAPE '\' and NULL 'NULL': the text `NULL`
/// is quoted to tell it from NULL, the empty string is not; a quote inside a quoted field
/// is preceded by the escape.
#[rustfmt::skip]
fn csv_custom() -> Vec<String> {
    let w = T10;
    let n = "NULL";
    lines(
        ";",
        &[
            &["a,b", w, "2", "3", "1.5000000000000000", "pear", "zebra", "2.5", "7.75"],
            &["say \"hi\"", w, "2", "2", "2.0000000000000000", "apple", "apple", "-0.125", "-0.125"],
            &["back\\slash", w, "1", "3", "3.0000000000000000", n, n, n, n],
            &["tab\there", w, "1", "4", "4.0000000000000000", "tab\tin t", "tab\tin t", "0.1", "0.1"],
            &["'new\nline'", w, "1", "5", "5.0000000000000000", n, n, n, n],
            &["'cr\rx'", w, "1", n, n, n, n, n, n],
            &["", w, "1", "6", "6.0000000000000000", "", "", n, n],
            &[n, w, "2", "15", "7.5000000000000000", "x", "x", "-3", "1e+20"],
            &["naïve café ☕", w, "1", "8", "8.0000000000000000", "ü", "ü", n, n],
            &["a key longer than twenty-four bytes", w, "1", "9", "9.0000000000000000", n, n, n, n],
            &["\\.", w, "1", "10", "10.0000000000000000", n, n, n, n],
            &["vt\u{b}x", w, "1", "11", "11.0000000000000000", n, n, n, n],
            &["'semi;colon'", w, "1", "12", "12.0000000000000000", n, n, n, n],
            &["'it\\'s'", w, "1", "13", "13.0000000000000000", n, n, n, n],
            &["'NULL'", w, "1", "14", "14.0000000000000000", n, n, n, n],
            &["a,b", T20, "1", "10", "10.0000000000000000", "mid", "mid", "1", "1"],
        ],
    )
}

/// A function giving a format's expected COPY lines.
type Expected = fn() -> Vec<String>;

#[tokio::test]
async fn copy_text_and_csv_lines_are_exact_one_row_per_message() {
    tokio::time::timeout(LIMIT, async {
        let cases: [(&str, Expected); 4] = [
            ("", text_default),
            ("(DELIMITER ':', NULL 'nil')", text_colon),
            ("(FORMAT csv, HEADER)", csv_default),
            (
                "(FORMAT csv, DELIMITER ';', QUOTE '''', ESCAPE '\\', NULL 'NULL')",
                csv_custom,
            ),
        ];
        for shared in [true, false] {
            for (options, expected) in cases {
                let (reader, feeder) = setup(shared).await;
                let got = copy_messages(reader, &feeder, SELECT, options).await;
                assert_lines(&got, &expected(), &format!("{options} shared={shared}"));
            }
        }
    })
    .await
    .expect("test timed out");
}

/// A row of [`SELECT`] decoded from binary: k, wtime (seconds after 2001-01-01), count,
/// sum, avg (as its text, scale included), min(t), max(t), min(f), max(f).
type Typed = (
    Option<String>,
    u64,
    i64,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<f64>,
    Option<f64>,
);

/// [`expected_values`] as the binary results decode them.
fn expected_typed() -> Vec<Typed> {
    let s = |v: &Option<&str>| v.map(str::to_string);
    let f = |v: &Option<&str>| v.map(|x| x.parse::<f64>().expect("a float"));
    expected_values()
        .iter()
        .map(|r| {
            let wtime = r[1].unwrap().strip_prefix("2001-01-01 00:00:").unwrap();
            (
                s(&r[0]),
                wtime.parse().unwrap(),
                r[2].unwrap().parse().unwrap(),
                r[3].map(|x| x.parse().unwrap()),
                s(&r[4]),
                s(&r[5]),
                s(&r[6]),
                f(&r[7]),
                f(&r[8]),
            )
        })
        .collect()
}

/// The columns of [`SELECT`] as binary results describe them.
const TYPES: [Type; 9] = [
    Type::TEXT,
    Type::TIMESTAMP,
    Type::INT8,
    Type::INT8,
    Type::NUMERIC,
    Type::TEXT,
    Type::TEXT,
    Type::FLOAT8,
    Type::FLOAT8,
];

/// Decode one binary field of type `ty` (`None`: NULL) as `T`, as a driver does.
fn decode<'a, T: tokio_postgres::types::FromSql<'a>>(ty: &Type, raw: Option<&'a [u8]>) -> T {
    T::from_sql_nullable(ty, raw).unwrap_or_else(|e| panic!("decode {ty}: {e}"))
}

/// A [`Typed`] row from its nine binary fields.
fn typed(raw: &[Option<&[u8]>]) -> Typed {
    assert_eq!(raw.len(), 9, "fields per row");
    let avg: Option<Decimal> = decode(&TYPES[4], raw[4]);
    (
        decode(&TYPES[0], raw[0]),
        secs_of(decode(&TYPES[1], raw[1])),
        decode(&TYPES[2], raw[2]),
        decode(&TYPES[3], raw[3]),
        avg.map(|d| d.to_string()),
        decode(&TYPES[5], raw[5]),
        decode(&TYPES[6], raw[6]),
        decode(&TYPES[7], raw[7]),
        decode(&TYPES[8], raw[8]),
    )
}

/// The fields of one binary COPY tuple (field count, then length and bytes of each, -1 for
/// NULL); panics unless `data` is exactly one tuple.
fn binary_tuple(data: &[u8]) -> Vec<Option<&[u8]>> {
    let n = i16::from_be_bytes([data[0], data[1]]);
    let mut at = 2;
    let mut fields = Vec::new();
    for _ in 0..n {
        let len = i32::from_be_bytes(data[at..at + 4].try_into().unwrap());
        at += 4;
        if len < 0 {
            fields.push(None);
        } else {
            fields.push(Some(&data[at..at + len as usize]));
            at += len as usize;
        }
    }
    assert_eq!(at, data.len(), "a CopyData message holds exactly one tuple");
    fields
}

/// The 19-byte binary COPY header: signature, flags, no extension.
const BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

#[tokio::test]
async fn binary_copy_sends_one_exact_tuple_per_message() {
    tokio::time::timeout(LIMIT, async {
        for shared in [true, false] {
            let (reader, feeder) = setup(shared).await;
            let got = copy_messages(reader, &feeder, SELECT, "(FORMAT binary)").await;
            // The header rides with the first tuple; the trailer comes alone at the end.
            assert!(got[0].starts_with(BINARY_HEADER), "{:?}", &got[0]);
            assert_eq!(got.last().unwrap(), b"\xff\xff", "the trailer");
            let tuples: Vec<Typed> = got[..got.len() - 1]
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let body = if i == 0 {
                        &m[BINARY_HEADER.len()..]
                    } else {
                        &m[..]
                    };
                    typed(&binary_tuple(body))
                })
                .collect();
            assert_eq!(tuples, expected_typed(), "shared={shared}");
        }
    })
    .await
    .expect("test timed out");
}

/// The rows of a simple query's DataRows, as text (`None`: NULL).
fn simple_rows(msgs: Vec<SimpleQueryMessage>) -> Vec<Vec<Option<String>>> {
    msgs.into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
            }
            _ => None,
        })
        .collect()
}

/// `expected` with owned strings, to compare with [`simple_rows`].
fn owned(expected: Vec<Vec<Option<&str>>>) -> Vec<Vec<Option<String>>> {
    expected
        .into_iter()
        .map(|r| r.into_iter().map(|v| v.map(str::to_string)).collect())
        .collect()
}

/// Run `sql` through the simple query protocol on `reader` while `tuples` are fed and the
/// stream dropped; its rows.
async fn simple_during_feed(
    reader: Client,
    feeder: &Client,
    sql: &str,
    tuples: &[Tuple],
) -> Vec<Vec<Option<String>>> {
    let sql = sql.to_string();
    let reading = tokio::spawn(async move { reader.simple_query(&sql).await.unwrap() });
    feed_and_drop(feeder, 1, tuples).await;
    simple_rows(reading.await.unwrap())
}

#[tokio::test]
async fn simple_protocol_text_rows_are_exact() {
    tokio::time::timeout(LIMIT, async {
        for shared in [true, false] {
            let (reader, feeder) = setup(shared).await;
            let got = simple_during_feed(reader, &feeder, SELECT, TUPLES).await;
            assert_eq!(got, owned(expected_values()), "shared={shared}");
        }
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn extended_protocol_binary_rows_are_exact() {
    tokio::time::timeout(LIMIT, async {
        for shared in [true, false] {
            let (reader, feeder) = setup(shared).await;
            let reading = tokio::spawn(async move {
                // tokio-postgres asks for every result column in binary.
                let rows = reader.query(SELECT, &[]).await.unwrap();
                let types: Vec<Type> = rows[0]
                    .columns()
                    .iter()
                    .map(|c| c.type_().clone())
                    .collect();
                assert_eq!(types, TYPES);
                rows.iter()
                    .map(|r| {
                        let avg: Option<Decimal> = r.get(4);
                        (
                            r.get(0),
                            secs_of(r.get(1)),
                            r.get(2),
                            r.get(3),
                            avg.map(|d| d.to_string()),
                            r.get(5),
                            r.get(6),
                            r.get(7),
                            r.get(8),
                        )
                    })
                    .collect::<Vec<Typed>>()
            });
            feed_and_drop(&feeder, 1, TUPLES).await;
            assert_eq!(reading.await.unwrap(), expected_typed(), "shared={shared}");
        }
    })
    .await
    .expect("test timed out");
}

/// A tuple of key `k` and value `v` at `secs`, without f and t.
const fn kv(secs: u64, k: &'static str, v: i32) -> Tuple {
    (secs, Some(k), Some(v), None, None)
}

/// Instances [:00, :10) and [:20, :30) of a 10-second window hold one tuple each; [:10,
/// :20) is empty. The tuple at :35 closes [:20, :30).
const SPARSE: &[Tuple] = &[
    (5, Some("a"), Some(1), Some(1.5), Some("t")),
    (25, Some("b"), Some(2), Some(-2.0), Some("u")),
    (35, Some("c"), Some(3), None, None),
];

#[tokio::test]
async fn an_ungrouped_empty_instance_emits_count_zero_and_null_aggregates() {
    tokio::time::timeout(LIMIT, async {
        let sql = "SELECT wtime(*), count(*), sum(v), avg(v), min(t), max(f) FROM s \
                   [RANGE BY '10 seconds' START AT '2001-01-01']";
        for shared in [true, false] {
            let (reader, feeder) = setup(shared).await;
            let got = copy_messages_of(reader, &feeder, sql, "", SPARSE).await;
            let expected = lines(
                "\t",
                &[
                    &[T10, "1", "1", "1.00000000000000000000", "t", "1.5"],
                    &[T20, "0", r"\N", r"\N", r"\N", r"\N"],
                    &[
                        "2001-01-01 00:00:30",
                        "1",
                        "2",
                        "2.0000000000000000",
                        "u",
                        "-2",
                    ],
                ],
            );
            assert_lines(&got, &expected, &format!("text shared={shared}"));
            let (reader, feeder) = setup(shared).await;
            let got = copy_messages_of(reader, &feeder, sql, "(FORMAT binary)", SPARSE).await;
            let empty = binary_tuple(&got[1]);
            assert_eq!(empty.len(), 6);
            assert_eq!(secs_of(decode(&Type::TIMESTAMP, empty[0])), 20);
            assert_eq!(decode::<i64>(&Type::INT8, empty[1]), 0);
            assert_eq!(&empty[2..], &[None, None, None, None], "NULL aggregates");
            let (reader, feeder) = setup(shared).await;
            let got = simple_during_feed(reader, &feeder, sql, SPARSE).await;
            assert_eq!(
                got[1],
                vec![
                    Some(T20.to_string()),
                    Some("0".into()),
                    None,
                    None,
                    None,
                    None
                ]
            );
            // A compiled HAVING drops or keeps the empty instance's row as SQL does.
            for (having, wtimes) in [
                ("count(*) > 0", vec![T10, "2001-01-01 00:00:30"]),
                ("count(*) = 0", vec![T20]),
                ("sum(v) > 1", vec!["2001-01-01 00:00:30"]),
            ] {
                let (reader, feeder) = setup(shared).await;
                let sql = format!("{sql} HAVING {having}");
                let got = simple_during_feed(reader, &feeder, &sql, SPARSE).await;
                let got: Vec<&str> = got.iter().map(|r| r[0].as_deref().unwrap()).collect();
                assert_eq!(got, wtimes, "HAVING {having} shared={shared}");
            }
        }
    })
    .await
    .expect("test timed out");
}

/// A 10-second and a 20-second window: at :20 and at :40 both close, and their instances'
/// rows make one slide event with different window metadata. At :40 the 10-second
/// instance [:30, :40) is empty.
const TWO_WINDOWS: &[Tuple] = &[
    kv(1, "a", 1),
    kv(3, "b", 2),
    kv(12, "a", 4),
    kv(25, "c", 8),
    kv(41, "d", 16),
];

#[tokio::test]
async fn windows_closing_at_one_instant_each_carry_their_own_metadata() {
    tokio::time::timeout(LIMIT, async {
        let grouped = "SELECT k, count(*), sum(v), wstart(*), wrange(*), wtime(*) FROM s \
                       [RANGE BY '10 seconds' START AT '2001-01-01'] \
                       [RANGE BY '20 seconds' START AT '2001-01-01'] GROUP BY k";
        let ungrouped = "SELECT wstart(*), wrange(*), wslide(*), count(*), sum(v) FROM s \
                         [RANGE BY '10 seconds' START AT '2001-01-01'] \
                         [RANGE BY '20 seconds' START AT '2001-01-01']";
        let (r10, r20) = ("00:00:10", "00:00:20");
        let t = |s: &str| format!("2001-01-01 00:00:{s}");
        let (t00, t10, t20, t30, t40) = (t("00"), t("10"), t("20"), t("30"), t("40"));
        let grouped_rows: Vec<Vec<&str>> = vec![
            vec!["a", "1", "1", &t00, r10, &t10],
            vec!["b", "1", "2", &t00, r10, &t10],
            vec!["a", "1", "4", &t10, r10, &t20],
            vec!["a", "2", "5", &t00, r20, &t20],
            vec!["b", "1", "2", &t00, r20, &t20],
            vec!["c", "1", "8", &t20, r10, &t30],
            vec!["c", "1", "8", &t20, r20, &t40],
        ];
        let n = r"\N";
        let ungrouped_rows: Vec<Vec<&str>> = vec![
            vec![&t00, r10, r10, "2", "3"],
            vec![&t10, r10, r10, "1", "4"],
            vec![&t00, r20, r20, "3", "7"],
            vec![&t20, r10, r10, "1", "8"],
            vec![&t30, r10, r10, "0", n],
            vec![&t20, r20, r20, "1", "8"],
        ];
        for shared in [true, false] {
            for (sql, rows) in [(grouped, &grouped_rows), (ungrouped, &ungrouped_rows)] {
                let (reader, feeder) = setup(shared).await;
                let got = copy_messages_of(reader, &feeder, sql, "", TWO_WINDOWS).await;
                let rows: Vec<&[&str]> = rows.iter().map(Vec::as_slice).collect();
                assert_lines(&got, &lines("\t", &rows), &format!("{sql} shared={shared}"));
                let (reader, feeder) = setup(shared).await;
                let got = simple_during_feed(reader, &feeder, sql, TWO_WINDOWS).await;
                let expected: Vec<Vec<Option<String>>> = rows
                    .iter()
                    .map(|r| r.iter().map(|v| (*v != n).then(|| v.to_string())).collect())
                    .collect();
                assert_eq!(got, expected, "{sql} shared={shared}");
            }
        }
    })
    .await
    .expect("test timed out");
}

/// The rows of [`SELECT`] as text, the first `n` of them.
fn first_values(n: usize) -> Vec<Vec<Option<String>>> {
    owned(expected_values().into_iter().take(n).collect())
}

#[tokio::test]
async fn limit_cuts_a_slide_events_block_part_way_and_ends_the_query() {
    tokio::time::timeout(LIMIT, async {
        for shared in [true, false] {
            // Five of the fifteen rows of the event at :10; the query ends by itself, with
            // the stream still there.
            let (reader, feeder) = setup(shared).await;
            let sql = format!("{SELECT} LIMIT 5");
            let reading = tokio::spawn(async move { reader.simple_query(&sql).await.unwrap() });
            common::wait_for_queries(&feeder, 1).await;
            push(&feeder, TUPLES).await;
            assert_eq!(simple_rows(reading.await.unwrap()), first_values(5));
            // A limit the first event does not reach: its rows and one of the next event's.
            let (reader, feeder) = setup(shared).await;
            let sql = format!("COPY ({SELECT} LIMIT 16) TO STDOUT");
            let reading = tokio::spawn(async move {
                let out = reader.copy_out(sql.as_str()).await.unwrap();
                out.map(|m| m.unwrap().to_vec()).collect::<Vec<_>>().await
            });
            common::wait_for_queries(&feeder, 1).await;
            push(&feeder, TUPLES).await;
            assert_lines(&reading.await.unwrap(), &text_default(), "LIMIT 16");
            let left = common::rows(&feeder, "SELECT id FROM tcq_queries").await;
            assert!(left.is_empty(), "LIMIT ends the query: {left:?}");
        }
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn portal_row_limits_resume_inside_a_block_without_loss_or_repeat() {
    tokio::time::timeout(LIMIT, async {
        for shared in [true, false] {
            let (mut reader, feeder) = setup(shared).await;
            let reading = tokio::spawn(async move {
                let tx = reader.transaction().await.unwrap();
                let portal = tx.bind(SELECT, &[]).await.unwrap();
                let mut batches = Vec::new();
                loop {
                    let rows = tx.query_portal(&portal, 3).await.unwrap();
                    let batch: Vec<Vec<Option<String>>> = rows
                        .iter()
                        .map(|r| {
                            let k: Option<String> = r.get(0);
                            let sum: Option<i64> = r.get(3);
                            vec![
                                k,
                                Some(r.get::<_, i64>(2).to_string()),
                                sum.map(|s| s.to_string()),
                            ]
                        })
                        .collect();
                    let last = batch.len() < 3;
                    batches.push(batch);
                    if last {
                        break;
                    }
                }
                tx.rollback().await.unwrap();
                batches
            });
            feed_and_drop(&feeder, 1, TUPLES).await;
            let batches = reading.await.unwrap();
            assert_eq!(
                batches.iter().map(Vec::len).collect::<Vec<_>>(),
                [3, 3, 3, 3, 3, 1],
                "shared={shared}"
            );
            let expected: Vec<Vec<Option<String>>> = expected_values()
                .iter()
                .map(|r| {
                    vec![r[0], r[2], r[3]]
                        .into_iter()
                        .map(|v| v.map(str::to_string))
                        .collect()
                })
                .collect();
            assert_eq!(batches.concat(), expected, "shared={shared}");
        }
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn cursor_fetches_resume_inside_a_block_without_loss_or_repeat() {
    tokio::time::timeout(LIMIT, async {
        for shared in [true, false] {
            let (reader, feeder) = setup(shared).await;
            exec(&reader, &format!("BEGIN; DECLARE c CURSOR FOR {SELECT}")).await;
            feed_and_drop(&feeder, 1, TUPLES).await;
            let mut batches = Vec::new();
            loop {
                let msgs = reader.simple_query("FETCH 2 FROM c").await.unwrap();
                let batch = simple_rows(msgs);
                let last = batch.len() < 2;
                batches.push(batch);
                if last {
                    break;
                }
            }
            exec(&reader, "CLOSE c; COMMIT").await;
            assert_eq!(
                batches.iter().map(Vec::len).collect::<Vec<_>>(),
                [2, 2, 2, 2, 2, 2, 2, 2, 0],
                "shared={shared}"
            );
            assert_eq!(
                batches.concat(),
                owned(expected_values()),
                "shared={shared}"
            );
        }
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn compiled_and_evaluated_having_keep_the_exact_groups() {
    tokio::time::timeout(LIMIT, async {
        let rows_of = |keys: &[Option<&str>]| -> Vec<Vec<Option<String>>> {
            owned(
                expected_values()
                    .into_iter()
                    .filter(|r| r[1] == Some(T10) && keys.contains(&r[0]))
                    .collect(),
            )
        };
        let all_keys: Vec<Option<&str>> = expected_values().iter().map(|r| r[0]).collect();
        let cases: Vec<(&str, Vec<Vec<Option<String>>>)> = vec![
            // Compiled: aggregate <cmp> constant terms joined by AND.
            (
                "HAVING count(*) > 1",
                rows_of(&[Some("a,b"), Some("say \"hi\""), None]),
            ),
            (
                "HAVING count(*) > 1 AND max(f) > 0",
                rows_of(&[Some("a,b"), None]),
            ),
            // Evaluated: a term that reads the group key. NULL <> 'NULL' is NULL: dropped.
            ("HAVING k <> 'NULL'", {
                let mut keys = all_keys.clone();
                keys.retain(|k| k.is_some() && *k != Some("NULL"));
                let mut rows = rows_of(&keys);
                rows.push(owned(expected_values()).pop().unwrap());
                rows
            }),
        ];
        for shared in [true, false] {
            for (having, expected) in &cases {
                let (reader, feeder) = setup(shared).await;
                let sql = format!("{SELECT} {having}");
                let got = simple_during_feed(reader, &feeder, &sql, TUPLES).await;
                assert_eq!(&got, expected, "{having} shared={shared}");
            }
            // A compiled HAVING over an aggregate the select list does not show.
            let (reader, feeder) = setup(shared).await;
            let sql = "SELECT k, wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01'] \
                       GROUP BY k HAVING sum(v) >= 12";
            let got = copy_messages(reader, &feeder, sql, "(FORMAT csv)").await;
            let expected = lines(
                ",",
                &[
                    &["", T10],
                    &["semi;colon", T10],
                    &["it's", T10],
                    &["NULL", T10],
                ],
            );
            assert_lines(
                &got,
                &expected,
                &format!("hidden aggregate shared={shared}"),
            );
        }
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn repeated_columns_and_keys_after_aggregates() {
    tokio::time::timeout(LIMIT, async {
        let sql = "SELECT count(*), k, wtime(*), k, sum(v), wtime(*), count(*) FROM s \
                   [RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k";
        let expected: Vec<Vec<Option<String>>> = owned(
            expected_values()
                .into_iter()
                .map(|r| vec![r[2], r[0], r[1], r[0], r[3], r[1], r[2]])
                .collect(),
        );
        for shared in [true, false] {
            let (reader, feeder) = setup(shared).await;
            let got = simple_during_feed(reader, &feeder, sql, TUPLES).await;
            assert_eq!(got, expected, "shared={shared}");
            let (reader, feeder) = setup(shared).await;
            let got = copy_messages(reader, &feeder, sql, "(FORMAT csv)").await;
            assert_eq!(got.len(), 16);
            assert_eq!(
                got[0],
                b"2,\"a,b\",2001-01-01 00:00:10,\"a,b\",3,2001-01-01 00:00:10,2\n"
            );
            assert_eq!(
                got[7],
                b"2,,2001-01-01 00:00:10,,15,2001-01-01 00:00:10,2\n"
            );
            assert_eq!(
                got[15],
                b"1,\"a,b\",2001-01-01 00:00:20,\"a,b\",10,2001-01-01 00:00:20,1\n"
            );
        }
    })
    .await
    .expect("test timed out");
}

/// A block of one column: CSV quotes `\.` there, where it would read as the end of the
/// data, and only there.
#[tokio::test]
async fn a_single_column_block_quotes_the_end_of_data_marker() {
    tokio::time::timeout(LIMIT, async {
        let sql = "SELECT k FROM s [RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k";
        let tuples: &[Tuple] = &[
            kv(1, "\\.", 1),
            kv(2, "x", 1),
            (3, None, None, None, None),
            kv(15, "z", 1),
        ];
        for shared in [true, false] {
            let (reader, feeder) = setup(shared).await;
            let got = copy_messages_of(reader, &feeder, sql, "(FORMAT csv)", tuples).await;
            assert_lines(&got, &lines(",", &[&["\"\\.\""], &["x"], &[""]]), "csv");
            let (reader, feeder) = setup(shared).await;
            let got = copy_messages_of(reader, &feeder, sql, "", tuples).await;
            assert_lines(&got, &lines("\t", &[&["\\\\."], &["x"], &["\\N"]]), "text");
        }
    })
    .await
    .expect("test timed out");
}

/// FORCE_QUOTE and FORCE_NOT_NULL are not implemented: they are refused with a clear
/// error, not ignored.
#[tokio::test]
async fn force_quote_and_force_not_null_are_refused_clearly() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    for option in ["FORCE_QUOTE (k)", "FORCE_NOT_NULL (k)"] {
        let err = c
            .copy_out(&*format!(
                "COPY ({SELECT}) TO STDOUT (FORMAT csv, {option})"
            ))
            .await
            .err()
            .unwrap_or_else(|| panic!("{option} is refused"));
        assert_eq!(sqlstate(&err), "0A000", "{option}: {err}");
    }
}

/// A connection whose NOTICEs are forwarded to the returned receiver.
async fn connect_with_notices(port: u16) -> (Client, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (client, mut connection) =
        tokio_postgres::connect(&common::conn_string(port), tokio_postgres::NoTls)
            .await
            .unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(msg)) = messages.next().await {
            if let tokio_postgres::AsyncMessage::Notice(n) = msg {
                let _ = tx.send(n.message().to_string());
            }
        }
    });
    (client, rx)
}

/// A subscriber that chose `output_overflow = 'skip'` and falls behind loses whole slide
/// events, each counted in a NOTICE where it was skipped: what it fetches is complete
/// blocks, in order, and fetched plus skipped rows are every row the query produced.
#[tokio::test]
async fn a_skipping_subscriber_loses_whole_blocks_and_is_told_how_many_rows() {
    const SECONDS: usize = 200;
    const GROUPS: usize = 50;
    tokio::time::timeout(LIMIT, async {
        let config = tcq::engine::Config {
            limits: tcq::engine::Limits {
                output_queue_bytes: 64 << 10,
                ..tcq::engine::Limits::default()
            },
        };
        let port = common::start_server_with(config);
        let admin = connect(port).await;
        exec(&admin, STREAM).await;
        let (idle, mut notices) = connect_with_notices(port).await;
        exec(
            &idle,
            "SET tcq.output_overflow = 'skip'; BEGIN; DECLARE c CURSOR FOR \
             SELECT k, count(*), wtime(*) FROM s [RANGE BY '1 second' START AT '2001-01-01'] \
             GROUP BY k",
        )
        .await;
        common::wait_for_queries(&admin, 1).await;
        // GROUPS keys in every second; the last second's instance never closes.
        let mut text = String::new();
        for sec in 0..SECONDS {
            for g in 0..GROUPS {
                let (m, s) = (sec / 60, sec % 60);
                text += &format!("2001-01-01 00:{m:02}:{s:02}\tk{g:02}\t1\t\\N\t\\N\n");
            }
        }
        let sink = admin.copy_in("COPY s FROM STDIN").await.unwrap();
        futures::pin_mut!(sink);
        futures::SinkExt::send(&mut sink, bytes::Bytes::from(text))
            .await
            .unwrap();
        assert_eq!(sink.finish().await.unwrap(), (SECONDS * GROUPS) as u64);
        exec(&admin, "DROP STREAM s").await;
        let got = simple_rows(idle.simple_query("FETCH ALL FROM c").await.unwrap());
        let mut skipped = 0;
        while let Ok(notice) = notices.try_recv() {
            let words: Vec<&str> = notice.split(' ').collect();
            assert_eq!(words[0], "skipped", "{notice}");
            skipped += words[1].parse::<usize>().unwrap();
        }
        assert!(
            skipped > 0,
            "the idle subscriber skipped nothing; it fetched {} rows",
            got.len()
        );
        assert_eq!(got.len() + skipped, (SECONDS - 1) * GROUPS);
        // Whole events only: each fetched wtime has every key once, in first-seen order.
        assert_eq!(got.len() % GROUPS, 0);
        let mut last_wtime = String::new();
        for event in got.chunks(GROUPS) {
            let wtime = event[0][2].clone().unwrap();
            assert!(
                wtime > last_wtime,
                "events in order: {wtime} after {last_wtime}"
            );
            for (g, row) in event.iter().enumerate() {
                let key = format!("k{g:02}");
                assert_eq!(row, &[Some(key), Some("1".into()), Some(wtime.clone())]);
            }
            last_wtime = wtime;
        }
        // The first event fitted in the empty queue.
        assert_eq!(got[0][2].as_deref(), Some("2001-01-01 00:00:01"));
    })
    .await
    .expect("test timed out");
}

/// With a timestamptz event time, wstart(*) and wtime(*) are timestamptz and a block's
/// window metadata, formatted once for all its rows, is shown in the session's TimeZone
/// like any other timestamptz.
#[tokio::test]
async fn timestamptz_window_metadata_follows_the_session_time_zone() {
    tokio::time::timeout(LIMIT, async {
        let sql = "SELECT k, wstart(*), wtime(*), count(*) FROM z \
                   [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00+00'] GROUP BY k";
        let insert = "INSERT INTO z VALUES ('2001-01-01 00:00:01+00', 'a'), \
                      ('2001-01-01 00:00:02+00', 'b'), ('2001-01-01 00:00:11+00', 'a')";
        for shared in [true, false] {
            let (reader, feeder) = setup(shared).await;
            exec(
                &feeder,
                "CREATE STREAM z (ts timestamptz TIMESTAMPCOLUMN, k text)",
            )
            .await;
            exec(&reader, "SET TimeZone = 'America/New_York'").await;
            let reading = tokio::spawn(async move {
                let out = reader
                    .copy_out(&*format!("COPY ({sql}) TO STDOUT (FORMAT csv)"))
                    .await
                    .unwrap();
                out.map(|m| String::from_utf8(m.unwrap().to_vec()).unwrap())
                    .collect::<Vec<_>>()
                    .await
            });
            common::wait_for_queries(&feeder, 1).await;
            exec(&feeder, insert).await;
            exec(&feeder, "DROP STREAM z").await;
            assert_eq!(
                reading.await.unwrap(),
                [
                    "a,2000-12-31 19:00:00-05,2000-12-31 19:00:10-05,1\n",
                    "b,2000-12-31 19:00:00-05,2000-12-31 19:00:10-05,1\n",
                ],
                "shared={shared}"
            );
        }
    })
    .await
    .expect("test timed out");
}

/// A block-shaped query on a subset of a running plan's GROUP BY keys rolls up from the
/// plan's finer groups (the roll-up member path builds its block from merged groups): its
/// rows, window metadata included, equal the same query's alone, exactly. The set-up is
/// `a_query_on_a_subset_of_the_keys_rolls_up_from_the_running_plan` in share_wire.rs.
#[tokio::test]
async fn a_roll_up_member_emits_the_blocks_the_query_emits_alone() {
    const FINE: &str = "SELECT origin, dest, count(*), avg(delay) FROM routes \
         [RANGE BY '10 minutes' START AT 'epoch'] [RANGE BY '20 minutes' START AT 'epoch'] \
         GROUP BY origin, dest";
    const COARSE: &str = "SELECT origin, count(*), max(delay), wstart(*), wrange(*), wtime(*) \
         FROM routes [RANGE BY '10 minutes'] [RANGE BY '20 minutes'] GROUP BY origin";
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let admin = connect(port).await;
        exec(
            &admin,
            "CREATE STREAM routes (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text, \
             dest text)",
        )
        .await;
        let (fine, coarse, alone) = (
            connect(port).await,
            connect(port).await,
            connect(port).await,
        );
        exec(&fine, &format!("BEGIN; DECLARE q CURSOR FOR {FINE}")).await;
        common::wait_for_queries(&admin, 1).await;
        // 0.2 events per second against 3 fine groups: rolling up is the cheaper plan.
        let early: Vec<String> = (0..24)
            .map(|i| {
                let (o, d) = [("ATL", "ORD"), ("ATL", "SFO"), ("ORD", "ATL")][i % 3];
                let (m, s) = (i * 5 / 60, i * 5 % 60);
                format!("('2001-01-01 00:{m:02}:{s:02}', {i}, '{o}', '{d}')")
            })
            .collect();
        exec(
            &admin,
            &format!("INSERT INTO routes VALUES {}", early.join(", ")),
        )
        .await;
        exec(&coarse, &format!("BEGIN; DECLARE q CURSOR FOR {COARSE}")).await;
        exec(&alone, "SET tcq.share_across_queries = off").await;
        exec(&alone, &format!("BEGIN; DECLARE q CURSOR FOR {COARSE}")).await;
        common::wait_for_queries(&admin, 3).await;
        let ids = common::rows(&admin, "SELECT id FROM tcq_queries ORDER BY id").await;
        let rollups = common::rows(&admin, "SELECT rollup_queries FROM tcq_plans").await;
        assert!(
            !rollups.is_empty() && rollups.iter().all(|r| r[0] == ids[1][0]),
            "the coarse query rolls up: {rollups:?}"
        );
        exec(
            &admin,
            "INSERT INTO routes VALUES ('2100-01-01 00:11', 4, 'ATL', 'ORD'), \
             ('2100-01-01 00:12', 6, 'ATL', 'SFO'), ('2100-01-01 00:14', 1, 'ATL', 'ORD'), \
             ('2100-01-01 00:15', 3, 'ORD', 'ATL'), ('2100-01-01 00:22', 7, 'ORD', 'SFO'), \
             ('2100-01-01 00:25', 2, 'ATL', 'SFO'), ('2100-01-01 00:41', 0, 'SFO', 'ATL')",
        )
        .await;
        // tcq_queries passes a barrier through the stream: every row of the INSERT has
        // reached the cursors, and FETCH ALL with a zero timeout takes exactly those.
        common::wait_for_queries(&admin, 3).await;
        let fetch = "FETCH ALL FROM q WITH (timeout = 0)";
        let got = common::rows(&coarse, fetch).await;
        assert_eq!(got, common::rows(&alone, fetch).await);
        // tcq_queries counts a block's rows like any others'.
        let out = common::rows(&admin, "SELECT id, rows_out FROM tcq_queries ORDER BY id").await;
        assert_eq!(
            (&out[1][1], &out[2][1]),
            (&"8".to_string(), &"8".to_string()),
            "{out:?}"
        );
        let t = |hm: &str| format!("2100-01-01 {hm}:00");
        let (m10, m20) = ("00:10:00", "00:20:00");
        let row = |o: &str, c: &str, m: &str, start: &str, range: &str, end: &str| {
            vec![o, c, m, &t(start), range, &t(end)]
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        // At 00:20 the 10-minute instance's groups, then the 20-minute one's, each in
        // first-seen order; [00:30, 00:40) is empty and emits nothing.
        assert_eq!(
            got,
            vec![
                row("ATL", "3", "6", "00:10", m10, "00:20"),
                row("ORD", "1", "3", "00:10", m10, "00:20"),
                row("ATL", "3", "6", "00:00", m20, "00:20"),
                row("ORD", "1", "3", "00:00", m20, "00:20"),
                row("ORD", "1", "7", "00:20", m10, "00:30"),
                row("ATL", "1", "2", "00:20", m10, "00:30"),
                row("ORD", "1", "7", "00:20", m20, "00:40"),
                row("ATL", "1", "2", "00:20", m20, "00:40"),
            ]
        );
    })
    .await
    .expect("test timed out");
}

/// A binary COPY whose query ends before any row still carries the header, then the
/// trailer: the header rides with the first row otherwise.
#[tokio::test]
async fn an_empty_binary_copy_is_a_header_and_a_trailer() {
    tokio::time::timeout(LIMIT, async {
        for shared in [true, false] {
            let (reader, feeder) = setup(shared).await;
            let got =
                copy_messages_of(reader, &feeder, SELECT, "(FORMAT binary)", &[kv(1, "a", 1)])
                    .await;
            assert_eq!(
                got.concat(),
                [BINARY_HEADER, b"\xff\xff"].concat(),
                "shared={shared}"
            );
        }
    })
    .await
    .expect("test timed out");
}

/// Large slide events: each COPY line is cut from one buffer per event, and buffers are
/// reused from event to event. Three events of 2,000 groups each arrive whole, each line
/// exact, one per message, in first-seen order.
#[tokio::test]
async fn large_events_arrive_whole_line_by_line() {
    const GROUPS: usize = 2000;
    tokio::time::timeout(LIMIT, async {
        let (reader, feeder) = setup(true).await;
        let sql = "COPY (SELECT k, count(*), sum(v), wtime(*) FROM s \
                   [RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k) TO STDOUT \
                   (FORMAT csv)";
        let reading = tokio::spawn(async move {
            let out = reader.copy_out(sql).await.unwrap();
            out.map(|m| String::from_utf8(m.unwrap().to_vec()).unwrap())
                .collect::<Vec<_>>()
                .await
        });
        common::wait_for_queries(&feeder, 1).await;
        // Event e (ending at 10 * (e + 1) s) holds e + 1 tuples of each key, v = the key's
        // number; the tuple at :35 closes the third.
        let mut text = String::new();
        for e in 0..3 {
            for copy in 0..=e {
                for g in 0..GROUPS {
                    let sec = 10 * e + copy;
                    text += &format!("2001-01-01 00:00:{sec:02}\tkey {g:04}\t{g}\t\\N\t\\N\n");
                }
            }
        }
        text += "2001-01-01 00:00:35\tlast\t0\t\\N\t\\N\n";
        let sink = feeder.copy_in("COPY s FROM STDIN").await.unwrap();
        futures::pin_mut!(sink);
        futures::SinkExt::send(&mut sink, bytes::Bytes::from(text))
            .await
            .unwrap();
        assert_eq!(sink.finish().await.unwrap(), (6 * GROUPS + 1) as u64);
        exec(&feeder, "DROP STREAM s").await;
        let got = reading.await.unwrap();
        let mut expected = Vec::new();
        for e in 0..3 {
            let n = e + 1;
            let wtime = format!("2001-01-01 00:00:{:02}", 10 * n);
            for g in 0..GROUPS {
                expected.push(format!("key {g:04},{n},{},{wtime}\n", g * n));
            }
        }
        assert_eq!(got.len(), expected.len());
        for (i, (got, expected)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(got, expected, "message {i}");
        }
    })
    .await
    .expect("test timed out");
}

/// psycopg's `cursor.copy()` iterates CopyData messages as they arrive: one row each, all
/// of them, in order, byte for byte as tokio-postgres receives them; its `copy.rows()`
/// decodes binary COPY into the same values, and a server-side cursor's `fetchmany(2)`
/// gets every row once, two at a time. Skipped, with a message, when python3 or
/// psycopg is missing (.ci/run installs it).
#[test]
fn psycopg_copy_reads_every_block_row_in_order() {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/block_copy.py");
    let Some(stdout) = common::run_python(&script, "psycopg") else {
        return;
    };
    let mut printed: Vec<&str> = stdout.lines().collect();
    assert_eq!(printed.pop(), Some("done"));
    let of = |label: &str| -> Vec<serde_json::Value> {
        printed
            .iter()
            .filter_map(|l| l.strip_prefix(label)?.strip_prefix(' '))
            .map(|json| serde_json::from_str(json).expect("a JSON line"))
            .collect()
    };
    let strings = |values: Vec<serde_json::Value>| -> Vec<String> {
        values
            .into_iter()
            .map(|v| v.as_str().expect("a string").to_string())
            .collect()
    };
    assert_eq!(
        strings(of("text")),
        text_default(),
        "text CopyData messages"
    );
    assert_eq!(strings(of("csv")), csv_default(), "CSV CopyData messages");
    let binary = of("binary");
    let expected = expected_values();
    assert_eq!(binary.len(), expected.len(), "binary rows: {binary:?}");
    for (got, want) in binary.iter().zip(&expected) {
        let got: Vec<Option<&str>> = got
            .as_array()
            .expect("a row")
            .iter()
            .map(serde_json::Value::as_str)
            .collect();
        // Python's str() of a datetime, int, Decimal and text is PostgreSQL's text; floats
        // are compared as numbers (str(-3.0) is "-3.0").
        assert_eq!(got[..7], want[..7], "binary row {got:?}");
        let float = |v: Option<&str>| v.map(|x| x.parse::<f64>().expect("a float"));
        assert_eq!(
            got[7..].iter().map(|v| float(*v)).collect::<Vec<_>>(),
            want[7..].iter().map(|v| float(*v)).collect::<Vec<_>>(),
            "binary row {got:?}"
        );
    }
    let batches = of("cursor");
    let sizes: Vec<usize> = batches
        .iter()
        .map(|b| b.as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [2, 2, 2, 2, 2, 2, 2, 2, 0], "cursor batches");
    let rows: Vec<Vec<Option<String>>> = batches
        .iter()
        .flat_map(|b| b.as_array().unwrap().clone())
        .map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .collect();
    let first_four: Vec<Vec<Option<String>>> = owned(expected_values())
        .into_iter()
        .map(|mut r| {
            r.truncate(4);
            r
        })
        .collect();
    assert_eq!(rows, first_four, "cursor rows");
}

/// asyncpg: a cursor (portals of three rows per Execute), `fetch` (binary results) and
/// `copy_from_query` (CSV) each get every row of the block query, exactly and in order.
/// Skipped, with a message, when python3 or asyncpg is missing (.ci/run installs it).
#[test]
fn asyncpg_reads_every_block_row_by_cursor_fetch_and_copy() {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/block_asyncpg.py");
    let Some(stdout) = common::run_python(&script, "asyncpg") else {
        return;
    };
    let printed: Vec<(&str, &str)> = stdout
        .lines()
        .map(|l| l.split_once(' ').unwrap_or((l, "")))
        .collect();
    assert_eq!(
        printed.iter().map(|p| p.0).collect::<Vec<_>>(),
        ["cursor", "fetch", "copy", "done"]
    );
    let first_five: Vec<Vec<Option<String>>> = owned(expected_values())
        .into_iter()
        .map(|mut r| {
            r.truncate(5);
            r
        })
        .collect();
    for (label, json) in &printed[..2] {
        let rows: Vec<Vec<Option<String>>> = serde_json::from_str(json).expect("JSON rows");
        assert_eq!(rows, first_five, "{label}");
    }
    let copy: String = serde_json::from_str(printed[2].1).expect("a JSON string");
    assert_eq!(copy, csv_default()[1..].concat(), "copy_from_query");
}

/// `SELECT wtime(*), count(*), max(v)` over a minute sliding by the second: most of its
/// slide events see no tuple enter or leave, and are emitted as runs of the event before.
fn minute_by_second(tail: &str, having: &str, limit: &str) -> String {
    format!(
        "SELECT wtime(*), count(*), max(v) FROM s [RANGE BY '1 minute' SLIDE BY '1 second' \
         START AT '2001-01-01'{tail}]{having}{limit}"
    )
}

/// `2001-01-01 hh:mm:ss` for `secs` seconds into that day.
fn stamp(secs: u64) -> String {
    format!(
        "2001-01-01 {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The COPY text lines of every slide event of [`minute_by_second`] ending at `ends` over
/// `tuples` (each event computed from every tuple in its minute), those `keep` accepts.
fn minute_lines(
    tuples: &[Tuple],
    ends: std::ops::RangeInclusive<u64>,
    keep: impl Fn(i64) -> bool,
) -> Vec<String> {
    let mut lines = Vec::new();
    for e in ends {
        let inside: Vec<i32> = tuples
            .iter()
            .filter(|t| t.0 + 60 >= e && t.0 < e)
            .map(|t| t.2.expect("v"))
            .collect();
        let n = inside.len() as i64;
        if !keep(n) {
            continue;
        }
        let max = inside
            .iter()
            .max()
            .map_or("\\N".to_string(), i32::to_string);
        lines.push(format!("{}\t{n}\t{max}\n", stamp(e)));
    }
    lines
}

/// Sparse tuples: one exactly on an instance boundary (:60), runs of tens of events
/// between arrivals and departures.
const QUIET: &[Tuple] = &[
    (5, None, Some(1), None, None),
    (6, None, Some(2), None, None),
    (30, None, Some(3), None, None),
    (60, None, Some(4), None, None),
    (61, None, Some(5), None, None),
    (100, None, Some(6), None, None),
    (130, None, Some(2), None, None),
    (200, None, Some(8), None, None),
];

/// `query` read by COPY TO on one connection and by a plain SELECT on another (two members
/// of one shared plan, or two plans) while `tuples` are fed; then `after` (if any) runs on
/// the feeder before the stream is dropped. Returns the COPY lines and the SELECT's rows as
/// the same lines.
async fn copy_and_select(
    shared: bool,
    query: &str,
    tuples: &[Tuple],
    after: Option<&str>,
) -> (Vec<String>, Vec<String>) {
    let port = start_server();
    let (copier, selector, feeder) = (
        connect(port).await,
        connect(port).await,
        connect(port).await,
    );
    exec(&feeder, STREAM).await;
    let share = if shared { "on" } else { "off" };
    for c in [&copier, &selector] {
        exec(c, &format!("SET tcq.share_across_queries = {share}")).await;
    }
    let sql = format!("COPY ({query}) TO STDOUT");
    let copying = tokio::spawn(async move {
        let out = copier.copy_out(sql.as_str()).await.unwrap();
        out.map(|m| String::from_utf8(m.unwrap().to_vec()).unwrap())
            .collect::<Vec<_>>()
            .await
    });
    common::wait_for_queries(&feeder, 1).await;
    let sql = query.to_string();
    let selecting = tokio::spawn(async move { selector.simple_query(&sql).await.unwrap() });
    common::wait_for_queries(&feeder, 2).await;
    push(&feeder, tuples).await;
    if let Some(sql) = after {
        exec(&feeder, sql).await;
    }
    exec(&feeder, "DROP STREAM s").await;
    let selected = simple_rows(selecting.await.unwrap())
        .into_iter()
        .map(|r| {
            let f: Vec<String> = r
                .into_iter()
                .map(|v| v.unwrap_or_else(|| "\\N".into()))
                .collect();
            format!("{}\n", f.join("\t"))
        })
        .collect();
    (copying.await.unwrap(), selected)
}

#[tokio::test]
async fn quiet_slide_events_arrive_as_every_event_computed() {
    tokio::time::timeout(LIMIT * 3, async {
        for shared in [true, false] {
            let all = minute_lines(QUIET, 60..=200, |_| true);
            let (copied, selected) =
                copy_and_select(shared, &minute_by_second("", "", ""), QUIET, None).await;
            assert_eq!(copied, all, "COPY, shared {shared}");
            assert_eq!(selected, all, "SELECT, shared {shared}");
            // LIMIT inside a run (the events ending at :67 to :89 hold the same rows).
            let q = minute_by_second("", "", " LIMIT 20");
            let (copied, selected) = copy_and_select(shared, &q, QUIET, None).await;
            assert_eq!(copied, all[..20], "LIMIT, shared {shared}");
            assert_eq!(selected, all[..20], "LIMIT, shared {shared}");
            // A compiled HAVING keeps some runs and drops others whole; one that reads
            // wtime(*) keeps part of a run.
            let q = minute_by_second("", " HAVING count(*) >= 3", "");
            let want = minute_lines(QUIET, 60..=200, |n| n >= 3);
            assert!(want.len() > 10 && want.len() < all.len());
            let (copied, selected) = copy_and_select(shared, &q, QUIET, None).await;
            assert_eq!(
                (&copied, &selected),
                (&want, &want),
                "HAVING, shared {shared}"
            );
            let q = minute_by_second(
                "",
                " HAVING count(*) >= 2 AND wtime(*) < '2001-01-01 00:01:20'",
                "",
            );
            let want: Vec<String> = minute_lines(QUIET, 60..=79, |n| n >= 2);
            let (copied, selected) = copy_and_select(shared, &q, QUIET, None).await;
            assert_eq!(
                (&copied, &selected),
                (&want, &want),
                "HAVING on wtime, shared {shared}"
            );
        }
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn quiet_runs_under_slack_and_across_an_advanced_empty_stretch() {
    tokio::time::timeout(LIMIT * 2, async {
        for shared in [true, false] {
            // Late tuples within SLACK (:20 after :30, :90 after :100): time is the highest
            // timestamp less 15 s, so every event up to :185 has all of its tuples.
            let late: &[Tuple] = &[
                (5, None, Some(1), None, None),
                (30, None, Some(3), None, None),
                (20, None, Some(9), None, None),
                (100, None, Some(6), None, None),
                (90, None, Some(2), None, None),
                (200, None, Some(8), None, None),
            ];
            let q = minute_by_second(" SLACK '15 seconds'", "", "");
            let want = minute_lines(late, 60..=185, |_| true);
            let (copied, selected) = copy_and_select(shared, &q, late, None).await;
            assert_eq!(
                (&copied, &selected),
                (&want, &want),
                "SLACK, shared {shared}"
            );
            // tcq_advance to :10:00 across a run and a long empty stretch.
            let two = &QUIET[..3];
            let want = minute_lines(two, 60..=600, |_| true);
            let advance = "SELECT tcq_advance('s', '2001-01-01 00:10:00')";
            let (copied, selected) =
                copy_and_select(shared, &minute_by_second("", "", ""), two, Some(advance)).await;
            assert_eq!(copied.len(), 541);
            assert_eq!(
                (&copied, &selected),
                (&want, &want),
                "tcq_advance, shared {shared}"
            );
        }
    })
    .await
    .expect("test timed out");
}

/// psycopg: COPY TO and a plain SELECT read the same quiet-run query at once, each every
/// slide event's row exactly. Skipped, with a message, when python3 or psycopg is missing.
#[test]
fn psycopg_copy_and_select_read_quiet_runs_exactly() {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/quiet_runs.py");
    let Some(stdout) = common::run_python(&script, "psycopg") else {
        return;
    };
    let want = minute_lines(QUIET, 60..=200, |_| true);
    let printed: Vec<(&str, &str)> = stdout
        .lines()
        .map(|l| l.split_once(' ').unwrap_or((l, "")))
        .collect();
    assert_eq!(
        printed.iter().map(|p| p.0).collect::<Vec<_>>(),
        ["copy", "select", "done"]
    );
    for (label, json) in &printed[..2] {
        let lines: Vec<String> = serde_json::from_str(json).expect("JSON lines");
        assert_eq!(lines, want, "{label}");
    }
}
