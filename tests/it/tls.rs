//! TLS (issue 11) through real clients, and throttled CancelRequests.
//!
//! The test CA and server certificate are generated here with rcgen, so no key is
//! committed. psql and psycopg connect with `sslmode=require`, psql and pgjdbc
//! (`tests/java/TlsScram.java`, which also reads a continuous query's rows) with
//! `sslmode=verify-full` against the test CA, each with SCRAM-SHA-256 from a password file;
//! a wrong password is refused with 28P01 and another CA fails verification. A test skips
//! with a message when psql, python3 with psycopg, or Java with pgjdbc is missing (.ci/run
//! installs them).

use crate::common;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::start_server_with_options as start;
use tcq::server::ServerOptions;
use tokio_postgres::NoTls;

/// A directory with `ca.pem`, `server.pem`, `server.key` (for `localhost` and 127.0.0.1,
/// signed by the CA), `other-ca.pem` (a CA that signed nothing here) and `passwords`.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn new() -> Pki {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
        let dir = tempfile::tempdir().unwrap();
        let ca = |name: &str| {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.distinguished_name.push(DnType::CommonName, name);
            let cert = params.self_signed(&key).unwrap();
            (cert, key)
        };
        let (ca_cert, ca_key) = ca("tcq test CA");
        let (other_ca, _) = ca("tcq other test CA");
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();
        let write = |name: &str, text: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            // A private key must be private (0600), as PostgreSQL requires too.
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        };
        write("ca.pem", ca_cert.pem());
        write("other-ca.pem", other_ca.pem());
        write("server.pem", cert.pem());
        write("server.key", key.serialize_pem());
        write("passwords", "alice:wonderland\n".to_string());
        Pki { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A server with TLS and SCRAM-SHA-256 for alice.
    fn start(&self) -> u16 {
        let options = ServerOptions::default()
            .with_password_file(&self.path("passwords"))
            .unwrap()
            .with_tls_files(&self.path("server.pem"), &self.path("server.key"))
            .unwrap();
        start(options)
    }
}

/// Run psql on `conninfo` with `password`; (exit code, stdout, stderr).
fn psql(conninfo: &str, password: &str, commands: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new("psql");
    cmd.arg("-X").arg("-At").arg(conninfo);
    for c in commands {
        cmd.arg("-c").arg(c);
    }
    let out = cmd
        .env("PGPASSWORD", password)
        .env_remove("PGSSLMODE")
        .env("PGCONNECT_TIMEOUT", "20")
        .output()
        .expect("run psql");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn psql_uses_tls_with_scram_and_verifies_the_server() {
    if !common::psql_installed() {
        return;
    }
    let pki = Pki::new();
    let port = pki.start();
    let base = format!("host=127.0.0.1 port={port} user=alice dbname=tcq");

    // sslmode=require: encrypted, not verified.
    let (code, out, err) = psql(
        &format!("{base} sslmode=require"),
        "wonderland",
        &["SELECT 40 + 2", "\\conninfo"],
    );
    assert_eq!(code, 0, "psql failed: {err}");
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("42"));
    assert!(
        out.contains("SSL connection (protocol: TLSv1."),
        "psql reports TLS: {out}"
    );

    // sslmode=verify-full: the certificate must chain to the test CA and name the host.
    let root = pki.path("ca.pem");
    let (code, out, err) = psql(
        &format!(
            "host=localhost port={port} user=alice dbname=tcq sslmode=verify-full sslrootcert={}",
            root.display()
        ),
        "wonderland",
        &["SELECT current_user"],
    );
    assert_eq!(code, 0, "psql verify-full failed: {err}");
    assert_eq!(out, "alice\n");

    // A CA that did not sign the server's certificate: verification fails.
    let (code, _, err) = psql(
        &format!(
            "{base} sslmode=verify-full sslrootcert={}",
            pki.path("other-ca.pem").display()
        ),
        "wonderland",
        &["SELECT 1"],
    );
    assert_eq!(code, 2, "verify-full against the wrong CA must fail");
    assert!(err.contains("certificate verify failed"), "{err}");

    // A wrong password over TLS.
    let (code, _, err) = psql(&format!("{base} sslmode=require"), "wrong", &["SELECT 1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("password authentication failed for user \"alice\""),
        "{err}"
    );

    // Plain connections from loopback are still served (the host rule asks TLS only
    // beyond loopback).
    let (code, out, err) = psql(
        &format!("{base} sslmode=disable"),
        "wonderland",
        &["SELECT 7"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "7\n");
}

#[test]
fn psql_without_server_tls_is_refused_under_require() {
    if !common::psql_installed() {
        return;
    }
    let pki = Pki::new();
    let options = ServerOptions::default()
        .with_password_file(&pki.path("passwords"))
        .unwrap();
    let port = start(options);
    let (code, _, err) = psql(
        &format!("host=127.0.0.1 port={port} user=alice dbname=tcq sslmode=require"),
        "wonderland",
        &["SELECT 1"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("server does not support SSL"), "{err}");
}

#[test]
fn psycopg_uses_tls_with_scram() {
    if !common::python_modules(&["psycopg"], "'psycopg[binary]'") {
        return;
    }
    let pki = Pki::new();
    let port = pki.start();
    let script = format!(
        r#"
import psycopg
base = "host=127.0.0.1 port={port} user=alice dbname=tcq sslmode=require"
with psycopg.connect(base + " password=wonderland") as c:
    print(c.pgconn.ssl_in_use, c.execute("SELECT 6 * 7").fetchone()[0])
try:
    psycopg.connect(base + " password=wrong")
    print("connected")
except psycopg.OperationalError as e:
    # libpq reports no SQLSTATE for a failed connection; the message is 28P01's.
    print("refused", "password authentication failed" in str(e))
"#
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout, "True 42\nrefused True\n");
}

/// SCRAM-SHA-256-PLUS (issue 29): over TLS the server offers channel binding
/// (`tls-server-end-point`), so psql 15 with `channel_binding=require` logs in (it refused
/// to before: the server offered no binding); `pg_stat_ssl` shows the session's TLS, and a
/// plaintext session as `ssl = f`. Without TLS, `require` is refused by libpq itself.
#[test]
fn psql_with_channel_binding_require_logs_in_and_pg_stat_ssl_shows_tls() {
    if !common::psql_installed() {
        return;
    }
    let pki = Pki::new();
    let port = pki.start();
    let base = format!("host=127.0.0.1 port={port} user=alice dbname=tcq");
    let (code, out, err) = psql(
        &format!("{base} sslmode=require channel_binding=require"),
        "wonderland",
        &[
            "SELECT ssl, version, cipher, bits, client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        ],
    );
    assert_eq!(code, 0, "psql failed: {err}");
    assert_eq!(out, "t|TLSv1.3|TLS_AES_256_GCM_SHA384|256|\n", "{err}");
    // A wrong password still fails, with channel binding too.
    let (code, _, err) = psql(
        &format!("{base} sslmode=require channel_binding=require"),
        "wrong",
        &["SELECT 1"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("password authentication failed for user \"alice\""),
        "{err}"
    );
    // Plaintext from loopback: listed with ssl = f; channel binding cannot be required.
    let (code, out, err) = psql(
        &format!("{base} sslmode=disable"),
        "wonderland",
        &["SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()"],
    );
    assert_eq!((code, out.as_str()), (0, "f|\n"), "{err}");
    let (code, _, err) = psql(
        &format!("{base} sslmode=disable channel_binding=require"),
        "wonderland",
        &["SELECT 1"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("channel binding"), "{err}");
}

/// psycopg (libpq) with `channel_binding=require` over TLS: logged in with
/// SCRAM-SHA-256-PLUS, as `pg_stat_ssl` and libpq's own view of the session show.
#[test]
fn psycopg_with_channel_binding_require_logs_in() {
    if !common::python_modules(&["psycopg"], "'psycopg[binary]'") {
        return;
    }
    let pki = Pki::new();
    let port = pki.start();
    let script = format!(
        r#"
import psycopg
conninfo = "host=127.0.0.1 port={port} user=alice dbname=tcq sslmode=require channel_binding=require password=wonderland"
with psycopg.connect(conninfo) as c:
    row = c.execute("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()
    print(c.pgconn.ssl_in_use, row[0], row[1])
"#
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout, "True True TLSv1.3\n");
}

/// A raw protocol 3.0 SSLRequest on a TLS-enabled server is answered `S`; a GSSENCRequest
/// `N`.
#[test]
fn ssl_request_is_accepted_and_gssenc_refused() {
    let pki = Pki::new();
    let port = pki.start();
    let ask = |code: u32| {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut msg = 8u32.to_be_bytes().to_vec();
        msg.extend_from_slice(&code.to_be_bytes());
        s.write_all(&msg).unwrap();
        let mut answer = [0u8; 1];
        s.read_exact(&mut answer).unwrap();
        answer[0]
    };
    assert_eq!(ask(80_877_103), b'S');
    assert_eq!(ask(80_877_104), b'N');
}

/// Bytes sent after an SSLRequest before its answer would be read as plaintext inside what
/// the client believes is TLS: the server answers `S`, then closes without reading them.
#[test]
fn data_sent_before_the_ssl_answer_ends_the_connection() {
    let pki = Pki::new();
    let port = pki.start();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut msg = 8u32.to_be_bytes().to_vec();
    msg.extend_from_slice(&80_877_103u32.to_be_bytes());
    let params = b"user\0alice\0\0";
    msg.extend_from_slice(&(8 + params.len() as u32).to_be_bytes());
    msg.extend_from_slice(&196_608u32.to_be_bytes());
    msg.extend_from_slice(params);
    s.write_all(&msg).unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    assert_eq!(answer, b"S");
}

fn tcqd_fails_with(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args(["--listen", "127.0.0.1:0", "--memory-only"])
        .args(args)
        .output()
        .expect("run tcqd");
    assert!(!out.status.success(), "tcqd must refuse {args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_certificate_or_key_files_stop_tcqd_naming_the_file() {
    let pki = Pki::new();
    let p = |n: &str| pki.path(n).display().to_string();
    let missing = p("missing.pem");
    let err = tcqd_fails_with(&["--tls-cert", &missing, "--tls-key", &p("server.key")]);
    assert!(err.contains(&missing), "{err}");
    // The key file holds a certificate, not a key.
    let err = tcqd_fails_with(&["--tls-cert", &p("server.pem"), "--tls-key", &p("ca.pem")]);
    assert!(err.contains(&p("ca.pem")), "{err}");
    // The certificate file holds no certificate.
    let err = tcqd_fails_with(&["--tls-cert", &p("passwords"), "--tls-key", &p("server.key")]);
    assert!(err.contains(&p("passwords")), "{err}");
    // A key that does not belong to the certificate.
    let other = rcgen::KeyPair::generate().unwrap();
    std::fs::write(pki.path("other.key"), other.serialize_pem()).unwrap();
    std::fs::set_permissions(
        pki.path("other.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let err = tcqd_fails_with(&["--tls-cert", &p("server.pem"), "--tls-key", &p("other.key")]);
    assert!(err.contains(&p("other.key")), "{err}");
    // One without the other is a usage error.
    let err = tcqd_fails_with(&["--tls-cert", &p("server.pem")]);
    assert!(err.contains("--tls-key"), "{err}");
}

/// A private key file that group or others may read stops tcqd at start, naming the file
/// and the fix, as PostgreSQL refuses one (issue 29); mode 0600 starts.
#[test]
fn a_private_key_readable_by_others_is_refused() {
    let pki = Pki::new();
    let key = pki.path("server.key");
    let args = |k: &std::path::Path| {
        vec![
            "--tls-cert".to_string(),
            pki.path("server.pem").display().to_string(),
            "--tls-key".to_string(),
            k.display().to_string(),
        ]
    };
    for mode in [0o644, 0o640, 0o604, 0o660] {
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
        let a = args(&key);
        let err = tcqd_fails_with(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            err.contains(&format!(
                "{}: private key file has group or world access (mode {mode:04o})",
                key.display()
            )) && err.contains(&format!("chmod 0600 {}", key.display())),
            "mode {mode:o}: {err}"
        );
    }
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut all = vec!["--memory-only".to_string()];
    all.extend(args(&key));
    let server = common::tcqd::Tcqd::start(all);
    assert!(server.log_text().contains("tcq listening on"));
}

/// Send a CancelRequest for `pid` with `key`; returns what the server answered (always
/// nothing: it closes the connection).
fn raw_cancel(port: u16, pid: i32, key: i32) -> Vec<u8> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut msg = 16u32.to_be_bytes().to_vec();
    msg.extend_from_slice(&80_877_102u32.to_be_bytes());
    msg.extend_from_slice(&pid.to_be_bytes());
    msg.extend_from_slice(&key.to_be_bytes());
    s.write_all(&msg).unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    answer
}

/// A query on a stream that receives nothing runs until cancelled; resolves to its
/// SQLSTATE.
fn waiting_query(client: Arc<tokio_postgres::Client>) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        match client.simple_query("SELECT v FROM quiet").await {
            Ok(_) => "ended".to_string(),
            Err(e) => common::sqlstate(&e),
        }
    })
}

#[tokio::test]
async fn wrong_cancel_keys_are_throttled_per_address() {
    let port = start(ServerOptions::default());
    let other = common::connect(port).await;
    let (client, _conn) = common::connect_with_handle(port).await;
    let client = Arc::new(client);
    client
        .simple_query("CREATE STREAM quiet (v integer)")
        .await
        .unwrap();
    let pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    let token = client.cancel_token();

    // A right key cancels.
    let query = waiting_query(client.clone());
    common::wait_for_queries(&other, 1).await;
    token.cancel_query(NoTls).await.unwrap();
    let state = tokio::time::timeout(Duration::from_secs(20), query)
        .await
        .expect("cancelled")
        .unwrap();
    assert_eq!(state, "57014");

    // Ten wrong keys (and an unknown pid) use up this address's attempts; each is answered
    // the same way: the connection closes with no reply.
    let burst = tokio::task::spawn_blocking(move || {
        let mut answers: Vec<Vec<u8>> = (0..9).map(|i| raw_cancel(port, pid, i)).collect();
        answers.push(raw_cancel(port, 999_999, 1));
        answers
    })
    .await
    .unwrap();
    assert!(
        burst.iter().all(Vec::is_empty),
        "no reply to any: {burst:?}"
    );

    // Now even the right key is dropped unchecked, while other connections work on.
    let query = waiting_query(client.clone());
    common::wait_for_queries(&other, 1).await;
    token.cancel_query(NoTls).await.unwrap();
    let one: i32 = other.query_one("SELECT 1", &[]).await.unwrap().get(0);
    assert_eq!(one, 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!query.is_finished(), "a throttled cancel must not cancel");

    // One attempt comes back per second.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    token.cancel_query(NoTls).await.unwrap();
    let state = tokio::time::timeout(Duration::from_secs(20), query)
        .await
        .expect("cancelled once the address has an attempt again")
        .unwrap();
    assert_eq!(state, "57014");
}

#[test]
fn pgjdbc_uses_tls_with_scram_and_verifies_the_server() {
    let pki = Pki::new();
    let port = pki.start();
    let args = [
        port.to_string().into(),
        pki.path("ca.pem").into_os_string(),
        pki.path("other-ca.pem").into_os_string(),
    ];
    let Some((stdout, stderr)) = common::java::run("TlsScram.java", args) else {
        return;
    };
    assert_eq!(
        stdout,
        concat!(
            "verify-full: alice|42;\n",
            "stream: 2001-01-01 00:00:10|2|12;2001-01-01 00:00:20|1|1;\n",
            "disable: alice|7;\n",
            "wrong password: 28P01\n",
            "wrong password in plaintext: 28P01\n",
            "other CA: ssl error\n",
            "done\n",
        ),
        "stderr:\n{stderr}"
    );
}
