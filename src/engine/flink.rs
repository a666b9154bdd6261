//! Results back from Flink: a registered query whose job runs on a Flink cluster keeps its
//! tcq subscribers (cursors, COPY TO STDOUT, the console's live tail).
//!
//! `SELECT tcq_flink_attach(id, 'http://jobmanager:8081', 'job id', 'sink directory')`
//! (which `tcqd flink submit --attach` calls for every query of the job) stops computing
//! query `id` in tcq: it leaves its stream (and shared plan), and from then on a task reads
//! the query's filesystem sink, `<sink directory>/q<id>/`, with the file connector's CSV
//! decoder, and hands its rows to the query's output queue and live tails, in window order:
//! - Flink's filesystem sink writes a part file hidden (`.part-...inprogress`) and
//!   publishes it as `part-...` when a checkpoint completes (or the job finishes); only
//!   published files are read, each once.
//! - A row of an instance ending at `e` is delivered once no row of an instance ending at
//!   or before `e` can still come: Flink fires the instance when the watermark passes
//!   `e - 1 ms`, so when the sink's input watermark `w` (the least over its subtasks, read
//!   from the REST API) has passed `e - 1 ms`, all those rows have reached the sink, and
//!   they are published by the next checkpoint to complete after `w` was read. Rows
//!   are delivered one slide event (`wtime`) at a time, windows in the order written.
//! - When the job is FINISHED the rest is delivered and the query ends, as when its stream
//!   is dropped; FAILED or CANCELED ends it with an error (58030) that says so; a sink file that does
//!   not decode ends it with 22P04.
//!
//! Rows of instances that tcq had already emitted before the attach (ending at or before
//! the query's current time) are skipped. `tcq_queries.flink_job` and `flink_state` show the
//! job and its state (refreshed every half second).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::registry::{FlinkRun, RunningQuery};
use super::Engine;
use crate::connect::format::Decoder;
use crate::connect::spec::{FormatKind, FormatSpec};
use crate::error::{Error, Result};
use crate::exec::Event;
use crate::flink::rest::Rest;
use crate::types::{Column, DataType, Value};

/// The columns of query `q`'s sink: `tcq_window`, `tcq_wstart`, `tcq_wend`, its group keys
/// (`tcq_k<i>`), then its own columns (see the export's sink tables).
fn sink_columns(q: &RunningQuery) -> Vec<Column> {
    let exec = q.exec.lock();
    let keys = exec
        .query()
        .aggregate
        .as_ref()
        .map(|a| a.group_types.clone())
        .unwrap_or_default();
    let mut cols = vec![
        Column::new("tcq_window", DataType::Int4),
        Column::new("tcq_wstart", DataType::Timestamp),
        Column::new("tcq_wend", DataType::Timestamp),
    ];
    for (i, t) in keys.into_iter().enumerate() {
        cols.push(Column::new(format!("tcq_k{i}"), t));
    }
    cols.extend(q.columns.iter().cloned());
    cols
}

/// Hand query `id`'s results to Flink job `job` at `rest`, read back from `dir`.
///
/// Errors: 42704 for no such query; 22023 for a bad REST address; 55000 for a query that
/// is already on Flink or that is not an aggregate the export writes.
pub(crate) fn attach(
    engine: &Arc<Engine>,
    id: u64,
    rest: &str,
    job: &str,
    dir: &str,
) -> Result<String> {
    let rest = Rest::new(rest).map_err(Error::InvalidParameterValue)?;
    let Some((q, stream_name)) = engine.catalog.queries().get(id) else {
        return Err(Error::UndefinedObject(format!(
            "no continuous query with id {id} is registered (see tcq_queries)"
        )));
    };
    if q.exec.lock().query().aggregate.is_none() {
        return Err(Error::ObjectNotInPrerequisiteState(format!(
            "query {id} is not a window aggregation; Flink computes none of its rows"
        )));
    }
    {
        let mut slot = q.flink.lock();
        if slot.is_some() {
            return Err(Error::ObjectNotInPrerequisiteState(format!(
                "query {id} already runs on Flink"
            )));
        }
        *slot = Some(Arc::new(FlinkRun {
            job: job.to_string(),
            state: Mutex::new("SUBMITTED".into()),
        }));
    }
    let mut stall = Duration::from_secs(1);
    if let Ok(stream) = engine.catalog.stream(&stream_name) {
        stall = stream.output_stall;
        stream.queries.lock().retain(|x| x.id != id);
        super::catalog::leave_plans(&stream, id);
    }
    // After leaving the stream: an event computed before is delivered by then or skipped.
    let emitted_until = q.exec.lock().stats().now_us;
    let reader = Reader {
        decoder: Decoder::new(
            &sink_columns(&q),
            Some(2),
            FormatSpec {
                kind: FormatKind::Csv,
                ..FormatSpec::default()
            },
        ),
        keys: q
            .exec
            .lock()
            .query()
            .aggregate
            .as_ref()
            .map_or(0, |a| a.group_types.len()),
        dir: PathBuf::from(dir).join(format!("q{id}")),
        seen: HashSet::new(),
        pending: Vec::new(),
        emitted_until,
    };
    tokio::spawn(follow(q, rest, job.to_string(), reader, stall));
    Ok(format!("query {id} runs on Flink job {job}"))
}

/// The published part files of one query's sink and the rows read but not delivered.
struct Reader {
    decoder: Decoder,
    /// Group keys in front of the query's own columns.
    keys: usize,
    dir: PathBuf,
    seen: HashSet<std::ffi::OsString>,
    /// (window end, window index, row) not delivered yet.
    pending: Vec<(i64, i32, Vec<Value>)>,
    /// tcq emitted the instances ending at or before this time itself: their rows are
    /// skipped.
    emitted_until: Option<i64>,
}

impl Reader {
    /// Read the part files published since the last call. Errors: a file that does not
    /// decode (the file and the line).
    fn read_new(&mut self) -> Result<()> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Ok(());
        };
        let mut names: Vec<std::ffi::OsString> = entries
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.to_string_lossy().starts_with("part-") && !self.seen.contains(n))
            .collect();
        names.sort();
        for name in names {
            let path = self.dir.join(&name);
            let bytes =
                std::fs::read(&path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
            let mut rows = Vec::new();
            self.decoder
                .message(&bytes, None, 0, &mut rows)
                .map_err(|e| Error::BadCopyFileFormat(format!("{}: {e}", path.display())))?;
            for (mut row, wend) in rows {
                if self.emitted_until.is_some_and(|t| wend <= t) {
                    continue;
                }
                let window = row[0].as_i64().unwrap_or(0) as i32;
                let own = row.split_off(3 + self.keys);
                self.pending.push((wend, window, own));
            }
            self.seen.insert(name);
        }
        Ok(())
    }

    /// The pending rows of instances ending at or before `until` (all for `None`), one
    /// event per window end, in window order.
    fn take(&mut self, until: Option<i64>) -> Vec<Event> {
        let mut ready: Vec<(i64, i32, Vec<Value>)> = Vec::new();
        let mut rest = Vec::new();
        for r in self.pending.drain(..) {
            if until.is_none_or(|u| r.0 <= u) {
                ready.push(r);
            } else {
                rest.push(r);
            }
        }
        self.pending = rest;
        ready.sort_by_key(|(e, w, _)| (*e, *w));
        let mut events: Vec<Event> = Vec::new();
        let mut last = None;
        for (e, _, row) in ready {
            match (last, events.last_mut()) {
                (Some(l), Some(Event::Rows(rows))) if l == e => rows.push(row),
                _ => events.push(Event::Rows(vec![row])),
            }
            last = Some(e);
        }
        events
    }
}

/// The least input watermark (ms) over the subtasks of the job's vertex that writes query
/// `label`'s sink; `None` before every subtask has one.
async fn sink_watermark(rest: &Rest, job: &str, label: &str) -> Option<i64> {
    let j = rest.get(&format!("/jobs/{job}")).await.ok()?;
    let sink = format!("tcq_{label}");
    let vertex = j["vertices"]
        .as_array()?
        .iter()
        .find(|v| v["name"].as_str().is_some_and(|n| n.contains(&sink)))?
        .clone();
    let id = vertex["id"].as_str()?;
    let marks = rest
        .get(&format!("/jobs/{job}/vertices/{id}/watermarks"))
        .await
        .ok()?;
    marks
        .as_array()?
        .iter()
        .filter(|m| {
            m["id"]
                .as_str()
                .is_some_and(|i| i.ends_with("currentInputWatermark"))
        })
        .map(|m| m["value"].as_str().and_then(|v| v.parse::<i64>().ok()))
        .collect::<Option<Vec<i64>>>()?
        .into_iter()
        .min()
}

/// The id of the job's latest completed checkpoint (0: none yet).
async fn completed_checkpoint(rest: &Rest, job: &str) -> u64 {
    match rest.get(&format!("/jobs/{job}/checkpoints")).await {
        Ok(c) => c["latest"]["completed"]["id"].as_u64().unwrap_or(0),
        Err(_) => 0,
    }
}

/// Follow the job until it ends or the query does, delivering its rows.
async fn follow(
    q: Arc<RunningQuery>,
    rest: Rest,
    job: String,
    mut reader: Reader,
    stall: Duration,
) {
    let label = format!("q{}", q.id);
    let run = q.flink.lock().clone();
    let set_state = |s: &str| {
        if let Some(r) = &run {
            *r.state.lock() = s.to_string();
        }
    };
    // Watermarks read and the checkpoint completed when each was read.
    let mut marks: Vec<(i64, u64)> = Vec::new();
    let mut released: Option<i64> = None;
    loop {
        if q.is_closed() {
            return;
        }
        let state = match rest.job_state(&job).await {
            Ok(s) => s,
            Err(e) => {
                set_state(&format!("unreachable: {e}"));
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        set_state(&state);
        if let Err(e) = reader.read_new() {
            q.fail(e);
            return;
        }
        let finished = state == "FINISHED";
        let until = if finished {
            None
        } else {
            let ck = completed_checkpoint(&rest, &job).await;
            for &(w, at) in &marks {
                if ck > at {
                    released = Some(released.map_or(w, |r| r.max(w)));
                }
            }
            marks.retain(|&(_, at)| ck <= at);
            if let Some(w) = sink_watermark(&rest, &job, &label).await {
                marks.push((w, ck));
            }
            // An instance ending at e fired once the watermark passed e - 1 ms.
            Some(released.map_or(i64::MIN, |w| w.saturating_add(1).saturating_mul(1000)))
        };
        let events = reader.take(until);
        if !events.is_empty() && !q.deliver(events, stall).await {
            return;
        }
        match state.as_str() {
            "FINISHED" => {
                q.close();
                return;
            }
            "FAILED" | "CANCELED" => {
                q.fail(Error::Io(format!(
                    "query {} ended: its Flink job {job} is {state}",
                    q.id
                )));
                return;
            }
            _ => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(dir: &std::path::Path, emitted_until: Option<i64>) -> Reader {
        let cols = vec![
            Column::new("tcq_window", DataType::Int4),
            Column::new("tcq_wstart", DataType::Timestamp),
            Column::new("tcq_wend", DataType::Timestamp),
            Column::new("tcq_k0", DataType::Text),
            Column::new("origin", DataType::Text),
            Column::new("count", DataType::Int8),
            Column::new("avg", DataType::Numeric),
        ];
        Reader {
            decoder: Decoder::new(
                &cols,
                Some(2),
                FormatSpec {
                    kind: FormatKind::Csv,
                    ..FormatSpec::default()
                },
            ),
            keys: 1,
            dir: dir.to_path_buf(),
            seen: HashSet::new(),
            pending: Vec::new(),
            emitted_until,
        }
    }

    fn t(s: &str) -> i64 {
        crate::time::parse_timestamp(s).unwrap()
    }

    #[test]
    fn published_part_files_are_read_once_and_delivered_in_window_order() {
        let dir = tempfile::tempdir().unwrap();
        // Two subtasks' files; a hidden in-progress file is not read.
        std::fs::write(
            dir.path().join("part-a-0-0"),
            "1,2001-01-01 00:00:00,2001-01-01 00:20:00,SFO,SFO,2,3E+1\n\
             0,2001-01-01 00:10:00,2001-01-01 00:20:00,SFO,SFO,1,2E+1\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("part-a-1-0"),
            "0,2001-01-01 00:00:00,2001-01-01 00:10:00,\"LAX, CA\",\"LAX, CA\",4,1.5\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(".part-a-1-1.inprogress.x"), "garbage\n").unwrap();
        let mut r = reader(dir.path(), None);
        r.read_new().unwrap();
        assert_eq!(r.pending.len(), 3);
        // Up to 00:10: one slide event.
        let first = r.take(Some(t("2001-01-01 00:10:00")));
        assert_eq!(first.len(), 1);
        let rows = first[0].clone().into_rows();
        assert_eq!(rows[0][0], Value::Text("LAX, CA".into()));
        assert_eq!(rows[0][1], Value::Int8(4));
        // The rest: 00:20, window 0 before window 1; 3E+1 is the numeric 30.
        let rest = r.take(None);
        assert_eq!(rest.len(), 1);
        let rows = rest[0].clone().into_rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0][1], Value::Int8(1));
        assert_eq!(rows[1][1], Value::Int8(2));
        assert_eq!(rows[1][2].to_text().unwrap(), "30");
        // Read once.
        r.read_new().unwrap();
        assert!(r.pending.is_empty());
        // Instances tcq emitted itself are skipped.
        let mut r = reader(dir.path(), Some(t("2001-01-01 00:10:00")));
        r.read_new().unwrap();
        assert_eq!(r.pending.len(), 2);
        assert!(r.pending.iter().all(|p| p.0 == t("2001-01-01 00:20:00")));
    }

    #[test]
    fn a_sink_file_that_does_not_decode_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("part-b-0-0"), "0,not a time,x\n").unwrap();
        let e = reader(dir.path(), None).read_new().unwrap_err();
        assert!(
            matches!(e, Error::BadCopyFileFormat(ref m) if m.contains("part-b-0-0")),
            "{e:?}"
        );
    }
}
