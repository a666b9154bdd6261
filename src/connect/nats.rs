//! `connector = 'nats'`: a core NATS subscription (`*` and `>` wildcards, optionally in a
//! queue group) read with async-nats.
//!
//! Core NATS is at most once: the server keeps nothing for a subscriber, so what is
//! published while the source is paused, reconnecting or stopped is not delivered (and
//! a message is lost if tcq stops between reading it and the stream taking it in).
//! PAUSE closes the connection; RESUME opens a new one and subscribes again.
//!
//! The client reconnects by itself (after 0.2 s, then up to 5 s between attempts, at most
//! [`RECONNECTS`] times before a new client is made) and subscribes again; meanwhile the
//! state is `retrying` with the reason as the last error.
//! Backpressure: while the stream waits (memory budget, a full ingest queue) the source
//! stops taking messages from the client, whose per-subscription queue ([`QUEUE`]
//! messages) fills; past it the client drops messages as a slow consumer. Those drops are
//! counted in the last error. The subject a message came on fills `subject_column`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::connection::State;
use async_nats::{ConnectOptions, Event, Message, ServerAddr, Subscriber};
use futures::{FutureExt, StreamExt};

use super::runner::{Ctx, Halt};
use super::spec::{NatsAuth, NatsSpec};

/// Messages the client keeps for the source before it drops them (a slow consumer).
const QUEUE: usize = 4096;

/// Reconnection attempts of one client (about 45 s) before it closes; the source then
/// starts a new one. Bounded, so that a client left behind by PAUSE or DROP STREAM while
/// the server is down does not try forever.
const RECONNECTS: usize = 12;

/// Read `spec`'s subject until stopped or paused (`Ok`), or until the first connection
/// fails ([`Halt::Retry`]; later disconnections are the client's to recover from).
pub(crate) async fn run(spec: &NatsSpec, ctx: &mut Ctx) -> Result<(), Halt> {
    let dropped = Arc::new(AtomicU64::new(0));
    let counter = dropped.clone();
    let mut options = ConnectOptions::new()
        .name(format!("tcq-{}", ctx.stream.name))
        .subscription_capacity(QUEUE)
        .ping_interval(Duration::from_secs(10))
        .max_reconnects(RECONNECTS)
        .reconnect_delay_callback(|n| {
            Duration::from_millis(200u64 << n.min(5)).min(Duration::from_secs(5))
        })
        .event_callback(move |e| {
            let counter = counter.clone();
            async move {
                if let Event::SlowConsumer(_) = e {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    options = match &spec.auth {
        NatsAuth::None => options,
        NatsAuth::UserPassword(u, p) => options.user_and_password(u.clone(), p.clone()),
        NatsAuth::Token(t) => options.token(t.clone()),
    };
    let servers: Vec<ServerAddr> = spec.url.split(',').filter_map(|s| s.parse().ok()).collect();
    let client = options
        .connect(servers.as_slice())
        .await
        .map_err(|e| Halt::Retry(format!("nats {}: {e}", spec.url)))?;
    let subject = spec.subject.clone();
    let subscribed = match &spec.queue_group {
        None => client.subscribe(subject).await,
        Some(g) => client.queue_subscribe(subject, g.clone()).await,
    };
    let mut subscriber =
        subscribed.map_err(|e| Halt::Retry(format!("nats {}: {e}", spec.subject)))?;
    let watch = Watch {
        client: &client,
        spec,
        dropped: &dropped,
    };
    let r = consume(ctx, &mut subscriber, &watch).await;
    let _ = subscriber.unsubscribe().await;
    r
}

/// What the consuming loop looks at between batches: the connection and the drops.
struct Watch<'a> {
    client: &'a async_nats::Client,
    spec: &'a NatsSpec,
    dropped: &'a AtomicU64,
}

impl Watch<'_> {
    /// Show the connection's state and any new drops; `reported` is the drops shown so far.
    fn show(&self, ctx: &Ctx, reported: &mut u64) {
        match self.client.connection_state() {
            State::Connected => ctx.connected(),
            _ => ctx.reconnecting(format!(
                "nats {}: disconnected; reconnecting",
                self.spec.url
            )),
        }
        let n = self.dropped.load(Ordering::Relaxed);
        if n > *reported {
            *reported = n;
            let why = format!(
                "subject {}: {n} messages dropped by the client (slow consumer: the source was not reading)",
                self.spec.subject
            );
            ctx.source.update(|s| s.last_error = Some(why));
        }
    }
}

/// Deliver the subscription's messages, a batch of what is there at a time, until the
/// source is paused (`Ok`) or stopped.
async fn consume(ctx: &mut Ctx, sub: &mut Subscriber, watch: &Watch<'_>) -> Result<(), Halt> {
    let mut rows = Vec::new();
    let mut reported = 0;
    loop {
        if ctx.source.is_paused() {
            return Ok(()); // unsubscribed and disconnected; RESUME subscribes again
        }
        ctx.gate().await?;
        watch.show(ctx, &mut reported);
        let first = match tokio::time::timeout(Duration::from_secs(1), sub.next()).await {
            Err(_) => continue,
            Ok(None) => {
                return Err(Halt::Retry(format!(
                    "nats {}: no connection after {RECONNECTS} attempts; connecting again",
                    watch.spec.url
                )))
            }
            Ok(Some(m)) => m,
        };
        let mut batch: Vec<Message> = vec![first];
        while batch.len() < super::format::BATCH_ROWS {
            match sub.next().now_or_never() {
                Some(Some(m)) => batch.push(m),
                _ => break,
            }
        }
        let now = crate::time::now_us();
        let mut messages = 0;
        for m in &batch {
            let subject = m.subject.as_str();
            match ctx
                .decoder
                .message(&m.payload, Some(subject), now, &mut rows)
            {
                Ok(()) => messages += 1,
                Err(e) => ctx.bad(&format!("subject {subject}"), &e.text)?,
            }
        }
        let rows_batch = super::format::batch_of(&ctx.decoder, &mut rows);
        ctx.deliver(rows_batch, messages, None).await?;
    }
}
