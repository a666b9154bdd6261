//! `group_id = '...'` on a Kafka source: tcq's progress committed to a consumer group, as
//! Flink's KafkaSource does, so that the standard tools (`kafka-consumer-groups`, lag
//! exporters) see what it has consumed and its lag; and `start = 'group'`, which starts a
//! source without a position of its own from the group's committed offsets.
//!
//! The commits are standalone (OffsetCommit with generation -1 and an empty member id,
//! sent to the coordinator FindCoordinator names): tcq never joins the group, since it
//! reads every partition itself, and the group only records offsets. An offset is
//! committed once it is durable: into an archived stream once the commit record holding
//! it is on disk, into an unarchived one once the position file is written (or, for a
//! server without a data directory, once delivered) -- at most once a second
//! ([`COMMIT_INTERVAL`]). The committed offset is Kafka's: the next offset to read. Exactly
//! once still comes from the archive's positions; the group's offsets are only read by
//! `start = 'group'` when the stream has none.
//!
//! A commit that fails never stops the source: it is counted (`commit_errors` in
//! `tcq_sources`), its error is the source's `last_error`, and the next commit is tried
//! after a pause growing from 1 s to 30 s.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::{
    FindCoordinatorRequest, GroupId, OffsetCommitRequest, OffsetFetchRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use tokio::sync::watch;

use super::kafka_wire::{error_name, Conn};
use super::spec::KafkaSpec;
use super::Source;

/// The shortest time between two commits of one source.
pub(crate) const COMMIT_INTERVAL: Duration = Duration::from_secs(1);
/// The longest pause after failed commits.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Highest versions used: later ones batch several groups (FindCoordinator 4+,
/// OffsetFetch 8+) or belong to the new consumer protocol (OffsetCommit 9+).
const FIND_COORDINATOR_MAX: i16 = 3;
const OFFSET_COMMIT_MAX: i16 = 8;
const OFFSET_FETCH_MAX: i16 = 7;

/// A consumer group's coordinator, found on first use and again after any error.
pub(crate) struct Group {
    spec: KafkaSpec,
    group: String,
    coordinator: Option<Conn>,
}

impl Group {
    /// The group `group` of `spec`'s topic, reached through `spec`'s brokers and SASL.
    pub(crate) fn new(spec: &KafkaSpec, group: &str) -> Group {
        Group {
            spec: spec.clone(),
            group: group.to_string(),
            coordinator: None,
        }
    }

    /// The coordinator's connection: FindCoordinator on the first bootstrap broker that
    /// answers, then a connection to the broker it names (the same one when it names it).
    async fn coordinator(&mut self) -> Result<&mut Conn, String> {
        if self.coordinator.is_none() {
            let sasl = self.spec.sasl.as_ref();
            let mut why = String::from("no bootstrap server");
            for addr in &self.spec.bootstrap {
                let mut conn = match Conn::open(addr, sasl).await {
                    Ok(c) => c,
                    Err(e) => {
                        why = e;
                        continue;
                    }
                };
                let req = FindCoordinatorRequest::default()
                    .with_key(StrBytes::from_string(self.group.clone()))
                    .with_key_type(0);
                let r = conn.send(&req, FIND_COORDINATOR_MAX).await?;
                if r.error_code != 0 {
                    return Err(format!(
                        "{addr}: FindCoordinator: {}",
                        error_name(r.error_code)
                    ));
                }
                let at = format!("{}:{}", r.host.as_str(), r.port);
                if at != *addr {
                    conn = Conn::open(&at, sasl).await?;
                }
                self.coordinator = Some(conn);
                break;
            }
            if self.coordinator.is_none() {
                return Err(why);
            }
        }
        Ok(self.coordinator.as_mut().expect("just set"))
    }

    /// Commit `offsets` (partition to the next offset to read) of the topic. Errors: the
    /// first error the broker or the connection gave (the coordinator is then found again
    /// on the next call).
    pub(crate) async fn commit(&mut self, offsets: &BTreeMap<i32, i64>) -> Result<(), String> {
        let r = self.try_commit(offsets).await;
        if r.is_err() {
            self.coordinator = None;
        }
        r
    }

    async fn try_commit(&mut self, offsets: &BTreeMap<i32, i64>) -> Result<(), String> {
        let partitions = offsets
            .iter()
            .map(|(&p, &o)| {
                OffsetCommitRequestPartition::default()
                    .with_partition_index(p)
                    .with_committed_offset(o)
                    .with_committed_metadata(Some(StrBytes::from_static_str("")))
            })
            .collect();
        let req = OffsetCommitRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(self.group.clone())))
            .with_generation_id_or_member_epoch(-1)
            .with_member_id(StrBytes::from_static_str(""))
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name(TopicName(StrBytes::from_string(self.spec.topic.clone())))
                .with_partitions(partitions)]);
        let conn = self.coordinator().await?;
        let r = conn.send(&req, OFFSET_COMMIT_MAX).await?;
        let failed = r
            .topics
            .iter()
            .flat_map(|t| &t.partitions)
            .find(|p| p.error_code != 0);
        match failed {
            Some(p) => Err(format!(
                "{}: OffsetCommit of partition {}: {}",
                conn.addr,
                p.partition_index,
                error_name(p.error_code)
            )),
            None => Ok(()),
        }
    }

    /// The group's committed offsets of `partitions` of the topic; a partition without
    /// one is left out. Errors: as [`Group::commit`].
    pub(crate) async fn committed(
        &mut self,
        partitions: &[i32],
    ) -> Result<BTreeMap<i32, i64>, String> {
        let r = self.try_committed(partitions).await;
        if r.is_err() {
            self.coordinator = None;
        }
        r
    }

    async fn try_committed(&mut self, partitions: &[i32]) -> Result<BTreeMap<i32, i64>, String> {
        let req = OffsetFetchRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(self.group.clone())))
            .with_topics(Some(vec![OffsetFetchRequestTopic::default()
                .with_name(TopicName(StrBytes::from_string(self.spec.topic.clone())))
                .with_partition_indexes(partitions.to_vec())]));
        let conn = self.coordinator().await?;
        let r = conn.send(&req, OFFSET_FETCH_MAX).await?;
        if r.error_code != 0 {
            return Err(format!(
                "{}: OffsetFetch: {}",
                conn.addr,
                error_name(r.error_code)
            ));
        }
        let mut out = BTreeMap::new();
        for p in r.topics.iter().flat_map(|t| &t.partitions) {
            if p.error_code != 0 {
                return Err(format!(
                    "{}: OffsetFetch of partition {}: {}",
                    conn.addr,
                    p.partition_index,
                    error_name(p.error_code)
                ));
            }
            if p.committed_offset >= 0 {
                out.insert(p.partition_index, p.committed_offset);
            }
        }
        Ok(out)
    }
}

/// The offsets of a Kafka position (`{"partitions": {"0": 5, ...}}`).
pub(crate) fn offsets_of(position: &serde_json::Value) -> BTreeMap<i32, i64> {
    position["partitions"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_i64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// A task that ends when dropped.
pub(crate) struct Committer(tokio::task::JoinHandle<()>);

impl Drop for Committer {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Commit to `group` every durable position `durable` publishes (at most once per
/// [`COMMIT_INTERVAL`]), until the returned [`Committer`] is dropped.
pub(crate) fn spawn_committer(
    spec: &KafkaSpec,
    group: &str,
    durable: watch::Receiver<Option<serde_json::Value>>,
    source: Arc<Source>,
) -> Committer {
    Committer(tokio::spawn(commit_loop(
        Group::new(spec, group),
        durable,
        source,
    )))
}

async fn commit_loop(
    mut group: Group,
    mut durable: watch::Receiver<Option<serde_json::Value>>,
    source: Arc<Source>,
) {
    let mut committed: BTreeMap<i32, i64> = BTreeMap::new();
    let mut backoff = COMMIT_INTERVAL;
    loop {
        let offsets = durable
            .borrow_and_update()
            .as_ref()
            .map(offsets_of)
            .unwrap_or_default();
        let mut pause = COMMIT_INTERVAL;
        let mut failed = false;
        if !offsets.is_empty() && offsets != committed {
            match group.commit(&offsets).await {
                Ok(()) => {
                    committed = offsets;
                    backoff = COMMIT_INTERVAL;
                }
                Err(e) => {
                    tracing::warn!("consumer group \"{}\": {e}", group.group);
                    let text = format!(
                        "committing offsets to consumer group \"{}\": {e}",
                        group.group
                    );
                    source.update(|s| {
                        s.commit_errors += 1;
                        s.last_error = Some(text);
                    });
                    pause = backoff;
                    failed = true;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
        tokio::time::sleep(pause).await;
        // After a failure, try again whether or not the position moved meanwhile.
        if !failed && durable.changed().await.is_err() {
            return;
        }
    }
}
