//! Binary COPY over a real socket: tokio-postgres's `BinaryCopyInWriter` and
//! `BinaryCopyOutStream` (its high-level API), and hand-made byte streams for the format's
//! edge cases (signature, flags, header extension, field counts, trailer, truncation).

use crate::common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{connect, sqlstate, start_server};
use futures::StreamExt;
use tokio_postgres::binary_copy::{BinaryCopyInWriter, BinaryCopyOutStream};
use tokio_postgres::types::Type;
use tokio_postgres::Client;

/// Every test gives up after this long instead of hanging.
const LIMIT: Duration = Duration::from_secs(30);

/// 2001-01-01 00:00:00 UTC plus `secs`.
fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(978_307_200 + secs)
}

/// Send `data` as one COPY FROM STDIN; the server's answer.
async fn copy_bytes(client: &Client, sql: &str, data: &[u8]) -> Result<u64, tokio_postgres::Error> {
    common::copy_in(client, sql, data, data.len()).await
}

const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// One tuple of (int4) in the binary format.
fn int_tuple(v: i32) -> Vec<u8> {
    let mut t = vec![0, 1, 0, 0, 0, 4];
    t.extend_from_slice(&v.to_be_bytes());
    t
}

#[tokio::test]
async fn tokio_postgres_binary_copy_in_and_out() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        let feeder = connect(port).await;
        c.batch_execute("CREATE STREAM bc (ts timestamp TIMESTAMPCOLUMN, k text, v integer)")
            .await
            .unwrap();
        let reader = tokio::spawn(async move {
            let out = c
                .copy_out(
                    "COPY (SELECT k, count(*), sum(v), wtime(*) FROM bc \
                     [RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k ORDER BY k \
                     LIMIT 3) TO STDOUT (FORMAT binary)",
                )
                .await
                .unwrap();
            let rows = BinaryCopyOutStream::new(
                out,
                &[Type::TEXT, Type::INT8, Type::INT8, Type::TIMESTAMP],
            );
            futures::pin_mut!(rows);
            let mut got = Vec::new();
            while let Some(row) = rows.next().await {
                let row = row.unwrap();
                let wtime: SystemTime = row.get(3);
                got.push((
                    row.get::<String>(0),
                    row.get::<i64>(1),
                    row.get::<Option<i64>>(2),
                    wtime.duration_since(at(0)).unwrap().as_secs(),
                ));
            }
            got
        });
        common::wait_for_queries(&feeder, 1).await;
        let sink = feeder
            .copy_in("COPY bc (ts, k, v) FROM STDIN (FORMAT binary)")
            .await
            .unwrap();
        let writer = BinaryCopyInWriter::new(sink, &[Type::TIMESTAMP, Type::TEXT, Type::INT4]);
        futures::pin_mut!(writer);
        let rows: [(u64, &str, Option<i32>); 5] = [
            (1, "a", Some(1)),
            (3, "b", None),
            (5, "a", Some(4)),
            (12, "a", Some(10)),
            (25, "z", Some(0)),
        ];
        for (t, k, v) in rows {
            writer.as_mut().write(&[&at(t), &k, &v]).await.unwrap();
        }
        assert_eq!(writer.finish().await.unwrap(), 5);
        assert_eq!(
            reader.await.unwrap(),
            vec![
                ("a".to_string(), 2, Some(5), 10),
                ("b".to_string(), 1, None, 10),
                ("a".to_string(), 1, Some(10), 20),
            ]
        );
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn binary_copy_format_errors() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        c.batch_execute("CREATE STREAM be (v integer, s varchar(2))")
            .await
            .unwrap();
        let sql = "COPY be (v) FROM STDIN (FORMAT binary)";
        // A header extension is skipped; the trailer is optional at a tuple boundary.
        let mut ok = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\x03xyz".to_vec();
        ok.extend(int_tuple(7));
        assert_eq!(copy_bytes(&c, sql, &ok).await.unwrap(), 1);
        let cases: Vec<(Vec<u8>, &str, &str)> = vec![
            (
                b"PGCOPY\nXXXXXXXX".to_vec(),
                "22P04",
                "COPY file signature not recognized",
            ),
            (
                b"PGCOPY\n\xff\r\n\0\0\x01\0\0\0\0\0\0".to_vec(),
                "22P04",
                "invalid COPY file header (WITH OIDS)",
            ),
            (
                [
                    HEADER,
                    &[0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff],
                ]
                .concat(),
                "22P04",
                "row field count is 2, expected 1\nCONTEXT: COPY be, line 1",
            ),
            (
                [HEADER, &int_tuple(1), &[0xff, 0xff], &int_tuple(2)].concat(),
                "22P04",
                "received copy data after EOF marker",
            ),
            (
                [HEADER, &int_tuple(1), &[0, 1, 0, 0]].concat(),
                "22P04",
                "unexpected EOF in COPY data\nCONTEXT: COPY be, line 2",
            ),
            (
                [HEADER, &[0, 1, 0, 0, 0, 2, 0, 1]].concat(),
                "22P03",
                "incorrect binary data format for type integer\nCONTEXT: COPY be, line 1, column v",
            ),
            (
                [HEADER, &[0, 1, 0x7f, 0xff, 0xff, 0xff]].concat(),
                "22P04",
                "invalid field size\nCONTEXT: COPY be, line 1, column v",
            ),
        ];
        for (data, code, message) in cases {
            let e = copy_bytes(&c, sql, &data).await.unwrap_err();
            assert_eq!(
                (
                    sqlstate(&e).as_str(),
                    common::message_and_context(e.as_db_error().unwrap()).as_str()
                ),
                (code, message)
            );
        }
        let long = [HEADER, &[0, 1, 0, 0, 0, 3], b"abc"].concat();
        let e = copy_bytes(&c, "COPY be (s) FROM STDIN (FORMAT binary)", &long)
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "22001");
        let e = c
            .batch_execute("COPY be FROM STDIN (FORMAT binary, DELIMITER ',')")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "42601");
        // Nothing of a failed COPY reached the stream; the first COPY's row did.
        let n: i64 = c
            .query_one("SELECT tuples FROM tcq_streams WHERE name = 'be'", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 1);
    })
    .await
    .expect("test timed out");
}

/// A value's bytes in PostgreSQL's binary format, sent and received as they are.
#[derive(Debug, PartialEq)]
struct Raw(Vec<u8>);

impl<'a> tokio_postgres::types::FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

impl tokio_postgres::types::ToSql for Raw {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(tokio_postgres::types::IsNull::No)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    tokio_postgres::types::to_sql_checked!();
}

/// date, time and char(n) in PostgreSQL's binary format: dates are days since 2000-01-01
/// (infinity i32::MAX), times microseconds since midnight, char(n) its padded text; binary
/// COPY in, binary COPY out and binary result columns agree with the text forms.
#[tokio::test]
async fn dates_times_and_char_cross_the_wire_in_binary() {
    tokio::time::timeout(LIMIT, async {
        let port = start_server();
        let c = connect(port).await;
        c.batch_execute("CREATE TABLE bd (id integer, d date, t time, c char(3))")
            .await
            .unwrap();
        let sink = c
            .copy_in("COPY bd FROM STDIN (FORMAT binary)")
            .await
            .unwrap();
        let writer =
            BinaryCopyInWriter::new(sink, &[Type::INT4, Type::DATE, Type::TIME, Type::BPCHAR]);
        futures::pin_mut!(writer);
        let day = |d: i32| Raw(d.to_be_bytes().to_vec());
        let time = |us: i64| Raw(us.to_be_bytes().to_vec());
        // 2001-01-01 is day 366 after 2000-01-01; 10:00 is 36e9 microseconds.
        let rows = [
            (1, day(366), time(36_000_000_000), Raw(b"ab ".to_vec())),
            (2, day(i32::MAX), time(86_400_000_000), Raw(b"xyz".to_vec())),
            (3, day(-1), time(1), Raw(b"a  ".to_vec())),
        ];
        for (id, d, t, s) in &rows {
            writer.as_mut().write(&[id, d, t, s]).await.unwrap();
        }
        assert_eq!(writer.finish().await.unwrap(), 3);
        let text: Vec<String> = common::rows(&c, "SELECT d, t, c FROM bd ORDER BY id")
            .await
            .into_iter()
            .map(|r| r.join("|"))
            .collect();
        assert_eq!(
            text,
            [
                "2001-01-01|10:00:00|ab ",
                "infinity|24:00:00|xyz",
                "1999-12-31|00:00:00.000001|a  "
            ]
        );
        let out = c
            .copy_out("COPY bd TO STDOUT (FORMAT binary)")
            .await
            .unwrap();
        let back =
            BinaryCopyOutStream::new(out, &[Type::INT4, Type::DATE, Type::TIME, Type::BPCHAR]);
        futures::pin_mut!(back);
        let mut got = Vec::new();
        while let Some(row) = back.next().await {
            let row = row.unwrap();
            got.push((
                row.get::<i32>(0),
                row.get::<Raw>(1),
                row.get::<Raw>(2),
                row.get::<Raw>(3),
            ));
        }
        assert_eq!(got, rows);
        let result = c
            .query("SELECT d, t, c, d + 1 FROM bd WHERE id = 1", &[])
            .await
            .unwrap();
        let types: Vec<u32> = result[0]
            .columns()
            .iter()
            .map(|c| c.type_().oid())
            .collect();
        assert_eq!(types, [1082, 1083, 1042, 1082]);
        assert_eq!(result[0].get::<_, Raw>(0), day(366));
        assert_eq!(result[0].get::<_, Raw>(1), time(36_000_000_000));
        assert_eq!(result[0].get::<_, Raw>(2), Raw(b"ab ".to_vec()));
        assert_eq!(result[0].get::<_, Raw>(3), day(367));
    })
    .await
    .expect("test timed out");
}
