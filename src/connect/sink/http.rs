//! `connector = 'http'`: a webhook. Each slide event's rows are POSTed as one request,
//! NDJSON (`Content-Type: application/x-ndjson`) or CSV (`text/csv`), with the headers
//! `Tcq-Sink` (the sink's name) and `Tcq-Event-Time` (the slide event's instant in ISO
//! 8601, UTC), which a receiver can use to deduplicate, and `Authorization: Bearer` when
//! a `token` is given. A query without a window POSTs the tuples of each batch it hands
//! over as one request (`Tcq-Event-Time`: the last one's timestamp). A 2xx answer delivers the event; anything else (another status, no
//! answer within `timeout_ms`, a refused connection) fails the batch, which the engine
//! retries after a pause (growing to 5 s), resuming at its first event not yet answered
//! 2xx. Nothing is dropped: while the webhook fails, the sink's queue fills and then its
//! query waits (see `engine::background`). One connection is kept open between requests
//! (HTTP/1.1 keep-alive) and made again after any failure.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

use super::encode;
use super::spec::{HttpSinkSpec, SinkFormat, SinkFormatKind};
use super::{SinkBatch, Writer};

/// Bytes of a webhook's answer read (and discarded) at most.
const ANSWER_BYTES_MAX: usize = 1 << 20;

/// POSTs a sink's slide events to its webhook.
pub(super) struct HttpWriter {
    name: String,
    spec: HttpSinkSpec,
    format: SinkFormat,
    conn: Option<SendRequest<Full<Bytes>>>,
    /// Events of the batch being written that were answered 2xx already (a retried batch
    /// resumes after them); 0 between batches.
    sent: usize,
}

impl HttpWriter {
    pub(super) fn new(name: &str, spec: HttpSinkSpec, format: SinkFormat) -> HttpWriter {
        HttpWriter {
            name: name.to_string(),
            spec,
            format,
            conn: None,
            sent: 0,
        }
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let tcp = tokio::net::TcpStream::connect((self.spec.host.as_str(), self.spec.port))
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", self.spec.url))?;
        let _ = tcp.set_nodelay(true);
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| format!("{}: {e}", self.spec.url))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }

    /// POST `body` and wait for a 2xx. Errors: why not (the connection is then dropped).
    async fn post(&mut self, body: String, event_time: Option<i64>) -> Result<(), String> {
        let mut sender = match self.conn.take() {
            Some(s) if !s.is_closed() => s,
            _ => self.connect().await?,
        };
        sender
            .ready()
            .await
            .map_err(|e| format!("{}: {e}", self.spec.url))?;
        let content_type = match self.format.kind {
            SinkFormatKind::Json => "application/x-ndjson",
            SinkFormatKind::Csv => "text/csv",
        };
        let authority = format!("{}:{}", self.spec.host, self.spec.port);
        let mut req = hyper::Request::post(self.spec.path.as_str())
            .header(hyper::header::HOST, authority)
            .header(hyper::header::CONTENT_TYPE, content_type)
            .header("tcq-sink", self.name.as_str());
        if let Some(t) = event_time {
            let iso = crate::time::format_timestamp(t).replacen(' ', "T", 1) + "Z";
            req = req.header("tcq-event-time", iso);
        }
        if let Some(token) = &self.spec.token {
            req = req.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("{}: {e}", self.spec.url))?;
        let exchange = async {
            let resp = sender.send_request(req).await?;
            let status = resp.status();
            let drained = Limited::new(resp.into_body(), ANSWER_BYTES_MAX)
                .collect()
                .await
                .is_ok();
            Ok::<_, hyper::Error>((status, drained))
        };
        let timeout = std::time::Duration::from_millis(self.spec.timeout_ms);
        let (status, drained) = match tokio::time::timeout(timeout, exchange).await {
            Err(_) => {
                return Err(format!(
                    "{}: no answer within {} ms",
                    self.spec.url, self.spec.timeout_ms
                ))
            }
            Ok(Err(e)) => return Err(format!("{}: {e}", self.spec.url)),
            Ok(Ok(answer)) => answer,
        };
        if !status.is_success() {
            return Err(format!("{}: HTTP {status}", self.spec.url));
        }
        if drained {
            self.conn = Some(sender);
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Writer for HttpWriter {
    async fn write(&mut self, batch: &SinkBatch<'_>) -> Result<(), String> {
        for i in self.sent..batch.events.len() {
            let rows = batch.event(i);
            let mut body = String::new();
            if self.format.kind == SinkFormatKind::Csv && self.format.header {
                encode::csv_header(batch.columns, self.format.delimiter, &mut body);
            }
            for row in &batch.rows[rows.clone()] {
                encode::line(batch.columns, row, self.format, &mut body);
            }
            self.post(body, batch.times[rows.end - 1]).await?;
            self.sent = i + 1;
        }
        self.sent = 0;
        Ok(())
    }
}
