//! Roles, ownership and privileges (issue 11), over real sockets: roles made with CREATE
//! ROLE log in with SCRAM-SHA-256 beside the password file's users; a non-owner cannot
//! drop, cannot read another's stream or table without GRANT, can after it and loses it
//! after REVOKE; other users' query text is hidden and their backends cannot be cancelled
//! or terminated; roles, owners and grants survive a restart on a data directory; psql's
//! `\du` and psycopg see the same. The psql and psycopg tests skip with a message when the
//! tool is missing (.ci/run installs them).

use crate::common;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::tcqd::Tcqd;
use common::{connect_as, exec, password_options, rows, sqlstate, start_server_with_options};
use tokio_postgres::Client;

/// The password file of every test: two superusers.
const PASSWORDS: &str = "admin:adminpw\nroot:rootpw\n";

const STREAM: &str = "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)";

async fn login(port: u16, user: &str, password: &str) -> Client {
    connect_as(port, user, password)
        .await
        .unwrap_or_else(|e| panic!("{user} cannot log in: {e}"))
}

/// The SQLSTATE and message of `sql`, which must fail.
async fn refused(c: &Client, sql: &str) -> (String, String) {
    let e = tokio::time::timeout(Duration::from_secs(20), c.batch_execute(sql))
        .await
        .unwrap_or_else(|_| panic!("timed out: {sql}"))
        .err()
        .unwrap_or_else(|| panic!("accepted: {sql}"));
    let msg = e
        .as_db_error()
        .map_or(e.to_string(), |d| d.message().to_string());
    (sqlstate(&e), msg)
}

fn pair(code: &str, msg: &str) -> (String, String) {
    (code.to_string(), msg.to_string())
}

/// A server with the password file and roles alice (LOGIN, password a1) and bob (LOGIN,
/// password b1); returns its port and the admin's connection.
async fn with_roles() -> (u16, Client) {
    let port = start_server_with_options(password_options(PASSWORDS));
    let admin = login(port, "admin", "adminpw").await;
    exec(
        &admin,
        "CREATE ROLE alice LOGIN PASSWORD 'a1'; CREATE USER bob WITH PASSWORD 'b1'",
    )
    .await;
    (port, admin)
}

#[tokio::test]
async fn superusers_manage_roles_that_log_in_with_scram() {
    let (port, admin) = with_roles().await;
    exec(&admin, "CREATE ROLE carol PASSWORD 'c1'").await;
    assert_eq!(
        rows(
            &admin,
            "SELECT rolname, rolsuper, rolcanlogin, rolpassword FROM pg_roles ORDER BY 1"
        )
        .await,
        common::table(&[
            &["admin", "t", "t", "********"],
            &["alice", "f", "t", "********"],
            &["bob", "f", "t", "********"],
            &["carol", "f", "f", "********"],
            &["root", "t", "t", "********"],
        ])
    );
    // Stored as a SCRAM verifier, never as the password.
    let stored = rows(
        &admin,
        "SELECT rolpassword FROM pg_authid WHERE rolname = 'alice'",
    )
    .await;
    assert!(
        stored[0][0].starts_with("SCRAM-SHA-256$4096:"),
        "{stored:?}"
    );
    // After the prefix: the salt (16 bytes) and the two keys (32 bytes each) in base64,
    // and nothing else. (A search for the password's text would fail now and then: a
    // random base64 string holds "a1" about one time in fifty.)
    let parts: Vec<usize> = stored[0][0]["SCRAM-SHA-256$4096:".len()..]
        .split(['$', ':'])
        .map(str::len)
        .collect();
    assert_eq!(parts, [24, 44, 44], "{stored:?}");

    let alice = login(port, "alice", "a1").await;
    assert_eq!(
        rows(
            &alice,
            "SELECT current_user, session_user, current_setting('is_superuser')"
        )
        .await,
        common::table(&[&["alice", "alice", "off"]])
    );
    assert_eq!(
        rows(&admin, "SHOW is_superuser").await,
        common::table(&[&["on"]])
    );
    for (user, password) in [("alice", "wrong"), ("dave", "a1")] {
        let e = connect_as(port, user, password).await.err().unwrap();
        assert_eq!(sqlstate(&e), "28P01", "{user}");
    }
    let e = connect_as(port, "carol", "c1").await.err().unwrap();
    assert_eq!(
        (sqlstate(&e), e.as_db_error().unwrap().message().to_string()),
        pair("28000", "role \"carol\" is not permitted to log in")
    );

    // Only superusers manage roles; a role may change its own password.
    for sql in [
        "CREATE ROLE eve",
        "ALTER ROLE bob PASSWORD 'x'",
        "ALTER ROLE alice SUPERUSER",
        "DROP ROLE bob",
    ] {
        assert_eq!(refused(&alice, sql).await.0, "42501", "{sql}");
    }
    assert_eq!(refused(&alice, "SET role = 'admin'").await.0, "0A000");
    exec(&alice, "SET role = 'alice'; RESET role").await;
    exec(&alice, "ALTER ROLE alice PASSWORD 'a2'").await;
    assert_eq!(
        sqlstate(&connect_as(port, "alice", "a1").await.err().unwrap()),
        "28P01"
    );
    login(port, "alice", "a2").await;

    assert_eq!(
        refused(&admin, "CREATE ROLE alice").await,
        pair("42710", "role \"alice\" already exists")
    );
    assert_eq!(refused(&admin, "CREATE ROLE public").await.0, "42939");
    assert_eq!(
        refused(&admin, "DROP ROLE root").await,
        pair(
            "42501",
            "role \"root\" is defined by the password file: change it there"
        )
    );
    assert_eq!(
        refused(&admin, "DROP ROLE admin").await,
        pair("55006", "current user cannot be dropped")
    );
    assert_eq!(
        refused(&admin, "DROP ROLE nobody").await,
        pair("42704", "role \"nobody\" does not exist")
    );
    exec(&admin, "DROP ROLE IF EXISTS nobody").await;

    // NOLOGIN takes effect at the next login; SUPERUSER at once.
    exec(&admin, "ALTER ROLE alice NOLOGIN").await;
    assert_eq!(
        sqlstate(&connect_as(port, "alice", "a2").await.err().unwrap()),
        "28000"
    );
    exec(&admin, "ALTER ROLE alice LOGIN SUPERUSER").await;
    exec(&alice, "CREATE ROLE eve").await;
    exec(&admin, "ALTER ROLE alice NOSUPERUSER; DROP ROLE carol, eve").await;
    assert_eq!(refused(&alice, "CREATE ROLE eve").await.0, "42501");
    assert_eq!(
        rows(&admin, "SELECT rolname FROM pg_roles ORDER BY 1").await,
        common::table(&[&["admin"], &["alice"], &["bob"], &["root"]])
    );
}

/// Rows of a continuous query as text, read until its LIMIT ends it.
async fn continuous(c: &Client, sql: &str) -> Result<Vec<Vec<String>>, tokio_postgres::Error> {
    let msgs = tokio::time::timeout(Duration::from_secs(20), c.simple_query(sql))
        .await
        .unwrap_or_else(|_| panic!("not done: {sql}"))?;
    Ok(msgs
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap().to_string())
                    .collect(),
            ),
            _ => None,
        })
        .collect())
}

#[tokio::test]
async fn owners_grant_and_revoke_and_others_are_refused() {
    let (port, admin) = with_roles().await;
    let alice = login(port, "alice", "a1").await;
    let bob = Arc::new(login(port, "bob", "b1").await);
    exec(
        &bob,
        &format!(
            "{STREAM}; CREATE TABLE t (k integer PRIMARY KEY, v integer); \
             INSERT INTO t VALUES (1, 10), (2, 20)"
        ),
    )
    .await;
    assert_eq!(
        rows(&admin, "SELECT name, owner FROM tcq_streams").await,
        common::table(&[&["s", "bob"]])
    );
    assert_eq!(
        rows(
            &alice,
            "SELECT relname, pg_get_userbyid(relowner), relacl IS NULL FROM pg_class \
             WHERE relname IN ('s', 't') ORDER BY 1"
        )
        .await,
        common::table(&[&["s", "bob", "t"], &["t", "bob", "t"]])
    );

    let window = "SELECT count(*), sum(v) FROM s \
                  [RANGE BY '1 second' START AT '2024-01-01 00:00:00'] LIMIT 1";
    let cases = [
        (window, "42501", "permission denied for stream s"),
        (
            "INSERT INTO s VALUES ('2024-01-01 00:00:00', 1)",
            "42501",
            "permission denied for stream s",
        ),
        ("SELECT * FROM t", "42501", "permission denied for table t"),
        (
            "SELECT k FROM t WHERE k IN (SELECT k FROM t)",
            "42501",
            "permission denied for table t",
        ),
        (
            "UPDATE t SET v = 0",
            "42501",
            "permission denied for table t",
        ),
        (
            "SELECT tcq_advance('s', '2030-01-01')",
            "42501",
            "permission denied for stream s",
        ),
        ("DROP STREAM s", "42501", "must be owner of stream s"),
        ("DROP TABLE t", "42501", "must be owner of table t"),
        (
            "GRANT SELECT ON s TO alice",
            "42501",
            "permission denied for stream s: only its owner or a superuser grants",
        ),
    ];
    for (sql, code, msg) in cases {
        assert_eq!(refused(&alice, sql).await, pair(code, msg), "{sql}");
    }
    // On a connection of its own: tokio-postgres does not reuse a connection whose COPY
    // failed at Execute.
    let copier = login(port, "alice", "a1").await;
    let copy = copier.copy_in::<_, bytes::Bytes>("COPY s FROM STDIN").await;
    assert_eq!(sqlstate(&copy.err().unwrap()), "42501");

    exec(
        &bob,
        "GRANT SELECT ON STREAM s TO alice; GRANT SELECT ON TABLE t TO alice",
    )
    .await;
    assert_eq!(
        rows(&alice, "SELECT relacl FROM pg_class WHERE relname = 's'").await,
        common::table(&[&["{bob=arwdD/bob,alice=r/bob}"]])
    );
    assert_eq!(
        rows(&alice, "SELECT k, v FROM t ORDER BY k").await,
        common::table(&[&["1", "10"], &["2", "20"]])
    );
    let reader = tokio::spawn(async move {
        let alice = login(port, "alice", "a1").await;
        continuous(&alice, window).await
    });
    common::wait_for_queries(&admin, 1).await;
    exec(
        &bob,
        "INSERT INTO s VALUES ('2024-01-01 00:00:00.1', 3), ('2024-01-01 00:00:00.5', 4), \
         ('2024-01-01 00:00:01.2', 100)",
    )
    .await;
    assert_eq!(
        reader.await.unwrap().unwrap(),
        common::table(&[&["2", "7"]])
    );
    // Changing rows one cannot read is refused where PostgreSQL refuses it.
    exec(&bob, "GRANT UPDATE, DELETE ON t TO alice").await;
    exec(&alice, "UPDATE t SET v = 11 WHERE k = 1").await;
    exec(&bob, "REVOKE SELECT ON t FROM alice").await;
    for sql in [
        "UPDATE t SET v = 0 WHERE k = 1",
        "DELETE FROM t WHERE k = 1",
        "UPDATE t SET v = 0 RETURNING k",
    ] {
        assert_eq!(
            refused(&alice, sql).await,
            pair("42501", "permission denied for table t"),
            "{sql}"
        );
    }
    exec(&alice, "UPDATE t SET v = 12").await;
    assert_eq!(
        rows(&bob, "SELECT k, v FROM t ORDER BY k").await,
        common::table(&[&["1", "12"], &["2", "12"]])
    );
    // SELECT is not INSERT.
    assert_eq!(
        refused(&alice, "INSERT INTO s VALUES ('2024-01-01 00:00:05', 1)")
            .await
            .0,
        "42501"
    );

    exec(&bob, "REVOKE SELECT ON s FROM alice").await;
    assert_eq!(
        refused(&alice, window).await,
        pair("42501", "permission denied for stream s")
    );
    assert_eq!(
        refused(
            &alice,
            "EXPLAIN SELECT count(*) FROM s [RANGE BY '1 minute']"
        )
        .await
        .0,
        "42501"
    );
    // PUBLIC is every role.
    exec(&bob, "GRANT INSERT ON s TO PUBLIC").await;
    exec(&alice, "INSERT INTO s VALUES ('2024-01-01 00:00:05', 1)").await;

    assert_eq!(
        refused(&admin, "GRANT SELECT ON s TO nobody").await,
        pair("42704", "role \"nobody\" does not exist")
    );
    let e = admin
        .batch_execute("GRANT SELECT ON STREAM t TO alice")
        .await
        .unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(
        (db.code().code(), db.message(), db.hint()),
        (
            "42P01",
            "relation \"t\" does not exist",
            Some("\"t\" is a table: grant ON TABLE t")
        )
    );
    let (code, msg) = refused(&admin, "DROP ROLE bob").await;
    assert_eq!(code, "2BP01");
    assert!(msg.contains("owner of s, t"), "{msg}");
    // A DROP ROLE that fails on one of its roles drops none of them.
    exec(&admin, "CREATE ROLE carol").await;
    assert_eq!(refused(&admin, "DROP ROLE carol, bob").await.0, "2BP01");
    assert_eq!(
        rows(
            &admin,
            "SELECT rolname FROM pg_roles WHERE rolname = 'carol'"
        )
        .await,
        common::table(&[&["carol"]])
    );
    exec(&admin, "DROP ROLE carol").await;
    // Only a superuser gives a relation to another role; grants stay.
    assert_eq!(
        refused(&bob, "ALTER STREAM s OWNER TO alice").await,
        pair(
            "42501",
            "permission denied to change the owner of stream s: only superusers do"
        )
    );
    assert_eq!(
        refused(&admin, "ALTER TABLE t OWNER TO nobody").await,
        pair("42704", "role \"nobody\" does not exist")
    );
    exec(
        &admin,
        "ALTER STREAM s OWNER TO alice; ALTER TABLE t OWNER TO alice; DROP ROLE bob",
    )
    .await;
    assert_eq!(
        rows(&alice, "SELECT name, owner FROM tcq_streams").await,
        common::table(&[&["s", "alice"]])
    );
    // A superuser passes every check; an owner drops its own.
    exec(&alice, "DROP STREAM s").await;
    exec(&admin, "DROP TABLE t").await;
}

/// A tester's report: after `ALTER ... OWNER TO` a role that had been granted privileges,
/// `relacl` listed the new owner twice (`{alice=arwdD/alice,alice=r/alice,...}`).
/// PostgreSQL keeps one aclitem per grantee: the new owner's grants fold into ownership.
#[tokio::test]
async fn alter_owner_folds_the_new_owners_grants_into_one_aclitem() {
    let (port, admin) = with_roles().await;
    exec(
        &admin,
        &format!(
            "{STREAM}; CREATE TABLE rt (k integer); \
             GRANT SELECT ON s TO alice; GRANT INSERT ON STREAM s TO bob; \
             ALTER STREAM s OWNER TO alice; \
             GRANT SELECT, UPDATE ON rt TO bob; GRANT SELECT ON rt TO alice; \
             ALTER TABLE rt OWNER TO bob; \
             GRANT SELECT ON s TO alice; GRANT DELETE ON rt TO bob"
        ),
    )
    .await;
    // The later grants to the owners change nothing: they hold every privilege.
    assert_eq!(
        rows(
            &admin,
            "SELECT relname, pg_get_userbyid(relowner), relacl FROM pg_class \
             WHERE relname IN ('s', 'rt') ORDER BY 1"
        )
        .await,
        common::table(&[
            &["rt", "bob", "{bob=arwdD/bob,alice=r/bob}"],
            &["s", "alice", "{alice=arwdD/alice,bob=a/alice}"],
        ])
    );
    // Checks agree with what relacl shows.
    let bob = login(port, "bob", "b1").await;
    exec(
        &bob,
        "INSERT INTO s VALUES ('2024-01-01 00:00:00', 1); TRUNCATE rt",
    )
    .await;
    assert_eq!(
        refused(&bob, "SELECT * FROM s [RANGE BY '1 second'] LIMIT 1").await,
        pair("42501", "permission denied for stream s")
    );
    let alice = login(port, "alice", "a1").await;
    // Once granted, the access list stays explicit: the owner's entry remains.
    exec(&alice, "REVOKE ALL ON s FROM bob").await;
    assert_eq!(
        rows(&alice, "SELECT relacl FROM pg_class WHERE relname = 's'").await,
        common::table(&[&["{alice=arwdD/alice}"]])
    );
}

/// A tester's report: `has_table_privilege` was true for everyone on everything.
#[tokio::test]
async fn has_table_privilege_answers_from_owners_grants_and_public() {
    let (port, admin) = with_roles().await;
    let bob = login(port, "bob", "b1").await;
    exec(
        &bob,
        &format!(
            "{STREAM}; CREATE TABLE rt (k integer); \
             GRANT SELECT ON rt TO alice; GRANT INSERT ON s TO PUBLIC"
        ),
    )
    .await;
    let alice = login(port, "alice", "a1").await;
    let asked = [
        "has_table_privilege('rt', 'SELECT')",
        "has_table_privilege('rt', 'INSERT')",
        "has_table_privilege('rt', ' insert , select')",
        "has_table_privilege('rt', 'SELECT WITH GRANT OPTION')",
        "has_table_privilege('public.rt', 'REFERENCES')",
        "has_table_privilege('s', 'INSERT')",
        "has_table_privilege('s', 'SELECT')",
        "has_table_privilege('bob', 'rt', 'TRUNCATE')",
        "has_table_privilege('bob', 'rt', 'select with grant option')",
        "has_table_privilege('admin', 's', 'DELETE')",
        "has_table_privilege('public', 's', 'INSERT')",
        "has_table_privilege('public', 'rt', 'SELECT')",
        "has_table_privilege('pg_class', 'SELECT')",
        "has_table_privilege('pg_authid', 'SELECT')",
        "has_any_column_privilege('rt', 'SELECT')",
        "has_table_privilege((SELECT oid FROM pg_class WHERE relname = 'rt'), 'SELECT')",
        "has_table_privilege((SELECT oid FROM pg_roles WHERE rolname = 'alice'), 's', 'UPDATE')",
        "has_table_privilege('rt', NULL) IS NULL",
        // tcq keeps no schema privileges: any schema but the system ones takes CREATE.
        "has_schema_privilege('public', 'CREATE')",
        "has_schema_privilege('pg_catalog', 'usage')",
        "has_schema_privilege('pg_catalog', 'CREATE')",
        "has_schema_privilege('bob', 'public', 'USAGE, CREATE')",
    ];
    let answers = rows(&alice, &format!("SELECT {}", asked.join(", "))).await;
    let expected = "t f t f f t f t t t t f t f t t f t t t f t";
    assert_eq!(answers[0].join(" "), expected, "{asked:?}");
    for (sql, code, msg) in [
        (
            "SELECT has_table_privilege('carol', 'rt', 'SELECT')",
            "42704",
            "role \"carol\" does not exist",
        ),
        (
            "SELECT has_table_privilege('nosuch', 'SELECT')",
            "42P01",
            "relation \"nosuch\" does not exist",
        ),
        (
            "SELECT has_table_privilege('rt', 'SELECT, FLY')",
            "22023",
            "unrecognized privilege type: \"FLY\"",
        ),
        (
            "SELECT has_schema_privilege('nosuch', 'USAGE')",
            "3F000",
            "schema \"nosuch\" does not exist",
        ),
        (
            "SELECT has_schema_privilege('carol', 'public', 'USAGE')",
            "42704",
            "role \"carol\" does not exist",
        ),
        (
            "SELECT has_schema_privilege('public', 'SELECT')",
            "22023",
            "unrecognized privilege type: \"SELECT\"",
        ),
        (
            "SELECT has_any_column_privilege('rt', 'DELETE')",
            "22023",
            "unrecognized privilege type: \"DELETE\"",
        ),
    ] {
        assert_eq!(refused(&alice, sql).await, pair(code, msg), "{sql}");
    }
    exec(&bob, "REVOKE SELECT ON rt FROM alice").await;
    assert_eq!(
        rows(&alice, "SELECT has_table_privilege('rt', 'SELECT')").await,
        common::table(&[&["f"]])
    );
    assert_eq!(
        rows(
            &admin,
            "SELECT has_table_privilege('rt', 'SELECT, TRUNCATE')"
        )
        .await,
        common::table(&[&["t"]])
    );
}

/// A tester's report: a non-superuser could read `pg_authid` (roles and their password
/// verifiers); PostgreSQL refuses it with 42501. `pg_roles` stays open, and the functions
/// that read pg_authid for everyone (`pg_get_userbyid`, `::regrole`) keep working.
#[tokio::test]
async fn pg_authid_is_for_superusers_only() {
    let (port, admin) = with_roles().await;
    let alice = login(port, "alice", "a1").await;
    for sql in [
        "SELECT rolname, rolpassword FROM pg_authid",
        "SELECT count(*) FROM pg_catalog.pg_authid",
        "SELECT rolname FROM pg_roles WHERE oid IN (SELECT oid FROM pg_authid)",
    ] {
        assert_eq!(
            refused(&alice, sql).await,
            pair("42501", "permission denied for table pg_authid"),
            "{sql}"
        );
    }
    assert_eq!(
        rows(
            &alice,
            "SELECT rolname, pg_get_userbyid(oid), oid = 'bob'::regrole::oid \
             FROM pg_roles WHERE rolname = 'bob'"
        )
        .await,
        common::table(&[&["bob", "bob", "t"]])
    );
    assert_eq!(
        rows(
            &admin,
            "SELECT count(*) FROM pg_authid WHERE rolname IN ('alice', 'bob')"
        )
        .await,
        common::table(&[&["2"]])
    );
}

#[tokio::test]
async fn other_users_query_text_and_backends_are_theirs() {
    let (port, admin) = with_roles().await;
    exec(&admin, &format!("{STREAM}; GRANT SELECT ON s TO bob")).await;
    let alice = login(port, "alice", "a1").await;
    let bob = login(port, "bob", "b1").await;
    let bob_pid = rows(&bob, "SELECT pg_backend_pid()").await[0][0].clone();
    let secret = "SELECT count(*) AS bobs_secret FROM s [RANGE BY '1 minute']";
    let cancel = bob.cancel_token();
    let running = tokio::spawn(async move {
        let r = bob.simple_query(secret).await;
        (bob, r)
    });
    common::wait_for_queries(&admin, 1).await;

    let text_of = |who: &'static str| {
        format!(
            "SELECT query FROM tcq_queries UNION ALL \
             (SELECT coalesce(state, 'NULL') || ' ' || usename || ' ' || backend_type || ': ' || query \
             FROM pg_stat_activity WHERE pid = {bob_pid} ORDER BY backend_type) -- {who}"
        )
    };
    // Bob's session and the continuous query it runs: who for everyone, the state and
    // the text for superusers (and bob) only.
    assert_eq!(
        rows(&alice, &text_of("alice")).await,
        common::table(&[
            &["<insufficient privilege>"],
            &["NULL bob client backend: <insufficient privilege>"],
            &["NULL bob tcq continuous query: <insufficient privilege>"]
        ])
    );
    assert_eq!(
        rows(&admin, &text_of("admin")).await,
        common::table(&[
            &[secret],
            &[&format!("active bob client backend: {secret}")],
            &[&format!("active bob tcq continuous query: {secret}")]
        ])
    );

    for (f, msg) in [
        (
            "pg_cancel_backend",
            "must be a member of the role whose query is being canceled or member of pg_signal_backend",
        ),
        (
            "pg_terminate_backend",
            "must be a member of the role whose process is being terminated or member of pg_signal_backend",
        ),
    ] {
        assert_eq!(
            refused(&alice, &format!("SELECT {f}({bob_pid})")).await,
            pair("42501", msg)
        );
    }
    let admin_pid = rows(&admin, "SELECT pg_backend_pid()").await[0][0].clone();
    assert_eq!(
        refused(&alice, &format!("SELECT pg_cancel_backend({admin_pid})")).await,
        pair("42501", "must be a superuser to cancel superuser query")
    );
    // A superuser may cancel anyone's query.
    assert_eq!(
        rows(&admin, &format!("SELECT pg_cancel_backend({bob_pid})")).await,
        common::table(&[&["t"]])
    );
    let (bob, result) = running.await.unwrap();
    assert_eq!(sqlstate(&result.err().unwrap()), "57014");
    // A cancel request with the backend's key still works: it names no user.
    let first = rows(&admin, "SELECT id FROM tcq_queries").await;
    let running = tokio::spawn(async move { bob.simple_query(secret).await.map(|_| ()) });
    for _ in 0..1000 {
        let now = rows(&admin, "SELECT id FROM tcq_queries").await;
        if !now.is_empty() && now != first {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cancel
        .cancel_query(tokio_postgres::NoTls)
        .await
        .expect("cancel request");
    assert_eq!(sqlstate(&running.await.unwrap().err().unwrap()), "57014");
}

#[tokio::test]
async fn trust_users_that_are_no_role_are_superusers_and_roles_keep_their_attributes() {
    let port = common::start_server();
    let tcq = common::connect(port).await;
    exec(
        &tcq,
        &format!("{STREAM}; CREATE ROLE limited LOGIN; CREATE ROLE shut NOLOGIN"),
    )
    .await;
    assert_eq!(
        rows(&tcq, "SELECT rolname, rolsuper FROM pg_roles ORDER BY 1").await,
        common::table(&[&["limited", "f"], &["shut", "f"], &["tcq", "t"]])
    );
    let limited = connect_as(port, "limited", "").await.unwrap();
    assert_eq!(
        refused(&limited, "SELECT count(*) FROM s [RANGE BY '1 second']").await,
        pair("42501", "permission denied for stream s")
    );
    assert_eq!(
        sqlstate(&connect_as(port, "shut", "").await.err().unwrap()),
        "28000"
    );
    let other = connect_as(port, "someone", "").await.unwrap();
    exec(&other, "DROP STREAM s").await;
}

/// tcqd on `dir` with the password file `passwords`.
fn tcqd(dir: &Path, passwords: &Path) -> Tcqd {
    let args: [&OsStr; 4] = [
        "--data-dir".as_ref(),
        dir.as_os_str(),
        "--password-file".as_ref(),
        passwords.as_os_str(),
    ];
    Tcqd::start(args)
}

#[tokio::test]
async fn roles_owners_and_grants_survive_a_restart() {
    let dir = common::data_dir();
    let passwords = common::password_file(PASSWORDS);
    let server = tcqd(dir.path(), passwords.path());
    let admin = login(server.port, "admin", "adminpw").await;
    exec(
        &admin,
        "CREATE ROLE alice LOGIN PASSWORD 'a1'; CREATE ROLE bob LOGIN PASSWORD 'b1'; \
         CREATE ROLE boss SUPERUSER LOGIN PASSWORD 'correct-horse'",
    )
    .await;
    let bob = login(server.port, "bob", "b1").await;
    exec(&bob, &format!("{STREAM}; GRANT SELECT ON s TO alice")).await;
    drop(server);
    let catalog = std::fs::read_to_string(dir.path().join("catalog")).unwrap();
    assert!(!catalog.contains("correct-horse") && catalog.contains("SCRAM-SHA-256$4096:"));

    // The password file may list nobody: the catalog's roles log in.
    let empty = common::password_file("");
    let server = tcqd(dir.path(), empty.path());
    assert_eq!(
        sqlstate(
            &connect_as(server.port, "admin", "adminpw")
                .await
                .err()
                .unwrap()
        ),
        "28P01"
    );
    let boss = login(server.port, "boss", "correct-horse").await;
    assert_eq!(
        rows(
            &boss,
            "SELECT rolname, rolsuper, rolcanlogin FROM pg_roles ORDER BY 1"
        )
        .await,
        common::table(&[
            &["alice", "f", "t"],
            &["bob", "f", "t"],
            &["boss", "t", "t"]
        ])
    );
    let alice = login(server.port, "alice", "a1").await;
    assert_eq!(
        rows(&alice, "SELECT name, owner FROM tcq_streams").await,
        common::table(&[&["s", "bob"]])
    );
    assert_eq!(
        rows(&alice, "SELECT relacl FROM pg_class WHERE relname = 's'").await,
        common::table(&[&["{bob=arwdD/bob,alice=r/bob}"]])
    );
    let explain = "EXPLAIN SELECT count(*) FROM s [RANGE BY '1 minute']";
    exec(&alice, explain).await;
    assert_eq!(
        refused(&alice, "DROP STREAM s").await,
        pair("42501", "must be owner of stream s")
    );
    let bob = login(server.port, "bob", "b1").await;
    exec(&bob, "REVOKE SELECT ON s FROM alice").await;
    assert_eq!(refused(&alice, explain).await.0, "42501");
}

#[tokio::test]
async fn psql_lists_roles_and_shows_privilege_errors() {
    if !common::psql_installed() {
        return;
    }
    let (port, admin) = with_roles().await;
    exec(&admin, STREAM).await;
    let (out, err) = tokio::task::spawn_blocking(move || psql(port, "admin", "adminpw", &["\\du"]))
        .await
        .unwrap();
    assert!(err.is_empty(), "{err}");
    let listed: Vec<&str> = out
        .lines()
        .filter(|l| l.contains('|') && !l.contains("Role name"))
        .collect();
    assert_eq!(listed.len(), 4, "{out}");
    assert!(listed[0].trim_start().starts_with("admin") && listed[0].contains("Superuser"));
    assert!(listed[1].trim_start().starts_with("alice") && !listed[1].contains("Superuser"));
    let (_, err) = tokio::task::spawn_blocking(move || {
        psql(
            port,
            "alice",
            "a1",
            &["CREATE STREAM mine (v integer)", "DROP STREAM s"],
        )
    })
    .await
    .unwrap();
    assert!(err.contains("ERROR:  must be owner of stream s"), "{err}");
    // \d shows each stream's owner.
    let (out, _) = tokio::task::spawn_blocking(move || psql(port, "admin", "adminpw", &["\\d"]))
        .await
        .unwrap();
    let owners: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.contains("foreign table"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(
        owners,
        [
            ["public", "mine", "foreign table", "alice"],
            ["public", "s", "foreign table", "admin"]
        ],
        "{out}"
    );
}

/// Run psql as `user`; (stdout, stderr).
fn psql(port: u16, user: &str, password: &str, commands: &[&str]) -> (String, String) {
    let mut cmd = Command::new("psql");
    cmd.arg("-X")
        .arg(format!("host=127.0.0.1 port={port} user={user} dbname=tcq"));
    for c in commands {
        cmd.arg("-c").arg(c);
    }
    let out = cmd
        .env("PGPASSWORD", password)
        .env("PGCONNECT_TIMEOUT", "20")
        .output()
        .expect("run psql");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn psycopg_sees_insufficient_privilege() {
    let script = r#"
import sys, psycopg
base = sys.argv[1]
with psycopg.connect(base + " user=alice password=a1", autocommit=True) as c:
    try:
        c.execute("SELECT count(*) FROM s [RANGE BY '1 second']")
        print("accepted")
    except psycopg.errors.InsufficientPrivilege as e:
        print("refused", e.sqlstate, str(e).strip())
"#;
    if !common::python_modules(&["psycopg"], "'psycopg[binary]'") {
        return;
    }
    let (port, admin) = with_roles().await;
    exec(&admin, STREAM).await;
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .args([
                "-c",
                script,
                &format!("host=127.0.0.1 port={port} dbname=tcq"),
            ])
            .output()
            .expect("run python3")
    })
    .await
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "refused 42501 permission denied for stream s",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
