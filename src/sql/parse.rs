//! Text to statements: the thin layer around sqlparser.
//!
//! sqlparser's PostgreSQL dialect parses ordinary SQL; it knows nothing of TelegraphCQ. This
//! module tokenizes the whole query string once (with inline COPY data turned off, so that
//! `COPY t FROM STDIN; SELECT 1` stays two statements), splits the tokens at top-level
//! semicolons, and for each statement:
//! - cuts every `[RANGE BY '..' [SLIDE BY '..'] [START AT '..']]` window clause out of the
//!   token stream, remembering the position of the token it follows (the stream's name or
//!   alias), so that the binder can attach each window to its table by source position;
//! - parses `CREATE STREAM`, `DROP STREAM`, `FETCH`/`MOVE`, `CLOSE`, transactions, `SET`,
//!   `RESET`, `SHOW`, and the headers of `DECLARE` and `EXPLAIN` itself, on sqlparser's
//!   tokens (these are small, and sqlparser either lacks them or models them in ways that
//!   would need more code to undo);
//! - hands everything else (SELECT, INSERT, COPY, and the queries of DECLARE and EXPLAIN) to
//!   sqlparser unmodified.
//!
//! Errors are [`Error::Syntax`] with PostgreSQL's wording (`syntax error at or near "x"`).

use std::any::TypeId;

use sqlparser::ast;
use sqlparser::dialect::{Dialect, PostgreSqlDialect};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

use super::plan::{FetchCount, SavepointOp, TransactionOp};
use crate::error::{Error, Result};

mod sinks;
pub(crate) use sinks::QueryPart;

/// PostgreSQL's tokenizer rules, except that `COPY ... FROM STDIN;` is not followed by inline
/// data: the wire protocol carries COPY data separately, and inline data would swallow the
/// statements after the COPY.
#[derive(Debug)]
struct TokenizeDialect(PostgreSqlDialect);

macro_rules! delegate {
    ($($name:ident),*) => {
        $(fn $name(&self) -> bool { self.0.$name() })*
    };
}

impl Dialect for TokenizeDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<PostgreSqlDialect>()
    }
    fn supports_copy_from_stdin_data(&self) -> bool {
        false
    }
    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }
    fn is_custom_operator_part(&self, ch: char) -> bool {
        self.0.is_custom_operator_part(ch)
    }
    fn is_nested_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_nested_delimited_identifier_start(ch)
    }
    delegate!(
        ignores_wildcard_escapes,
        requires_hash_comment_space,
        requires_single_line_comment_whitespace,
        supports_dollar_as_money_prefix,
        supports_dollar_placeholder,
        supports_geometric_types,
        supports_hash_comment,
        supports_literal_prefix_in_qualified_name,
        supports_multiline_comment_hints,
        supports_national_string_literal,
        supports_nested_comments,
        supports_non_decimal_integer_literals,
        supports_numeric_literal_underscores,
        supports_numeric_prefix,
        supports_pipe_operator,
        supports_quote_delimited_string,
        supports_string_escape_constant,
        supports_string_literal_backslash_escape,
        supports_tilde_like_match_operator,
        supports_triple_quoted_string,
        supports_tuple_element_access,
        supports_unicode_string_literal,
        supports_unterminated_block_comments
    );
}

/// A window clause as written, before its values are checked (the binder does that, so
/// that errors come in PostgreSQL's order: syntax first, then names, then values).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RawWindow {
    /// Start of the token the clause follows (the table's name or alias).
    pub(crate) after: Location,
    /// RANGE BY text.
    pub(crate) range: String,
    /// SLIDE BY text.
    pub(crate) slide: Option<String>,
    /// START AT text.
    pub(crate) start: Option<String>,
    /// SLACK text: how far behind its stream's time a tuple may arrive and still be on time.
    pub(crate) slack: Option<String>,
    /// Where each value's string starts, in the order RANGE, SLIDE, START, SLACK (`None`
    /// for a value not given): an error in a value is reported there.
    pub(crate) value_at: [Option<Location>; 4],
}

/// A column of `CREATE STREAM`, with its type still as text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RawColumn {
    pub(crate) name: String,
    pub(crate) type_name: String,
    pub(crate) timestamp_column: bool,
}

/// EXPLAIN options as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RawExplain {
    pub(crate) format: Option<String>,
    pub(crate) analyze: bool,
    pub(crate) verbose: bool,
    pub(crate) event_rate: Option<String>,
    /// The export's options of `FORMAT FLINK` (`PARALLELISM 2`, `SINK 'kafka'`, ...), as
    /// written: name (lower case) and value.
    pub(crate) flink: Vec<(String, String)>,
}

/// One statement, parsed.
#[derive(Clone, Debug)]
pub(crate) enum Stmt {
    /// Nothing but whitespace, comments or `;`.
    Empty,
    /// SELECT, INSERT, COPY and whatever else sqlparser parsed (the binder refuses the rest).
    Ast(Box<ast::Statement>),
    /// `CREATE STREAM`.
    CreateStream {
        name: String,
        columns: Vec<RawColumn>,
        archived: bool,
        if_not_exists: bool,
        /// `WITH (slack = '...')`: the stream's default SLACK, as written.
        slack: Option<String>,
        /// `WITH (retention = '...')`: how long an archived stream keeps sealed segments.
        retention: Option<String>,
        /// The other `WITH` options, as written (keys lower-cased): a source's
        /// `connector = '...'` and its settings (see `connect::options`).
        options: Vec<(String, String)>,
    },
    /// `CREATE STREAM name [TYPE ...] [WITH (...)] AS SELECT ...`: a derived stream.
    CreateDerived {
        name: String,
        if_not_exists: bool,
        archived: bool,
        /// The `WITH` options as written (keys lower-cased): slack, retention.
        options: Vec<(String, String)>,
        query: QueryPart,
    },
    /// `CREATE SINK name AS SELECT ... WITH (...)` or `CREATE SINK name FROM s WITH (...)`.
    CreateSink {
        name: String,
        if_not_exists: bool,
        query: QueryPart,
        /// The `WITH` options as written (keys lower-cased).
        options: Vec<(String, String)>,
    },
    /// `DROP SINK [IF EXISTS] a, b`.
    DropSink { names: Vec<String>, if_exists: bool },
    /// `ALTER STREAM name PAUSE` (`pause`) or `RESUME`: stop or restart its source.
    AlterStreamSource { name: String, pause: bool },
    /// `ALTER STREAM name SET (retention = '...')` or `RESET (retention)`.
    AlterStreamRetention {
        name: String,
        /// The new retention as written; `None` resets it (keep everything).
        retention: Option<String>,
    },
    /// `DROP STREAM [CASCADE]`.
    DropStream {
        names: Vec<String>,
        if_exists: bool,
        cascade: bool,
    },
    /// `FETCH` / `MOVE`.
    Fetch {
        cursor: String,
        count: FetchCount,
        is_move: bool,
        /// `WITH (timeout = '..')` as written (a number is seconds).
        timeout: Option<String>,
    },
    /// `CLOSE name` / `CLOSE ALL`.
    Close(Option<String>),
    /// BEGIN, COMMIT, ROLLBACK and their synonyms.
    Transaction(TransactionOp),
    /// SAVEPOINT, RELEASE, ROLLBACK TO.
    Savepoint(SavepointOp),
    /// `SET` (`value` = `None` for RESET / DEFAULT).
    Set { name: String, value: Option<String> },
    /// `SET LOCAL`: as [`Stmt::Set`], until the transaction block ends.
    SetLocal { name: String, value: Option<String> },
    /// `SHOW`.
    Show(String),
    /// `DECLARE name CURSOR FOR <statement>`.
    Declare {
        cursor: String,
        statement: Box<ast::Statement>,
        hold: bool,
    },
    /// `EXPLAIN [options] <statement>`.
    Explain {
        options: RawExplain,
        statement: Box<ast::Statement>,
    },
    /// `EXPLAIN [options] QUERIES ALL` or `QUERIES (id, ...)`: registered queries.
    ExplainQueries {
        options: RawExplain,
        /// `None`: every registered query.
        ids: Option<Vec<u64>>,
    },
    /// `CREATE ROLE` / `CREATE USER` (`user`).
    CreateRole {
        name: String,
        options: super::plan::RoleOptions,
        user: bool,
    },
    /// `ALTER ROLE` / `ALTER USER`.
    AlterRole {
        name: String,
        options: super::plan::RoleOptions,
    },
    /// `DROP ROLE` / `DROP USER`.
    DropRole { names: Vec<String>, if_exists: bool },
    /// `GRANT` / `REVOKE` on relations.
    Grant(super::plan::Grant),
    /// `ALTER STREAM|TABLE name OWNER TO role`.
    AlterOwner {
        table: bool,
        name: String,
        owner: String,
    },
}

/// A statement with its text and its window clauses.
#[derive(Clone, Debug)]
pub(crate) struct ParsedStmt {
    pub(crate) text: String,
    pub(crate) stmt: Stmt,
    pub(crate) windows: Vec<RawWindow>,
    /// The whole query string the statement came from: token locations, and so error
    /// positions, count from its start.
    pub(crate) source: std::sync::Arc<str>,
    /// COPY's options (the parenthesised list or the legacy words after STDIN/STDOUT),
    /// cut out before sqlparser and read here as PostgreSQL's grammar reads them; the
    /// binder checks them as PostgreSQL's `ProcessCopyOptions` does. `None` for every
    /// other statement.
    pub(crate) copy_options: Option<Vec<CopyItem>>,
    /// Identifiers longer than [`NAME_BYTES_MAX`] as written, with what they were cut to.
    pub(crate) truncated: Vec<(String, String)>,
}

/// The longest identifier, in bytes: PostgreSQL's NAMEDATALEN - 1.
pub(crate) const NAME_BYTES_MAX: usize = 63;

/// Cut an identifier token longer than [`NAME_BYTES_MAX`] bytes to that length (on a
/// character boundary), as PostgreSQL's scanner does, noting what was cut.
fn truncate_identifier(tok: &mut TokenWithSpan, truncated: &mut Vec<(String, String)>) {
    let Token::Word(w) = &mut tok.token else {
        return;
    };
    if w.value.len() <= NAME_BYTES_MAX {
        return;
    }
    let mut end = NAME_BYTES_MAX;
    while !w.value.is_char_boundary(end) {
        end -= 1;
    }
    let cut = w.value[..end].to_string();
    truncated.push((std::mem::replace(&mut w.value, cut.clone()), cut));
}

fn syntax_near(tok: &Token) -> Error {
    match tok {
        Token::EOF => Error::Syntax("syntax error at end of input".into()),
        t => Error::Syntax(format!("syntax error at or near \"{t}\"")),
    }
}

/// Turn sqlparser's message (`Expected: X, found: Y at Line: 1, Column: 8`) into
/// PostgreSQL's (`syntax error at or near "Y"`).
pub(crate) fn map_parser_error(e: ParserError) -> Error {
    let msg = match e {
        ParserError::ParserError(m) | ParserError::TokenizerError(m) => m,
        ParserError::RecursionLimitExceeded => {
            return Error::StatementTooComplex(
                "stack depth limit exceeded: the statement is nested too deeply".into(),
            )
        }
    };
    if let Some(pos) = msg.find("found: ") {
        let rest = &msg[pos + 7..];
        let found = match rest.find(" at Line: ") {
            Some(end) => &rest[..end],
            None => rest,
        };
        if found == "EOF" {
            return Error::Syntax("syntax error at end of input".into());
        }
        return Error::Syntax(format!("syntax error at or near \"{found}\""));
    }
    let msg = match msg.find(" at Line: ") {
        Some(end) => msg[..end].to_string(),
        None => msg,
    };
    Error::Syntax(format!("syntax error: {msg}"))
}

/// Byte offset of a `Location` (1-based line and character column) in `text`.
///
/// Built once per query string with the byte offset of every character, so that a lookup
/// costs O(1): a string of thousands of statements on one line would otherwise be scanned
/// once per statement.
pub(crate) struct Lines {
    /// Character index of each line's first character.
    line_chars: Vec<usize>,
    /// Byte offset of each character, and the text's length at the end.
    char_bytes: Vec<usize>,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Self {
        let mut line_chars = vec![0];
        let mut char_bytes = Vec::with_capacity(text.len() + 1);
        for (i, (byte, c)) in text.char_indices().enumerate() {
            char_bytes.push(byte);
            if c == '\n' {
                line_chars.push(i + 1);
            }
        }
        char_bytes.push(text.len());
        Lines {
            line_chars,
            char_bytes,
        }
    }
    /// Character index of `loc`, clamped to the end of its line (or of the text).
    fn char_index(&self, loc: Location) -> usize {
        let line = loc.line.saturating_sub(1) as usize;
        let Some(&first) = self.line_chars.get(line) else {
            return self.char_bytes.len() - 1;
        };
        let end = self
            .line_chars
            .get(line + 1)
            .map_or(self.char_bytes.len() - 1, |&next| next - 1);
        (first + loc.column.saturating_sub(1) as usize).min(end)
    }
    /// PostgreSQL's error position of `loc`: 1-based, in characters from the start.
    pub(crate) fn position(&self, loc: Location) -> u32 {
        self.char_index(loc) as u32 + 1
    }
    fn offset(&self, loc: Location) -> usize {
        self.char_bytes[self.char_index(loc)]
    }
}

/// Split `text` into statements and parse each.
pub(crate) fn parse_all(text: &str) -> Result<Vec<ParsedStmt>> {
    let dialect = TokenizeDialect(PostgreSqlDialect {});
    let tokens = Tokenizer::new(&dialect, text)
        .tokenize_with_location()
        .map_err(|e| Error::Syntax(tokenizer_message(&e.to_string())))?;
    let lines = Lines::new(text);
    // One copy of the query string, shared by its statements (for error positions).
    let source: std::sync::Arc<str> = text.into();
    let mut out = Vec::new();
    let mut current: Vec<TokenWithSpan> = Vec::new();
    let mut first_start: Option<Location> = None;
    let flush = |current: &mut Vec<TokenWithSpan>,
                 end: usize,
                 first: Option<Location>,
                 out: &mut Vec<ParsedStmt>|
     -> Result<()> {
        let start = first.map(|l| lines.offset(l)).unwrap_or(end).min(end);
        let stmt_text = text[start..end].trim().to_string();
        let mut toks = std::mem::take(current);
        let mut truncated = Vec::new();
        for t in &mut toks {
            truncate_identifier(t, &mut truncated);
        }
        let mut stmt = parse_one(stmt_text, toks, &lines, &source)?;
        stmt.truncated = truncated;
        out.push(stmt);
        Ok(())
    };
    for tok in tokens {
        match &tok.token {
            Token::Whitespace(_) => {}
            // PostgreSQL's scanner refuses `""` wherever it stands.
            Token::Word(w) if w.quote_style == Some('"') && w.value.is_empty() => {
                return Err(Error::Syntax(
                    "zero-length delimited identifier at or near \"\"\"\"".into(),
                ));
            }
            Token::SemiColon => {
                let end = lines.offset(tok.span.start);
                if !current.is_empty() {
                    flush(&mut current, end, first_start.take(), &mut out)?;
                }
                first_start = None;
            }
            _ => {
                if current.is_empty() {
                    first_start = Some(tok.span.start);
                }
                current.push(tok);
            }
        }
    }
    if !current.is_empty() {
        flush(&mut current, text.len(), first_start, &mut out)?;
    }
    if out.is_empty() {
        out.push(ParsedStmt {
            text: String::new(),
            stmt: Stmt::Empty,
            windows: vec![],
            source: text.into(),
            copy_options: None,
            truncated: vec![],
        });
    }
    Ok(out)
}

fn tokenizer_message(m: &str) -> String {
    let m = match m.find(" at Line: ") {
        Some(end) => &m[..end],
        None => m,
    };
    if m.contains("Unterminated string literal") {
        "unterminated quoted string".into()
    } else {
        format!("syntax error: {m}")
    }
}

/// A cursor over one statement's tokens (no whitespace).
pub(crate) struct Toks {
    toks: Vec<TokenWithSpan>,
    i: usize,
}

impl Toks {
    fn new(toks: Vec<TokenWithSpan>) -> Self {
        Toks { toks, i: 0 }
    }
    fn peek(&self) -> &Token {
        self.toks
            .get(self.i)
            .map(|t| &t.token)
            .unwrap_or(&Token::EOF)
    }
    fn peek_at(&self, n: usize) -> &Token {
        self.toks
            .get(self.i + n)
            .map(|t| &t.token)
            .unwrap_or(&Token::EOF)
    }
    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        self.i += 1;
        t
    }
    fn is_word(&self, kw: &str) -> bool {
        word_is(self.peek(), kw)
    }
    fn eat_word(&mut self, kw: &str) -> bool {
        if self.is_word(kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_word(&mut self, kw: &str) -> Result<()> {
        if self.eat_word(kw) {
            Ok(())
        } else {
            Err(syntax_near(self.peek()))
        }
    }
    fn eat(&mut self, t: &Token) -> bool {
        if self.peek() == t {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, t: &Token) -> Result<()> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(syntax_near(self.peek()))
        }
    }
    fn expect_end(&self) -> Result<()> {
        match self.peek() {
            Token::EOF => Ok(()),
            t => Err(syntax_near(t)),
        }
    }
    /// An identifier, normalised (lower-cased unless quoted).
    fn ident(&mut self) -> Result<String> {
        match self.peek().clone() {
            Token::Word(w) => {
                self.i += 1;
                Ok(normalize_word(&w.value, w.quote_style))
            }
            t => Err(syntax_near(&t)),
        }
    }
    /// `name[.name...]`, normalised and joined with dots.
    fn object_name(&mut self) -> Result<String> {
        let mut name = self.ident()?;
        while self.peek() == &Token::Period {
            self.i += 1;
            name.push('.');
            name.push_str(&self.ident()?);
        }
        Ok(name)
    }
    /// The tokens not read yet, taken out (the cursor is then at the end).
    fn take_rest(&mut self) -> Vec<TokenWithSpan> {
        let i = self.i.min(self.toks.len());
        self.toks.drain(i..).collect()
    }
    /// Where the next token starts, if there is one.
    fn here(&self) -> Option<Location> {
        self.toks.get(self.i).map(|t| t.span.start)
    }
}

fn word_is(t: &Token, kw: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
}

/// An identifier as PostgreSQL folds it: lower case unless quoted.
pub(crate) fn normalize_word(value: &str, quote: Option<char>) -> String {
    if quote.is_some() {
        value.to_string()
    } else {
        value.to_lowercase()
    }
}

fn string_literal(t: &Token) -> Option<String> {
    match t {
        Token::SingleQuotedString(s)
        | Token::EscapedStringLiteral(s)
        | Token::NationalStringLiteral(s) => Some(s.clone()),
        Token::DollarQuotedString(d) => Some(d.value.clone()),
        _ => None,
    }
}

/// The HINT of every syntax error inside a window clause.
pub(crate) const WINDOW_CLAUSE_HINT: &str = "A window clause is [RANGE BY 'interval' [SLIDE BY 'interval'] [START AT 'timestamp'] [SLACK 'interval']], after a stream in FROM.";

/// A syntax error of a window clause at `loc` (the token it stopped on), with the clause's
/// shape as its HINT.
fn window_error(e: Error, loc: Option<Location>, lines: &Lines) -> Error {
    if !matches!(e.kind(), Error::Syntax(_)) {
        return e;
    }
    let e = match (e.position(), loc) {
        (None, Some(loc)) => e.at(lines.position(loc)),
        _ => e,
    };
    e.with_hint(WINDOW_CLAUSE_HINT)
}

/// Cut the window clauses out of `toks`. Errors (42601, at the token where the clause goes
/// wrong, with [`WINDOW_CLAUSE_HINT`]): a clause that does not follow a stream, lacks its
/// `]` or is misspelt (`[RANG BY`, `SLIDE '10 minutes'`).
fn cut_windows(
    toks: Vec<TokenWithSpan>,
    lines: &Lines,
) -> Result<(Vec<TokenWithSpan>, Vec<RawWindow>)> {
    let mut kept: Vec<TokenWithSpan> = Vec::with_capacity(toks.len());
    let mut windows = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let is_window = toks[i].token == Token::LBracket
            && toks.get(i + 1).is_some_and(|t| word_is(&t.token, "RANGE"));
        // `[RANG BY ...`: a word that is not RANGE where a window clause's RANGE goes.
        let misspelt = !is_window
            && toks[i].token == Token::LBracket
            && matches!(kept.last().map(|t| &t.token), Some(Token::Word(_)))
            && toks
                .get(i + 1)
                .is_some_and(|t| matches!(t.token, Token::Word(_)))
            && toks.get(i + 2).is_some_and(|t| word_is(&t.token, "BY"));
        if misspelt {
            let word = &toks[i + 1];
            return Err(window_error(
                Error::Syntax(format!("syntax error at or near \"{}\"", word.token)),
                Some(word.span.start),
                lines,
            ));
        }
        if !is_window {
            kept.push(toks[i].clone());
            i += 1;
            continue;
        }
        let after = match kept.last() {
            Some(TokenWithSpan {
                token: Token::Word(_),
                span,
            }) => span.start,
            _ => return Err(window_error(
                Error::Syntax(
                    "syntax error at or near \"[\": a window clause must follow a stream in FROM"
                        .into(),
                ),
                Some(toks[i].span.start),
                lines,
            )),
        };
        let end = toks[i..]
            .iter()
            .position(|t| t.token == Token::RBracket)
            .map(|p| p + i);
        let Some(end) = end else {
            return Err(window_error(
                Error::Syntax(
                    "syntax error: window clause \"[RANGE BY ...\" is missing its \"]\"".into(),
                ),
                Some(toks[i].span.start),
                lines,
            ));
        };
        let mut inner = Toks::new(toks[i + 1..end].to_vec());
        let window = parse_window_clause(&mut inner, after)
            .map_err(|e| window_error(e, inner.here().or(Some(toks[end].span.start)), lines))?;
        windows.push(window);
        i = end + 1;
    }
    Ok((kept, windows))
}

/// A window clause's value and where its string starts.
fn window_value(t: &mut Toks) -> Result<(String, Option<Location>)> {
    // Allow a type keyword before the string: `INTERVAL '1 hour'`, `TIMESTAMP '...'`.
    if matches!(t.peek(), Token::Word(_)) && string_literal(t.peek_at(1)).is_some() {
        t.next();
    }
    let at = t.here();
    // Not consumed on error, so the error's position is the token's.
    let text = string_literal(t.peek()).ok_or_else(|| syntax_near(t.peek()))?;
    t.next();
    Ok((text, at))
}

fn parse_window_clause(t: &mut Toks, after: Location) -> Result<RawWindow> {
    t.expect_word("RANGE")?;
    t.expect_word("BY")?;
    let (range, range_at) = window_value(t)?;
    let mut w = RawWindow {
        after,
        range,
        slide: None,
        start: None,
        slack: None,
        value_at: [range_at, None, None, None],
    };
    if t.eat_word("SLIDE") {
        t.expect_word("BY")?;
        let (slide, at) = window_value(t)?;
        w.slide = Some(slide);
        w.value_at[1] = at;
    }
    if t.eat_word("START") {
        t.expect_word("AT")?;
        let (start, at) = window_value(t)?;
        w.start = Some(start);
        w.value_at[2] = at;
    }
    if t.eat_word("SLACK") {
        let (slack, at) = window_value(t)?;
        w.slack = Some(slack);
        w.value_at[3] = at;
    }
    t.expect_end()?;
    Ok(w)
}

fn parse_one(
    text: String,
    toks: Vec<TokenWithSpan>,
    lines: &Lines,
    source: &std::sync::Arc<str>,
) -> Result<ParsedStmt> {
    let end = toks.last().map(|t| t.span.end);
    let (toks, windows) = cut_windows(toks, lines)?;
    let (toks, copy_options) = match toks.first() {
        Some(t) if word_is(&t.token, "COPY") => cut_copy_options(toks)?,
        _ => (toks, None),
    };
    let mut t = Toks::new(toks);
    let mut stmt = parse_stmt(&mut t, lines).map_err(|e| {
        // An error of tcq's own parsing is at the token it stopped on (or the end).
        if e.position().is_some() || !matches!(e.kind(), Error::Syntax(_)) {
            return e;
        }
        match t.here().or(end) {
            Some(loc) => e.at(lines.position(loc)),
            None => e,
        }
    })?;
    sinks::fill_text(&mut stmt, lines, source, end);
    Ok(ParsedStmt {
        text,
        stmt,
        windows,
        copy_options,
        source: source.clone(),
        truncated: vec![],
    })
}

fn parse_stmt(t: &mut Toks, lines: &Lines) -> Result<Stmt> {
    let first = match t.peek() {
        Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
        _ => String::new(),
    };
    let t = &mut *t;
    Ok(match first.as_str() {
        "CREATE" if word_is(t.peek_at(1), "STREAM") => parse_create_stream(t, lines)?,
        "DROP" if word_is(t.peek_at(1), "STREAM") => parse_drop_stream(t)?,
        "CREATE" if word_is(t.peek_at(1), "SINK") => sinks::create_sink(t, lines)?,
        "DROP" if word_is(t.peek_at(1), "SINK") => sinks::drop_sink(t)?,
        "ALTER" if is_owner_to(t) => parse_alter_owner(t)?,
        "ALTER" if word_is(t.peek_at(1), "STREAM") => parse_alter_stream(t)?,
        "CREATE" | "ALTER" | "DROP" if is_role_word(t.peek_at(1)) => parse_role(t)?,
        "GRANT" | "REVOKE" => parse_grant(t)?,
        "FETCH" | "MOVE" => parse_fetch(t)?,
        "CLOSE" => parse_close(t)?,
        "BEGIN" | "START" | "COMMIT" | "END" | "ROLLBACK" | "ABORT" => parse_transaction(t)?,
        "SAVEPOINT" | "RELEASE" => parse_savepoint(t)?,
        "SET" => parse_set(t)?,
        "RESET" => parse_reset(t)?,
        "SHOW" => parse_show(t)?,
        "DECLARE" => parse_declare(t, lines)?,
        "EXPLAIN" => parse_explain(t, lines)?,
        _ => Stmt::Ast(Box::new(parse_sql(t.take_rest(), lines)?)),
    })
}

/// One COPY option as written: its name (folded to lower case unless quoted) and value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CopyItem {
    pub(crate) name: String,
    pub(crate) value: CopyValue,
}

/// The value of a COPY option.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CopyValue {
    /// No value (`HEADER`, `LIVE`, `FREEZE`).
    None,
    /// A string, a number or a word (folded to lower case unless quoted), as text.
    Text(String),
    /// A parenthesised column list (`FORCE_NOT_NULL (a, b)`).
    List(Vec<String>),
    /// `*` (`FORCE_QUOTE *`).
    All,
}

/// Cut a COPY statement's options (everything after `FROM STDIN` / `TO STDOUT`, or after
/// a file name or PROGRAM, which the binder refuses) out of its tokens, read as
/// PostgreSQL's grammar reads them: `[WITH] ( name [value] [, ...] )`, or the legacy
/// words (`BINARY`, `CSV`, `HEADER`, `FREEZE`, `DELIMITER [AS] 's'`, `NULL [AS] 's'`,
/// `QUOTE [AS] 's'`, `ESCAPE [AS] 's'`, `ENCODING 's'`, `FORCE QUOTE cols|*`,
/// `FORCE NOT NULL cols`, `FORCE NULL cols`). Errors: 42601 for anything else.
fn cut_copy_options(
    mut toks: Vec<TokenWithSpan>,
) -> Result<(Vec<TokenWithSpan>, Option<Vec<CopyItem>>)> {
    // The first FROM or TO outside parentheses, then its target.
    let mut depth = 0i32;
    let mut dir = None;
    for (i, t) in toks.iter().enumerate() {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            tok if depth == 0 && (word_is(tok, "FROM") || word_is(tok, "TO")) => {
                dir = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(dir) = dir else {
        return Ok((toks, None));
    };
    let mut at = dir + 1;
    if toks.get(at).is_some_and(|t| word_is(&t.token, "PROGRAM")) {
        at += 1;
    }
    at += 1; // STDIN, STDOUT or the file name
    if at >= toks.len() {
        return Ok((toks, Some(Vec::new())));
    }
    let rest: Vec<TokenWithSpan> = toks.drain(at..).collect();
    let mut r = OptToks { toks: &rest, i: 0 };
    r.eat_word("WITH");
    let items = if r.peek() == &Token::LParen {
        r.i += 1;
        let mut items = Vec::new();
        loop {
            items.push(r.modern_item()?);
            match r.next() {
                Token::Comma => continue,
                Token::RParen => break,
                t => return Err(syntax_near(t)),
            }
        }
        items
    } else {
        let mut items = Vec::new();
        while r.peek() != &Token::EOF {
            items.push(r.legacy_item()?);
        }
        items
    };
    match r.peek() {
        Token::EOF => Ok((toks, Some(items))),
        t => Err(syntax_near(t)),
    }
}

/// A cursor over the option tokens of a COPY statement.
struct OptToks<'a> {
    toks: &'a [TokenWithSpan],
    i: usize,
}

impl OptToks<'_> {
    fn peek(&self) -> &Token {
        self.toks.get(self.i).map_or(&Token::EOF, |t| &t.token)
    }

    fn next(&mut self) -> &Token {
        let i = self.i;
        self.i += 1;
        self.toks.get(i).map_or(&Token::EOF, |t| &t.token)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let hit = word_is(self.peek(), w);
        if hit {
            self.i += 1;
        }
        hit
    }

    /// `name [value]` of the parenthesised list.
    fn modern_item(&mut self) -> Result<CopyItem> {
        let name = match self.next() {
            Token::Word(w) => normalize_word(&w.value, w.quote_style),
            t => return Err(syntax_near(t)),
        };
        let value = match self.peek() {
            Token::Comma | Token::RParen => CopyValue::None,
            Token::Mul => {
                self.i += 1;
                CopyValue::All
            }
            Token::LParen => {
                self.i += 1;
                CopyValue::List(self.column_list_rest()?)
            }
            _ => CopyValue::Text(self.text_value()?),
        };
        Ok(CopyItem { name, value })
    }

    /// A string, number or word value, as text.
    fn text_value(&mut self) -> Result<String> {
        let sign = match self.peek() {
            Token::Minus => {
                self.i += 1;
                "-"
            }
            Token::Plus => {
                self.i += 1;
                "+"
            }
            _ => "",
        };
        match self.next() {
            Token::SingleQuotedString(s)
            | Token::EscapedStringLiteral(s)
            | Token::NationalStringLiteral(s)
                if sign.is_empty() =>
            {
                Ok(s.clone())
            }
            Token::Number(n, _) => Ok(format!("{sign}{n}")),
            Token::Word(w) if sign.is_empty() => Ok(normalize_word(&w.value, w.quote_style)),
            t => Err(syntax_near(t)),
        }
    }

    /// The rest of `(col, ...)` after its `(`.
    fn column_list_rest(&mut self) -> Result<Vec<String>> {
        let mut cols = Vec::new();
        loop {
            match self.next() {
                Token::Word(w) => cols.push(normalize_word(&w.value, w.quote_style)),
                t => return Err(syntax_near(t)),
            }
            match self.next() {
                Token::Comma => continue,
                Token::RParen => return Ok(cols),
                t => return Err(syntax_near(t)),
            }
        }
    }

    /// A column list without parentheses (legacy `FORCE NOT NULL a, b`).
    fn bare_column_list(&mut self) -> Result<Vec<String>> {
        let mut cols = Vec::new();
        loop {
            match self.next() {
                Token::Word(w) => cols.push(normalize_word(&w.value, w.quote_style)),
                t => return Err(syntax_near(t)),
            }
            if self.peek() != &Token::Comma {
                return Ok(cols);
            }
            self.i += 1;
        }
    }

    /// A string constant (after an optional AS), for the legacy options.
    fn sconst(&mut self) -> Result<String> {
        self.eat_word("AS");
        match self.next() {
            Token::SingleQuotedString(s)
            | Token::EscapedStringLiteral(s)
            | Token::NationalStringLiteral(s) => Ok(s.clone()),
            t => Err(syntax_near(t)),
        }
    }

    /// One legacy option word (PostgreSQL's `copy_opt_item`), as the list item it means.
    fn legacy_item(&mut self) -> Result<CopyItem> {
        let item = |name: &str, value: CopyValue| CopyItem {
            name: name.into(),
            value,
        };
        let text = |s: &str| CopyValue::Text(s.into());
        let word = match self.next() {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            t => return Err(syntax_near(t)),
        };
        Ok(match word.as_str() {
            "BINARY" => item("format", text("binary")),
            "CSV" => item("format", text("csv")),
            "HEADER" => item("header", CopyValue::None),
            "FREEZE" => item("freeze", CopyValue::None),
            "DELIMITER" => item("delimiter", CopyValue::Text(self.sconst()?)),
            "NULL" => item("null", CopyValue::Text(self.sconst()?)),
            "QUOTE" => item("quote", CopyValue::Text(self.sconst()?)),
            "ESCAPE" => item("escape", CopyValue::Text(self.sconst()?)),
            "ENCODING" => match self.next() {
                Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => {
                    item("encoding", CopyValue::Text(s.clone()))
                }
                t => return Err(syntax_near(t)),
            },
            "FORCE" => {
                if self.eat_word("QUOTE") {
                    if self.peek() == &Token::Mul {
                        self.i += 1;
                        item("force_quote", CopyValue::All)
                    } else {
                        item("force_quote", CopyValue::List(self.bare_column_list()?))
                    }
                } else if self.eat_word("NOT") {
                    if !self.eat_word("NULL") {
                        return Err(syntax_near(self.peek()));
                    }
                    item("force_not_null", CopyValue::List(self.bare_column_list()?))
                } else if self.eat_word("NULL") {
                    item("force_null", CopyValue::List(self.bare_column_list()?))
                } else {
                    return Err(syntax_near(self.peek()));
                }
            }
            _ => {
                let t = &self.toks[self.i - 1].token;
                return Err(syntax_near(t));
            }
        })
    }
}

/// How deep sqlparser may recurse into one statement (parentheses, calls, subqueries,
/// CASE, NOT): as deep as the binder lets expressions nest
/// ([`super::bind::EXPRESSION_DEPTH_MAX`]), plus the levels a statement takes around them.
const PARSE_DEPTH_MAX: usize = super::bind::EXPRESSION_DEPTH_MAX + 50;

/// The stack a parse to [`PARSE_DEPTH_MAX`] runs on (sqlparser's recursion is not
/// instrumented, so it gets all of it at once; only the pages it touches are used).
const DEEP_PARSE_STACK_BYTES: usize = 256 << 20;

/// Set operations (UNION, INTERSECT, EXCEPT) one statement may hold: each nests the parsed
/// statement one level deeper, and PostgreSQL too refuses a chain of about 10,000 (54001).
pub(crate) const SET_OPERATIONS_MAX: usize = 10_000;

/// Parse tokens as exactly one ordinary statement with sqlparser. Most statements parse
/// within sqlparser's default depth (50) on the caller's stack. sqlparser reports a
/// statement that goes past its depth as such in most places, but where it tries
/// alternatives (CASE, NOT) as a syntax error or as a shorter statement that leaves tokens
/// over; so a statement that fails in any way is parsed again, to [`PARSE_DEPTH_MAX`], on a
/// stack of [`DEEP_PARSE_STACK_BYTES`], which finds the same error when it was one.
/// Errors: 42601 with PostgreSQL's wording; 54001 past [`SET_OPERATIONS_MAX`], or for a
/// failure of a statement that may nest past [`PARSE_DEPTH_MAX`].
fn parse_sql(toks: Vec<TokenWithSpan>, lines: &Lines) -> Result<ast::Statement> {
    let set_operations = toks
        .iter()
        .filter(|t| {
            ["UNION", "INTERSECT", "EXCEPT"]
                .iter()
                .any(|k| word_is(&t.token, k))
        })
        .count();
    if set_operations > SET_OPERATIONS_MAX {
        return Err(Error::StatementTooComplex(format!(
            "stack depth limit exceeded: a statement may hold at most {SET_OPERATIONS_MAX} \
             set operations (UNION, INTERSECT, EXCEPT), not {set_operations}"
        )));
    }
    special_form_arity(&toks, lines)?;
    let dialect = PostgreSqlDialect {};
    let toks = mark_between_symmetric(toks, &dialect);
    let toks = like_all_subquery(toks);
    let toks = substring_similar(toks);
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(toks);
    let first = parser.parse_statement();
    if first.is_ok() && parser.peek_token().token == Token::EOF {
        return finish_parse(parser, first, lines);
    }
    let toks = parser.into_tokens();
    let too_deep = nesting_bound(&toks) > PARSE_DEPTH_MAX;
    let r = stacker::grow(DEEP_PARSE_STACK_BYTES, || {
        let mut parser = Parser::new(&dialect)
            .with_recursion_limit(PARSE_DEPTH_MAX)
            .with_tokens_with_locations(toks);
        let r = parser.parse_statement();
        finish_parse(parser, r, lines)
    });
    match r {
        Err(e) if too_deep && !matches!(e.kind(), Error::StatementTooComplex(_)) => {
            Err(Error::StatementTooComplex(format!(
                "stack depth limit exceeded: the statement may nest more than \
                 {PARSE_DEPTH_MAX} levels deep"
            )))
        }
        r => r,
    }
}

/// PostgreSQL's grammar gives `COALESCE`, `GREATEST` and `LEAST` one or more arguments
/// and `NULLIF` exactly two: any other count is a syntax error (42601) at the token where
/// the list goes wrong (the `)` of an empty list, the `)` after NULLIF's first argument or
/// the `,` after its second), not a missing function. Only the bare keywords are the
/// special forms (not `"coalesce"(...)` nor `schema.coalesce(...)`).
fn special_form_arity(toks: &[TokenWithSpan], lines: &Lines) -> Result<()> {
    for i in 0..toks.len() {
        let Token::Word(w) = &toks[i].token else {
            continue;
        };
        let at_least_one = ["COALESCE", "GREATEST", "LEAST"]
            .iter()
            .any(|k| w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
        let nullif = w.quote_style.is_none() && w.value.eq_ignore_ascii_case("NULLIF");
        let qualified = i > 0 && toks[i - 1].token == Token::Period;
        if !(at_least_one || nullif) || qualified {
            continue;
        }
        if toks.get(i + 1).map(|t| &t.token) != Some(&Token::LParen) {
            continue;
        }
        let (mut depth, mut args) = (0usize, 0usize);
        let mut empty = true;
        for t in &toks[i + 2..] {
            let bad = match &t.token {
                Token::LParen | Token::LBracket => {
                    depth += 1;
                    empty = false;
                    false
                }
                Token::RParen | Token::RBracket if depth > 0 => {
                    depth -= 1;
                    false
                }
                Token::RParen => {
                    args += usize::from(!empty);
                    if empty || (nullif && args < 2) {
                        true
                    } else {
                        break;
                    }
                }
                Token::Comma if depth == 0 => {
                    args += 1;
                    empty = true;
                    nullif && args >= 2
                }
                _ => {
                    empty = false;
                    false
                }
            };
            if bad {
                return Err(syntax_near(&t.token).at(lines.position(t.span.start)));
            }
        }
    }
    Ok(())
}

/// `SUBSTRING(s SIMILAR pattern ESCAPE esc)` in tokens sqlparser reads: the same call
/// spelled `SUBSTRING(s FROM pattern FOR esc)`, which PostgreSQL takes as the same SQL
/// regular expression form (a text pattern makes it one, see the binder).
fn substring_similar(mut toks: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut i = 0;
    while i + 1 < toks.len() {
        let call = matches!(&toks[i].token, Token::Word(w)
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("SUBSTRING"))
            && toks[i + 1].token == Token::LParen;
        i += 1;
        if !call {
            continue;
        }
        let mut depth = 0usize;
        let mut similar = None;
        for (j, tok) in toks.iter_mut().enumerate().skip(i + 1) {
            match &tok.token {
                Token::LParen => depth += 1,
                Token::RParen if depth == 0 => break,
                Token::RParen => depth -= 1,
                t if depth == 0 && similar.is_none() && word_is(t, "SIMILAR") => similar = Some(j),
                t if depth == 0 && similar.is_some() && word_is(t, "ESCAPE") => {
                    *tok = TokenWithSpan::new(Token::make_keyword("FOR"), tok.span);
                    break;
                }
                _ => {}
            }
        }
        if let Some(j) = similar {
            let span = toks[j].span;
            toks[j] = TokenWithSpan::new(Token::make_keyword("FROM"), span);
        }
    }
    toks
}

/// An upper bound of how deep `toks` can nest: the deepest parentheses and brackets, plus
/// every CASE and NOT (which nest without them).
fn nesting_bound(toks: &[TokenWithSpan]) -> usize {
    let (mut depth, mut deepest, mut words) = (0usize, 0usize, 0usize);
    for t in toks {
        match &t.token {
            Token::LParen | Token::LBracket => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
            tok if word_is(tok, "CASE") || word_is(tok, "NOT") => words += 1,
            _ => {}
        }
    }
    deepest + words
}

/// The statement `r` that `parser` parsed, or its error placed in the text; the statement
/// must end the tokens.
fn finish_parse(
    parser: Parser,
    r: std::result::Result<ast::Statement, ParserError>,
    lines: &Lines,
) -> Result<ast::Statement> {
    let stmt = r.map_err(|e| {
        let at = parser_error_location(&e).map(|loc| lines.position(loc));
        let e = map_parser_error(e);
        match at {
            Some(p) => e.at(p),
            None => e,
        }
    })?;
    let next = parser.peek_token();
    if next.token != Token::EOF {
        return Err(syntax_near(&next.token).at(lines.position(next.span.start)));
    }
    Ok(stmt)
}

/// The function a `BETWEEN SYMMETRIC` low bound is wrapped in before sqlparser (which has
/// no SYMMETRIC) reads the statement: a quoted name no PostgreSQL function carries, which
/// [`unmark_between_symmetric`] takes off again.
const SYMMETRIC_MARK: &str = "BETWEEN SYMMETRIC";

/// `x [NOT] BETWEEN SYMMETRIC a AND b` in tokens sqlparser reads: the SYMMETRIC becomes a
/// call of [`SYMMETRIC_MARK`] around the low bound `a`, whose extent a parse of the tokens
/// after it finds; `ASYMMETRIC` (the default) is dropped. The rightmost comes first, so a
/// low bound holding another BETWEEN SYMMETRIC is already marked when its own extent is
/// parsed. A low bound that does not parse is left alone, for the parser's own error.
fn mark_between_symmetric(
    mut toks: Vec<TokenWithSpan>,
    dialect: &PostgreSqlDialect,
) -> Vec<TokenWithSpan> {
    let solid = |t: &TokenWithSpan| !matches!(t.token, Token::Whitespace(_));
    let marks: Vec<usize> = (0..toks.len())
        .filter(|&i| word_is(&toks[i].token, "SYMMETRIC") || word_is(&toks[i].token, "ASYMMETRIC"))
        .filter(|&i| {
            toks[..i]
                .iter()
                .rev()
                .find(|t| solid(t))
                .is_some_and(|t| word_is(&t.token, "BETWEEN"))
        })
        .collect();
    for &i in marks.iter().rev() {
        if word_is(&toks[i].token, "ASYMMETRIC") {
            toks.remove(i);
            continue;
        }
        let mut rest = toks[i + 1..].to_vec();
        rest.push(TokenWithSpan::wrap(Token::EOF));
        let mut p = Parser::new(dialect).with_tokens_with_locations(rest);
        if p.parse_subexpr(dialect.between_low_bound_precedence())
            .is_err()
        {
            continue;
        }
        let end = i + 1 + p.index();
        let span = toks[i].span;
        let at = |token| TokenWithSpan::new(token, span);
        toks.insert(end, at(Token::RParen));
        toks[i] = at(Token::make_word(SYMMETRIC_MARK, Some('"')));
        toks.insert(i + 1, at(Token::LParen));
    }
    toks
}

/// `x [NOT] LIKE|ILIKE ALL|SOME (SELECT ...)` in tokens sqlparser reads: it takes
/// `ALL (...)` after LIKE for a call of a function `all`, whose argument cannot be a
/// subquery, so the subquery is wrapped in `ARRAY(...)`: ALL over the array of the
/// subquery's rows is the same test (see `like_quantifier`). Rightmost first, so an
/// outer subquery's closing parenthesis is found after the inner ones are wrapped.
fn like_all_subquery(mut toks: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid = |t: &TokenWithSpan| !matches!(t.token, Token::Whitespace(_));
    let prev = |toks: &[TokenWithSpan], i: usize| toks[..i].iter().rposition(solid);
    let opens: Vec<usize> = (0..toks.len())
        .filter(|&i| toks[i].token == Token::LParen)
        .filter(|&i| {
            let Some(q) = prev(&toks, i) else {
                return false;
            };
            let quantifier = ["ALL", "SOME"].iter().any(|k| word_is(&toks[q].token, k));
            let like = prev(&toks, q)
                .is_some_and(|l| ["LIKE", "ILIKE"].iter().any(|k| word_is(&toks[l].token, k)));
            let query = toks[i + 1..].iter().find(|t| solid(t)).is_some_and(|t| {
                ["SELECT", "WITH", "VALUES"]
                    .iter()
                    .any(|k| word_is(&t.token, k))
            });
            quantifier && like && query
        })
        .collect();
    for &i in opens.iter().rev() {
        let mut depth = 0usize;
        let close = (i..toks.len()).find(|&j| {
            match toks[j].token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        let Some(close) = close else {
            continue;
        };
        let span = toks[i].span;
        let at = |token| TokenWithSpan::new(token, span);
        toks.insert(close, at(Token::RParen));
        toks.insert(i + 1, at(Token::LParen));
        toks.insert(i + 1, at(Token::make_keyword("ARRAY")));
    }
    toks
}

/// The expression PostgreSQL reads `x [NOT] BETWEEN SYMMETRIC a AND b` as (marked by
/// [`mark_between_symmetric`]): `(x BETWEEN a AND b) OR (x BETWEEN b AND a)`, and
/// `(x NOT BETWEEN a AND b) AND (x NOT BETWEEN b AND a)`; `None` for any other expression.
pub(crate) fn unmark_between_symmetric(e: &ast::Expr) -> Option<ast::Expr> {
    let ast::Expr::Between {
        expr,
        negated,
        low,
        high,
    } = e
    else {
        return None;
    };
    let ast::Expr::Function(f) = &**low else {
        return None;
    };
    let [ast::ObjectNamePart::Identifier(name)] = f.name.0.as_slice() else {
        return None;
    };
    if name.value != SYMMETRIC_MARK || name.quote_style != Some('"') {
        return None;
    }
    let ast::FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(a))] = list.args.as_slice() else {
        return None;
    };
    let between = |lo: &ast::Expr, hi: &ast::Expr| {
        ast::Expr::Nested(Box::new(ast::Expr::Between {
            expr: expr.clone(),
            negated: *negated,
            low: Box::new(lo.clone()),
            high: Box::new(hi.clone()),
        }))
    };
    Some(ast::Expr::BinaryOp {
        left: Box::new(between(a, high)),
        op: if *negated {
            ast::BinaryOperator::And
        } else {
            ast::BinaryOperator::Or
        },
        right: Box::new(between(high, a)),
    })
}

/// The `Line: l, Column: c` sqlparser writes at the end of its messages.
fn parser_error_location(e: &ParserError) -> Option<Location> {
    let (ParserError::ParserError(m) | ParserError::TokenizerError(m)) = e else {
        return None;
    };
    let rest = &m[m.rfind(" at Line: ")? + 10..];
    let (line, column) = rest.split_once(", Column: ")?;
    let column: String = column.chars().take_while(|c| c.is_ascii_digit()).collect();
    Some(Location::new(line.parse().ok()?, column.parse().ok()?))
}

/// A word that starts a column constraint in PostgreSQL's column definitions.
fn is_constraint_word(t: &Token) -> bool {
    [
        "NOT",
        "NULL",
        "DEFAULT",
        "PRIMARY",
        "UNIQUE",
        "CHECK",
        "REFERENCES",
        "CONSTRAINT",
        "GENERATED",
    ]
    .iter()
    .any(|k| word_is(t, k))
}

fn parse_create_stream(t: &mut Toks, lines: &Lines) -> Result<Stmt> {
    t.expect_word("CREATE")?;
    t.expect_word("STREAM")?;
    let if_not_exists = sinks::eat_if_not_exists(t)?;
    let name = t.object_name()?;
    if t.peek() != &Token::LParen {
        return sinks::create_derived(t, name, if_not_exists, lines);
    }
    t.expect(&Token::LParen)?;
    let mut columns = Vec::new();
    loop {
        let col = t.ident()?;
        let mut type_name = String::new();
        let mut depth = 0usize;
        let mut timestamp_column = false;
        loop {
            match t.peek().clone() {
                Token::Comma | Token::RParen if depth == 0 => break,
                Token::EOF => return Err(syntax_near(&Token::EOF)),
                tok if word_is(&tok, "TIMESTAMPCOLUMN") && depth == 0 => {
                    if timestamp_column {
                        return Err(Error::Syntax(format!(
                            "TIMESTAMPCOLUMN given twice for column \"{col}\""
                        )));
                    }
                    timestamp_column = true;
                    t.next();
                }
                tok if depth == 0 && !type_name.is_empty() && is_constraint_word(&tok) => {
                    return Err(Error::FeatureNotSupported(format!(
                        "column constraints are not supported in a stream (\"{col}\" has {}): \
                         a stream keeps no rows to constrain; stored tables take NOT NULL, \
                         DEFAULT and keys (CREATE TABLE)",
                        tok.to_string().to_uppercase()
                    )));
                }
                tok => {
                    if timestamp_column {
                        return Err(syntax_near(&tok));
                    }
                    match tok {
                        Token::LParen => depth += 1,
                        Token::RParen => depth -= 1,
                        _ => {}
                    }
                    if !type_name.is_empty()
                        && !matches!(tok, Token::LParen | Token::RParen | Token::Comma)
                        && !type_name.ends_with('(')
                        && !type_name.ends_with(',')
                    {
                        type_name.push(' ');
                    }
                    type_name.push_str(&tok.to_string());
                    t.next();
                }
            }
        }
        if type_name.is_empty() {
            return Err(syntax_near(t.peek()));
        }
        columns.push(RawColumn {
            name: col,
            type_name,
            timestamp_column,
        });
        if t.eat(&Token::Comma) {
            continue;
        }
        t.expect(&Token::RParen)?;
        break;
    }
    let mut archived = false;
    let mut slack = None;
    let mut retention = None;
    let mut options = Vec::new();
    loop {
        if t.eat_word("TYPE") {
            if t.eat_word("ARCHIVED") {
                archived = true;
            } else if !t.eat_word("UNARCHIVED") {
                return Err(syntax_near(t.peek()));
            }
        } else if t.eat_word("WITH") {
            for (option, value) in parse_stream_options(t)? {
                match option.as_str() {
                    "slack" => slack = Some(value),
                    "retention" => retention = Some(value),
                    _ => options.push((option, value)),
                }
            }
        } else {
            break;
        }
    }
    t.expect_end()?;
    Ok(Stmt::CreateStream {
        name,
        columns,
        archived,
        if_not_exists,
        slack,
        retention,
        options,
    })
}

/// `WITH (name = value, ...)` of CREATE STREAM (and the list of ALTER STREAM ... SET): the
/// options and their values as text. A name may be dotted (`properties.group.id`); a value
/// is a string, a number, or a word (`true`, `earliest`). Which names mean something is the
/// binder's to say (`connect::options`); a name given twice is 42601, as PostgreSQL's
/// "conflicting or redundant options".
fn parse_stream_options(t: &mut Toks) -> Result<Vec<(String, String)>> {
    t.expect(&Token::LParen)?;
    let mut options: Vec<(String, String)> = Vec::new();
    loop {
        let option = t.object_name()?;
        t.expect(&Token::Eq)?;
        let tok = t.next();
        let value = match &tok {
            Token::Number(n, _) => n.clone(),
            Token::Minus => match t.next() {
                Token::Number(n, _) => format!("-{n}"),
                other => return Err(syntax_near(&other)),
            },
            Token::Word(w) if w.quote_style.is_none() => w.value.to_lowercase(),
            _ => string_literal(&tok).ok_or_else(|| syntax_near(&tok))?,
        };
        if options.iter().any(|(o, _)| *o == option) {
            return Err(Error::Syntax(format!(
                "conflicting or redundant options: \"{option}\" given twice"
            )));
        }
        options.push((option, value));
        if !t.eat(&Token::Comma) {
            break;
        }
    }
    t.expect(&Token::RParen)?;
    Ok(options)
}

/// `ALTER STREAM name SET (retention = '<interval>')` or `ALTER STREAM name RESET
/// (retention)`; retention is the only option that can change.
fn parse_alter_stream(t: &mut Toks) -> Result<Stmt> {
    t.expect_word("ALTER")?;
    t.expect_word("STREAM")?;
    let name = t.object_name()?;
    for (word, pause) in [("PAUSE", true), ("RESUME", false)] {
        if t.eat_word(word) {
            t.expect_end()?;
            return Ok(Stmt::AlterStreamSource { name, pause });
        }
    }
    let retention = if t.eat_word("SET") {
        let options = parse_stream_options(t)?;
        match options.as_slice() {
            [(o, v)] if o == "retention" => Some(v.clone()),
            _ => {
                return Err(Error::FeatureNotSupported(
                    "ALTER STREAM ... SET changes retention only".into(),
                ))
            }
        }
    } else {
        t.expect_word("RESET")?;
        t.expect(&Token::LParen)?;
        if t.ident()? != "retention" {
            return Err(Error::FeatureNotSupported(
                "ALTER STREAM ... RESET changes retention only".into(),
            ));
        }
        t.expect(&Token::RParen)?;
        None
    };
    t.expect_end()?;
    Ok(Stmt::AlterStreamRetention { name, retention })
}

fn parse_drop_stream(t: &mut Toks) -> Result<Stmt> {
    t.expect_word("DROP")?;
    t.expect_word("STREAM")?;
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
    // CASCADE also drops the derived streams and sinks that read the streams; RESTRICT
    // (the default) refuses to drop a stream they read. Queries of clients are no objects:
    // they end either way.
    let cascade = t.eat_word("CASCADE");
    if !cascade {
        let _ = t.eat_word("RESTRICT");
    }
    t.expect_end()?;
    Ok(Stmt::DropStream {
        names,
        if_exists,
        cascade,
    })
}

/// `ALTER STREAM|TABLE [IF EXISTS] a[.b] OWNER TO ...`?
fn is_owner_to(t: &Toks) -> bool {
    if !(word_is(t.peek_at(1), "STREAM") || word_is(t.peek_at(1), "TABLE")) {
        return false;
    }
    let mut i = 2;
    if word_is(t.peek_at(i), "IF") {
        i += 2;
    }
    i += 1;
    while t.peek_at(i) == &Token::Period {
        i += 2;
    }
    word_is(t.peek_at(i), "OWNER") && word_is(t.peek_at(i + 1), "TO")
}

fn parse_alter_owner(t: &mut Toks) -> Result<Stmt> {
    t.expect_word("ALTER")?;
    let table = t.eat_word("TABLE");
    if !table {
        t.expect_word("STREAM")?;
    }
    if t.eat_word("IF") {
        return Err(Error::FeatureNotSupported(
            "ALTER ... IF EXISTS ... OWNER TO is not supported".into(),
        ));
    }
    let name = t.object_name()?;
    t.expect_word("OWNER")?;
    t.expect_word("TO")?;
    let owner = role_name(t)?;
    t.expect_end()?;
    Ok(Stmt::AlterOwner { table, name, owner })
}

fn is_role_word(t: &Token) -> bool {
    word_is(t, "ROLE") || word_is(t, "USER") || word_is(t, "GROUP")
}

fn role_unsupported(what: &str) -> Error {
    Error::FeatureNotSupported(format!(
        "{what} is not supported: tcq roles have LOGIN, SUPERUSER and PASSWORD only"
    ))
}

/// A role name: an identifier (`CURRENT_USER` and friends are not resolved here).
fn role_name(t: &mut Toks) -> Result<String> {
    match t.peek() {
        Token::SingleQuotedString(_) => Err(syntax_near(t.peek())),
        _ => t.ident(),
    }
}

/// `CREATE|ALTER ROLE|USER name [WITH] option ...` and `DROP ROLE|USER [IF EXISTS] names`.
fn parse_role(t: &mut Toks) -> Result<Stmt> {
    let verb = match t.next() {
        Token::Word(w) => w.value.to_ascii_uppercase(),
        other => return Err(syntax_near(&other)),
    };
    if t.is_word("GROUP") {
        return Err(role_unsupported("a GROUP (role membership)"));
    }
    let user = t.is_word("USER");
    t.next();
    if verb == "DROP" {
        let if_exists = if t.eat_word("IF") {
            t.expect_word("EXISTS")?;
            true
        } else {
            false
        };
        let mut names = vec![role_name(t)?];
        while t.eat(&Token::Comma) {
            names.push(role_name(t)?);
        }
        t.expect_end()?;
        return Ok(Stmt::DropRole { names, if_exists });
    }
    if verb == "CREATE" && t.is_word("MAPPING") {
        return Err(role_unsupported("CREATE USER MAPPING"));
    }
    let name = role_name(t)?;
    if verb == "ALTER" && (t.is_word("RENAME") || t.is_word("SET") || t.is_word("RESET")) {
        return Err(role_unsupported(&format!(
            "ALTER ROLE ... {}",
            t.peek().to_string().to_uppercase()
        )));
    }
    let _ = t.eat_word("WITH");
    let options = parse_role_options(t)?;
    Ok(if verb == "CREATE" {
        Stmt::CreateRole {
            name,
            options,
            user,
        }
    } else {
        Stmt::AlterRole { name, options }
    })
}

fn parse_role_options(t: &mut Toks) -> Result<super::plan::RoleOptions> {
    let mut o = super::plan::RoleOptions::default();
    let conflict = || Error::Syntax("conflicting or redundant options".into());
    loop {
        let word = match t.peek() {
            Token::EOF => return Ok(o),
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            other => return Err(syntax_near(other)),
        };
        t.next();
        match word.as_str() {
            "LOGIN" | "NOLOGIN" => {
                if o.login.replace(word == "LOGIN").is_some() {
                    return Err(conflict());
                }
            }
            "SUPERUSER" | "NOSUPERUSER" => {
                if o.superuser.replace(word == "SUPERUSER").is_some() {
                    return Err(conflict());
                }
            }
            "ENCRYPTED" | "PASSWORD" => {
                if word == "ENCRYPTED" {
                    t.expect_word("PASSWORD")?;
                }
                let value = if t.eat_word("NULL") {
                    None
                } else {
                    let v = string_literal(t.peek()).ok_or_else(|| syntax_near(t.peek()))?;
                    t.next();
                    Some(v)
                };
                if o.password.replace(value).is_some() {
                    return Err(conflict());
                }
            }
            // Without role membership, inheriting means nothing: accepted as PostgreSQL's
            // default.
            "INHERIT" | "NOINHERIT" => {}
            "CREATEDB" | "NOCREATEDB" | "CREATEROLE" | "NOCREATEROLE" | "REPLICATION"
            | "NOREPLICATION" | "BYPASSRLS" | "NOBYPASSRLS" | "CONNECTION" | "VALID" | "IN"
            | "ROLE" | "ADMIN" | "USER" | "SYSID" => {
                return Err(role_unsupported(&format!("role option {word}")))
            }
            _ => return Err(Error::Syntax(format!("syntax error at or near \"{word}\""))),
        }
    }
}

/// `GRANT privileges ON [STREAM|TABLE] names TO roles` and
/// `REVOKE [GRANT OPTION FOR] privileges ON [STREAM|TABLE] names FROM roles [CASCADE|RESTRICT]`.
fn parse_grant(t: &mut Toks) -> Result<Stmt> {
    use super::plan::{Grant, GrantTarget, Privileges};
    let grant = t.eat_word("GRANT");
    if !grant {
        t.expect_word("REVOKE")?;
        if t.is_word("GRANT") && word_is(t.peek_at(1), "OPTION") {
            return Err(Error::FeatureNotSupported(
                "GRANT OPTION is not supported: only owners and superusers grant".into(),
            ));
        }
    }
    let mut privileges = Privileges::default();
    if t.eat_word("ALL") {
        let _ = t.eat_word("PRIVILEGES");
        privileges = Privileges::ALL;
    } else {
        loop {
            let word = match t.peek() {
                Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
                other => return Err(syntax_near(other)),
            };
            let Some((_, _, p)) = Privileges::NAMES.iter().find(|(n, _, _)| *n == word) else {
                if matches!(
                    word.as_str(),
                    "REFERENCES"
                        | "TRIGGER"
                        | "USAGE"
                        | "EXECUTE"
                        | "CREATE"
                        | "CONNECT"
                        | "TEMPORARY"
                        | "TEMP"
                ) {
                    return Err(Error::FeatureNotSupported(format!(
                        "privilege {word} is not supported: streams and tables have SELECT, INSERT, UPDATE, DELETE and TRUNCATE"
                    )));
                }
                return Err(Error::FeatureNotSupported(
                    "granting role membership is not supported: grant privileges ON a stream or table".into(),
                ));
            };
            t.next();
            if t.peek() == &Token::LParen {
                return Err(Error::FeatureNotSupported(
                    "column privileges are not supported".into(),
                ));
            }
            privileges = privileges.union(*p);
            if !t.eat(&Token::Comma) {
                break;
            }
        }
    }
    if !t.eat_word("ON") {
        if t.is_word("TO") || t.is_word("FROM") {
            return Err(Error::FeatureNotSupported(
                "granting role membership is not supported: grant privileges ON a stream or table"
                    .into(),
            ));
        }
        return Err(syntax_near(t.peek()));
    }
    let target = if t.eat_word("STREAM") {
        GrantTarget::Stream
    } else {
        let _ = t.eat_word("TABLE");
        GrantTarget::Relation
    };
    if t.is_word("ALL")
        || t.is_word("SCHEMA")
        || t.is_word("DATABASE")
        || t.is_word("FUNCTION")
        || t.is_word("SEQUENCE")
    {
        let next_is_name_end = matches!(t.peek_at(1), Token::EOF | Token::Comma)
            || word_is(t.peek_at(1), "TO")
            || word_is(t.peek_at(1), "FROM");
        if !next_is_name_end {
            return Err(Error::FeatureNotSupported(format!(
                "GRANT ON {} is not supported: name each stream or table",
                t.peek().to_string().to_uppercase()
            )));
        }
    }
    let mut relations = vec![t.object_name()?];
    while t.eat(&Token::Comma) {
        relations.push(t.object_name()?);
    }
    t.expect_word(if grant { "TO" } else { "FROM" })?;
    let mut grantees = Vec::new();
    loop {
        let _ = t.eat_word("GROUP");
        grantees.push(role_name(t)?);
        if !t.eat(&Token::Comma) {
            break;
        }
    }
    if grant && t.is_word("WITH") {
        return Err(Error::FeatureNotSupported(
            "WITH GRANT OPTION is not supported: only owners and superusers grant".into(),
        ));
    }
    if !grant {
        let _ = t.eat_word("CASCADE") || t.eat_word("RESTRICT");
    }
    if t.is_word("GRANTED") {
        return Err(Error::FeatureNotSupported(
            "GRANTED BY is not supported".into(),
        ));
    }
    t.expect_end()?;
    Ok(Stmt::Grant(Grant {
        grant,
        privileges,
        target,
        relations,
        grantees,
    }))
}

fn count_token(t: &mut Toks) -> Result<Option<u64>> {
    let neg = t.eat(&Token::Minus);
    if let Token::Number(n, _) = t.peek().clone() {
        t.next();
        let v: u64 = n
            .parse()
            .map_err(|_| Error::Syntax(format!("syntax error at or near \"{n}\"")))?;
        if neg {
            return Err(Error::ObjectNotInPrerequisiteState(
                "cursor can only scan forward".into(),
            ));
        }
        return Ok(Some(v));
    }
    if neg {
        return Err(syntax_near(t.peek()));
    }
    Ok(None)
}

fn parse_fetch(t: &mut Toks) -> Result<Stmt> {
    let is_move = word_is(&t.next(), "MOVE");
    let backwards = ["PRIOR", "FIRST", "LAST", "ABSOLUTE", "RELATIVE", "BACKWARD"];
    let mut count = FetchCount::Count(1);
    if backwards.iter().any(|k| t.is_word(k)) {
        // PostgreSQL's answer for a cursor declared without SCROLL (55000); a continuous
        // query's rows are gone once fetched, so no tcq cursor scrolls.
        return Err(Error::ObjectNotInPrerequisiteState(
            "cursor can only scan forward: tcq cursors over continuous queries support FETCH [FORWARD] [n|ALL|NEXT]".into(),
        ));
    }
    if t.eat_word("NEXT") {
    } else if t.eat_word("ALL") {
        count = FetchCount::All;
    } else if t.eat_word("FORWARD") {
        if t.eat_word("ALL") {
            count = FetchCount::All;
        } else if let Some(n) = count_token(t)? {
            count = FetchCount::Count(n);
        }
    } else if let Some(n) = count_token(t)? {
        count = FetchCount::Count(n);
    }
    let _ = t.eat_word("FROM") || t.eat_word("IN");
    let cursor = t.ident()?;
    let mut timeout = None;
    if !is_move && t.eat_word("WITH") {
        // Materialize's `WITH (timeout = '1s')`: the one option FETCH takes.
        t.expect(&Token::LParen)?;
        t.expect_word("TIMEOUT")?;
        let _ = t.eat(&Token::Eq);
        let tok = t.next();
        timeout = Some(match &tok {
            Token::Number(n, _) => format!("{n} seconds"),
            other => string_literal(other).ok_or_else(|| syntax_near(other))?,
        });
        t.expect(&Token::RParen)?;
    }
    t.expect_end()?;
    Ok(Stmt::Fetch {
        cursor,
        count,
        is_move,
        timeout,
    })
}

fn parse_close(t: &mut Toks) -> Result<Stmt> {
    t.expect_word("CLOSE")?;
    let cursor = if t.eat_word("ALL") {
        None
    } else {
        Some(t.ident()?)
    };
    t.expect_end()?;
    Ok(Stmt::Close(cursor))
}

/// The access mode and isolation level among the rest of a statement's transaction modes:
/// `Some(true)` for READ ONLY, `Some(false)` for READ WRITE (the last written wins), `None`
/// for neither; the level as SHOW prints it.
fn transaction_modes(t: &mut Toks) -> (Option<bool>, Option<&'static str>) {
    let words: Vec<String> = std::iter::from_fn(|| match t.next() {
        Token::EOF => None,
        tok => Some(tok.to_string().to_ascii_lowercase()),
    })
    .collect();
    (mode_of(&words), isolation_level(&words))
}

/// The level of `ISOLATION LEVEL ...` among a transaction mode's words, as SHOW prints it.
fn isolation_level(words: &[String]) -> Option<&'static str> {
    let at = words
        .windows(2)
        .position(|w| w[0] == "isolation" && w[1] == "level")?;
    let level: Vec<&str> = words[at + 2..]
        .iter()
        .map(String::as_str)
        .take_while(|w| *w != ",")
        .take(2)
        .collect();
    match level.as_slice() {
        ["serializable", ..] => Some("serializable"),
        ["repeatable", "read"] => Some("repeatable read"),
        ["read", "committed"] => Some("read committed"),
        ["read", "uncommitted"] => Some("read uncommitted"),
        _ => None,
    }
}

fn mode_of(words: &[String]) -> Option<bool> {
    let mut mode = None;
    for w in words.windows(2) {
        if w[0] == "read" && w[1] == "only" {
            mode = Some(true);
        } else if w[0] == "read" && w[1] == "write" {
            mode = Some(false);
        }
    }
    mode
}

fn parse_transaction(t: &mut Toks) -> Result<Stmt> {
    let first = match t.next() {
        Token::Word(w) => w.value.to_ascii_uppercase(),
        tok => return Err(syntax_near(&tok)),
    };
    let op = match first.as_str() {
        "BEGIN" => {
            let _ = t.eat_word("WORK") || t.eat_word("TRANSACTION");
            // Isolation levels and DEFERRABLE are accepted: tcq has one isolation level,
            // and it satisfies all of them for streams. READ ONLY is kept, and the level is
            // what SHOW transaction_isolation answers in the block.
            let (read_only, isolation) = transaction_modes(t);
            return Ok(Stmt::Transaction(TransactionOp::Begin {
                read_only,
                isolation,
                start: false,
            }));
        }
        "START" => {
            t.expect_word("TRANSACTION")?;
            let (read_only, isolation) = transaction_modes(t);
            return Ok(Stmt::Transaction(TransactionOp::Begin {
                read_only,
                isolation,
                start: true,
            }));
        }
        "COMMIT" | "END" => TransactionOp::Commit,
        _ => TransactionOp::Rollback,
    };
    let _ = t.eat_word("WORK") || t.eat_word("TRANSACTION");
    if op == TransactionOp::Rollback && t.eat_word("TO") {
        let _ = t.eat_word("SAVEPOINT");
        let name = t.ident()?;
        t.expect_end()?;
        return Ok(Stmt::Savepoint(SavepointOp::RollbackTo(name)));
    }
    let mut chain = false;
    if t.eat_word("AND") {
        chain = !t.eat_word("NO");
        t.expect_word("CHAIN")?;
    }
    t.expect_end()?;
    if chain {
        let commit = op == TransactionOp::Commit;
        return Ok(Stmt::Transaction(TransactionOp::Chain { commit }));
    }
    Ok(Stmt::Transaction(op))
}

/// `SAVEPOINT name` and `RELEASE [SAVEPOINT] name`.
fn parse_savepoint(t: &mut Toks) -> Result<Stmt> {
    let op = if t.eat_word("SAVEPOINT") {
        SavepointOp::Define(t.ident()?)
    } else {
        t.expect_word("RELEASE")?;
        let _ = t.eat_word("SAVEPOINT");
        SavepointOp::Release(t.ident()?)
    };
    t.expect_end()?;
    Ok(Stmt::Savepoint(op))
}

/// A setting's value tokens as text: strings unquoted, words as written, lists joined.
fn setting_value(t: &mut Toks) -> Result<Option<String>> {
    if t.is_word("DEFAULT") && t.peek_at(1) == &Token::EOF {
        t.next();
        return Ok(None);
    }
    let mut parts: Vec<String> = Vec::new();
    let mut cur = String::new();
    loop {
        let tok = t.next();
        match &tok {
            Token::EOF => break,
            Token::Comma => parts.push(std::mem::take(&mut cur)),
            Token::Word(w) => cur.push_str(&if w.quote_style.is_some() {
                w.value.clone()
            } else {
                w.value.to_lowercase()
            }),
            Token::Minus => cur.push('-'),
            Token::Plus => cur.push('+'),
            Token::Number(n, _) => cur.push_str(n),
            other => match string_literal(other) {
                Some(s) => cur.push_str(&s),
                None => return Err(syntax_near(other)),
            },
        }
    }
    parts.push(cur);
    if parts.iter().any(|p| p.is_empty()) {
        return Err(syntax_near(&Token::EOF));
    }
    Ok(Some(parts.join(", ")))
}

fn parse_set(t: &mut Toks) -> Result<Stmt> {
    t.expect_word("SET")?;
    let local = !t.eat_word("SESSION") && t.eat_word("LOCAL");
    match parse_set_body(t)? {
        Stmt::Set { name, value } if local => Ok(Stmt::SetLocal { name, value }),
        stmt => Ok(stmt),
    }
}

/// What follows `SET [SESSION | LOCAL]`.
fn parse_set_body(t: &mut Toks) -> Result<Stmt> {
    // SET ROLE r and SET SESSION AUTHORIZATION r: PostgreSQL's own grammar, not `name TO`.
    let role = if t.eat_word("ROLE") {
        Some("role")
    } else if t.eat_word("AUTHORIZATION") {
        Some("session_authorization")
    } else {
        None
    };
    if let Some(name) = role {
        // `SET role = 'r'` / `SET role TO r` is the generic form of the same setting.
        if name == "role" {
            let _ = t.eat_word("TO") || t.eat(&Token::Eq);
        }
        return Ok(Stmt::Set {
            name: name.into(),
            value: setting_value(t)?,
        });
    }
    if t.eat_word("TIME") {
        t.expect_word("ZONE")?;
        if t.eat_word("LOCAL") || t.eat_word("DEFAULT") {
            t.expect_end()?;
            return Ok(Stmt::Set {
                name: "timezone".into(),
                value: None,
            });
        }
        return Ok(Stmt::Set {
            name: "timezone".into(),
            value: setting_value(t)?,
        });
    }
    if t.is_word("TRANSACTION") || t.is_word("CHARACTERISTICS") {
        // SET TRANSACTION ISOLATION LEVEL ...: one isolation level exists; accept and record.
        // An access mode sets transaction_read_only (SET TRANSACTION) or
        // default_transaction_read_only (SET SESSION CHARACTERISTICS AS TRANSACTION).
        let session = t.is_word("CHARACTERISTICS");
        t.next();
        let rest: Vec<String> = std::iter::from_fn(|| match t.next() {
            Token::EOF => None,
            tok => Some(tok.to_string().to_lowercase()),
        })
        .collect();
        if let Some(read_only) = mode_of(&rest) {
            let name = if session {
                "default_transaction_read_only"
            } else {
                "transaction_read_only"
            };
            return Ok(Stmt::Set {
                name: name.into(),
                value: Some(if read_only { "on" } else { "off" }.into()),
            });
        }
        let level = isolation_level(&rest).ok_or_else(|| syntax_near(&Token::EOF))?;
        // SET TRANSACTION lasts for the block, as SET LOCAL does.
        return Ok(if session {
            Stmt::Set {
                name: "default_transaction_isolation".into(),
                value: Some(level.into()),
            }
        } else {
            Stmt::SetLocal {
                name: "transaction_isolation".into(),
                value: Some(level.into()),
            }
        });
    }
    let name = t.object_name()?;
    if !(t.eat_word("TO") || t.eat(&Token::Eq)) {
        return Err(syntax_near(t.peek()));
    }
    Ok(Stmt::Set {
        name,
        value: setting_value(t)?,
    })
}

fn parse_reset(t: &mut Toks) -> Result<Stmt> {
    t.expect_word("RESET")?;
    let name = if t.eat_word("TIME") {
        t.expect_word("ZONE")?;
        "timezone".to_string()
    } else if t.is_word("SESSION")
        && t.peek_at(1)
            .to_string()
            .eq_ignore_ascii_case("AUTHORIZATION")
    {
        t.next();
        t.next();
        "session_authorization".to_string()
    } else {
        t.object_name()?
    };
    t.expect_end()?;
    Ok(Stmt::Set { name, value: None })
}

fn parse_show(t: &mut Toks) -> Result<Stmt> {
    t.expect_word("SHOW")?;
    let name = if t.eat_word("TIME") {
        t.expect_word("ZONE")?;
        "timezone".to_string()
    } else if t.eat_word("TRANSACTION") {
        t.expect_word("ISOLATION")?;
        t.expect_word("LEVEL")?;
        "transaction_isolation".to_string()
    } else {
        t.object_name()?
    };
    t.expect_end()?;
    Ok(Stmt::Show(name))
}

fn parse_declare(t: &mut Toks, lines: &Lines) -> Result<Stmt> {
    t.expect_word("DECLARE")?;
    let cursor = t.ident()?;
    let _ = t.eat_word("BINARY");
    let _ = t.eat_word("ASENSITIVE") || t.eat_word("INSENSITIVE");
    if t.eat_word("NO") {
        t.expect_word("SCROLL")?;
    } else if t.eat_word("SCROLL") {
        return Err(Error::FeatureNotSupported(
            "SCROLL cursors are not supported: a continuous query can only be read forward".into(),
        ));
    }
    t.expect_word("CURSOR")?;
    let mut hold = false;
    if t.eat_word("WITH") {
        t.expect_word("HOLD")?;
        hold = true;
    } else if t.eat_word("WITHOUT") {
        t.expect_word("HOLD")?;
    }
    t.expect_word("FOR")?;
    let statement = Box::new(parse_sql(t.take_rest(), lines)?);
    Ok(Stmt::Declare {
        cursor,
        statement,
        hold,
    })
}

fn explain_bool(t: &mut Toks) -> Result<bool> {
    match t.peek().clone() {
        Token::Comma | Token::RParen => Ok(true),
        Token::Number(n, _) => {
            t.next();
            Ok(n != "0")
        }
        tok => {
            let v = match &tok {
                Token::Word(w) => w.value.to_lowercase(),
                other => string_literal(other).ok_or_else(|| syntax_near(other))?,
            };
            t.next();
            crate::types::parse_bool(&v)
                .map_err(|_| Error::Syntax(format!("{v} requires a Boolean value")))
        }
    }
}

fn parse_explain(t: &mut Toks, lines: &Lines) -> Result<Stmt> {
    t.expect_word("EXPLAIN")?;
    let mut options = RawExplain::default();
    if t.eat(&Token::LParen) {
        loop {
            let name = t.ident()?;
            match name.as_str() {
                "format" => {
                    let tok = t.next();
                    let v = match &tok {
                        Token::Word(w) => w.value.to_lowercase(),
                        other => string_literal(other).ok_or_else(|| syntax_near(other))?,
                    };
                    options.format = Some(v);
                }
                "analyze" => options.analyze = explain_bool(t)?,
                "verbose" => options.verbose = explain_bool(t)?,
                "event_rate" => {
                    let tok = t.next();
                    options.event_rate =
                        Some(string_literal(&tok).ok_or_else(|| syntax_near(&tok))?);
                }
                "costs" | "buffers" | "timing" | "summary" | "settings" | "wal"
                | "generic_plan" | "memory" => {
                    explain_bool(t)?;
                }
                "parallelism"
                | "checkpoint_interval"
                | "state_backend"
                | "sink"
                | "sink_path"
                | "sink_format"
                | "sink_bootstrap_servers"
                | "sink_topic_prefix"
                | "source_path"
                | "idle_timeout"
                | "groups"
                | "job_name"
                | "plan" => {
                    let tok = t.next();
                    let v = match &tok {
                        Token::Word(w) => w.value.clone(),
                        Token::Number(n, _) => n.clone(),
                        // A signed number, as PostgreSQL's grammar reads an option's value:
                        // the option then refuses it as out of range.
                        Token::Minus => match t.next() {
                            Token::Number(n, _) => format!("-{n}"),
                            other => return Err(syntax_near(&other)),
                        },
                        other => string_literal(other).ok_or_else(|| syntax_near(other))?,
                    };
                    options.flink.push((name.clone(), v));
                }
                other => {
                    return Err(Error::Syntax(format!(
                        "unrecognized EXPLAIN option \"{other}\""
                    )))
                }
            }
            if t.eat(&Token::Comma) {
                continue;
            }
            t.expect(&Token::RParen)?;
            break;
        }
    } else {
        options.analyze = t.eat_word("ANALYZE") || t.eat_word("ANALYSE");
        options.verbose = t.eat_word("VERBOSE");
    }
    if t.eat_word("QUERIES") {
        return explain_queries(t, options);
    }
    let statement = Box::new(sinks::explained(t, lines)?);
    Ok(Stmt::Explain { options, statement })
}

/// `QUERIES ALL` or `QUERIES (1, 2, ...)` (parentheses optional) after EXPLAIN's options.
fn explain_queries(t: &mut Toks, options: RawExplain) -> Result<Stmt> {
    if t.eat_word("ALL") {
        return Ok(Stmt::ExplainQueries { options, ids: None });
    }
    let paren = t.eat(&Token::LParen);
    let mut ids = Vec::new();
    loop {
        match t.next() {
            Token::Number(n, _) => ids.push(n.parse::<u64>().map_err(|_| {
                Error::Syntax(format!("a query id is a positive integer, not {n}"))
            })?),
            other => return Err(syntax_near(&other)),
        }
        if !t.eat(&Token::Comma) {
            break;
        }
    }
    if paren {
        t.expect(&Token::RParen)?;
    }
    Ok(Stmt::ExplainQueries {
        options,
        ids: Some(ids),
    })
}

/// `q` with the SQL standard's `[OFFSET n ROWS] FETCH {FIRST|NEXT} [m] {ROW|ROWS} ONLY` read
/// as `LIMIT m [OFFSET n]` (m defaults to 1, as in PostgreSQL); `q` itself when it has no
/// FETCH. Errors: 0A000 for `WITH TIES`; 42601 for `PERCENT`, for FETCH beside LIMIT, as
/// PostgreSQL's "multiple LIMIT clauses not allowed".
pub(crate) fn fetch_as_limit(q: &ast::Query) -> Result<std::borrow::Cow<'_, ast::Query>> {
    if q.fetch.as_ref().is_some_and(|f| f.with_ties) {
        return Err(Error::FeatureNotSupported(
            "FETCH FIRST ... WITH TIES is not supported here".into(),
        ));
    }
    fetch_as_limit_ties(q).map(|(q, _)| q)
}

/// [`fetch_as_limit`] that also takes `WITH TIES`, reported as the `bool` (the limit then
/// extends over the rows that sort equal to its last one). Errors: 42601 for `PERCENT`
/// (no PostgreSQL syntax), for WITH TIES without ORDER BY and for FETCH beside LIMIT.
pub(crate) fn fetch_as_limit_ties(
    q: &ast::Query,
) -> Result<(std::borrow::Cow<'_, ast::Query>, bool)> {
    let Some(fetch) = &q.fetch else {
        return Ok((std::borrow::Cow::Borrowed(q), false));
    };
    if fetch.percent {
        // PostgreSQL's grammar has no PERCENT: a syntax error there.
        return Err(Error::Syntax("syntax error at or near \"PERCENT\"".into()));
    }
    if fetch.with_ties && q.order_by.is_none() {
        return Err(Error::Syntax(
            "WITH TIES cannot be specified without ORDER BY clause".into(),
        ));
    }
    let count = fetch
        .quantity
        .clone()
        .unwrap_or_else(|| ast::Expr::value(ast::Value::Number("1".into(), false)));
    let offset = match &q.limit_clause {
        None => None,
        Some(ast::LimitClause::LimitOffset {
            limit: None,
            offset,
            limit_by,
        }) if limit_by.is_empty() => offset.clone(),
        Some(_) => return Err(Error::Syntax("multiple LIMIT clauses not allowed".into())),
    };
    let mut out = q.clone();
    out.fetch = None;
    out.limit_clause = Some(ast::LimitClause::LimitOffset {
        limit: Some(count),
        offset,
        limit_by: Vec::new(),
    });
    Ok((std::borrow::Cow::Owned(out), fetch.with_ties))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Errors without their position, which `error_positions_count_characters` tests.
    fn parse_all(text: &str) -> Result<Vec<ParsedStmt>> {
        super::parse_all(text).map_err(|e| e.kind().clone())
    }

    #[test]
    fn error_positions_count_characters() {
        let pos = |sql: &str| super::parse_all(sql).unwrap_err().position();
        assert_eq!(pos("SELECT 1 +"), Some(11));
        // `FRM` reads as an alias of `é`, so the error is at `x`: second line, wide char.
        assert_eq!(pos("SELECT 1;\nSELECT é FRM x"), Some(24));
        assert_eq!(pos("CREATE STREAM s (a int) TYPE FOO"), Some(30));
        assert_eq!(pos("SELECT 1 2"), Some(10));
    }

    fn one(sql: &str) -> ParsedStmt {
        let mut v = parse_all(sql).unwrap();
        assert_eq!(v.len(), 1, "{sql}");
        v.remove(0)
    }

    /// `BETWEEN SYMMETRIC` reads as PostgreSQL reads it, whatever the bounds hold (another
    /// BETWEEN SYMMETRIC in the low bound, operators, parentheses); `ASYMMETRIC` is the
    /// plain BETWEEN.
    #[test]
    fn between_symmetric_reads_as_both_orders() {
        let projection = |sql: &str| -> String {
            let Stmt::Ast(s) = one(sql).stmt else {
                panic!("{sql}")
            };
            let ast::Statement::Query(q) = *s else {
                panic!("{sql}")
            };
            let ast::SetExpr::Select(sel) = *q.body else {
                panic!("{sql}")
            };
            let ast::SelectItem::UnnamedExpr(e) = &sel.projection[0] else {
                panic!("{sql}")
            };
            unmark_between_symmetric(e)
                .unwrap_or_else(|| e.clone())
                .to_string()
        };
        assert_eq!(
            projection("SELECT x BETWEEN SYMMETRIC 7 + 1 AND (y)"),
            "(x BETWEEN 7 + 1 AND (y)) OR (x BETWEEN (y) AND 7 + 1)"
        );
        assert_eq!(
            projection("SELECT x NOT BETWEEN symmetric -a AND b * 2"),
            "(x NOT BETWEEN -a AND b * 2) AND (x NOT BETWEEN b * 2 AND -a)"
        );
        assert_eq!(
            projection("SELECT x BETWEEN ASYMMETRIC 1 AND 2"),
            "x BETWEEN 1 AND 2"
        );
        // The low bound's own BETWEEN SYMMETRIC is marked first, inside the outer mark.
        let nested = projection("SELECT x BETWEEN SYMMETRIC (y BETWEEN SYMMETRIC 1 AND 2) AND z");
        assert!(nested.starts_with("(x BETWEEN (y BETWEEN \"BETWEEN SYMMETRIC\"(1) AND 2)"));
        // A column named symmetric is still a column.
        assert_eq!(projection("SELECT symmetric FROM t"), "symmetric");
    }

    #[test]
    fn splits_statements_and_keeps_copy_apart() {
        let v = parse_all("COPY t FROM STDIN; SELECT 1").unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].text, "COPY t FROM STDIN");
        assert_eq!(v[1].text, "SELECT 1");
        assert!(
            matches!(v[0].stmt, Stmt::Ast(ref s) if matches!(**s, ast::Statement::Copy { .. }))
        );
        let v = parse_all("select ';' ; ; select 2;").unwrap();
        assert_eq!(
            v.iter().map(|p| p.text.as_str()).collect::<Vec<_>>(),
            ["select ';'", "select 2"]
        );
        assert!(matches!(one("").stmt, Stmt::Empty));
        assert!(matches!(one(" ; ").stmt, Stmt::Empty));
        assert!(matches!(one("-- just a comment").stmt, Stmt::Empty));
    }

    #[test]
    fn cuts_one_window() {
        let p = one(
            "SELECT count(*) FROM s [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT 'epoch']",
        );
        assert_eq!(p.windows.len(), 1);
        let w = &p.windows[0];
        assert_eq!(w.range, "10 seconds");
        assert_eq!(w.slide.as_deref(), Some("5 seconds"));
        assert_eq!(w.start.as_deref(), Some("epoch"));
        assert_eq!(w.after, Location::new(1, 22));
    }

    #[test]
    fn cuts_several_windows_and_aliases() {
        let p = one("SELECT wtime(*) FROM flights AS f [RANGE BY '10 minutes'] [range by '1 hour' slide by '10 minutes']");
        assert_eq!(p.windows.len(), 2);
        assert_eq!(p.windows[0].after, p.windows[1].after);
        assert_eq!(p.windows[0].after, Location::new(1, 33));
        assert_eq!(p.windows[1].slide.as_deref(), Some("10 minutes"));
        let p = one("SELECT * FROM (SELECT * FROM s [RANGE BY '1 minute']) AS x");
        assert_eq!(p.windows[0].after, Location::new(1, 30));
    }

    #[test]
    fn window_errors() {
        assert!(matches!(
            parse_all("SELECT 1 [RANGE BY '1 s']"),
            Err(Error::Syntax(_))
        ));
        assert!(matches!(
            parse_all("SELECT * FROM s [RANGE BY 10]"),
            Err(Error::Syntax(_))
        ));
        assert!(matches!(
            parse_all("SELECT * FROM s [RANGE BY '1 s'"),
            Err(Error::Syntax(_))
        ));
        // Issue 29: at the token where the clause goes wrong, with the clause's shape.
        let e = super::parse_all("SELECT * FROM s [RANGE BY '1 s' SLIDE '1 s']").unwrap_err();
        assert_eq!(
            e.kind(),
            &Error::Syntax("syntax error at or near \"'1 s'\"".into())
        );
        assert_eq!(
            (e.position(), e.hint()),
            (Some(39), Some(WINDOW_CLAUSE_HINT))
        );
        let e = super::parse_all("SELECT * FROM s [RANG BY '1 s']").unwrap_err();
        assert_eq!(
            e.kind(),
            &Error::Syntax("syntax error at or near \"RANG\"".into())
        );
        assert_eq!(
            (e.position(), e.hint()),
            (Some(18), Some(WINDOW_CLAUSE_HINT))
        );
    }

    #[test]
    fn create_stream_variants() {
        let p = one("CREATE STREAM network.TcpDump (ts timestamp TIMESTAMPCOLUMN, \"Src\" varchar(15), n double precision, d numeric(10, 2)) TYPE ARCHIVED");
        match p.stmt {
            Stmt::CreateStream {
                name,
                columns,
                archived,
                if_not_exists,
                slack,
                retention,
                options,
            } => {
                assert_eq!(slack, None);
                assert_eq!(retention, None);
                assert!(options.is_empty());
                assert_eq!(name, "network.tcpdump");
                assert!(archived && !if_not_exists);
                let got: Vec<_> = columns
                    .iter()
                    .map(|c| (c.name.as_str(), c.type_name.as_str(), c.timestamp_column))
                    .collect();
                assert_eq!(
                    got,
                    [
                        ("ts", "timestamp", true),
                        ("Src", "varchar(15)", false),
                        ("n", "double precision", false),
                        ("d", "numeric(10,2)", false)
                    ]
                );
            }
            other => panic!("{other:?}"),
        }
        // A source's options: dotted names, strings, numbers and words; a name given
        // twice is 42601.
        let p = one("CREATE STREAM s (a int) WITH (connector = 'kafka', properties.bootstrap.server = 'h:1', qos = 1, start = Earliest, slack = '1 s')");
        let Stmt::CreateStream { options, slack, .. } = p.stmt else {
            panic!("{:?}", p.stmt)
        };
        assert_eq!(slack.as_deref(), Some("1 s"));
        let got: Vec<(&str, &str)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("connector", "kafka"),
                ("properties.bootstrap.server", "h:1"),
                ("qos", "1"),
                ("start", "earliest")
            ]
        );
        assert!(matches!(
            parse_all("CREATE STREAM s (a int) WITH (topic = 'a', topic = 'b')"),
            Err(Error::Syntax(m)) if m.contains("conflicting or redundant options")
        ));
        assert!(matches!(
            one("ALTER STREAM s PAUSE").stmt,
            Stmt::AlterStreamSource { pause: true, .. }
        ));
        assert!(matches!(
            one("alter stream s resume").stmt,
            Stmt::AlterStreamSource { pause: false, .. }
        ));
        let p = one("create stream if not exists s (a int) type unarchived");
        assert!(matches!(
            p.stmt,
            Stmt::CreateStream {
                if_not_exists: true,
                archived: false,
                ..
            }
        ));
        assert!(matches!(
            parse_all("CREATE STREAM s (a int) TYPE FOO"),
            Err(Error::Syntax(_))
        ));
        assert!(matches!(
            parse_all("CREATE STREAM s (a)"),
            Err(Error::Syntax(_))
        ));
        assert!(matches!(
            parse_all("CREATE STREAM s (a timestamp TIMESTAMPCOLUMN TIMESTAMPCOLUMN)"),
            Err(Error::Syntax(_))
        ));
    }

    #[test]
    fn utility_statements() {
        assert!(
            matches!(one("DROP STREAM IF EXISTS a, b.c").stmt, Stmt::DropStream { ref names, if_exists: true, .. } if names == &["a", "b.c"])
        );
        assert!(
            matches!(one("FETCH c").stmt, Stmt::Fetch { ref cursor, count: FetchCount::Count(1), is_move: false, .. } if cursor == "c")
        );
        assert!(matches!(
            one("FETCH 10 FROM c").stmt,
            Stmt::Fetch {
                count: FetchCount::Count(10),
                ..
            }
        ));
        assert!(matches!(
            one("FETCH FORWARD 5 IN c").stmt,
            Stmt::Fetch {
                count: FetchCount::Count(5),
                ..
            }
        ));
        assert!(matches!(
            one("FETCH NEXT FROM c").stmt,
            Stmt::Fetch {
                count: FetchCount::Count(1),
                ..
            }
        ));
        assert!(matches!(
            one("FETCH ALL c").stmt,
            Stmt::Fetch {
                count: FetchCount::All,
                ..
            }
        ));
        assert!(matches!(
            one("FETCH FORWARD ALL FROM c").stmt,
            Stmt::Fetch {
                count: FetchCount::All,
                ..
            }
        ));
        assert!(matches!(
            one("MOVE 3 c").stmt,
            Stmt::Fetch {
                count: FetchCount::Count(3),
                is_move: true,
                ..
            }
        ));
        assert!(matches!(
            parse_all("FETCH PRIOR c"),
            Err(Error::ObjectNotInPrerequisiteState(_))
        ));
        assert!(matches!(one("CLOSE ALL").stmt, Stmt::Close(None)));
        assert!(matches!(one("close \"C\"").stmt, Stmt::Close(Some(ref c)) if c == "C"));
        for (sql, op) in [
            (
                "BEGIN",
                TransactionOp::Begin {
                    read_only: None,
                    isolation: None,
                    start: false,
                },
            ),
            (
                "begin transaction isolation level read committed",
                TransactionOp::Begin {
                    read_only: None,
                    isolation: Some("read committed"),
                    start: false,
                },
            ),
            (
                "BEGIN ISOLATION LEVEL SERIALIZABLE, READ ONLY",
                TransactionOp::Begin {
                    read_only: Some(true),
                    isolation: Some("serializable"),
                    start: false,
                },
            ),
            (
                "START TRANSACTION READ WRITE",
                TransactionOp::Begin {
                    read_only: Some(false),
                    isolation: None,
                    start: true,
                },
            ),
            (
                "START TRANSACTION",
                TransactionOp::Begin {
                    read_only: None,
                    isolation: None,
                    start: true,
                },
            ),
            ("COMMIT", TransactionOp::Commit),
            ("END", TransactionOp::Commit),
            ("ROLLBACK", TransactionOp::Rollback),
            ("ABORT", TransactionOp::Rollback),
            ("COMMIT AND NO CHAIN", TransactionOp::Commit),
            ("COMMIT AND CHAIN", TransactionOp::Chain { commit: true }),
            (
                "ABORT WORK AND CHAIN",
                TransactionOp::Chain { commit: false },
            ),
        ] {
            assert!(
                matches!(one(sql).stmt, Stmt::Transaction(o) if o == op),
                "{sql}"
            );
        }
        assert!(
            matches!(one("SET search_path TO public, \"$user\"").stmt, Stmt::Set { ref name, value: Some(ref v) } if name == "search_path" && v == "public, $user")
        );
        assert!(
            matches!(one("SET extra_float_digits = 3").stmt, Stmt::Set { ref value, .. } if value.as_deref() == Some("3"))
        );
        assert!(
            matches!(one("SET TIME ZONE 'UTC'").stmt, Stmt::Set { ref name, ref value } if name == "timezone" && value.as_deref() == Some("UTC"))
        );
        assert!(matches!(
            one("SET application_name = DEFAULT").stmt,
            Stmt::Set { value: None, .. }
        ));
        assert!(
            matches!(one("RESET ALL").stmt, Stmt::Set { ref name, value: None } if name == "all")
        );
        assert!(matches!(one("SHOW ALL").stmt, Stmt::Show(ref n) if n == "all"));
        assert!(
            matches!(one("SHOW TRANSACTION ISOLATION LEVEL").stmt, Stmt::Show(ref n) if n == "transaction_isolation")
        );
    }

    #[test]
    fn role_and_grant_statements() {
        use crate::sql::plan::{Grant, GrantTarget, Privileges, RoleOptions};
        let Stmt::CreateRole {
            name,
            options,
            user,
        } = one("CREATE USER \"Al\" WITH SUPERUSER ENCRYPTED PASSWORD 'x''y'").stmt
        else {
            panic!("not CREATE USER")
        };
        assert_eq!((name.as_str(), user), ("Al", true));
        assert_eq!(
            options,
            RoleOptions {
                login: None,
                superuser: Some(true),
                password: Some(Some("x'y".into())),
            }
        );
        assert!(matches!(
            one("ALTER ROLE bob NOLOGIN PASSWORD NULL").stmt,
            Stmt::AlterRole {
                options: RoleOptions {
                    login: Some(false),
                    password: Some(None),
                    ..
                },
                ..
            }
        ));
        assert!(matches!(
            one("DROP USER IF EXISTS a, b").stmt,
            Stmt::DropRole { ref names, if_exists: true } if names == &["a", "b"]
        ));
        let Stmt::Grant(g) = one("GRANT select, INSERT ON STREAM s, x.t TO alice, PUBLIC").stmt
        else {
            panic!("not GRANT")
        };
        assert_eq!(
            g,
            Grant {
                grant: true,
                privileges: Privileges::SELECT.union(Privileges::INSERT),
                target: GrantTarget::Stream,
                relations: vec!["s".into(), "x.t".into()],
                grantees: vec!["alice".into(), "public".into()],
            }
        );
        let Stmt::Grant(g) = one("REVOKE ALL PRIVILEGES ON TABLE t FROM bob CASCADE").stmt else {
            panic!("not REVOKE")
        };
        assert_eq!(
            (g.grant, g.privileges, g.target),
            (false, Privileges::ALL, GrantTarget::Relation)
        );
        assert_eq!(Privileges::ALL.letters(), "arwdD");
        assert!(matches!(
            one("ALTER STREAM net.tcp OWNER TO \"Bob\"").stmt,
            Stmt::AlterOwner { table: false, ref name, ref owner } if name == "net.tcp" && owner == "Bob"
        ));
        assert!(matches!(
            one("ALTER TABLE t OWNER TO bob").stmt,
            Stmt::AlterOwner { table: true, .. }
        ));
        for (sql, code) in [
            ("CREATE ROLE a LOGIN NOLOGIN", "42601"),
            ("CREATE ROLE a PASSWORD", "42601"),
            ("CREATE ROLE a CREATEDB", "0A000"),
            ("GRANT a TO b", "0A000"),
            ("GRANT SELECT (c) ON t TO b", "0A000"),
            ("GRANT SELECT ON t TO b WITH GRANT OPTION", "0A000"),
            ("GRANT SELECT ON ALL TABLES IN SCHEMA public TO b", "0A000"),
            ("REVOKE SELECT ON t TO b", "42601"),
        ] {
            let e = parse_all(sql).unwrap_err();
            assert_eq!(crate::server::sqlstate(&e), code, "{sql}: {e}");
        }
    }

    #[test]
    fn declare_and_explain() {
        let p =
            one("DECLARE c NO SCROLL CURSOR WITH HOLD FOR SELECT * FROM s [RANGE BY '1 minute']");
        assert!(matches!(p.stmt, Stmt::Declare { ref cursor, .. } if cursor == "c"));
        assert_eq!(p.windows.len(), 1);
        let p = one("EXPLAIN (FORMAT JSON, ANALYZE, EVENT_RATE '1 per minute') SELECT * FROM s");
        match p.stmt {
            Stmt::Explain { options, .. } => {
                assert_eq!(options.format.as_deref(), Some("json"));
                assert!(options.analyze && !options.verbose);
                assert_eq!(options.event_rate.as_deref(), Some("1 per minute"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            one("EXPLAIN ANALYZE VERBOSE SELECT 1").stmt,
            Stmt::Explain {
                options: RawExplain {
                    analyze: true,
                    verbose: true,
                    ..
                },
                ..
            }
        ));
        assert_eq!(
            parse_all("EXPLAIN (FOO) SELECT 1").unwrap_err(),
            Error::Syntax("unrecognized EXPLAIN option \"foo\"".into())
        );
        // The Flink export of registered queries, with its options.
        match one("EXPLAIN (FORMAT FLINK, PARALLELISM 2, SINK 'kafka') QUERIES (3, 5)").stmt {
            Stmt::ExplainQueries { options, ids } => {
                assert_eq!(ids, Some(vec![3, 5]));
                assert_eq!(
                    options.flink,
                    vec![
                        ("parallelism".to_string(), "2".to_string()),
                        ("sink".to_string(), "kafka".to_string())
                    ]
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            one("EXPLAIN (FORMAT FLINK) QUERIES ALL").stmt,
            Stmt::ExplainQueries { ids: None, .. }
        ));
        assert!(parse_all("EXPLAIN (FORMAT FLINK) QUERIES ('x')").is_err());
    }

    #[test]
    fn syntax_errors_read_like_postgres() {
        assert_eq!(
            parse_all("SELEC 1").unwrap_err(),
            Error::Syntax("syntax error at or near \"SELEC\"".into())
        );
        assert_eq!(
            parse_all("SELECT * FROM").unwrap_err(),
            Error::Syntax("syntax error at end of input".into())
        );
        assert_eq!(
            parse_all("SELECT 1 2").unwrap_err(),
            Error::Syntax("syntax error at or near \"2\"".into())
        );
        assert!(
            matches!(parse_all("SELECT 'abc"), Err(Error::Syntax(m)) if m.contains("unterminated quoted string"))
        );
    }
}
