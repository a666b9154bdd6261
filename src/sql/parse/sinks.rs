//! The statements of queries that run without a client: `CREATE STREAM name ... AS
//! SELECT` (a derived stream), `CREATE SINK`, `DROP SINK`, and `EXPLAIN` of the first two
//! (which explains their query).
//!
//! ```text
//! CREATE STREAM [IF NOT EXISTS] name [TYPE ARCHIVED | UNARCHIVED] [WITH (...)] AS SELECT ...
//! CREATE SINK [IF NOT EXISTS] name AS SELECT ... WITH (connector = '...', ...)
//! CREATE SINK [IF NOT EXISTS] name FROM stream WITH (connector = '...', ...)
//! DROP SINK [IF EXISTS] name [, ...]
//! ```
//!
//! A sink's `WITH` list follows its query, as RisingWave writes it: it is cut from the end
//! of the statement (a SELECT never ends with `WITH (...)`). A derived stream's `TYPE` may
//! also follow its query. The query's own text (without the `WITH` list, which may hold
//! secrets) is kept for `tcq_queries` and the catalog.

use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan};

use super::{parse_sql, parse_stream_options, syntax_near, word_is, Lines, Stmt, Toks};
use crate::error::{Error, Result};

/// The query of a derived stream or a sink: parsed, with where its text is.
#[derive(Clone, Debug)]
pub(crate) struct QueryPart {
    /// The SELECT.
    pub(crate) statement: Box<ast::Statement>,
    /// Its text as written (filled by [`fill_text`]).
    pub(crate) text: String,
    /// Where its first token starts.
    from: Option<Location>,
    /// Where the text after it starts (the `WITH` of a sink, a trailing `TYPE`); `None`:
    /// it runs to the end of the statement.
    to: Option<Location>,
}

/// `CREATE STREAM name` has been read and no column list follows: the rest of a derived
/// stream's statement.
pub(super) fn create_derived(
    t: &mut Toks,
    name: String,
    if_not_exists: bool,
    lines: &Lines,
) -> Result<Stmt> {
    let mut archived = None;
    let mut options = Vec::new();
    loop {
        if t.eat_word("TYPE") {
            archived = Some(archived_word(t)?);
        } else if t.eat_word("WITH") {
            options.extend(parse_stream_options(t)?);
        } else {
            break;
        }
    }
    if !t.eat_word("AS") {
        return Err(syntax_near(t.peek()));
    }
    let mut rest = t.take_rest();
    let mut to = None;
    // `... AS SELECT ... TYPE ARCHIVED`: the type may also follow the query.
    if rest.len() >= 2 && word_is(&rest[rest.len() - 2].token, "TYPE") {
        let last = &rest[rest.len() - 1].token;
        let word = if word_is(last, "ARCHIVED") {
            Some(true)
        } else if word_is(last, "UNARCHIVED") {
            Some(false)
        } else {
            None
        };
        if let Some(a) = word {
            if archived.is_some() {
                return Err(Error::Syntax(
                    "conflicting or redundant options: TYPE given twice".into(),
                ));
            }
            archived = Some(a);
            to = Some(rest[rest.len() - 2].span.start);
            rest.truncate(rest.len() - 2);
        }
    }
    Ok(Stmt::CreateDerived {
        name,
        if_not_exists,
        archived: archived.unwrap_or(false),
        options,
        query: query_part(rest, to, lines)?,
    })
}

fn archived_word(t: &mut Toks) -> Result<bool> {
    if t.eat_word("ARCHIVED") {
        Ok(true)
    } else if t.eat_word("UNARCHIVED") {
        Ok(false)
    } else {
        Err(syntax_near(t.peek()))
    }
}

/// `CREATE SINK ...`.
pub(super) fn create_sink(t: &mut Toks, lines: &Lines) -> Result<Stmt> {
    t.expect_word("CREATE")?;
    t.expect_word("SINK")?;
    let if_not_exists = eat_if_not_exists(t)?;
    let name = t.object_name()?;
    if t.eat_word("FROM") {
        let stream = t.object_name()?;
        let options = if t.eat_word("WITH") {
            parse_stream_options(t)?
        } else {
            Vec::new()
        };
        t.expect_end()?;
        return Ok(Stmt::CreateSink {
            name,
            if_not_exists,
            query: select_all(&stream)?,
            options,
        });
    }
    if !t.eat_word("AS") {
        return Err(syntax_near(t.peek()));
    }
    let mut rest = t.take_rest();
    let (options, to) = match trailing_with(&rest) {
        Some(at) => {
            let to = Some(rest[at].span.start);
            let mut list = Toks::new(rest.split_off(at + 1));
            rest.truncate(at);
            let options = parse_stream_options(&mut list)?;
            list.expect_end()?;
            (options, to)
        }
        None => (Vec::new(), None),
    };
    Ok(Stmt::CreateSink {
        name,
        if_not_exists,
        query: query_part(rest, to, lines)?,
        options,
    })
}

/// `DROP SINK [IF EXISTS] a, b [CASCADE | RESTRICT]` (a sink has no dependents: both
/// words are accepted and mean nothing).
pub(super) fn drop_sink(t: &mut Toks) -> Result<Stmt> {
    t.expect_word("DROP")?;
    t.expect_word("SINK")?;
    let if_exists = if t.eat_word("IF") {
        t.expect_word("EXISTS")?;
        true
    } else {
        false
    };
    let mut names = vec![t.object_name()?];
    while t.eat(&Token::Comma) {
        names.push(t.object_name()?);
    }
    let _ = t.eat_word("CASCADE") || t.eat_word("RESTRICT");
    t.expect_end()?;
    Ok(Stmt::DropSink { names, if_exists })
}

/// The statement `EXPLAIN` explains: the query of `CREATE STREAM ... AS` or `CREATE SINK`,
/// or whatever else follows (parsed by sqlparser).
pub(super) fn explained(t: &mut Toks, lines: &Lines) -> Result<ast::Statement> {
    if word_is(t.peek(), "CREATE") && word_is(t.peek_at(1), "STREAM") {
        t.expect_word("CREATE")?;
        t.expect_word("STREAM")?;
        let if_not_exists = eat_if_not_exists(t)?;
        let name = t.object_name()?;
        if t.peek() == &Token::LParen {
            return Err(Error::FeatureNotSupported(
                "EXPLAIN is supported for SELECT, CREATE STREAM ... AS and CREATE SINK".into(),
            ));
        }
        if let Stmt::CreateDerived { query, .. } = create_derived(t, name, if_not_exists, lines)? {
            return Ok(*query.statement);
        }
    }
    if word_is(t.peek(), "CREATE") && word_is(t.peek_at(1), "SINK") {
        if let Stmt::CreateSink { query, .. } = create_sink(t, lines)? {
            return Ok(*query.statement);
        }
    }
    parse_sql(t.take_rest(), lines)
}

/// `IF NOT EXISTS`, if it is next.
pub(super) fn eat_if_not_exists(t: &mut Toks) -> Result<bool> {
    if t.eat_word("IF") {
        t.expect_word("NOT")?;
        t.expect_word("EXISTS")?;
        return Ok(true);
    }
    Ok(false)
}

/// Where the `WITH` of a trailing `WITH ( ... )` is in `toks`, if they end with one.
fn trailing_with(toks: &[TokenWithSpan]) -> Option<usize> {
    if toks.last()?.token != Token::RParen {
        return None;
    }
    let mut depth = 0usize;
    for i in (0..toks.len()).rev() {
        match toks[i].token {
            Token::RParen => depth += 1,
            Token::LParen => {
                depth -= 1;
                if depth == 0 {
                    return (i > 0 && word_is(&toks[i - 1].token, "WITH")).then(|| i - 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The query in `toks`, which must be one SELECT (42601 otherwise).
fn query_part(toks: Vec<TokenWithSpan>, to: Option<Location>, lines: &Lines) -> Result<QueryPart> {
    let from = toks.first().map(|t| t.span.start);
    let statement = parse_sql(toks, lines)?;
    if !matches!(statement, ast::Statement::Query(_)) {
        return Err(Error::Syntax(
            "AS must be followed by a SELECT in CREATE STREAM ... AS and CREATE SINK".into(),
        ));
    }
    Ok(QueryPart {
        statement: Box::new(statement),
        text: String::new(),
        from,
        to,
    })
}

/// `SELECT * FROM stream` for `CREATE SINK ... FROM stream`.
fn select_all(stream: &str) -> Result<QueryPart> {
    let quoted: Vec<String> = stream
        .split('.')
        .map(|p| format!("\"{}\"", p.replace('"', "\"\"")))
        .collect();
    let text = format!("SELECT * FROM {}", quoted.join("."));
    let statement = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&text)
        .and_then(|mut p| p.parse_statement())
        .map_err(super::map_parser_error)?;
    Ok(QueryPart {
        statement: Box::new(statement),
        text,
        from: None,
        to: None,
    })
}

/// Fill the query text of a derived stream's or a sink's statement from `source`, the
/// query string; `end` is where the statement's last token ends.
pub(super) fn fill_text(stmt: &mut Stmt, lines: &Lines, source: &str, end: Option<Location>) {
    let query = match stmt {
        Stmt::CreateDerived { query, .. } | Stmt::CreateSink { query, .. } => query,
        _ => return,
    };
    let (Some(from), Some(to)) = (query.from, query.to.or(end)) else {
        return;
    };
    let (a, b) = (lines.offset(from), lines.offset(to));
    if a < b {
        query.text = source[a..b].trim().to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_all, ParsedStmt};
    use super::*;

    fn one(sql: &str) -> ParsedStmt {
        let mut v = parse_all(sql).unwrap();
        assert_eq!(v.len(), 1, "{sql}");
        v.remove(0)
    }

    #[test]
    fn derived_streams_keep_their_query_text_and_type() {
        let p = one("CREATE STREAM d TYPE ARCHIVED WITH (retention = '1 day') AS SELECT count(*) FROM s [RANGE BY '1 hour'] ;");
        let Stmt::CreateDerived {
            name,
            archived,
            options,
            query,
            ..
        } = p.stmt
        else {
            panic!("{:?}", p.stmt);
        };
        assert_eq!((name.as_str(), archived), ("d", true));
        assert_eq!(options, [("retention".to_string(), "1 day".to_string())]);
        assert_eq!(query.text, "SELECT count(*) FROM s [RANGE BY '1 hour']");
        assert_eq!(p.windows.len(), 1);
        // TYPE may follow the query; it is not part of the query's text.
        let p = one(
            "CREATE STREAM IF NOT EXISTS d AS SELECT * FROM s [RANGE BY '1 hour'] TYPE ARCHIVED",
        );
        let Stmt::CreateDerived {
            archived,
            if_not_exists,
            query,
            ..
        } = p.stmt
        else {
            panic!()
        };
        assert!(archived && if_not_exists);
        assert_eq!(query.text, "SELECT * FROM s [RANGE BY '1 hour']");
        assert!(parse_all("CREATE STREAM d AS INSERT INTO s VALUES (1)").is_err());
        assert!(parse_all("CREATE STREAM d SELECT 1").is_err());
    }

    #[test]
    fn sinks_take_their_with_list_from_the_end() {
        let p = one("CREATE SINK k AS SELECT a FROM s WHERE a IN (1, 2) WITH (connector = 'file', path = '/tmp/x', token = 'secret')");
        let Stmt::CreateSink {
            name,
            query,
            options,
            ..
        } = p.stmt
        else {
            panic!()
        };
        assert_eq!(name, "k");
        assert_eq!(query.text, "SELECT a FROM s WHERE a IN (1, 2)");
        assert!(!query.text.contains("secret"));
        assert_eq!(options.len(), 3);
        let p = one("CREATE SINK k FROM \"My\".s WITH (connector = 'http', url = 'http://h/')");
        let Stmt::CreateSink { query, .. } = p.stmt else {
            panic!()
        };
        assert_eq!(query.text, "SELECT * FROM \"My\".\"s\"");
        // No WITH list: the binder says the connector is missing.
        let p = one("CREATE SINK k AS SELECT a FROM s");
        assert!(matches!(p.stmt, Stmt::CreateSink { ref options, .. } if options.is_empty()));
        assert!(matches!(
            one("DROP SINK IF EXISTS a, b").stmt,
            Stmt::DropSink { ref names, if_exists: true } if names == &["a", "b"]
        ));
        // EXPLAIN of either explains its query.
        let p = one("EXPLAIN CREATE SINK k AS SELECT a FROM s WITH (connector = 'file')");
        assert!(
            matches!(p.stmt, Stmt::Explain { ref statement, .. } if matches!(**statement, ast::Statement::Query(_)))
        );
        let p = one("EXPLAIN CREATE STREAM d AS SELECT a FROM s");
        assert!(matches!(p.stmt, Stmt::Explain { .. }));
    }
}
