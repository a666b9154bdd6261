//! PostgreSQL's rules that drivers and psql rely on, over a real socket with
//! tokio-postgres: DEALLOCATE of prepared statements, the key indexes of stored tables in
//! the catalogs, and the SQLSTATEs PostgreSQL gives.

use crate::common;

use common::{connect, exec, rows, sqlstate, start_server, table, wait_for_queries};

/// The SQLSTATE and message of a statement that must fail.
async fn error(c: &tokio_postgres::Client, sql: &str) -> (String, String) {
    let e = c
        .batch_execute(sql)
        .await
        .expect_err(&format!("{sql} must fail"));
    let message = e
        .as_db_error()
        .map_or(String::new(), |d| d.message().into());
    (sqlstate(&e), message)
}

/// The rows continuous `query` answers (it ends at its LIMIT) once `insert`, run after the
/// query is registered, has closed the windows it waits for.
async fn continuous_rows(
    port: u16,
    c: &tokio_postgres::Client,
    query: String,
    insert: &str,
) -> Vec<Vec<String>> {
    let reader = tokio::spawn(async move {
        let c = connect(port).await;
        rows(&c, &query).await
    });
    wait_for_queries(c, 1).await;
    exec(c, insert).await;
    reader.await.unwrap()
}

/// DEALLOCATE of an unknown statement is 26000; DEALLOCATE ALL forgets the connection's
/// prepared statements, so executing one afterwards is 26000 too; in a failed transaction
/// block it is 25P02 and forgets nothing.
#[tokio::test]
async fn deallocate_forgets_prepared_statements() {
    let port = start_server();
    let c = connect(port).await;
    assert_eq!(
        error(&c, "DEALLOCATE nope").await,
        (
            "26000".into(),
            "prepared statement \"nope\" does not exist".into()
        )
    );
    let st = c.prepare("SELECT 42::int4").await.unwrap();
    exec(&c, "BEGIN").await;
    assert_eq!(error(&c, "SELECT 1/0").await.0, "22012");
    assert_eq!(error(&c, "DEALLOCATE ALL").await.0, "25P02");
    exec(&c, "ROLLBACK").await;
    let v: i32 = c.query_one(&st, &[]).await.unwrap().get(0);
    assert_eq!(v, 42);
    exec(&c, "DEALLOCATE ALL").await;
    let e = c.query_one(&st, &[]).await.expect_err("deallocated");
    assert_eq!(sqlstate(&e), "26000");
}

/// A stored table's PRIMARY KEY and UNIQUE keys are index relations in pg_class and rows
/// of pg_index and pg_constraint, as PostgreSQL names them.
#[tokio::test]
async fn table_keys_are_in_the_catalogs() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE TABLE routes (origin text, dest text, km int, code text UNIQUE, PRIMARY KEY (origin, dest))",
    )
    .await;
    assert_eq!(
        rows(
            &c,
            "SELECT c.relname, c.relkind, i.indisprimary, i.indisunique, i.indkey, \
             i.indrelid = 'routes'::regclass FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid ORDER BY 1"
        )
        .await,
        table(&[
            &["routes_code_key", "i", "f", "t", "4", "t"],
            &["routes_pkey", "i", "t", "t", "1 2", "t"],
        ])
    );
    assert_eq!(
        rows(
            &c,
            "SELECT conname, contype, conkey, pg_get_constraintdef(oid), pg_get_indexdef(conindid) \
             FROM pg_constraint WHERE conrelid = 'routes'::regclass ORDER BY 1"
        )
        .await,
        table(&[
            &[
                "routes_code_key",
                "u",
                "{4}",
                "UNIQUE (code)",
                "CREATE UNIQUE INDEX routes_code_key ON public.routes USING btree (code)"
            ],
            &[
                "routes_pkey",
                "p",
                "{1,2}",
                "PRIMARY KEY (origin, dest)",
                "CREATE UNIQUE INDEX routes_pkey ON public.routes USING btree (origin, dest)"
            ],
        ])
    );
    assert_eq!(
        rows(
            &c,
            "SELECT relhasindex FROM pg_class WHERE relname = 'routes'"
        )
        .await,
        table(&[&["t"]])
    );
}

/// SET of a parameter PostgreSQL does not know is 42704; custom parameters (with a dot) and
/// every parameter the drivers set are accepted, and SHOW gives back what was SET.
#[tokio::test]
async fn set_refuses_unknown_parameters() {
    let port = start_server();
    let c = connect(port).await;
    assert_eq!(
        error(&c, "SET nope = 1").await,
        (
            "42704".into(),
            "unrecognized configuration parameter \"nope\"".into()
        )
    );
    assert_eq!(error(&c, "RESET nope").await.0, "42704");
    exec(
        &c,
        "SET extra_float_digits = 3; SET application_name = 'app'; SET DateStyle = 'ISO, MDY'; \
         SET IntervalStyle = 'postgres'; SET client_encoding = 'UTF8'; \
         SET standard_conforming_strings = on; SET search_path = public; \
         SET statement_timeout = 0; SET lock_timeout = '5s'; \
         SET idle_in_transaction_session_timeout = 0; SET TimeZone = 'UTC'; SET jit = off; \
         SET client_min_messages = warning; SET myapp.x = 'y'; SET tcq.output_overflow = skip",
    )
    .await;
    assert_eq!(rows(&c, "SHOW lock_timeout").await, table(&[&["5s"]]));
    assert_eq!(rows(&c, "SHOW myapp.x").await, table(&[&["y"]]));
    assert_eq!(rows(&c, "SHOW jit").await, table(&[&["off"]]));
    assert_eq!(
        rows(&c, "SHOW idle_session_timeout").await,
        table(&[&["0"]])
    );
}

/// SET takes what PostgreSQL takes and tcq follows, so that SHOW never reports a value
/// that is not in effect: a boolean that is no boolean is 22023 (it used to be recorded,
/// `default_transaction_read_only = maybe` leaving the session writable while SHOW said
/// `maybe`); read-only parameters are 55P02; a text style tcq does not write
/// (`client_encoding`, `DateStyle`, `IntervalStyle`) or `standard_conforming_strings =
/// off` (a client would escape quotes with backslashes tcq reads literally) is 0A000.
#[tokio::test]
async fn set_refuses_values_not_in_effect() {
    let port = start_server();
    let c = connect(port).await;
    for (sql, code) in [
        ("SET default_transaction_read_only = maybe", "22023"),
        ("SET jit = 2", "22023"),
        ("SET standard_conforming_strings = off", "0A000"),
        ("SET client_encoding = 'LATIN1'", "0A000"),
        ("SET DateStyle = 'German'", "0A000"),
        ("SET DateStyle = 'ISO, DMY'", "0A000"),
        ("SET DateStyle = 'nonsense'", "22023"),
        ("SET IntervalStyle = 'sql_standard'", "0A000"),
        ("SET IntervalStyle = 'nonsense'", "22023"),
        ("SET extra_float_digits = 9", "22023"),
        ("SET server_version = '99'", "55P02"),
        ("SET server_encoding = 'LATIN1'", "55P02"),
    ] {
        assert_eq!(error(&c, sql).await.0, code, "{sql}");
    }
    assert_eq!(
        rows(
            &c,
            "SHOW default_transaction_read_only; SHOW standard_conforming_strings; \
             SHOW client_encoding; SHOW DateStyle; SHOW IntervalStyle; SHOW server_version"
        )
        .await,
        table(&[
            &["off"],
            &["on"],
            &["UTF8"],
            &["ISO, MDY"],
            &["postgres"],
            &["15.0"]
        ])
    );
    // PostgreSQL's other spellings of the values tcq follows are taken, as SHOW prints them.
    exec(
        &c,
        "SET client_encoding = 'unicode'; SET DateStyle = ISO; SET jit = 'OFF'; \
         SET default_transaction_read_only = t",
    )
    .await;
    assert_eq!(
        rows(
            &c,
            "SHOW client_encoding; SHOW DateStyle; SHOW jit; SHOW default_transaction_read_only"
        )
        .await,
        table(&[&["UTF8"], &["ISO, MDY"], &["off"], &["on"]])
    );
    assert_eq!(
        error(&c, "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN)")
            .await
            .0,
        "25006"
    );
}

/// In a read-only transaction (BEGIN READ ONLY, SET TRANSACTION READ ONLY,
/// default_transaction_read_only) every statement that writes is 25006 and reads still
/// work; nothing is written.
#[tokio::test]
async fn read_only_transactions_refuse_writes() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE TABLE airports (code text PRIMARY KEY, city text); \
         INSERT INTO airports VALUES ('SFO', 'San Francisco'); \
         CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay int)",
    )
    .await;
    exec(&c, "BEGIN READ ONLY").await;
    assert_eq!(
        rows(&c, "SHOW transaction_read_only").await,
        table(&[&["on"]])
    );
    assert_eq!(
        error(&c, "INSERT INTO airports VALUES ('JFK', 'New York')").await,
        (
            "25006".into(),
            "cannot execute INSERT in a read-only transaction".into()
        )
    );
    exec(&c, "ROLLBACK").await;
    let refused = [
        (
            "INSERT INTO flights VALUES ('2001-01-01 00:00:00', 1)",
            "INSERT",
        ),
        ("UPDATE airports SET city = 'x'", "UPDATE"),
        ("DELETE FROM airports", "DELETE"),
        ("TRUNCATE airports", "TRUNCATE TABLE"),
        ("CREATE TABLE t (a int)", "CREATE TABLE"),
        ("DROP TABLE airports", "DROP TABLE"),
        ("CREATE STREAM s (a int)", "CREATE STREAM"),
        ("DROP STREAM flights", "DROP STREAM"),
        ("COPY airports FROM STDIN", "COPY FROM"),
    ];
    for (sql, what) in refused {
        exec(&c, "BEGIN; SET TRANSACTION READ ONLY").await;
        assert_eq!(
            error(&c, sql).await,
            (
                "25006".into(),
                format!("cannot execute {what} in a read-only transaction")
            ),
            "{sql}"
        );
        exec(&c, "ROLLBACK").await;
    }
    // The session default, outside and inside blocks; READ WRITE overrides it.
    exec(&c, "SET default_transaction_read_only = on").await;
    assert_eq!(error(&c, "DELETE FROM airports").await.0, "25006");
    assert_eq!(
        rows(&c, "SELECT code FROM airports").await,
        table(&[&["SFO"]])
    );
    exec(
        &c,
        "BEGIN READ WRITE; INSERT INTO airports VALUES ('JFK', 'New York'); COMMIT",
    )
    .await;
    exec(&c, "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE").await;
    exec(&c, "INSERT INTO airports VALUES ('LAX', 'Los Angeles')").await;
    assert_eq!(
        rows(&c, "SELECT code FROM airports ORDER BY code").await,
        table(&[&["JFK"], &["LAX"], &["SFO"]])
    );
}

/// `LIMIT $1` and `OFFSET $1` of a query on the relational engine (catalogs, joins of
/// stored tables) are bigint parameters in Describe, as PostgreSQL infers them, so drivers
/// bind a 64-bit integer.
#[tokio::test]
async fn limit_and_offset_parameters_are_bigint() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE TABLE airports (code text PRIMARY KEY, city text); \
         INSERT INTO airports VALUES ('SFO', 'San Francisco'), ('JFK', 'New York'), ('LAX', 'Los Angeles')",
    )
    .await;
    for sql in [
        "SELECT relname FROM pg_class ORDER BY relname LIMIT $1 OFFSET $2",
        "SELECT a.code FROM airports a JOIN pg_class c ON c.relname = 'airports' ORDER BY a.code LIMIT $1 OFFSET $2",
    ] {
        let st = c.prepare(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(
            st.params(),
            &[tokio_postgres::types::Type::INT8, tokio_postgres::types::Type::INT8],
            "{sql}"
        );
    }
    let st = c
        .prepare("SELECT a.code FROM airports a JOIN pg_class c ON c.relname = 'airports' ORDER BY a.code LIMIT $1 OFFSET $2")
        .await
        .unwrap();
    let got: Vec<String> = c
        .query(&st, &[&1i64, &1i64])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(got, vec!["LAX".to_string()]);
}

/// `LIMIT $1` / `OFFSET $2` of a query over one stored table (the finite executor) and of
/// a continuous query over a stream were refused with 0A000; they take bigint parameters as
/// PostgreSQL does: NULL is no limit, a negative LIMIT is 2201W and a negative OFFSET 2201X.
#[tokio::test]
async fn limit_and_offset_parameters_of_single_relation_queries() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE TABLE airports (code text PRIMARY KEY, city text); \
         INSERT INTO airports VALUES ('SFO', 'San Francisco'), ('JFK', 'New York'), ('LAX', 'Los Angeles'); \
         CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)",
    )
    .await;
    let st = c
        .prepare("SELECT code FROM airports ORDER BY code LIMIT $1 OFFSET $2")
        .await
        .unwrap();
    assert_eq!(
        st.params(),
        &[
            tokio_postgres::types::Type::INT8,
            tokio_postgres::types::Type::INT8
        ]
    );
    let codes =
        |rows: Vec<tokio_postgres::Row>| -> Vec<String> { rows.iter().map(|r| r.get(0)).collect() };
    assert_eq!(
        codes(c.query(&st, &[&2i64, &1i64]).await.unwrap()),
        vec!["LAX", "SFO"]
    );
    assert_eq!(
        codes(c.query(&st, &[&None::<i64>, &None::<i64>]).await.unwrap()),
        vec!["JFK", "LAX", "SFO"]
    );
    let e = c.query(&st, &[&-1i64, &0i64]).await.unwrap_err();
    assert_eq!(sqlstate(&e), "2201W", "{e}");
    let e = c.query(&st, &[&1i64, &-1i64]).await.unwrap_err();
    assert_eq!(sqlstate(&e), "2201X", "{e}");

    // A continuous query ends after LIMIT $1 rows.
    let st = c.prepare("SELECT v FROM s LIMIT $1").await.unwrap();
    assert_eq!(st.params(), &[tokio_postgres::types::Type::INT8]);
    let reader = tokio::spawn(async move { c.query(&st, &[&2i64]).await });
    let feeder = connect(port).await;
    wait_for_queries(&feeder, 1).await;
    exec(
        &feeder,
        "INSERT INTO s VALUES ('2024-01-01 00:00:01', 1), ('2024-01-01 00:00:02', 2), \
         ('2024-01-01 00:00:03', 3)",
    )
    .await;
    let got: Vec<i32> = reader
        .await
        .unwrap()
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(got, vec![1, 2]);
}

/// Settings sent at start-up take effect as SET gives them, as PostgreSQL applies them:
/// `options` (`-c name=value`, libpq's PGOPTIONS, tokio-postgres's `options`) and plain
/// start-up parameters; an unknown parameter or a bad value refuses the connection with
/// FATAL 42704 / 22023, and a malformed `options` word with 42601.
#[tokio::test]
async fn start_up_settings_take_effect() {
    let port = start_server();
    let base = common::conn_string(port);
    let connect_opts = |options: &str| {
        let conn = format!("{base} options='{options}'");
        async move {
            let (client, connection) =
                tokio_postgres::connect(&conn, tokio_postgres::NoTls).await?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            Ok::<_, tokio_postgres::Error>(client)
        }
    };
    let c = connect_opts("-c statement_timeout=300 --lock-timeout=5s -c TimeZone=Asia/Tokyo")
        .await
        .expect("connect with options");
    assert_eq!(
        rows(&c, "SHOW statement_timeout").await,
        table(&[&["300ms"]])
    );
    assert_eq!(rows(&c, "SHOW lock_timeout").await, table(&[&["5s"]]));
    assert_eq!(rows(&c, "SHOW TimeZone").await, table(&[&["Asia/Tokyo"]]));
    // SHOW gives a timeout in the largest unit that divides it, as PostgreSQL does.
    let other = common::connect(port).await;
    for (set, shown) in [
        ("120000", "2min"),
        ("'1500ms'", "1500ms"),
        ("'2h'", "2h"),
        ("0", "0"),
    ] {
        exec(&other, &format!("SET statement_timeout = {set}")).await;
        assert_eq!(
            rows(&other, "SHOW statement_timeout").await,
            table(&[&[shown]])
        );
    }
    assert_eq!(
        rows(&c, "SELECT '2001-01-01 00:00:00+00'::timestamptz::text").await,
        table(&[&["2001-01-01 09:00:00+09"]])
    );
    // The timeout is in force: a continuous query that never ends is cancelled.
    exec(&c, "CREATE STREAM st (ts timestamp TIMESTAMPCOLUMN, v int)").await;
    let e = c
        .simple_query("SELECT count(*) FROM st [RANGE BY '1 hour']")
        .await
        .expect_err("the statement timeout ends it");
    assert_eq!(sqlstate(&e), "57014");
    for (options, code) in [
        ("-c no_such_parameter=1", "42704"),
        ("-c statement_timeout=soon", "22023"),
        ("-c TimeZone=Nowhere/Atlantis", "22023"),
        ("-x", "42601"),
    ] {
        let e = match connect_opts(options).await {
            Ok(_) => panic!("{options} must refuse the connection"),
            Err(e) => e,
        };
        assert_eq!(sqlstate(&e), code, "{options}: {e}");
    }
    // psql's PGOPTIONS.
    if common::psql::psql_missing().is_none() {
        let out = common::psql::command(port)
            .env("PGOPTIONS", "-c statement_timeout=250")
            .args(["-X", "-At", "-c", "SHOW statement_timeout"])
            .output()
            .expect("run psql");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "250ms");
    }
}

/// `SET ROLE` and `SET SESSION AUTHORIZATION` parse as PostgreSQL's grammar has them: to
/// the session's own role, NONE or DEFAULT they succeed; to another role they are 0A000
/// (tcq has no role membership), never a syntax error.
#[tokio::test]
async fn set_role_follows_postgres_grammar() {
    let port = start_server();
    let c = connect(port).await;
    for ok in [
        "SET ROLE tcq",
        "SET ROLE 'tcq'",
        "SET ROLE NONE",
        "SET LOCAL ROLE NONE",
        "RESET ROLE",
        "SET SESSION AUTHORIZATION tcq",
        "SET SESSION AUTHORIZATION DEFAULT",
        "RESET SESSION AUTHORIZATION",
    ] {
        exec(&c, ok).await;
    }
    for refused in ["SET ROLE alice", "SET SESSION AUTHORIZATION 'alice'"] {
        let (code, message) = error(&c, refused).await;
        assert_eq!(code, "0A000", "{refused}: {message}");
        assert!(message.contains("no role membership"), "{message}");
    }
    let (code, _) = error(&c, "SET ROLE").await;
    assert_eq!(code, "42601");
}

/// `tcq_advance` of a table says the relation is no stream (42809), given as a literal or
/// as a parameter; of an unknown name, that it does not exist (42P01).
#[tokio::test]
async fn tcq_advance_names_a_relation_that_is_not_a_stream() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, "CREATE TABLE t (a int)").await;
    let (code, message) = error(&c, "SELECT tcq_advance('t', now())").await;
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "42809",
            "\"t\" is not a stream: tcq_advance moves a stream's time"
        )
    );
    let e = c
        .query("SELECT tcq_advance($1::text, now())", &[&"t"])
        .await
        .expect_err("a table is no stream");
    assert_eq!(sqlstate(&e), "42809", "{e}");
    let (code, _) = error(&c, "SELECT tcq_advance('nosuch', now())").await;
    assert_eq!(code, "42P01");
}

/// Numeric and float results as PostgreSQL 15 gives them: a zero operand keeps the
/// display scale of numeric arithmetic, numeric to double precision is correctly rounded,
/// and float aggregates whose finite inputs overflow fail with 22003 (PostgreSQL's
/// float8_accum) instead of giving Infinity.
#[tokio::test]
async fn numeric_scale_float_casts_and_float_overflow() {
    let port = start_server();
    let c = connect(port).await;
    assert_eq!(
        rows(
            &c,
            "SELECT 0.00 + 1, 1.50 * 0, 0.000 - 0.0, 1.5 * 2.25, \
             41152263.66666666666666666667::float8, 0.1::numeric::float8"
        )
        .await,
        table(&[&[
            "1.00",
            "0.00",
            "0.000",
            "3.375",
            "41152263.666666664",
            "0.1"
        ]])
    );
    exec(
        &c,
        "CREATE STREAM f (ts timestamp TIMESTAMPCOLUMN, x double precision)",
    )
    .await;
    let window = "FROM f [RANGE BY '1 second' START AT '2020-01-01 00:00:00']";
    // The sum overflows, or (1e200 and -1e200) the sum of squared deviations does.
    for (agg, big, other) in [
        ("sum(x)", "1e308", "1e308"),
        ("avg(x)", "1e308", "1e308"),
        ("stddev(x)", "1e200", "-1e200"),
        ("var_pop(x)", "1e200", "-1e200"),
    ] {
        exec(&c, "DROP STREAM IF EXISTS g").await;
        exec(
            &c,
            "CREATE STREAM g (ts timestamp TIMESTAMPCOLUMN, x double precision)",
        )
        .await;
        let feeder = connect(port).await;
        let sql = format!(
            "SELECT {agg} {} LIMIT 1",
            window.replace("FROM f", "FROM g")
        );
        let reader = tokio::spawn(async move {
            let c = connect(port).await;
            c.simple_query(&sql).await.map(|_| ())
        });
        wait_for_queries(&feeder, 1).await;
        exec(
            &feeder,
            &format!(
                "INSERT INTO g VALUES ('2020-01-01 00:00:00', {big}), \
                 ('2020-01-01 00:00:00.5', {other}), ('2020-01-01 00:00:01', 0)"
            ),
        )
        .await;
        let e = reader.await.unwrap().expect_err(agg);
        assert_eq!(sqlstate(&e), "22003", "{agg}: {e}");
        assert_eq!(
            e.as_db_error().unwrap().message(),
            "value out of range: overflow",
            "{agg}"
        );
    }
    // An infinite input is no overflow: Infinity, as in PostgreSQL.
    let sql = format!("SELECT sum(x), avg(x) {window} LIMIT 1");
    let got = continuous_rows(
        port,
        &c,
        sql,
        "INSERT INTO f VALUES ('2020-01-01 00:00:00', 'Infinity'), \
         ('2020-01-01 00:00:00.5', 1), ('2020-01-01 00:00:01', 0)",
    )
    .await;
    assert_eq!(got, table(&[&["Infinity", "Infinity"]]));
}

/// `octet_length` counts the bytes of the text (UTF-8), `length` its characters; both
/// are integer, NULL for NULL, in plain SELECTs and in continuous queries.
#[tokio::test]
async fn octet_length_counts_bytes() {
    let port = start_server();
    let c = connect(port).await;
    assert_eq!(
        rows(
            &c,
            "SELECT octet_length('héllo'), length('héllo'), octet_length(NULL::text), \
             pg_typeof(octet_length('a'))"
        )
        .await,
        table(&[&["6", "5", "NULL", "integer"]])
    );
    exec(&c, "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text)").await;
    let reader = tokio::spawn(async move {
        let c = connect(port).await;
        rows(
            &c,
            "SELECT sum(octet_length(k)), sum(length(k)) FROM s \
             [RANGE BY '1 second' START AT '2020-01-01 00:00:00'] LIMIT 1",
        )
        .await
    });
    wait_for_queries(&c, 1).await;
    exec(
        &c,
        "INSERT INTO s VALUES ('2020-01-01 00:00:00', 'é'), ('2020-01-01 00:00:00.5', 'ab'), \
         ('2020-01-01 00:00:01', 'x')",
    )
    .await;
    assert_eq!(reader.await.unwrap(), table(&[&["4", "3"]]));
}

/// In an aborted transaction block every statement but COMMIT and ROLLBACK is 25P02, also
/// one whose analysis would fail on its own (a FETCH the cursor refuses, an unknown
/// stream), as PostgreSQL skips the analysis there.
#[tokio::test]
async fn an_aborted_block_answers_25p02_before_analysis() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE STREAM fe (ts timestamp TIMESTAMPCOLUMN, v integer)",
    )
    .await;
    exec(&c, "BEGIN; DECLARE c3 CURSOR FOR SELECT v FROM fe").await;
    let (state, _) = error(&c, "FETCH ABSOLUTE 1 FROM c3").await;
    assert_eq!(state, "55000");
    for sql in [
        "FETCH PRIOR FROM c3",
        "FETCH ABSOLUTE 1 FROM c3",
        "SELECT * FROM nosuch",
        "SELECT 1",
    ] {
        assert_eq!(error(&c, sql).await.0, "25P02", "{sql}");
    }
    exec(&c, "ROLLBACK").await;
    assert_eq!(rows(&c, "SELECT 1").await, table(&[&["1"]]));
}

/// Variance and standard deviation of bigints near 2^62 are exact numerics wider than 28
/// digits, printed as PostgreSQL 15 prints them (its output for these values), in a
/// continuous query as over a table; the wide values order, cast and take part in
/// arithmetic and power() exactly.
#[tokio::test]
async fn variance_of_bigints_near_2_62_is_exact_in_both_paths() {
    let port = start_server();
    let c = connect(port).await;
    const VALUES: &str = "4611686018427387904, 4611686018427387903, 4611686018427387905, \
                          -4611686018427387904, 7, 4611686018427387904, 0";
    let want = [
        "3628455155488827652",
        "11284874413194387814985569883728021468",
        "13165686815393452450816498197682691713",
    ];
    exec(&c, "CREATE TABLE big (x bigint)").await;
    let values: Vec<String> = VALUES.split(", ").map(|v| format!("({v})")).collect();
    exec(&c, &format!("INSERT INTO big VALUES {}", values.join(", "))).await;
    let sql = "SELECT stddev(x), var_pop(x), var_samp(x)";
    assert_eq!(
        rows(&c, &format!("{sql} FROM big")).await,
        table(&[&want[..]])
    );
    assert_eq!(
        rows(
            &c,
            "SELECT var_pop(x)::float8, var_pop(x) > 1e20, var_pop(x)::text FROM big"
        )
        .await,
        table(&[&["1.1284874413194389e+37", "t", want[1]]])
    );
    assert_eq!(
        rows(&c, "SELECT var_pop(x) + 1, -var_pop(x) / 7 FROM big").await,
        table(&[&[
            "11284874413194387814985569883728021469",
            "-1612124916170626830712224269104003067"
        ]])
    );
    // PostgreSQL 15's answer, digit for digit, at power()'s scale of 16.
    assert_eq!(
        rows(&c, "SELECT power(var_pop(x), 2) FROM big").await,
        table(&[&[
            "127348390521569378728097057712826333178151393091130847659606511745868875024\
                   .0000000000000000"
        ]])
    );
    exec(
        &c,
        "CREATE STREAM g (ts timestamp TIMESTAMPCOLUMN, x bigint)",
    )
    .await;
    let query =
        format!("{sql} FROM g [RANGE BY '1 second' START AT '2020-01-01 00:00:00'] LIMIT 1");
    let reader = tokio::spawn(async move {
        let c = connect(port).await;
        rows(&c, &query).await
    });
    wait_for_queries(&c, 1).await;
    let rows_in: Vec<String> = VALUES
        .split(", ")
        .enumerate()
        .map(|(i, v)| format!("('2020-01-01 00:00:00.{i}', {v})"))
        .collect();
    exec(
        &c,
        &format!(
            "INSERT INTO g VALUES {}, ('2020-01-01 00:00:01', 0)",
            rows_in.join(", ")
        ),
    )
    .await;
    assert_eq!(reader.await.unwrap(), table(&[&want[..]]));
}

/// `BETWEEN SYMMETRIC` in a continuous query: either order of the bounds, NOT, and a NULL
/// bound (no row), as PostgreSQL reads it.
#[tokio::test]
async fn between_symmetric_filters_a_continuous_query() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE STREAM h (ts timestamp TIMESTAMPCOLUMN, x integer)",
    )
    .await;
    let query = "SELECT x, x NOT BETWEEN SYMMETRIC 3 AND 1, x BETWEEN SYMMETRIC NULL AND 9 \
                 FROM h [RANGE BY '1 second' START AT '2020-01-01 00:00:00'] \
                 WHERE x BETWEEN SYMMETRIC 5 AND 2 ORDER BY x LIMIT 3";
    let got = continuous_rows(
        port,
        &c,
        query.to_string(),
        "INSERT INTO h VALUES ('2020-01-01 00:00:00', 1), ('2020-01-01 00:00:00.1', 2), \
         ('2020-01-01 00:00:00.2', 4), ('2020-01-01 00:00:00.3', 5), \
         ('2020-01-01 00:00:00.4', 6), ('2020-01-01 00:00:01', 0)",
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["2", "f", "NULL"],
            &["4", "t", "NULL"],
            &["5", "t", "NULL"]
        ])
    );
}

/// TRIM and LIKE ... ESCAPE in a continuous query and in a relational one (a derived
/// table), with the same answers: TRIM calls btrim/ltrim/rtrim, ESCAPE names the
/// pattern's escape character ('' none), an escape of two characters is 22025.
#[tokio::test]
async fn trim_and_like_escape_in_both_paths() {
    let port = start_server();
    let c = connect(port).await;
    let items = "trim(both 'x' from s), trim(leading from s), trim(s, 'x'), \
                 s LIKE 'a#%%' ESCAPE '#', s ILIKE 'A!_%' ESCAPE '!'";
    let want = table(&[
        &[" xb ", "xb ", " xb ", "f", "f"],
        &["a%c", "a%c", "a%c", "t", "f"],
        &["a_", "a_x", "a_", "f", "t"],
    ]);
    exec(&c, "CREATE TABLE tt (s text)").await;
    exec(
        &c,
        "INSERT INTO tt VALUES (' xb '), ('a%c'), ('a_x'), ('zz\\z')",
    )
    .await;
    let finite = format!(
        "SELECT {items} FROM (SELECT * FROM tt) d WHERE s NOT LIKE '%\\z' ESCAPE '' ORDER BY s"
    );
    assert_eq!(rows(&c, &finite).await, want);
    let (code, message) = error(&c, "SELECT 'a' LIKE 'a' ESCAPE 'ab' FROM (SELECT 1) d").await;
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("22025", "invalid escape string")
    );
    exec(
        &c,
        "CREATE STREAM tr (ts timestamp TIMESTAMPCOLUMN, s text)",
    )
    .await;
    let query = format!(
        "SELECT {items} FROM tr [RANGE BY '1 second' START AT '2020-01-01 00:00:00'] \
         WHERE s NOT LIKE '%\\z' ESCAPE '' ORDER BY s LIMIT 3"
    );
    let got = continuous_rows(
        port,
        &c,
        query,
        "INSERT INTO tr VALUES ('2020-01-01 00:00:00', 'zz\\z'), \
         ('2020-01-01 00:00:00.1', 'a_x'), ('2020-01-01 00:00:00.2', ' xb '), \
         ('2020-01-01 00:00:00.3', 'a%c'), ('2020-01-01 00:00:01', 'q')",
    )
    .await;
    assert_eq!(got, want);
    let (code, _) = error(&c, "SELECT trim(ts) FROM tr [RANGE BY '1 second']").await;
    assert_eq!(code, "42883");
}

/// `x op ANY|ALL (ARRAY[...])` filters and computes in a continuous query as PostgreSQL
/// reads it: NULL elements give NULL where no element decides.
#[tokio::test]
async fn any_and_all_over_arrays_in_a_continuous_query() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE STREAM aa (ts timestamp TIMESTAMPCOLUMN, x integer)",
    )
    .await;
    let query = "SELECT x, x <> ALL(ARRAY[2, NULL]), x < ALL(ARRAY[3, 4.5]) \
                 FROM aa [RANGE BY '1 second' START AT '2020-01-01 00:00:00'] \
                 WHERE x = ANY(ARRAY[1, 2, 4]) ORDER BY x LIMIT 3";
    let got = continuous_rows(
        port,
        &c,
        query.to_string(),
        "INSERT INTO aa VALUES ('2020-01-01 00:00:00', 1), ('2020-01-01 00:00:00.1', 2), \
         ('2020-01-01 00:00:00.2', 3), ('2020-01-01 00:00:00.3', 4), ('2020-01-01 00:00:01', 0)",
    )
    .await;
    assert_eq!(
        got,
        table(&[&["1", "NULL", "t"], &["2", "f", "t"], &["4", "NULL", "f"]])
    );
}

/// `~~`, `!~~`, `~~*` and `!~~*` are LIKE, NOT LIKE, ILIKE and NOT ILIKE in a continuous
/// query (select list and WHERE) as in PostgreSQL, `OPERATOR(pg_catalog.~~)` too.
#[tokio::test]
async fn like_operators_filter_a_continuous_query() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE STREAM lk (ts timestamp TIMESTAMPCOLUMN, t text)",
    )
    .await;
    let query = "SELECT t, t ~~* 'A%', t !~~* '%C', t OPERATOR(pg_catalog.~~) '_b%' \
                 FROM lk [RANGE BY '1 second' START AT '2020-01-01 00:00:00'] \
                 WHERE t ~~ '%b%' AND t !~~ 'x%' ORDER BY t LIMIT 3";
    let got = continuous_rows(
        port,
        &c,
        query.to_string(),
        "INSERT INTO lk VALUES ('2020-01-01 00:00:00', 'abc'), ('2020-01-01 00:00:00.1', 'xbz'), \
         ('2020-01-01 00:00:00.2', 'Bob'), ('2020-01-01 00:00:00.3', 'cab'), \
         ('2020-01-01 00:00:00.4', 'zzz'), ('2020-01-01 00:00:01', 'end')",
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["Bob", "f", "t", "f"],
            &["abc", "t", "f", "t"],
            &["cab", "f", "t", "f"]
        ])
    );
}

/// An operator whose operands are all unknown literals is 42725 (`operator is not
/// unique`) where PostgreSQL has several candidates, over a table and over a stream; one
/// typed operand picks the operator.
#[tokio::test]
async fn operators_of_unknown_operands_are_not_unique() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE STREAM un (ts timestamp TIMESTAMPCOLUMN, x integer)",
    )
    .await;
    for (sql, message) in [
        (
            "SELECT 'a' + 'b'",
            "operator is not unique: unknown + unknown",
        ),
        (
            "SELECT NULL * NULL",
            "operator is not unique: unknown * unknown",
        ),
        (
            "SELECT '1' & '2'",
            "operator is not unique: unknown & unknown",
        ),
        ("SELECT -'1'", "operator is not unique: - unknown"),
        ("SELECT ~NULL", "operator is not unique: ~ unknown"),
        (
            "SELECT x, '1' - '2' FROM un [RANGE BY '1 second']",
            "operator is not unique: unknown - unknown",
        ),
    ] {
        assert_eq!(
            error(&c, sql).await,
            ("42725".into(), message.into()),
            "{sql}"
        );
    }
    assert_eq!(
        rows(
            &c,
            "SELECT '1' + 1, 'a' || 'b', '1' + 1.5, pg_typeof('1' + 1)"
        )
        .await,
        table(&[&["2", "ab", "2.5", "integer"]])
    );
}

/// `ORDER BY ... USING >` sorts a continuous query's slide event descending (NULLs first
/// unless told otherwise), as PostgreSQL; an operator that is no ordering operator is
/// 42809.
#[tokio::test]
async fn order_by_using_sorts_a_continuous_query() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, "CREATE STREAM ou (ts timestamp TIMESTAMPCOLUMN, k int)").await;
    let query = "SELECT k FROM ou [RANGE BY '1 second' START AT '2020-01-01 00:00:00'] \
                 ORDER BY k USING > NULLS LAST LIMIT 3";
    let got = continuous_rows(
        port,
        &c,
        query.to_string(),
        "INSERT INTO ou VALUES ('2020-01-01 00:00:00', 1), ('2020-01-01 00:00:00.1', NULL), \
         ('2020-01-01 00:00:00.2', 3), ('2020-01-01 00:00:00.3', 2), \
         ('2020-01-01 00:00:01', 0)",
    )
    .await;
    assert_eq!(got, table(&[&["3"], &["2"], &["1"]]));
    let bad = "SELECT k FROM ou [RANGE BY '1 second' START AT '2020-01-01 00:00:00'] \
               ORDER BY k USING <=";
    assert_eq!(error(&c, bad).await.0, "42809");
}
