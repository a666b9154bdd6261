//! A sink as declared: `CREATE SINK ... WITH (connector = '...', ...)`, checked when the
//! statement is bound.
//!
//! Options of every sink: `connector` (`file`, `http`, `kafka`), `format` (`json`, the default: one
//! JSON object a row; `csv`), `header` (CSV: a header line first in each file or body) and
//! `delimiter` (CSV, one character). The connectors' own options are on [`FileSinkSpec`],
//! [`HttpSinkSpec`] and [`KafkaSinkSpec`]. Errors are those of [`super::super::options`]: 22023 for an
//! unknown, missing or bad option, 42704 for an unknown connector.

use std::path::PathBuf;

use super::super::options::WithOptions;
use super::super::spec::Sasl;
use crate::error::{Error, Result};

/// A declared sink: its connector, its format, and the options as written (which the
/// catalog stores to declare it again; secrets are shown only through
/// `options::display`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SinkSpec {
    /// Where the rows go.
    pub(crate) connector: SinkConnector,
    /// How a row is written.
    pub(crate) format: SinkFormat,
    /// Every option as written.
    pub(crate) options: Vec<(String, String)>,
}

impl SinkSpec {
    /// The connector's name, as written in `connector = '...'`.
    pub(crate) fn connector_name(&self) -> &'static str {
        match self.connector {
            SinkConnector::File(_) => "file",
            SinkConnector::Http(_) => "http",
            SinkConnector::Kafka(_) => "kafka",
        }
    }
}

/// A sink's connector and its settings.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum SinkConnector {
    /// `connector = 'file'`.
    File(FileSinkSpec),
    /// `connector = 'http'` (a webhook).
    Http(HttpSinkSpec),
    /// `connector = 'kafka'`.
    Kafka(KafkaSinkSpec),
}

/// `connector = 'kafka'`: `topic`, `bootstrap_servers` (`host:port[,host:port]`; also
/// `properties.bootstrap.server`), `sasl_mechanism`, `sasl_username`, `sasl_password` (as
/// a Kafka source's), `partitions` (of the topic when the sink creates it; default 1).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KafkaSinkSpec {
    /// Brokers to bootstrap from.
    pub(crate) bootstrap: Vec<String>,
    /// The topic written.
    pub(crate) topic: String,
    /// SASL, when the broker asks for it.
    pub(crate) sasl: Option<Sasl>,
    /// Partitions of the topic if the sink has to create it.
    pub(crate) partitions: i32,
}

/// `connector = 'file'`: `path` (the file rows are appended to; created if missing),
/// `fsync` (`batch`, the default: each batch is fsynced before it counts as written;
/// `off`: left to the operating system), `rotate_bytes` (when a batch would take the file
/// past this size, the file is first renamed to `<path>.<n>`, n = 1, 2, ..., and a new
/// one begun; 0, the default, never rotates).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FileSinkSpec {
    /// The file written.
    pub(crate) path: PathBuf,
    /// fsync each batch.
    pub(crate) fsync: bool,
    /// Rotate before a batch would take the file past this many bytes (`None`: never).
    pub(crate) rotate_bytes: Option<u64>,
}

/// `connector = 'http'`: `url` (`http://host[:port]/path`), `token` (sent as
/// `Authorization: Bearer <token>`; never shown), `timeout_ms` (per request, default
/// 10,000).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HttpSinkSpec {
    /// The URL as written.
    pub(crate) url: String,
    /// Host to connect to.
    pub(crate) host: String,
    /// Port (80 when the URL names none).
    pub(crate) port: u16,
    /// Path and query of the requests (`/` at least).
    pub(crate) path: String,
    /// Bearer token, if any.
    pub(crate) token: Option<String>,
    /// How long one request may take, milliseconds.
    pub(crate) timeout_ms: u64,
}

/// How rows are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SinkFormatKind {
    /// One JSON object per row, one per line (NDJSON).
    Json,
    /// CSV records as PostgreSQL's `COPY ... TO` writes them.
    Csv,
}

/// A sink's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SinkFormat {
    /// JSON or CSV.
    pub(crate) kind: SinkFormatKind,
    /// CSV: a header line (the column names) first in each file or request body.
    pub(crate) header: bool,
    /// CSV: the field delimiter.
    pub(crate) delimiter: u8,
}

/// The sink that `options` (a CREATE SINK's `WITH` list) declare. Errors: 22023 for a
/// missing connector or an unknown, missing or bad option, 42704 for an unknown connector.
pub(crate) fn sink_spec(options: &[(String, String)]) -> Result<SinkSpec> {
    let Some(connector) = options
        .iter()
        .find(|(k, _)| k == "connector")
        .map(|(_, v)| v.to_ascii_lowercase())
    else {
        return Err(Error::InvalidParameterValue(
            "option \"connector\" is required for a sink: WITH (connector = 'file' | 'http' | 'kafka', ...)"
                .into(),
        ));
    };
    let mut o = WithOptions::new(format!("sink connector '{connector}'"), options);
    o.get("connector");
    let connector = match connector.as_str() {
        "file" => SinkConnector::File(file(&mut o)?),
        "http" => SinkConnector::Http(http(&mut o)?),
        "kafka" => SinkConnector::Kafka(kafka(&mut o)?),
        other => {
            return Err(Error::UndefinedObject(format!(
                "sink connector \"{other}\" does not exist; the sink connectors are file, http and kafka"
            )))
        }
    };
    let format = format(&mut o)?;
    o.finish()?;
    Ok(SinkSpec {
        connector,
        format,
        options: options.to_vec(),
    })
}

/// What a new sink's options must be beyond their syntax, checked at CREATE SINK only (a
/// sink read back from the catalog keeps retrying as before), as a new source's are: a
/// file sink's path (see [`check_new_file_path`]); a Kafka sink's bootstrap ports and
/// topic name (22023), which no broker would ever take.
pub(crate) fn check_new(connector: &SinkConnector) -> Result<()> {
    match connector {
        SinkConnector::File(f) => check_new_file_path(&f.path),
        SinkConnector::Kafka(k) => super::super::spec::kafka_declared(&k.bootstrap, &k.topic)
            .map_err(|(name, value, why)| {
                Error::InvalidParameterValue(format!(
                    "invalid value for option \"{name}\" of sink connector 'kafka': \"{value}\" ({why})"
                ))
            }),
        SinkConnector::Http(_) => Ok(()),
    }
}

/// What a new file sink's path must be, checked at CREATE SINK only (a sink read back
/// from the catalog keeps retrying as before): absolute (42602, as PostgreSQL's COPY TO a
/// file), in a directory that exists (58P01), and not itself a directory (22023).
pub(crate) fn check_new_file_path(path: &std::path::Path) -> Result<()> {
    let shown = path.display();
    if !path.is_absolute() {
        return Err(Error::InvalidName(format!(
            "relative path not allowed for a file sink: \"{shown}\""
        )));
    }
    if path.is_dir() {
        return Err(Error::InvalidParameterValue(format!(
            "invalid value for option \"path\" of sink connector 'file': \"{shown}\" is a directory"
        )));
    }
    match path.parent() {
        Some(dir) if !dir.is_dir() => Err(Error::UndefinedFile(format!(
            "could not open file \"{shown}\" for writing: directory \"{}\" does not exist",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

fn file(o: &mut WithOptions) -> Result<FileSinkSpec> {
    let path = o.required("path")?;
    if path.is_empty() || path.ends_with('/') {
        return Err(o.invalid("path", path, "expected the path of a file"));
    }
    let fsync = o.one_of("fsync", &["batch", "off"], "batch")? == "batch";
    let rotate = o.number("rotate_bytes", 0, 0, u64::MAX / 2)?;
    if rotate != 0 && rotate < 1024 {
        return Err(o.invalid(
            "rotate_bytes",
            &rotate.to_string(),
            "expected 0 (never) or at least 1024",
        ));
    }
    Ok(FileSinkSpec {
        path: PathBuf::from(path),
        fsync,
        rotate_bytes: (rotate > 0).then_some(rotate),
    })
}

fn http(o: &mut WithOptions) -> Result<HttpSinkSpec> {
    let url = o.required("url")?;
    // A URL with credentials in it is refused without being repeated.
    let shown = if url.contains('@') {
        super::super::options::MASK
    } else {
        url
    };
    let (host, port, path) = parse_url(url).map_err(|why| o.invalid("url", shown, why))?;
    let token = o.get("token").map(str::to_string);
    let timeout_ms = o.number("timeout_ms", 10_000, 100, 600_000)?;
    Ok(HttpSinkSpec {
        url: url.to_string(),
        host,
        port,
        path,
        token,
        timeout_ms,
    })
}

/// `http://host[:port][/path]` as (host, port, path). Errors: why it is no such URL.
fn parse_url(url: &str) -> std::result::Result<(String, u16, String), &'static str> {
    let rest = match url.get(..8) {
        Some(s) if s.eq_ignore_ascii_case("https://") => {
            return Err("https is not supported yet: use http:// (behind a TLS proxy if needed)")
        }
        _ => url
            .get(..7)
            .filter(|s| s.eq_ignore_ascii_case("http://"))
            .map(|_| &url[7..])
            .ok_or("expected http://host[:port]/path")?,
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    if authority.contains('@') {
        return Err("credentials do not belong in the URL: give them as token");
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => {
            (h, p.parse::<u16>().map_err(|_| "expected a port number")?)
        }
        _ => (authority, 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || path.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("expected http://host[:port]/path");
    }
    Ok((host.to_string(), port, path))
}

fn kafka(o: &mut WithOptions) -> Result<KafkaSinkSpec> {
    let topic = o.required("topic")?.to_string();
    let (bootstrap, sasl) = super::super::spec::kafka_brokers(o)?;
    let partitions = o.number("partitions", 1, 1, 10_000)? as i32;
    Ok(KafkaSinkSpec {
        bootstrap,
        topic,
        sasl,
        partitions,
    })
}

fn format(o: &mut WithOptions) -> Result<SinkFormat> {
    let kind = match o.one_of("format", &["json", "csv"], "json")? {
        "csv" => SinkFormatKind::Csv,
        _ => SinkFormatKind::Json,
    };
    let header = o.bool("header", false)?;
    let delimiter = match o.get("delimiter") {
        None => b',',
        Some(d) if d.len() == 1 && !matches!(d, "\"" | "\n" | "\r") => d.as_bytes()[0],
        Some(d) => return Err(o.invalid("delimiter", d, "expected one ASCII character")),
    };
    if kind == SinkFormatKind::Json && (header || delimiter != b',') {
        return Err(Error::InvalidParameterValue(
            "options \"header\" and \"delimiter\" apply to format 'csv'".into(),
        ));
    }
    Ok(SinkFormat {
        kind,
        header,
        delimiter,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(v: &[(&str, &str)]) -> Result<SinkSpec> {
        let items: Vec<(String, String)> = v
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        sink_spec(&items)
    }

    fn state(e: Error) -> &'static str {
        crate::server::sqlstate(&e)
    }

    #[test]
    fn urls_are_read_and_bad_ones_refused() {
        assert_eq!(
            parse_url("http://127.0.0.1:8080/hook?x=1").unwrap(),
            ("127.0.0.1".into(), 8080, "/hook?x=1".into())
        );
        assert_eq!(
            parse_url("HTTP://example.com").unwrap(),
            ("example.com".into(), 80, "/".into())
        );
        assert_eq!(
            parse_url("http://[::1]:9/a").unwrap(),
            ("::1".into(), 9, "/a".into())
        );
        assert!(parse_url("https://example.com/").is_err());
        assert!(parse_url("http://user:pw@example.com/").is_err());
        assert!(parse_url("ftp://example.com/").is_err());
        assert!(parse_url("http://example.com:x/").is_err());
    }

    #[test]
    fn options_are_checked_with_postgres_sqlstates() {
        let s = spec(&[("connector", "file"), ("path", "/tmp/x"), ("format", "csv")]).unwrap();
        assert_eq!(s.format.kind, SinkFormatKind::Csv);
        assert_eq!(state(spec(&[("path", "/tmp/x")]).unwrap_err()), "22023");
        assert_eq!(state(spec(&[("connector", "smtp")]).unwrap_err()), "42704");
        assert_eq!(state(spec(&[("connector", "file")]).unwrap_err()), "22023");
        let e = spec(&[("connector", "file"), ("path", "/x"), ("colour", "red")]).unwrap_err();
        assert_eq!(state(e.clone()), "22023");
        assert!(
            e.to_string().contains("unrecognized option \"colour\""),
            "{e}"
        );
        let e = spec(&[
            ("connector", "http"),
            ("url", "http://h/"),
            ("format", "parquet"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("expected json, csv"), "{e}");
        let e = spec(&[("connector", "http"), ("url", "http://u:secretpw@h/")]).unwrap_err();
        assert!(!e.to_string().contains("secretpw"), "{e}");
        assert_eq!(state(e.clone()), "22023");
        let e = spec(&[
            ("connector", "file"),
            ("path", "/x"),
            ("rotate_bytes", "10"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("at least 1024"), "{e}");
        let e = spec(&[("connector", "file"), ("path", "/x"), ("header", "true")]).unwrap_err();
        assert_eq!(state(e), "22023");
    }
}
