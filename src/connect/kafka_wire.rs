//! One connection to a Kafka broker for the requests rskafka does not make (its protocol
//! module is private): the consumer group's FindCoordinator, OffsetCommit and OffsetFetch
//! ([`super::kafka_group`]), and the Metadata and Fetch requests of the source's fetchers
//! ([`super::kafka_fetch`]), whose answers rskafka would copy record by record. The encodings are the `kafka-protocol` crate's; this module
//! frames them (a 4-byte big-endian length, a request header, the body), picks each API's
//! version from the broker's ApiVersions answer, and authenticates with SASL (PLAIN or
//! SCRAM, through rsasl as rskafka does) when the source is declared with it.
//!
//! Plain TCP, as the source's own connection (a source has no TLS option). Every exchange
//! is bounded by [`TIMEOUT`] and an answer by [`MAX_RESPONSE_BYTES`] (or the limit given to
//! [`Conn::send_sized`]).

use std::collections::HashMap;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, FetchRequest, FetchResponse,
    FindCoordinatorRequest, FindCoordinatorResponse, MetadataRequest, MetadataResponse,
    OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse,
    RequestHeader, ResponseHeader, SaslAuthenticateRequest, SaslAuthenticateResponse,
    SaslHandshakeRequest, SaslHandshakeResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::spec::Sasl;

/// How long connecting, or one request and its answer, may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer [`Conn::send`] reads: the group and metadata requests' answers are a
/// few hundred bytes (a metadata answer a few kilobytes per hundred partitions).
const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// A request this client sends and the answer it reads. (kafka-protocol's own `Request`
/// trait needs its `broker` feature too, which would build every request's decoder and
/// every answer's encoder for nothing.)
pub(crate) trait Call: Message + Encodable + HeaderVersion {
    /// The API key.
    const KEY: ApiKey;
    /// The answer.
    type Response: Decodable + HeaderVersion;
}

macro_rules! calls {
    ($($req:ty => $resp:ty, $key:ident;)*) => {$(
        impl Call for $req {
            const KEY: ApiKey = ApiKey::$key;
            type Response = $resp;
        }
    )*};
}

calls! {
    ApiVersionsRequest => ApiVersionsResponse, ApiVersions;
    SaslHandshakeRequest => SaslHandshakeResponse, SaslHandshake;
    SaslAuthenticateRequest => SaslAuthenticateResponse, SaslAuthenticate;
    FindCoordinatorRequest => FindCoordinatorResponse, FindCoordinator;
    OffsetCommitRequest => OffsetCommitResponse, OffsetCommit;
    OffsetFetchRequest => OffsetFetchResponse, OffsetFetch;
    MetadataRequest => MetadataResponse, Metadata;
    FetchRequest => FetchResponse, Fetch;
}

/// An open, authenticated connection to one broker.
pub(crate) struct Conn {
    stream: TcpStream,
    /// The broker's (min, max) version of each API key.
    versions: HashMap<i16, (i16, i16)>,
    correlation: i32,
    /// `host:port`, for errors.
    pub(crate) addr: String,
    /// The length of the last answer refused as longer than its limit (the connection is
    /// then of no more use: the answer is left unread).
    pub(crate) too_long: Option<usize>,
}

impl Conn {
    /// Connect to `addr` (`host:port`), learn its API versions and authenticate with
    /// `sasl`. Errors: a message naming `addr` (refused, timed out, authentication failed).
    pub(crate) async fn open(addr: &str, sasl: Option<&Sasl>) -> Result<Conn, String> {
        let stream = tokio::time::timeout(TIMEOUT, TcpStream::connect(addr))
            .await
            .map_err(|_| format!("{addr}: no answer within {} s", TIMEOUT.as_secs()))?
            .map_err(|e| format!("{addr}: {e}"))?;
        let _ = stream.set_nodelay(true);
        let mut conn = Conn {
            stream,
            versions: HashMap::new(),
            correlation: 0,
            addr: addr.to_string(),
            too_long: None,
        };
        // Version 0 is the one every broker answers (a newer client would retry lower).
        let v = conn
            .exchange(&ApiVersionsRequest::default(), 0, MAX_RESPONSE_BYTES)
            .await?;
        if v.error_code != 0 {
            return Err(format!(
                "{addr}: ApiVersions failed with error {}",
                v.error_code
            ));
        }
        conn.versions = v
            .api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect();
        if let Some(s) = sasl {
            conn.authenticate(s).await?;
        }
        Ok(conn)
    }

    /// Send `req` at the highest version both the broker and we (`max`) speak; its answer.
    /// Errors: no common version, a broken connection, an answer that does not decode.
    pub(crate) async fn send<R: Call>(&mut self, req: &R, max: i16) -> Result<R::Response, String> {
        self.send_sized(req, max, MAX_RESPONSE_BYTES).await
    }

    /// As [`Conn::send`], reading an answer of at most `limit` bytes.
    pub(crate) async fn send_sized<R: Call>(
        &mut self,
        req: &R,
        max: i16,
        limit: usize,
    ) -> Result<R::Response, String> {
        let v = self.version::<R>(max)?;
        self.exchange(req, v, limit).await
    }

    /// One request at version `v` and its answer (at most `limit` bytes), within [`TIMEOUT`].
    async fn exchange<R: Call>(
        &mut self,
        req: &R,
        v: i16,
        limit: usize,
    ) -> Result<R::Response, String> {
        let addr = self.addr.clone();
        let name = format!("{:?}", R::KEY);
        let fail = |e: String| format!("{addr}: {name}: {e}");
        tokio::time::timeout(TIMEOUT, self.exchange_now(req, v, limit))
            .await
            .map_err(|_| fail(format!("no answer within {} s", TIMEOUT.as_secs())))?
            .map_err(fail)
    }

    /// The version of `R` to send: the highest both the broker and we (`max`) speak.
    fn version<R: Call>(&self, max: i16) -> Result<i16, String> {
        let name = format!("{:?}", R::KEY);
        let &(lo, hi) = self
            .versions
            .get(&(R::KEY as i16))
            .ok_or_else(|| format!("{}: the broker does not support {name}", self.addr))?;
        let v = hi.min(max);
        if v < lo.max(R::VERSIONS.min) {
            return Err(format!(
                "{}: no version of {name} in common (broker {lo}..{hi}, tcq {}..{max})",
                self.addr,
                R::VERSIONS.min
            ));
        }
        Ok(v)
    }

    /// Write `req` at version `v`, framed.
    async fn write_request<R: Call>(&mut self, req: &R, v: i16) -> Result<(), String> {
        self.correlation = self.correlation.wrapping_add(1);
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY as i16)
            .with_request_api_version(v)
            .with_correlation_id(self.correlation)
            .with_client_id(Some(StrBytes::from_static_str("tcq")));
        let mut buf = BytesMut::with_capacity(256);
        buf.extend_from_slice(&[0; 4]);
        header
            .encode(&mut buf, R::header_version(v))
            .and_then(|()| req.encode(&mut buf, v))
            .map_err(|e| format!("cannot encode: {e}"))?;
        let len = (buf.len() - 4) as i32;
        buf[..4].copy_from_slice(&len.to_be_bytes());
        self.stream.write_all(&buf).await.map_err(|e| e.to_string())
    }

    /// Send `req` at the highest version both the broker and we (`max`, which must be one
    /// whose answer header is the correlation id alone, i.e. not a flexible version) speak
    /// and read the answer's length and header only: the body is left on
    /// [`Conn::stream`] for the caller to read as it comes, however long. Returns the
    /// version and the bytes of the body. The connection is of no use for another request
    /// until the caller has read them all. Errors: as [`Conn::send`].
    pub(crate) async fn send_unread<R: Call>(
        &mut self,
        req: &R,
        max: i16,
    ) -> Result<(i16, u64), String> {
        let v = self.version::<R>(max)?;
        if R::Response::header_version(v) != 0 {
            return Err(format!("{:?} version {v} has a flexible header", R::KEY));
        }
        self.write_request(req, v).await?;
        let len = self.stream.read_i32().await.map_err(|e| e.to_string())?;
        let id = self.stream.read_i32().await.map_err(|e| e.to_string())?;
        if id != self.correlation {
            return Err("an answer to another request".into());
        }
        let len = u64::try_from(len).map_err(|_| format!("an answer of {len} bytes"))?;
        Ok((v, len.saturating_sub(4)))
    }

    /// The connection, for reading an answer [`Conn::send_unread`] left unread.
    pub(crate) fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
    }

    async fn exchange_now<R: Call>(
        &mut self,
        req: &R,
        v: i16,
        limit: usize,
    ) -> Result<R::Response, String> {
        self.write_request(req, v).await?;
        let len = self.stream.read_i32().await.map_err(|e| e.to_string())?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > limit {
            self.too_long = Some(len);
            return Err(format!("an answer of {len} bytes"));
        }
        // Read into capacity that is never zeroed first: a Fetch's answer is megabytes.
        let mut body = BytesMut::with_capacity(len);
        let mut answer = (&mut self.stream).take(len as u64);
        while body.len() < len {
            if answer
                .read_buf(&mut body)
                .await
                .map_err(|e| e.to_string())?
                == 0
            {
                return Err("the connection closed within an answer".into());
            }
        }
        let mut body = body.freeze();
        let h = ResponseHeader::decode(&mut body, R::Response::header_version(v))
            .map_err(|e| format!("a bad answer header: {e}"))?;
        if h.correlation_id != self.correlation {
            return Err("an answer to another request".into());
        }
        let resp = R::Response::decode(&mut body, v).map_err(|e| format!("a bad answer: {e}"))?;
        if body.has_remaining() {
            tracing::debug!(
                "kafka {:?}: {} bytes after the answer",
                R::KEY,
                body.remaining()
            );
        }
        Ok(resp)
    }

    /// SaslHandshake, then SaslAuthenticate rounds driven by rsasl. The password is never
    /// in an error.
    async fn authenticate(&mut self, s: &Sasl) -> Result<(), String> {
        let mech = s.mechanism.to_ascii_uppercase();
        let hs = self
            .send(
                &SaslHandshakeRequest::default()
                    .with_mechanism(StrBytes::from_string(mech.clone())),
                1,
            )
            .await?;
        if hs.error_code != 0 {
            let offered: Vec<&str> = hs.mechanisms.iter().map(|m| m.as_str()).collect();
            return Err(format!(
                "{}: SASL mechanism {mech} refused (the broker offers: {})",
                self.addr,
                offered.join(", ")
            ));
        }
        let config = rsasl::config::SASLConfig::with_credentials(
            None,
            s.username.clone(),
            s.password.clone(),
        )
        .map_err(|e| format!("SASL: {e}"))?;
        let name =
            rsasl::mechname::Mechname::parse(mech.as_bytes()).map_err(|e| format!("SASL: {e}"))?;
        let mut session = rsasl::prelude::SASLClient::new(config)
            .start_suggested(&[name])
            .map_err(|e| format!("SASL: {e}"))?;
        let mut received: Option<Vec<u8>> = None;
        loop {
            let mut out = Vec::new();
            let state = session
                .step(received.as_deref(), &mut out)
                .map_err(|e| format!("{}: SASL {mech}: {e}", self.addr))?;
            if state.has_sent_message() {
                let r = self
                    .send(
                        &SaslAuthenticateRequest::default().with_auth_bytes(out.into()),
                        1,
                    )
                    .await?;
                if r.error_code != 0 {
                    return Err(format!(
                        "{}: SASL {mech} authentication of user \"{}\" failed: {}",
                        self.addr,
                        s.username,
                        r.error_message
                            .as_ref()
                            .map_or("(no message)", |m| m.as_str())
                    ));
                }
                received = Some(r.auth_bytes.to_vec());
            }
            if state.is_finished() {
                return Ok(());
            }
        }
    }
}

/// The name of Kafka error `code` (`NOT_COORDINATOR`-style names as kafka-protocol spells
/// them), for errors.
pub(crate) fn error_name(code: i16) -> String {
    use kafka_protocol::error::ParseResponseErrorCode;
    code.err()
        .map_or_else(|| "no error".into(), |e| format!("{e:?} ({code})"))
}
