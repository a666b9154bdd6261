//! PostgreSQL's input rules (issue 11): 22021 for NUL characters in text and for invalid
//! UTF-8 in COPY data, 2201W/2201X for a negative LIMIT/OFFSET, 42501 for a stream in a
//! system schema. Invalid UTF-8 in SQL text is in `protocol_attacks.rs` (it needs a raw
//! socket).

use crate::common;

use bytes::Bytes;
use futures::SinkExt;

async fn sqlstate_of(c: &tokio_postgres::Client, sql: &str) -> String {
    let err = c
        .batch_execute(sql)
        .await
        .expect_err(&format!("{sql} should fail"));
    common::sqlstate(&err)
}

#[tokio::test]
async fn nul_characters_in_text_are_22021() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (t text)").await.unwrap();
    for sql in [
        r"SELECT U&'\0000'",
        r"SELECT U&'a\0000b'",
        r"INSERT INTO s VALUES (U&'\0000')",
    ] {
        assert_eq!(sqlstate_of(&c, sql).await, "22021", "{sql}");
    }
    // A text parameter holding NUL, through the extended protocol.
    let err = c
        .execute("INSERT INTO s VALUES ($1)", &[&"a\0b"])
        .await
        .unwrap_err();
    assert_eq!(common::sqlstate(&err), "22021");
    let rows = c
        .query("SELECT tuples FROM tcq_streams", &[])
        .await
        .unwrap();
    assert_eq!(rows[0].get::<_, i64>(0), 0);
}

async fn copy_error(c: &tokio_postgres::Client, data: &'static [u8]) -> tokio_postgres::Error {
    let sink = c.copy_in("COPY s FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    match sink.send(Bytes::from_static(data)).await {
        Err(e) => e,
        Ok(()) => sink.finish().await.expect_err("the COPY is rejected"),
    }
}

#[tokio::test]
async fn copy_rejects_invalid_utf8_and_nul_with_22021() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (t text)").await.unwrap();
    let cases: [(&'static [u8], &str); 3] = [
        (
            b"ok\nbad \xc3\x28 byte\n",
            // As PostgreSQL shows it: the bytes the first one announces.
            "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28\nCONTEXT: COPY s, line 2",
        ),
        (
            b"ok\nescaped \\000 nul\n",
            "invalid byte sequence for encoding \"UTF8\": 0x00\nCONTEXT: COPY s, line 2",
        ),
        (
            b"raw \x00 nul\n",
            "invalid byte sequence for encoding \"UTF8\": 0x00\nCONTEXT: COPY s, line 1",
        ),
    ];
    for (data, message) in cases {
        let err = copy_error(&c, data).await;
        assert_eq!(common::sqlstate(&err), "22021", "{data:?}");
        assert_eq!(
            common::message_and_context(err.as_db_error().unwrap()),
            message
        );
    }
    let rows = c
        .query("SELECT tuples FROM tcq_streams", &[])
        .await
        .unwrap();
    assert_eq!(
        rows[0].get::<_, i64>(0),
        0,
        "nothing of a rejected COPY arrives"
    );
}

#[tokio::test]
async fn negative_limit_and_offset_have_their_own_sqlstates() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    assert_eq!(sqlstate_of(&c, "SELECT v FROM s LIMIT -1").await, "2201W");
    assert_eq!(sqlstate_of(&c, "SELECT 1 LIMIT -5").await, "2201W");
    assert_eq!(sqlstate_of(&c, "SELECT v FROM s OFFSET -1").await, "2201X");
    // A quoted limit is read as bigint: 22P02 when it is not one, as in PostgreSQL.
    assert_eq!(sqlstate_of(&c, "SELECT v FROM s LIMIT 'a'").await, "22P02");
    assert_eq!(sqlstate_of(&c, "SELECT 1 LIMIT 'a'").await, "22P02");
    assert_eq!(sqlstate_of(&c, "SELECT v FROM s LIMIT '-1'").await, "2201W");
    let rows = common::rows(&c, "SELECT 7 LIMIT '1'").await;
    assert_eq!(rows, common::table(&[&["7"]]));
    // The square root of a negative number: 2201F, numeric or double precision.
    assert_eq!(sqlstate_of(&c, "SELECT sqrt(-1)").await, "2201F");
    assert_eq!(sqlstate_of(&c, "SELECT sqrt(-1.5::float8)").await, "2201F");
}

#[tokio::test]
async fn streams_cannot_be_created_in_system_schemas() {
    let port = common::start_server();
    let c = common::connect(port).await;
    for name in [
        "pg_catalog.pg_class",
        "pg_catalog.mine",
        "information_schema.tables",
        "pg_toast.t",
    ] {
        let sql = format!("CREATE STREAM {name} (v integer)");
        assert_eq!(sqlstate_of(&c, &sql).await, "42501", "{sql}");
    }
    c.batch_execute("CREATE STREAM network.tcpdump (v integer)")
        .await
        .unwrap();
}
