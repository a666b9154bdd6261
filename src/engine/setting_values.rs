//! What `SET` accepts for the PostgreSQL parameters a session records, so that `SHOW`
//! never reports a value that is not in effect.
//!
//! Most of the parameters drivers set change nothing in tcq and any well-formed value is
//! recorded (`work_mem`, `lock_timeout`). Four kinds are checked here, as PostgreSQL
//! checks them or because tcq cannot honour every value PostgreSQL can:
//!
//! - read-only parameters (`server_version`, `server_encoding`, ...): 55P02, as in
//!   PostgreSQL;
//! - booleans: PostgreSQL's spellings (`on`, `off`, `true`, `yes`, `1`, unique prefixes),
//!   kept as `on`/`off`; anything else is 22023 `parameter "..." requires a Boolean value`;
//! - parameters that change how text is written or read, where tcq has one behaviour:
//!   `client_encoding` (UTF8), `standard_conforming_strings` (on), `DateStyle` (ISO, MDY)
//!   and `IntervalStyle` (postgres). Another valid value is 0A000 rather than a setting
//!   the session would then not follow (a client told `standard_conforming_strings = off`
//!   would escape quotes with backslashes that tcq reads literally); an invalid one 22023;
//! - numbers with PostgreSQL's range (`extra_float_digits`, -15 to 3).

use crate::error::{Error, Result};

/// Parameters a client may read but not change.
const READ_ONLY: &[&str] = &[
    "server_version",
    "server_version_num",
    "server_encoding",
    "integer_datetimes",
    "max_identifier_length",
    "max_index_keys",
    "lc_collate",
    "lc_ctype",
    "is_superuser",
];

/// Boolean parameters among those a session records.
const BOOLEANS: &[&str] = &[
    "default_transaction_read_only",
    "transaction_read_only",
    "default_transaction_deferrable",
    "transaction_deferrable",
    "jit",
    "row_security",
    "escape_string_warning",
    "array_nulls",
    "quote_all_identifiers",
    "check_function_bodies",
    "geqo",
    "track_activities",
    "standard_conforming_strings",
    "enable_seqscan",
    "enable_indexscan",
    "enable_bitmapscan",
    "enable_hashjoin",
    "enable_mergejoin",
    "enable_nestloop",
    "enable_partitionwise_join",
];

/// The value `SET name = value` records (`name` lower-cased), normalised as SHOW prints
/// it. Errors: 55P02 for a read-only parameter, 22023 for a value PostgreSQL refuses,
/// 0A000 for one PostgreSQL takes but tcq does not follow.
pub(crate) fn checked(name: &str, value: &str) -> Result<String> {
    if READ_ONLY.contains(&name) {
        return Err(Error::CantChangeRuntimeParam(format!(
            "parameter \"{name}\" cannot be changed"
        )));
    }
    let v = value.trim_matches('\'');
    if BOOLEANS.contains(&name) {
        let on = crate::types::parse_bool(v).map_err(|_| {
            Error::InvalidParameterValue(format!("parameter \"{name}\" requires a Boolean value"))
        })?;
        if name == "standard_conforming_strings" && !on {
            return Err(Error::FeatureNotSupported(
                "standard_conforming_strings = off is not supported: a backslash in '...' is \
                 always an ordinary character (write E'...' for escapes)"
                    .into(),
            ));
        }
        return Ok(if on { "on" } else { "off" }.into());
    }
    match name {
        "client_encoding" => client_encoding(v),
        "datestyle" => date_style(v),
        "intervalstyle" => interval_style(v),
        "extra_float_digits" => extra_float_digits(v),
        _ => Ok(value.to_string()),
    }
}

fn invalid(name: &str, value: &str) -> Error {
    Error::InvalidParameterValue(format!(
        "invalid value for parameter \"{name}\": \"{value}\""
    ))
}

/// UTF8 under any of PostgreSQL's spellings of it.
fn client_encoding(v: &str) -> Result<String> {
    let norm: String = v
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    if matches!(norm.as_str(), "utf8" | "unicode") {
        return Ok("UTF8".into());
    }
    Err(Error::FeatureNotSupported(format!(
        "client_encoding \"{v}\" is not supported: tcq reads and writes UTF8 only"
    )))
}

/// PostgreSQL's DateStyle words: an output style and an order for reading ambiguous
/// dates; tcq writes ISO and reads month-day-year.
fn date_style(v: &str) -> Result<String> {
    for word in v.split([',', ' ']).filter(|w| !w.is_empty()) {
        match word.to_ascii_lowercase().as_str() {
            "iso" | "mdy" | "us" | "noneuro" | "noneuropean" | "default" => {}
            "sql" | "postgres" | "german" | "dmy" | "ymd" | "euro" | "european" => {
                return Err(Error::FeatureNotSupported(format!(
                    "DateStyle \"{v}\" is not supported: tcq writes dates as ISO and reads \
                     them as MDY (DateStyle 'ISO, MDY')"
                )))
            }
            _ => return Err(invalid("DateStyle", v)),
        }
    }
    Ok("ISO, MDY".into())
}

fn interval_style(v: &str) -> Result<String> {
    match v.to_ascii_lowercase().as_str() {
        "postgres" => Ok("postgres".into()),
        "postgres_verbose" | "sql_standard" | "iso_8601" => Err(Error::FeatureNotSupported(
            format!("IntervalStyle \"{v}\" is not supported: tcq writes intervals as postgres"),
        )),
        _ => Err(invalid("IntervalStyle", v)),
    }
}

fn extra_float_digits(v: &str) -> Result<String> {
    match v.trim().parse::<i32>() {
        Ok(n) if (-15..=3).contains(&n) => Ok(n.to_string()),
        Ok(n) => Err(Error::InvalidParameterValue(format!(
            "{n} is outside the valid range for parameter \"extra_float_digits\" (-15 .. 3)"
        ))),
        Err(_) => Err(invalid("extra_float_digits", v)),
    }
}

#[cfg(test)]
mod tests {
    use super::checked;
    use crate::server::sqlstate;

    fn code(name: &str, v: &str) -> &'static str {
        checked(name, v).map_or_else(|e| sqlstate(&e), |_| "ok")
    }

    #[test]
    fn booleans_take_postgres_spellings_only() {
        assert_eq!(checked("jit", "OFF").unwrap(), "off");
        assert_eq!(checked("default_transaction_read_only", "t").unwrap(), "on");
        assert_eq!(
            checked("default_transaction_read_only", "'yes'").unwrap(),
            "on"
        );
        assert_eq!(code("default_transaction_read_only", "maybe"), "22023");
        assert_eq!(code("standard_conforming_strings", "off"), "0A000");
        assert_eq!(checked("standard_conforming_strings", "on").unwrap(), "on");
    }

    #[test]
    fn text_styles_are_the_ones_tcq_writes() {
        assert_eq!(checked("client_encoding", "utf-8").unwrap(), "UTF8");
        assert_eq!(checked("client_encoding", "UNICODE").unwrap(), "UTF8");
        assert_eq!(code("client_encoding", "LATIN1"), "0A000");
        assert_eq!(checked("datestyle", "ISO").unwrap(), "ISO, MDY");
        assert_eq!(checked("datestyle", "iso, mdy").unwrap(), "ISO, MDY");
        assert_eq!(code("datestyle", "German"), "0A000");
        assert_eq!(code("datestyle", "ISO, DMY"), "0A000");
        assert_eq!(code("datestyle", "nonsense"), "22023");
        assert_eq!(code("intervalstyle", "iso_8601"), "0A000");
        assert_eq!(code("intervalstyle", "bogus"), "22023");
        assert_eq!(checked("extra_float_digits", "3").unwrap(), "3");
        assert_eq!(code("extra_float_digits", "4"), "22023");
        assert_eq!(code("server_version", "1"), "55P02");
        assert_eq!(checked("work_mem", "64MB").unwrap(), "64MB");
    }
}
