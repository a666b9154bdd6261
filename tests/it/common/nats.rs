//! A real NATS server for the source tests: Debian's nats-server on a port of its own
//! (`scripts/test.sh` installs it). The tests publish with the async-nats client.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nats-server, killed when dropped.
pub struct NatsServer {
    child: Child,
    pub port: u16,
    args: Vec<String>,
}

fn binary() -> Option<&'static str> {
    ["/usr/sbin/nats-server", "/usr/bin/nats-server"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

impl NatsServer {
    /// Start nats-server, requiring `user`/`password` when given; `None` (with a SKIPPED
    /// message) when it is not installed.
    pub fn start(credentials: Option<(&str, &str)>) -> Option<NatsServer> {
        if binary().is_none() {
            super::skip(
                "nats-server is not installed (apt-get install nats-server; scripts/test.sh does)",
            );
            return None;
        }
        let port = super::kafka::free_port();
        let mut args = vec![
            "-a".to_string(),
            "127.0.0.1".into(),
            "-p".into(),
            port.to_string(),
        ];
        if let Some((u, p)) = credentials {
            args.extend(["--user".into(), u.into(), "--pass".into(), p.into()]);
        }
        let child = spawn(&args, port);
        Some(NatsServer { child, port, args })
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Stop the server (SIGTERM) and wait for it to exit.
    pub fn stop(&mut self) {
        // SAFETY: a signal to the child this struct owns.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }

    /// Start the stopped server again on the same port.
    pub fn start_again(&mut self) {
        self.child = spawn(&self.args, self.port);
    }

    /// A client of this server (with `credentials`, if any).
    pub async fn client(&self, credentials: Option<(&str, &str)>) -> async_nats::Client {
        let mut o = async_nats::ConnectOptions::new();
        if let Some((u, p)) = credentials {
            o = o.user_and_password(u.into(), p.into());
        }
        o.connect(self.url()).await.expect("connect to nats-server")
    }

    /// Publish `messages` (subject, payload) and flush them to the server.
    pub async fn publish(&self, messages: &[(&str, String)]) {
        publish_with(&self.client(None).await, messages).await;
    }
}

/// Publish `messages` (subject, payload) with `client` and flush them to the server.
pub async fn publish_with(client: &async_nats::Client, messages: &[(&str, String)]) {
    for (subject, payload) in messages {
        client
            .publish(subject.to_string(), payload.clone().into())
            .await
            .expect("publish");
    }
    client.flush().await.expect("flush");
}

fn spawn(args: &[String], port: u16) -> Child {
    let child = Command::new(binary().expect("nats-server"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nats-server");
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nats-server did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
