//! `connector = 'mqtt'`: a topic filter (`+` and `#` wildcards) subscribed to with
//! rumqttc, QoS 1 by default.
//!
//! The session is persistent (clean session off, client id `tcq-<stream>` unless given),
//! so the broker keeps QoS 1 messages for the source while it is disconnected, paused or
//! restarting. Acknowledgements are manual: a message is acknowledged (PUBACK) only once
//! its rows are accepted by the stream, so a crash before that has the broker send it
//! again (at least once; MQTT has no offsets for exactly once). A bad message is
//! acknowledged too, after it is counted (`topic a/b: ...`). The topic a message came on
//! fills `topic_column` when one is named.
//!
//! One task polls the connection (so keep-alives and acknowledgements flow while a batch
//! is delivered) and hands publishes over a bounded channel: when the stream waits, the
//! channel fills, the task stops reading the socket, and the broker holds the rest (at
//! most its in-flight window is unacknowledged).

use std::time::Duration;

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, Publish, QoS};
use tokio::sync::mpsc;

use super::runner::{Ctx, Halt};
use super::spec::MqttSpec;

/// Publishes the connection task hands over before it waits.
const QUEUE: usize = 1024;

/// The largest packet MQTT can frame (its "remaining length" field's maximum, 256 MiB):
/// the client reads every packet the broker may send. A smaller limit would wedge the
/// source: the client fails on an over-size PUBLISH before its packet id is known, so it
/// can never acknowledge it, and the persistent session sends it again on every reconnect.
const PACKET_MAX: usize = 268_435_455;

/// Bytes of one message's payload the source decodes; a longer message is bad (counted
/// and acknowledged, its payload dropped as soon as it is read).
const MESSAGE_MAX: usize = 16 << 20;

/// What the connection task hands over: a PUBLISH, or its topic and packet id alone (an
/// empty payload) with the payload's length when that is over [`MESSAGE_MAX`].
type Incoming = Result<(Publish, Option<usize>), String>;

/// Read `spec`'s topic filter until stopped (or the connection fails: [`Halt::Retry`]).
pub(crate) async fn run(spec: &MqttSpec, ctx: &mut Ctx) -> Result<(), Halt> {
    let id = spec.effective_client_id(&ctx.stream.name);
    let mut options = MqttOptions::new(id, spec.host.clone(), spec.port);
    options
        .set_keep_alive(Duration::from_secs(10))
        .set_clean_session(false)
        .set_manual_acks(true)
        .set_max_packet_size(PACKET_MAX, PACKET_MAX)
        .set_request_channel_capacity(QUEUE);
    if let Some((u, p)) = &spec.credentials {
        options.set_credentials(u.clone(), p.clone());
    }
    let qos = if spec.qos == 0 {
        QoS::AtMostOnce
    } else {
        QoS::AtLeastOnce
    };
    let (client, mut events) = AsyncClient::new(options, QUEUE);
    let (tx, mut rx) = mpsc::channel::<Incoming>(QUEUE);
    let (filter, subscriber) = (spec.topic.clone(), client.clone());
    // Set by the connection task once the broker accepted the connection.
    let acked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let conn_acked = acked.clone();
    let poller = tokio::spawn(async move {
        loop {
            match events.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    conn_acked.store(true, std::sync::atomic::Ordering::Release);
                    // Subscribed again on every connection: a broker that lost the
                    // session (restarted without persistence) has the filter again.
                    if subscriber.subscribe(filter.clone(), qos).await.is_err() {
                        return;
                    }
                }
                Ok(Event::Incoming(Packet::Publish(mut p))) => {
                    let len = p.payload.len();
                    let too_big = (len > MESSAGE_MAX).then(|| {
                        p.payload = Default::default();
                        len
                    });
                    if tx.send(Ok((p, too_big))).await.is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tx.send(Err(format!("mqtt {filter}: {e}"))).await;
                    return;
                }
            }
        }
    });
    let r = consume(ctx, &client, &mut rx, &acked).await;
    poller.abort();
    let _ = client.try_disconnect();
    r
}

/// Deliver what the connection task hands over, a batch of what is there at a time, and
/// acknowledge it once delivered; the source is running once `acked` says the broker
/// accepted the connection.
async fn consume(
    ctx: &mut Ctx,
    client: &AsyncClient,
    rx: &mut mpsc::Receiver<Incoming>,
    acked: &std::sync::atomic::AtomicBool,
) -> Result<(), Halt> {
    let mut rows = Vec::new();
    loop {
        ctx.gate().await?;
        if acked.load(std::sync::atomic::Ordering::Acquire) {
            ctx.connected();
        }
        let first = match tokio::time::timeout(Duration::from_secs(1), rx.recv()).await {
            Err(_) => continue,
            Ok(None) => return Err(Halt::Retry("mqtt: the connection ended".into())),
            Ok(Some(p)) => p.map_err(Halt::Retry)?,
        };
        let mut batch = vec![first];
        while batch.len() < super::format::BATCH_ROWS {
            match rx.try_recv() {
                Ok(p) => batch.push(p.map_err(Halt::Retry)?),
                Err(_) => break,
            }
        }
        let now = crate::time::now_us();
        let mut messages = 0;
        for (p, too_big) in &batch {
            if let Some(len) = too_big {
                let why = format!("a message of {len} bytes is longer than {MESSAGE_MAX} bytes");
                ctx.bad(&format!("topic {}", p.topic), &why)?;
                continue;
            }
            match ctx
                .decoder
                .message(&p.payload, Some(&p.topic), now, &mut rows)
            {
                Ok(()) => messages += 1,
                Err(e) => ctx.bad(&format!("topic {}", p.topic), &e.text)?,
            }
        }
        let rows_batch = super::format::batch_of(&ctx.decoder, &mut rows);
        ctx.deliver(rows_batch, messages, None).await?;
        for (p, _) in &batch {
            if client.ack(p).await.is_err() {
                return Err(Halt::Retry("mqtt: the connection ended".into()));
            }
        }
    }
}
