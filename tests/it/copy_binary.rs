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
