//! Just enough of PostgreSQL's system catalogs for psql's `\d` family.
//!
//! psql describes relations with joins over `pg_catalog.pg_class`, `pg_namespace` and
//! `pg_attribute`, which tcq's SQL surface does not run. This module recognises those
//! catalog queries by their text and answers them from tcq's catalog: `\d` and `\dt` list the
//! streams and tables, `\d name` describes one's columns. Any other query over `pg_catalog.pg_*`
//! relations (psql's footers: policies, statistics, publications, inheritance) gets an empty
//! result with as many columns as its select list, which is what PostgreSQL returns for a
//! stream-like relation that has none of those. Streams appear as tables (relkind 'r') with
//! OIDs from 16384 on, in the schema their qualified name gives (`public` otherwise).

use super::catalog::Catalog;
use crate::types::{Column, DataType, Value};

/// First OID handed to a stream, as PostgreSQL's first user OID.
pub(crate) const FIRST_OID: u32 = 16384;

/// A finite answer: columns and rows.
pub(crate) type Answer = (Vec<Column>, Vec<Vec<Value>>);

fn text_cols(names: &[&str]) -> Vec<Column> {
    names
        .iter()
        .map(|n| Column::new(*n, DataType::Text))
        .collect()
}

fn t(s: &str) -> Value {
    Value::Text(s.into())
}

fn split_name(name: &str) -> (&str, &str) {
    name.split_once('.').unwrap_or(("public", name))
}

/// Answer `sql` if it is a catalog query psql sends; `None` leaves it to the binder.
pub(crate) fn answer(sql: &str, catalog: &Catalog, user: &str) -> Option<Answer> {
    if !sql.contains("pg_catalog.pg_") {
        return None;
    }
    // Only queries: `CREATE STREAM pg_catalog.pg_class ...` is the binder's to refuse.
    let first = sql.split_whitespace().next().unwrap_or("");
    if !first.eq_ignore_ascii_case("select") && !first.eq_ignore_ascii_case("with") {
        return None;
    }
    let mut streams: Vec<Rel> = catalog
        .streams
        .read()
        .values()
        .map(|s| Rel {
            oid: s.oid,
            name: s.name.clone(),
            columns: s.columns.clone(),
            not_null: (0..s.columns.len()).map(|i| s.ts_col == Some(i)).collect(),
            kind: "stream",
        })
        .collect();
    streams.extend(catalog.tables.read().values().map(|t| Rel {
        oid: t.oid,
        name: t.name.clone(),
        columns: t.columns.to_vec(),
        not_null: t.not_null.clone(),
        kind: "table",
    }));
    streams.sort_by_key(|s| s.oid);
    if sql.contains("\"Schema\"")
        && sql.contains("\"Name\"")
        && sql.contains("pg_catalog.pg_class c")
    {
        return Some(list(sql, &streams, user));
    }
    if let Some(pattern) = regex_literal(sql, "c.relname OPERATOR(pg_catalog.~) '") {
        let schema = regex_literal(sql, "n.nspname OPERATOR(pg_catalog.~) '");
        let rows = streams
            .iter()
            .filter_map(|s| {
                let (ns, rel) = split_name(&s.name);
                let ok = matches(&pattern, rel) && schema.as_ref().is_none_or(|p| matches(p, ns));
                ok.then(|| vec![t(&s.oid.to_string()), t(ns), t(rel)])
            })
            .collect();
        return Some((text_cols(&["oid", "nspname", "relname"]), rows));
    }
    let oid = quoted_after(sql, "c.oid = '").or_else(|| quoted_after(sql, "a.attrelid = '"));
    let stream = oid
        .and_then(|o| o.parse::<u32>().ok())
        .and_then(|o| streams.iter().find(|s| s.oid == o));
    let ncols = select_list_len(sql);
    if sql.contains("c.relchecks, c.relkind") {
        let mut row = vec![
            t("0"),
            t("r"),
            t("f"),
            t("f"),
            t("f"),
            t("f"),
            t("f"),
            t("f"),
            t("f"),
            t(""),
            t("0"),
            t(""),
            t("p"),
            t("d"),
            t("heap"),
        ];
        row.resize(ncols.max(1), Value::Null);
        let rows = if stream.is_some() { vec![row] } else { vec![] };
        return Some((text_cols(&vec!["c"; ncols.max(1)]), rows));
    }
    if sql.contains("FROM pg_catalog.pg_attribute a") && sql.contains("a.attname") {
        let rows = stream.map_or_else(Vec::new, |s| {
            s.columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let not_null = if s.not_null[i] { "t" } else { "f" };
                    let mut row = vec![
                        t(&c.name),
                        t(&c.data_type.name()),
                        Value::Null,
                        t(not_null),
                        Value::Null,
                        t(""),
                        t(""),
                    ];
                    row.resize(ncols.max(2), Value::Null);
                    if ncols > 7 {
                        // \d+ adds storage (plain), compression, stats target, description.
                        row[7] = t(if c.data_type.is_text() { "x" } else { "p" });
                    }
                    row
                })
                .collect()
        });
        return Some((text_cols(&vec!["c"; ncols.max(2)]), rows));
    }
    Some((text_cols(&vec!["c"; ncols.max(1)]), vec![]))
}

/// A stream or table as psql's catalog queries see it.
struct Rel {
    oid: u32,
    name: String,
    columns: Vec<Column>,
    /// Per column: NOT NULL (a stream's TIMESTAMPCOLUMN, a table's NOT NULL or key column).
    not_null: Vec<bool>,
    /// `\d`'s Type column: "stream" or "table".
    kind: &'static str,
}

/// `\d` / `\dt`: the streams and tables.
fn list(sql: &str, streams: &[Rel], user: &str) -> Answer {
    let pattern = regex_literal(sql, "c.relname OPERATOR(pg_catalog.~) '");
    let mut rows: Vec<Vec<Value>> = streams
        .iter()
        .filter(|s| {
            pattern
                .as_ref()
                .is_none_or(|p| matches(p, split_name(&s.name).1))
        })
        .map(|s| {
            let (ns, rel) = split_name(&s.name);
            vec![t(ns), t(rel), t(s.kind), t(user)]
        })
        .collect();
    rows.sort_by(|a, b| (a[0].as_str(), a[1].as_str()).cmp(&(b[0].as_str(), b[1].as_str())));
    let mut cols = text_cols(&["Schema", "Name", "Type", "Owner"]);
    let n = select_list_len(sql).clamp(4, 8);
    while cols.len() < n {
        cols.push(Column::new("", DataType::Text));
        rows.iter_mut().for_each(|r| r.push(t("")));
    }
    (cols, rows)
}

/// The text of the single-quoted literal that follows `marker`.
fn quoted_after(sql: &str, marker: &str) -> Option<String> {
    let start = sql.find(marker)? + marker.len();
    let end = sql[start..].find('\'')?;
    Some(sql[start..start + end].to_string())
}

/// psql's name patterns arrive as `'^(name)$'` regular expressions; handle the anchored
/// literal forms psql generates (with `.*` for `*` and `.` for `?`).
fn regex_literal(sql: &str, marker: &str) -> Option<String> {
    let lit = quoted_after(sql, marker)?;
    let inner = lit.strip_prefix("^(")?.strip_suffix(")$")?;
    Some(inner.to_string())
}

/// Match psql's translated pattern: `.*` any run, `.` any character, others literal.
fn matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p {
            [] => n.is_empty(),
            ['.', '*', rest @ ..] => (0..=n.len()).any(|i| go(rest, &n[i..])),
            ['.', rest @ ..] => !n.is_empty() && go(rest, &n[1..]),
            ['\\', c, rest @ ..] => n.first() == Some(c) && go(rest, &n[1..]),
            [c, rest @ ..] => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// Number of items in the outermost select list (commas at parenthesis depth 0 between the
/// first SELECT and its FROM).
fn select_list_len(sql: &str) -> usize {
    let lower = sql.to_ascii_lowercase();
    let Some(start) = lower.find("select") else {
        return 1;
    };
    let body = &lower[start + 6..];
    let (mut depth, mut items, mut quote) = (0i32, 1usize, false);
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if quote {
            quote = c != b'\'';
        } else if c == b'\'' {
            quote = true;
        } else if c == b'(' {
            depth += 1;
        } else if c == b')' {
            depth -= 1;
        } else if depth == 0 && c == b',' {
            items += 1;
        } else if depth == 0
            && body[i..].starts_with("from")
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
        {
            break;
        }
        i += 1;
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psql_patterns_and_select_lists() {
        assert!(matches("flights", "flights"));
        assert!(matches("fl.*", "flights"));
        assert!(!matches("fl", "flights"));
        assert_eq!(select_list_len("SELECT a, f(b, c), 'x,y' FROM t"), 3);
        assert_eq!(
            select_list_len("SELECT pol.polname, (SELECT 1 FROM x) FROM pg_catalog.pg_policy pol"),
            2
        );
        assert_eq!(
            regex_literal(
                "WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE",
                "c.relname OPERATOR(pg_catalog.~) '"
            )
            .as_deref(),
            Some("t")
        );
    }
}
