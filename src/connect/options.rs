//! `WITH (name = value, ...)` options of connector DDL, read and checked.
//!
//! The parser hands over the options as written (names lower-cased, values as text; a name
//! given twice is already 42601 there). A [`WithOptions`] then takes them one by one for a
//! given context (a connector, a format): each read marks its option as used, and
//! [`WithOptions::finish`] refuses whatever was not used. The errors are PostgreSQL's for
//! the same mistakes:
//! - an option this context does not know: 22023, as PostgreSQL's `unrecognized parameter`
//!   of a relation's `WITH` list, naming the options it knows;
//! - a required option missing, or a value that is not one of those allowed: 22023;
//! - an unknown connector: 42704 (`undefined_object`, as an unknown foreign-data wrapper).
//!
//! Values that are secrets (passwords, see [`is_secret`]) are never shown: [`display`]
//! renders a list with them masked, for `tcq_sources`, the console and the server log.
//! Sinks (`CREATE SINK ... WITH (...)`) read their options through the same type.

use crate::error::{Error, Result};

/// The mask shown in place of a secret value.
pub(crate) const MASK: &str = "********";

/// Whether option `name` holds a secret (a password, a token, a key): its value is never
/// shown in a catalog, a log or an error.
pub(crate) fn is_secret(name: &str) -> bool {
    ["password", "secret", "token", "credential"]
        .iter()
        .any(|w| name.contains(w))
}

/// SQL text with the values of secret options (`sasl_password = '...'`, see
/// [`is_secret`]) masked: what `pg_stat_activity` and the server log show of a statement.
pub(crate) fn redact_sql(sql: &str) -> std::borrow::Cow<'_, str> {
    static SECRET: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b([a-z_.]*(?:password|secret|token|credential)[a-z_.]*\s*=\s*)'(?:[^']|'')*'",
        )
        .expect("a valid pattern")
    });
    let lower = sql.to_ascii_lowercase();
    if !["password", "secret", "token", "credential"]
        .iter()
        .any(|w| lower.contains(w))
    {
        return std::borrow::Cow::Borrowed(sql);
    }
    SECRET.replace_all(sql, format!("${{1}}'{MASK}'"))
}

/// `options` as `name = 'value', ...`, secrets masked.
pub(crate) fn display(options: &[(String, String)]) -> String {
    options
        .iter()
        .map(|(k, v)| {
            let v = if is_secret(k) { MASK } else { v.as_str() };
            format!("{k} = '{}'", v.replace('\'', "''"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The options of one statement, read for one context.
#[derive(Debug)]
pub(crate) struct WithOptions<'a> {
    /// What the options configure, for errors (`connector 'kafka'`).
    context: String,
    items: &'a [(String, String)],
    used: Vec<bool>,
    /// Every name asked for, in order: the ones an error lists as valid.
    known: Vec<&'static str>,
}

impl<'a> WithOptions<'a> {
    /// The options `items` (name, value), read for `context` (`connector 'kafka'`).
    pub(crate) fn new(
        context: impl Into<String>,
        items: &'a [(String, String)],
    ) -> WithOptions<'a> {
        WithOptions {
            context: context.into(),
            used: vec![false; items.len()],
            items,
            known: Vec::new(),
        }
    }

    /// The value of `name`, if given (marked as used).
    pub(crate) fn get(&mut self, name: &'static str) -> Option<&'a str> {
        self.known.push(name);
        let i = self.items.iter().position(|(k, _)| k == name)?;
        self.used[i] = true;
        Some(self.items[i].1.as_str())
    }

    /// The value of the first of `names` given (aliases: `bootstrap_servers` and
    /// RisingWave's `properties.bootstrap.server`).
    pub(crate) fn get_any(&mut self, names: &[&'static str]) -> Option<&'a str> {
        let mut found = None;
        for n in names {
            if let Some(v) = self.get(n) {
                found.get_or_insert(v);
            }
        }
        found
    }

    /// The value of `name`. Errors: 22023 when it is missing.
    pub(crate) fn required(&mut self, name: &'static str) -> Result<&'a str> {
        let context = self.context.clone();
        self.get(name).ok_or_else(|| {
            Error::InvalidParameterValue(format!("option \"{name}\" is required for {context}"))
        })
    }

    /// The value of `name`, one of `allowed` (compared without case), or `default` when it
    /// is not given. Errors: 22023 naming the values allowed.
    pub(crate) fn one_of(
        &mut self,
        name: &'static str,
        allowed: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str> {
        let Some(v) = self.get(name) else {
            return Ok(default);
        };
        allowed
            .iter()
            .find(|a| a.eq_ignore_ascii_case(v))
            .copied()
            .ok_or_else(|| self.invalid(name, v, &format!("expected {}", allowed.join(", "))))
    }

    /// The boolean `name` (`true`/`false`, `on`/`off`, `1`/`0`), or `default`.
    pub(crate) fn bool(&mut self, name: &'static str, default: bool) -> Result<bool> {
        match self.get(name).map(str::to_ascii_lowercase).as_deref() {
            None => Ok(default),
            Some("true" | "on" | "1" | "yes") => Ok(true),
            Some("false" | "off" | "0" | "no") => Ok(false),
            Some(v) => Err(self.invalid(name, v, "expected a boolean")),
        }
    }

    /// The whole number `name` within `min..=max`, or `default`.
    pub(crate) fn number(
        &mut self,
        name: &'static str,
        default: u64,
        min: u64,
        max: u64,
    ) -> Result<u64> {
        let Some(v) = self.get(name) else {
            return Ok(default);
        };
        v.trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| self.invalid(name, v, &format!("expected a number from {min} to {max}")))
    }

    /// Whether option `name` is given, without reading it (an option that is refused
    /// whatever its value, and not listed among the options this context knows).
    pub(crate) fn has(&self, name: &str) -> bool {
        self.items.iter().any(|(k, _)| k == name)
    }

    /// 22023 for a bad value of `name` (a secret's value is not repeated).
    pub(crate) fn invalid(&self, name: &str, value: &str, why: &str) -> Error {
        let shown = if is_secret(name) { MASK } else { value };
        Error::InvalidParameterValue(format!(
            "invalid value for option \"{name}\" of {}: \"{shown}\" ({why})",
            self.context
        ))
    }

    /// Refuse every option not read. Errors: 22023 naming the first unknown option and
    /// the options this context knows.
    pub(crate) fn finish(self) -> Result<()> {
        let Some(i) = self.used.iter().position(|u| !u) else {
            return Ok(());
        };
        let mut known = self.known.clone();
        known.sort_unstable();
        known.dedup();
        Err(Error::InvalidParameterValue(format!(
            "unrecognized option \"{}\" for {}; the options are {}",
            self.items[i].0,
            self.context,
            known.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn secrets_in_sql_text_are_masked() {
        assert_eq!(
            redact_sql("CREATE STREAM s (a int) WITH (connector = 'kafka', sasl_password = 'it''s', topic = 't')"),
            "CREATE STREAM s (a int) WITH (connector = 'kafka', sasl_password = '********', topic = 't')"
        );
        assert_eq!(redact_sql("SELECT 'password'"), "SELECT 'password'");
    }

    #[test]
    fn options_are_read_once_and_the_rest_refused() {
        let it = items(&[("topic", "t"), ("start", "LATEST"), ("colour", "red")]);
        let mut o = WithOptions::new("connector 'kafka'", &it);
        assert_eq!(o.required("topic").unwrap(), "t");
        assert_eq!(
            o.one_of("start", &["earliest", "latest"], "earliest")
                .unwrap(),
            "latest"
        );
        let e = o.finish().unwrap_err();
        assert_eq!(crate::server::sqlstate(&e), "22023");
        assert_eq!(
            e.to_string(),
            "unrecognized option \"colour\" for connector 'kafka'; the options are start, topic"
        );
    }

    #[test]
    fn missing_and_bad_values_are_22023_and_secrets_stay_hidden() {
        let it = items(&[("sasl_password", "hunter2"), ("qos", "7")]);
        let mut o = WithOptions::new("connector 'mqtt'", &it);
        let e = o.required("url").unwrap_err();
        assert_eq!(
            e.to_string(),
            "option \"url\" is required for connector 'mqtt'"
        );
        let e = o.number("qos", 1, 0, 1).unwrap_err();
        assert_eq!(crate::server::sqlstate(&e), "22023");
        assert!(e.to_string().contains("\"7\""), "{e}");
        let e = o.invalid("sasl_password", "hunter2", "too short");
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert_eq!(display(&it), "sasl_password = '********', qos = '7'");
    }
}
