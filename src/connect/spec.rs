//! A stream's source as declared: `CREATE STREAM s (...) WITH (connector = '...', ...)`,
//! checked against the stream's columns when the statement is bound.
//!
//! Options common to every connector: `format` (`json`, `csv`; `parquet` for files),
//! `on_error` (`skip`, the default, or `stop`), `timestamp_format` (how the
//! TIMESTAMPCOLUMN is written: `iso8601`, the default, or `epoch_s`, `epoch_ms`,
//! `epoch_us` for numbers since 1970-01-01 UTC), `header` and `delimiter` (CSV), `paused`
//! (`true`: created paused, as after `ALTER STREAM ... PAUSE`). The connectors' own
//! options are on [`KafkaSpec`], [`MqttSpec`], [`NatsSpec`] and [`FileSpec`].

use std::path::PathBuf;

use super::options::WithOptions;
use crate::error::{Error, Result};
use crate::types::{Column, DataType};

/// A declared source: its connector, how its messages are decoded, what a bad message
/// does, and the options as written (which the catalog stores to declare it again).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SourceSpec {
    /// Where the messages come from.
    pub(crate) connector: ConnectorSpec,
    /// How a message becomes rows.
    pub(crate) format: FormatSpec,
    /// What a message that does not decode does.
    pub(crate) on_error: OnError,
    /// Declared paused (`paused = true`; `ALTER STREAM ... PAUSE` sets it).
    pub(crate) paused: bool,
    /// Every option as written, `paused` left out (secrets included: only the catalog file
    /// holds them; see `options::display` for what is shown).
    pub(crate) options: Vec<(String, String)>,
}

/// A connector and its settings.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ConnectorSpec {
    /// `connector = 'kafka'`.
    Kafka(KafkaSpec),
    /// `connector = 'mqtt'`.
    Mqtt(MqttSpec),
    /// `connector = 'nats'`.
    Nats(NatsSpec),
    /// `connector = 'file'`.
    File(FileSpec),
}

impl ConnectorSpec {
    /// The connector's name as written in `connector = '...'`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            ConnectorSpec::Kafka(_) => "kafka",
            ConnectorSpec::Mqtt(_) => "mqtt",
            ConnectorSpec::Nats(_) => "nats",
            ConnectorSpec::File(_) => "file",
        }
    }
}

/// Where a Kafka source starts when it has no position of its own yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StartAt {
    /// Each partition's first record.
    Earliest,
    /// Each partition's end (its high watermark) when the source starts.
    Latest,
    /// The first record of each partition whose timestamp is at or after this instant,
    /// microseconds since the Unix epoch.
    Time(i64),
    /// The offsets committed to the source's consumer group (`group_id`); a partition
    /// without one from its first record.
    Group,
}

/// SASL authentication to a Kafka broker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sasl {
    /// `plain`, `scram-sha-256` or `scram-sha-512`.
    pub(crate) mechanism: &'static str,
    /// The user.
    pub(crate) username: String,
    /// The password (never shown).
    pub(crate) password: String,
}

/// `connector = 'kafka'`: `topic`, `bootstrap_servers` (`host:port[,host:port]`; also
/// `properties.bootstrap.server`), `start` (`earliest`, the default, `latest`, `group`, or
/// a timestamp), `group_id` (also `properties.group.id`), `sasl_mechanism`,
/// `sasl_username`, `sasl_password`, `topic_column`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KafkaSpec {
    /// Brokers to bootstrap from.
    pub(crate) bootstrap: Vec<String>,
    /// The topic; every partition of it is read.
    pub(crate) topic: String,
    /// Where to start without a position.
    pub(crate) start: StartAt,
    /// SASL, when the broker asks for it.
    pub(crate) sasl: Option<Sasl>,
    /// The consumer group the durable offsets are committed to (`group_id`), if any.
    pub(crate) group_id: Option<String>,
}

/// `connector = 'mqtt'`: `url` (`tcp://host:port`), `topic` (a filter: `+` and `#`
/// wildcards), `qos` (0 or 1, default 1), `client_id` (default `tcq-<stream>`),
/// `username`, `password`, `topic_column`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MqttSpec {
    /// Broker host.
    pub(crate) host: String,
    /// Broker port.
    pub(crate) port: u16,
    /// The topic filter subscribed to.
    pub(crate) topic: String,
    /// Quality of service of the subscription: 0 or 1.
    pub(crate) qos: u8,
    /// The session's client id (the broker keeps a QoS 1 session's messages for it).
    pub(crate) client_id: Option<String>,
    /// User and password, when the broker asks for them.
    pub(crate) credentials: Option<(String, String)>,
}

impl MqttSpec {
    /// The client id the source of stream `stream` connects with: `client_id`, or
    /// `tcq-<stream>`.
    pub(crate) fn effective_client_id(&self, stream: &str) -> String {
        self.client_id
            .clone()
            .unwrap_or_else(|| format!("tcq-{stream}"))
    }
}

/// Refuse a new MQTT source of stream `stream` whose broker and client id are those of the
/// source of another stream in `others` (name and source): a broker closes a client's
/// connection when another connects with its id, so the two would take turns for good,
/// each `retrying`, and share the session's messages. Errors: 42710 naming the other
/// stream.
pub(crate) fn check_mqtt_client_id<'a>(
    spec: &SourceSpec,
    stream: &str,
    others: impl IntoIterator<Item = (&'a str, &'a SourceSpec)>,
) -> Result<()> {
    let ConnectorSpec::Mqtt(m) = &spec.connector else {
        return Ok(());
    };
    let id = m.effective_client_id(stream);
    for (other, o) in others {
        if let ConnectorSpec::Mqtt(n) = &o.connector {
            if n.host == m.host && n.port == m.port && n.effective_client_id(other) == id {
                return Err(Error::DuplicateObject(format!(
                    "MQTT client id \"{id}\" is already used by the source of stream \"{other}\" on {}:{}: give this one another client_id",
                    m.host, m.port
                )));
            }
        }
    }
    Ok(())
}

/// How a NATS source authenticates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NatsAuth {
    /// No credentials.
    None,
    /// `user` and `password` (the password never shown).
    UserPassword(String, String),
    /// `token` (never shown).
    Token(String),
}

/// `connector = 'nats'`: `url` (`nats://host:port[,nats://host:port]`), `subject` (NATS
/// wildcards: `*` one token, `>` the rest), `queue_group` (share the subject's messages
/// with the group's other members), `user` and `password` or `token`, `subject_column`.
/// A core NATS subscription: at most once (JetStream consumers are not supported).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NatsSpec {
    /// The servers, as written (`nats://` optional).
    pub(crate) url: String,
    /// The subject subscribed to.
    pub(crate) subject: String,
    /// The queue group joined, if any.
    pub(crate) queue_group: Option<String>,
    /// Credentials, when the server asks for them.
    pub(crate) auth: NatsAuth,
}

/// `connector = 'file'`: `path` (a directory), `pattern` (a file name glob, `*` and `?`;
/// default every file).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FileSpec {
    /// The directory read.
    pub(crate) dir: PathBuf,
    /// Only files whose names match (`*.csv`).
    pub(crate) pattern: Option<String>,
}

/// How messages are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FormatKind {
    /// One JSON object a message (a line of NDJSON in a file or an HTTP body).
    Json,
    /// CSV records, fields in column order.
    Csv,
    /// Parquet files, columns by name (files only).
    Parquet,
}

/// How the TIMESTAMPCOLUMN's values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimeFormat {
    /// ISO 8601 text (`2001-01-01T10:00:00Z`, `2001-01-01 10:00:00`), or any timestamp
    /// PostgreSQL reads.
    Iso8601,
    /// Seconds since 1970-01-01 UTC (fractions allowed).
    EpochSeconds,
    /// Milliseconds since 1970-01-01 UTC.
    EpochMillis,
    /// Microseconds since 1970-01-01 UTC.
    EpochMicros,
}

/// How a message becomes rows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FormatSpec {
    /// JSON, CSV or Parquet.
    pub(crate) kind: FormatKind,
    /// CSV: the first line of each file is a header and skipped.
    pub(crate) header: bool,
    /// CSV: the field delimiter.
    pub(crate) delimiter: u8,
    /// How the TIMESTAMPCOLUMN is written.
    pub(crate) time: TimeFormat,
    /// The text column filled with the message's topic, if any.
    pub(crate) topic_column: Option<usize>,
}

impl Default for FormatSpec {
    fn default() -> FormatSpec {
        FormatSpec {
            kind: FormatKind::Json,
            header: false,
            delimiter: b',',
            time: TimeFormat::Iso8601,
            topic_column: None,
        }
    }
}

/// What a message that does not decode does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnError {
    /// Count it, keep it as the last error, go on.
    Skip,
    /// Stop the source (state `failed`) until `ALTER STREAM ... RESUME`.
    Stop,
}

/// The source that `options` (a CREATE STREAM's `WITH` list, slack and retention taken
/// out) declare on a stream with `columns`; `None` when they name no connector. Errors:
/// 42704 for an unknown connector, 22023 for an unknown, missing or bad option.
pub(crate) fn source_spec(
    options: &[(String, String)],
    columns: &[Column],
) -> Result<Option<SourceSpec>> {
    if options.is_empty() {
        return Ok(None);
    }
    let Some(connector) = options
        .iter()
        .find(|(k, _)| k == "connector")
        .map(|(_, v)| v)
    else {
        let names: Vec<&str> = options.iter().map(|(k, _)| k.as_str()).collect();
        return Err(Error::InvalidParameterValue(format!(
            "unrecognized stream option \"{}\": a stream's options are slack, retention and, for a source, connector and its own",
            names[0]
        )));
    };
    let connector = connector.to_ascii_lowercase();
    let context = format!("connector '{connector}'");
    let mut o = WithOptions::new(context, options);
    o.get("connector");
    let connector = match connector.as_str() {
        "kafka" => ConnectorSpec::Kafka(kafka(&mut o)?),
        "mqtt" => ConnectorSpec::Mqtt(mqtt(&mut o)?),
        "nats" => ConnectorSpec::Nats(nats(&mut o)?),
        "file" => ConnectorSpec::File(file(&mut o)?),
        other => {
            return Err(Error::UndefinedObject(format!(
            "connector \"{other}\" does not exist; the connectors are kafka, mqtt, nats and file"
        )))
        }
    };
    let format = format(&mut o, &connector, columns)?;
    let on_error = match o.one_of("on_error", &["skip", "stop"], "skip")? {
        "stop" => OnError::Stop,
        _ => OnError::Skip,
    };
    let paused = o.bool("paused", false)?;
    o.finish()?;
    Ok(Some(SourceSpec {
        connector,
        format,
        on_error,
        paused,
        options: options
            .iter()
            .filter(|(k, _)| k != "paused")
            .cloned()
            .collect(),
    }))
}

fn kafka(o: &mut WithOptions) -> Result<KafkaSpec> {
    let topic = o.required("topic")?.to_string();
    let (bootstrap, sasl) = kafka_brokers(o)?;
    let start = match o.get("start").map(str::trim) {
        None => StartAt::Earliest,
        Some(s) if s.eq_ignore_ascii_case("earliest") => StartAt::Earliest,
        Some(s) if s.eq_ignore_ascii_case("latest") => StartAt::Latest,
        Some(s) if s.eq_ignore_ascii_case("group") => StartAt::Group,
        Some(s) => StartAt::Time(crate::time::parse_timestamp(s).map_err(|_| {
            o.invalid(
                "start",
                s,
                "expected earliest, latest, group or a timestamp",
            )
        })?),
    };
    let group_id = o
        .get_any(&["group_id", "properties.group.id"])
        .map(str::to_string);
    match &group_id {
        Some(g) if g.is_empty() => {
            return Err(o.invalid("group_id", g, "a consumer group id is not empty"))
        }
        None if start == StartAt::Group => {
            return Err(Error::InvalidParameterValue(
                "start = 'group' needs group_id: the consumer group whose offsets to start from"
                    .into(),
            ))
        }
        _ => {}
    }
    Ok(KafkaSpec {
        bootstrap,
        topic,
        start,
        sasl,
        group_id,
    })
}

/// The brokers and SASL settings of a Kafka source or sink: `bootstrap_servers` (or
/// `properties.bootstrap.server`), `sasl_mechanism`, `sasl_username`, `sasl_password`.
/// Errors: 22023 for a missing or bad value.
pub(crate) fn kafka_brokers(o: &mut WithOptions) -> Result<(Vec<String>, Option<Sasl>)> {
    // Missing: 22023 in the words of the source's or sink's other option errors.
    let servers = match o.get_any(&["bootstrap_servers", "properties.bootstrap.server"]) {
        Some(s) => s,
        None => o.required("bootstrap_servers")?,
    };
    let bootstrap: Vec<String> = servers
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if bootstrap.is_empty() || bootstrap.iter().any(|s| !s.contains(':')) {
        return Err(o.invalid(
            "bootstrap_servers",
            servers,
            "expected host:port[,host:port]",
        ));
    }
    let mechanism = o.one_of(
        "sasl_mechanism",
        &["plain", "scram-sha-256", "scram-sha-512"],
        "",
    )?;
    let username = o.get("sasl_username");
    let password = o.get("sasl_password");
    let sasl = match (mechanism, username, password) {
        ("", None, None) => None,
        (m, Some(u), Some(p)) if !m.is_empty() => Some(Sasl {
            mechanism: m,
            username: u.to_string(),
            password: p.to_string(),
        }),
        _ => {
            return Err(Error::InvalidParameterValue(
                "SASL needs sasl_mechanism, sasl_username and sasl_password together".into(),
            ))
        }
    };
    Ok((bootstrap, sasl))
}

fn mqtt(o: &mut WithOptions) -> Result<MqttSpec> {
    let url = o.required("url")?;
    let rest = url
        .strip_prefix("tcp://")
        .or_else(|| url.strip_prefix("mqtt://"))
        .unwrap_or(url);
    if rest.contains("://") {
        // ssl://, mqtts://, ws://, http://...: no TLS nor websockets (the host would be
        // looked up as `scheme://host`, and fail as a name that does not resolve).
        return Err(o.invalid("url", url, "expected tcp://host:port or mqtt://host:port"));
    }
    let (host, port) = match rest.trim_end_matches('/').rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().ok()),
        None => (rest, Some(1883)),
    };
    let (Some(port), false) = (port, host.is_empty()) else {
        return Err(o.invalid("url", url, "expected tcp://host:port or mqtt://host:port"));
    };
    let topic = o.required("topic")?.to_string();
    if topic.is_empty() {
        return Err(o.invalid("topic", &topic, "a topic filter is not empty"));
    }
    let qos = o.one_of("qos", &["1", "0", "at_least_once", "at_most_once"], "1")?;
    let client_id = o.get("client_id").map(str::to_string);
    let credentials = match (o.get("username"), o.get("password")) {
        (None, None) => None,
        (Some(u), p) => Some((u.to_string(), p.unwrap_or("").to_string())),
        (None, Some(_)) => {
            return Err(Error::InvalidParameterValue(
                "option \"password\" of connector 'mqtt' needs \"username\"".into(),
            ))
        }
    };
    Ok(MqttSpec {
        host: host.to_string(),
        port,
        topic,
        qos: if matches!(qos, "0" | "at_most_once") {
            0
        } else {
            1
        },
        client_id,
        credentials,
    })
}

/// Kafka options of a new source or sink that no broker would ever take: a bootstrap
/// address whose port is not 1 to 65535, or a topic name Kafka refuses. Errors: the
/// option, its value and what was expected, for the caller's 22023.
pub(crate) fn kafka_declared(
    bootstrap: &[String],
    topic: &str,
) -> std::result::Result<(), (&'static str, String, &'static str)> {
    let host_port = |s: &String| match s.rsplit_once(':') {
        Some((h, p)) => !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p != 0),
        None => false,
    };
    if !bootstrap.iter().all(host_port) {
        let servers = bootstrap.join(",");
        return Err((
            "bootstrap_servers",
            servers,
            "expected host:port[,host:port]",
        ));
    }
    let legal = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let t = topic;
    if t.is_empty() || t.len() > 249 || t == "." || t == ".." || !t.chars().all(legal) {
        return Err((
            "topic",
            t.to_string(),
            "expected 1 to 249 of the characters a-z, A-Z, 0-9, '.', '_' and '-'",
        ));
    }
    Ok(())
}

/// Refuse a new source whose options no broker or directory would ever take (a Kafka port
/// over 65535, a topic name Kafka refuses, an MQTT filter with `#` before the last level or
/// `+` inside one, an empty path): declared, it would only retry for good. Checked when a
/// stream is created, not when the catalog is read back, so a data directory that holds
/// such a stream still opens. Errors: 22023; 42602 for a relative file source path.
pub(crate) fn check_declared(spec: &SourceSpec) -> Result<()> {
    let bad = |c: &str, name: &str, value: &str, why: &str| {
        Err(Error::InvalidParameterValue(format!(
            "invalid value for option \"{name}\" of connector '{c}': \"{value}\" ({why})"
        )))
    };
    match &spec.connector {
        ConnectorSpec::Kafka(k) => {
            if let Err((name, value, why)) = kafka_declared(&k.bootstrap, &k.topic) {
                return bad("kafka", name, &value, why);
            }
        }
        ConnectorSpec::Mqtt(m) if !mqtt_filter_ok(&m.topic) => {
            return bad(
                "mqtt",
                "topic",
                &m.topic,
                "expected a topic filter: levels separated by /, + for a whole level, # for the rest at the end",
            );
        }
        ConnectorSpec::File(f) if f.dir.as_os_str().is_empty() => {
            return bad("file", "path", "", "expected the path of a directory");
        }
        // Relative to the server's working directory, which a restart may change; a file
        // sink and PostgreSQL's COPY TO a file refuse it alike.
        ConnectorSpec::File(f) if !f.dir.is_absolute() => {
            return Err(Error::InvalidName(format!(
                "relative path not allowed for a file source: \"{}\"",
                f.dir.display()
            )));
        }
        _ => {}
    }
    Ok(())
}

/// Whether `filter` is an MQTT topic filter (MQTT 3.1.1, 4.7.1): not empty, no NUL, `+`
/// only as a whole level, `#` only as the whole last level. A broker refuses any other
/// subscription, so the source would retry it for good.
fn mqtt_filter_ok(filter: &str) -> bool {
    let levels: Vec<&str> = filter.split('/').collect();
    !filter.is_empty()
        && !filter.contains('\0')
        && levels.iter().enumerate().all(|(i, l)| {
            (*l == "+" || !l.contains('+'))
                && (*l == "#" && i == levels.len() - 1 || !l.contains('#'))
        })
}

fn nats(o: &mut WithOptions) -> Result<NatsSpec> {
    let url = o.required("url")?;
    let servers: Vec<&str> = url.split(',').map(str::trim).collect();
    for server in &servers {
        let rest = server.strip_prefix("nats://").unwrap_or(server);
        if rest.contains('@') {
            return Err(o.invalid(
                "url",
                "...",
                "credentials go in the options user and password, or token, never in the url",
            ));
        }
        if rest.is_empty() || server.parse::<async_nats::ServerAddr>().is_err() {
            return Err(o.invalid("url", url, "expected nats://host:port[,nats://host:port]"));
        }
    }
    let subject = o.required("subject")?.to_string();
    let tokens_ok = subject.split('.').enumerate().all(|(i, t)| {
        !t.is_empty()
            && !t.chars().any(char::is_whitespace)
            && (t == "*" || t == ">" || !t.contains(['*', '>']))
            && (t != ">" || i == subject.split('.').count() - 1)
    });
    if !tokens_ok {
        return Err(o.invalid(
            "subject",
            &subject,
            "expected dot-separated tokens, * for one token, > for the rest at the end",
        ));
    }
    if let Some(k) = ["stream", "durable"].into_iter().find(|k| o.has(k)) {
        return Err(Error::FeatureNotSupported(format!(
            "option \"{k}\" of connector 'nats': JetStream consumers are not supported; a nats source is a core NATS subscription (at most once)"
        )));
    }
    let queue_group = o.get("queue_group").map(str::to_string);
    let auth = match (o.get("user"), o.get("password"), o.get("token")) {
        (None, None, None) => NatsAuth::None,
        (Some(u), Some(p), None) => NatsAuth::UserPassword(u.to_string(), p.to_string()),
        (None, None, Some(t)) => NatsAuth::Token(t.to_string()),
        _ => return Err(Error::InvalidParameterValue(
            "connector 'nats' authenticates with user and password together, or with token alone"
                .into(),
        )),
    };
    Ok(NatsSpec {
        url: servers.join(","),
        subject,
        queue_group,
        auth,
    })
}

fn file(o: &mut WithOptions) -> Result<FileSpec> {
    let path = o.required("path")?;
    let pattern = o.get("pattern").map(str::to_string);
    Ok(FileSpec {
        dir: PathBuf::from(path),
        pattern,
    })
}

fn format(o: &mut WithOptions, c: &ConnectorSpec, columns: &[Column]) -> Result<FormatSpec> {
    let allowed: &[&'static str] = match c {
        ConnectorSpec::File(_) => &["json", "csv", "parquet"],
        _ => &["json", "csv"],
    };
    let kind = match o.one_of("format", allowed, "json")? {
        "csv" => FormatKind::Csv,
        "parquet" => FormatKind::Parquet,
        _ => FormatKind::Json,
    };
    let header = o.bool("header", false)?;
    let delimiter = match o.get("delimiter") {
        None => b',',
        Some(d) if d.len() == 1 && d != "\"" && d != "\n" && d != "\r" => d.as_bytes()[0],
        Some(d) => return Err(o.invalid("delimiter", d, "expected one ASCII character")),
    };
    let time = match o.one_of(
        "timestamp_format",
        &["iso8601", "epoch_s", "epoch_ms", "epoch_us"],
        "iso8601",
    )? {
        "epoch_s" => TimeFormat::EpochSeconds,
        "epoch_ms" => TimeFormat::EpochMillis,
        "epoch_us" => TimeFormat::EpochMicros,
        _ => TimeFormat::Iso8601,
    };
    // NATS calls its topics subjects.
    let option = match c {
        ConnectorSpec::Nats(_) => "subject_column",
        _ => "topic_column",
    };
    let topic_column = match (c, o.get(option)) {
        (_, None) => None,
        (ConnectorSpec::File(_), Some(_)) => return Err(Error::InvalidParameterValue(
            "option \"topic_column\" applies to connectors kafka and mqtt (nats: subject_column)"
                .into(),
        )),
        (_, Some(name)) => {
            let i = columns.iter().position(|c| c.name == name).ok_or_else(|| {
                Error::UndefinedColumn(format!("{option} \"{name}\" is no column of the stream"))
            })?;
            if !matches!(columns[i].data_type, DataType::Text | DataType::Varchar(_)) {
                return Err(Error::DatatypeMismatch(format!(
                    "{option} \"{name}\" must be of type text"
                )));
            }
            Some(i)
        }
    };
    Ok(FormatSpec {
        kind,
        header,
        delimiter,
        time,
        topic_column,
    })
}
