//! SCRAM-SHA-256 authentication (issue 11): with a password file every connection must
//! prove its password; a wrong password and an unknown user get the same 28P01.

use crate::common;

use common::{connect_as as connect, start_server_with_options as start};
use tcq::server::{ServerOptions, Verifier};
use tokio_postgres::NoTls;

#[tokio::test]
async fn scram_sha_256_accepts_the_right_password_only() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let stored = Verifier::from_password("stored secret").to_string();
    std::fs::write(
        file.path(),
        format!("# users\nalice:wonderland\n\nbob:{stored}\n"),
    )
    .unwrap();
    let options = ServerOptions::default()
        .with_password_file(file.path())
        .unwrap();
    let port = start(options);

    let alice = connect(port, "alice", "wonderland")
        .await
        .expect("alice gets in");
    assert_eq!(
        alice
            .query_one("SELECT current_user", &[])
            .await
            .unwrap()
            .get::<_, String>(0),
        "alice"
    );
    let bob = connect(port, "bob", "stored secret")
        .await
        .expect("bob gets in with a stored verifier");
    assert_eq!(
        bob.query_one("SELECT 1", &[])
            .await
            .unwrap()
            .get::<_, i32>(0),
        1
    );

    for (user, password) in [("alice", "wrong"), ("mallory", "wonderland"), ("bob", "")] {
        let Err(err) = connect(port, user, password).await else {
            panic!("{user} with password {password:?} was let in");
        };
        assert_eq!(common::sqlstate(&err), "28P01", "{user}");
        assert_eq!(
            err.as_db_error().unwrap().message(),
            format!("password authentication failed for user \"{user}\"")
        );
    }
    // A client that offers no password at all cannot answer the SASL request.
    let conn = format!("host=127.0.0.1 port={port} user=alice dbname=tcq");
    assert!(tokio_postgres::connect(&conn, NoTls).await.is_err());
}

#[tokio::test]
async fn a_password_file_line_without_a_colon_is_an_error() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "alice:ok\njust-a-name\n").unwrap();
    let err = ServerOptions::default()
        .with_password_file(file.path())
        .unwrap_err();
    assert!(
        err.to_string().contains("line 2 is not user:password"),
        "{err}"
    );
}
