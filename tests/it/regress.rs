//! SQL regression tests (pg_regress style): SQL behaviour as data.
//!
//! Every `sql/NAME.sql` runs against a fresh in-process server, over real sockets, with
//! tokio-postgres; its output is compared with `sql/expected/NAME.out`. On a mismatch the
//! test prints expected and actual side by side and leaves the actual output in
//! `target/tmp/regress/NAME.out`.
//!
//! ```text
//! cargo test --test it regress::                          # run every script
//! TCQ_REGRESS_ONLY=windows cargo test --test it regress:: # scripts whose name contains "windows"
//! TCQ_REGRESS_BLESS=1 cargo test --test it regress::      # rewrite the expected files
//! ```
//!
//! The expected files were written by hand from the documented window semantics before the engine
//! existed; blessing is for deliberate changes, after reading the diff.
//!
//! Script language: SQL statements end with `;` at the end of a line; each is sent alone with
//! the simple query protocol, except `COPY ... FROM STDIN` (its data follows, ending with a
//! line `\.`) and `COPY ... TO STDOUT`, which use tokio-postgres' COPY support. Lines that
//! start with `--` are comments. Meta-commands, each on its own line:
//! - `\session NAME`: the following statements run on connection NAME (opened on first use;
//!   the first connection is `main`). Continuous queries need a second session to feed them.
//! - `\async`: the next statement starts in the background on the current session; the runner
//!   goes on once the server has described its result (the query is installed), and
//! - `\await`: prints the background statement's output on the current session.
//!
//! Output format (psql's `-a -A` with `VERBOSITY verbose`, roughly): the script is echoed;
//! rows print as `col|col` lines under a header and a line of the columns' types
//! (`types: int8|numeric`, PostgreSQL's type names) and end with `(N rows)`; NULL prints as an
//! empty string; INSERT and COPY print their command tags; errors print as
//! `ERROR:  SQLSTATE: message` (then `DETAIL:  ...` and `CONTEXT:  ...` when the error has
//! them), notices as
//! `NOTICE:  message`. A statement that does not
//! finish within 10 s is cancelled, which the output says.

use crate::common;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::{AsyncMessage, CancelToken, Client, NoTls, SimpleQueryMessage};

const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_scripts_give_their_expected_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut outputs = Vec::new();
    for script in common::golden::scripts(&root.join("sql")) {
        let name = script.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&script).expect("read script");
        outputs.push((name, run_script(&text).await));
    }
    common::golden::check("regress", &root.join("sql/expected"), &outputs);
}

/// One piece of a script.
#[derive(Debug, PartialEq)]
enum Item {
    /// A comment or blank line, echoed as is.
    Echo(String),
    /// A meta-command line (`\session b`).
    Meta(String),
    /// A statement (its lines as written) and, for COPY FROM STDIN, its data lines.
    Statement {
        text: String,
        copy_data: Option<Vec<String>>,
    },
}

fn parse_script(script: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut lines = script.lines();
    let mut buf: Vec<&str> = Vec::new();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if buf.is_empty() && (trimmed.is_empty() || trimmed.starts_with("--")) {
            items.push(Item::Echo(line.to_string()));
            continue;
        }
        if buf.is_empty() && trimmed.starts_with('\\') {
            items.push(Item::Meta(trimmed.to_string()));
            continue;
        }
        buf.push(line);
        let text = buf.join("\n");
        if !ends_statement(&text) {
            continue;
        }
        buf.clear();
        let copy_data = is_copy_from_stdin(&text).then(|| {
            lines
                .by_ref()
                .take_while(|l| l.trim_end() != "\\.")
                .map(str::to_string)
                .collect()
        });
        items.push(Item::Statement { text, copy_data });
    }
    if !buf.is_empty() {
        items.push(Item::Statement {
            text: buf.join("\n"),
            copy_data: None,
        });
    }
    items
}

/// True if the text's last significant character is a `;` outside quotes and comments.
fn ends_statement(text: &str) -> bool {
    let (mut in_single, mut in_double, mut in_comment) = (false, false, false);
    let mut last_significant = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_comment {
            in_comment = c != '\n';
            continue;
        }
        match c {
            '\'' if !in_double => in_single = !in_single,
            '"' if !in_single => in_double = !in_double,
            '-' if !in_single && !in_double && chars.peek() == Some(&'-') => {
                in_comment = true;
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() {
            last_significant = Some((c, in_single || in_double));
        }
    }
    last_significant == Some((';', false))
}

fn words(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("--").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(" ");
    code.split_whitespace()
        .map(|w| w.trim_end_matches(';').to_ascii_uppercase())
        .collect()
}

fn is_copy_from_stdin(text: &str) -> bool {
    let w = words(text);
    w.first().is_some_and(|f| f == "COPY")
        && w.windows(2).any(|p| p[0] == "FROM" && p[1] == "STDIN")
}

fn is_copy_to_stdout(text: &str) -> bool {
    let w = words(text);
    w.first().is_some_and(|f| f == "COPY") && w.windows(2).any(|p| p[0] == "TO" && p[1] == "STDOUT")
}

/// One client connection of a script.
struct Session {
    client: Arc<Client>,
    cancel: CancelToken,
    notices: mpsc::UnboundedReceiver<String>,
    background: Option<tokio::task::JoinHandle<String>>,
}

async fn connect(port: u16, name: &str) -> Session {
    let (client, mut connection) = tokio_postgres::Config::new()
        .host("127.0.0.1")
        .port(port)
        .user("regress")
        .dbname("regress")
        .application_name(name)
        .connect(NoTls)
        .await
        .expect("connect to the test server");
    let (tx, notices) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notice(n) = message {
                let _ = tx.send(format!("{}:  {}", n.severity(), n.message()));
            }
        }
    });
    let cancel = client.cancel_token();
    Session {
        client: Arc::new(client),
        cancel,
        notices,
        background: None,
    }
}

async fn run_script(script: &str) -> String {
    let port = common::start_server();
    let mut sessions: HashMap<String, Session> = HashMap::new();
    let mut current = "main".to_string();
    sessions.insert(current.clone(), connect(port, "main").await);
    let mut out = String::new();
    let mut next_async = false;
    for item in parse_script(script) {
        match item {
            Item::Echo(line) => writeln!(out, "{line}").unwrap(),
            Item::Meta(line) => {
                writeln!(out, "{line}").unwrap();
                let mut parts = line.split_whitespace();
                match (parts.next(), parts.next()) {
                    (Some("\\session"), Some(name)) => {
                        if !sessions.contains_key(name) {
                            sessions.insert(name.to_string(), connect(port, name).await);
                        }
                        current = name.to_string();
                    }
                    (Some("\\async"), None) => next_async = true,
                    (Some("\\await"), None) => {
                        let session = sessions.get_mut(&current).unwrap();
                        out.push_str(&await_background(session).await);
                    }
                    _ => writeln!(out, "-- unknown meta-command").unwrap(),
                }
            }
            Item::Statement { text, copy_data } => {
                writeln!(out, "{text}").unwrap();
                if let Some(data) = &copy_data {
                    data.iter().for_each(|l| writeln!(out, "{l}").unwrap());
                    writeln!(out, "\\.").unwrap();
                }
                let session = sessions.get_mut(&current).unwrap();
                if session.background.is_some() {
                    writeln!(out, "-- runner: \\await the background statement first").unwrap();
                    continue;
                }
                if std::mem::take(&mut next_async) {
                    out.push_str(&start_background(session, text).await);
                } else {
                    out.push_str(&run_statement(session, &text, copy_data).await);
                }
            }
        }
    }
    for (name, session) in sessions.iter_mut() {
        if session.background.is_some() {
            writeln!(
                out,
                "-- runner: session {name} ended with a statement not awaited"
            )
            .unwrap();
            session.cancel.cancel_query(NoTls).await.ok();
        }
    }
    out
}

fn drain_notices(session: &mut Session) -> String {
    let mut out = String::new();
    while let Ok(notice) = session.notices.try_recv() {
        writeln!(out, "{notice}").unwrap();
    }
    out
}

async fn run_statement(
    session: &mut Session,
    text: &str,
    copy_data: Option<Vec<String>>,
) -> String {
    let client = session.client.clone();
    let sql = text.trim_end().trim_end_matches(';').to_string();
    let work = async move {
        match copy_data {
            Some(data) => copy_in(&client, &sql, data).await,
            None if is_copy_to_stdout(&sql) => copy_out(&client, &sql, None).await,
            None => simple(&client, &sql, None).await,
        }
    };
    let result = with_timeout(session, work).await;
    drain_notices(session) + &result
}

/// Run `work`; past the timeout, cancel it and wait a little more for its (error) output.
async fn with_timeout(
    session: &Session,
    work: impl std::future::Future<Output = String> + Send + 'static,
) -> String {
    let mut task = tokio::spawn(work);
    if let Ok(done) = tokio::time::timeout(STATEMENT_TIMEOUT, &mut task).await {
        return done.unwrap_or_else(|e| format!("-- runner: statement panicked: {e}\n"));
    }
    session.cancel.cancel_query(NoTls).await.ok();
    let note = format!("-- runner: no result within {STATEMENT_TIMEOUT:?}; cancelled\n");
    match tokio::time::timeout(Duration::from_secs(5), task).await {
        Ok(done) => note + &done.unwrap_or_default(),
        Err(_) => note + "-- runner: the cancelled statement did not end\n",
    }
}

async fn start_background(session: &mut Session, text: String) -> String {
    let client = session.client.clone();
    let sql = text.trim_end().trim_end_matches(';').to_string();
    let (started_tx, started) = oneshot::channel();
    session.background = Some(tokio::spawn(async move {
        if is_copy_to_stdout(&sql) {
            copy_out(&client, &sql, Some(started_tx)).await
        } else {
            simple(&client, &sql, Some(started_tx)).await
        }
    }));
    match tokio::time::timeout(STATEMENT_TIMEOUT, started).await {
        Ok(_) => String::new(),
        Err(_) => format!(
            "-- runner: the background statement did not start within {STATEMENT_TIMEOUT:?}\n"
        ),
    }
}

async fn await_background(session: &mut Session) -> String {
    let Some(mut task) = session.background.take() else {
        return "-- runner: no background statement\n".into();
    };
    let result = match tokio::time::timeout(STATEMENT_TIMEOUT, &mut task).await {
        Ok(done) => done.unwrap_or_default(),
        Err(_) => {
            session.cancel.cancel_query(NoTls).await.ok();
            let note = format!("-- runner: no result within {STATEMENT_TIMEOUT:?}; cancelled\n");
            match tokio::time::timeout(Duration::from_secs(5), task).await {
                Ok(done) => note + &done.unwrap_or_default(),
                Err(_) => note + "-- runner: the cancelled statement did not end\n",
            }
        }
    };
    drain_notices(session) + &result
}

fn format_error(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut out = format!(
                "{}:  {}: {}\n",
                db.severity(),
                db.code().code(),
                db.message()
            );
            if let Some(d) = db.detail() {
                out += &format!("DETAIL:  {d}\n");
            }
            if let Some(w) = db.where_() {
                out += &format!("CONTEXT:  {w}\n");
            }
            out
        }
        None => format!("ERROR:  (client) {e}\n"),
    }
}

/// A statement over the simple query protocol; `started` fires at its first message.
async fn simple(client: &Client, sql: &str, started: Option<oneshot::Sender<()>>) -> String {
    let mut started = started;
    let mut out = String::new();
    let stream = match client.simple_query_raw(sql).await {
        Ok(s) => s,
        Err(e) => return format_error(&e),
    };
    futures::pin_mut!(stream);
    let mut described = false;
    // Where the type line goes: right under the header, once the statement has ended.
    let mut types_at = None;
    let mut rows = 0u64;
    while let Some(message) = stream.next().await {
        if let Some(tx) = started.take() {
            let _ = tx.send(());
        }
        match message {
            Ok(SimpleQueryMessage::RowDescription(columns)) => {
                described = true;
                let names: Vec<&str> = columns.iter().map(|c| c.name()).collect();
                writeln!(out, "{}", names.join("|")).unwrap();
                types_at = Some((out.len(), columns.len()));
            }
            Ok(SimpleQueryMessage::Row(row)) => {
                rows += 1;
                let cells: Vec<&str> = (0..row.len()).map(|i| row.get(i).unwrap_or("")).collect();
                writeln!(out, "{}", cells.join("|")).unwrap();
            }
            Ok(SimpleQueryMessage::CommandComplete(n)) => {
                if described {
                    let plural = if rows == 1 { "" } else { "s" };
                    writeln!(out, "({rows} row{plural})").unwrap();
                } else if words(sql).first().is_some_and(|w| w == "INSERT") {
                    writeln!(out, "INSERT 0 {n}").unwrap();
                }
            }
            Ok(_) => {}
            Err(e) => {
                out.push_str(&format_error(&e));
                break;
            }
        }
    }
    if let Some((at, n)) = types_at {
        out.insert_str(at, &column_types(client, sql, n).await);
    }
    out
}

/// The type line printed under a result's header (`types: int8|numeric`), as
/// sqllogictest's type line: the result's column types as the server describes the
/// statement (its RowDescription through Parse/Describe, which binds without running),
/// so two plans that type a column differently cannot both match the expected output.
/// Asked after the statement ended, so a statement that failed to describe in a
/// transaction block cannot change what the statement itself printed.
async fn column_types(client: &Client, sql: &str, n: usize) -> String {
    match client.prepare(sql).await {
        Ok(stmt) if stmt.columns().len() == n => {
            let names: Vec<&str> = stmt.columns().iter().map(|c| c.type_().name()).collect();
            format!("types: {}\n", names.join("|"))
        }
        Ok(_) => "types: (described with another number of columns)\n".into(),
        Err(_) => "types: (not described)\n".into(),
    }
}

async fn copy_in(client: &Client, sql: &str, data: Vec<String>) -> String {
    let sink = match client.copy_in::<_, Bytes>(sql).await {
        Ok(s) => s,
        Err(e) => return format_error(&e),
    };
    futures::pin_mut!(sink);
    let mut payload = data.join("\n");
    if !payload.is_empty() {
        payload.push('\n');
    }
    if let Err(e) = sink.as_mut().send(Bytes::from(payload)).await {
        return format_error(&e);
    }
    match sink.as_mut().finish().await {
        Ok(n) => format!("COPY {n}\n"),
        Err(e) => format_error(&e),
    }
}

async fn copy_out(client: &Client, sql: &str, started: Option<oneshot::Sender<()>>) -> String {
    let stream = match client.copy_out(sql).await {
        Ok(s) => s,
        Err(e) => return format_error(&e),
    };
    if let Some(tx) = started {
        let _ = tx.send(());
    }
    futures::pin_mut!(stream);
    let mut out = String::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(bytes) => out.push_str(&String::from_utf8_lossy(&bytes)),
            Err(e) => {
                out.push_str(&format_error(&e));
                break;
            }
        }
    }
    out
}

#[test]
fn scripts_split_into_statements_comments_and_copy_data() {
    let items = parse_script("-- c\nSELECT 1;\nINSERT INTO s\n  VALUES ('a;b'); -- x\n\\session b\nCOPY s FROM STDIN;\n1\n\\.\n");
    assert_eq!(
        items,
        vec![
            Item::Echo("-- c".into()),
            Item::Statement {
                text: "SELECT 1;".into(),
                copy_data: None
            },
            Item::Statement {
                text: "INSERT INTO s\n  VALUES ('a;b'); -- x".into(),
                copy_data: None
            },
            Item::Meta("\\session b".into()),
            Item::Statement {
                text: "COPY s FROM STDIN;".into(),
                copy_data: Some(vec!["1".into()])
            },
        ]
    );
}

#[test]
fn side_by_side_marks_changed_lines() {
    let diff = common::golden::side_by_side("a\nb\nc\n", "a\nx\nc\n");
    assert!(diff.contains("b") && diff.contains("x"), "{diff}");
}
