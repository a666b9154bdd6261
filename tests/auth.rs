//! SCRAM-SHA-256 authentication (issue 11): with a password file every connection must
//! prove its password; a wrong password and an unknown user get the same 28P01.

mod common;

use std::sync::Arc;

use tcq::engine::{Config, Engine};
use tcq::server::{ServerOptions, Verifier};
use tokio_postgres::NoTls;

fn start(options: ServerOptions) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let engine: Arc<Engine> = Engine::new(Config::default());
            tcq::server::serve_with(listener, engine, options, std::future::pending())
                .await
                .unwrap();
        });
    });
    rx.recv().unwrap()
}

async fn connect(
    port: u16,
    user: &str,
    password: &str,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let conn = format!("host=127.0.0.1 port={port} user={user} password='{password}' dbname=tcq");
    let (client, connection) = tokio_postgres::connect(&conn, NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

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
