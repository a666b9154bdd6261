//! A bad-input corpus (issue 11): several hundred statements and COPY payloads generated
//! from templates, each refused with an error of the expected SQLSTATE class (never a
//! panic, a hang or a success), after each of which the server still answers `SELECT 1`
//! and the stream has received nothing.

use crate::common;

use std::time::Duration;

use bytes::Bytes;
use futures::SinkExt;

const STREAM: &str = "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer, t text, n numeric)";

/// Statement templates: `{i}` is replaced by the variant number, `{n}` by a number derived
/// from it; each with the SQLSTATE class PostgreSQL would answer.
const STATEMENTS: &[(&str, &str)] = &[
    // Syntax.
    ("SELEC {i}", "42"),
    ("SELECT FROM WHERE {i}", "42"),
    ("CREATE STREAM ( v integer {i}", "42"),
    ("SELECT count(*) FROM s [RANGE BY]", "42"),
    ("SELECT count(*) FROM s [RANGE '{n} seconds']", "42"),
    ("INSERT INTO s VALUES ({i}", "42"),
    ("SELECT {i} +", "42"),
    // Unknown names.
    ("SELECT * FROM nosuch_{i}", "42"),
    ("SELECT nosuch_{i} FROM s", "42"),
    ("INSERT INTO nosuch_{i} VALUES (1)", "42"),
    ("CREATE STREAM x_{i} (a nosuchtype_{i})", "42"),
    ("CREATE STREAM x_{i} (a integer[])", "0A"),
    ("CREATE ROLE \"\"", "42"),
    ("SELECT {i} AS \"\"", "42"),
    ("CREATE TABLE x_{i} (a text ARRAY)", "0A"),
    ("CREATE STREAM x_{i} (a int[{n}])", "0A"),
    ("SELECT nosuchfunc_{i}(v) FROM s", "42"),
    ("FETCH {n} FROM nosuch_{i}", "34"),
    ("CREATE STREAM pg_catalog.x_{i} (v integer)", "42"),
    ("CREATE STREAM s (v integer)", "42"),
    ("SELECT v, count(*) FROM s [RANGE BY '{n} seconds']", "42"),
    // Windows and values.
    ("SELECT count(*) FROM s [RANGE BY '{n} months']", "22"),
    ("SELECT count(*) FROM s [RANGE BY '-{n} seconds']", "22"),
    (
        "SELECT count(*) FROM s [RANGE BY '{n} seconds' SLIDE BY '0 seconds']",
        "22",
    ),
    ("SELECT count(*) FROM s [RANGE BY 'banana {i}']", "22"),
    (
        "SELECT count(*) FROM s [RANGE BY '1 minute' START AT 'not a time {i}']",
        "22",
    ),
    ("INSERT INTO s VALUES ('not a time {i}', 1, 'x', 1)", "22"),
    (
        "INSERT INTO s VALUES ('2001-01-01', 'abc{i}', 'x', 1)",
        "22",
    ),
    (
        "INSERT INTO s VALUES ('2001-01-01', {n}9999999999, 'x', 1)",
        "22",
    ),
    (
        "INSERT INTO s VALUES ('2001-01-01', 1, 'x', 'numeric{i}')",
        "22",
    ),
    ("INSERT INTO s VALUES ('2001-13-{n}', 1, 'x', 1)", "22"),
    ("SELECT {n} / 0", "22"),
    ("SELECT U&'\\0000{i}'", "22"),
    (
        "INSERT INTO s VALUES ('2001-01-01', 1, U&'a\\0000{i}', 1)",
        "22",
    ),
    ("SELECT v FROM s LIMIT -{n}", "22"),
    ("SELECT v FROM s OFFSET -{n}", "22"),
    // Roles and privileges (issue 11).
    ("CREATE ROLE public", "42"),
    ("CREATE ROLE pg_role_{i}", "42"),
    ("CREATE ROLE r_{i} LOGIN NOLOGIN", "42"),
    ("CREATE ROLE r_{i} PASSWORD", "42"),
    ("CREATE ROLE r_{i} CREATEDB", "0A"),
    ("CREATE ROLE r_{i} CONNECTION LIMIT {n}", "0A"),
    ("ALTER ROLE nosuch_{i} LOGIN", "42"),
    ("ALTER ROLE nosuch_{i} RENAME TO x_{i}", "0A"),
    ("DROP ROLE nosuch_{i}", "42"),
    ("DROP ROLE tcq", "55"),
    ("GRANT SELECT ON nosuch_{i} TO public", "42"),
    ("GRANT SELECT ON STREAM nosuch_{i} TO public", "42"),
    ("GRANT SELECT ON s TO nosuch_{i}", "42"),
    ("GRANT SELECT (v) ON s TO public", "0A"),
    ("GRANT r_{i} TO public", "0A"),
    ("GRANT SELECT ON s TO public WITH GRANT OPTION", "0A"),
    ("GRANT USAGE ON SCHEMA public TO public", "0A"),
    ("REVOKE SELECT ON nosuch_{i} FROM public", "42"),
    ("REVOKE SELECT ON s TO public", "42"),
    ("ALTER STREAM nosuch_{i} OWNER TO tcq", "42"),
    ("ALTER STREAM s OWNER TO nosuch_{i}", "42"),
    ("ALTER TABLE s OWNER TO nosuch_{i}", "42"),
    ("SET ROLE = 'r_{i}'", "0A"),
    // Features and transaction state.
    ("SELECT * FROM s, s AS s2 WHERE s.v = {i}", "0A"),
    ("SET TimeZone = 'Nowhere/Zone{i}'", "22"),
    ("DECLARE c{i} CURSOR FOR SELECT v FROM s", "25"),
    // Limits.
    ("SELECT {deep}", "54"),
];

/// COPY payloads into `s` (text format unless the template says CSV), with their class.
const COPY_PAYLOADS: &[(&str, &[u8], &str)] = &[
    ("text", b"2001-01-01\t{i}\n", "22"),
    ("text", b"2001-01-01\tabc{i}\tx\t1\n", "22"),
    ("text", b"not a time {i}\t1\tx\t1\n", "22"),
    ("text", b"2001-01-01\t1\tx\t1\textra{i}\n", "22"),
    ("text", b"2001-01-01\t1\tbad \xc3\x28 byte {i}\t1\n", "22"),
    ("text", b"2001-01-01\t1\tnul \\000 {i}\t1\n", "22"),
    ("text", b"2001-01-01\t1\traw \x00 nul {i}\t1\n", "22"),
    ("text", b"2001-01-01\t{i}99999999999\tx\t1\n", "22"),
    ("csv", b"2001-01-01,1,\"unterminated {i},1\n", "22"),
    ("csv", b"2001-01-01,1,x,notanumber{i}\n", "22"),
];

const VARIANTS: usize = 16;

fn fill(template: &str, i: usize) -> String {
    let deep = format!("{}{i}{}", "(".repeat(1_100), ")".repeat(1_100));
    template
        .replace("{i}", &i.to_string())
        .replace("{n}", &(i * 7 + 1).to_string())
        .replace("{deep}", &deep)
}

fn fill_bytes(template: &[u8], i: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(at) = rest.windows(3).position(|w| w == b"{i}") {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(i.to_string().as_bytes());
        rest = &rest[at + 3..];
    }
    out.extend_from_slice(rest);
    out
}

async fn assert_alive(c: &tokio_postgres::Client, what: &str) {
    let one = tokio::time::timeout(Duration::from_secs(10), c.query_one("SELECT 1", &[]))
        .await
        .unwrap_or_else(|_| panic!("SELECT 1 hung after {what}"))
        .unwrap_or_else(|e| panic!("SELECT 1 failed after {what}: {e}"));
    assert_eq!(one.get::<_, i32>(0), 1);
}

#[tokio::test]
async fn every_bad_input_gets_its_error_class_and_the_server_serves_on() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    let mut cases = 0;
    let mut mismatches = Vec::new();
    for (template, class) in STATEMENTS {
        for i in 0..VARIANTS {
            let sql = fill(template, i);
            let result = tokio::time::timeout(Duration::from_secs(10), c.batch_execute(&sql))
                .await
                .unwrap_or_else(|_| panic!("{sql} hung"));
            match result {
                Ok(()) => mismatches.push(format!("{template}: accepted")),
                Err(e) => {
                    let code = common::sqlstate(&e);
                    if !code.starts_with(class) {
                        mismatches.push(format!("{template}: {code}, expected class {class}: {e}"));
                    }
                }
            }
            assert_alive(&c, &sql).await;
            cases += 1;
        }
    }
    for (format, template, class) in COPY_PAYLOADS {
        for i in 0..VARIANTS {
            let data = fill_bytes(template, i);
            let sql = if *format == "csv" {
                "COPY s FROM STDIN WITH (FORMAT csv)"
            } else {
                "COPY s FROM STDIN"
            };
            let copy = async {
                let sink = c.copy_in(sql).await?;
                futures::pin_mut!(sink);
                sink.send(Bytes::from(data.clone())).await?;
                sink.finish().await
            };
            let result = tokio::time::timeout(Duration::from_secs(10), copy)
                .await
                .unwrap_or_else(|_| panic!("COPY of {data:?} hung"));
            match result {
                Ok(n) => mismatches.push(format!("COPY {data:?}: accepted {n} rows")),
                Err(e) => {
                    let code = common::sqlstate(&e);
                    if !code.starts_with(class) {
                        mismatches.push(format!(
                            "COPY {data:?}: {code}, expected class {class}: {e}"
                        ));
                    }
                }
            }
            assert_alive(&c, "a bad COPY").await;
            cases += 1;
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {cases} cases:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(cases >= 500, "only {cases} cases");
    let rows = c
        .query("SELECT tuples FROM tcq_streams WHERE name = 's'", &[])
        .await
        .unwrap();
    assert_eq!(
        rows[0].get::<_, i64>(0),
        0,
        "no bad input reached the stream"
    );
    assert_eq!(tcq::server::connection_panics(), 0);
}
