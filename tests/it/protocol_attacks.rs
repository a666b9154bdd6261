//! Malformed and hostile protocol input over a real socket (issue 11): the reproducers that
//! used to panic inside pgwire's decoder, oversized messages, and a seeded protocol fuzz
//! test. Each case expects an ErrorResponse with its SQLSTATE (or a closed connection) and a
//! server that still answers `SELECT 1`.
//!
//! The fuzz test runs `TCQ_FUZZ_CONNECTIONS` connections (default 1,500) from seed
//! `TCQ_FUZZ_SEED` (default 11); each sends a few valid messages mutated at random.

use crate::common;

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A typed frontend message.
pub(crate) fn msg(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![kind];
    m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

/// A StartupMessage for protocol 3.0 (user and database `tcq`).
pub(crate) fn startup() -> Vec<u8> {
    let mut body = 196_608i32.to_be_bytes().to_vec();
    for s in ["user", "tcq", "database", "tcq", ""] {
        body.extend_from_slice(s.as_bytes());
        body.push(0);
    }
    let mut m = (body.len() as i32 + 4).to_be_bytes().to_vec();
    m.extend(body);
    m
}

/// A backend message: its type and body.
pub(crate) type Backend = (u8, Vec<u8>);

/// Read one backend message, `None` at end of stream.
pub(crate) async fn read_msg(s: &mut TcpStream) -> Option<Backend> {
    let mut head = [0u8; 5];
    s.read_exact(&mut head).await.ok()?;
    let len = i32::from_be_bytes(head[1..5].try_into().unwrap()) as usize;
    let mut body = vec![0u8; len - 4];
    s.read_exact(&mut body).await.ok()?;
    Some((head[0], body))
}

/// The SQLSTATE field of an ErrorResponse body.
fn sqlstate_of(body: &[u8]) -> String {
    for field in body.split(|&b| b == 0) {
        if let Some((&b'C', code)) = field.split_first() {
            return String::from_utf8_lossy(code).into_owned();
        }
    }
    panic!("ErrorResponse without a code: {body:?}")
}

/// Connect and complete start-up (up to the first ReadyForQuery).
async fn started(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(&startup()).await.unwrap();
    loop {
        match read_msg(&mut s).await {
            Some((b'Z', _)) => return s,
            Some(_) => {}
            None => panic!("connection closed during start-up"),
        }
    }
}

/// Read until end of stream (at most 10 s); the SQLSTATEs of the ErrorResponses seen.
async fn errors_until_close(s: &mut TcpStream) -> Vec<String> {
    let read_all = async {
        let mut codes = Vec::new();
        while let Some((kind, body)) = read_msg(s).await {
            if kind == b'E' {
                codes.push(sqlstate_of(&body));
            }
        }
        codes
    };
    tokio::time::timeout(Duration::from_secs(10), read_all)
        .await
        .expect("the server neither answered nor closed within 10 s")
}

async fn assert_select_1(client: &tokio_postgres::Client) {
    let row = client.query_one("SELECT 1", &[]).await.expect("SELECT 1");
    assert_eq!(row.get::<_, i32>(0), 1);
}

/// Issue 11's three reproducers: each panicked inside pgwire's decoder and the connection
/// was dropped without an ErrorResponse. Now each gets a FATAL 08P01 and a clean close.
#[tokio::test]
async fn the_decoder_panics_of_issue_11_are_protocol_errors() {
    let port = common::start_server();
    let probe = common::connect(port).await;
    // After a valid start-up, a Parse with length 4 (no body).
    let mut s = started(port).await;
    s.write_all(b"P\x00\x00\x00\x04").await.unwrap();
    assert_eq!(errors_until_close(&mut s).await, ["08P01"]);
    assert_select_1(&probe).await;

    // In COPY, a CopyData with length 3.
    probe
        .batch_execute("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let mut s = started(port).await;
    s.write_all(&msg(b'Q', b"COPY s FROM STDIN\0"))
        .await
        .unwrap();
    let (kind, _) = read_msg(&mut s).await.unwrap();
    assert_eq!(kind, b'G', "CopyInResponse");
    s.write_all(b"d\x00\x00\x00\x03").await.unwrap();
    assert_eq!(errors_until_close(&mut s).await, ["08P01"]);
    assert_select_1(&probe).await;

    // A Bind whose parameter count (0xffff) runs past its message.
    let mut s = started(port).await;
    s.write_all(b"B\x00\x00\x00\x0e\x00\x00\x00\x00\xff\xff\x00\x00\x00\x00")
        .await
        .unwrap();
    assert_eq!(errors_until_close(&mut s).await, ["08P01"]);
    assert_select_1(&probe).await;

    // A Bind of 40,000 parameters: PostgreSQL counts them unsigned, tcq's decoder signed;
    // the refusal names the count the client sent, not the negative number it decodes to.
    let mut s = started(port).await;
    s.write_all(&msg(b'B', b"\0\0\x00\x00\x9c\x40"))
        .await
        .unwrap();
    let (kind, body) = read_msg(&mut s).await.expect("an ErrorResponse");
    assert_eq!((kind, sqlstate_of(&body)), (b'E', "08P01".to_string()));
    let text = String::from_utf8_lossy(&body);
    assert!(
        text.contains("40000 parameters in one message; tcq takes at most 32767"),
        "{text}"
    );
    assert_select_1(&probe).await;
    assert_eq!(tcq::server::connection_panics(), 0);
}

/// The rows of the aborted COPY above never reach the stream, and a COPY after it works:
/// nothing already accepted is lost, nothing half-sent is committed.
#[tokio::test]
async fn a_protocol_error_in_copy_aborts_that_copy_only() {
    let port = common::start_server();
    let probe = common::connect(port).await;
    probe
        .batch_execute("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    let mut s = started(port).await;
    s.write_all(&msg(b'Q', b"COPY s FROM STDIN\0"))
        .await
        .unwrap();
    assert_eq!(read_msg(&mut s).await.unwrap().0, b'G');
    s.write_all(&msg(b'd', b"1\n2\n")).await.unwrap();
    s.write_all(b"d\x00\x00\x00\x00").await.unwrap();
    assert_eq!(errors_until_close(&mut s).await, ["08P01"]);
    probe
        .batch_execute("INSERT INTO s VALUES (3)")
        .await
        .unwrap();
    let rows = probe
        .query("SELECT tuples FROM tcq_streams WHERE name = 's'", &[])
        .await
        .unwrap();
    assert_eq!(rows[0].get::<_, i64>(0), 1, "only the INSERT's row arrived");
}

/// A 300 MB Query is refused from its 5-byte header with 54000 naming the limit, before
/// the server buffers any of it.
#[tokio::test]
async fn an_oversized_message_is_refused_before_it_is_read() {
    let port = common::start_server();
    let probe = common::connect(port).await;
    let mut s = started(port).await;
    let len: i32 = 300 << 20;
    let mut head = vec![b'Q'];
    head.extend_from_slice(&len.to_be_bytes());
    head.extend_from_slice(b"SELECT ");
    s.write_all(&head).await.unwrap();
    let (kind, body) = read_msg(&mut s).await.expect("an ErrorResponse");
    assert_eq!(kind, b'E');
    assert_eq!(sqlstate_of(&body), "54000");
    let text = String::from_utf8_lossy(&body);
    assert!(
        text.contains("314572796 bytes exceeds message_bytes_max (67108864)"),
        "{text}"
    );
    assert_select_1(&probe).await;
}

/// The limit is configurable.
#[tokio::test]
async fn message_bytes_max_is_configurable() {
    let mut config = tcq::engine::Config::default();
    config.limits.message_bytes_max = 100;
    let port = common::start_server_with(config);
    let probe = common::connect(port).await;
    let mut s = started(port).await;
    let mut text = b"SELECT '".to_vec();
    text.extend(std::iter::repeat_n(b'x', 200));
    text.extend_from_slice(b"'\0");
    s.write_all(&msg(b'Q', &text)).await.unwrap();
    assert_eq!(errors_until_close(&mut s).await, ["54000"]);
    // A short query on the same server is fine.
    assert_select_1(&probe).await;
}

/// Bad start-up packets: too long, too short, unknown protocol, unterminated parameters.
#[tokio::test]
async fn malformed_startup_packets_are_refused() {
    let port = common::start_server();
    let probe = common::connect(port).await;
    let mut unterminated = startup();
    unterminated.pop();
    let n = unterminated.len() as i32;
    unterminated[..4].copy_from_slice(&n.to_be_bytes());
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (100_000i32.to_be_bytes().to_vec(), "08P01"),
        (b"\x00\x00\x00\x04".to_vec(), "08P01"),
        (b"\x00\x00\x00\x08\x00\x02\x00\x00".to_vec(), "0A000"),
        (unterminated, "08P01"),
    ];
    for (bytes, code) in cases {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(&bytes).await.unwrap();
        assert_eq!(errors_until_close(&mut s).await, [code], "{bytes:?}");
        assert_select_1(&probe).await;
    }
}

/// A small deterministic generator (xorshift64*), so a failing seed replays exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Valid message sequences the mutations start from.
fn seeds() -> Vec<Vec<Vec<u8>>> {
    let sync = msg(b'S', b"");
    vec![
        vec![msg(b'Q', b"SELECT 1\0")],
        vec![msg(b'Q', b"SELECT 1; SELECT 'a'::text\0")],
        vec![
            msg(b'P', b"s1\0SELECT $1::integer\0\0\x01\0\0\0\x17"),
            msg(b'B', b"p1\0s1\0\0\x01\0\0\0\x01\0\0\0\x0142\0\x01\0\0"),
            msg(b'D', b"Pp1\0"),
            msg(b'E', b"p1\0\0\0\0\0"),
            sync.clone(),
        ],
        vec![
            msg(b'P', b"\0INSERT INTO f VALUES ($1)\0\0\0"),
            msg(b'B', b"\0\0\0\0\0\x01\0\0\0\x017\0\0"),
            msg(b'E', b"\0\0\0\0\0"),
            msg(b'C', b"S\0"),
            sync.clone(),
        ],
        vec![
            msg(b'Q', b"COPY f FROM STDIN\0"),
            msg(b'd', b"1\n2\n3\n"),
            msg(b'c', b""),
        ],
        vec![
            msg(b'Q', b"COPY f FROM STDIN\0"),
            msg(b'd', b"1\n"),
            msg(b'f', b"client gave up\0"),
        ],
        vec![msg(
            b'Q',
            b"BEGIN; SELECT count(*) FROM tcq_streams; COMMIT\0",
        )],
        vec![msg(b'H', b""), sync],
    ]
}

/// One mutation of a message sequence.
fn mutate(rng: &mut Rng, seq: &mut Vec<Vec<u8>>) {
    let i = rng.below(seq.len());
    let kind = rng.below(8);
    if kind == 5 {
        let copy = seq[i].clone();
        seq.insert(i, copy);
        return;
    }
    if kind == 6 && seq.len() > 1 {
        seq.remove(i);
        return;
    }
    let m = &mut seq[i];
    if m.is_empty() {
        m.push(rng.next() as u8);
        return;
    }
    match kind {
        // Flip a byte anywhere, the type and length included.
        0 | 1 => {
            let j = rng.below(m.len());
            m[j] ^= 1 << rng.below(8);
        }
        // Set the length field to something near or far from the truth.
        2 if m.len() >= 5 => {
            let len = match rng.below(4) {
                0 => rng.below(8) as i32,
                1 => m.len() as i32 - 1 + rng.below(5) as i32 - 2,
                2 => -(rng.below(1000) as i32),
                _ => rng.next() as i32,
            };
            m[1..5].copy_from_slice(&len.to_be_bytes());
        }
        // Truncate the message.
        3 => {
            let keep = rng.below(m.len());
            m.truncate(keep);
        }
        // Insert random bytes.
        4 => {
            let at = rng.below(m.len() + 1);
            let n = 1 + rng.below(8);
            for _ in 0..n {
                m.insert(at, rng.next() as u8);
            }
        }
        // (5 and 6 duplicate or drop a message, above.)
        // Replace a count with 0xffff or 0x8000.
        _ => {
            if m.len() >= 7 {
                let j = 5 + rng.below(m.len() - 6);
                let v: &[u8] = if rng.below(2) == 0 {
                    b"\xff\xff"
                } else {
                    b"\x80\x00"
                };
                m[j..j + 2].copy_from_slice(v);
            }
        }
    }
}

/// Thousands of mutated messages over real sockets: every connection ends with an answer
/// or a clean close within 10 s (no hang), the server never dies, and it answers
/// `SELECT 1` after each connection.
#[tokio::test]
async fn protocol_fuzz_never_panics_or_hangs() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let connections = env("TCQ_FUZZ_CONNECTIONS", 1500);
    let seed = env("TCQ_FUZZ_SEED", 11);
    let port = common::start_server();
    let probe = common::connect(port).await;
    probe
        .batch_execute("CREATE STREAM f (v integer)")
        .await
        .unwrap();
    let seeds = seeds();
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut messages = 0usize;
    let mut refused = 0usize;
    for case in 0..connections {
        let mut seq = seeds[rng.below(seeds.len())].clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut seq);
        }
        messages += seq.len();
        let mut s = started(port).await;
        let bytes: Vec<u8> = seq.concat();
        // The server may close mid-write after refusing a message: that is fine.
        let _ = s.write_all(&bytes).await;
        let _ = s.shutdown().await;
        let codes = tokio::time::timeout(Duration::from_secs(10), errors_until_close(&mut s))
            .await
            .unwrap_or_else(|_| panic!("case {case} (seed {seed}) hung: {bytes:?}"));
        refused += codes.iter().filter(|c| *c == "08P01").count();
        let alive = tokio::time::timeout(Duration::from_secs(10), probe.query_one("SELECT 1", &[]))
            .await
            .unwrap_or_else(|_| panic!("case {case} (seed {seed}): SELECT 1 hung"))
            .unwrap_or_else(|e| panic!("case {case} (seed {seed}): SELECT 1 failed: {e}"));
        assert_eq!(alive.get::<_, i32>(0), 1);
    }
    eprintln!("protocol fuzz: {connections} connections, {messages} messages, {refused} refused with 08P01");
    assert!(messages >= 2 * connections as usize);
    assert_eq!(
        tcq::server::connection_panics(),
        0,
        "a connection task panicked"
    );
    assert!(
        refused > 0,
        "no mutation was ever refused: the mutations are not reaching the guard"
    );
}

/// Invalid UTF-8 in SQL text is 22021, as in PostgreSQL, and the connection goes on: in a
/// Query, and in a Parse (whose error makes the server skip to Sync).
#[tokio::test]
async fn invalid_utf8_in_sql_is_22021_and_the_connection_goes_on() {
    let port = common::start_server();
    let mut s = started(port).await;
    s.write_all(&msg(b'Q', b"SELECT '\xc3\x28'\0"))
        .await
        .unwrap();
    let (kind, body) = read_msg(&mut s).await.unwrap();
    assert_eq!(kind, b'E');
    assert_eq!(sqlstate_of(&body), "22021");
    assert!(String::from_utf8_lossy(&body)
        .contains("invalid byte sequence for encoding \"UTF8\": 0xc3"));
    assert_eq!(read_msg(&mut s).await.unwrap().0, b'Z');
    let mut parse = msg(b'P', b"\0SELECT '\xff'\0\0\0");
    parse.extend(msg(b'S', b""));
    s.write_all(&parse).await.unwrap();
    let (kind, body) = read_msg(&mut s).await.unwrap();
    assert_eq!((kind, sqlstate_of(&body)), (b'E', "22021".to_string()));
    assert_eq!(read_msg(&mut s).await.unwrap().0, b'Z');
    // The same connection still runs statements.
    s.write_all(&msg(b'Q', b"SELECT 1\0")).await.unwrap();
    let mut kinds = Vec::new();
    loop {
        let (kind, _) = read_msg(&mut s).await.unwrap();
        kinds.push(kind);
        if kind == b'Z' {
            break;
        }
    }
    assert_eq!(kinds, b"TDCZ");
}
