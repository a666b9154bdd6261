//! COPY FROM / TO: the target, the column list and the options, checked as PostgreSQL 15
//! checks them.

use sqlparser::ast;

use super::*;

/// COPY's options, checked as PostgreSQL 15's `ProcessCopyOptions` checks them, in its
/// order, with its SQLSTATEs: 42601 for an unknown or repeated option or a text option in
/// BINARY mode; 22023 for a bad value (format, Boolean, encoding name, a delimiter that is
/// a newline or that text escapes would read, a delimiter equal to the quote); 0A000 for a
/// value that is not one byte, an option of another format or direction, a delimiter or
/// quote inside the NULL string; 55000 for FREEZE (a stream is never new in the current
/// transaction). `is_from`: COPY FROM. FORCE_NOT_NULL and FORCE_NULL come back as column
/// names, which the caller resolves against the COPY's column list.
pub(super) fn copy_options(items: &[CopyItem], is_from: bool) -> Result<(CopyOptions, ForceLists)> {
    checked(written(items, is_from)?, is_from)
}

/// The options as written, each read on its own, before their combination is checked.
struct Written {
    format: Option<CopyFormat>,
    freeze: bool,
    live: Option<bool>,
    delimiter: Option<String>,
    null: Option<String>,
    quote: Option<String>,
    escape: Option<String>,
    /// HEADER, and HEADER MATCH.
    header: Option<(bool, bool)>,
    force_quote: bool,
    /// An ENCODING PostgreSQL knows other than UTF8 (refused after the other checks).
    other_encoding: Option<String>,
    force: ForceLists,
}

/// Read each option of `items` (42601 for a repeated or unknown one or a value of the
/// wrong kind, 22023 for an unknown format or encoding).
fn written(items: &[CopyItem], is_from: bool) -> Result<Written> {
    let mut seen: Vec<&str> = Vec::new();
    let (mut format, mut freeze, mut live) = (None, false, None);
    let (mut delimiter, mut null, mut quote, mut escape) = (None, None, None, None);
    let (mut header, mut force_quote) = (None, false);
    let mut other_encoding = None;
    let mut force = ForceLists::default();
    let redundant = || Error::Syntax("conflicting or redundant options".into());
    let string = |item: &CopyItem| -> Result<String> {
        match &item.value {
            CopyValue::Text(s) => Ok(s.clone()),
            _ => Err(Error::Syntax(format!("{} requires a parameter", item.name))),
        }
    };
    let boolean = |item: &CopyItem| -> Result<bool> {
        match &item.value {
            CopyValue::None => Ok(true),
            CopyValue::Text(s) => pg_bool(s)
                .ok_or_else(|| Error::Syntax(format!("{} requires a Boolean value", item.name))),
            _ => Err(Error::Syntax(format!(
                "{} requires a Boolean value",
                item.name
            ))),
        }
    };
    for item in items {
        let name = item.name.as_str();
        if seen.contains(&name) {
            return Err(redundant());
        }
        seen.push(match name {
            // One flag: FORCE_QUOTE (cols) and FORCE_QUOTE * conflict.
            "force_quote" => "force_quote",
            other => other,
        });
        match name {
            "format" => {
                let f = string(item)?;
                format = Some(match f.as_str() {
                    "text" => CopyFormat::Text,
                    "csv" => CopyFormat::Csv,
                    "binary" => CopyFormat::Binary,
                    _ => {
                        return Err(Error::InvalidParameterValue(format!(
                            "COPY format \"{f}\" not recognized"
                        )))
                    }
                });
            }
            "freeze" => freeze = boolean(item)?,
            "delimiter" => delimiter = Some(string(item)?),
            "null" => null = Some(string(item)?),
            "header" => {
                let bad = || Error::Syntax("header requires a Boolean value or \"match\"".into());
                header = Some(match &item.value {
                    CopyValue::None => (true, false),
                    CopyValue::Text(v) if v.eq_ignore_ascii_case("match") => {
                        if !is_from {
                            return Err(unsupported(format!(
                                "cannot use \"{v}\" with HEADER in COPY TO"
                            )));
                        }
                        (true, true)
                    }
                    CopyValue::Text(v) => (pg_bool(v).ok_or_else(bad)?, false),
                    _ => return Err(bad()),
                })
            }
            "quote" => quote = Some(string(item)?),
            "escape" => escape = Some(string(item)?),
            "force_quote" => match &item.value {
                CopyValue::All | CopyValue::List(_) => force_quote = true,
                _ => {
                    return Err(Error::InvalidParameterValue(
                        "argument to option \"force_quote\" must be a list of column names".into(),
                    ))
                }
            },
            "force_not_null" | "force_null" => {
                let CopyValue::List(cols) = &item.value else {
                    return Err(Error::InvalidParameterValue(format!(
                        "argument to option \"{name}\" must be a list of column names"
                    )));
                };
                if name == "force_null" {
                    force.null = cols.clone();
                } else {
                    force.not_null = cols.clone();
                }
            }
            "encoding" => {
                let e = string(item)?;
                let key: String = e
                    .chars()
                    .filter(char::is_ascii_alphanumeric)
                    .map(|c| c.to_ascii_lowercase())
                    .collect();
                if !matches!(key.as_str(), "utf8" | "unicode" | "sqlascii") {
                    if !is_pg_encoding(&key) {
                        return Err(Error::InvalidParameterValue(
                            "argument to option \"encoding\" must be a valid encoding name".into(),
                        ));
                    }
                    // Refused after PostgreSQL's own checks (below).
                    other_encoding = Some(e);
                }
            }
            "live" => {
                live = Some(boolean(item).map_err(|_| {
                    Error::Syntax("COPY option \"live\" requires a Boolean value".into())
                })?)
            }
            other => return Err(Error::Syntax(format!("option \"{other}\" not recognized"))),
        }
    }
    Ok(Written {
        format,
        freeze,
        live,
        delimiter,
        null,
        quote,
        escape,
        header,
        force_quote,
        other_encoding,
        force,
    })
}

/// The options' combination checked in PostgreSQL's order (`ProcessCopyOptions`), and
/// the COPY options they make.
fn checked(w: Written, is_from: bool) -> Result<(CopyOptions, ForceLists)> {
    let Written {
        format,
        freeze,
        live,
        delimiter,
        null,
        quote,
        escape,
        header,
        force_quote,
        other_encoding,
        mut force,
    } = w;
    let format = format.unwrap_or(CopyFormat::Text);
    let (csv, binary) = (format == CopyFormat::Csv, format == CopyFormat::Binary);
    if binary && delimiter.is_some() {
        return Err(Error::Syntax(
            "cannot specify DELIMITER in BINARY mode".into(),
        ));
    }
    if binary && null.is_some() {
        return Err(Error::Syntax("cannot specify NULL in BINARY mode".into()));
    }
    let mut out = CopyOptions::defaults(format);
    let delimiter = delimiter.unwrap_or_else(|| (out.delimiter as char).to_string());
    let null = null.unwrap_or_else(|| out.null.clone());
    if delimiter.len() != 1 {
        return Err(unsupported(
            "COPY delimiter must be a single one-byte character",
        ));
    }
    let d = delimiter.as_bytes()[0];
    if d == b'\n' || d == b'\r' {
        return Err(Error::InvalidParameterValue(
            "COPY delimiter cannot be newline or carriage return".into(),
        ));
    }
    if null.contains(['\n', '\r']) {
        return Err(Error::InvalidParameterValue(
            "COPY null representation cannot use newline or carriage return".into(),
        ));
    }
    if !csv && b"\\.abcdefghijklmnopqrstuvwxyz0123456789".contains(&d) {
        return Err(Error::InvalidParameterValue(format!(
            "COPY delimiter cannot be \"{delimiter}\""
        )));
    }
    if binary && header.is_some_and(|h| h.0) {
        return Err(unsupported("cannot specify HEADER in BINARY mode"));
    }
    if !csv && quote.is_some() {
        return Err(unsupported("COPY quote available only in CSV mode"));
    }
    let quote = quote.unwrap_or_else(|| "\"".into());
    if csv && quote.len() != 1 {
        return Err(unsupported(
            "COPY quote must be a single one-byte character",
        ));
    }
    if csv && d == quote.as_bytes()[0] {
        return Err(Error::InvalidParameterValue(
            "COPY delimiter and quote must be different".into(),
        ));
    }
    if !csv && escape.is_some() {
        return Err(unsupported("COPY escape available only in CSV mode"));
    }
    let escape = escape.unwrap_or_else(|| quote.clone());
    if csv && escape.len() != 1 {
        return Err(unsupported(
            "COPY escape must be a single one-byte character",
        ));
    }
    if !csv && force_quote {
        return Err(unsupported("COPY force quote available only in CSV mode"));
    }
    if force_quote && is_from {
        return Err(unsupported("COPY force quote only available using COPY TO"));
    }
    if !csv && !force.not_null.is_empty() {
        return Err(unsupported(
            "COPY force not null available only in CSV mode",
        ));
    }
    if !force.not_null.is_empty() && !is_from {
        return Err(unsupported(
            "COPY force not null only available using COPY FROM",
        ));
    }
    if !csv && !force.null.is_empty() {
        return Err(unsupported("COPY force null available only in CSV mode"));
    }
    if !force.null.is_empty() && !is_from {
        return Err(unsupported(
            "COPY force null only available using COPY FROM",
        ));
    }
    if null.as_bytes().contains(&d) {
        return Err(unsupported(
            "COPY delimiter must not appear in the NULL specification",
        ));
    }
    if csv && null.as_bytes().contains(&quote.as_bytes()[0]) {
        return Err(unsupported(
            "CSV quote character must not appear in the NULL specification",
        ));
    }
    if let Some(e) = other_encoding {
        return Err(unsupported(format!(
            "COPY ENCODING \"{e}\" is not supported: tcq reads and writes UTF8"
        )));
    }
    if force_quote {
        return Err(unsupported("COPY option FORCE_QUOTE is not supported"));
    }
    if live.is_some() && !is_from {
        return Err(Error::Syntax(
            "COPY option \"live\" applies only to COPY ... FROM STDIN".into(),
        ));
    }
    force.freeze = freeze && is_from;
    if !binary {
        out.delimiter = d;
        out.null = null;
        (out.header, out.header_match) = header.unwrap_or((false, false));
        if csv {
            out.quote = quote.as_bytes()[0];
            out.escape = escape.as_bytes()[0];
        }
    }
    out.live = live.unwrap_or(false);
    Ok((out, force))
}

/// FORCE_NOT_NULL and FORCE_NULL column names, as written, and FREEZE (COPY FROM): what
/// the caller checks against the relation, after the options.
#[derive(Default)]
pub(super) struct ForceLists {
    pub(super) not_null: Vec<String>,
    pub(super) null: Vec<String>,
    pub(super) freeze: bool,
}

/// A Boolean option's value as PostgreSQL's `defGetBoolean` reads it: true/false, on/off
/// (any case), 1/0.
pub(super) fn pg_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "on" | "1" => Some(true),
        "false" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// An encoding name PostgreSQL knows (lower case, letters and digits only).
pub(super) fn is_pg_encoding(key: &str) -> bool {
    const NAMES: &[&str] = &[
        "big5",
        "eucjis2004",
        "eucjp",
        "euccn",
        "euckr",
        "euctw",
        "gb18030",
        "gbk",
        "iso88595",
        "iso88596",
        "iso88597",
        "iso88598",
        "johab",
        "koi8r",
        "koi8u",
        "latin1",
        "latin2",
        "latin3",
        "latin4",
        "latin5",
        "latin6",
        "latin7",
        "latin8",
        "latin9",
        "latin10",
        "muleinternal",
        "shiftjis2004",
        "sjis",
        "uhc",
        "win866",
        "win874",
        "win1250",
        "win1251",
        "win1252",
        "win1253",
        "win1254",
        "win1255",
        "win1256",
        "win1257",
        "win1258",
        "windows1252",
        "alt",
        "iso885915",
        "iso88591",
    ];
    NAMES.contains(&key)
}

impl Binder<'_> {
    pub(super) fn copy(
        &mut self,
        source: &ast::CopySource,
        to: bool,
        target: &ast::CopyTarget,
        options: &[ast::CopyOption],
        legacy: &[ast::CopyLegacyOption],
        text: &str,
    ) -> Result<Plan> {
        // The options were cut out before sqlparser (see `parse::cut_copy_options`).
        if !options.is_empty() || !legacy.is_empty() {
            return Err(Error::Syntax("syntax error in COPY options".into()));
        }
        match (source, to) {
            (
                ast::CopySource::Table {
                    table_name,
                    columns,
                },
                false,
            ) => self.copy_from(table_name, columns, target),
            (ast::CopySource::Query(q), true) => {
                if !matches!(target, ast::CopyTarget::Stdout) {
                    return Err(copy_to_file());
                }
                let (opts, _) = copy_options(&self.copy_items, false)?;
                Ok(Plan::CopyTo {
                    query: Box::new(self.query(q, text)?),
                    options: opts,
                })
            }
            (
                ast::CopySource::Table {
                    table_name,
                    columns,
                },
                true,
            ) => self.copy_table_to(table_name, columns, target, text),
            (ast::CopySource::Query(_), false) => {
                Err(Error::Syntax("COPY (query) FROM is not valid".into()))
            }
        }
    }

    /// `COPY stream_or_table [(columns)] FROM STDIN`: the target, the fields' columns and the
    /// options. The column list is checked before the options, as PostgreSQL checks it first.
    fn copy_from(
        &mut self,
        table_name: &ast::ObjectName,
        cols: &[ast::Ident],
        target: &ast::CopyTarget,
    ) -> Result<Plan> {
        if !matches!(target, ast::CopyTarget::Stdin) {
            return Err(unsupported(
                "COPY FROM a file or program is not supported; use COPY ... FROM STDIN",
            ));
        }
        let stream = self.ast_relation(table_name)?;
        let table = self.schema.table(&stream);
        let columns = match (self.schema.stream(&stream), &table) {
            (Some((columns, _)), _) => columns,
            (None, Some(t)) => t.columns.clone(),
            (None, None) => return Err(Error::UndefinedTable(stream.clone())),
        };
        let target_columns = copy_columns(&columns, cols, &stream)?;
        let (mut opts, force) = copy_options(&self.copy_items, true)?;
        if table.is_some() && opts.live {
            return Err(unsupported(
                "COPY option \"live\" applies to streams, not tables",
            ));
        }
        force_columns(&mut opts, &force, &columns, &target_columns, &stream)?;
        if force.freeze {
            return Err(Error::ObjectNotInPrerequisiteState(
                "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction".into(),
            ));
        }
        Ok(Plan::CopyFrom(CopyFrom {
            stream,
            table: table.is_some(),
            target_columns,
            options: opts,
        }))
    }

    /// `COPY table [(columns)] TO STDOUT`: a scan of the table's listed columns (all when
    /// none are listed). A stream has no stored rows to copy out: 0A000.
    fn copy_table_to(
        &mut self,
        table_name: &ast::ObjectName,
        cols: &[ast::Ident],
        target: &ast::CopyTarget,
        text: &str,
    ) -> Result<Plan> {
        let name = self.ast_relation(table_name)?;
        let Some(info) = self.schema.table(&name) else {
            return Err(unsupported(
                "COPY stream TO is not supported; use COPY (SELECT ...) TO STDOUT",
            ));
        };
        if !matches!(target, ast::CopyTarget::Stdout) {
            return Err(copy_to_file());
        }
        let picked = copy_columns(&info.columns, cols, &name)?;
        let query = Query {
            projection: picked.iter().map(|&i| Expr::Column(i)).collect(),
            columns: picked.iter().map(|&i| info.columns[i].clone()).collect(),
            source: Source::Table {
                name,
                columns: info.columns,
            },
            windows: vec![],
            filter: None,
            aggregate: None,
            having: None,
            order_by: vec![],
            limit: None,
            offset: None,
            limit_param: None,
            offset_param: None,
            param_types: vec![],
            text: text.to_string(),
        };
        let (opts, _) = copy_options(&self.copy_items, false)?;
        Ok(Plan::CopyTo {
            query: Box::new(query),
            options: opts,
        })
    }
}

fn copy_to_file() -> Error {
    unsupported("COPY TO a file or program is not supported; use COPY ... TO STDOUT")
}

/// The positions in `columns` of a COPY's column list `cols`, in its order; every column
/// when the list is empty. Errors: 42703 for a column `relation` lacks, 42701 for one
/// listed twice.
fn copy_columns(columns: &[Column], cols: &[ast::Ident], relation: &str) -> Result<Vec<usize>> {
    if cols.is_empty() {
        return Ok((0..columns.len()).collect());
    }
    let mut picked = Vec::with_capacity(cols.len());
    for c in cols {
        let name = ident_name(c);
        let i = columns.iter().position(|x| x.name == name).ok_or_else(|| {
            Error::UndefinedColumn(format!(
                "column \"{name}\" of relation \"{relation}\" does not exist"
            ))
        })?;
        if picked.contains(&i) {
            return Err(Error::DuplicateColumn(format!(
                "column \"{name}\" specified more than once"
            )));
        }
        picked.push(i);
    }
    Ok(picked)
}

/// FORCE_NOT_NULL / FORCE_NULL name columns of the COPY's list: resolved to field
/// positions in `opts`. Errors: 42701 for a name given twice, 42703 for a column the
/// relation lacks, 42P10 for one the COPY's list does not reference.
fn force_columns(
    opts: &mut CopyOptions,
    force: &ForceLists,
    columns: &[Column],
    target_columns: &[usize],
    relation: &str,
) -> Result<()> {
    for (names, out, what) in [
        (&force.not_null, &mut opts.force_not_null, "FORCE_NOT_NULL"),
        (&force.null, &mut opts.force_null, "FORCE_NULL"),
    ] {
        for (k, name) in names.iter().enumerate() {
            if names[..k].contains(name) {
                return Err(Error::DuplicateColumn(format!(
                    "column \"{name}\" specified more than once"
                )));
            }
            let Some(i) = columns.iter().position(|x| &x.name == name) else {
                return Err(Error::UndefinedColumn(format!(
                    "column \"{name}\" of relation \"{relation}\" does not exist"
                )));
            };
            let Some(field) = target_columns.iter().position(|&t| t == i) else {
                return Err(Error::InvalidColumnReference(format!(
                    "{what} column \"{name}\" not referenced by COPY"
                )));
            };
            out.push(field);
        }
    }
    Ok(())
}
