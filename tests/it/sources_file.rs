//! Issue 31, files: `CREATE STREAM ... WITH (connector = 'file', ...)` reads a directory of
//! CSV, NDJSON or Parquet files in name order, follows the last one as it grows, counts
//! bad lines, pauses and resumes, and (archived, under SIGKILL) resumes after the last
//! committed line with nothing lost or read twice. Also the WITH options' errors.

use std::io::Write;
use std::path::Path;

use crate::common::sources::{fetch, source_row, wait_source};
use crate::common::{self, connect, exec, sqlstate};

const COLUMNS: &str = "ts timestamp TIMESTAMPCOLUMN, delay integer, origin text";

fn write(dir: &Path, name: &str, text: &str) {
    // Written aside and renamed, as a producer of whole files should.
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, dir.join(name)).unwrap();
}

fn append(dir: &Path, name: &str, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(name))
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

#[tokio::test]
async fn csv_files_in_name_order_then_the_last_one_followed() {
    let port = common::start_server();
    let c = connect(port).await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.csv", "ts,delay,origin\n2001-01-01 00:02:00,2,\"S,FO\"\n2001-01-01 00:03:00,oops,LAX\n2001-01-01 00:04:00,,ORD\n");
    write(
        dir.path(),
        "a.csv",
        "ts,delay,origin\n2001-01-01 00:01:00,1,SFO\n",
    );
    write(dir.path(), "notes.txt", "not matched\n");
    exec(
        &c,
        &format!(
            "CREATE STREAM f ({COLUMNS}) WITH (connector = 'file', path = '{}', pattern = '*.csv', \
             format = 'csv', header = true, paused = true)",
            dir.path().display()
        ),
    )
    .await;
    assert_eq!(source_row(&c, "f").await.unwrap().state, "paused");
    exec(
        &c,
        "BEGIN; DECLARE q CURSOR FOR SELECT ts, delay, origin FROM f",
    )
    .await;
    exec(&c, "ALTER STREAM f RESUME").await;
    let rows = fetch(&c, "q", 3, 10).await;
    assert_eq!(
        rows,
        common::table(&[
            &["2001-01-01 00:01:00", "1", "SFO"],
            &["2001-01-01 00:02:00", "2", "S,FO"],
            &["2001-01-01 00:04:00", "NULL", "ORD"],
        ])
    );
    let r = wait_source(&c, "f", 10, |r| r.messages == 3).await;
    assert_eq!(r.bad_messages, 1);
    assert_eq!(
        r.last_error.as_deref(),
        Some(
            "file b.csv line 3: column \"delay\": invalid input syntax for type integer: \"oops\""
        )
    );
    assert_eq!(r.lag, Some(0));
    // The last file is followed: a line is read once its line end is there.
    append(
        dir.path(),
        "b.csv",
        "2001-01-01 00:05:00,5,DEN\n2001-01-01 00:06:00,6,BO",
    );
    assert_eq!(
        fetch(&c, "q", 1, 10).await,
        common::table(&[&["2001-01-01 00:05:00", "5", "DEN"]])
    );
    append(dir.path(), "b.csv", "S\n");
    write(
        dir.path(),
        "c.csv",
        "ts,delay,origin\n2001-01-01 00:07:00,7,JFK\n",
    );
    assert_eq!(
        fetch(&c, "q", 2, 10).await,
        common::table(&[
            &["2001-01-01 00:06:00", "6", "BOS"],
            &["2001-01-01 00:07:00", "7", "JFK"]
        ])
    );
    // Paused, nothing is read; resumed, it goes on from where it was. PAUSE answers once
    // the source has stopped reading (the state said `running` for a moment after it).
    exec(&c, "ALTER STREAM f PAUSE").await;
    assert_eq!(source_row(&c, "f").await.unwrap().state, "paused");
    append(dir.path(), "c.csv", "2001-01-01 00:08:00,8,ATL\n");
    assert!(fetch(&c, "q", 1, 1).await.is_empty());
    exec(&c, "ALTER STREAM f RESUME").await;
    assert_eq!(
        fetch(&c, "q", 1, 10).await,
        common::table(&[&["2001-01-01 00:08:00", "8", "ATL"]])
    );
    let r = source_row(&c, "f").await.unwrap();
    assert_eq!((r.messages, r.tuples, r.bad_messages), (7, 7, 1));
    exec(&c, "COMMIT; DROP STREAM f").await;
    assert!(source_row(&c, "f").await.is_none());
}

#[tokio::test]
async fn ndjson_and_parquet_files_with_epoch_times() {
    let port = common::start_server();
    let c = connect(port).await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "1.json",
        "{\"ts\": 978307260, \"delay\": 1, \"origin\": \"SFO\", \"extra\": true}\n\
         {\"ts\": 978307320, \"origin\": 7}\n\
         {\"ts\": 978307380.5, \"delay\": -3}\n",
    );
    exec(
        &c,
        &format!(
            "CREATE STREAM j ({COLUMNS}) WITH (connector = 'file', path = '{}', format = 'json', \
             timestamp_format = 'epoch_s', paused = true)",
            dir.path().display()
        ),
    )
    .await;
    exec(
        &c,
        "BEGIN; DECLARE q CURSOR FOR SELECT * FROM j; ALTER STREAM j RESUME",
    )
    .await;
    assert_eq!(
        fetch(&c, "q", 2, 10).await,
        common::table(&[
            &["2001-01-01 00:01:00", "1", "SFO"],
            &["2001-01-01 00:03:00.5", "-3", "NULL"],
        ])
    );
    let r = wait_source(&c, "j", 10, |r| r.bad_messages == 1).await;
    assert_eq!(
        r.last_error.as_deref(),
        Some("file 1.json line 2: column \"origin\": a JSON number is not a value of type text")
    );
    exec(&c, "COMMIT").await;

    // Parquet: columns by name (the file's order and extra columns do not matter).
    let pq = tempfile::tempdir().unwrap();
    write_parquet(&pq.path().join("part-1.parquet"));
    exec(
        &c,
        &format!(
            "CREATE STREAM p ({COLUMNS}) WITH (connector = 'file', path = '{}', format = 'parquet', paused = true)",
            pq.path().display()
        ),
    )
    .await;
    exec(
        &c,
        "BEGIN; DECLARE r CURSOR FOR SELECT * FROM p; ALTER STREAM p RESUME",
    )
    .await;
    assert_eq!(
        fetch(&c, "r", 2, 10).await,
        common::table(&[
            &["2001-01-01 00:00:01", "10", "SEA"],
            &["2001-01-01 00:00:02", "NULL", "PDX"],
        ])
    );
    exec(&c, "COMMIT").await;
}

/// A Parquet file of two flights, written zstd-compressed with the arrow and parquet crates.
fn write_parquet(path: &Path) {
    use arrow_array::{Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
    use std::sync::Arc;
    let batch = RecordBatch::try_from_iter(vec![
        (
            "origin",
            Arc::new(StringArray::from(vec!["SEA", "PDX"])) as arrow_array::ArrayRef,
        ),
        (
            "delay",
            Arc::new(Int64Array::from(vec![Some(10), None])) as arrow_array::ArrayRef,
        ),
        (
            "ts",
            Arc::new(TimestampMillisecondArray::from(vec![
                978_307_201_000,
                978_307_202_000,
            ])) as arrow_array::ArrayRef,
        ),
        (
            "unused",
            Arc::new(Int64Array::from(vec![1, 2])) as arrow_array::ArrayRef,
        ),
    ])
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let zstd = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(zstd)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// An archived stream fed by files: SIGKILL while it reads, restart, and every line is in
/// the archive exactly once; the source (and its pause) come back from the catalog.
#[tokio::test]
async fn archived_file_source_resumes_exactly_after_a_sigkill() {
    let data = common::data_dir();
    let input = tempfile::tempdir().unwrap();
    let line = |i: i64| format!("{},{i},X{i}\n", 978_307_200 + i);
    let file = |from: i64, to: i64| (from..to).map(line).collect::<String>();
    for k in 0..20 {
        write(
            input.path(),
            &format!("part-{k:03}.csv"),
            &file(k * 5000, (k + 1) * 5000),
        );
    }
    let args = ["--data-dir", data.path().to_str().unwrap()];
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM a ({COLUMNS}) TYPE ARCHIVED WITH (connector = 'file', path = '{}', \
             format = 'csv', timestamp_format = 'epoch_s')",
            input.path().display()
        ),
    )
    .await;
    // Killed part way (or after: either way nothing may be lost or doubled).
    wait_source(&c, "a", 30, |r| r.messages > 0).await;
    drop(server);
    for k in 20..24 {
        write(
            input.path(),
            &format!("part-{k:03}.csv"),
            &file(k * 5000, (k + 1) * 5000),
        );
    }
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    let r = wait_source(&c, "a", 60, |r| r.lag == Some(0) && r.state == "running").await;
    assert_eq!(r.bad_messages, 0);
    let tuples: i64 = c
        .query_one("SELECT tuples FROM tcq_streams WHERE name = 'a'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(tuples, 120_000, "every line once: {r:?}");
    exec(&c, "ALTER STREAM a PAUSE").await;
    drop(server);
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    assert_eq!(source_row(&c, "a").await.unwrap().state, "paused");
    drop(c);
    drop(server);
    let columns = vec![
        tcq::types::Column::new("ts", tcq::types::DataType::Timestamp),
        tcq::types::Column::new("delay", tcq::types::DataType::Int4),
        tcq::types::Column::new("origin", tcq::types::DataType::Text),
    ];
    let dir = tcq::engine::archive::stream_dir(data.path(), "a");
    let batches = tcq::engine::archive::read_archive(&dir, &columns, Some(0)).unwrap();
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let rows = b.to_rows();
            (0..rows.len())
                .map(|i| rows.row(i)[1].as_i64().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..120_000).collect::<Vec<_>>());
}

#[tokio::test]
async fn with_options_errors_have_postgres_sqlstates() {
    let port = common::start_server();
    let c = connect(port).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display();
    for (sql, state, message) in [
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (connector = 'ftp', path = '{path}')"),
            "42704",
            "connector \"ftp\" does not exist; the connectors are kafka, mqtt, nats and file".to_string(),
        ),
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (connector = 'file', path = '{path}', colour = 'red')"),
            "22023",
            "unrecognized option \"colour\" for connector 'file'; the options are connector, delimiter, format, header, on_error, path, pattern, paused, timestamp_format, topic_column".to_string(),
        ),
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (connector = 'kafka', topic = 't')"),
            "22023",
            "option \"bootstrap_servers\" is required for connector 'kafka'".to_string(),
        ),
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (connector = 'file', path = '{path}', format = 'xml')"),
            "22023",
            "invalid value for option \"format\" of connector 'file': \"xml\" (expected json, csv, parquet)".to_string(),
        ),
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (connector = 'file', path = '{path}', path = '/tmp')"),
            "42601",
            "conflicting or redundant options: \"path\" given twice".to_string(),
        ),
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (topic = 't')"),
            "22023",
            "unrecognized stream option \"topic\": a stream's options are slack, retention and, for a source, connector and its own".to_string(),
        ),
        // Values no broker or directory would ever take: refused when declared rather
        // than retried for good.
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (connector = 'file', path = '')"),
            "22023",
            "invalid value for option \"path\" of connector 'file': \"\" (expected the path of a directory)".to_string(),
        ),
        // Relative to the server's working directory, which a restart may change.
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (connector = 'file', path = 'spool')"),
            "42602",
            "relative path not allowed for a file source: \"spool\"".to_string(),
        ),
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (connector = 'kafka', topic = 't', bootstrap_servers = '127.0.0.1:99999')"),
            "22023",
            "invalid value for option \"bootstrap_servers\" of connector 'kafka': \"127.0.0.1:99999\" (expected host:port[,host:port])".to_string(),
        ),
        (
            format!("CREATE STREAM e ({COLUMNS}) WITH (connector = 'kafka', topic = 'a b', bootstrap_servers = '127.0.0.1:9092')"),
            "22023",
            "invalid value for option \"topic\" of connector 'kafka': \"a b\" (expected 1 to 249 of the characters a-z, A-Z, 0-9, '.', '_' and '-')".to_string(),
        ),
        (
            "CREATE STREAM e (s text) WITH (connector = 'mqtt', url = 'tcp://127.0.0.1:1883', topic = 'a/#/b')".to_string(),
            "22023",
            "invalid value for option \"topic\" of connector 'mqtt': \"a/#/b\" (expected a topic filter: levels separated by /, + for a whole level, # for the rest at the end)".to_string(),
        ),
        (
            "CREATE STREAM e (s text) WITH (connector = 'mqtt', url = 'tcp://127.0.0.1:1883', topic = 'a/b+')".to_string(),
            "22023",
            "invalid value for option \"topic\" of connector 'mqtt': \"a/b+\" (expected a topic filter: levels separated by /, + for a whole level, # for the rest at the end)".to_string(),
        ),
        // A scheme the client does not speak (TLS, websockets) was taken for part of
        // the host name, which then failed to resolve on every retry.
        (
            "CREATE STREAM e (s text) WITH (connector = 'mqtt', url = 'ssl://127.0.0.1:8883', topic = 'a')".to_string(),
            "22023",
            "invalid value for option \"url\" of connector 'mqtt': \"ssl://127.0.0.1:8883\" (expected tcp://host:port or mqtt://host:port)".to_string(),
        ),
        (
            "CREATE STREAM e (a int); ALTER STREAM e PAUSE".to_string(),
            "55000",
            "stream \"e\" has no source to pause: declare one with CREATE STREAM ... WITH (connector = ...)".to_string(),
        ),
    ] {
        let e = c.batch_execute(&sql).await.expect_err(&sql);
        assert_eq!(sqlstate(&e), state, "{sql}");
        assert_eq!(e.as_db_error().unwrap().message(), message, "{sql}");
    }
    // Only superusers declare connectors.
    exec(&c, "CREATE ROLE bob LOGIN").await;
    let bob = common::connect_as(port, "bob", "").await.unwrap();
    let e = bob
        .batch_execute(&format!(
            "CREATE STREAM b ({COLUMNS}) WITH (connector = 'file', path = '{path}')"
        ))
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501");
}

/// Backpressure, not loss: with the memory budget nearly spent (rows queued for a cursor
/// nobody reads), the source stops reading (`throttled`); once the cursor is read it goes
/// on, and every line arrives once.
#[tokio::test]
async fn a_spent_memory_budget_throttles_the_source_without_loss() {
    let mut config = tcq::engine::Config::default();
    config.limits.memory_limit_bytes = 4 << 20;
    config.limits.output_queue_bytes = 256 << 20;
    config.limits.output_stall_timeout = std::time::Duration::from_secs(600);
    let port = common::start_server_with(config);
    let c = connect(port).await;
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..200_000)
        .map(|i| format!("{},{i},ORIGIN-{i:08}\n", 978_307_200 + i))
        .collect();
    write(dir.path(), "a.csv", &lines);
    exec(
        &c,
        &format!(
            "CREATE STREAM b ({COLUMNS}) WITH (connector = 'file', path = '{}', format = 'csv', \
             timestamp_format = 'epoch_s', paused = true)",
            dir.path().display()
        ),
    )
    .await;
    exec(
        &c,
        "BEGIN; DECLARE q CURSOR FOR SELECT delay FROM b; ALTER STREAM b RESUME",
    )
    .await;
    let r = wait_source(&c, "b", 30, |r| r.state == "throttled").await;
    assert!(r.messages < 200_000, "{r:?}");
    let mut got: Vec<i64> = Vec::new();
    while got.len() < 200_000 {
        let rows = fetch(&c, "q", 50_000, 10).await;
        assert!(
            !rows.is_empty(),
            "stuck at {} rows: {:?}",
            got.len(),
            source_row(&c, "b").await
        );
        got.extend(rows.iter().map(|r| r[0].parse::<i64>().unwrap()));
    }
    assert_eq!(got, (0..200_000).collect::<Vec<_>>());
    let r = wait_source(&c, "b", 10, |r| r.state == "running").await;
    assert_eq!((r.messages, r.bad_messages), (200_000, 0));
    exec(&c, "COMMIT").await;
}

/// `on_error = 'stop'`: the source stops at a bad line (state `failed`, the line kept);
/// RESUME goes on past it.
#[tokio::test]
async fn on_error_stop_waits_for_resume_and_resume_skips_the_bad_line() {
    let c = connect(common::start_server()).await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.csv",
        "2001-01-01 00:00:01,1,A\n2001-01-01 00:00:02,two,B\n2001-01-01 00:00:03,3,C\n",
    );
    exec(
        &c,
        &format!(
            "CREATE STREAM s ({COLUMNS}) WITH (connector = 'file', path = '{}', format = 'csv', \
             on_error = 'stop', paused = true)",
            dir.path().display()
        ),
    )
    .await;
    exec(
        &c,
        "BEGIN; DECLARE q CURSOR FOR SELECT delay FROM s; ALTER STREAM s RESUME",
    )
    .await;
    let r = wait_source(&c, "s", 20, |r| r.state == "failed").await;
    assert_eq!((r.messages, r.bad_messages), (1, 1));
    assert_eq!(
        r.last_error.as_deref(),
        Some("file a.csv line 2: column \"delay\": invalid input syntax for type integer: \"two\"")
    );
    assert_eq!(fetch(&c, "q", 5, 1).await, common::table(&[&["1"]]));
    exec(&c, "ALTER STREAM s RESUME").await;
    assert_eq!(fetch(&c, "q", 1, 10).await, common::table(&[&["3"]]));
    let r = wait_source(&c, "s", 20, |r| r.state == "running").await;
    assert_eq!((r.messages, r.bad_messages), (2, 1));
    exec(&c, "COMMIT").await;
}

/// A finished file whose last record opens a quoted field and never closes it: that
/// record is a bad message ("unterminated CSV quoted field", as COPY says), not a row
/// whose last field swallowed the lines after the quote.
#[tokio::test]
async fn an_unterminated_quote_at_the_end_of_a_file_is_a_bad_message() {
    let c = connect(common::start_server()).await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.csv",
        "2001-01-01 00:00:01,1,A\n2001-01-01 00:00:02,2,\"B\n2001-01-01 00:00:03,3,C\n",
    );
    write(dir.path(), "b.csv", "2001-01-01 00:00:04,4,D\n");
    exec(
        &c,
        &format!(
            "CREATE STREAM s ({COLUMNS}) WITH (connector = 'file', path = '{}', format = 'csv', \
             paused = true)",
            dir.path().display()
        ),
    )
    .await;
    exec(
        &c,
        "BEGIN; DECLARE q CURSOR FOR SELECT delay, origin FROM s; ALTER STREAM s RESUME",
    )
    .await;
    let r = wait_source(&c, "s", 20, |r| r.messages == 2).await;
    assert_eq!(r.bad_messages, 1);
    assert_eq!(
        r.last_error.as_deref(),
        Some("file a.csv line 2: unterminated CSV quoted field")
    );
    assert_eq!(
        fetch(&c, "q", 5, 2).await,
        common::table(&[&["1", "A"], &["4", "D"]])
    );
    exec(&c, "COMMIT").await;
}

/// A line longer than the source's 1 MiB read chunk: read whole, and neither it nor the
/// lines after it are skipped when a later file exists (they were, silently).
#[tokio::test]
async fn a_line_longer_than_a_read_chunk_is_read_not_skipped() {
    let c = connect(common::start_server()).await;
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(3 << 20);
    write(
        dir.path(),
        "a.json",
        &format!(
            "{{\"ts\": \"2001-01-01 00:00:01\", \"delay\": 1, \"origin\": \"{long}\"}}\n\
             {{\"ts\": \"2001-01-01 00:00:02\", \"delay\": 2, \"origin\": \"B\"}}\n"
        ),
    );
    write(
        dir.path(),
        "b.json",
        "{\"ts\": \"2001-01-01 00:00:03\", \"delay\": 3, \"origin\": \"C\"}\n",
    );
    exec(
        &c,
        &format!(
            "CREATE STREAM s ({COLUMNS}) WITH (connector = 'file', path = '{}', format = 'json', \
             paused = true)",
            dir.path().display()
        ),
    )
    .await;
    exec(
        &c,
        "BEGIN; DECLARE q CURSOR FOR SELECT delay, length(origin) FROM s; ALTER STREAM s RESUME",
    )
    .await;
    let r = wait_source(&c, "s", 20, |r| r.messages == 3).await;
    assert_eq!(r.bad_messages, 0);
    assert_eq!(
        fetch(&c, "q", 5, 2).await,
        common::table(&[&["1", &(3 << 20).to_string()], &["2", "1"], &["3", "1"]])
    );
    exec(&c, "COMMIT").await;
}

/// An unarchived stream's source keeps its position beside the catalog (at most a second
/// old): after a SIGKILL and restart it goes on after what it had read, not from the start.
#[tokio::test]
async fn an_unarchived_streams_source_resumes_from_its_saved_position() {
    let data = common::data_dir();
    let input = tempfile::tempdir().unwrap();
    let lines = |from: i64, to: i64| {
        (from..to)
            .map(|i| format!("{},{i},X\n", 978_307_200 + i))
            .collect::<String>()
    };
    write(input.path(), "1.csv", &lines(0, 1000));
    let args = ["--data-dir", data.path().to_str().unwrap()];
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM u ({COLUMNS}) WITH (connector = 'file', path = '{}', format = 'csv', \
             timestamp_format = 'epoch_s')",
            input.path().display()
        ),
    )
    .await;
    wait_source(&c, "u", 20, |r| r.messages == 1000).await;
    // The position is saved at most once a second.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    wait_source(&c, "u", 20, |r| r.messages == 1000).await;
    drop(c);
    drop(server);
    write(input.path(), "2.csv", &lines(1000, 1500));
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    let r = wait_source(&c, "u", 20, |r| r.lag == Some(0) && r.messages > 0).await;
    assert_eq!(
        r.messages, 500,
        "only what came after the saved position: {r:?}"
    );
}
