//! `tcqd flink ...`: export continuous queries as one Flink job, check it with Flink's
//! planner, submit it to a cluster, watch it, cancel it.

use std::path::PathBuf;

use super::package::{flink_home, job_jar, validate, ENTRY_CLASS};
use super::rest::Rest;
use crate::engine::Outcome;
use crate::types::Value;

/// `tcqd flink` subcommands.
#[derive(clap::Subcommand, Clone, Debug)]
pub enum FlinkCommand {
    /// Print the Flink SQL job of the queries in a file (CREATE STREAM statements and
    /// SELECTs: one per line, or separated by `;`). Query N of the file is `qN`.
    Export(Box<ExportArgs>),
    /// Plan a job with Flink's planner on this machine (no cluster, no broker).
    Validate {
        /// The job's script (from `tcqd flink export`).
        job: PathBuf,
        /// The Flink distribution (default $FLINK_HOME).
        #[arg(long)]
        flink_home: Option<PathBuf>,
    },
    /// Package a job with the runner and submit it to a cluster through its REST API;
    /// prints `job <id> <state>`.
    Submit {
        /// The job's script (from `tcqd flink export`).
        job: PathBuf,
        /// The JobManager's REST address, e.g. http://127.0.0.1:8081.
        #[arg(long)]
        rest: String,
        /// The Flink distribution whose lib/ the runner is compiled against (default
        /// $FLINK_HOME).
        #[arg(long)]
        flink_home: Option<PathBuf>,
        /// The job's parallelism (default: the script's, else the cluster's).
        #[arg(long)]
        parallelism: Option<u32>,
        /// Then hand the job's registered queries (`q<id>`) to it on this tcq server (a
        /// libpq connection string, e.g. 'host=127.0.0.1 port=5433 user=tcq'): their
        /// clients get their rows from the job's filesystem sinks.
        #[arg(long)]
        attach: Option<String>,
    },
    /// Print `job <id> <state>` and the records its windows dropped as late.
    Status {
        /// The job id `submit` printed.
        job: String,
        /// The JobManager's REST address.
        #[arg(long)]
        rest: String,
        /// Wait until the job reaches this state (FINISHED, RUNNING, ...), at most
        /// `--timeout` seconds.
        #[arg(long)]
        wait: Option<String>,
        /// Seconds `--wait` waits.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
    },
    /// Cancel a job.
    Cancel {
        /// The job id.
        job: String,
        /// The JobManager's REST address.
        #[arg(long)]
        rest: String,
    },
}

/// Options of `tcqd flink export`: the EXPLAIN (FORMAT FLINK) options of the same names.
#[derive(clap::Args, Clone, Debug)]
pub struct ExportArgs {
    /// The file of statements and queries.
    #[arg(long)]
    queries: PathBuf,
    /// Write the job here instead of stdout.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The job's parallelism.
    #[arg(long)]
    parallelism: Option<u32>,
    /// Checkpoint interval, e.g. '10 seconds'.
    #[arg(long)]
    checkpoint_interval: Option<String>,
    /// State backend: hashmap, rocksdb or forst.
    #[arg(long)]
    state_backend: Option<String>,
    /// Where each query's rows go: kafka, filesystem, print or blackhole.
    #[arg(long)]
    sink: Option<String>,
    /// The filesystem sink's directory (one subdirectory per query).
    #[arg(long)]
    sink_path: Option<String>,
    /// Row format of the sinks: csv or json.
    #[arg(long)]
    sink_format: Option<String>,
    /// Kafka brokers of the sinks (default: the Kafka-fed stream's).
    #[arg(long)]
    sink_bootstrap_servers: Option<String>,
    /// Prefix of the sinks' topics (default tcq-).
    #[arg(long)]
    sink_topic_prefix: Option<String>,
    /// Directory of `<stream>.csv` for streams without a connector.
    #[arg(long)]
    source_path: Option<String>,
    /// Kafka sources' scan.watermark.idle-timeout, e.g. '10 seconds'.
    #[arg(long)]
    idle_timeout: Option<String>,
    /// Distinct GROUP BY keys, for the Flink cost model.
    #[arg(long)]
    groups: Option<f64>,
    /// Events per unit of stream time, e.g. '1 per second' (the cost models' rate).
    #[arg(long)]
    event_rate: Option<String>,
    /// The job's name.
    #[arg(long)]
    job_name: Option<String>,
    /// Which plan the views follow: flink (tcq's WCG where the Flink cost model finds it
    /// cheaper, the default), wcg (tcq's plan as it is), plain (every window from the
    /// stream).
    #[arg(long)]
    plan: Option<String>,
}

fn quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

impl ExportArgs {
    /// The EXPLAIN options these arguments name.
    fn explain_options(&self) -> String {
        let mut o = vec!["FORMAT FLINK".to_string()];
        let mut add = |name: &str, v: Option<String>| {
            if let Some(v) = v {
                o.push(format!("{name} {}", quote(&v)));
            }
        };
        add("PARALLELISM", self.parallelism.map(|p| p.to_string()));
        add("CHECKPOINT_INTERVAL", self.checkpoint_interval.clone());
        add("STATE_BACKEND", self.state_backend.clone());
        add("SINK", self.sink.clone());
        add("SINK_PATH", self.sink_path.clone());
        add("SINK_FORMAT", self.sink_format.clone());
        add(
            "SINK_BOOTSTRAP_SERVERS",
            self.sink_bootstrap_servers.clone(),
        );
        add("SINK_TOPIC_PREFIX", self.sink_topic_prefix.clone());
        add("SOURCE_PATH", self.source_path.clone());
        add("IDLE_TIMEOUT", self.idle_timeout.clone());
        add("GROUPS", self.groups.map(|g| g.to_string()));
        add("EVENT_RATE", self.event_rate.clone());
        add("JOB_NAME", self.job_name.clone());
        add("PLAN", self.plan.clone());
        o.join(", ")
    }
}

/// The statements of a queries file: split at `;` when it has one, else one per line;
/// comment lines (`--`, `#`) and blank lines skipped.
fn statements(text: &str) -> Vec<String> {
    let lines = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.is_empty() && !t.starts_with("--") && !t.starts_with('#')
        })
        .collect::<Vec<_>>();
    let joined = lines.join("\n");
    if joined.contains(';') {
        joined
            .split(';')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    } else {
        lines.iter().map(|l| l.trim().to_string()).collect()
    }
}

/// Run `sql` in `session`; the rows of its last statement that returns rows. Errors name
/// `shown`, the statement as the user wrote it.
async fn run_sql(
    session: &mut crate::engine::Session,
    sql: &str,
    shown: &str,
) -> Result<Vec<Vec<Value>>, String> {
    let mut rows = Vec::new();
    for stmt in session.prepare(sql).map_err(|e| format!("{shown}: {e}"))? {
        let out = session
            .execute(&stmt, &[])
            .await
            .map_err(|e| format!("{shown}: {e}"))?;
        if let Outcome::Rows { rows: r, .. } = out {
            rows = r;
        }
    }
    Ok(rows)
}

/// Run the queries file on an engine of this process (memory only): each SELECT is
/// registered as a cursor, so query N gets id N, then EXPLAIN ... QUERIES ALL.
async fn export(args: &ExportArgs) -> Result<String, String> {
    let text = std::fs::read_to_string(&args.queries)
        .map_err(|e| format!("cannot read {}: {e}", args.queries.display()))?;
    let engine = crate::engine::Engine::new(crate::engine::Config::default());
    let mut session = engine.session(1);
    let mut n = 0;
    for stmt in statements(&text) {
        if stmt.to_ascii_lowercase().starts_with("select") {
            n += 1;
            let declare = format!("DECLARE tcq_export_{n} CURSOR WITH HOLD FOR {stmt}");
            run_sql(&mut session, &declare, &stmt).await?;
        } else {
            run_sql(&mut session, &stmt, &stmt).await?;
        }
    }
    let explain = format!("EXPLAIN ({}) QUERIES ALL", args.explain_options());
    let rows = run_sql(&mut session, &explain, &explain).await?;
    let mut out = String::new();
    for r in rows {
        if let Some(Value::Text(t)) = r.first() {
            out.push_str(t);
            out.push('\n');
        }
    }
    Ok(out)
}

/// The queries of a job script and their sinks' parent directory: `(id, dir)` for each
/// `tcq_q<id>` table written to `'path' = '<dir>/q<id>'`.
///
/// Errors: a query whose sink is not a filesystem sink (only those are read back).
fn attached_sinks(script: &str) -> Result<Vec<(u64, String)>, String> {
    let mut out = Vec::new();
    let mut table: Option<u64> = None;
    for line in script.lines() {
        if let Some(rest) = line.strip_prefix("CREATE TEMPORARY TABLE `tcq_q") {
            table = rest.split('`').next().and_then(|n| n.parse().ok());
            continue;
        }
        let Some(id) = table else { continue };
        if line.starts_with(") WITH (") {
            table = None;
            let suffix = format!("/q{id}', ");
            let path = line
                .split("'path' = '")
                .nth(1)
                .and_then(|p| p.split_once(&suffix))
                .map(|(dir, _)| dir.to_string());
            match path {
                Some(dir) if line.contains("'connector' = 'filesystem'") => out.push((id, dir)),
                _ => {
                    return Err(format!(
                        "query q{id}'s sink is not a filesystem sink; --attach reads files back"
                    ))
                }
            }
        }
    }
    if out.is_empty() {
        return Err("the job names no registered query (tcq_q<id>) to attach".into());
    }
    Ok(out)
}

/// `SELECT tcq_flink_attach(...)` for each of `sinks` on the tcq server at `conn`.
async fn attach(conn: &str, rest: &str, job: &str, sinks: &[(u64, String)]) -> Result<(), String> {
    let (client, connection) = tokio_postgres::connect(conn, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("cannot connect to tcq ({conn}): {e}"))?;
    tokio::spawn(connection);
    for (id, dir) in sinks {
        let row = client
            .query_one(
                "SELECT tcq_flink_attach($1, $2, $3, $4)",
                &[&(*id as i64), &rest, &job, dir],
            )
            .await
            .map_err(|e| format!("tcq_flink_attach({id}): {e}"))?;
        println!("{}", row.get::<_, String>(0));
    }
    Ok(())
}

/// Run a `tcqd flink` subcommand; what it prints goes to stdout, errors to the caller.
pub async fn run(cmd: FlinkCommand) -> Result<(), String> {
    match cmd {
        FlinkCommand::Export(args) => {
            let job = export(&args).await?;
            match &args.output {
                Some(p) => std::fs::write(p, job)
                    .map_err(|e| format!("cannot write {}: {e}", p.display()))?,
                None => print!("{job}"),
            }
        }
        FlinkCommand::Validate { job, flink_home: h } => {
            let home = flink_home(h.as_deref())?;
            let script = std::fs::read_to_string(&job)
                .map_err(|e| format!("cannot read {}: {e}", job.display()))?;
            let home2 = home.clone();
            let plans = tokio::task::spawn_blocking(move || validate(&home2, &script))
                .await
                .map_err(|e| e.to_string())??;
            print!("{plans}");
        }
        FlinkCommand::Submit {
            job,
            rest: url,
            flink_home: h,
            parallelism,
            attach: tcq,
        } => {
            let home = flink_home(h.as_deref())?;
            let script = std::fs::read_to_string(&job).map_err(|e| e.to_string())?;
            let sinks = if tcq.is_some() {
                attached_sinks(&script)?
            } else {
                Vec::new()
            };
            let jar = tokio::task::spawn_blocking(move || job_jar(&home, &script))
                .await
                .map_err(|e| e.to_string())??;
            let rest = Rest::new(&url)?;
            let id = rest.upload_jar("tcq-job.jar", jar).await?;
            let job = rest.run_jar(&id, ENTRY_CLASS, &[], parallelism).await;
            // The cluster keeps the job's classes; the uploaded jar is not needed again.
            let _ = rest.delete_jar(&id).await;
            let job = job?;
            let state = rest.job_state(&job).await?;
            println!("job {job} {state}");
            if let Some(conn) = tcq {
                attach(&conn, &url, &job, &sinks).await?;
            }
        }
        FlinkCommand::Status {
            job,
            rest,
            wait,
            timeout,
        } => {
            let rest = Rest::new(&rest)?;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(timeout);
            let mut state = rest.job_state(&job).await?;
            while let Some(w) = &wait {
                let ended = matches!(state.as_str(), "FINISHED" | "FAILED" | "CANCELED");
                if state.eq_ignore_ascii_case(w) || ended {
                    break;
                }
                if std::time::Instant::now() > deadline {
                    return Err(format!("job {job} is {state} after {timeout} s, not {w}"));
                }
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                state = rest.job_state(&job).await?;
            }
            let late = rest.late_records_dropped(&job).await?;
            println!("job {job} {state}, {late} late records dropped");
            if let Some(w) = wait {
                if !state.eq_ignore_ascii_case(&w) {
                    return Err(format!("job {job} ended {state}, not {w}"));
                }
            }
        }
        FlinkCommand::Cancel { job, rest } => {
            let rest = Rest::new(&rest)?;
            rest.cancel(&job).await?;
            println!("job {job} cancelling");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attach_finds_each_querys_filesystem_sink() {
        let job = "CREATE TEMPORARY TABLE `tcq_q3` (\n  `tcq_window` INT\n) WITH ('connector' = 'filesystem', 'path' = '/data/out/q3', 'format' = 'csv');\n\
                   CREATE TEMPORARY TABLE `tcq_q12` (\n  `x` INT\n) WITH ('connector' = 'filesystem', 'path' = '/d/q12', 'format' = 'csv');";
        assert_eq!(
            attached_sinks(job).unwrap(),
            vec![(3, "/data/out".to_string()), (12, "/d".to_string())]
        );
        let kafka = "CREATE TEMPORARY TABLE `tcq_q3` (\n) WITH ('connector' = 'kafka', 'topic' = 'tcq-q3');";
        assert!(attached_sinks(kafka)
            .unwrap_err()
            .contains("not a filesystem sink"));
    }

    #[test]
    fn a_queries_file_is_split_at_semicolons_or_lines() {
        let lines = "# dashboards\nCREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, x integer)\n\nSELECT 1\n-- c\nSELECT 2\n";
        assert_eq!(
            statements(lines),
            vec![
                "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, x integer)",
                "SELECT 1",
                "SELECT 2"
            ]
        );
        let semis =
            "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN,\n x integer);\nSELECT x\n FROM s;";
        assert_eq!(statements(semis).len(), 2);
        assert!(statements(semis)[1].contains("FROM s"));
    }
}
