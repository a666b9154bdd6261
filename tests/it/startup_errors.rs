//! A FATAL error at start-up ends the connection as PostgreSQL ends it: the ErrorResponse,
//! then the server closes, with no ReadyForQuery in between (issue 29: tcq sent `Z` after
//! 28P01, 53300 and 08P01, and asyncpg logged "cannot process message 'Z'"). Checked byte
//! for byte over a raw socket, and through asyncpg and psycopg.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use tcq::engine::{Config, Limits};

/// A StartupMessage (protocol 3.0) for user `alice`, database `tcq`.
fn startup_message() -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&196608u32.to_be_bytes());
    for s in ["user", "alice", "database", "tcq"] {
        body.extend_from_slice(s.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut msg = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    msg.extend(body);
    msg
}

/// Every byte the server sends until it closes the connection (10 s at most).
fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut all = Vec::new();
    stream
        .read_to_end(&mut all)
        .expect("the server closes the connection");
    all
}

/// The backend messages in `bytes` as (type, body).
fn messages(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while bytes.len() >= 5 {
        let len = u32::from_be_bytes(bytes[1..5].try_into().unwrap()) as usize;
        out.push((bytes[0], bytes[5..1 + len].to_vec()));
        bytes = &bytes[1 + len..];
    }
    assert!(bytes.is_empty(), "a partial message at the end: {bytes:?}");
    out
}

/// The SQLSTATE field of an ErrorResponse body.
fn sqlstate_of(body: &[u8]) -> String {
    body.split(|&b| b == 0)
        .find_map(|f| f.strip_prefix(b"C"))
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .unwrap_or_default()
}

/// A server that allows one connection, with that connection open; its port.
async fn full_server() -> (u16, tokio_postgres::Client) {
    let config = Config {
        limits: Limits {
            connections_max: 1,
            ..Limits::default()
        },
    };
    let port = common::start_server_with(config);
    let first = common::connect(port).await;
    (port, first)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_clients_is_an_error_response_then_close() {
    let (port, first) = full_server().await;
    let got = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(&startup_message()).unwrap();
        read_to_close(&mut s)
    })
    .await
    .unwrap();
    let msgs = messages(&got);
    assert_eq!(msgs.len(), 1, "only the ErrorResponse, got {msgs:?}");
    assert_eq!(msgs[0].0, b'E');
    assert_eq!(sqlstate_of(&msgs[0].1), "53300");
    assert!(String::from_utf8_lossy(&msgs[0].1).contains("SFATAL"));
    // The connection that was in keeps working.
    assert_eq!(
        common::rows(&first, "SELECT 1").await,
        common::table(&[&["1"]])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_scram_is_an_error_response_then_close() {
    let port = common::start_server_with_options(common::password_options("alice:wonderland\n"));
    let got = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(&startup_message()).unwrap();
        // AuthenticationSASL: R, length, 10, "SCRAM-SHA-256\0\0".
        let mut head = [0u8; 5];
        s.read_exact(&mut head).unwrap();
        assert_eq!(head[0], b'R');
        let mut body = vec![0u8; u32::from_be_bytes(head[1..5].try_into().unwrap()) as usize - 4];
        s.read_exact(&mut body).unwrap();
        assert_eq!(&body[..4], &10u32.to_be_bytes());
        // SASLInitialResponse with a client-first message that is no SCRAM message.
        let data = b"not scram";
        let mut msg = vec![b'p'];
        let len = 4 + "SCRAM-SHA-256".len() + 1 + 4 + data.len();
        msg.extend_from_slice(&(len as u32).to_be_bytes());
        msg.extend_from_slice(b"SCRAM-SHA-256\0");
        msg.extend_from_slice(&(data.len() as u32).to_be_bytes());
        msg.extend_from_slice(data);
        s.write_all(&msg).unwrap();
        read_to_close(&mut s)
    })
    .await
    .unwrap();
    let msgs = messages(&got);
    assert_eq!(msgs.len(), 1, "only the ErrorResponse, got {msgs:?}");
    assert_eq!(
        (msgs[0].0, sqlstate_of(&msgs[0].1).as_str()),
        (b'E', "08P01")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_startup_setting_is_an_error_response_then_close() {
    let port = common::start_server();
    let got = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut body = 196608u32.to_be_bytes().to_vec();
        for f in ["user", "alice", "no_such_setting", "1"] {
            body.extend_from_slice(f.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut msg = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        msg.extend(body);
        s.write_all(&msg).unwrap();
        read_to_close(&mut s)
    })
    .await
    .unwrap();
    let msgs = messages(&got);
    let last = msgs.last().expect("a message");
    assert_eq!(last.0, b'E', "{msgs:?}");
    assert_eq!(sqlstate_of(&last.1), "42704");
    assert!(msgs.iter().all(|(t, _)| *t != b'Z'), "{msgs:?}");
}

/// asyncpg and psycopg, a wrong password and a full server: each gets its SQLSTATE, and
/// asyncpg logs no protocol violation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drivers_see_a_clean_fatal() {
    if !common::python_modules(&["asyncpg", "psycopg"], "asyncpg 'psycopg[binary]'") {
        return;
    }
    let port = common::start_server_with_options(common::password_options("alice:wonderland\n"));
    let (full, _first) = full_server().await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/startup_fatal.py");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .args([script, "--port", &port.to_string()])
            .args(["--full-port", &full.to_string()])
            .output()
            .expect("run python3")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        "asyncpg wrong password: 28P01\n\
         asyncpg too many clients: 53300\n\
         psycopg wrong password: 28P01\n\
         psycopg too many clients: 53300\n\
         asyncpg protocol errors: 0\n",
        "{stderr}"
    );
}
