//! The settings of a session: the parameters a new session starts with, those SET records
//! without acting on them, and how the few tcq acts on are read (`statement_timeout`,
//! `tcq.output_overflow`, `tcq.share_across_queries`).
//!
//! A leaf of the engine: SHOW, RESET and `pg_settings` read the same table, so a new
//! setting is one row here.

use super::outq::Overflow;
use crate::error::{Error, Result};

pub(crate) const DEFAULT_SETTINGS: &[(&str, &str)] = &[
    ("server_version", "15.0"),
    ("server_version_num", "150000"),
    ("server_encoding", "UTF8"),
    ("client_encoding", "UTF8"),
    ("datestyle", "ISO, MDY"),
    ("timezone", "UTC"),
    ("integer_datetimes", "on"),
    ("standard_conforming_strings", "on"),
    ("search_path", "\"$user\", public"),
    ("transaction_isolation", "read committed"),
    ("default_transaction_isolation", "read committed"),
    ("max_identifier_length", "63"),
    ("max_index_keys", "32"),
    ("application_name", ""),
    ("extra_float_digits", "1"),
    ("is_superuser", "on"),
    ("lc_collate", "C"),
    ("intervalstyle", "postgres"),
    // SQLAlchemy's table reflection compares each table's access method with it.
    ("default_table_access_method", "heap"),
    ("tcq.output_overflow", "error"),
    ("tcq.share_across_queries", "on"),
    ("tcq.speculative_copy", "on"),
];

/// Further PostgreSQL parameters that drivers, ORMs and tools SET (at start-up, on a pool's
/// reset, or to tune a session), with PostgreSQL's defaults: SET records them and SHOW
/// shows them, and tcq does not act on them, except `statement_timeout`
/// ([`Session::statement_timeout`]). Any other name without a dot is 42704, as in
/// PostgreSQL; a name with a dot (`myapp.x`) is a custom parameter and always accepted.
pub(crate) const OTHER_SETTINGS: &[(&str, &str)] = &[
    ("statement_timeout", "0"),
    ("lock_timeout", "0"),
    ("idle_in_transaction_session_timeout", "0"),
    ("idle_session_timeout", "0"),
    ("jit", "off"),
    ("client_min_messages", "notice"),
    ("bytea_output", "hex"),
    ("default_transaction_read_only", "off"),
    ("transaction_read_only", "off"),
    ("default_transaction_deferrable", "off"),
    ("transaction_deferrable", "off"),
    ("synchronous_commit", "on"),
    ("work_mem", "4MB"),
    ("maintenance_work_mem", "64MB"),
    ("temp_buffers", "8MB"),
    ("row_security", "on"),
    ("role", "none"),
    ("session_authorization", ""),
    ("lc_messages", "C"),
    ("lc_monetary", "C"),
    ("lc_numeric", "C"),
    ("lc_time", "C"),
    ("lc_ctype", "C"),
    ("xmloption", "content"),
    ("escape_string_warning", "on"),
    ("backslash_quote", "safe_encoding"),
    ("array_nulls", "on"),
    ("quote_all_identifiers", "off"),
    ("check_function_bodies", "on"),
    ("default_tablespace", ""),
    ("temp_tablespaces", ""),
    ("plan_cache_mode", "auto"),
    ("max_parallel_workers_per_gather", "2"),
    ("geqo", "on"),
    ("join_collapse_limit", "8"),
    ("from_collapse_limit", "8"),
    ("cursor_tuple_fraction", "0.1"),
    ("random_page_cost", "4"),
    ("effective_cache_size", "4GB"),
    ("session_replication_role", "origin"),
    ("log_statement", "none"),
    ("log_min_duration_statement", "-1"),
    ("log_min_messages", "warning"),
    ("track_activities", "on"),
    ("enable_seqscan", "on"),
    ("enable_indexscan", "on"),
    ("enable_bitmapscan", "on"),
    ("enable_hashjoin", "on"),
    ("enable_mergejoin", "on"),
    ("enable_nestloop", "on"),
    ("enable_partitionwise_join", "off"),
    ("default_statistics_target", "100"),
    ("password_encryption", "scram-sha-256"),
    ("gin_fuzzy_search_limit", "0"),
    ("vacuum_cost_delay", "0"),
];

/// True when SET may take parameter `name` (lower-cased): one tcq keeps, one of
/// [`OTHER_SETTINGS`], or a custom one (its name has a dot).
pub(crate) fn known_setting(name: &str) -> bool {
    name.contains('.')
        || DEFAULT_SETTINGS.iter().any(|(k, _)| *k == name)
        || OTHER_SETTINGS.iter().any(|(k, _)| *k == name)
}

/// A boolean setting's value is true (`on`, `true`, `yes`, `1`, quoted or not).
/// A `statement_timeout` value in milliseconds, as PostgreSQL reads it: a number of
/// milliseconds, or a number with a unit (`us`, `ms`, `s`, `min`, `h`, `d`); 0 is none.
/// Errors: 22023 for anything else or a negative value.
pub(crate) fn parse_timeout_ms(v: &str) -> Result<u64> {
    let invalid = || {
        Error::InvalidParameterValue(format!(
            "invalid value for parameter \"statement_timeout\": \"{v}\""
        ))
    };
    let t = v.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (number, unit) = (t[..split].trim(), t[split..].trim());
    let n: f64 = number.parse().map_err(|_| invalid())?;
    let scale = match unit {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1_000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return Err(invalid()),
    };
    let ms = (n * scale).round();
    if !(0.0..=i32::MAX as f64).contains(&ms) {
        return Err(Error::InvalidParameterValue(format!(
            "{} ms is outside the valid range for parameter \"statement_timeout\" (0 .. {})",
            ms,
            i32::MAX
        )));
    }
    Ok(ms as u64)
}

/// A time in milliseconds as PostgreSQL shows a setting in that unit: in the largest of
/// ms, s, min, h and d that divides it, `0` for zero.
pub(crate) fn show_ms(ms: u64) -> String {
    if ms == 0 {
        return "0".into();
    }
    let unit = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "min"),
        (1_000, "s"),
    ]
    .into_iter()
    .find(|(u, _)| ms.is_multiple_of(*u));
    match unit {
        Some((u, name)) => format!("{}{name}", ms / u),
        None => format!("{ms}ms"),
    }
}

pub(crate) fn setting_on(v: &str) -> bool {
    matches!(
        v.trim_matches('\'').to_ascii_lowercase().as_str(),
        "on" | "true" | "yes" | "1" | "t" | "y"
    )
}

/// The settings a new session starts with, as (name, value).
pub(crate) fn default_settings() -> &'static [(&'static str, &'static str)] {
    DEFAULT_SETTINGS
}

/// The name PostgreSQL gives a setting in SHOW's column header: settings are looked up
/// case-insensitively, but a few are spelled in mixed case (`SHOW timezone` prints a column
/// named `TimeZone`).
pub(crate) fn display_name(name: &str) -> &str {
    match name {
        "datestyle" => "DateStyle",
        "timezone" => "TimeZone",
        "intervalstyle" => "IntervalStyle",
        _ => name,
    }
}

/// The session setting that chooses what a full output queue does to this session's
/// continuous queries: `error` (end with 54000) or `skip` (drop rows, say how many).
pub(crate) const OVERFLOW_SETTING: &str = "tcq.output_overflow";

pub(crate) fn parse_overflow(v: &str) -> Result<Overflow> {
    match v.trim_matches('\'').to_ascii_lowercase().as_str() {
        "error" => Ok(Overflow::Error),
        "skip" => Ok(Overflow::Skip),
        _ => Err(Error::InvalidParameterValue(format!(
            "invalid value for parameter \"{OVERFLOW_SETTING}\": \"{v}\" (error or skip)"
        ))),
    }
}

/// The session setting that lets this session's continuous aggregate queries join the
/// cross-query shared plans of their stream (`on`, the default) or run alone (`off`).
pub(crate) const SHARE_SETTING: &str = "tcq.share_across_queries";

/// The session setting that lets the stream's queries fold a COPY's rows while it is
/// still arriving, all or nothing still (`on`, the default), or only at CopyDone (`off`).
pub(crate) const SPECULATE_SETTING: &str = "tcq.speculative_copy";

pub(crate) fn parse_bool_setting(name: &str, v: &str) -> Result<bool> {
    match v.trim_matches('\'').to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(Error::InvalidParameterValue(format!(
            "parameter \"{name}\" requires a Boolean value"
        ))),
    }
}
