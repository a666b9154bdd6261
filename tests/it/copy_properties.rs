//! COPY's fast parsing paths against the general one, over a real socket: random rows of
//! every type (edge integers, canonical and other timestamps, floats, text with quotes,
//! delimiters, backslashes, newlines and NULL markers, over-long varchars), written in CSV
//! or text format with random quoting and escaping and sent in CopyData pieces cut at
//! random bytes. The oracle is `tcq::types::parse_value`, the general input function, on
//! each field's text: the COPY must store exactly its values (read back as text), or fail
//! on the first field it refuses with its message and line number.

use crate::common;

use std::time::Duration;

use bytes::Bytes;
use common::{connect, rows, start_server};
use futures::SinkExt;
use proptest::prelude::*;
use tcq::types::{format_value, parse_value, DataType};

/// Every COPY gives up after this long instead of hanging.
const LIMIT: Duration = Duration::from_secs(30);

/// The table's columns after `id` (the row number, for ordering).
const COLUMNS: [(&str, DataType); 10] = [
    ("i2", DataType::Int2),
    ("i4", DataType::Int4),
    ("i8", DataType::Int8),
    ("f8", DataType::Float8),
    ("f4", DataType::Float4),
    ("ts", DataType::Timestamp),
    ("tx", DataType::Text),
    ("vc", DataType::Varchar(Some(5))),
    ("b", DataType::Bool),
    ("n", DataType::Numeric),
];

/// The table each case fills, `{}` its name (each test has its own: tests run at once).
const CREATE: &str = "CREATE TABLE {} (id int, i2 smallint, i4 integer, i8 bigint, \
    f8 double precision, f4 real, ts timestamp, tx text, vc varchar(5), b boolean, n numeric)";

fn int_text(ty: DataType) -> BoxedStrategy<String> {
    match ty {
        DataType::Int2 => any::<i16>().prop_map(|v| v.to_string()).boxed(),
        DataType::Int4 => any::<i32>().prop_map(|v| v.to_string()).boxed(),
        _ => any::<i64>().prop_map(|v| v.to_string()).boxed(),
    }
}

/// Integer texts at and past the edges, some valid only for wider types or only to the
/// general parser.
fn int_edge() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "32767",
        "-32768",
        "32768",
        "2147483647",
        "-2147483648",
        "2147483648",
        "999999999999999999",
        "-999999999999999999",
        "9223372036854775807",
        "9223372036854775808",
        "0",
        "-0",
        "007",
        "+5",
        " 12",
        "12 ",
        "1_000",
        "",
        "-",
        "1e3",
    ])
    .prop_map(String::from)
}

fn float_text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (-1e6f64..1e6).prop_map(|v| format!("{v}")),
        2 => (-1e6f64..1e6, 0usize..8).prop_map(|(v, d)| format!("{v:.d$}")),
        1 => (-1e30f32..1e30).prop_map(|v| format!("{v:e}")),
        2 => "-?[0-9]{1,20}(\\.[0-9]{0,20})?",
    ]
}

fn float_edge() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "NaN",
        "Infinity",
        "-Infinity",
        "1e400",
        "3.5e38",
        "-0",
        ".5",
        "5.",
        "1.2.3",
        "",
        "0.1",
        "123456789012345678",
        "1e-400",
    ])
    .prop_map(String::from)
}

fn timestamp_text() -> impl Strategy<Value = String> {
    (
        1u32..10_000,
        1u32..13,
        1u32..29,
        0u32..24,
        0u32..60,
        0u32..60,
        prop::option::of("[0-9]{1,6}"),
        prop::bool::ANY,
    )
        .prop_map(|(y, mo, d, h, mi, s, frac, t)| {
            let sep = if t { 'T' } else { ' ' };
            let frac = frac.map(|f| format!(".{f}")).unwrap_or_default();
            format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}")
        })
}

fn timestamp_edge() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => (1u32..10_000, 1u32..13, 1u32..32, 0u32..25, 0u32..61, 0u32..61, prop::option::of("[0-9]{1,7}"), prop::bool::ANY)
            .prop_map(|(y, mo, d, h, mi, s, frac, t)| {
                let sep = if t { 'T' } else { ' ' };
                let frac = frac.map(|f| format!(".{f}")).unwrap_or_default();
                format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}")
            }),
        1 => prop::sample::select(vec![
            "2001-01-01", "2001-01-01 00:00", "2000-02-29 12:00:00", "2001-02-29 12:00:00",
            "2001-01-01 24:00:00", "2001-01-01 00:00:60", "2001-01-01 00:00:00+02",
            "2001-1-1 0:0:0", "epoch", "2001-01-01 00:00:00.", "", "yesterday noon",
        ])
        .prop_map(String::from),
    ]
}

fn text_text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            6 => prop::char::range('a', 'z'),
            1 => prop::sample::select(vec![',', '"', '\\', '\t', '\n', '\r', ' ', 'é', 'N', '.', '\u{1F600}']),
        ],
        0..max,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

/// A field of type `ty`: NULL now and then; with `wild`, also texts that may be invalid.
fn field(ty: DataType, wild: bool) -> BoxedStrategy<Option<String>> {
    let edge = if wild { 1 } else { 0 };
    let value: BoxedStrategy<String> = match ty {
        DataType::Int2 | DataType::Int4 | DataType::Int8 => {
            prop_oneof![12 => int_text(ty), edge => int_edge()].boxed()
        }
        DataType::Float4 | DataType::Float8 => {
            prop_oneof![12 => float_text(), edge => float_edge()].boxed()
        }
        DataType::Timestamp => {
            prop_oneof![12 => timestamp_text(), edge => timestamp_edge()].boxed()
        }
        DataType::Text => prop_oneof![
            4 => text_text(12),
            1 => prop::sample::select(vec!["\\N", "\\.", "", "NULL"]).prop_map(String::from),
        ]
        .boxed(),
        DataType::Varchar(_) => prop_oneof![
            12 => text_text(6),
            edge => prop::sample::select(vec!["abcde  ", "abcdef"]).prop_map(String::from),
        ]
        .boxed(),
        DataType::Bool => prop_oneof![
            12 => prop::sample::select(vec!["t", "f", "true", "FALSE", "yes", "0"]).prop_map(String::from),
            edge => Just("maybe".to_string()),
        ]
        .boxed(),
        _ => "-?[0-9]{1,8}(\\.[0-9]{0,4})?".boxed(),
    };
    prop_oneof![1 => Just(None), 6 => value.prop_map(Some)].boxed()
}

/// One row: its fields, NULL as `None`; `wild`: edge texts too, some of them invalid.
fn row(wild: bool) -> impl Strategy<Value = Vec<Option<String>>> {
    COLUMNS
        .iter()
        .map(|&(_, ty)| field(ty, wild))
        .collect::<Vec<_>>()
}

/// A CSV field: NULL unquoted and empty; a value quoted when it must be (or by chance).
fn csv_field(f: &Option<String>, quote_anyway: bool) -> String {
    match f {
        None => String::new(),
        Some(s) => {
            let must = s.is_empty()
                || s == "\\."
                || s.contains([',', '"', '\n', '\r'])
                || s.starts_with(' ');
            if must || quote_anyway {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.clone()
            }
        }
    }
}

/// A text-format field: NULL as `\N`; backslash, tab, newline and CR escaped, and now and
/// then a letter written as an octal escape.
fn text_field(f: &Option<String>, octal: bool) -> String {
    match f {
        None => "\\N".into(),
        Some(s) => {
            let mut out = String::new();
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\t' => out.push_str("\\t"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    'a'..='z' if octal => out.push_str(&format!("\\{:03o}", c as u32)),
                    c => out.push(c),
                }
            }
            out
        }
    }
}

/// What the general parser makes of the rows: every stored row as text (NULL as "NULL"),
/// or the first refusal (line number, message).
fn oracle(rows: &[Vec<Option<String>>]) -> Result<Vec<Vec<String>>, (usize, String)> {
    let mut out = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let mut line = vec![i.to_string()];
        for (f, &(_, ty)) in r.iter().zip(&COLUMNS) {
            match f {
                None => line.push("NULL".into()),
                Some(s) => match parse_value(s, ty) {
                    Ok(v) => {
                        let mut text = String::new();
                        format_value(&v, &mut text);
                        line.push(text);
                    }
                    Err(e) => return Err((i + 1, e.to_string())),
                },
            }
        }
        out.push(line);
    }
    Ok(out)
}

#[derive(Debug, Clone)]
struct Case {
    rows: Vec<Vec<Option<String>>>,
    csv: bool,
    /// Per field: quote it anyway (CSV) or write its letters in octal (text).
    marks: Vec<bool>,
    /// Where the data is cut into CopyData messages (byte offsets, any order).
    cuts: Vec<usize>,
    /// Lines end in `\r\n` rather than `\n`.
    crlf: bool,
}

/// Two cases in three hold only valid texts (the COPY must store every row); the third
/// draws edge texts, so it usually ends on a refusal the general parser also makes.
fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![
            2 => prop::collection::vec(row(false), 1..60),
            1 => prop::collection::vec(row(true), 1..10),
        ],
        prop::bool::ANY,
        prop::collection::vec(prop::bool::weighted(0.1), 400),
        prop::collection::vec(0usize..4000, 0..8),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(rows, csv, marks, cuts, crlf)| Case {
            rows,
            csv,
            marks,
            cuts,
            crlf,
        })
}

fn render(c: &Case) -> String {
    let mut data = String::new();
    let mut k = 0;
    for (i, r) in c.rows.iter().enumerate() {
        let mut fields = vec![i.to_string()];
        for f in r {
            let mark = c.marks[k % c.marks.len()];
            k += 1;
            fields.push(if c.csv {
                csv_field(f, mark)
            } else {
                text_field(f, mark)
            });
        }
        data.push_str(&fields.join(if c.csv { "," } else { "\t" }));
        data.push_str(if c.crlf { "\r\n" } else { "\n" });
    }
    data
}

async fn run_case(port: u16, c: &Case, table: &str) -> Result<(), TestCaseError> {
    let client = connect(port).await;
    client
        .batch_execute(&format!(
            "DROP TABLE IF EXISTS {table}; {}",
            CREATE.replace("{}", table)
        ))
        .await
        .expect("create");
    let data = render(c).into_bytes();
    let mut cuts: Vec<usize> = c.cuts.iter().map(|&x| x.min(data.len())).collect();
    cuts.push(0);
    cuts.push(data.len());
    cuts.sort_unstable();
    cuts.dedup();
    let format = if c.csv { "csv" } else { "text" };
    let sql = format!("COPY {table} FROM STDIN WITH (FORMAT {format})");
    let copied = tokio::time::timeout(LIMIT, async {
        let sink = client.copy_in::<_, Bytes>(sql.as_str()).await?;
        futures::pin_mut!(sink);
        for w in cuts.windows(2) {
            sink.send(Bytes::copy_from_slice(&data[w[0]..w[1]])).await?;
        }
        sink.finish().await
    })
    .await
    .expect("COPY within the time limit");
    match (oracle(&c.rows), copied) {
        (Ok(expected), Ok(n)) => {
            prop_assert_eq!(n as usize, expected.len());
            let got = rows(&client, &format!("SELECT * FROM {table} ORDER BY id")).await;
            prop_assert_eq!(got, expected);
        }
        (Err((line, message)), Err(e)) => {
            let db = e.as_db_error().expect("a server error");
            // PostgreSQL counts the line breaks inside quoted CSV fields as lines (LF ones
            // or CR ones, by the line ending): the record's lines run from `line` to `line`
            // plus the breaks in its and the earlier records' fields.
            let breaks: usize = c.rows[..line]
                .iter()
                .flatten()
                .flatten()
                .map(|f| {
                    if c.csv {
                        f.matches(['\n', '\r']).count()
                    } else {
                        0
                    }
                })
                .sum();
            let reported = db
                .where_()
                .unwrap_or_default()
                .split("line ")
                .nth(1)
                .and_then(|t| t.split([',', ':']).next())
                .and_then(|n| n.parse::<usize>().ok());
            prop_assert!(
                db.message().contains(&message)
                    && reported.is_some_and(|n| (line..=line + breaks).contains(&n)),
                "expected {message:?} on line {line} (+ up to {breaks}), got {:?}",
                db.message()
            );
        }
        (Ok(_), Err(e)) => prop_assert!(false, "the COPY failed: {e:?}"),
        (Err((line, message)), Ok(_)) => {
            prop_assert!(
                false,
                "the COPY took line {line}, which the general parser refuses: {message}"
            )
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn copy_stores_what_the_general_parser_reads(c in case()) {
        let port = *PORT;
        RUNTIME.block_on(run_case(port, &c, "t"))?;
    }
}

/// A field free of quotes and backslashes in either format (NULL is written as CSV's
/// empty field; in text format its `\N` sends that chunk down the general path), so that
/// whole chunks of such rows take the path that parses them on two threads. Some integers
/// are texts only the general input function reads (`+5`, ` 12`), which that path hands to
/// it field by field.
fn plain_field(ty: DataType) -> BoxedStrategy<Option<String>> {
    let value: BoxedStrategy<String> = match ty {
        DataType::Int2 | DataType::Int4 | DataType::Int8 => prop_oneof![
            8 => int_text(ty),
            1 => prop::sample::select(vec!["+5", "007", "-0", " 12", "12 "]).prop_map(String::from),
        ]
        .boxed(),
        DataType::Float4 | DataType::Float8 => float_text().boxed(),
        DataType::Timestamp => timestamp_text().boxed(),
        DataType::Text => "[a-z0-9][a-z0-9 ]{0,11}".boxed(),
        DataType::Varchar(_) => "[a-z]{1,5}".boxed(),
        DataType::Bool => prop::sample::select(vec!["t", "f", "true", "FALSE"])
            .prop_map(String::from)
            .boxed(),
        _ => "-?[0-9]{1,8}(\\.[0-9]{0,4})?".boxed(),
    };
    prop::option::weighted(0.95, value).boxed()
}

/// A COPY of thousands of plain rows (several 64 KiB chunks), perhaps with one plain text
/// the input functions refuse somewhere in it: the rows parsed on two threads must be
/// exactly those the general parser reads, in order, and a refusal must name the same line.
fn big_case() -> impl Strategy<Value = Case> {
    let pool = prop::collection::vec(
        COLUMNS
            .iter()
            .map(|&(_, ty)| plain_field(ty))
            .collect::<Vec<_>>(),
        1..40,
    );
    let bad = prop::option::weighted(
        0.5,
        (
            0usize..5000,
            prop::sample::select(vec![
                (1, "x1"),
                (2, "2147483648"),
                (6, "2001-02-29 12:00:00"),
                (8, "abcdef"),
            ]),
        ),
    );
    (
        pool,
        3000usize..8000,
        bad,
        prop::bool::ANY,
        prop::bool::weighted(0.2),
        prop::collection::vec(0usize..600_000, 0..40),
    )
        .prop_map(|(pool, n, bad, csv, crlf, cuts)| {
            let mut rows: Vec<_> = (0..n).map(|i| pool[i % pool.len()].clone()).collect();
            if let Some((at, (col, text))) = bad {
                let at = at % n;
                rows[at][col - 1] = Some(text.to_string());
            }
            Case {
                rows,
                csv,
                marks: vec![false],
                cuts,
                crlf,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn large_plain_copies_store_what_the_general_parser_reads(c in big_case()) {
        let port = *PORT;
        RUNTIME.block_on(run_case(port, &c, "big"))?;
    }
}

static RUNTIME: std::sync::LazyLock<tokio::runtime::Runtime> = std::sync::LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
});

static PORT: std::sync::LazyLock<u16> = std::sync::LazyLock::new(start_server);
