//! A real MQTT broker for the source tests: Debian's mosquitto on a port of its own, with
//! persistence in a temporary directory (`scripts/test.sh` installs it). The tests publish
//! with rumqttc at QoS 1, waiting for every PUBACK.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};

/// A running mosquitto, killed when dropped.
pub struct Mosquitto {
    child: Child,
    pub port: u16,
    config: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Mosquitto {
    /// Start mosquitto; `None` (with a SKIPPED message) when it is not installed.
    pub fn start() -> Option<Mosquitto> {
        let binary = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists());
        if binary.is_none() {
            super::skip(
                "mosquitto is not installed (apt-get install mosquitto; scripts/test.sh does)",
            );
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let port = super::kafka::free_port();
        let config = dir.path().join("mosquitto.conf");
        std::fs::write(
            &config,
            format!(
                "listener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n\
                 persistence true\npersistence_location {}/\n{}",
                dir.path().display(),
                // Run as root, mosquitto would switch to its own user, which cannot write
                // its sessions into this directory.
                // SAFETY: getuid has no preconditions.
                if unsafe { libc::getuid() } == 0 {
                    "user root\n"
                } else {
                    ""
                }
            ),
        )
        .unwrap();
        let child = spawn(&config, port);
        Some(Mosquitto {
            child,
            port,
            config,
            _dir: dir,
        })
    }

    /// Stop the broker (SIGTERM: it saves its sessions), then start it again.
    pub fn restart_after(&mut self, down: impl FnOnce()) {
        // SAFETY: a signal to the child this struct owns.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        down();
        self.child = spawn(&self.config, self.port);
    }

    /// Publish `messages` (topic, payload) at QoS 1 and wait for every PUBACK.
    pub async fn publish(&self, messages: &[(&str, String)]) {
        let mut options = MqttOptions::new("tcq-test-publisher", "127.0.0.1", self.port);
        options
            .set_keep_alive(Duration::from_secs(5))
            .set_max_packet_size(64 << 20, 64 << 20);
        let (client, mut events) = AsyncClient::new(options, 64);
        let sender = client.clone();
        let owned: Vec<(String, String)> = messages
            .iter()
            .map(|(t, p)| (t.to_string(), p.clone()))
            .collect();
        let send = tokio::spawn(async move {
            for (t, p) in owned {
                sender.publish(t, QoS::AtLeastOnce, false, p).await.unwrap();
            }
        });
        let mut acked = 0;
        let start = Instant::now();
        while acked < messages.len() {
            assert!(start.elapsed() < Duration::from_secs(30), "PUBACKs missing");
            if let Event::Incoming(Packet::PubAck(_)) = events.poll().await.expect("mqtt") {
                acked += 1;
            }
        }
        send.await.unwrap();
        let _ = client.disconnect().await;
        let _ = tokio::time::timeout(Duration::from_secs(1), events.poll()).await;
    }
}

fn spawn(config: &std::path::Path, port: u16) -> Child {
    let binary = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("mosquitto");
    let child = Command::new(binary)
        .arg("-c")
        .arg(config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mosquitto");
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "mosquitto did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
