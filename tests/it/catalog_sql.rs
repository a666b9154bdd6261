//! Plain SQL over the system catalogs through tokio-postgres: the extended protocol with
//! bound parameters and binary results (every value arrives with the type RowDescription
//! announced), a cursor over a catalog query, and catalog errors with their SQLSTATEs.

use crate::common;

use common::{connect, sqlstate, start_server};

#[tokio::test]
async fn catalog_queries_bind_parameters_and_decode_in_binary() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(
        "CREATE STREAM flights (ts timestamptz TIMESTAMPCOLUMN, delay integer, origin varchar(3))",
    )
    .await
    .unwrap();
    // tokio-postgres prepares (Parse/Describe), then reads every column in binary.
    let rows = c
        .query(
            "SELECT c.oid, a.attnum, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), \
                    a.attnotnull, t.typlen \
             FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid \
             JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
             WHERE c.relname = $1 AND a.attnum > $2 ORDER BY a.attnum",
            &[&"flights", &0i16],
        )
        .await
        .unwrap();
    // pg_class.oid is an `oid`: tokio-postgres reads it as u32 only when it says so.
    let got: Vec<(u32, i16, String, String, bool, i16)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5)))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                16384,
                1,
                "ts".into(),
                "timestamp with time zone".into(),
                true,
                8
            ),
            (16384, 2, "delay".into(), "integer".into(), false, 4),
            (
                16384,
                3,
                "origin".into(),
                "character varying(3)".into(),
                false,
                -1
            ),
        ]
    );
    // Aggregates and regclass casts keep their announced types in binary too.
    let row = c
        .query_one(
            "SELECT count(*), sum(a.attnum), max(a.attname), 'flights'::regclass::oid, \
                    'flights'::regclass \
             FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'flights'::regclass",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 3);
    assert_eq!(row.get::<_, i64>(1), 6);
    assert_eq!(row.get::<_, String>(2), "ts");
    assert_eq!(row.get::<_, u32>(3), 16384);
    assert_eq!(row.get::<_, String>(4), "flights");
}

/// Typed arrays and oids in binary, as tokio-postgres decodes them by the type
/// RowDescription names: `smallint[]` and `int2vector` (pg_constraint.conkey,
/// pg_index.indkey, lower bound 0), `text[]` with a NULL and quoting, `oid[]`, `name[]`
/// (current_schemas), an empty array, an oid column and a `name` column (conname). They
/// were all `text` before, so drivers saw `{1,2}` as a string.
#[tokio::test]
async fn arrays_and_oids_decode_in_binary_as_postgresql_types_them() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(
        "CREATE TABLE airports (code varchar(4) PRIMARY KEY, name text NOT NULL,          city text, UNIQUE (city, name))",
    )
    .await
    .unwrap();
    let row = c
        .query_one(
            "SELECT con.conkey, i.indkey, i.indrelid, con.conname              FROM pg_catalog.pg_constraint con              JOIN pg_catalog.pg_index i ON i.indexrelid = con.conindid              WHERE con.conrelid = 'airports'::regclass AND con.contype = 'u'",
            &[],
        )
        .await
        .unwrap();
    let columns = type_names(&row);
    assert_eq!(columns, ["_int2", "int2vector", "oid", "name"]);
    // pg_attribute types the catalogs' own columns as clients receive them; those held
    // as text keep PostgreSQL's oid (name 19, "char" 18, aclitem[] reported as text[]).
    let rows = c
        .query(
            "SELECT a.attname, a.atttypid FROM pg_attribute a \
             WHERE a.attrelid IN (1259, 2610) AND a.attname IN ('oid', 'relname', 'relkind', \
                   'reltuples', 'relacl', 'reloptions', 'indnatts', 'indisunique', 'indkey', \
                   'indclass', 'indexprs') \
             ORDER BY a.attrelid, a.attnum",
            &[],
        )
        .await
        .unwrap();
    let got: Vec<(String, u32)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    let want = [
        ("oid", 26),
        ("relname", 19),
        ("reltuples", 700),
        ("relkind", 18),
        ("relacl", 1009),
        ("reloptions", 1009),
        ("indnatts", 21),
        ("indisunique", 16),
        ("indkey", 22),
        ("indclass", 30),
        ("indexprs", 25),
    ];
    assert_eq!(
        got,
        want.map(|(n, o)| (n.to_string(), o)),
        "pg_attribute of pg_class and pg_index"
    );
    assert_eq!(row.get::<_, Vec<i16>>(0), vec![3, 2]);
    assert_eq!(row.get::<_, Vec<i16>>(1), vec![3, 2]);
    assert_eq!(row.get::<_, u32>(2), 16384);
    assert_eq!(row.get::<_, String>(3), "airports_city_name_key");
    // relacl names a role as aclitemout does (quoted unless lowercase and plain) and
    // quotes each item that needs it, so that array functions read it back.
    c.batch_execute(
        "CREATE ROLE \"Carol, \"\"C\"\"\"; GRANT SELECT ON TABLE airports TO \"Carol, \"\"C\"\"\"; \
         GRANT SELECT ON TABLE airports TO PUBLIC",
    )
    .await
    .unwrap();
    let row = c
        .query_one(
            "SELECT relacl::text, array_length(relacl, 1) FROM pg_class \
             WHERE relname = 'airports'",
            &[],
        )
        .await
        .unwrap();
    let got: (String, i32) = (row.get(0), row.get(1));
    let want = r#"{tcq=arwdD/tcq,"\"Carol, \"\"C\"\"\"=r/tcq",=r/tcq}"#;
    assert_eq!(got, (want.to_string(), 3));
    let row = c
        .query_one(
            "SELECT ARRAY['a b', NULL, 'c\"d', ''], array_agg(a.attnum ORDER BY a.attnum),                     ARRAY(SELECT a.atttypid FROM pg_attribute a                           WHERE a.attrelid = 'airports'::regclass ORDER BY a.attnum),                     current_schemas(false), '{}'::int4[], '{1.5,NULL}'::float8[],                     '{t,f}'::bool[], '{10000000000}'::int8[]              FROM pg_attribute a WHERE a.attrelid = 'airports'::regclass",
            &[],
        )
        .await
        .unwrap();
    let columns = type_names(&row);
    assert_eq!(
        columns,
        ["_text", "_int2", "_oid", "_name", "_int4", "_float8", "_bool", "_int8"]
    );
    assert_eq!(
        row.get::<_, Vec<Option<String>>>(0),
        vec![
            Some("a b".into()),
            None,
            Some("c\"d".into()),
            Some(String::new())
        ]
    );
    assert_eq!(row.get::<_, Vec<i16>>(1), vec![1, 2, 3]);
    assert_eq!(row.get::<_, Vec<u32>>(2), vec![1043, 25, 25]);
    assert_eq!(row.get::<_, Vec<String>>(3), vec!["public".to_string()]);
    assert_eq!(row.get::<_, Vec<i32>>(4), Vec::<i32>::new());
    assert_eq!(row.get::<_, Vec<Option<f64>>>(5), vec![Some(1.5), None]);
    assert_eq!(row.get::<_, Vec<bool>>(6), vec![true, false]);
    assert_eq!(row.get::<_, Vec<i64>>(7), vec![10_000_000_000]);
    // The same values in text, as psql and psycopg read them.
    let rows = common::rows(
        &c,
        "SELECT ARRAY['a b', NULL, 'c\"d', ''], indkey, '-1'::oid, '{7}'::oid[]          FROM pg_index WHERE indrelid = 'airports'::regclass AND NOT indisprimary",
    )
    .await;
    assert_eq!(
        rows,
        vec![vec![
            "{\"a b\",NULL,\"c\\\"d\",\"\"}".to_string(),
            "3 2".to_string(),
            "4294967295".to_string(),
            "{7}".to_string(),
        ]]
    );
    // A parameter compared with an oid is described as one and binds a u32, as the
    // lookup query tokio-postgres sends for an unknown type does; a client's own `oid`
    // hint in Parse is honoured too.
    let stmt = c
        .prepare("SELECT relname FROM pg_class WHERE oid = $1")
        .await
        .unwrap();
    assert_eq!(stmt.params(), &[tokio_postgres::types::Type::OID]);
    let row = c.query_one(&stmt, &[&16384u32]).await.unwrap();
    assert_eq!(row.get::<_, String>(0), "airports");
    let stmt = c
        .prepare_typed(
            "SELECT count(*) FROM pg_class WHERE relnamespace = $1",
            &[tokio_postgres::types::Type::OID],
        )
        .await
        .unwrap();
    let n: i64 = c.query_one(&stmt, &[&2200u32]).await.unwrap().get(0);
    assert_eq!(
        n, 3,
        "public holds airports and the indexes of its two keys"
    );
    // `$1::oid[]` (asyncpg's type introspection) makes the parameter an oid[]: a Vec<u32>
    // binds as array_send bytes.
    let stmt = c
        .prepare("SELECT typname FROM pg_type WHERE oid = ANY($1::oid[]) ORDER BY oid")
        .await
        .unwrap();
    assert_eq!(stmt.params(), &[tokio_postgres::types::Type::OID_ARRAY]);
    let names: Vec<String> = c
        .query(&stmt, &[&vec![25u32, 23, 1005]])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(names, ["int4", "text", "_int2"]);
    // A parameter cast to a type takes it (SQLAlchemy writes `$1::INTEGER`).
    let stmt = c
        .prepare("SELECT count(*) FROM pg_class WHERE relnatts > $1::integer")
        .await
        .unwrap();
    assert_eq!(stmt.params(), &[tokio_postgres::types::Type::INT4]);
    // set_config answers only for the value a parameter has (asyncpg's introspection
    // sends `set_config('jit', 'off', false)`); current_setting reads defaults as SHOW.
    let rows = common::rows(
        &c,
        "SELECT current_setting('jit'), set_config('jit', 'off', false)",
    )
    .await;
    assert_eq!(rows, vec![vec!["off".to_string(), "off".to_string()]]);
    // Binary COPY of a catalog query sends each field in its type's binary form too.
    let out = common::copy_out_bytes(
        &c,
        "COPY (SELECT '{1,2}'::int2[], '7'::oid) TO STDOUT (FORMAT binary)",
    )
    .await;
    let mut tuple = vec![0, 2, 0, 0, 0, 32];
    tuple.extend([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 21, 0, 0, 0, 2, 0, 0, 0, 1]);
    tuple.extend([0, 0, 0, 2, 0, 1, 0, 0, 0, 2, 0, 2]);
    tuple.extend([0, 0, 0, 4, 0, 0, 0, 7, 0xff, 0xff]);
    assert_eq!(&out[19..], tuple.as_slice(), "after the 19-byte header");
    // An array of two dimensions sends both lengths (each with lower bound 1), then its
    // elements in row-major order, as array_send does.
    let out = common::copy_out_bytes(
        &c,
        "COPY (SELECT '{{1,2},{3,4}}'::int2[]) TO STDOUT (FORMAT binary)",
    )
    .await;
    let mut tuple = vec![0, 1, 0, 0, 0, 52];
    tuple.extend([0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 21]);
    tuple.extend([0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1]);
    for v in 1..=4 {
        tuple.extend([0, 0, 0, 2, 0, v]);
    }
    tuple.extend([0xff, 0xff]);
    assert_eq!(
        &out[19..],
        tuple.as_slice(),
        "a 2-D array after the 19-byte header"
    );
    for (sql, code) in [
        ("SELECT '4294967296'::oid", "22003"),
        ("SELECT 'x'::oid", "22P02"),
        ("SELECT '{1,x}'::int2[]", "22P02"),
        ("SELECT '{1'::text[]", "22P02"),
        ("SELECT 'abc'::text[]", "22P02"),
        ("SELECT '{\"a\"b}'::text[]", "22P02"),
        ("SELECT '{a,,b}'::text[]", "22P02"),
        ("SELECT '{{1,2},{3}}'::int4[]", "22P02"),
        ("SELECT set_config('jit', 'on', false)", "0A000"),
    ] {
        let e = c.simple_query(sql).await.unwrap_err();
        assert_eq!(sqlstate(&e), code, "{sql}: {e}");
    }
}

/// The type names a row's columns were described with (`_int2`, `oid`, ...).
fn type_names(row: &tokio_postgres::Row) -> Vec<String> {
    row.columns()
        .iter()
        .map(|c| c.type_().name().to_string())
        .collect()
}

#[tokio::test]
async fn a_cursor_reads_a_catalog_query_and_errors_keep_their_class() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute("CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)")
        .await
        .unwrap();
    let rows = common::rows(
        &c,
        "BEGIN; DECLARE cur CURSOR FOR SELECT attname FROM pg_attribute \
         WHERE attrelid = 's'::regclass ORDER BY attnum DESC; FETCH 1 FROM cur",
    )
    .await;
    assert_eq!(rows, vec![vec!["v".to_string()]]);
    let rows = common::rows(&c, "FETCH 5 FROM cur").await;
    assert_eq!(rows, vec![vec!["ts".to_string()]]);
    c.batch_execute("COMMIT").await.unwrap();
    for (sql, code) in [
        ("SELECT 'nope'::regclass", "42P01"),
        ("SELECT 'nope'::regtype", "42704"),
        ("SELECT nope FROM pg_class", "42703"),
        ("SELECT (SELECT relname FROM pg_class)", "21000"),
        ("SELECT relname FROM pg_class WHERE count(*) > 0", "42803"),
        (
            "SELECT count(*) FROM pg_attribute a, pg_attribute b, pg_attribute c",
            "54000",
        ),
        // A LATERAL item runs once per row within the same budget: one call too large,
        // or the joined rows of many calls.
        (
            "SELECT count(*) FROM pg_class c, generate_series(1, c.relnatts * 1000000) g",
            "54000",
        ),
        (
            "SELECT count(*) FROM pg_attribute a, LATERAL generate_series(1, a.attnum + 1000) g",
            "54000",
        ),
        ("SELECT 1 = ANY('{')", "22P02"),
        ("SELECT * FROM pg_class LIMIT -1", "2201W"),
    ] {
        let e = c.simple_query(sql).await.unwrap_err();
        assert_eq!(sqlstate(&e), code, "{sql}: {e}");
    }
    // The server serves on.
    let n = c
        .query_one("SELECT count(*) FROM pg_namespace", &[])
        .await
        .unwrap();
    assert_eq!(n.get::<_, i64>(0), 3);
}

/// A tester's report: `CREATE STREAM db.public.q3` made a relation `public.q3` in schema
/// `db`, and `CREATE TABLE x.y.z.w` was accepted. PostgreSQL reads three parts as
/// database.schema.name (another database is 0A000) and refuses four (42601), in every
/// statement that names a relation.
#[tokio::test]
async fn qualified_names_are_read_as_postgresql_reads_them() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(
        "CREATE STREAM tcq.public.q3 (a integer); CREATE TABLE tcq.net.t3 (k integer); \
         INSERT INTO public.q3 VALUES (1); INSERT INTO tcq.net.t3 VALUES (7); \
         GRANT SELECT ON tcq.public.q3 TO PUBLIC",
    )
    .await
    .unwrap();
    let got = common::rows(
        &c,
        "SELECT n.nspname, c.relname, c.relacl IS NOT NULL FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.relname IN ('q3', 't3') ORDER BY 2",
    )
    .await;
    assert_eq!(
        got,
        common::table(&[&["public", "q3", "t"], &["net", "t3", "f"]])
    );
    assert_eq!(
        common::rows(&c, "SELECT name, tuples FROM tcq_streams").await,
        common::table(&[&["q3", "1"]])
    );
    assert_eq!(
        common::rows(&c, "SELECT k FROM tcq.net.t3").await,
        common::table(&[&["7"]])
    );
    assert_eq!(
        common::rows(
            &c,
            "SELECT relname FROM tcq.pg_catalog.pg_class WHERE relname = 'pg_class'"
        )
        .await,
        common::table(&[&["pg_class"]])
    );
    for (sql, code, msg) in [
        (
            "CREATE STREAM db.public.q4 (a integer)",
            "0A000",
            "cross-database references are not implemented: db.public.q4",
        ),
        (
            "CREATE TABLE x.y.z.w (a integer)",
            "42601",
            "improper qualified name (too many dotted names): x.y.z.w",
        ),
        (
            "INSERT INTO other.public.q3 VALUES (2)",
            "0A000",
            "cross-database references are not implemented: other.public.q3",
        ),
        (
            "SELECT count(*) FROM a.b.c.d [RANGE BY '1 second']",
            "42601",
            "improper qualified name (too many dotted names): a.b.c.d",
        ),
        (
            "DROP STREAM a.b.c.d",
            "42601",
            "improper qualified name (too many dotted names): a.b.c.d",
        ),
        (
            "GRANT SELECT ON other.public.q3 TO PUBLIC",
            "0A000",
            "cross-database references are not implemented: other.public.q3",
        ),
        (
            "SELECT count(*) FROM other.pg_catalog.pg_class",
            "0A000",
            "cross-database references are not implemented: other.pg_catalog.pg_class",
        ),
        (
            "SELECT count(*) FROM a.b.pg_catalog.pg_class",
            "42601",
            "improper qualified name (too many dotted names): a.b.pg_catalog.pg_class",
        ),
    ] {
        let e = c
            .batch_execute(sql)
            .await
            .err()
            .unwrap_or_else(|| panic!("accepted: {sql}"));
        let msg_got = e
            .as_db_error()
            .map_or(e.to_string(), |d| d.message().to_string());
        assert_eq!(
            (sqlstate(&e), msg_got),
            (code.to_string(), msg.to_string()),
            "{sql}"
        );
    }
    c.batch_execute("DROP STREAM tcq.public.q3; DROP TABLE tcq.net.t3")
        .await
        .unwrap();
    assert_eq!(
        common::rows(
            &c,
            "SELECT count(*) FROM pg_class WHERE relname IN ('q3', 't3')"
        )
        .await,
        common::table(&[&["0"]])
    );
}

/// Casts of catalog values: a reg* value cast to text (or varchar(n)) is the object's
/// name, cast to an oid its number, also when a CASE or COALESCE chooses it; a cast
/// literal keeps the written type (pg_typeof).
#[tokio::test]
async fn reg_casts_to_text_are_names() {
    let port = start_server();
    let c = connect(port).await;
    let got = common::rows(
        &c,
        "SELECT 'pg_class'::regclass::text, 'pg_class'::regclass::oid::int8 > 0, \
                atttypid::regtype::text, atttypid::regtype::varchar(3), \
                CASE WHEN true THEN atttypid::regtype END::text, \
                coalesce(NULL, atttypid::regtype)::text, \
                pg_typeof(NULL::integer), pg_typeof('a'::text), pg_typeof(date '2001-01-01') \
         FROM pg_attribute WHERE attrelid = 'pg_class'::regclass AND attname = 'relname'",
    )
    .await;
    assert_eq!(
        got,
        common::table(&[&[
            "pg_class", "t", "name", "nam", "name", "name", "integer", "text", "date"
        ]])
    );
}

/// `"char"` and `name` columns as PostgreSQL types them (issue 30): described as
/// `"char"` (18) and `name` (19) and sent in binary as `charsend` (one byte, which
/// tokio-postgres reads as an i8) and `namesend`; the session's names (`current_user`,
/// `current_schema()`, ...) are names too, and a parameter compared with a "char"
/// column is described as one.
#[tokio::test]
async fn char_and_name_columns_decode_in_binary_as_postgresql_types_them() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute("CREATE TABLE gates (id integer)")
        .await
        .unwrap();
    let row = c
        .query_one(
            "SELECT c.relkind, c.relpersistence, c.relname, n.nspname, current_user, \
                    current_schema(), current_database(), 'é'::\"char\", ''::\"char\" \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relname = 'gates'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        type_names(&row),
        ["char", "char", "name", "name", "name", "name", "name", "char", "char"]
    );
    assert_eq!(row.get::<_, i8>(0), b'r' as i8);
    assert_eq!(row.get::<_, i8>(1), b'p' as i8);
    assert_eq!(row.get::<_, String>(2), "gates");
    assert_eq!(row.get::<_, String>(3), "public");
    assert_eq!(row.get::<_, String>(4), "tcq");
    assert_eq!(row.get::<_, String>(5), "public");
    // 'é' is two bytes; a "char" keeps the first (0xC3), printed \303 in text.
    assert_eq!(row.get::<_, i8>(7), 0xC3u8 as i8);
    assert_eq!(row.get::<_, i8>(8), 0);
    // In text, as psql reads them.
    let rows = common::rows(
        &c,
        "SELECT relkind, 'é'::\"char\", 65::\"char\" FROM pg_class WHERE relname = 'gates'",
    )
    .await;
    assert_eq!(rows, common::table(&[&["r", "\\303", "A"]]));
    // `relkind = $1` describes $1 as "char": the client binds an i8.
    let stmt = c
        .prepare("SELECT relname FROM pg_class WHERE relkind = $1 AND relname = $2")
        .await
        .unwrap();
    let names: Vec<&str> = stmt.params().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["char", "name"]);
    let rows = c.query(&stmt, &[&(b'r' as i8), &"gates"]).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, String>(0), "gates");
    let rows = c.query(&stmt, &[&(b'v' as i8), &"gates"]).await.unwrap();
    assert!(rows.is_empty(), "gates is no view");
    // Out of range for a "char": 22003, as PostgreSQL.
    let err = c.simple_query("SELECT 128::\"char\"").await.unwrap_err();
    assert_eq!(sqlstate(&err), "22003");
}
