//! Binding: names resolved, every expression typed, statements turned into [`Plan`]s.
//!
//! The binder walks sqlparser's AST once per statement. Identifiers are folded to lower case
//! unless quoted; each expression comes back with its PostgreSQL type, or with no type yet
//! when it is an *unknown* literal (a quoted string, NULL) or an untyped parameter: like
//! PostgreSQL, such operands take the type of the other side of an operator, so that
//! `ts > '2001-01-01'` compares timestamps and `delay > $1` makes `$1` an integer.
//!
//! Aggregation follows PostgreSQL's rules. GROUP BY keys are bound over the input row (by
//! expression, input column, output alias or ordinal); the select list, HAVING and ORDER BY
//! are then bound over the *aggregate row* `[keys.., aggregates..]`: a subexpression equal to
//! a key becomes that key's column, an aggregate call becomes its result's column, and any
//! other column reference is a grouping error (42803).
//!
//! Design decision: the binder emits no sqlparser types and does no evaluation beyond
//! constant-folding typed literals (`'10 seconds'::interval`), so that a plan can be built
//! from a prepared statement before its parameters are known.

use sqlparser::ast;

use super::parse::{normalize_word, CopyItem, CopyValue, ParsedStmt, RawExplain, RawWindow, Stmt};
use super::plan::*;
use crate::error::{Error, Result};
use crate::types::{parse_value, Column, DataType, Value};

/// An expression with its type; `None` is PostgreSQL's *unknown* (string literal, NULL,
/// untyped parameter), resolved by context.
#[derive(Clone, Debug)]
struct Bound {
    expr: Expr,
    ty: Option<DataType>,
}

impl Bound {
    fn new(expr: Expr, ty: DataType) -> Self {
        Bound { expr, ty: Some(ty) }
    }
}

/// What the expressions of a query may name.
#[derive(Clone, Debug, Default)]
struct Scope {
    /// The relations of FROM, in order; their columns are consecutive in `columns`.
    rels: Vec<Rel>,
    columns: Vec<Column>,
    /// The columns `*` expands to, in order (a `USING` column appears once).
    star: Vec<usize>,
    /// Columns of `JOIN ... USING`: an unqualified name resolves to the left side's column.
    merged: Vec<(String, usize)>,
    /// Type of wtime(*) and wstart(*); `None` when the query has no window.
    window_time: Option<DataType>,
}

/// One relation of FROM.
#[derive(Clone, Debug, Default)]
struct Rel {
    /// Names by which the relation may qualify a column (name, last part, alias).
    qualifiers: Vec<String>,
    /// The name PostgreSQL prints in errors for the relation (alias or name).
    name: String,
    /// Index of its first column in the scope's row.
    offset: usize,
    /// Number of its columns.
    ncols: usize,
}

impl Scope {
    /// The scope of a single relation's columns (its name is already in `rels[0]`).
    fn set_single(&mut self, columns: Vec<Column>) {
        if let Some(r) = self.rels.first_mut() {
            r.ncols = columns.len();
        }
        self.star = (0..columns.len()).collect();
        self.columns = columns;
    }

    fn rel_by_qualifier(&self, q: &str) -> Option<&Rel> {
        self.rels
            .iter()
            .find(|r| r.qualifiers.iter().any(|x| x == q))
    }

    fn rel_of_column(&self, i: usize) -> Option<&Rel> {
        self.rels
            .iter()
            .find(|r| i >= r.offset && i < r.offset + r.ncols)
    }
}

/// GROUP BY keys and aggregate calls being collected for one query.
#[derive(Debug, Default)]
struct AggState {
    keys: Vec<Expr>,
    key_types: Vec<DataType>,
    calls: Vec<AggCall>,
}

struct Binder<'a> {
    schema: &'a dyn SchemaProvider,
    /// The whole query string, for error positions.
    source: &'a str,
    /// Parameter types so far (client hints first, then inferred).
    params: Vec<Option<DataType>>,
    windows: &'a [RawWindow],
    agg: Option<AggState>,
    /// Bind over the aggregate row (select list, HAVING, ORDER BY of an aggregate query).
    agg_mode: bool,
    /// Inside an aggregate's argument.
    in_agg_arg: bool,
    /// Where expressions are being bound, for "not allowed in X" errors.
    clause: &'static str,
    /// Nesting of the expression being bound, refused past [`EXPRESSION_DEPTH_MAX`].
    depth: usize,
    /// Join conditions of the FROM clause being bound, ANDed into WHERE.
    join_conds: Vec<JoinCond>,
    /// Conditions of `LEFT JOIN table`, by the table's index in the join.
    left_conds: Vec<(usize, JoinCond)>,
    /// The COPY statement's options, as cut out before sqlparser.
    copy_items: Vec<CopyItem>,
}

/// The relations of a join being bound.
struct JoinRels<'r> {
    inputs: &'r mut Vec<JoinInput>,
    tables: &'r mut Vec<JoinTable>,
    time_types: &'r mut Vec<DataType>,
}

/// A join condition found in FROM.
#[derive(Clone, Debug)]
enum JoinCond {
    /// `JOIN ... ON expr`.
    On(Box<ast::Expr>),
    /// `JOIN ... USING (c)`: the left and right columns that must be equal.
    Using(usize, usize),
}

/// Deepest expression a statement may hold: evaluation recurses over it for every tuple,
/// so deeper ones are refused with 54001, as PostgreSQL's stack depth limit does.
pub const EXPRESSION_DEPTH_MAX: usize = 1000;

/// Bind one parsed statement.
pub(crate) fn bind(
    p: &ParsedStmt,
    schema: &dyn SchemaProvider,
    hints: &[Option<DataType>],
) -> Result<Plan> {
    let mut b = Binder {
        schema,
        source: &p.source,
        params: hints.to_vec(),
        windows: &p.windows,
        agg: None,
        agg_mode: false,
        in_agg_arg: false,
        clause: "",
        depth: 0,
        join_conds: Vec::new(),
        left_conds: Vec::new(),
        copy_items: p.copy_options.clone().unwrap_or_default(),
    };
    let plan = b.statement(p)?;
    if !p.windows.is_empty()
        && !matches!(
            plan,
            Plan::Query(_) | Plan::CopyTo { .. } | Plan::Declare { .. } | Plan::Explain { .. }
        )
    {
        return Err(Error::Syntax(
            "a window clause may only follow a stream in the FROM clause of a SELECT".into(),
        ));
    }
    Ok(plan)
}

/// A stream name given as a string (`'flights'`, `'"Mixed"'`), normalised as an identifier.
pub fn stream_name_of(s: &str) -> String {
    if s.starts_with('"') && s.ends_with('"') && s.len() >= 2 {
        s[1..s.len() - 1].to_string()
    } else {
        s.to_lowercase()
    }
}

/// A FETCH timeout as written (an interval of fixed length, `'1s'`, `'250 milliseconds'`)
/// in microseconds. Errors: 22023 for a negative or month-based one, 22007 for bad text.
fn fetch_timeout(text: &str) -> Result<i64> {
    let iv = crate::time::parse_interval(text)?;
    let us = crate::time::fixed_length_us(&iv).map_err(|_| {
        Error::InvalidParameterValue(format!(
            "FETCH timeout \"{text}\" has no fixed length: give it in days or smaller units"
        ))
    })?;
    if us < 0 {
        return Err(Error::InvalidParameterValue(format!(
            "FETCH timeout \"{text}\" is negative"
        )));
    }
    Ok(us)
}

/// The candidate nearest to `name` by edit distance, as PostgreSQL picks its "Perhaps you
/// meant" suggestion: no more than half of `name`'s characters may differ, ties go to the
/// first candidate, and an exact match is no suggestion.
pub(crate) fn closest<'n>(
    name: &str,
    candidates: impl Iterator<Item = &'n str>,
) -> Option<&'n str> {
    let limit = name.chars().count() / 2;
    candidates
        .map(|c| (levenshtein(name, c), c))
        .filter(|&(d, _)| d > 0 && d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Edit distance (insertions, deletions, substitutions) between `a` and `b`, in characters.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

fn session_func_of(name: &str) -> Option<SessionFunc> {
    use SessionFunc as F;
    Some(match name {
        "pg_advisory_lock" => F::AdvisoryLock,
        "pg_advisory_lock_shared" => F::AdvisoryLockShared,
        "pg_try_advisory_lock" => F::TryAdvisoryLock,
        "pg_try_advisory_lock_shared" => F::TryAdvisoryLockShared,
        "pg_advisory_xact_lock" => F::AdvisoryXactLock,
        "pg_advisory_xact_lock_shared" => F::AdvisoryXactLockShared,
        "pg_try_advisory_xact_lock" => F::TryAdvisoryXactLock,
        "pg_try_advisory_xact_lock_shared" => F::TryAdvisoryXactLockShared,
        "pg_advisory_unlock" => F::AdvisoryUnlock,
        "pg_advisory_unlock_shared" => F::AdvisoryUnlockShared,
        "pg_advisory_unlock_all" => F::AdvisoryUnlockAll,
        "pg_notify" => F::Notify,
        "pg_cancel_backend" => F::CancelBackend,
        "pg_terminate_backend" => F::TerminateBackend,
        _ => return None,
    })
}

/// The names a FROM relation answers to: its alias, else its name and the name's last part.
fn relation_names(rel: &str, alias: Option<&ast::TableAlias>) -> Result<Rel> {
    let short = rel.rsplit('.').next().unwrap_or(rel).to_string();
    Ok(match alias {
        Some(a) => {
            if !a.columns.is_empty() {
                return Err(unsupported("column aliases in FROM are not supported"));
            }
            Rel {
                qualifiers: vec![ident_name(&a.name)],
                name: ident_name(&a.name),
                ..Rel::default()
            }
        }
        None => Rel {
            qualifiers: vec![rel.to_string(), short.clone()],
            name: short,
            ..Rel::default()
        },
    })
}

/// The DEFAULT of column `c` of a table (`defaults` is `None` for a stream): its
/// expression, else NULL.
fn column_default(defaults: &Option<Vec<Option<Expr>>>, c: usize) -> Expr {
    defaults
        .as_ref()
        .and_then(|d| d[c].clone())
        .unwrap_or(Expr::Literal(Value::Null))
}

/// 42809 (PostgreSQL's word for a relation of the wrong kind) for `tcq_advance` of the
/// table or system view `name`.
pub(crate) fn advance_of_no_stream(name: &str) -> Error {
    Error::WrongObjectType(format!(
        "\"{name}\" is not a stream: tcq_advance moves a stream's time"
    ))
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::FeatureNotSupported(what.into())
}

fn ident_name(id: &ast::Ident) -> String {
    normalize_word(&id.value, id.quote_style)
}

/// A relation's name as the catalog knows it, from the name as written (its parts joined
/// by dots), by PostgreSQL's rules: `name` and `schema.name` as they are (`public.name`
/// as `name`), and `database.schema.name` as `schema.name` when `database` is the
/// session's (any, when `database` is `None`: a catalog record replayed at start-up). Every statement that
/// names a stream or table resolves the name here.
/// Errors: 0A000 for another database, 42601 for four parts or more.
pub(crate) fn relation_name(written: &str, database: Option<&str>) -> Result<String> {
    let parts: Vec<&str> = written.split('.').collect();
    let (schema, name) = match parts.as_slice() {
        [name] => return Ok(name.to_string()),
        [schema, name] => (*schema, *name),
        [db, schema, name] => {
            if database.is_some_and(|d| d != *db) {
                return Err(Error::FeatureNotSupported(format!(
                    "cross-database references are not implemented: {written}"
                )));
            }
            (*schema, *name)
        }
        _ => {
            return Err(Error::Syntax(format!(
                "improper qualified name (too many dotted names): {written}"
            )))
        }
    };
    // The catalog keys public's relations by their bare name (`public.s` is `s`).
    Ok(if schema == "public" {
        name.to_string()
    } else {
        format!("{schema}.{name}")
    })
}

fn object_name(name: &ast::ObjectName) -> Result<String> {
    let mut parts = Vec::new();
    for part in &name.0 {
        match part.as_ident() {
            Some(id) => parts.push(ident_name(id)),
            None => return Err(Error::Syntax(format!("syntax error at or near \"{name}\""))),
        }
    }
    Ok(parts.join("."))
}

/// A type name as written (`double precision`, `varchar(3)`, `TIMESTAMP(3) WITH TIME ZONE`)
/// to a [`DataType`]. Errors: 42704 for unknown names, 0A000 for PostgreSQL types tcq lacks.
pub(crate) fn type_from_name(written: &str) -> Result<DataType> {
    let lower = written.trim().to_lowercase();
    let mut base = String::new();
    let mut args: Vec<u32> = Vec::new();
    let mut rest = lower.as_str();
    while let Some(open) = rest.find('(') {
        base.push_str(&rest[..open]);
        let close = rest[open..]
            .find(')')
            .map(|c| c + open)
            .ok_or_else(|| Error::Syntax(format!("syntax error at or near \"{written}\"")))?;
        for a in rest[open + 1..close].split(',') {
            let n: u32 = a
                .trim()
                .parse()
                .map_err(|_| Error::Syntax(format!("syntax error at or near \"{written}\"")))?;
            args.push(n);
        }
        base.push(' ');
        rest = &rest[close + 1..];
    }
    base.push_str(rest);
    let base = base.split_whitespace().collect::<Vec<_>>().join(" ");
    let base = base
        .strip_prefix("pg_catalog.")
        .unwrap_or(&base)
        .to_string();
    let ty = match base.as_str() {
        "boolean" | "bool" => DataType::Bool,
        "smallint" | "int2" => DataType::Int2,
        "integer" | "int" | "int4" => DataType::Int4,
        "bigint" | "int8" => DataType::Int8,
        "real" | "float4" => DataType::Float4,
        "double precision" | "float8" | "double" => DataType::Float8,
        "float" => match args.first() {
            Some(&p) if p <= 24 => DataType::Float4,
            _ => DataType::Float8,
        },
        "numeric" | "decimal" | "dec" => DataType::Numeric,
        "text" | "string" => DataType::Text,
        "varchar" | "character varying" | "char varying" => match args.first() {
            Some(0) => return Err(Error::InvalidParameterValue("length for type varchar must be at least 1".into())),
            Some(&n) if n > 10_485_760 => return Err(Error::InvalidParameterValue("length for type varchar cannot exceed 10485760".into())),
            n => DataType::Varchar(n.copied()),
        },
        "timestamp" | "timestamp without time zone" => DataType::Timestamp,
        "timestamptz" | "timestamp with time zone" => DataType::TimestampTz,
        "interval" => DataType::Interval,
        "char" | "character" | "bpchar" | "date" | "time" | "timetz" | "time with time zone" | "time without time zone" | "bytea" | "json"
        | "jsonb" | "uuid" | "regclass" | "oid" | "name" => {
            return Err(unsupported(format!(
                "type {base} is not supported; stream columns may be boolean, smallint, integer, bigint, real, double precision, numeric, text, varchar(n), timestamp, timestamptz or interval"
            )))
        }
        // An array of any type (`int[]`, `text ARRAY`): PostgreSQL has them, a column here not.
        b if b.ends_with("[ ]") || b.ends_with("[]") || b.ends_with(" array") || b.contains("[ ") => {
            return Err(unsupported(format!(
                "array types ({}) are not supported as column types",
                written.trim()
            )))
        }
        _ => return Err(Error::UndefinedObject(format!("type \"{}\" does not exist", written.trim()))),
    };
    Ok(ty)
}

/// A literal, or casts of one: a DEFAULT that can be evaluated when the table is created.
fn is_constant(e: &Expr) -> bool {
    match e {
        Expr::Literal(_) => true,
        Expr::Cast { expr, .. } => is_constant(expr),
        _ => false,
    }
}

/// The type modifier of a column declared `numeric(p[, s])` (`decimal`, `dec`), checked as
/// PostgreSQL checks it: 22023 for a precision outside 1..1000; 0A000 for a scale above
/// 28, which tcq's numeric cannot hold. `None` for a plain `numeric` or another type.
fn numeric_typmod(written: &str) -> Result<Option<crate::types::NumericTypmod>> {
    let lower = written.trim().to_lowercase();
    let Some((base, args)) = lower.split_once('(') else {
        return Ok(None);
    };
    if !matches!(base.trim(), "numeric" | "decimal" | "dec") {
        return Ok(None);
    }
    let args = args.trim_end().strip_suffix(')').unwrap_or(args);
    let mut nums = args.split(',').map(|a| a.trim().parse::<u32>());
    let precision = match nums.next() {
        Some(Ok(p)) => p,
        _ => return Ok(None), // type_from_name reports the syntax
    };
    let scale = match nums.next() {
        Some(Ok(s)) => s,
        Some(Err(_)) => return Ok(None),
        None => 0,
    };
    if !(1..=1000).contains(&precision) {
        return Err(Error::InvalidParameterValue(format!(
            "NUMERIC precision {precision} must be between 1 and 1000"
        )));
    }
    if scale > 28 {
        return Err(unsupported(format!(
            "NUMERIC scale {scale} is not supported: tcq's numeric holds at most 28 digits after the point"
        )));
    }
    Ok(Some(crate::types::NumericTypmod {
        precision: precision as u16,
        scale: scale as u16,
    }))
}

/// PostgreSQL's internal short name of a type, as used for the column name of a cast.
fn short_type_name(t: DataType) -> &'static str {
    match t {
        DataType::Bool => "bool",
        DataType::Int2 => "int2",
        DataType::Int4 => "int4",
        DataType::Int8 => "int8",
        DataType::Float4 => "float4",
        DataType::Float8 => "float8",
        DataType::Numeric => "numeric",
        DataType::Text => "text",
        DataType::Varchar(_) => "varchar",
        DataType::Timestamp => "timestamp",
        DataType::TimestampTz => "timestamptz",
        DataType::Interval => "interval",
    }
}

fn numeric_rank(t: DataType) -> u8 {
    match t {
        DataType::Int2 => 1,
        DataType::Int4 => 2,
        DataType::Int8 => 3,
        DataType::Numeric => 4,
        DataType::Float4 => 5,
        DataType::Float8 => 6,
        _ => 0,
    }
}

/// The type two numeric operands are promoted to (PostgreSQL's implicit casts).
pub(crate) fn promote_numeric(a: DataType, b: DataType) -> DataType {
    if a == b {
        return a;
    }
    if a.is_integer() && b.is_integer() {
        return if numeric_rank(a) >= numeric_rank(b) {
            a
        } else {
            b
        };
    }
    if matches!(a, DataType::Float4 | DataType::Float8)
        || matches!(b, DataType::Float4 | DataType::Float8)
    {
        return DataType::Float8;
    }
    DataType::Numeric
}

/// A common type for comparison, CASE, COALESCE and IN, or `None`.
fn common_type(a: DataType, b: DataType) -> Option<DataType> {
    if a == b {
        return Some(a);
    }
    if a.is_numeric() && b.is_numeric() {
        return Some(promote_numeric(a, b));
    }
    if a.is_text() && b.is_text() {
        return Some(DataType::Text);
    }
    if a.is_timestamp() && b.is_timestamp() {
        return Some(DataType::TimestampTz);
    }
    None
}

/// True when PostgreSQL allows an implicit (or assignment) cast from `from` to `to`.
fn castable(from: DataType, to: DataType, explicit: bool) -> bool {
    if from == to || (from.is_numeric() && to.is_numeric()) || (from.is_text() && to.is_text()) {
        return true;
    }
    if from.is_timestamp() && to.is_timestamp() {
        return true;
    }
    if explicit {
        return from.is_text()
            || to.is_text()
            || matches!(
                (from, to),
                (DataType::Bool, DataType::Int4) | (DataType::Int4, DataType::Bool)
            );
    }
    // Assignment casts: anything to text/varchar.
    to.is_text()
}

fn op_symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Mod => "%",
        BinaryOp::Eq => "=",
        BinaryOp::NotEq => "<>",
        BinaryOp::Lt => "<",
        BinaryOp::LtEq => "<=",
        BinaryOp::Gt => ">",
        BinaryOp::GtEq => ">=",
        BinaryOp::And => "AND",
        BinaryOp::Or => "OR",
        BinaryOp::Concat => "||",
    }
}

fn type_label(t: Option<DataType>) -> String {
    t.map(|t| t.name()).unwrap_or_else(|| "unknown".into())
}

fn no_operator(l: Option<DataType>, op: &str, r: Option<DataType>) -> Error {
    Error::UndefinedFunction(format!(
        "operator does not exist: {} {op} {}",
        type_label(l),
        type_label(r)
    ))
}

fn agg_func_of(name: &str) -> Option<AggFunc> {
    Some(match name {
        "count" => AggFunc::Count,
        "sum" => AggFunc::Sum,
        "avg" => AggFunc::Avg,
        "min" => AggFunc::Min,
        "max" => AggFunc::Max,
        "stddev" | "stddev_samp" => AggFunc::StddevSamp,
        "stddev_pop" => AggFunc::StddevPop,
        "variance" | "var_samp" => AggFunc::VarSamp,
        "var_pop" => AggFunc::VarPop,
        _ => return None,
    })
}

fn func_name(f: &ast::Function) -> String {
    f.name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(ident_name)
        .unwrap_or_default()
}

/// True when `e` contains an aggregate call (outside subqueries).
fn contains_aggregate(e: &ast::Expr) -> bool {
    crate::sql::deep(|| contains_aggregate_in(e))
}

fn contains_aggregate_in(e: &ast::Expr) -> bool {
    use ast::Expr as E;
    let any = |v: &[&ast::Expr]| v.iter().any(|x| contains_aggregate(x));
    match e {
        E::Function(f) => {
            if agg_func_of(&func_name(f)).is_some() && f.over.is_none() {
                return true;
            }
            func_arg_exprs(f).iter().any(|x| contains_aggregate(x))
        }
        E::BinaryOp { left, right, .. } => any(&[left, right]),
        E::UnaryOp { expr, .. }
        | E::Nested(expr)
        | E::Cast { expr, .. }
        | E::IsNull(expr)
        | E::IsNotNull(expr)
        | E::IsTrue(expr)
        | E::IsFalse(expr)
        | E::IsNotTrue(expr)
        | E::IsNotFalse(expr)
        | E::IsUnknown(expr)
        | E::IsNotUnknown(expr)
        | E::Extract { expr, .. }
        | E::Ceil { expr, .. }
        | E::Floor { expr, .. } => contains_aggregate(expr),
        E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => any(&[a, b]),
        E::Between {
            expr, low, high, ..
        } => any(&[expr, low, high]),
        E::Like { expr, pattern, .. } | E::ILike { expr, pattern, .. } => any(&[expr, pattern]),
        E::In {
            expr,
            target: ast::InTarget::List(list),
            ..
        } => contains_aggregate(expr) || list.iter().any(contains_aggregate),
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_deref().is_some_and(contains_aggregate)
                || conditions
                    .iter()
                    .any(|c| contains_aggregate(&c.condition) || contains_aggregate(&c.result))
                || else_result.as_deref().is_some_and(contains_aggregate)
        }
        E::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            contains_aggregate(expr)
                || substring_from.as_deref().is_some_and(contains_aggregate)
                || substring_for.as_deref().is_some_and(contains_aggregate)
        }
        _ => false,
    }
}

fn func_arg_exprs(f: &ast::Function) -> Vec<&ast::Expr> {
    match &f.args {
        ast::FunctionArguments::List(l) => l
            .args
            .iter()
            .filter_map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                ast::FunctionArg::Named {
                    arg: ast::FunctionArgExpr::Expr(e),
                    ..
                } => Some(e),
                _ => None,
            })
            .collect(),
        _ => vec![],
    }
}

/// Function arguments: the expressions, whether the list is `*`, whether DISTINCT.
struct Args<'e> {
    exprs: Vec<&'e ast::Expr>,
    star: bool,
    distinct: bool,
    none: bool,
}

fn func_args(f: &ast::Function) -> Result<Args<'_>> {
    let name = func_name(f);
    if f.over.is_some() {
        return Err(unsupported(format!("window function {name}(...) OVER is not supported; use a window clause after the stream")));
    }
    if f.filter.is_some() || !f.within_group.is_empty() {
        return Err(unsupported(format!(
            "FILTER and WITHIN GROUP are not supported ({name})"
        )));
    }
    let mut a = Args {
        exprs: vec![],
        star: false,
        distinct: false,
        none: false,
    };
    match &f.args {
        ast::FunctionArguments::None => a.none = true,
        ast::FunctionArguments::Subquery(_) => {
            return Err(unsupported("subqueries are not supported"))
        }
        ast::FunctionArguments::List(l) => {
            a.distinct = matches!(
                l.duplicate_treatment,
                Some(ast::DuplicateTreatment::Distinct)
            );
            if !l.clauses.is_empty() {
                return Err(unsupported(format!(
                    "clauses inside {name}(...) are not supported"
                )));
            }
            for arg in &l.args {
                match arg {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => a.exprs.push(e),
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => a.star = true,
                    _ => return Err(Error::Syntax(format!("syntax error at or near \"{arg}\""))),
                }
            }
            if a.star && !a.exprs.is_empty() {
                return Err(Error::Syntax("syntax error at or near \"*\"".into()));
            }
        }
    }
    Ok(a)
}

fn expr_has_column(e: &Expr) -> bool {
    crate::sql::deep(|| expr_has_column_in(e))
}

fn expr_has_column_in(e: &Expr) -> bool {
    match e {
        Expr::Column(_) => true,
        Expr::Literal(_) | Expr::Param(_) | Expr::WindowMeta(_) => false,
        Expr::Unary { expr, .. } | Expr::Cast { expr, .. } | Expr::IsNull { expr, .. } => {
            expr_has_column(expr)
        }
        Expr::Binary { left, right, .. } => expr_has_column(left) || expr_has_column(right),
        Expr::Func { args, .. } => args.iter().any(expr_has_column),
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            operand.as_deref().is_some_and(expr_has_column)
                || branches
                    .iter()
                    .any(|(a, b)| expr_has_column(a) || expr_has_column(b))
                || otherwise.as_deref().is_some_and(expr_has_column)
        }
        Expr::InList { expr, list, .. } => {
            expr_has_column(expr) || list.iter().any(expr_has_column)
        }
        Expr::Like { expr, pattern, .. } => expr_has_column(expr) || expr_has_column(pattern),
    }
}

/// A select-list entry after `*` expansion.
enum Item<'q> {
    Ast(&'q ast::Expr, Option<String>),
    Column(usize),
}

fn default_column_name(e: &ast::Expr) -> String {
    use ast::Expr as E;
    match e {
        E::Identifier(id) => ident_name(id),
        E::CompoundIdentifier(ids) => ids.last().map(ident_name).unwrap_or_default(),
        E::Function(f) => func_name(f),
        E::Nested(inner) => default_column_name(inner),
        E::Cast {
            expr, data_type, ..
        } => match default_column_name(expr).as_str() {
            "?column?" => type_from_name(&data_type.to_string())
                .map(|t| short_type_name(t).to_string())
                .unwrap_or_else(|_| "?column?".into()),
            name => name.to_string(),
        },
        E::TypedString(ts) => type_from_name(&ts.data_type.to_string())
            .map(|t| short_type_name(t).to_string())
            .unwrap_or_else(|_| "?column?".into()),
        E::Interval(_) => "interval".into(),
        E::Extract { .. } => "extract".into(),
        E::Ceil { .. } => "ceil".into(),
        E::Floor { .. } => "floor".into(),
        E::Substring { .. } => "substring".into(),
        E::Case { .. } => "case".into(),
        E::AtTimeZone { .. } => "timezone".into(),
        E::Value(v) if matches!(v.value, ast::Value::Boolean(_)) => "bool".into(),
        _ => "?column?".into(),
    }
}

/// `s`, unless it holds a NUL character, which PostgreSQL text cannot (22021).
pub(crate) fn no_nul(s: &str) -> Result<&str> {
    if s.contains('\0') {
        return Err(Error::CharacterNotInRepertoire(
            "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
        ));
    }
    Ok(s)
}

fn literal_u64(e: &ast::Expr, what: &str) -> Result<Option<u64>> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<u64>().map(Some).map_err(|_| {
                Error::InvalidParameterValue(format!(
                    "{what} must be a non-negative integer, got {n}"
                ))
            }),
            ast::Value::Null => Ok(None),
            // A quoted literal is read as bigint, as PostgreSQL coerces an unknown literal.
            ast::Value::SingleQuotedString(t) => match t.trim().parse::<i64>() {
                Ok(n) if n < 0 => literal_u64(
                    &ast::Expr::UnaryOp {
                        op: ast::UnaryOperator::Minus,
                        expr: Box::new(ast::Expr::value(ast::Value::Number(
                            n.unsigned_abs().to_string(),
                            false,
                        ))),
                    },
                    what,
                ),
                Ok(n) => Ok(Some(n as u64)),
                Err(_) => Err(Error::InvalidTextRepresentation(format!(
                    "invalid input syntax for type bigint: \"{t}\""
                ))),
            },
            _ => Err(Error::DatatypeMismatch(format!(
                "argument of {what} must be type bigint, not type unknown"
            ))),
        },
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            ..
        } if what == "LIMIT" => Err(Error::InvalidRowCountInLimit(
            "LIMIT must not be negative".into(),
        )),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            ..
        } if what == "OFFSET" => Err(Error::InvalidRowCountInResultOffset(
            "OFFSET must not be negative".into(),
        )),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            ..
        } => Err(Error::InvalidParameterValue(format!(
            "{what} must not be negative"
        ))),
        ast::Expr::Cast { expr, .. } | ast::Expr::Nested(expr) => literal_u64(expr, what),
        _ => Err(unsupported(format!("{what} must be an integer constant"))),
    }
}

/// Parse `EVENT_RATE '<n> per <unit>'` into events per second.
fn event_rate(text: &str) -> Result<f64> {
    let bad = || {
        Error::InvalidParameterValue(format!("invalid EVENT_RATE \"{text}\": expected '<number> per <interval>', e.g. '1 per minute'"))
    };
    let lower = text.trim().to_lowercase();
    let (n, unit) = match lower.split_once(" per ") {
        Some((n, u)) => (n.trim(), u.trim()),
        None => (lower.as_str(), "second"),
    };
    let n: f64 = n.parse().map_err(|_| bad())?;
    if !(n.is_finite() && n > 0.0) {
        return Err(bad());
    }
    let unit_iv = if unit.starts_with(|c: char| c.is_ascii_digit()) {
        crate::time::parse_interval(unit)
    } else {
        crate::time::parse_interval(&format!("1 {unit}"))
    }
    .map_err(|_| bad())?;
    let us = crate::time::fixed_length_us(&unit_iv)?;
    if us <= 0 {
        return Err(bad());
    }
    Ok(n * 1e6 / us as f64)
}

impl<'a> Binder<'a> {
    /// The catalog name of a stream or table as written (see [`relation_name`]).
    fn relation(&self, written: &str) -> Result<String> {
        relation_name(written, self.schema.database())
    }

    /// [`Binder::relation`] of an AST name.
    fn ast_relation(&self, name: &ast::ObjectName) -> Result<String> {
        self.relation(&object_name(name)?)
    }

    fn statement(&mut self, p: &ParsedStmt) -> Result<Plan> {
        match &p.stmt {
            Stmt::Empty => Ok(Plan::Empty),
            Stmt::CreateStream {
                name,
                columns,
                archived,
                if_not_exists,
                slack,
                retention,
                options,
            } => {
                let slack_us = match slack {
                    Some(s) => slack_length(s)?,
                    None => 0,
                };
                let retention_us = retention.as_deref().map(retention_length).transpose()?;
                if retention_us.is_some() && !archived {
                    return Err(Error::InvalidParameterValue(
                        "retention applies to archived streams only (TYPE ARCHIVED)".into(),
                    ));
                }
                let name = &self.relation(name)?;
                let Plan::CreateStream(mut c) =
                    self.create_stream(name, columns, *archived, *if_not_exists, slack_us)?
                else {
                    unreachable!("create_stream plans a CreateStream")
                };
                c.retention_us = retention_us;
                c.source = crate::connect::spec::source_spec(options, &c.columns)?;
                Ok(Plan::CreateStream(c))
            }
            Stmt::AlterStreamSource { name, pause } => {
                let name = self.relation(name)?;
                if self.schema.stream(&name).is_none() {
                    return Err(Error::UndefinedTable(name));
                }
                Ok(Plan::AlterStreamSource {
                    name,
                    pause: *pause,
                })
            }
            Stmt::AlterStreamRetention { name, retention } => {
                let name = &self.relation(name)?;
                if self.schema.stream(name).is_none() {
                    return Err(Error::UndefinedTable(name.clone()));
                }
                Ok(Plan::AlterStreamRetention {
                    name: name.clone(),
                    retention_us: retention.as_deref().map(retention_length).transpose()?,
                })
            }
            Stmt::CreateRole {
                name,
                options,
                user,
            } => Ok(Plan::CreateRole {
                name: name.clone(),
                options: options.clone(),
                user: *user,
            }),
            Stmt::AlterRole { name, options } => Ok(Plan::AlterRole {
                name: name.clone(),
                options: options.clone(),
            }),
            Stmt::DropRole { names, if_exists } => Ok(Plan::DropRole {
                names: names.clone(),
                if_exists: *if_exists,
            }),
            Stmt::Grant(g) => {
                let mut g = g.clone();
                for r in &mut g.relations {
                    *r = self.relation(r)?;
                }
                Ok(Plan::Grant(g))
            }
            Stmt::AlterOwner { table, name, owner } => {
                let name = &self.relation(name)?;
                let exists = if *table {
                    self.schema.table(name).is_some()
                } else {
                    self.schema.stream(name).is_some()
                };
                if !exists {
                    return Err(Error::UndefinedTable(name.clone()));
                }
                Ok(Plan::AlterOwner {
                    table: *table,
                    name: name.clone(),
                    owner: owner.clone(),
                })
            }
            Stmt::DropStream { names, if_exists } => Ok(Plan::DropStream {
                names: names
                    .iter()
                    .map(|n| self.relation(n))
                    .collect::<Result<_>>()?,
                if_exists: *if_exists,
            }),
            Stmt::Fetch {
                cursor,
                count,
                is_move,
                timeout,
            } => Ok(Plan::Fetch {
                cursor: cursor.clone(),
                count: *count,
                is_move: *is_move,
                timeout_us: timeout.as_deref().map(fetch_timeout).transpose()?,
            }),
            Stmt::Close(c) => Ok(Plan::Close { cursor: c.clone() }),
            Stmt::Transaction(op) => Ok(Plan::Transaction(*op)),
            Stmt::Savepoint(op) => Ok(Plan::Savepoint(op.clone())),
            Stmt::Set { name, value } => Ok(Plan::Set {
                name: name.clone(),
                value: value.clone(),
            }),
            Stmt::Show(name) => Ok(Plan::Show { name: name.clone() }),
            Stmt::Declare {
                cursor,
                statement,
                hold,
            } => {
                let ast::Statement::Query(q) = &**statement else {
                    return Err(Error::Syntax(
                        "DECLARE CURSOR must be followed by a SELECT".into(),
                    ));
                };
                Ok(Plan::Declare {
                    cursor: cursor.clone(),
                    query: Box::new(self.query(q, &p.text)?),
                    hold: *hold,
                })
            }
            Stmt::Explain { options, statement } => self.explain(options, statement, &p.text),
            Stmt::Ast(s) => self.ast_statement(s, &p.text),
        }
    }

    fn explain(
        &mut self,
        raw: &RawExplain,
        statement: &ast::Statement,
        text: &str,
    ) -> Result<Plan> {
        let ast::Statement::Query(q) = statement else {
            return Err(unsupported("EXPLAIN is supported for SELECT only"));
        };
        let format = match raw.format.as_deref() {
            None | Some("text") => ExplainFormat::Text,
            Some("json") => ExplainFormat::Json,
            Some("dot") => ExplainFormat::Dot,
            Some("flink") => ExplainFormat::Flink,
            Some(other) => {
                return Err(Error::InvalidParameterValue(format!(
                    "unrecognized value for EXPLAIN option \"format\": \"{other}\""
                )))
            }
        };
        let event_rate_per_sec = raw.event_rate.as_deref().map(event_rate).transpose()?;
        let options = ExplainOptions {
            format,
            analyze: raw.analyze,
            verbose: raw.verbose,
            event_rate_per_sec,
        };
        Ok(Plan::Explain {
            query: Box::new(self.query(q, text)?),
            options,
        })
    }

    fn create_stream(
        &mut self,
        name: &str,
        raw: &[super::parse::RawColumn],
        archived: bool,
        if_not_exists: bool,
        slack_us: i64,
    ) -> Result<Plan> {
        let mut columns: Vec<Column> = Vec::with_capacity(raw.len());
        let mut timestamp_column = None;
        for (i, c) in raw.iter().enumerate() {
            if columns.iter().any(|x| x.name == c.name) {
                return Err(Error::DuplicateColumn(format!(
                    "column \"{}\" specified more than once",
                    c.name
                )));
            }
            let ty = type_from_name(&c.type_name)?;
            if c.timestamp_column {
                if timestamp_column.is_some() {
                    return Err(Error::InvalidTableDefinition(format!(
                        "stream \"{name}\" has more than one TIMESTAMPCOLUMN"
                    )));
                }
                if !ty.is_timestamp() {
                    return Err(Error::InvalidTableDefinition(format!(
                        "TIMESTAMPCOLUMN \"{}\" must be of type timestamp or timestamptz, not {}",
                        c.name,
                        ty.name()
                    )));
                }
                timestamp_column = Some(i);
            }
            let mut column = Column::new(c.name.clone(), ty);
            column.typmod = numeric_typmod(&c.type_name)?;
            columns.push(column);
        }
        Ok(Plan::CreateStream(CreateStream {
            name: name.to_string(),
            columns,
            timestamp_column,
            archived,
            if_not_exists,
            slack_us,
            retention_us: None,
            source: None,
        }))
    }

    fn ast_statement(&mut self, s: &ast::Statement, text: &str) -> Result<Plan> {
        match s {
            ast::Statement::Query(q) => {
                if let Some(plan) = self.try_session_call(q)? {
                    return Ok(plan);
                }
                Ok(Plan::Query(Box::new(self.query(q, text)?)))
            }
            ast::Statement::Insert(ins) => self.insert(ins),
            ast::Statement::Copy {
                source,
                to,
                target,
                options,
                legacy_options,
                ..
            } => self.copy(source, *to, target, options, legacy_options, text),
            ast::Statement::CreateTable(ct) => self.create_table(ct),
            ast::Statement::Update(u) => self.update(u),
            ast::Statement::Delete(d) => self.delete(d),
            ast::Statement::Truncate(t) => {
                let mut names = Vec::new();
                for n in &t.table_names {
                    names.push(self.table_info(&self.ast_relation(&n.name)?)?.0);
                }
                Ok(Plan::Truncate { names })
            }
            ast::Statement::Drop {
                object_type: ast::ObjectType::Table,
                if_exists,
                names,
                ..
            } => Ok(Plan::DropTable {
                names: names
                    .iter()
                    .map(|n| self.ast_relation(n))
                    .collect::<Result<_>>()?,
                if_exists: *if_exists,
            }),
            ast::Statement::Deallocate { name, .. } => Ok(Plan::Deallocate {
                name: super::deallocate_name(name),
            }),
            ast::Statement::LISTEN { channel } => Ok(Plan::Listen {
                channel: ident_name(channel),
            }),
            ast::Statement::UNLISTEN { channel } => Ok(Plan::Unlisten {
                channel: (channel.value != "*" || channel.quote_style.is_some())
                    .then(|| ident_name(channel)),
            }),
            ast::Statement::NOTIFY { channel, payload } => Ok(Plan::Notify {
                channel: ident_name(channel),
                payload: payload.clone().unwrap_or_default(),
            }),
            ast::Statement::Discard { object_type } => Ok(Plan::Discard {
                all: matches!(object_type, ast::DiscardObject::ALL),
                tag: format!("DISCARD {object_type}"),
            }),
            ast::Statement::Drop { object_type, .. } => Err(unsupported(format!(
                "DROP {object_type} is not supported; use DROP STREAM or DROP TABLE"
            ))),
            other => {
                let shown = other.to_string();
                let kw: String = shown
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                Err(unsupported(format!("{kw} is not supported")))
            }
        }
    }

    fn create_table(&mut self, ct: &ast::CreateTable) -> Result<Plan> {
        if ct.query.is_some() || ct.like.is_some() || ct.clone.is_some() {
            return Err(unsupported(
                "CREATE TABLE ... AS / LIKE / CLONE is not supported; declare the columns",
            ));
        }
        if ct.temporary || ct.external {
            return Err(unsupported(
                "temporary and external tables are not supported",
            ));
        }
        let name = self.ast_relation(&ct.name)?;
        let scope = Scope::default();
        let mut columns: Vec<Column> = Vec::with_capacity(ct.columns.len());
        let mut not_null = Vec::with_capacity(ct.columns.len());
        let mut defaults = Vec::with_capacity(ct.columns.len());
        let mut primary_key: Option<Vec<usize>> = None;
        let mut unique = Vec::new();
        let set_primary = |cols: Vec<usize>, pk: &mut Option<Vec<usize>>| {
            if pk.is_some() {
                return Err(Error::InvalidTableDefinition(format!(
                    "multiple primary keys for table \"{name}\" are not allowed"
                )));
            }
            *pk = Some(cols);
            Ok(())
        };
        for c in &ct.columns {
            let col = ident_name(&c.name);
            if columns.iter().any(|x| x.name == col) {
                return Err(Error::DuplicateColumn(format!(
                    "column \"{col}\" specified more than once"
                )));
            }
            let ty = type_from_name(&c.data_type.to_string())?;
            let i = columns.len();
            let (mut nn, mut default) = (false, None);
            let (mut said_null, mut said_not_null) = (false, false);
            for o in &c.options {
                match &o.option {
                    ast::ColumnOption::Null => (nn, said_null) = (false, true),
                    ast::ColumnOption::NotNull => (nn, said_not_null) = (true, true),
                    ast::ColumnOption::Default(e) => {
                        self.clause = "DEFAULT expressions";
                        let b = self.expr(e, &scope)?;
                        let assigned = self.assign(b, ty, &col)?;
                        // A constant default is checked now, as PostgreSQL coerces it at
                        // CREATE TABLE ('abc' for an integer column is 22P02 here).
                        if is_constant(&assigned) {
                            crate::expr::eval(&assigned, &crate::expr::EvalContext::new(&[], &[], None))?;
                        }
                        default = Some(assigned);
                    }
                    ast::ColumnOption::PrimaryKey(_) => set_primary(vec![i], &mut primary_key)?,
                    ast::ColumnOption::Unique(_) => unique.push(vec![i]),
                    other => {
                        return Err(unsupported(format!(
                            "column constraint {other} is not supported; tables take NOT NULL, DEFAULT, PRIMARY KEY and UNIQUE"
                        )))
                    }
                }
            }
            if said_null && said_not_null {
                return Err(Error::Syntax(format!(
                    "conflicting NULL/NOT NULL declarations for column \"{col}\" of table \"{name}\""
                )));
            }
            let mut column = Column::new(col, ty);
            column.typmod = numeric_typmod(&c.data_type.to_string())?;
            columns.push(column);
            not_null.push(nn);
            defaults.push(default);
        }
        if !self.params.is_empty() {
            return Err(Error::Syntax(
                "there is no parameter $1 in CREATE TABLE".into(),
            ));
        }
        let key_columns = |cols: &[ast::IndexColumn], what: &str| -> Result<Vec<usize>> {
            let mut out = Vec::new();
            for c in cols {
                let ast::Expr::Identifier(id) = &c.column.expr else {
                    return Err(unsupported("keys on expressions are not supported"));
                };
                let n = ident_name(id);
                let i = columns.iter().position(|x| x.name == n).ok_or_else(|| {
                    Error::UndefinedColumn(format!("column \"{n}\" named in key does not exist"))
                })?;
                if out.contains(&i) {
                    return Err(Error::DuplicateColumn(format!(
                        "column \"{n}\" appears twice in {what} constraint"
                    )));
                }
                out.push(i);
            }
            Ok(out)
        };
        for tc in &ct.constraints {
            match tc {
                ast::TableConstraint::PrimaryKey(p) => {
                    set_primary(key_columns(&p.columns, "primary key")?, &mut primary_key)?
                }
                ast::TableConstraint::Unique(u) => unique.push(key_columns(&u.columns, "unique")?),
                other => {
                    return Err(unsupported(format!(
                    "table constraint {other} is not supported; tables take PRIMARY KEY and UNIQUE"
                )))
                }
            }
        }
        for &i in primary_key.iter().flatten() {
            not_null[i] = true;
        }
        Ok(Plan::CreateTable(CreateTable {
            name,
            columns,
            not_null,
            defaults,
            primary_key,
            unique,
            if_not_exists: ct.if_not_exists,
        }))
    }

    /// `ON CONFLICT (cols) DO UPDATE SET ... [WHERE ...]`: the arbiter key and the
    /// assignments over the held row followed by the proposed one (`EXCLUDED`).
    fn on_conflict_update(
        &mut self,
        table: &str,
        info: &TableInfo,
        target: Option<&ast::ConflictTarget>,
        du: &ast::DoUpdate,
    ) -> Result<OnConflict> {
        let Some(ast::ConflictTarget::Columns {
            columns,
            predicate: None,
        }) = target
        else {
            return Err(Error::Syntax(
                "ON CONFLICT DO UPDATE requires inference specification or constraint name: name the key's columns, ON CONFLICT (col, ...)".into(),
            ));
        };
        let mut key_columns = Vec::new();
        for c in columns {
            let n = ident_name(c);
            let i = info
                .columns
                .iter()
                .position(|x| x.name == n)
                .ok_or_else(|| Error::UndefinedColumn(format!("column \"{n}\" does not exist")))?;
            key_columns.push(i);
        }
        let mut sorted = key_columns.clone();
        sorted.sort_unstable();
        let Some(key) = info.keys.iter().find(|k| {
            let mut k = (*k).clone();
            k.sort_unstable();
            k == sorted
        }) else {
            return Err(Error::InvalidColumnReference(
                "there is no unique or exclusion constraint matching the ON CONFLICT specification"
                    .into(),
            ));
        };
        let n = info.columns.len();
        let mut scope = Scope::default();
        let mut mine = relation_names(table, None)?;
        mine.ncols = n;
        let mut excluded = relation_names("excluded", None)?;
        excluded.offset = n;
        excluded.ncols = n;
        scope.rels = vec![mine, excluded];
        scope.columns = info.columns.iter().chain(&info.columns).cloned().collect();
        scope.star = (0..n).collect();
        self.clause = "ON CONFLICT DO UPDATE";
        let assignments = self.bind_assignments(table, &info.columns, &du.assignments, &scope)?;
        let filter = self.dml_filter(du.selection.as_ref(), &scope)?;
        Ok(OnConflict::DoUpdate {
            key_columns: key.clone(),
            assignments,
            filter,
        })
    }

    /// The `SET col = expr, ...` of UPDATE and of ON CONFLICT DO UPDATE: each target
    /// column of `table` (`columns`, in order) by index, with its value bound in `scope`
    /// and assigned to the column's type; `DEFAULT` is the column's default.
    ///
    /// Errors: 42703 for a column `table` lacks, 42601 for two assignments to one column,
    /// 0A000 for `SET (a, b) = (...)`, and the value's own binding and assignment errors.
    fn bind_assignments(
        &mut self,
        table: &str,
        columns: &[Column],
        set: &[ast::Assignment],
        scope: &Scope,
    ) -> Result<Vec<(usize, Expr)>> {
        let mut assignments: Vec<(usize, Expr)> = Vec::new();
        for a in set {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(unsupported("SET (a, b) = (...) is not supported"));
            };
            // `SET t.col = ...` is accepted as PostgreSQL does for the target's own name.
            let col =
                n.0.last()
                    .and_then(|p| p.as_ident())
                    .map(ident_name)
                    .unwrap_or_default();
            let i = columns.iter().position(|c| c.name == col).ok_or_else(|| {
                Error::UndefinedColumn(format!(
                    "column \"{col}\" of relation \"{table}\" does not exist"
                ))
            })?;
            if assignments.iter().any(|(j, _)| *j == i) {
                return Err(Error::Syntax(format!(
                    "multiple assignments to same column \"{col}\""
                )));
            }
            let e = match &a.value {
                ast::Expr::Identifier(id)
                    if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default") =>
                {
                    let (_, info) = self.table_info(table)?;
                    column_default(&Some(info.defaults), i)
                }
                v => {
                    let b = self.expr(v, scope)?;
                    self.assign(b, columns[i].data_type, &col)?
                }
            };
            assignments.push((i, e));
        }
        Ok(assignments)
    }

    /// The scope of one table named in UPDATE or DELETE, and its catalog name.
    fn dml_target(&self, factor: &ast::TableFactor) -> Result<(String, Scope)> {
        let ast::TableFactor::Table { name, alias, .. } = factor else {
            return Err(unsupported("UPDATE and DELETE take one table by name"));
        };
        let (table, info) = self.table_info(&self.ast_relation(name)?)?;
        let mut scope = Scope::default();
        scope.rels.push(relation_names(&table, alias.as_ref())?);
        scope.set_single(info.columns);
        Ok((table, scope))
    }

    fn update(&mut self, u: &ast::Update) -> Result<Plan> {
        if !u.table.joins.is_empty() || u.from.is_some() {
            return Err(unsupported("UPDATE ... FROM and joins are not supported"));
        }
        let (table, scope) = self.dml_target(&u.table.relation)?;
        self.clause = "UPDATE";
        let columns = scope.columns.clone();
        let assignments = self.bind_assignments(&table, &columns, &u.assignments, &scope)?;
        let filter = self.dml_filter(u.selection.as_ref(), &scope)?;
        let returning = self.returning(u.returning.as_deref(), &scope)?;
        Ok(Plan::Update(Update {
            table,
            assignments,
            filter,
            returning,
            param_types: self.finish_params(),
        }))
    }

    fn delete(&mut self, d: &ast::Delete) -> Result<Plan> {
        if d.using.is_some() || !d.tables.is_empty() || d.limit.is_some() || !d.order_by.is_empty()
        {
            return Err(unsupported("DELETE ... USING / LIMIT is not supported"));
        }
        let (ast::FromTable::WithFromKeyword(from) | ast::FromTable::WithoutKeyword(from)) =
            &d.from;
        let [one] = &from[..] else {
            return Err(unsupported("DELETE takes one table"));
        };
        if !one.joins.is_empty() {
            return Err(unsupported("DELETE takes one table"));
        }
        let (table, scope) = self.dml_target(&one.relation)?;
        let filter = self.dml_filter(d.selection.as_ref(), &scope)?;
        let returning = self.returning(d.returning.as_deref(), &scope)?;
        Ok(Plan::Delete(Delete {
            table,
            filter,
            returning,
            param_types: self.finish_params(),
        }))
    }

    /// `RETURNING items` over the one table in `scope` (`*` expands to its columns).
    fn returning(
        &mut self,
        list: Option<&[ast::SelectItem]>,
        scope: &Scope,
    ) -> Result<Option<Returning>> {
        let Some(list) = list else { return Ok(None) };
        self.clause = "RETURNING";
        let (mut projection, mut columns) = (Vec::new(), Vec::new());
        for item in list {
            let (e, alias) = match item {
                ast::SelectItem::UnnamedExpr(e) => (e, None),
                ast::SelectItem::ExprWithAlias { expr, alias } => (expr, Some(ident_name(alias))),
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                    for &i in &scope.star {
                        projection.push(Expr::Column(i));
                        columns.push(scope.columns[i].clone());
                    }
                    continue;
                }
                _ => return Err(unsupported("this RETURNING item is not supported")),
            };
            if contains_aggregate(e) {
                return Err(Error::Grouping(
                    "aggregate functions are not allowed in RETURNING".into(),
                ));
            }
            let b = self.expr(e, scope)?;
            let ty = b.ty.unwrap_or(DataType::Text);
            let expr = if b.ty.is_none() {
                self.coerce(b, DataType::Text, "RETURNING")?
            } else {
                b.expr
            };
            projection.push(expr);
            columns.push(Column::new(
                alias.unwrap_or_else(|| default_column_name(e)),
                ty,
            ));
        }
        Ok(Some(Returning {
            projection,
            columns,
        }))
    }

    fn dml_filter(&mut self, e: Option<&ast::Expr>, scope: &Scope) -> Result<Option<Expr>> {
        let Some(e) = e else { return Ok(None) };
        self.clause = "WHERE";
        let b = self.expr(e, scope)?;
        Ok(Some(self.boolean(b, "WHERE")?))
    }

    /// `SELECT f(args) [AS name]` without FROM for a function the engine runs for its
    /// effect: `tcq_advance(stream, time)`, the advisory lock family, `pg_notify`. Their
    /// arguments are ordinary expressions, bound parameters included.
    fn try_session_call(&mut self, q: &ast::Query) -> Result<Option<Plan>> {
        let ast::SetExpr::Select(sel) = &*q.body else {
            return Ok(None);
        };
        let (f, alias) = match &sel.projection[..] {
            [ast::SelectItem::UnnamedExpr(ast::Expr::Function(f))] => (f, None),
            [ast::SelectItem::ExprWithAlias {
                expr: ast::Expr::Function(f),
                alias,
            }] => (f, Some(ident_name(alias))),
            _ => return Ok(None),
        };
        let name = func_name(f);
        let func = match session_func_of(&name) {
            Some(func) => Some(func),
            None if name == "tcq_advance" => None,
            None => return Ok(None),
        };
        if !sel.from.is_empty() {
            return Err(unsupported(format!(
                "{name}() must be called without FROM: SELECT {name}(...)"
            )));
        }
        let args = func_args(f)?;
        let scope = Scope::default();
        self.clause = "a function argument";
        let Some(func) = func else {
            return self.advance(&args.exprs, &scope).map(Some);
        };
        let bound: Vec<Bound> = args
            .exprs
            .iter()
            .map(|e| self.expr(e, &scope))
            .collect::<Result<_>>()?;
        let wanted: &[DataType] = match (func, bound.len()) {
            (SessionFunc::AdvisoryUnlockAll, 0) => &[],
            (SessionFunc::Notify, 2) => &[DataType::Text, DataType::Text],
            (SessionFunc::CancelBackend | SessionFunc::TerminateBackend, 1) => &[DataType::Int4],
            (
                SessionFunc::AdvisoryUnlockAll
                | SessionFunc::Notify
                | SessionFunc::CancelBackend
                | SessionFunc::TerminateBackend,
                _,
            ) => &[DataType::Bool; 9],
            (_, 1) => &[DataType::Int8],
            (_, 2) => &[DataType::Int4, DataType::Int4],
            _ => &[DataType::Bool; 9],
        };
        if wanted.len() != bound.len() {
            let types: Vec<String> = bound.iter().map(|b| type_label(b.ty)).collect();
            return Err(Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                types.join(", ")
            )));
        }
        let args = bound
            .into_iter()
            .zip(wanted)
            .map(|(b, &ty)| self.coerce(b, ty, &name))
            .collect::<Result<Vec<_>>>()?;
        let ty = match func {
            SessionFunc::TryAdvisoryLock
            | SessionFunc::TryAdvisoryLockShared
            | SessionFunc::TryAdvisoryXactLock
            | SessionFunc::TryAdvisoryXactLockShared
            | SessionFunc::AdvisoryUnlock
            | SessionFunc::AdvisoryUnlockShared
            | SessionFunc::CancelBackend
            | SessionFunc::TerminateBackend => DataType::Bool,
            // PostgreSQL's `void` shows as an empty string; tcq has no void type and sends
            // an empty text value, which every client shows the same way.
            _ => DataType::Text,
        };
        Ok(Some(Plan::SessionCall {
            func,
            args,
            column: Column::new(alias.unwrap_or(name), ty),
            param_types: self.finish_params(),
        }))
    }

    /// `tcq_advance(stream, time)`: a literal stream name is checked now, and the time
    /// coerced to its time type; a stream given as a parameter is resolved at execution.
    fn advance(&mut self, args: &[&ast::Expr], scope: &Scope) -> Result<Plan> {
        let [name_arg, time_arg] = args else {
            return Err(Error::UndefinedFunction("function tcq_advance with these arguments does not exist; call tcq_advance('stream', timestamp)".into()));
        };
        let name = self.expr(name_arg, scope)?;
        let literal = match &name.expr {
            Expr::Literal(Value::Text(s)) => Some(s.clone()),
            _ => None,
        };
        let stream = self.coerce(name, DataType::Text, "tcq_advance")?;
        let time = self.expr(time_arg, scope)?;
        let mut result_type = DataType::Timestamp;
        let time_expr = match literal {
            Some(s) => {
                let name = stream_name_of(&s);
                let (columns, ts) = self.schema.stream(&name).ok_or_else(|| {
                    if self.schema.table(&name).is_some()
                        || self.schema.system_view(&name).is_some()
                    {
                        advance_of_no_stream(&name)
                    } else {
                        Error::UndefinedTable(name.clone())
                    }
                })?;
                let time_type = ts
                    .map(|i| columns[i].data_type)
                    .unwrap_or(DataType::TimestampTz);
                result_type = time_type;
                self.coerce(time, time_type, "tcq_advance")?
            }
            None if time.ty.is_none() => self.coerce(time, DataType::Text, "tcq_advance")?,
            None => time.expr,
        };
        Ok(Plan::Advance {
            stream,
            time_expr,
            param_types: self.finish_params(),
            result_type,
        })
    }

    fn finish_params(&self) -> Vec<DataType> {
        self.params
            .iter()
            .map(|p| p.unwrap_or(DataType::Text))
            .collect()
    }

    fn insert(&mut self, ins: &ast::Insert) -> Result<Plan> {
        let ast::TableObject::TableName(tn) = &ins.table else {
            return Err(unsupported("INSERT INTO a table function is not supported"));
        };
        let stream = self.ast_relation(tn)?;
        let table = self.schema.table(&stream);
        let (columns, defaults) = match (self.schema.stream(&stream), &table) {
            (Some((columns, _)), _) => (columns, None),
            (None, Some(t)) => (t.columns.clone(), Some(t.defaults.clone())),
            (None, None) => {
                if self.schema.system_view(&stream).is_some() {
                    return Err(unsupported(format!("cannot insert into view \"{stream}\"")));
                }
                return Err(Error::UndefinedTable(stream));
            }
        };
        if ins.returning.is_some() && table.is_none() {
            return Err(unsupported(
                "INSERT ... RETURNING applies to tables; a stream keeps no rows to return",
            ));
        }
        let on_conflict = match (&ins.on, &table) {
            (None, _) => OnConflict::Error,
            (Some(_), None) => {
                return Err(unsupported(
                    "INSERT ... ON CONFLICT applies to tables; a stream has no keys",
                ))
            }
            (
                Some(ast::OnInsert::OnConflict(ast::OnConflict {
                    action: ast::OnConflictAction::DoNothing,
                    ..
                })),
                Some(_),
            ) => OnConflict::DoNothing,
            (
                Some(ast::OnInsert::OnConflict(ast::OnConflict {
                    conflict_target,
                    action: ast::OnConflictAction::DoUpdate(du),
                })),
                Some(info),
            ) => self.on_conflict_update(&stream, info, conflict_target.as_ref(), du)?,
            (Some(_), Some(_)) => {
                return Err(unsupported(
                    "only INSERT ... ON CONFLICT DO NOTHING / DO UPDATE is supported",
                ))
            }
        };
        let target_columns: Vec<usize> = if ins.columns.is_empty() {
            (0..columns.len()).collect()
        } else {
            let mut t = Vec::new();
            for c in &ins.columns {
                let name = object_name(c)?;
                let i = columns.iter().position(|x| x.name == name).ok_or_else(|| {
                    Error::UndefinedColumn(format!(
                        "column \"{name}\" of relation \"{stream}\" does not exist"
                    ))
                })?;
                if t.contains(&i) {
                    return Err(Error::DuplicateColumn(format!(
                        "column \"{name}\" specified more than once"
                    )));
                }
                t.push(i);
            }
            t
        };
        let Some(source) = &ins.source else {
            return Err(unsupported("INSERT ... DEFAULT VALUES is not supported"));
        };
        let ast::SetExpr::Values(values) = &*source.body else {
            return Err(unsupported(
                "INSERT ... SELECT is not supported; use INSERT ... VALUES or COPY",
            ));
        };
        let scope = Scope::default();
        self.clause = "VALUES";
        let mut rows = Vec::with_capacity(values.rows.len());
        for row in &values.rows {
            let row = &row.content;
            if row.len() > target_columns.len() {
                return Err(Error::Syntax(
                    "INSERT has more expressions than target columns".into(),
                ));
            }
            // Without a column list a table's row may be short: the rest take defaults.
            let short_ok = defaults.is_some() && ins.columns.is_empty();
            if row.len() < target_columns.len() && !short_ok {
                return Err(Error::Syntax(
                    "INSERT has more target columns than expressions".into(),
                ));
            }
            let mut out = Vec::with_capacity(row.len());
            for (e, &col) in row.iter().zip(&target_columns) {
                let ty = columns[col].data_type;
                if let ast::Expr::Identifier(id) = e {
                    if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default") {
                        out.push(column_default(&defaults, col));
                        continue;
                    }
                }
                let b = self.expr(e, &scope)?;
                out.push(self.assign(b, ty, &columns[col].name)?);
            }
            rows.push(out);
        }
        // A table's rows name every column: those left out take their DEFAULT.
        let target_columns = match &defaults {
            None => target_columns,
            Some(_) => {
                for row in &mut rows {
                    let mut full: Vec<Expr> = (0..columns.len())
                        .map(|c| column_default(&defaults, c))
                        .collect();
                    for (e, &c) in std::mem::take(row).into_iter().zip(&target_columns) {
                        full[c] = e;
                    }
                    *row = full;
                }
                (0..columns.len()).collect()
            }
        };
        let returning = match &ins.returning {
            None => None,
            Some(list) => {
                let mut scope = Scope::default();
                scope.rels.push(relation_names(&stream, None)?);
                scope.set_single(columns.clone());
                self.returning(Some(list), &scope)?
            }
        };
        Ok(Plan::Insert(Insert {
            stream,
            table: table.is_some(),
            on_conflict,
            returning,
            target_columns,
            rows,
            param_types: self.finish_params(),
        }))
    }

    /// Cast for storing into a column of type `ty` (PostgreSQL's assignment rules): unknown
    /// string literals go through the type's input function at execution.
    fn assign(&mut self, b: Bound, ty: DataType, column: &str) -> Result<Expr> {
        match (&b.ty, &b.expr) {
            (None, Expr::Literal(Value::Text(_))) => Ok(if ty == DataType::Text {
                b.expr
            } else {
                Expr::Cast {
                    expr: Box::new(b.expr),
                    to: ty,
                }
            }),
            (None, _) => {
                let e = self.coerce(b, ty, "INSERT")?;
                // A parameter's value arrives unchecked; varchar(n) must still refuse long text.
                Ok(match (e, ty) {
                    (e @ Expr::Param(_), DataType::Varchar(Some(_))) => Expr::Cast {
                        expr: Box::new(e),
                        to: ty,
                    },
                    (e, _) => e,
                })
            }
            (Some(t), _) if *t == ty => Ok(b.expr),
            // A parameter the client typed as text (JDBC's setString sends varchar) goes
            // through the column type's input function, as an untyped one would.
            (Some(t), Expr::Param(_)) if t.is_text() => Ok(Expr::Cast {
                expr: Box::new(b.expr),
                to: ty,
            }),
            (Some(t), _) if castable(*t, ty, false) => Ok(Expr::Cast {
                expr: Box::new(b.expr),
                to: ty,
            }),
            (Some(t), _) => Err(Error::DatatypeMismatch(format!(
                "column \"{column}\" is of type {} but expression is of type {}",
                ty.name(),
                t.name()
            ))),
        }
    }

    fn copy(
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
        // The column list is checked before the options, as PostgreSQL checks it first.
        let options_of = |items: &[CopyItem]| copy_options(items, !to);
        match (source, to) {
            (
                ast::CopySource::Table {
                    table_name,
                    columns: cols,
                },
                false,
            ) => {
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
                let target_columns = if cols.is_empty() {
                    (0..columns.len()).collect()
                } else {
                    let mut t = Vec::new();
                    for c in cols {
                        let name = ident_name(c);
                        let i = columns.iter().position(|x| x.name == name).ok_or_else(|| {
                            Error::UndefinedColumn(format!(
                                "column \"{name}\" of relation \"{stream}\" does not exist"
                            ))
                        })?;
                        if t.contains(&i) {
                            return Err(Error::DuplicateColumn(format!(
                                "column \"{name}\" specified more than once"
                            )));
                        }
                        t.push(i);
                    }
                    t
                };
                let (mut opts, force) = options_of(&self.copy_items)?;
                if table.is_some() && opts.live {
                    return Err(unsupported(
                        "COPY option \"live\" applies to streams, not tables",
                    ));
                }
                // FORCE_NOT_NULL / FORCE_NULL name columns of the COPY's list.
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
                                "column \"{name}\" of relation \"{stream}\" does not exist"
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
            (ast::CopySource::Query(q), true) => {
                if !matches!(target, ast::CopyTarget::Stdout) {
                    return Err(unsupported(
                        "COPY TO a file or program is not supported; use COPY ... TO STDOUT",
                    ));
                }
                let (opts, _) = options_of(&self.copy_items)?;
                Ok(Plan::CopyTo {
                    query: Box::new(self.query(q, text)?),
                    options: opts,
                })
            }
            (
                ast::CopySource::Table {
                    table_name,
                    columns: cols,
                },
                true,
            ) => {
                let name = self.ast_relation(table_name)?;
                let Some(info) = self.schema.table(&name) else {
                    return Err(unsupported(
                        "COPY stream TO is not supported; use COPY (SELECT ...) TO STDOUT",
                    ));
                };
                if !matches!(target, ast::CopyTarget::Stdout) {
                    return Err(unsupported(
                        "COPY TO a file or program is not supported; use COPY ... TO STDOUT",
                    ));
                }
                let mut picked = Vec::new();
                for c in cols {
                    let col = ident_name(c);
                    let i = info
                        .columns
                        .iter()
                        .position(|x| x.name == col)
                        .ok_or_else(|| {
                            Error::UndefinedColumn(format!(
                                "column \"{col}\" of relation \"{name}\" does not exist"
                            ))
                        })?;
                    if picked.contains(&i) {
                        return Err(Error::DuplicateColumn(format!(
                            "column \"{col}\" specified more than once"
                        )));
                    }
                    picked.push(i);
                }
                if picked.is_empty() {
                    picked = (0..info.columns.len()).collect();
                }
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
                let (opts, _) = options_of(&self.copy_items)?;
                Ok(Plan::CopyTo {
                    query: Box::new(query),
                    options: opts,
                })
            }
            (ast::CopySource::Query(_), false) => {
                Err(Error::Syntax("COPY (query) FROM is not valid".into()))
            }
        }
    }

    // ----- SELECT -----

    /// Bind a SELECT: finite relational queries (catalogs, joins, subqueries, CTEs, set
    /// operations) go to [`super::relational`]; the rest is bound here, and a finite query
    /// this binder refuses is tried there before its error is returned.
    fn query(&mut self, q: &ast::Query, text: &str) -> Result<Query> {
        let Some(provider) = self.schema.relations() else {
            return self.query_simple(q, text);
        };
        let schema = self.schema;
        let streams = |n: &str| schema.stream(n).is_some();
        // A stored table read alone stays with this binder (its finite path); in a join
        // or subquery the relational engine reads it through the provider.
        let relations = |s: &str, n: &str| {
            let whole = if s.is_empty() || s == "public" {
                n.to_string()
            } else {
                format!("{s}.{n}")
            };
            if schema.table(&whole).is_some() {
                return false;
            }
            if s.is_empty() {
                provider.relation("pg_catalog", n).is_some()
                    || provider.relation("public", n).is_some()
            } else {
                provider.relation(s, n).is_some()
            }
        };
        match super::relational::route(q, &streams, &relations) {
            super::relational::Route::Relational => self.relational(q, text, provider),
            super::relational::Route::Continuous => self.query_simple(q, text),
            super::relational::Route::Finite => {
                let saved = self.params.clone();
                match self.query_simple(q, text) {
                    Ok(plan) => Ok(plan),
                    // Only what this binder lacks is retried there (subqueries, catalog
                    // functions); a bad literal or a type error stays an error.
                    Err(e)
                        if matches!(
                            e.kind(),
                            Error::FeatureNotSupported(_)
                                | Error::UndefinedFunction(_)
                                | Error::UndefinedTable(_)
                                | Error::UndefinedObject(_)
                        ) =>
                    {
                        self.params = saved;
                        self.relational(q, text, provider).map_err(|_| e)
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }

    fn relational(
        &mut self,
        q: &ast::Query,
        text: &str,
        provider: &dyn super::RelationProvider,
    ) -> Result<Query> {
        if !self.windows.is_empty() {
            return Err(Error::Syntax(
                "a window clause must follow a stream in FROM".into(),
            ));
        }
        let (rq, param_types) =
            super::relational::bind_query(q, provider, &self.params, self.source)?;
        let columns = rq
            .columns
            .iter()
            .map(|(n, t)| t.column(n.clone()))
            .collect();
        Ok(Query {
            source: Source::Relational(Box::new(rq)),
            windows: vec![],
            filter: None,
            aggregate: None,
            having: None,
            projection: vec![],
            columns,
            order_by: vec![],
            limit: None,
            offset: None,
            limit_param: None,
            offset_param: None,
            param_types,
            text: text.to_string(),
        })
    }

    fn query_simple(&mut self, q: &ast::Query, text: &str) -> Result<Query> {
        if q.with.is_some() {
            return Err(unsupported("WITH is not supported"));
        }
        if q.fetch.is_some() || !q.locks.is_empty() {
            return Err(unsupported(
                "FETCH FIRST and FOR UPDATE are not supported; use LIMIT",
            ));
        }
        let sel = match &*q.body {
            ast::SetExpr::Select(s) => s,
            ast::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
                return self.query_simple(inner, text)
            }
            ast::SetExpr::SetOperation { op, .. } => {
                return Err(unsupported(format!("{op} is not supported")))
            }
            ast::SetExpr::Values(_) => {
                return Err(unsupported("VALUES lists as queries are not supported"))
            }
            _ => return Err(unsupported("this kind of query is not supported")),
        };
        if sel.distinct.is_some() {
            return Err(unsupported("SELECT DISTINCT is not supported"));
        }
        if sel.into.is_some() {
            return Err(unsupported("SELECT INTO is not supported"));
        }
        self.join_conds.clear();
        self.left_conds.clear();
        let (mut source, scope, windows) = self.from(&sel.from)?;
        self.agg = None;
        self.agg_mode = false;

        // Join conditions, then WHERE, over the input row, ANDed.
        let mut conjuncts = Vec::new();
        for cond in std::mem::take(&mut self.join_conds) {
            conjuncts.push(self.join_cond(cond, &scope)?);
        }
        for (t, cond) in std::mem::take(&mut self.left_conds) {
            let e = self.join_cond(cond, &scope)?;
            if let Source::Join { tables, .. } = &mut source {
                tables[t].on.push(e);
            }
        }
        if let Some(e) = &sel.selection {
            self.clause = "WHERE";
            let b = self.expr(e, &scope)?;
            conjuncts.push(self.boolean(b, "WHERE")?);
        }
        let filter = conjuncts.into_iter().reduce(|l, r| Expr::Binary {
            op: BinaryOp::And,
            left: Box::new(l),
            right: Box::new(r),
        });

        // Select list with `*` expanded.
        let mut items: Vec<Item> = Vec::new();
        for item in &sel.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) => items.push(Item::Ast(e, None)),
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    items.push(Item::Ast(expr, Some(ident_name(alias))))
                }
                ast::SelectItem::Wildcard(_) => {
                    if matches!(source, Source::Nothing) {
                        return Err(Error::Syntax(
                            "SELECT * with no tables specified is not valid".into(),
                        ));
                    }
                    items.extend(scope.star.iter().copied().map(Item::Column));
                }
                ast::SelectItem::QualifiedWildcard(kind, _) => {
                    let q = match kind {
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n) => object_name(n)?,
                        ast::SelectItemQualifiedWildcardKind::Expr(e) => e.to_string(),
                    };
                    let Some(rel) = scope.rel_by_qualifier(&q) else {
                        return Err(Error::UndefinedTable(q));
                    };
                    items.extend((rel.offset..rel.offset + rel.ncols).map(Item::Column));
                }
                ast::SelectItem::ExprWithAliases { .. } => {
                    return Err(unsupported("multiple aliases are not supported"))
                }
            }
        }

        let group_exprs: &[ast::Expr] = match &sel.group_by {
            ast::GroupByExpr::Expressions(v, mods) if mods.is_empty() => v,
            _ => {
                return Err(unsupported(
                    "GROUP BY ALL / ROLLUP / CUBE are not supported",
                ))
            }
        };
        let order_exprs: Vec<&ast::OrderByExpr> = match &q.order_by {
            Some(ob) => match &ob.kind {
                ast::OrderByKind::Expressions(v) => v.iter().collect(),
                ast::OrderByKind::All(_) => {
                    return Err(unsupported("ORDER BY ALL is not supported"))
                }
            },
            None => vec![],
        };
        let is_agg = !group_exprs.is_empty()
            || sel.having.is_some()
            || items
                .iter()
                .any(|i| matches!(i, Item::Ast(e, _) if contains_aggregate(e)))
            || order_exprs.iter().any(|o| contains_aggregate(&o.expr));

        if is_agg {
            let mut st = AggState::default();
            self.clause = "GROUP BY";
            for g in group_exprs {
                let b = self.group_key(g, &items, &scope)?;
                let ty = b.ty.unwrap_or(DataType::Text);
                let e = if b.ty.is_none() {
                    self.coerce(b, DataType::Text, "GROUP BY")?
                } else {
                    b.expr
                };
                st.keys.push(e);
                st.key_types.push(ty);
            }
            self.agg = Some(st);
            self.agg_mode = true;
        }

        // Select list.
        self.clause = "SELECT";
        let mut projection = Vec::with_capacity(items.len());
        let mut columns = Vec::with_capacity(items.len());
        for item in &items {
            let (b, name) = match item {
                Item::Ast(e, alias) => (
                    self.expr(e, &scope)?,
                    alias.clone().unwrap_or_else(|| default_column_name(e)),
                ),
                Item::Column(i) => (self.column_ref(*i, &scope)?, scope.columns[*i].name.clone()),
            };
            let ty = b.ty.unwrap_or(DataType::Text);
            let e = if b.ty.is_none() {
                self.coerce(b, DataType::Text, "SELECT")?
            } else {
                b.expr
            };
            projection.push(e);
            columns.push(Column::new(name, ty));
        }

        let having = match &sel.having {
            Some(h) => {
                self.clause = "HAVING";
                let b = self.expr(h, &scope)?;
                Some(self.boolean(b, "HAVING")?)
            }
            None => None,
        };

        self.clause = "ORDER BY";
        let mut order_by = Vec::new();
        for o in order_exprs {
            let expr = self.order_key(&o.expr, &items, &projection, &columns, &scope)?;
            let descending = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            if matches!(o.options.sort, Some(ast::OrderBySort::Using(_))) {
                return Err(unsupported("ORDER BY ... USING is not supported"));
            }
            let nulls_first = o.options.nulls_first.unwrap_or(descending);
            order_by.push(SortKey {
                expr,
                descending,
                nulls_first,
            });
        }

        let (mut limit, mut offset) = (None, None);
        let (mut limit_param, mut offset_param) = (None, None);
        match &q.limit_clause {
            Some(ast::LimitClause::LimitOffset {
                limit: l,
                offset: o,
                limit_by,
            }) => {
                if !limit_by.is_empty() {
                    return Err(unsupported("LIMIT BY is not supported"));
                }
                if let Some(l) = l {
                    match self.row_count_param(l) {
                        Some(i) => limit_param = Some(i),
                        None => limit = literal_u64(l, "LIMIT")?,
                    }
                }
                if let Some(o) = o {
                    match self.row_count_param(&o.value) {
                        Some(i) => offset_param = Some(i),
                        None => offset = literal_u64(&o.value, "OFFSET")?,
                    }
                }
            }
            Some(ast::LimitClause::OffsetCommaLimit { .. }) => {
                return Err(Error::Syntax(
                    "LIMIT #,# syntax is not supported; use separate LIMIT and OFFSET clauses"
                        .into(),
                ))
            }
            None => {}
        }

        self.agg_mode = false;
        let aggregate = self.agg.take().map(|st| Aggregate {
            group_by: st.keys,
            group_types: st.key_types,
            calls: st.calls,
        });
        Ok(Query {
            source,
            windows,
            filter,
            aggregate,
            having,
            projection,
            columns,
            order_by,
            limit,
            offset,
            limit_param,
            offset_param,
            param_types: self.finish_params(),
            text: text.to_string(),
        })
    }

    /// The index of `$n` when a LIMIT or OFFSET is that parameter (maybe cast to an
    /// integer type), which is then a `bigint`, as PostgreSQL infers it.
    fn row_count_param(&mut self, e: &ast::Expr) -> Option<usize> {
        let e = match e {
            ast::Expr::Cast { expr, .. } | ast::Expr::Nested(expr) => expr,
            e => e,
        };
        let ast::Expr::Value(v) = e else {
            return None;
        };
        let ast::Value::Placeholder(p) = &v.value else {
            return None;
        };
        let i = p.strip_prefix('$')?.parse::<usize>().ok()?.checked_sub(1)?;
        if self.params.len() <= i {
            self.params.resize(i + 1, None);
        }
        self.params[i].get_or_insert(DataType::Int8);
        Some(i)
    }

    fn join_cond(&mut self, cond: JoinCond, scope: &Scope) -> Result<Expr> {
        match cond {
            JoinCond::On(e) => {
                self.clause = "JOIN conditions";
                let b = self.expr(&e, scope)?;
                self.boolean(b, "JOIN/ON")
            }
            JoinCond::Using(l, r) => {
                let (lb, rb) = (self.column_ref(l, scope)?, self.column_ref(r, scope)?);
                let b = self.binary(BinaryOp::Eq, lb, rb)?;
                self.boolean(b, "JOIN/USING")
            }
        }
    }

    /// Resolve the FROM clause: its source, the scope its columns make, and its windows.
    fn from(&mut self, from: &[ast::TableWithJoins]) -> Result<(Source, Scope, Vec<WindowSpec>)> {
        let Some(first) = from.first() else {
            if let Some(w) = self.windows.first() {
                let _ = w;
                return Err(Error::Syntax(
                    "a window clause must follow a stream in FROM".into(),
                ));
            }
            return Ok((Source::Nothing, Scope::default(), vec![]));
        };
        if from.len() > 1 || !first.joins.is_empty() {
            return self.join_from(from);
        }
        let ast::TableFactor::Table {
            name, alias, args, ..
        } = &first.relation
        else {
            return Err(unsupported(
                "subqueries and functions in FROM are not supported yet: a query reads one stream",
            ));
        };
        if args.is_some() {
            return Err(unsupported("table functions are not supported"));
        }
        let rel = self.ast_relation(name)?;
        let last_token = match alias {
            Some(a) => a.name.span.start,
            None => name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(|i| i.span.start)
                .unwrap_or_else(|| sqlparser::tokenizer::Location::new(0, 0)),
        };
        // TelegraphCQ writes the window after the stream's name; tcq also accepts it after
        // the alias (`FROM flights [RANGE BY ...] f` and `FROM flights f [RANGE BY ...]`).
        let name_token = name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.span.start);
        let mine: Vec<&RawWindow> = self
            .windows
            .iter()
            .filter(|w| w.after == last_token || Some(w.after) == name_token)
            .collect();
        if mine.len() != self.windows.len() {
            return Err(unsupported("a window clause must follow the stream in the FROM clause of the outermost SELECT (window clauses inside subqueries are not supported)"));
        }
        let mut scope = Scope::default();
        let short = rel.rsplit('.').next().unwrap_or(&rel).to_string();
        scope.rels.push(relation_names(&rel, alias.as_ref())?);
        if let Some((columns, ts)) = self.lookup_stream(&rel) {
            let time_type = ts
                .map(|i| columns[i].data_type)
                .unwrap_or(DataType::TimestampTz);
            let mut windows = Vec::with_capacity(mine.len());
            for w in mine {
                windows.push(window_spec(w, time_type, |l| self.position(l))?);
            }
            if !windows.is_empty() {
                scope.window_time = Some(time_type);
            }
            scope.set_single(columns.clone());
            let stream_name = if self.schema.stream(&rel).is_some() {
                rel
            } else {
                short
            };
            return Ok((
                Source::Stream {
                    name: stream_name,
                    columns,
                },
                scope,
                windows,
            ));
        }
        if let Some(info) = self.lookup_table(&rel) {
            if !mine.is_empty() {
                return Err(unsupported(format!(
                    "window clauses apply to streams; \"{rel}\" is a table, read whole as it is when the statement runs"
                )));
            }
            scope.set_single(info.columns.clone());
            let table_name = rel.strip_prefix("public.").unwrap_or(&rel).to_string();
            return Ok((
                Source::Table {
                    name: table_name,
                    columns: info.columns,
                },
                scope,
                vec![],
            ));
        }
        let view = self
            .schema
            .system_view(&rel)
            .map(|c| (rel.clone(), c))
            .or_else(|| {
                (!rel.contains('.'))
                    .then(|| {
                        self.schema
                            .system_view(&format!("pg_catalog.{rel}"))
                            .map(|c| (format!("pg_catalog.{rel}"), c))
                    })
                    .flatten()
            });
        match view {
            Some((view_name, columns)) => {
                if !mine.is_empty() {
                    return Err(unsupported(format!(
                        "window clauses apply to streams; \"{rel}\" is a system view"
                    )));
                }
                scope.set_single(columns.clone());
                Ok((
                    Source::System {
                        name: view_name,
                        columns,
                    },
                    scope,
                    vec![],
                ))
            }
            None => {
                let at = name
                    .0
                    .first()
                    .and_then(|p| p.as_ident())
                    .map(|i| self.position(i.span.start));
                let names = self.schema.stream_names();
                let near = closest(&rel, names.iter().map(String::as_str)).map(str::to_string);
                let e = Error::UndefinedTable(rel);
                let e = match at {
                    Some(p) => e.at(p),
                    None => e,
                };
                Err(match near {
                    Some(n) => e.with_hint(format!("Perhaps you meant the stream \"{n}\".")),
                    None => e,
                })
            }
        }
    }

    /// FROM with two or more streams: each must carry a window clause, at most one of them
    /// several (a multi-window join; not with stored tables); the join
    /// conditions are left in `self.join_conds` for the caller to bind over the scope.
    fn join_from(
        &mut self,
        from: &[ast::TableWithJoins],
    ) -> Result<(Source, Scope, Vec<WindowSpec>)> {
        let mut scope = Scope::default();
        let mut inputs: Vec<JoinInput> = Vec::new();
        let mut tables: Vec<JoinTable> = Vec::new();
        let mut time_types = Vec::new();
        for twj in from {
            let mut rels = JoinRels {
                inputs: &mut inputs,
                tables: &mut tables,
                time_types: &mut time_types,
            };
            self.join_input(&twj.relation, &mut scope, &mut rels)?;
            for j in &twj.joins {
                let (constraint, left) = match &j.join_operator {
                    ast::JoinOperator::Join(c)
                    | ast::JoinOperator::Inner(c)
                    | ast::JoinOperator::CrossJoin(c) => (c, false),
                    ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => (c, true),
                    ast::JoinOperator::Right(_)
                    | ast::JoinOperator::RightOuter(_)
                    | ast::JoinOperator::FullOuter(_) => return Err(unsupported(
                        "outer joins of streams are not supported: windowed joins are inner joins (a stream may be LEFT JOINed to a table)",
                    )),
                    _ => return Err(unsupported("this kind of join is not supported")),
                };
                let mut rels = JoinRels {
                    inputs: &mut inputs,
                    tables: &mut tables,
                    time_types: &mut time_types,
                };
                let is_table = self.join_input(&j.relation, &mut scope, &mut rels)?;
                if left && !is_table {
                    return Err(unsupported(
                        "outer joins of streams are not supported: windowed joins are inner joins (a stream may be LEFT JOINed to a table)",
                    ));
                }
                let before = self.join_conds.len();
                self.join_constraint(constraint, &mut scope)?;
                if left {
                    let t = tables.len() - 1;
                    tables[t].left = true;
                    for c in self.join_conds.drain(before..) {
                        self.left_conds.push((t, c));
                    }
                }
            }
        }
        if inputs.is_empty() {
            return Err(unsupported(
                "joins of tables alone are not supported yet: a join reads at least one stream",
            ));
        }
        // Every window clause must have been attached to one of the inputs.
        let attached: usize = inputs.iter().map(|i| 1 + i.more_windows.len()).sum();
        if self.windows.len() != attached {
            return Err(unsupported(
                "a window clause must follow a stream in the FROM clause of the outermost SELECT",
            ));
        }
        let multi: Vec<&JoinInput> = inputs
            .iter()
            .filter(|i| !i.more_windows.is_empty())
            .collect();
        if multi.len() > 1 {
            return Err(unsupported(format!(
                "streams \"{}\" and \"{}\" both have several window clauses; in a join at most one stream may (read a stream twice under aliases instead)",
                multi[0].alias, multi[1].alias
            )));
        }
        if !multi.is_empty() && !tables.is_empty() {
            return Err(unsupported(
                "a stream with several window clauses cannot be joined to a stored table yet",
            ));
        }
        scope.window_time = Some(if time_types.iter().all(|t| *t == DataType::Timestamp) {
            DataType::Timestamp
        } else {
            DataType::TimestampTz
        });
        Ok((Source::Join { inputs, tables }, scope, vec![]))
    }

    /// One relation of a join: a stream with one or more window clauses, or a stored table
    /// without one. Returns true for a table.
    fn join_input(
        &mut self,
        factor: &ast::TableFactor,
        scope: &mut Scope,
        rels: &mut JoinRels<'_>,
    ) -> Result<bool> {
        let inputs = &mut *rels.inputs;
        let time_types = &mut *rels.time_types;
        let ast::TableFactor::Table {
            name, alias, args, ..
        } = factor
        else {
            return Err(unsupported(
                "subqueries and functions in FROM are not supported: a join reads streams",
            ));
        };
        if args.is_some() {
            return Err(unsupported("table functions are not supported"));
        }
        let rel = self.ast_relation(name)?;
        let Some((columns, ts)) = self.lookup_stream(&rel) else {
            if self.lookup_table(&rel).is_some() {
                self.join_table(&rel, name, alias.as_ref(), scope, rels.tables)?;
                return Ok(true);
            }
            if self.schema.system_view(&rel).is_some()
                || self
                    .schema
                    .system_view(&format!("pg_catalog.{rel}"))
                    .is_some()
            {
                return Err(unsupported(format!(
                    "joins read streams; \"{rel}\" is a system view"
                )));
            }
            return Err(Error::UndefinedTable(rel));
        };
        let mut names = relation_names(&rel, alias.as_ref())?;
        if scope.rel_by_qualifier(&names.name).is_some() {
            return Err(Error::DuplicateAlias(names.name.clone()));
        }
        let name_token = name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.span.start);
        let alias_token = alias.as_ref().map(|a| a.name.span.start);
        let mine: Vec<&RawWindow> = self
            .windows
            .iter()
            .filter(|w| Some(w.after) == name_token || Some(w.after) == alias_token)
            .collect();
        let (window, more) = match mine[..] {
            [w, ref more @ ..] => (w, more),
            [] => {
                return Err(unsupported(format!(
                    "stream \"{}\" in a join needs a window clause, e.g. {} [RANGE BY '1 minute']: a join is computed over the streams' current windows",
                    names.name, names.name
                )))
            }
        };
        let time_type = ts
            .map(|i| columns[i].data_type)
            .unwrap_or(DataType::TimestampTz);
        let spec = window_spec(window, time_type, |l| self.position(l))?;
        let more_windows = more
            .iter()
            .map(|w| window_spec(w, time_type, |l| self.position(l)))
            .collect::<Result<Vec<_>>>()?;
        time_types.push(time_type);
        names.offset = scope.columns.len();
        names.ncols = columns.len();
        let stream = if self.schema.stream(&rel).is_some() {
            rel.clone()
        } else {
            rel.strip_prefix("public.").unwrap_or(&rel).to_string()
        };
        inputs.push(JoinInput {
            stream,
            alias: names.name.clone(),
            columns: columns.clone(),
            offset: names.offset,
            window: spec,
            more_windows,
        });
        scope.star.extend(names.offset..names.offset + names.ncols);
        scope.columns.extend(columns);
        scope.rels.push(names);
        Ok(false)
    }

    /// A stored table in a join: no window clause may follow it.
    fn join_table(
        &mut self,
        rel: &str,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
        scope: &mut Scope,
        tables: &mut Vec<JoinTable>,
    ) -> Result<()> {
        let (table, info) = self.table_info(rel)?;
        let mut names = relation_names(rel, alias)?;
        if scope.rel_by_qualifier(&names.name).is_some() {
            return Err(Error::DuplicateAlias(names.name.clone()));
        }
        let name_token = name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.span.start);
        let alias_token = alias.map(|a| a.name.span.start);
        if self
            .windows
            .iter()
            .any(|w| Some(w.after) == name_token || Some(w.after) == alias_token)
        {
            return Err(unsupported(format!(
                "window clauses apply to streams; \"{}\" is a table, read as it is at each slide event",
                names.name
            )));
        }
        names.offset = scope.columns.len();
        names.ncols = info.columns.len();
        tables.push(JoinTable {
            table,
            alias: names.name.clone(),
            columns: info.columns.clone(),
            offset: names.offset,
            left: false,
            on: Vec::new(),
        });
        scope.star.extend(names.offset..names.offset + names.ncols);
        scope.columns.extend(info.columns);
        scope.rels.push(names);
        Ok(())
    }

    /// The ON / USING of the join whose right side is the last relation in `scope`.
    fn join_constraint(&mut self, c: &ast::JoinConstraint, scope: &mut Scope) -> Result<()> {
        match c {
            ast::JoinConstraint::On(e) => self.join_conds.push(JoinCond::On(Box::new(e.clone()))),
            ast::JoinConstraint::None => {}
            ast::JoinConstraint::Using(cols) => {
                let right = scope.rels.last().expect("a join has a right side").clone();
                let mut using_first = Vec::new();
                for c in cols {
                    let col = object_name(c)?;
                    let find = |range: std::ops::Range<usize>| {
                        range.into_iter().find(|&i| scope.columns[i].name == col)
                    };
                    let l = match scope.merged.iter().find(|(n, _)| *n == col) {
                        Some((_, i)) => Some(*i),
                        None => {
                            let hits: Vec<usize> = (0..right.offset)
                                .filter(|&i| scope.columns[i].name == col)
                                .collect();
                            if hits.len() > 1 {
                                return Err(Error::AmbiguousColumn(format!(
                                    "common column name \"{col}\" appears more than once in left table"
                                )));
                            }
                            hits.first().copied()
                        }
                    };
                    let (Some(l), Some(r)) = (l, find(right.offset..right.offset + right.ncols))
                    else {
                        return Err(Error::UndefinedColumn(format!(
                            "column \"{col}\" specified in USING clause does not exist in {} table",
                            if l.is_none() { "left" } else { "right" }
                        )));
                    };
                    self.join_conds.push(JoinCond::Using(l, r));
                    if !scope.merged.iter().any(|(n, _)| *n == col) {
                        scope.merged.push((col, l));
                    }
                    using_first.push(l);
                    scope.star.retain(|&i| i != r);
                }
                // PostgreSQL lists the USING columns first in `*`.
                scope.star.retain(|i| !using_first.contains(i));
                using_first.extend(std::mem::take(&mut scope.star));
                scope.star = using_first;
            }
            ast::JoinConstraint::UsingAlias(..) => {
                return Err(unsupported("USING (...) AS alias is not supported"))
            }
            ast::JoinConstraint::Natural => {
                return Err(unsupported(
                    "NATURAL joins are not supported; name the columns with USING (...)",
                ))
            }
        }
        Ok(())
    }

    fn lookup_table(&self, rel: &str) -> Option<TableInfo> {
        self.schema.table(rel).or_else(|| {
            rel.strip_prefix("public.")
                .and_then(|r| self.schema.table(r))
        })
    }

    /// A table's catalog name and shape; 42P01 when `name` is not a table (a stream gets
    /// its own message).
    fn table_info(&self, name: &str) -> Result<(String, TableInfo)> {
        if let Some(t) = self.schema.table(name) {
            return Ok((name.to_string(), t));
        }
        if let Some(short) = name.strip_prefix("public.") {
            if let Some(t) = self.schema.table(short) {
                return Ok((short.to_string(), t));
            }
        }
        if self.lookup_stream(name).is_some() {
            return Err(unsupported(format!(
                "\"{name}\" is a stream: its tuples cannot be updated, deleted or truncated"
            )));
        }
        Err(Error::UndefinedTable(name.to_string()))
    }

    fn lookup_stream(&self, rel: &str) -> Option<(Vec<Column>, Option<usize>)> {
        self.schema.stream(rel).or_else(|| {
            rel.strip_prefix("public.")
                .and_then(|r| self.schema.stream(r))
        })
    }

    fn group_key(&mut self, g: &ast::Expr, items: &[Item], scope: &Scope) -> Result<Bound> {
        if contains_aggregate(g) {
            return Err(Error::Grouping(
                "aggregate functions are not allowed in GROUP BY".into(),
            ));
        }
        // An input column name wins over an output alias, as in PostgreSQL.
        if let ast::Expr::Identifier(id) = g {
            let name = ident_name(id);
            if !scope.columns.iter().any(|c| c.name == name) {
                if let Some(item) = items
                    .iter()
                    .find(|i| matches!(i, Item::Ast(_, Some(a)) if *a == name))
                {
                    return self.item_input(item, scope);
                }
            }
        }
        if let Some(n) = ordinal(g) {
            let item = items.get(n.wrapping_sub(1)).ok_or_else(|| {
                Error::InvalidColumnReference(format!(
                    "GROUP BY position {n} is not in select list"
                ))
            })?;
            if let Item::Ast(e, _) = item {
                if contains_aggregate(e) {
                    return Err(Error::Grouping(
                        "aggregate functions are not allowed in GROUP BY".into(),
                    ));
                }
            }
            return self.item_input(item, scope);
        }
        self.expr(g, scope)
    }

    fn item_input(&mut self, item: &Item, scope: &Scope) -> Result<Bound> {
        match item {
            Item::Ast(e, _) => self.expr(e, scope),
            Item::Column(i) => Ok(Bound::new(Expr::Column(*i), scope.columns[*i].data_type)),
        }
    }

    fn order_key(
        &mut self,
        e: &ast::Expr,
        items: &[Item],
        projection: &[Expr],
        columns: &[Column],
        scope: &Scope,
    ) -> Result<Expr> {
        if let ast::Expr::Identifier(id) = e {
            let name = ident_name(id);
            let hits: Vec<usize> = columns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.name == name)
                .map(|(i, _)| i)
                .collect();
            if hits.len() > 1 && !hits.iter().all(|&h| projection[h] == projection[hits[0]]) {
                return Err(Error::Syntax(format!("ORDER BY \"{name}\" is ambiguous")));
            }
            if let Some(&h) = hits.first() {
                return Ok(projection[h].clone());
            }
        }
        if let Some(n) = ordinal(e) {
            return projection.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
                Error::InvalidColumnReference(format!(
                    "ORDER BY position {n} is not in select list"
                ))
            });
        }
        let _ = items;
        let b = self.expr(e, scope)?;
        if b.ty.is_none() {
            return self.coerce(b, DataType::Text, "ORDER BY");
        }
        Ok(b.expr)
    }

    fn boolean(&mut self, b: Bound, clause: &str) -> Result<Expr> {
        match b.ty {
            Some(DataType::Bool) => Ok(b.expr),
            None => self.coerce(b, DataType::Bool, clause),
            Some(t) => Err(Error::DatatypeMismatch(format!(
                "argument of {clause} must be type boolean, not type {}",
                t.name()
            ))),
        }
    }

    /// Give an expression type `to` where PostgreSQL would cast implicitly; unknown literals
    /// are converted now (22P02 etc. for bad text), parameters take the type.
    fn coerce(&mut self, b: Bound, to: DataType, ctx: &str) -> Result<Expr> {
        match b.ty {
            Some(t) if t == to => Ok(b.expr),
            Some(t) if castable(t, to, false) || (t.is_numeric() && to.is_numeric()) => {
                Ok(Expr::Cast {
                    expr: Box::new(b.expr),
                    to,
                })
            }
            Some(t) => Err(Error::DatatypeMismatch(format!(
                "{ctx}: expression of type {} cannot be used as type {}",
                t.name(),
                to.name()
            ))),
            None => match b.expr {
                // Outside assignment, an unknown literal meeting varchar(n) is read as text:
                // varchar has text's operators, and PostgreSQL checks no length there.
                Expr::Literal(Value::Text(s)) => Ok(Expr::Literal(parse_value(
                    &s,
                    if to.is_text() { DataType::Text } else { to },
                )?)),
                Expr::Literal(Value::Null) => Ok(Expr::Literal(Value::Null)),
                Expr::Param(i) => {
                    if self.params.len() <= i {
                        self.params.resize(i + 1, None);
                    }
                    match self.params[i] {
                        None => {
                            self.params[i] = Some(to);
                            Ok(Expr::Param(i))
                        }
                        Some(t) if t == to => Ok(Expr::Param(i)),
                        Some(_) => Ok(Expr::Cast {
                            expr: Box::new(Expr::Param(i)),
                            to,
                        }),
                    }
                }
                other => Ok(Expr::Cast {
                    expr: Box::new(other),
                    to,
                }),
            },
        }
    }

    fn column_ref(&mut self, i: usize, scope: &Scope) -> Result<Bound> {
        let input = Bound::new(Expr::Column(i), scope.columns[i].data_type);
        if !self.agg_mode {
            return Ok(input);
        }
        self.match_key(input, || {
            let col = &scope.columns[i].name;
            match scope.rel_of_column(i) {
                Some(r) => format!("{}.{col}", r.name),
                None => col.clone(),
            }
        })
    }

    /// In aggregate mode: an input-row expression equal to a group key becomes that key.
    fn match_key(&mut self, input: Bound, name: impl FnOnce() -> String) -> Result<Bound> {
        let st = self
            .agg
            .as_ref()
            .expect("aggregate mode has an aggregate state");
        if let Some(k) = st.keys.iter().position(|k| *k == input.expr) {
            return Ok(Bound::new(Expr::Column(k), st.key_types[k]));
        }
        Err(Error::Grouping(format!(
            "column \"{}\" must appear in the GROUP BY clause or be used in an aggregate function",
            name()
        )))
    }

    fn resolve_column(&mut self, parts: &[&ast::Ident], scope: &Scope) -> Result<usize> {
        let names: Vec<String> = parts.iter().map(|p| ident_name(p)).collect();
        let (qual, col) = match &names[..] {
            [c] => (None, c.clone()),
            [q @ .., c] => (Some(q.join(".")), c.clone()),
            [] => unreachable!("an identifier has at least one part"),
        };
        let at = self.position(parts[0].span.start);
        let range = match &qual {
            Some(q) => {
                let Some(rel) = scope.rel_by_qualifier(q) else {
                    return Err(Error::UndefinedTable(q.clone()).at(at));
                };
                rel.offset..rel.offset + rel.ncols
            }
            None => {
                if let Some((_, i)) = scope.merged.iter().find(|(n, _)| *n == col) {
                    return Ok(*i);
                }
                0..scope.columns.len()
            }
        };
        let mut hits = range.clone().filter(|&i| scope.columns[i].name == col);
        let first = hits.next().ok_or_else(|| {
            let e = Error::UndefinedColumn(match &qual {
                Some(q) => format!("column {q}.{col} does not exist"),
                None => format!("column \"{col}\" does not exist"),
            })
            .at(at);
            let names = range.clone().map(|i| scope.columns[i].name.as_str());
            let Some(near) = closest(&col, names) else {
                return e;
            };
            let index = range
                .clone()
                .find(|&i| scope.columns[i].name == near)
                .unwrap_or(0);
            match scope
                .rels
                .iter()
                .find(|r| (r.offset..r.offset + r.ncols).contains(&index))
            {
                Some(rel) if !rel.name.is_empty() => e.with_hint(format!(
                    "Perhaps you meant to reference the column \"{}.{near}\".",
                    rel.name
                )),
                _ => e.with_hint(format!(
                    "Perhaps you meant to reference the column \"{near}\"."
                )),
            }
        })?;
        if hits.next().is_some() {
            return Err(
                Error::AmbiguousColumn(format!("column reference \"{col}\" is ambiguous")).at(at),
            );
        }
        Ok(first)
    }

    /// PostgreSQL's error position of a token location in the query string.
    fn position(&self, loc: sqlparser::tokenizer::Location) -> u32 {
        super::parse::Lines::new(self.source).position(loc)
    }

    /// Bind an expression in the current mode.
    fn expr(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        if self.depth >= EXPRESSION_DEPTH_MAX {
            return Err(Error::StatementTooComplex(format!(
                "stack depth limit exceeded: expressions may nest at most {EXPRESSION_DEPTH_MAX} levels deep"
            )));
        }
        self.depth += 1;
        let bound = crate::sql::deep(|| self.expr_in_mode(e, scope));
        self.depth -= 1;
        bound
    }

    fn expr_in_mode(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        if self.agg_mode
            && !self.in_agg_arg
            && !contains_aggregate(e)
            && !matches!(
                e,
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
            )
        {
            // Try the whole subexpression as a group key first.
            self.agg_mode = false;
            let input = self.expr(e, scope);
            self.agg_mode = true;
            let input = input?;
            let st = self
                .agg
                .as_ref()
                .expect("aggregate mode has an aggregate state");
            if let Some(k) = st.keys.iter().position(|k| *k == input.expr) {
                return Ok(Bound::new(Expr::Column(k), st.key_types[k]));
            }
            if !expr_has_column(&input.expr) {
                return Ok(input);
            }
        }
        self.expr_inner(e, scope)
    }

    fn expr_inner(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Bound> {
        use ast::Expr as E;
        match e {
            E::Identifier(id) => {
                if id.quote_style.is_none() {
                    let lower = id.value.to_lowercase();
                    if let Some(b) = self.keyword_value(&lower, scope)? {
                        return Ok(b);
                    }
                }
                let i = self.resolve_column(&[id], scope)?;
                self.column_ref(i, scope)
            }
            E::CompoundIdentifier(ids) => {
                let parts: Vec<&ast::Ident> = ids.iter().collect();
                let i = self.resolve_column(&parts, scope)?;
                self.column_ref(i, scope)
            }
            E::Value(v) => self.value(&v.value),
            E::Nested(inner) => self.expr(inner, scope),
            E::UnaryOp { op, expr } => self.unary(*op, expr, scope),
            E::BinaryOp { left, op, right } => {
                let op = match op {
                    ast::BinaryOperator::Plus => BinaryOp::Add,
                    ast::BinaryOperator::Minus => BinaryOp::Sub,
                    ast::BinaryOperator::Multiply => BinaryOp::Mul,
                    ast::BinaryOperator::Divide => BinaryOp::Div,
                    ast::BinaryOperator::Modulo => BinaryOp::Mod,
                    ast::BinaryOperator::Eq => BinaryOp::Eq,
                    ast::BinaryOperator::NotEq => BinaryOp::NotEq,
                    ast::BinaryOperator::Lt => BinaryOp::Lt,
                    ast::BinaryOperator::LtEq => BinaryOp::LtEq,
                    ast::BinaryOperator::Gt => BinaryOp::Gt,
                    ast::BinaryOperator::GtEq => BinaryOp::GtEq,
                    ast::BinaryOperator::And => BinaryOp::And,
                    ast::BinaryOperator::Or => BinaryOp::Or,
                    ast::BinaryOperator::StringConcat => BinaryOp::Concat,
                    other => {
                        return Err(Error::UndefinedFunction(format!(
                            "operator is not supported: {other}"
                        )))
                    }
                };
                let l = self.expr(left, scope)?;
                let r = self.expr(right, scope)?;
                self.binary(op, l, r)
            }
            E::Cast {
                expr,
                data_type,
                kind,
                ..
            } => {
                if matches!(kind, ast::CastKind::TryCast | ast::CastKind::SafeCast) {
                    return Err(unsupported("TRY_CAST is not supported"));
                }
                let written = data_type.to_string();
                let to = type_from_name(&written)?;
                let b = self.expr(expr, scope)?;
                if let DataType::Varchar(Some(n)) = to {
                    // An explicit cast to varchar(n) cuts the text to n characters, where
                    // an assignment refuses it (PostgreSQL's rule).
                    let text = self.cast(b, DataType::Text)?;
                    let cut = Expr::Func {
                        func: ScalarFunc::Substr,
                        args: vec![
                            text.expr,
                            Expr::Literal(Value::Int4(1)),
                            Expr::Literal(Value::Int4(n as i32)),
                        ],
                    };
                    return Ok(Bound::new(
                        Expr::Cast {
                            expr: Box::new(cut),
                            to,
                        },
                        to,
                    ));
                }
                let cast = self.cast(b, to)?;
                Ok(match numeric_typmod(&written)? {
                    // numeric(p, s): the type carries no modifier, so the cast applies it.
                    Some(tm) => Bound::new(
                        Expr::Func {
                            func: ScalarFunc::NumericTypmod,
                            args: vec![
                                cast.expr,
                                Expr::Literal(Value::Int4(i32::from(tm.precision))),
                                Expr::Literal(Value::Int4(i32::from(tm.scale))),
                            ],
                        },
                        DataType::Numeric,
                    ),
                    None => cast,
                })
            }
            E::TypedString(ts) => {
                let to = type_from_name(&ts.data_type.to_string())?;
                let b = self.value(&ts.value.value)?;
                self.cast(b, to)
            }
            E::Interval(iv) => {
                let b = self.expr(&iv.value, scope)?;
                match (&b.expr, &iv.leading_field, &iv.last_field) {
                    (Expr::Literal(Value::Text(s)), Some(f), None) if b.ty.is_none() => {
                        let text = format!("{s} {}", f.to_string().to_lowercase());
                        Ok(Bound::new(
                            Expr::Literal(parse_value(&text, DataType::Interval)?),
                            DataType::Interval,
                        ))
                    }
                    (_, None, None) => self.cast(b, DataType::Interval),
                    _ => Err(unsupported(
                        "INTERVAL field qualifiers are not supported; write INTERVAL '1 hour'",
                    )),
                }
            }
            E::IsNull(x) | E::IsNotNull(x) => {
                let b = self.expr(x, scope)?;
                let b = if b.ty.is_none() {
                    self.coerce(b, DataType::Text, "IS NULL")?
                } else {
                    b.expr
                };
                Ok(Bound::new(
                    Expr::IsNull {
                        expr: Box::new(b),
                        negated: matches!(e, E::IsNotNull(_)),
                    },
                    DataType::Bool,
                ))
            }
            E::IsTrue(x)
            | E::IsFalse(x)
            | E::IsNotTrue(x)
            | E::IsNotFalse(x)
            | E::IsUnknown(x)
            | E::IsNotUnknown(x) => {
                let b = self.expr(x, scope)?;
                let c = self.boolean(b, "IS")?;
                let t = |v: bool| Expr::Literal(Value::Bool(v));
                let expr = match e {
                    E::IsTrue(_) => Expr::Case {
                        operand: None,
                        branches: vec![(c, t(true))],
                        otherwise: Some(Box::new(t(false))),
                    },
                    E::IsNotTrue(_) => Expr::Case {
                        operand: None,
                        branches: vec![(c, t(false))],
                        otherwise: Some(Box::new(t(true))),
                    },
                    E::IsFalse(_) => Expr::Case {
                        operand: None,
                        branches: vec![(
                            Expr::Unary {
                                op: UnaryOp::Not,
                                expr: Box::new(c),
                            },
                            t(true),
                        )],
                        otherwise: Some(Box::new(t(false))),
                    },
                    E::IsNotFalse(_) => Expr::Case {
                        operand: None,
                        branches: vec![(
                            Expr::Unary {
                                op: UnaryOp::Not,
                                expr: Box::new(c),
                            },
                            t(false),
                        )],
                        otherwise: Some(Box::new(t(true))),
                    },
                    E::IsUnknown(_) => Expr::IsNull {
                        expr: Box::new(c),
                        negated: false,
                    },
                    _ => Expr::IsNull {
                        expr: Box::new(c),
                        negated: true,
                    },
                };
                Ok(Bound::new(expr, DataType::Bool))
            }
            E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => {
                let l = self.expr(a, scope)?;
                let r = self.expr(b, scope)?;
                let eq = self.binary(BinaryOp::NotEq, l.clone(), r.clone())?.expr;
                let (le, re) = match eq {
                    Expr::Binary {
                        ref left,
                        ref right,
                        ..
                    } => ((**left).clone(), (**right).clone()),
                    _ => unreachable!("binary() of a comparison returns a comparison"),
                };
                let isnull = |x: &Expr, negated| Expr::IsNull {
                    expr: Box::new(x.clone()),
                    negated,
                };
                let distinct = Expr::Case {
                    operand: None,
                    branches: vec![
                        (isnull(&le, false), isnull(&re, true)),
                        (isnull(&re, false), Expr::Literal(Value::Bool(true))),
                    ],
                    otherwise: Some(Box::new(eq)),
                };
                let expr = if matches!(e, E::IsDistinctFrom(..)) {
                    distinct
                } else {
                    Expr::Unary {
                        op: UnaryOp::Not,
                        expr: Box::new(distinct),
                    }
                };
                Ok(Bound::new(expr, DataType::Bool))
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.expr(expr, scope)?;
                let lo = self.expr(low, scope)?;
                let hi = self.expr(high, scope)?;
                let a = self.binary(BinaryOp::GtEq, x.clone(), lo)?;
                let b = self.binary(BinaryOp::LtEq, x, hi)?;
                let both = self.binary(BinaryOp::And, a, b)?;
                Ok(if *negated {
                    Bound::new(
                        Expr::Unary {
                            op: UnaryOp::Not,
                            expr: Box::new(both.expr),
                        },
                        DataType::Bool,
                    )
                } else {
                    both
                })
            }
            E::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any,
                ..
            }
            | E::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                any,
                ..
            } => {
                if escape_char.is_some() || *any {
                    return Err(unsupported("LIKE ... ESCAPE / LIKE ANY are not supported"));
                }
                let x = self.expr(expr, scope)?;
                let p = self.expr(pattern, scope)?;
                let x = self.text_operand(x, "~~")?;
                let p = self.text_operand(p, "~~")?;
                Ok(Bound::new(
                    Expr::Like {
                        expr: Box::new(x),
                        pattern: Box::new(p),
                        negated: *negated,
                        case_insensitive: matches!(e, E::ILike { .. }),
                    },
                    DataType::Bool,
                ))
            }
            E::In {
                expr,
                target,
                negated,
                ..
            } => {
                let ast::InTarget::List(list) = target else {
                    return Err(unsupported("IN (subquery) is not supported"));
                };
                let x = self.expr(expr, scope)?;
                let items: Vec<Bound> = list
                    .iter()
                    .map(|i| self.expr(i, scope))
                    .collect::<Result<_>>()?;
                let mut ty = x.ty;
                for i in &items {
                    ty = self.unify(ty, i.ty, "IN")?;
                }
                let ty = ty.unwrap_or(DataType::Text);
                let x = self.coerce(x, ty, "IN")?;
                let list = items
                    .into_iter()
                    .map(|i| self.coerce(i, ty, "IN"))
                    .collect::<Result<_>>()?;
                Ok(Bound::new(
                    Expr::InList {
                        expr: Box::new(x),
                        list,
                        negated: *negated,
                    },
                    DataType::Bool,
                ))
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.case(
                operand.as_deref(),
                conditions,
                else_result.as_deref(),
                scope,
            ),
            E::Function(f) => self.function(f, scope),
            E::Extract { field, expr, .. } => {
                let x = self.expr(expr, scope)?;
                let x = self.time_operand(x)?;
                let field = Expr::Literal(Value::Text(field.to_string().to_lowercase().into()));
                Ok(Bound::new(
                    Expr::Cast {
                        expr: Box::new(Expr::Func {
                            func: ScalarFunc::DatePart,
                            args: vec![field, x],
                        }),
                        to: DataType::Numeric,
                    },
                    DataType::Numeric,
                ))
            }
            E::Ceil { expr, field } | E::Floor { expr, field } => {
                if !matches!(
                    field,
                    ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime)
                ) {
                    return Err(unsupported("CEIL/FLOOR with a field are not supported"));
                }
                let func = if matches!(e, E::Ceil { .. }) {
                    ScalarFunc::Ceil
                } else {
                    ScalarFunc::Floor
                };
                let x = self.expr(expr, scope)?;
                self.scalar(func, vec![x])
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.expr(expr, scope)?];
                args.push(match substring_from {
                    Some(f) => self.expr(f, scope)?,
                    None => Bound::new(Expr::Literal(Value::Int4(1)), DataType::Int4),
                });
                if let Some(f) = substring_for {
                    args.push(self.expr(f, scope)?);
                }
                self.scalar(ScalarFunc::Substr, args)
            }
            E::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                let zone = self.expr(time_zone, scope)?;
                let ts = self.expr(timestamp, scope)?;
                self.scalar(ScalarFunc::Timezone, vec![zone, ts])
            }
            E::Subquery(_) | E::Exists { .. } => Err(unsupported("subqueries are not supported")),
            other => Err(unsupported(format!("expression is not supported: {other}"))),
        }
    }

    /// Keywords that parse as identifiers: CURRENT_USER and friends.
    fn keyword_value(&mut self, lower: &str, _scope: &Scope) -> Result<Option<Bound>> {
        let func = match lower {
            "current_user" | "session_user" | "user" | "current_role" => ScalarFunc::CurrentUser,
            "current_timestamp" | "localtimestamp" => ScalarFunc::Now,
            "current_schema" => ScalarFunc::CurrentSchema,
            "current_catalog" => ScalarFunc::CurrentDatabase,
            _ => return Ok(None),
        };
        self.scalar(func, vec![]).map(Some)
    }

    fn value(&mut self, v: &ast::Value) -> Result<Bound> {
        Ok(match v {
            ast::Value::Number(n, _) => Bound::new_number(n)?,
            ast::Value::SingleQuotedString(s)
            | ast::Value::EscapedStringLiteral(s)
            | ast::Value::UnicodeStringLiteral(s)
            | ast::Value::NationalStringLiteral(s)
            | ast::Value::TripleSingleQuotedString(s) => Bound {
                expr: Expr::Literal(Value::Text(no_nul(s)?.into())),
                ty: None,
            },
            ast::Value::DollarQuotedString(d) => Bound {
                expr: Expr::Literal(Value::Text(no_nul(&d.value)?.into())),
                ty: None,
            },
            ast::Value::Boolean(b) => Bound::new(Expr::Literal(Value::Bool(*b)), DataType::Bool),
            ast::Value::Null => Bound {
                expr: Expr::Literal(Value::Null),
                ty: None,
            },
            ast::Value::Placeholder(p) => {
                let n: usize = p
                    .strip_prefix('$')
                    .and_then(|d| d.parse().ok())
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| Error::Syntax(format!("syntax error at or near \"{p}\"")))?;
                let i = n - 1;
                if self.params.len() <= i {
                    self.params.resize(i + 1, None);
                }
                Bound {
                    expr: Expr::Param(i),
                    ty: self.params[i],
                }
            }
            other => return Err(unsupported(format!("literal is not supported: {other}"))),
        })
    }

    fn unary(&mut self, op: ast::UnaryOperator, expr: &ast::Expr, scope: &Scope) -> Result<Bound> {
        match op {
            ast::UnaryOperator::Minus => {
                if let ast::Expr::Value(v) = expr {
                    if let ast::Value::Number(n, _) = &v.value {
                        return Bound::new_number(&format!("-{n}"));
                    }
                }
                let b = self.expr(expr, scope)?;
                let b = match b.ty {
                    None => Bound::new(self.coerce(b, DataType::Float8, "-")?, DataType::Float8),
                    Some(t) if t.is_numeric() || t == DataType::Interval => b,
                    Some(t) => {
                        return Err(Error::UndefinedFunction(format!(
                            "operator does not exist: - {}",
                            t.name()
                        )))
                    }
                };
                let ty = b.ty;
                Ok(Bound {
                    expr: Expr::Unary {
                        op: UnaryOp::Neg,
                        expr: Box::new(b.expr),
                    },
                    ty,
                })
            }
            ast::UnaryOperator::Plus => self.expr(expr, scope),
            ast::UnaryOperator::Not => {
                let b = self.expr(expr, scope)?;
                let c = self.boolean(b, "NOT")?;
                Ok(Bound::new(
                    Expr::Unary {
                        op: UnaryOp::Not,
                        expr: Box::new(c),
                    },
                    DataType::Bool,
                ))
            }
            other => Err(Error::UndefinedFunction(format!(
                "operator is not supported: {other}"
            ))),
        }
    }

    fn unify(
        &mut self,
        a: Option<DataType>,
        b: Option<DataType>,
        ctx: &str,
    ) -> Result<Option<DataType>> {
        Ok(match (a, b) {
            (None, x) | (x, None) => x,
            (Some(x), Some(y)) => Some(common_type(x, y).ok_or_else(|| {
                Error::DatatypeMismatch(format!(
                    "{ctx} types {} and {} cannot be matched",
                    x.name(),
                    y.name()
                ))
            })?),
        })
    }

    fn text_operand(&mut self, b: Bound, op: &str) -> Result<Expr> {
        match b.ty {
            None => self.coerce(b, DataType::Text, op),
            Some(t) if t.is_text() => Ok(b.expr),
            Some(t) => Err(no_operator(Some(t), op, Some(DataType::Text))),
        }
    }

    fn time_operand(&mut self, b: Bound) -> Result<Expr> {
        match b.ty {
            None => self.coerce(b, DataType::TimestampTz, "extract"),
            Some(t) if t.is_timestamp() || t == DataType::Interval => Ok(b.expr),
            Some(t) => Err(Error::UndefinedFunction(format!(
                "function extract(unknown, {}) does not exist",
                t.name()
            ))),
        }
    }

    fn binary(&mut self, op: BinaryOp, l: Bound, r: Bound) -> Result<Bound> {
        let mk = |l: Expr, r: Expr| Expr::Binary {
            op,
            left: Box::new(l),
            right: Box::new(r),
        };
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let name = if op == BinaryOp::And { "AND" } else { "OR" };
                let l = self.boolean(l, name)?;
                let r = self.boolean(r, name)?;
                Ok(Bound::new(mk(l, r), DataType::Bool))
            }
            BinaryOp::Concat => {
                let l = self.text_cast(l)?;
                let r = self.text_cast(r)?;
                Ok(Bound::new(mk(l, r), DataType::Text))
            }
            BinaryOp::Eq
            | BinaryOp::NotEq
            | BinaryOp::Lt
            | BinaryOp::LtEq
            | BinaryOp::Gt
            | BinaryOp::GtEq => {
                let ty = match (l.ty, r.ty) {
                    (None, None) => DataType::Text,
                    (Some(t), None) | (None, Some(t)) => t,
                    (Some(a), Some(b)) => common_type(a, b)
                        .ok_or_else(|| no_operator(Some(a), op_symbol(op), Some(b)))?,
                };
                let l = self.coerce_operand(l, ty)?;
                let r = self.coerce_operand(r, ty)?;
                Ok(Bound::new(mk(l, r), DataType::Bool))
            }
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => {
                self.arithmetic(op, l, r)
            }
        }
    }

    /// Coerce a comparison operand: same-category values keep their own type (eval compares
    /// across numeric types); unknowns take the other side's.
    fn coerce_operand(&mut self, b: Bound, ty: DataType) -> Result<Expr> {
        match b.ty {
            Some(t) if common_type(t, ty).is_some() => Ok(b.expr),
            _ => self.coerce(b, ty, "operator"),
        }
    }

    /// An operand of `||` or `concat()`: PostgreSQL renders non-text operands with their
    /// output function (`'a' || true` is `at`), which the evaluator does itself, so a typed
    /// operand stays as it is and only unknowns become text.
    fn text_cast(&mut self, b: Bound) -> Result<Expr> {
        match b.ty {
            None => self.coerce(b, DataType::Text, "||"),
            Some(_) => Ok(b.expr),
        }
    }

    fn arithmetic(&mut self, op: BinaryOp, l: Bound, r: Bound) -> Result<Bound> {
        use DataType as T;
        let sym = op_symbol(op);
        // Unknown operands take a type from the other side.
        let guess = |other: Option<T>| match other {
            Some(t) if t.is_timestamp() => Some(T::Interval),
            Some(T::Interval) if matches!(op, BinaryOp::Mul | BinaryOp::Div) => Some(T::Float8),
            Some(t) => Some(t),
            None => None,
        };
        let (lt, rt) = match (l.ty, r.ty) {
            (None, None) => return Err(no_operator(None, sym, None)),
            (None, Some(b)) => (
                if b.is_timestamp() && op == BinaryOp::Sub {
                    Some(b)
                } else {
                    guess(Some(b))
                },
                Some(b),
            ),
            (Some(a), None) => (Some(a), guess(Some(a))),
            (a, b) => (a, b),
        };
        let (lt, rt) = (lt.expect("typed"), rt.expect("typed"));
        let l = self.coerce(l, lt, sym)?;
        let r = self.coerce(r, rt, sym)?;
        let result = match (lt, rt, op) {
            (a, b, _) if a.is_numeric() && b.is_numeric() => promote_numeric(a, b),
            (a, T::Interval, BinaryOp::Add | BinaryOp::Sub) if a.is_timestamp() => a,
            (T::Interval, b, BinaryOp::Add) if b.is_timestamp() => b,
            (a, b, BinaryOp::Sub) if a.is_timestamp() && b.is_timestamp() => T::Interval,
            (T::Interval, T::Interval, BinaryOp::Add | BinaryOp::Sub) => T::Interval,
            (T::Interval, b, BinaryOp::Mul | BinaryOp::Div) if b.is_numeric() => T::Interval,
            (a, T::Interval, BinaryOp::Mul) if a.is_numeric() => T::Interval,
            _ => return Err(no_operator(Some(lt), sym, Some(rt))),
        };
        Ok(Bound::new(
            Expr::Binary {
                op,
                left: Box::new(l),
                right: Box::new(r),
            },
            result,
        ))
    }

    fn cast(&mut self, b: Bound, to: DataType) -> Result<Bound> {
        match (&b.ty, &b.expr) {
            (None, Expr::Literal(Value::Text(s))) => {
                Ok(Bound::new(Expr::Literal(parse_value(s, to)?), to))
            }
            (None, _) => Ok(Bound::new(self.coerce(b, to, "CAST")?, to)),
            (Some(t), _) if *t == to => Ok(b),
            (Some(t), _) if castable(*t, to, true) => Ok(Bound::new(
                Expr::Cast {
                    expr: Box::new(b.expr),
                    to,
                },
                to,
            )),
            (Some(t), _) => Err(Error::DatatypeMismatch(format!(
                "cannot cast type {} to {}",
                t.name(),
                to.name()
            ))),
        }
    }

    fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        else_result: Option<&ast::Expr>,
        scope: &Scope,
    ) -> Result<Bound> {
        let operand_b = operand.map(|o| self.expr(o, scope)).transpose()?;
        let mut whens = Vec::new();
        let mut results = Vec::new();
        for c in conditions {
            let w = self.expr(&c.condition, scope)?;
            let w = match &operand_b {
                Some(op) => self.binary(BinaryOp::Eq, op.clone(), w)?.expr,
                None => self.boolean(w, "CASE/WHEN")?,
            };
            whens.push(w);
            results.push(self.expr(&c.result, scope)?);
        }
        let otherwise = else_result.map(|e| self.expr(e, scope)).transpose()?;
        let mut ty = None;
        for r in results.iter().chain(otherwise.iter()) {
            ty = self.unify(ty, r.ty, "CASE")?;
        }
        let ty = ty.unwrap_or(DataType::Text);
        let mut branches = Vec::new();
        for (w, r) in whens.into_iter().zip(results) {
            branches.push((w, self.coerce(r, ty, "CASE")?));
        }
        let otherwise = otherwise
            .map(|o| self.coerce(o, ty, "CASE"))
            .transpose()?
            .map(Box::new);
        // A simple CASE was rewritten into searched form above, so no operand remains.
        Ok(Bound::new(
            Expr::Case {
                operand: None,
                branches,
                otherwise,
            },
            ty,
        ))
    }

    /// A function call. An unknown function (or argument types) is reported at the call,
    /// with PostgreSQL's hint.
    fn function(&mut self, f: &ast::Function, scope: &Scope) -> Result<Bound> {
        self.function_call(f, scope).map_err(|e| match e.kind() {
            Error::UndefinedFunction(_) if e.position().is_none() => {
                let at = f
                    .name
                    .0
                    .first()
                    .and_then(|p| p.as_ident())
                    .map(|i| self.position(i.span.start));
                let no_such = e.to_string().ends_with("does not exist");
                let e = match at {
                    Some(p) => e.at(p),
                    None => e,
                };
                if !no_such {
                    return e;
                }
                e.with_hint(
                    "No function matches the given name and argument types. You might need to add explicit type casts.",
                )
            }
            _ => e,
        })
    }

    fn function_call(&mut self, f: &ast::Function, scope: &Scope) -> Result<Bound> {
        let name = func_name(f);
        if f.name.0.len() > 1 {
            let schema = f.name.0[0].as_ident().map(ident_name).unwrap_or_default();
            if schema != "pg_catalog" {
                return Err(Error::UndefinedFunction(format!(
                    "function {} does not exist",
                    f.name
                )));
            }
        }
        let args = func_args(f)?;
        if let Some(agg) = agg_func_of(&name) {
            return self.aggregate(agg, &name, &args, scope);
        }
        if args.distinct {
            return Err(Error::Syntax(format!(
                "DISTINCT specified, but {name} is not an aggregate function"
            )));
        }
        let meta = match name.as_str() {
            "wtime" => Some(WindowMeta::Wtime),
            "wstart" => Some(WindowMeta::Wstart),
            "wrange" => Some(WindowMeta::Wrange),
            "wslide" => Some(WindowMeta::Wslide),
            _ => None,
        };
        if let Some(m) = meta {
            if !args.exprs.is_empty() {
                return Err(Error::UndefinedFunction(format!(
                    "function {name} takes no arguments; write {name}(*)"
                )));
            }
            let Some(time_type) = scope.window_time else {
                return Err(unsupported(format!("{name}(*) is only valid in a query with a window clause ([RANGE BY ...] after the stream)")));
            };
            let ty = match m {
                WindowMeta::Wtime | WindowMeta::Wstart => time_type,
                _ => DataType::Interval,
            };
            return Ok(Bound::new(Expr::WindowMeta(m), ty));
        }
        if args.star {
            return Err(Error::UndefinedFunction(format!(
                "function {name}(*) does not exist"
            )));
        }
        if name == "tcq_advance" {
            return Err(unsupported("tcq_advance(stream, time) must be called alone: SELECT tcq_advance('stream', '<timestamp>')"));
        }
        if session_func_of(&name).is_some() {
            return Err(unsupported(format!(
                "{name}() must be called alone, without FROM: SELECT {name}(...)"
            )));
        }
        let func = match name.as_str() {
            "abs" => ScalarFunc::Abs,
            "round" => ScalarFunc::Round,
            "floor" => ScalarFunc::Floor,
            "ceil" | "ceiling" => ScalarFunc::Ceil,
            "sqrt" => ScalarFunc::Sqrt,
            "coalesce" => ScalarFunc::Coalesce,
            "nullif" => ScalarFunc::NullIf,
            "greatest" => ScalarFunc::Greatest,
            "least" => ScalarFunc::Least,
            "lower" => ScalarFunc::Lower,
            "upper" => ScalarFunc::Upper,
            "length" | "char_length" | "character_length" => ScalarFunc::Length,
            "octet_length" => ScalarFunc::OctetLength,
            "substr" | "substring" => ScalarFunc::Substr,
            "concat" => ScalarFunc::Concat,
            "date_trunc" => ScalarFunc::DateTrunc,
            "date_part" => ScalarFunc::DatePart,
            "to_timestamp" => ScalarFunc::ToTimestamp,
            "now"
            | "current_timestamp"
            | "transaction_timestamp"
            | "statement_timestamp"
            | "localtimestamp" => ScalarFunc::Now,
            "version" => ScalarFunc::Version,
            "current_database" | "current_catalog" => ScalarFunc::CurrentDatabase,
            "current_schema" => ScalarFunc::CurrentSchema,
            "current_user" | "session_user" | "user" | "current_role" => ScalarFunc::CurrentUser,
            "current_setting" => ScalarFunc::CurrentSetting,
            "pg_backend_pid" => ScalarFunc::BackendPid,
            "timezone" => ScalarFunc::Timezone,
            _ => {
                let bound: Vec<Bound> = args
                    .exprs
                    .iter()
                    .map(|e| self.expr(e, scope))
                    .collect::<Result<_>>()?;
                let types: Vec<String> = bound.iter().map(|b| type_label(b.ty)).collect();
                return Err(Error::UndefinedFunction(format!(
                    "function {name}({}) does not exist",
                    types.join(", ")
                )));
            }
        };
        let bound: Vec<Bound> = args
            .exprs
            .iter()
            .map(|e| self.expr(e, scope))
            .collect::<Result<_>>()?;
        self.scalar(func, bound)
    }

    fn aggregate(
        &mut self,
        func: AggFunc,
        name: &str,
        args: &Args,
        scope: &Scope,
    ) -> Result<Bound> {
        if self.in_agg_arg {
            return Err(Error::Grouping(
                "aggregate function calls cannot be nested".into(),
            ));
        }
        if !self.agg_mode {
            return Err(Error::Grouping(format!(
                "aggregate functions are not allowed in {}",
                if self.clause.is_empty() {
                    "this context"
                } else {
                    self.clause
                }
            )));
        }
        let (func, arg, arg_type) = if args.star || (func == AggFunc::Count && args.none) {
            if func != AggFunc::Count || args.distinct {
                return Err(Error::UndefinedFunction(format!(
                    "function {name}(*) does not exist"
                )));
            }
            (AggFunc::CountStar, None, DataType::Int8)
        } else {
            let [arg] = &args.exprs[..] else {
                return Err(Error::UndefinedFunction(format!(
                    "function {name} takes exactly one argument"
                )));
            };
            self.in_agg_arg = true;
            self.agg_mode = false;
            let b = self.expr(arg, scope);
            self.agg_mode = true;
            self.in_agg_arg = false;
            let b = b?;
            let ty = b.ty.unwrap_or(DataType::Text);
            let e = if b.ty.is_none() {
                self.coerce(b, ty, name)?
            } else {
                b.expr
            };
            (func, Some(e), ty)
        };
        let result_type = agg_result_type(func, name, arg_type)?;
        let call = AggCall {
            func,
            arg,
            arg_type,
            distinct: args.distinct,
            result_type,
        };
        let st = self
            .agg
            .as_mut()
            .expect("aggregate mode has an aggregate state");
        let idx = match st.calls.iter().position(|c| *c == call) {
            Some(i) => i,
            None => {
                st.calls.push(call);
                st.calls.len() - 1
            }
        };
        Ok(Bound::new(Expr::Column(st.keys.len() + idx), result_type))
    }

    fn scalar(&mut self, func: ScalarFunc, mut args: Vec<Bound>) -> Result<Bound> {
        use DataType as T;
        let name = format!("{func:?}").to_lowercase();
        let arity_err = |args: &[Bound]| {
            let types: Vec<String> = args.iter().map(|b| type_label(b.ty)).collect();
            Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                types.join(", ")
            ))
        };
        let n = args.len();
        let (expr_args, ty): (Vec<Expr>, T) = match func {
            ScalarFunc::Abs => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                let t = a.ty.unwrap_or(T::Float8);
                if !t.is_numeric() {
                    return Err(arity_err(&[a]));
                }
                (vec![self.coerce(a, t, "abs")?], t)
            }
            ScalarFunc::Round | ScalarFunc::Floor | ScalarFunc::Ceil | ScalarFunc::Sqrt => {
                if n == 0 || n > 2 || (n == 2 && func != ScalarFunc::Round) {
                    return Err(arity_err(&args));
                }
                let t0 = args[0].ty.unwrap_or(T::Float8);
                if !t0.is_numeric() {
                    return Err(arity_err(&args));
                }
                let t = if n == 2
                    || t0 == T::Numeric
                    || (t0.is_integer() && func != ScalarFunc::Sqrt)
                {
                    T::Numeric
                } else {
                    T::Float8
                };
                let mut it = args.into_iter();
                let mut v = vec![self.coerce(it.next().expect("one argument"), t, &name)?];
                if let Some(s) = it.next() {
                    v.push(self.coerce(s, T::Int4, &name)?);
                }
                (v, t)
            }
            ScalarFunc::Coalesce
            | ScalarFunc::Greatest
            | ScalarFunc::Least
            | ScalarFunc::NullIf => {
                if n == 0 || (func == ScalarFunc::NullIf && n != 2) {
                    return Err(arity_err(&args));
                }
                let mut ty = None;
                for a in &args {
                    ty = self.unify(ty, a.ty, &name.to_uppercase())?;
                }
                let ty = ty.unwrap_or(T::Text);
                let v = args
                    .into_iter()
                    .map(|a| self.coerce(a, ty, &name))
                    .collect::<Result<_>>()?;
                (v, ty)
            }
            ScalarFunc::Lower
            | ScalarFunc::Upper
            | ScalarFunc::Length
            | ScalarFunc::OctetLength => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                let e = self.text_arg(a, &name)?;
                (
                    vec![e],
                    if matches!(func, ScalarFunc::Length | ScalarFunc::OctetLength) {
                        T::Int4
                    } else {
                        T::Text
                    },
                )
            }
            // Made by casts only; no name calls it.
            ScalarFunc::NumericTypmod => return Err(arity_err(&args)),
            ScalarFunc::Substr => {
                if !(2..=3).contains(&n) {
                    return Err(arity_err(&args));
                }
                let mut it = args.into_iter();
                let mut v = vec![self.text_arg(it.next().expect("2 args"), &name)?];
                for a in it {
                    v.push(self.int_arg(a, &name)?);
                }
                (v, T::Text)
            }
            ScalarFunc::Concat => {
                let v = args
                    .into_iter()
                    .map(|a| self.text_cast(a))
                    .collect::<Result<_>>()?;
                (v, T::Text)
            }
            ScalarFunc::Timezone => {
                let [zone, ts] = <[Bound; 2]>::try_from(args).map_err(|a| arity_err(&a))?;
                let zone = self.text_arg(zone, "timezone")?;
                let (ts_e, out) = match ts.ty {
                    // An unknown literal reads as timestamptz, as in PostgreSQL.
                    None | Some(T::TimestampTz) => {
                        (self.coerce(ts, T::TimestampTz, "timezone")?, T::Timestamp)
                    }
                    Some(T::Timestamp) => (ts.expr, T::TimestampTz),
                    Some(t) => {
                        return Err(Error::UndefinedFunction(format!(
                            "function timezone(unknown, {}) does not exist",
                            t.name()
                        )))
                    }
                };
                (vec![zone, ts_e], out)
            }
            ScalarFunc::DateTrunc | ScalarFunc::DatePart => {
                let [unit, ts] = <[Bound; 2]>::try_from(args).map_err(|a| arity_err(&a))?;
                let unit = self.text_arg(unit, &name)?;
                let (ts_e, ts_t) = match ts.ty {
                    None => (self.coerce(ts, T::TimestampTz, &name)?, T::TimestampTz),
                    Some(t) if t.is_timestamp() || t == T::Interval => (ts.expr, t),
                    Some(_) => {
                        return Err(arity_err(&[
                            Bound {
                                expr: unit,
                                ty: Some(T::Text),
                            },
                            ts,
                        ]))
                    }
                };
                (
                    vec![unit, ts_e],
                    if func == ScalarFunc::DatePart {
                        T::Float8
                    } else {
                        ts_t
                    },
                )
            }
            ScalarFunc::ToTimestamp => {
                let [a] = <[Bound; 1]>::try_from(args).map_err(|a| arity_err(&a))?;
                if a.ty.is_some_and(|t| !t.is_numeric()) {
                    return Err(arity_err(&[a]));
                }
                (vec![self.coerce(a, T::Float8, &name)?], T::TimestampTz)
            }
            ScalarFunc::Now => {
                if n != 0 {
                    return Err(arity_err(&args));
                }
                (vec![], T::TimestampTz)
            }
            ScalarFunc::Version
            | ScalarFunc::CurrentDatabase
            | ScalarFunc::CurrentSchema
            | ScalarFunc::CurrentUser => {
                if n != 0 {
                    return Err(arity_err(&args));
                }
                (vec![], T::Text)
            }
            ScalarFunc::BackendPid => {
                if n != 0 {
                    return Err(arity_err(&args));
                }
                (vec![], T::Int4)
            }
            ScalarFunc::CurrentSetting => {
                if n == 0 || n > 2 {
                    return Err(arity_err(&args));
                }
                let first = args.remove(0);
                let mut v = vec![self.text_arg(first, &name)?];
                if let Some(missing_ok) = args.pop() {
                    v.push(self.boolean(missing_ok, "current_setting")?);
                }
                (v, T::Text)
            }
        };
        Ok(Bound::new(
            Expr::Func {
                func,
                args: expr_args,
            },
            ty,
        ))
    }

    fn text_arg(&mut self, a: Bound, name: &str) -> Result<Expr> {
        match a.ty {
            None => self.coerce(a, DataType::Text, name),
            Some(t) if t.is_text() => Ok(a.expr),
            Some(t) => Err(Error::UndefinedFunction(format!(
                "function {name}({}) does not exist",
                t.name()
            ))),
        }
    }

    fn int_arg(&mut self, a: Bound, name: &str) -> Result<Expr> {
        match a.ty {
            Some(t) if t.is_integer() => self.coerce(a, DataType::Int4, name),
            None => self.coerce(a, DataType::Int4, name),
            Some(t) => Err(Error::UndefinedFunction(format!(
                "function {name}(text, {}) does not exist",
                t.name()
            ))),
        }
    }
}

impl Bound {
    /// A numeric literal typed as PostgreSQL types it: integer, bigint, else numeric.
    fn new_number(n: &str) -> Result<Bound> {
        if !n.contains(['.', 'e', 'E']) {
            if let Ok(v) = n.parse::<i32>() {
                return Ok(Bound::new(Expr::Literal(Value::Int4(v)), DataType::Int4));
            }
            if let Ok(v) = n.parse::<i64>() {
                return Ok(Bound::new(Expr::Literal(Value::Int8(v)), DataType::Int8));
            }
        }
        match crate::types::parse_numeric(n) {
            Ok(d) => Ok(Bound::new(
                Expr::Literal(Value::Numeric(d)),
                DataType::Numeric,
            )),
            // Beyond numeric's 28 digits (1e300, 1.7976931348623157e308) the literal is
            // kept as a double; casts to the target column's type apply as usual.
            Err(e) => match n.parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(Bound::new(
                    Expr::Literal(Value::Float8(f)),
                    DataType::Float8,
                )),
                _ => Err(e),
            },
        }
    }
}

fn ordinal(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

/// PostgreSQL's result type of an aggregate over `arg`.
pub(crate) fn agg_result_type(func: AggFunc, name: &str, arg: DataType) -> Result<DataType> {
    use DataType as T;
    let no = || Error::UndefinedFunction(format!("function {name}({}) does not exist", arg.name()));
    Ok(match func {
        AggFunc::CountStar | AggFunc::Count => T::Int8,
        AggFunc::Sum => match arg {
            T::Int2 | T::Int4 => T::Int8,
            T::Int8 | T::Numeric => T::Numeric,
            T::Float4 => T::Float4,
            T::Float8 => T::Float8,
            T::Interval => return Err(unsupported("sum(interval) is not supported")),
            _ => return Err(no()),
        },
        AggFunc::Avg => match arg {
            T::Int2 | T::Int4 | T::Int8 | T::Numeric => T::Numeric,
            T::Float4 | T::Float8 => T::Float8,
            T::Interval => return Err(unsupported("avg(interval) is not supported")),
            _ => return Err(no()),
        },
        AggFunc::Min | AggFunc::Max => match arg {
            T::Bool => return Err(no()),
            T::Varchar(_) => T::Text,
            t => t,
        },
        AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
            match arg {
                T::Int2 | T::Int4 | T::Int8 | T::Numeric => T::Numeric,
                T::Float4 | T::Float8 => T::Float8,
                _ => return Err(no()),
            }
        }
    })
}

/// Check a window clause's values: fixed-length positive RANGE and SLIDE, START AT. An
/// error is reported at the value it is about, when the parser recorded where that is.
fn window_spec(
    w: &RawWindow,
    time_type: DataType,
    position: impl Fn(sqlparser::tokenizer::Location) -> u32,
) -> Result<WindowSpec> {
    let at = |i: usize| {
        move |e: Error| match w.value_at[i] {
            Some(loc) if e.position().is_none() => e.at(position(loc)),
            _ => e,
        }
    };
    window_values(w, time_type).map_err(|(i, e)| at(i)(e))
}

/// [`window_spec`]'s checks; an error comes with the index of its value in
/// [`RawWindow::value_at`].
fn window_values(
    w: &RawWindow,
    time_type: DataType,
) -> std::result::Result<WindowSpec, (usize, Error)> {
    let length = |text: &str, what: &str| -> Result<i64> {
        let iv = crate::time::parse_interval(text)?;
        if iv.months != 0 {
            return Err(Error::InvalidParameterValue(format!(
                "{what} '{text}' has no fixed length: months and years vary in length; use days, hours, minutes or seconds"
            )));
        }
        let us = crate::time::fixed_length_us(&iv)?;
        if us <= 0 {
            return Err(Error::InvalidParameterValue(format!(
                "{what} must be positive, not '{text}'"
            )));
        }
        Ok(us)
    };
    let range_us = length(&w.range, "RANGE BY").map_err(|e| (0, e))?;
    let slide_us = match &w.slide {
        Some(s) => length(s, "SLIDE BY").map_err(|e| (1, e))?,
        None => range_us,
    };
    let start = match &w.start {
        None => StartSpec::Default,
        Some(s) if s.trim().eq_ignore_ascii_case("epoch") => StartSpec::Epoch,
        Some(s) => StartSpec::At(
            if time_type == DataType::Timestamp {
                crate::time::parse_timestamp_naive(s)
            } else {
                crate::time::parse_timestamp(s)
            }
            .map_err(|e| (2, e))?,
        ),
    };
    let slack_us = w
        .slack
        .as_deref()
        .map(slack_length)
        .transpose()
        .map_err(|e| (3, e))?;
    Ok(WindowSpec {
        range_us,
        slide_us,
        start,
        slack_us,
    })
}

/// A SLACK interval: fixed length, not negative. Errors: 22023.
fn slack_length(text: &str) -> Result<i64> {
    let iv = crate::time::parse_interval(text)?;
    if iv.months != 0 {
        return Err(Error::InvalidParameterValue(format!(
            "SLACK '{text}' has no fixed length: months and years vary in length; use days, hours, minutes or seconds"
        )));
    }
    let us = crate::time::fixed_length_us(&iv)?;
    if us < 0 {
        return Err(Error::InvalidParameterValue(format!(
            "SLACK must not be negative, not '{text}'"
        )));
    }
    Ok(us)
}

/// A retention interval: fixed length and positive. Errors: 22023.
fn retention_length(text: &str) -> Result<i64> {
    let iv = crate::time::parse_interval(text)?;
    if iv.months != 0 {
        return Err(Error::InvalidParameterValue(format!(
            "retention '{text}' has no fixed length: months and years vary in length; use days or hours"
        )));
    }
    let us = crate::time::fixed_length_us(&iv)?;
    if us <= 0 {
        return Err(Error::InvalidParameterValue(format!(
            "retention must be positive, not '{text}'"
        )));
    }
    Ok(us)
}

/// COPY's options, checked as PostgreSQL 15's `ProcessCopyOptions` checks them, in its
/// order, with its SQLSTATEs: 42601 for an unknown or repeated option or a text option in
/// BINARY mode; 22023 for a bad value (format, Boolean, encoding name, a delimiter that is
/// a newline or that text escapes would read, a delimiter equal to the quote); 0A000 for a
/// value that is not one byte, an option of another format or direction, a delimiter or
/// quote inside the NULL string; 55000 for FREEZE (a stream is never new in the current
/// transaction). `is_from`: COPY FROM. FORCE_NOT_NULL and FORCE_NULL come back as column
/// names, which the caller resolves against the COPY's column list.
fn copy_options(items: &[CopyItem], is_from: bool) -> Result<(CopyOptions, ForceLists)> {
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
struct ForceLists {
    not_null: Vec<String>,
    null: Vec<String>,
    freeze: bool,
}

/// A Boolean option's value as PostgreSQL's `defGetBoolean` reads it: true/false, on/off
/// (any case), 1/0.
fn pg_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "on" | "1" => Some(true),
        "false" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// An encoding name PostgreSQL knows (lower case, letters and digits only).
fn is_pg_encoding(key: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parse::parse_all;

    #[test]
    fn relation_names_follow_postgresql_qualification() {
        let ok = |w: &str, db: Option<&str>| relation_name(w, db).unwrap();
        assert_eq!(ok("s", Some("tcq")), "s");
        assert_eq!(ok("public.s", Some("tcq")), "s");
        assert_eq!(ok("net.tcp", Some("tcq")), "net.tcp");
        assert_eq!(ok("tcq.public.s", Some("tcq")), "s");
        assert_eq!(ok("tcq.net.tcp", Some("tcq")), "net.tcp");
        assert_eq!(ok("other.net.tcp", None), "net.tcp");
        assert_eq!(
            relation_name("other.public.s", Some("tcq")).unwrap_err(),
            Error::FeatureNotSupported(
                "cross-database references are not implemented: other.public.s".into()
            )
        );
        assert_eq!(
            relation_name("x.y.z.w", None).unwrap_err(),
            Error::Syntax("improper qualified name (too many dotted names): x.y.z.w".into())
        );
    }

    pub(super) struct Schema;

    impl SchemaProvider for Schema {
        fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
            match name {
                "flights" => Some((
                    vec![
                        Column::new("ts", DataType::Timestamp),
                        Column::new("delay", DataType::Int4),
                        Column::new("distance", DataType::Int8),
                        Column::new("origin", DataType::Text),
                        Column::new("speed", DataType::Float8),
                        Column::new("code", DataType::Varchar(Some(3))),
                    ],
                    Some(0),
                )),
                "network.tcpdump" => Some((
                    vec![
                        Column::new("t", DataType::TimestampTz),
                        Column::new("len", DataType::Int2),
                    ],
                    Some(0),
                )),
                "clicks" => Some((vec![Column::new("url", DataType::Text)], None)),
                _ => None,
            }
        }
        fn system_view(&self, name: &str) -> Option<Vec<Column>> {
            match name {
                "tcq_streams" => Some(vec![Column::new("name", DataType::Text)]),
                "pg_catalog.pg_type" => Some(vec![
                    Column::new("oid", DataType::Int4),
                    Column::new("typname", DataType::Text),
                ]),
                _ => None,
            }
        }
        fn stream_names(&self) -> Vec<String> {
            vec!["flights".into(), "clicks".into()]
        }
    }

    pub(super) fn plan(sql: &str) -> Result<Plan> {
        let p = parse_all(sql)?;
        bind(&p[0], &Schema, &[])
    }

    pub(super) fn query(sql: &str) -> Query {
        match plan(sql).unwrap() {
            Plan::Query(q) => *q,
            other => panic!("not a query: {other:?}"),
        }
    }

    /// The error without its position and hint (tested in `positions_and_hints`).
    pub(super) fn err(sql: &str) -> Error {
        plan(sql).unwrap_err().kind().clone()
    }

    #[test]
    fn positions_and_hints() {
        let e = plan("SELECT delya FROM flights").unwrap_err();
        assert_eq!(
            e.kind(),
            &Error::UndefinedColumn("column \"delya\" does not exist".into())
        );
        assert_eq!(e.position(), Some(8));
        assert_eq!(
            e.hint(),
            Some("Perhaps you meant to reference the column \"flights.delay\".")
        );
        let e = plan("SELECT f.orgin FROM flights f").unwrap_err();
        assert_eq!(
            e.hint(),
            Some("Perhaps you meant to reference the column \"f.origin\".")
        );
        assert_eq!(plan("SELECT xyzzy FROM flights").unwrap_err().hint(), None);
        let e = plan("SELECT 1 FROM  flihgts").unwrap_err();
        assert_eq!(e.position(), Some(16));
        assert_eq!(e.hint(), Some("Perhaps you meant the stream \"flights\"."));
        assert_eq!(
            closest("delya", ["delay", "distance"].into_iter()),
            Some("delay")
        );
        assert_eq!(closest("ab", ["xy"].into_iter()), None);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        let e = plan("SELECT 1, nosuch(delay) FROM flights").unwrap_err();
        assert_eq!(e.position(), Some(11));
        assert!(e.hint().unwrap().starts_with("No function matches"));
        // A bad window value is reported at its string: RANGE, SLIDE, START AT, SLACK.
        let at = |sql: &str| plan(sql).unwrap_err().position();
        assert_eq!(
            at("SELECT count(*) FROM flights [RANGE BY '1 month']"),
            Some(40)
        );
        assert_eq!(
            at("SELECT count(*) FROM flights [RANGE BY '1 hour' SLIDE BY '0 s']"),
            Some(58)
        );
        assert_eq!(
            at("SELECT count(*) FROM flights [RANGE BY '1 hour' START AT 'noon-ish']"),
            Some(58)
        );
        assert_eq!(
            at("SELECT count(*) FROM flights [RANGE BY '1 hour' SLACK '-1 s']"),
            Some(55)
        );
    }

    const HOUR: i64 = 3_600_000_000;

    #[test]
    fn create_stream() {
        let Plan::CreateStream(c) = plan(
            "CREATE STREAM network.tcpdump2 (t timestamptz TIMESTAMPCOLUMN, a boolean, b int2, c int, d bigint, e float4, f double precision, g numeric(10,2), h text, i varchar(5), j character varying(7), k timestamp without time zone, l interval, m float) TYPE ARCHIVED",
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(c.name, "network.tcpdump2");
        assert_eq!(c.timestamp_column, Some(0));
        assert!(c.archived && !c.if_not_exists);
        let types: Vec<DataType> = c.columns.iter().map(|c| c.data_type).collect();
        use DataType as T;
        assert_eq!(
            types,
            [
                T::TimestampTz,
                T::Bool,
                T::Int2,
                T::Int4,
                T::Int8,
                T::Float4,
                T::Float8,
                T::Numeric,
                T::Text,
                T::Varchar(Some(5)),
                T::Varchar(Some(7)),
                T::Timestamp,
                T::Interval,
                T::Float8
            ]
        );
        let Plan::CreateStream(c) = plan("CREATE STREAM s (a int)").unwrap() else {
            panic!()
        };
        assert_eq!((c.timestamp_column, c.archived), (None, false));
        assert_eq!(
            err("CREATE STREAM s (a foo)"),
            Error::UndefinedObject("type \"foo\" does not exist".into())
        );
        assert!(
            matches!(err("CREATE STREAM s (a int, a text)"), Error::DuplicateColumn(m) if m == "column \"a\" specified more than once")
        );
        assert!(
            matches!(err("CREATE STREAM s (a int TIMESTAMPCOLUMN)"), Error::InvalidTableDefinition(m) if m.contains("must be of type timestamp"))
        );
        assert!(
            matches!(err("CREATE STREAM s (a timestamp TIMESTAMPCOLUMN, b timestamp TIMESTAMPCOLUMN)"), Error::InvalidTableDefinition(m) if m.contains("more than one TIMESTAMPCOLUMN"))
        );
    }

    #[test]
    fn drop_stream_and_utilities() {
        assert_eq!(
            plan("DROP STREAM IF EXISTS a, b").unwrap(),
            Plan::DropStream {
                names: vec!["a".into(), "b".into()],
                if_exists: true
            }
        );
        assert_eq!(plan("").unwrap(), Plan::Empty);
        assert_eq!(plan(";").unwrap(), Plan::Empty);
        assert_eq!(
            plan("FETCH c").unwrap(),
            Plan::Fetch {
                cursor: "c".into(),
                count: FetchCount::Count(1),
                is_move: false,
                timeout_us: None,
            }
        );
        assert_eq!(
            plan("FETCH 5 FROM c WITH (timeout = '1.5s')").unwrap(),
            Plan::Fetch {
                cursor: "c".into(),
                count: FetchCount::Count(5),
                is_move: false,
                timeout_us: Some(1_500_000),
            }
        );
        assert_eq!(
            plan("FETCH ALL c WITH (TIMEOUT 0)").unwrap(),
            Plan::Fetch {
                cursor: "c".into(),
                count: FetchCount::All,
                is_move: false,
                timeout_us: Some(0),
            }
        );
        assert!(matches!(
            err("FETCH c WITH (timeout = '1 month')"),
            Error::InvalidParameterValue(_)
        ));
        assert!(matches!(
            err("FETCH c WITH (timeout = '-1s')"),
            Error::InvalidParameterValue(_)
        ));
        assert_eq!(
            plan("BEGIN").unwrap(),
            Plan::Transaction(TransactionOp::Begin { read_only: None })
        );
        assert_eq!(
            plan("SHOW server_version").unwrap(),
            Plan::Show {
                name: "server_version".into()
            }
        );
        assert_eq!(
            plan("SET datestyle TO 'ISO, MDY'").unwrap(),
            Plan::Set {
                name: "datestyle".into(),
                value: Some("ISO, MDY".into())
            }
        );
        assert_eq!(plan("CLOSE ALL").unwrap(), Plan::Close { cursor: None });
        assert!(matches!(
            plan("CREATE TABLE t (a int PRIMARY KEY DEFAULT 1 + 1)").unwrap(),
            Plan::CreateTable(CreateTable { primary_key: Some(ref k), ref not_null, ref defaults, .. })
                if k == &[0] && not_null == &[true] && defaults[0].is_some()
        ));
        assert!(matches!(
            err("CREATE TABLE t (a int CHECK (a > 0))"),
            Error::FeatureNotSupported(_)
        ));
        // PostgreSQL's checks at CREATE TABLE: a key names a column once (42701), a
        // column is not both NULL and NOT NULL (42601), a constant DEFAULT must be a
        // value of the column's type (22P02).
        for (sql, state) in [
            ("CREATE TABLE t (a int, UNIQUE (a, a))", "42701"),
            (
                "CREATE TABLE t (a int, b int, PRIMARY KEY (b, a, b))",
                "42701",
            ),
            ("CREATE TABLE t (a int NULL NOT NULL)", "42601"),
            ("CREATE TABLE t (a int DEFAULT 'abc')", "22P02"),
            ("CREATE TABLE t (a smallint DEFAULT 70000)", "22003"),
        ] {
            assert_eq!(crate::server::sqlstate(&err(sql)), state, "{sql}");
        }
        assert!(plan("CREATE TABLE t (a int DEFAULT '7', b text DEFAULT 'x')").is_ok());
        // A stream's tuples are not updated: the statement names the reason.
        assert!(matches!(
            err("UPDATE flights SET delay = 1"),
            Error::FeatureNotSupported(_)
        ));
    }

    #[test]
    fn windowed_aggregate_query() {
        let q = query("SELECT origin, avg(delay), max(delay) AS worst, wtime(*) FROM flights [RANGE BY '1 hour' SLIDE BY '10 minutes'] WHERE delay > 0 GROUP BY origin HAVING count(*) > 2 ORDER BY worst DESC LIMIT 10");
        assert!(q.is_continuous());
        assert_eq!(
            q.windows,
            vec![WindowSpec {
                range_us: HOUR,
                slide_us: HOUR / 6,
                start: StartSpec::Default,
                slack_us: None,
            }]
        );
        let agg = q.aggregate.as_ref().unwrap();
        assert_eq!(agg.group_by, vec![Expr::Column(3)]);
        assert_eq!(agg.group_types, vec![DataType::Text]);
        let funcs: Vec<(AggFunc, DataType)> =
            agg.calls.iter().map(|c| (c.func, c.result_type)).collect();
        assert_eq!(
            funcs,
            [
                (AggFunc::Avg, DataType::Numeric),
                (AggFunc::Max, DataType::Int4),
                (AggFunc::CountStar, DataType::Int8)
            ]
        );
        assert_eq!(
            q.projection,
            vec![
                Expr::Column(0),
                Expr::Column(1),
                Expr::Column(2),
                Expr::WindowMeta(WindowMeta::Wtime)
            ]
        );
        let names: Vec<&str> = q.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["origin", "avg", "worst", "wtime"]);
        assert_eq!(q.columns[3].data_type, DataType::Timestamp);
        assert_eq!(
            q.filter,
            Some(Expr::Binary {
                op: BinaryOp::Gt,
                left: Box::new(Expr::Column(1)),
                right: Box::new(Expr::Literal(Value::Int4(0)))
            })
        );
        assert_eq!(
            q.having,
            Some(Expr::Binary {
                op: BinaryOp::Gt,
                left: Box::new(Expr::Column(3)),
                right: Box::new(Expr::Literal(Value::Int4(2)))
            })
        );
        assert_eq!(
            q.order_by,
            vec![SortKey {
                expr: Expr::Column(2),
                descending: true,
                nulls_first: true
            }]
        );
        assert_eq!(q.limit, Some(10));
    }

    #[test]
    fn window_values() {
        let q = query("SELECT count(*) FROM flights [RANGE BY '2 days' START AT 'epoch']");
        assert_eq!(
            q.windows[0],
            WindowSpec {
                range_us: 48 * HOUR,
                slide_us: 48 * HOUR,
                start: StartSpec::Epoch,
                slack_us: None,
            }
        );
        let q = query("SELECT count(*) FROM flights AS f [RANGE BY '00:05:00' SLIDE BY '1 hour 30 minutes' START AT '2001-01-01 00:00:00'] [RANGE BY '10 seconds']");
        assert_eq!(q.windows.len(), 2);
        assert_eq!(
            q.windows[0],
            WindowSpec {
                range_us: 300_000_000,
                slide_us: 90 * 60_000_000,
                start: StartSpec::At(978_307_200_000_000),
                slack_us: None,
            }
        );
        assert_eq!(q.windows[1].range_us, 10_000_000);
        assert!(
            matches!(err("SELECT count(*) FROM flights [RANGE BY '1 month']"), Error::InvalidParameterValue(m) if m.contains("has no fixed length: months and years vary in length"))
        );
        assert!(matches!(
            err("SELECT count(*) FROM flights [RANGE BY '1 year']"),
            Error::InvalidParameterValue(_)
        ));
        assert!(matches!(
            err("SELECT count(*) FROM flights [RANGE BY '0 seconds']"),
            Error::InvalidParameterValue(_)
        ));
        assert!(matches!(
            err("SELECT count(*) FROM flights [RANGE BY '-1 hour']"),
            Error::InvalidParameterValue(_)
        ));
        assert!(matches!(
            err("SELECT count(*) FROM flights [RANGE BY '1 hour' SLIDE BY '0 s']"),
            Error::InvalidParameterValue(_)
        ));
        assert!(matches!(
            err("SELECT count(*) FROM flights [RANGE BY 'soon']"),
            Error::InvalidDatetimeFormat(_)
        ));
        assert!(matches!(
            err("SELECT count(*) FROM flights [RANGE BY '1 hour' START AT 'noon-ish']"),
            Error::InvalidDatetimeFormat(_)
        ));
        assert!(matches!(
            err("SELECT count(*) FROM flights [RANGE BY '1 hour' START AT '2001-13-01']"),
            Error::DatetimeFieldOverflow(_)
        ));
        let q = query("SELECT wtime(*), wstart(*), wrange(*), wslide(*) FROM network.tcpdump [RANGE BY '1 minute']");
        let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
        assert_eq!(
            types,
            [
                DataType::TimestampTz,
                DataType::TimestampTz,
                DataType::Interval,
                DataType::Interval
            ]
        );
        let q = query("SELECT wtime(*) FROM clicks [RANGE BY '1 minute']");
        assert_eq!(q.columns[0].data_type, DataType::TimestampTz);
        assert!(matches!(
            err("SELECT wtime(*) FROM flights"),
            Error::FeatureNotSupported(_)
        ));
    }

    #[test]
    fn aggregate_result_types() {
        assert!(matches!(
            err("SELECT sum(ts - ts) FROM flights"),
            Error::FeatureNotSupported(_)
        ));
        let q = query("SELECT count(delay), count(DISTINCT origin), sum(delay), sum(distance), sum(speed), avg(distance), avg(speed), min(origin), stddev(delay), var_pop(speed) FROM flights");
        use DataType as T;
        let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
        assert_eq!(
            types,
            [
                T::Int8,
                T::Int8,
                T::Int8,
                T::Numeric,
                T::Float8,
                T::Numeric,
                T::Float8,
                T::Text,
                T::Numeric,
                T::Float8
            ]
        );
        assert!(q.aggregate.as_ref().unwrap().calls[1].distinct);
        assert!(
            matches!(err("SELECT sum(origin) FROM flights"), Error::UndefinedFunction(m) if m == "function sum(text) does not exist")
        );
    }

    #[test]
    fn grouping_rules() {
        // 42P10, as PostgreSQL: a position outside the select list.
        for sql in [
            "SELECT origin, count(*) FROM flights GROUP BY 3",
            "SELECT origin, count(*) FROM flights GROUP BY origin ORDER BY 9",
        ] {
            assert!(
                matches!(err(sql), Error::InvalidColumnReference(_)),
                "{sql}: {:?}",
                err(sql)
            );
        }
        assert_eq!(
            err("SELECT origin, delay, count(*) FROM flights GROUP BY origin"),
            Error::Grouping("column \"flights.delay\" must appear in the GROUP BY clause or be used in an aggregate function".into())
        );
        let q = query("SELECT origin AS o, delay / 10 AS bucket, count(*) FROM flights GROUP BY o, 2 ORDER BY 2, o");
        let agg = q.aggregate.unwrap();
        assert_eq!(agg.group_by[0], Expr::Column(3));
        assert_eq!(
            agg.group_by[1],
            Expr::Binary {
                op: BinaryOp::Div,
                left: Box::new(Expr::Column(1)),
                right: Box::new(Expr::Literal(Value::Int4(10)))
            }
        );
        assert_eq!(
            q.projection,
            vec![Expr::Column(0), Expr::Column(1), Expr::Column(2)]
        );
        assert_eq!(
            q.order_by
                .iter()
                .map(|k| k.expr.clone())
                .collect::<Vec<_>>(),
            vec![Expr::Column(1), Expr::Column(0)]
        );
        let q = query("SELECT avg(delay)::numeric(10, 2) FROM flights");
        assert_eq!(
            q.projection[0],
            Expr::Func {
                func: ScalarFunc::NumericTypmod,
                args: vec![
                    Expr::Column(0),
                    Expr::Literal(Value::Int4(10)),
                    Expr::Literal(Value::Int4(2))
                ]
            }
        );
        assert_eq!(q.columns[0].name, "avg");
        let q = query("SELECT delay + 1, sum(delay) * 2 FROM flights GROUP BY delay");
        assert_eq!(
            q.projection[0],
            Expr::Binary {
                op: BinaryOp::Add,
                left: Box::new(Expr::Column(0)),
                right: Box::new(Expr::Literal(Value::Int4(1)))
            }
        );
        assert!(
            matches!(err("SELECT count(*) FROM flights WHERE sum(delay) > 1"), Error::Grouping(m) if m == "aggregate functions are not allowed in WHERE")
        );
        assert!(matches!(
            err("SELECT sum(count(*)) FROM flights"),
            Error::Grouping(_)
        ));
        assert!(matches!(
            err("SELECT count(*) FROM flights GROUP BY count(*)"),
            Error::Grouping(_)
        ));
        let q = query("SELECT * FROM flights WHERE origin = 'SFO' ORDER BY delay LIMIT 5 OFFSET 2");
        assert_eq!(q.projection.len(), 6);
        assert!(q.aggregate.is_none());
        assert_eq!((q.limit, q.offset), (Some(5), Some(2)));
    }

    #[test]
    fn names_and_sources() {
        assert_eq!(
            err("SELECT * FROM nope"),
            Error::UndefinedTable("nope".into())
        );
        assert_eq!(
            err("SELECT nope FROM flights"),
            Error::UndefinedColumn("column \"nope\" does not exist".into())
        );
        assert_eq!(
            err("SELECT \"Delay\" FROM flights"),
            Error::UndefinedColumn("column \"Delay\" does not exist".into())
        );
        let q = query("SELECT FLIGHTS.DELAY, flights.origin FROM flights");
        assert_eq!(q.projection, vec![Expr::Column(1), Expr::Column(3)]);
        assert_eq!(
            err("SELECT f.delay FROM flights"),
            Error::UndefinedTable("f".into())
        );
        let q = query("SELECT f.delay FROM flights f");
        assert_eq!(q.projection, vec![Expr::Column(1)]);
        let q = query("SELECT typname FROM pg_type");
        assert_eq!(
            q.source,
            Source::System {
                name: "pg_catalog.pg_type".into(),
                columns: Schema.system_view("pg_catalog.pg_type").unwrap()
            }
        );
        assert!(!q.is_continuous());
        let q = query("SELECT * FROM tcq_streams");
        assert!(matches!(q.source, Source::System { ref name, .. } if name == "tcq_streams"));
        let q = query("SELECT 1, 'a', version()");
        assert_eq!(q.source, Source::Nothing);
        let names: Vec<&str> = q.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["?column?", "?column?", "version"]);
        assert_eq!(q.columns[1].data_type, DataType::Text);
        assert!(matches!(
            err("SELECT * FROM flights a, flights b"),
            Error::FeatureNotSupported(_)
        ));
        assert!(matches!(
            err("SELECT * FROM flights JOIN clicks ON true"),
            Error::FeatureNotSupported(_)
        ));
        assert!(matches!(
            err("SELECT * FROM (SELECT * FROM flights [RANGE BY '1 minute']) AS x"),
            Error::FeatureNotSupported(_)
        ));
        assert!(matches!(
            err("SELECT * FROM tcq_streams [RANGE BY '1 minute']"),
            Error::FeatureNotSupported(_)
        ));
        let q = query("SELECT len FROM network.tcpdump [RANGE BY '1 minute']");
        assert!(matches!(q.source, Source::Stream { ref name, .. } if name == "network.tcpdump"));
    }

    #[test]
    fn types_and_operators() {
        assert_eq!(
            err("SELECT origin + 1 FROM flights"),
            Error::UndefinedFunction("operator does not exist: text + integer".into())
        );
        let q = query("SELECT delay + distance, delay * 1.5, speed / 2, ts + '1 hour', ts - ts, '1'::int, CAST(delay AS text) FROM flights");
        use DataType as T;
        let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
        assert_eq!(
            types,
            [
                T::Int8,
                T::Numeric,
                T::Float8,
                T::Timestamp,
                T::Interval,
                T::Int4,
                T::Text
            ]
        );
        assert_eq!(q.columns[5].name, "int4");
        assert_eq!(q.columns[6].name, "delay");
        let q = query("SELECT * FROM flights WHERE ts > '2001-01-01 00:00'");
        assert_eq!(
            q.filter,
            Some(Expr::Binary {
                op: BinaryOp::Gt,
                left: Box::new(Expr::Column(0)),
                right: Box::new(Expr::Literal(Value::Timestamp(978_307_200_000_000)))
            })
        );
        assert!(matches!(
            err("SELECT * FROM flights WHERE delay = 'abc'"),
            Error::InvalidTextRepresentation(_)
        ));
        assert!(
            matches!(err("SELECT * FROM flights WHERE delay"), Error::DatatypeMismatch(m) if m == "argument of WHERE must be type boolean, not type integer")
        );
        assert!(
            matches!(err("SELECT nosuch(1)"), Error::UndefinedFunction(m) if m == "function nosuch(integer) does not exist")
        );
        let q = query("SELECT -2147483648, 2147483648, 1.5, -delay, NOT true FROM flights");
        assert_eq!(q.projection[0], Expr::Literal(Value::Int4(i32::MIN)));
        assert_eq!(q.projection[1], Expr::Literal(Value::Int8(2_147_483_648)));
        assert_eq!(q.columns[2].data_type, DataType::Numeric);
        let q = query("SELECT CASE WHEN delay > 10 THEN 'late' ELSE 'ok' END, coalesce(delay, 0), origin LIKE 'S%', delay IN (1, 2), delay BETWEEN 1 AND 5, extract(hour FROM ts) FROM flights");
        let types: Vec<DataType> = q.columns.iter().map(|c| c.data_type).collect();
        assert_eq!(
            types,
            [T::Text, T::Int4, T::Bool, T::Bool, T::Bool, T::Numeric]
        );
    }

    #[test]
    fn parameters_take_types_from_context() {
        let p =
            parse_all("SELECT * FROM flights WHERE delay > $1 AND origin = $2 AND $3::int8 > 0")
                .unwrap();
        let Plan::Query(q) = bind(&p[0], &Schema, &[]).unwrap() else {
            panic!()
        };
        assert_eq!(
            q.param_types,
            vec![DataType::Int4, DataType::Text, DataType::Int8]
        );
        let Plan::Query(q) = bind(&p[0], &Schema, &[Some(DataType::Int8)]).unwrap() else {
            panic!()
        };
        assert_eq!(q.param_types[0], DataType::Int8);
        let q = query("SELECT $1");
        assert_eq!(q.param_types, vec![DataType::Text]);
    }

    #[test]
    fn insert() {
        let Plan::Insert(i) = plan("INSERT INTO flights (ts, delay, origin) VALUES ('2001-01-01 00:00', -5, 'SFO'), ($1, $2, NULL), (DEFAULT, 1::int8, 'x')").unwrap() else { panic!() };
        assert_eq!(i.stream, "flights");
        assert_eq!(i.target_columns, vec![0, 1, 3]);
        assert_eq!(
            i.rows[0][0],
            Expr::Cast {
                expr: Box::new(Expr::Literal(Value::Text("2001-01-01 00:00".into()))),
                to: DataType::Timestamp
            }
        );
        assert_eq!(i.rows[0][1], Expr::Literal(Value::Int4(-5)));
        assert_eq!(i.rows[0][2], Expr::Literal(Value::Text("SFO".into())));
        assert_eq!(
            i.rows[1],
            vec![Expr::Param(0), Expr::Param(1), Expr::Literal(Value::Null)]
        );
        assert_eq!(i.rows[2][0], Expr::Literal(Value::Null));
        assert_eq!(
            i.rows[2][1],
            Expr::Cast {
                expr: Box::new(Expr::Cast {
                    expr: Box::new(Expr::Literal(Value::Int4(1))),
                    to: DataType::Int8
                }),
                to: DataType::Int4
            }
        );
        assert_eq!(i.param_types, vec![DataType::Timestamp, DataType::Int4]);
        let Plan::Insert(i) =
            plan("INSERT INTO flights VALUES ('2001-01-01', 1, 2, 'a', 1.5, 'abc')").unwrap()
        else {
            panic!()
        };
        assert_eq!(i.target_columns, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(
            i.rows[0][4],
            Expr::Cast {
                expr: Box::new(Expr::Literal(Value::Numeric(rust_decimal::Decimal::new(
                    15, 1
                )))),
                to: DataType::Float8
            }
        );
        assert_eq!(
            err("INSERT INTO flights (delay) VALUES (1, 2)"),
            Error::Syntax("INSERT has more expressions than target columns".into())
        );
        assert_eq!(
            err("INSERT INTO flights (delay, origin) VALUES (1)"),
            Error::Syntax("INSERT has more target columns than expressions".into())
        );
        assert_eq!(
            err("INSERT INTO nope VALUES (1)"),
            Error::UndefinedTable("nope".into())
        );
        assert!(matches!(
            err("INSERT INTO flights (nope) VALUES (1)"),
            Error::UndefinedColumn(_)
        ));
        assert!(matches!(
            err("INSERT INTO flights (delay) VALUES (true)"),
            Error::DatatypeMismatch(_)
        ));
    }

    #[test]
    fn copy() {
        let Plan::CopyFrom(c) = plan("COPY flights FROM STDIN").unwrap() else {
            panic!()
        };
        assert_eq!(c.target_columns, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(c.options, CopyOptions::defaults(CopyFormat::Text));
        let Plan::CopyFrom(c) = plan("COPY flights (ts, delay) FROM STDIN WITH (FORMAT csv, HEADER, DELIMITER '|', NULL 'NA')").unwrap() else { panic!() };
        assert_eq!(c.target_columns, vec![0, 1]);
        assert_eq!(
            c.options,
            CopyOptions {
                header: true,
                delimiter: b'|',
                null: "NA".into(),
                ..CopyOptions::defaults(CopyFormat::Csv)
            }
        );
        let Plan::CopyFrom(c) = plan("COPY flights FROM STDIN WITH CSV HEADER").unwrap() else {
            panic!()
        };
        assert_eq!(
            c.options,
            CopyOptions {
                header: true,
                ..CopyOptions::defaults(CopyFormat::Csv)
            }
        );
        let Plan::CopyFrom(c) =
            plan("COPY flights FROM STDIN (FORMAT csv, QUOTE '''', ESCAPE '\\')").unwrap()
        else {
            panic!()
        };
        assert_eq!((c.options.quote, c.options.escape), (b'\'', b'\\'));
        let Plan::CopyFrom(c) = plan("COPY flights FROM STDIN (FORMAT binary)").unwrap() else {
            panic!()
        };
        assert_eq!(c.options.format, CopyFormat::Binary);
        assert_eq!(
            err("COPY flights FROM STDIN (FORMAT binary, HEADER)"),
            Error::FeatureNotSupported("cannot specify HEADER in BINARY mode".into())
        );
        // PostgreSQL 15's checks, in its order, with its SQLSTATEs and words.
        for (sql, state, message) in [
            ("(DELIMITER ';;')", "0A000", "COPY delimiter must be a single one-byte character"),
            ("(DELIMITER 'é')", "0A000", "COPY delimiter must be a single one-byte character"),
            ("(DELIMITER '')", "0A000", "COPY delimiter must be a single one-byte character"),
            ("(DELIMITER E'\\n')", "22023", "COPY delimiter cannot be newline or carriage return"),
            ("(NULL E'a\\rb')", "22023", "COPY null representation cannot use newline or carriage return"),
            ("(DELIMITER 'a')", "22023", "COPY delimiter cannot be \"a\""),
            ("(DELIMITER '1')", "22023", "COPY delimiter cannot be \"1\""),
            ("(DELIMITER '\\')", "22023", "COPY delimiter cannot be \"\\\""),
            ("(DELIMITER '.')", "22023", "COPY delimiter cannot be \".\""),
            ("(DELIMITER 'N')", "0A000", "COPY delimiter must not appear in the NULL specification"),
            ("(FORMAT csv, DELIMITER '\"')", "22023", "COPY delimiter and quote must be different"),
            ("(FORMAT csv, QUOTE ',')", "22023", "COPY delimiter and quote must be different"),
            ("(FORMAT csv, QUOTE 'ab')", "0A000", "COPY quote must be a single one-byte character"),
            ("(FORMAT csv, ESCAPE '')", "0A000", "COPY escape must be a single one-byte character"),
            ("(QUOTE '\"')", "0A000", "COPY quote available only in CSV mode"),
            ("(ESCAPE '\"')", "0A000", "COPY escape available only in CSV mode"),
            ("(FORMAT binary, QUOTE '\"')", "0A000", "COPY quote available only in CSV mode"),
            ("(FORMAT binary, DELIMITER ',')", "42601", "cannot specify DELIMITER in BINARY mode"),
            ("(FORMAT binary, NULL 'x')", "42601", "cannot specify NULL in BINARY mode"),
            ("(NULL 'a\tb')", "0A000", "COPY delimiter must not appear in the NULL specification"),
            ("(FORMAT csv, NULL '\"x\"')", "0A000", "CSV quote character must not appear in the NULL specification"),
            ("(FORMAT csv, FORMAT text)", "42601", "conflicting or redundant options"),
            ("(NULL 'x', NULL 'y')", "42601", "conflicting or redundant options"),
            ("(FORMAT xml)", "22023", "COPY format \"xml\" not recognized"),
            ("(HEADER 'yes')", "42601", "header requires a Boolean value or \"match\""),
            ("(FREEZE maybe)", "42601", "freeze requires a Boolean value"),
            ("(BOGUS 1)", "42601", "option \"bogus\" not recognized"),
            ("(ENCODING 'bogus')", "22023", "argument to option \"encoding\" must be a valid encoding name"),
            ("(FREEZE)", "55000", "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction"),
            ("(FORCE_NOT_NULL (delay))", "0A000", "COPY force not null available only in CSV mode"),
            ("(FORMAT csv, FORCE_QUOTE *)", "0A000", "COPY force quote only available using COPY TO"),
            ("(FORMAT csv, FORCE_NULL (nope))", "42703", "column \"nope\" of relation \"flights\" does not exist"),
            ("WITH CSV DELIMITER ';' QUOTE ';'", "22023", "COPY delimiter and quote must be different"),
            ("WITH OIDS", "42601", "syntax error at or near \"OIDS\""),
        ] {
            let e = err(&format!("COPY flights FROM STDIN {sql}"));
            assert_eq!(
                (crate::server::sqlstate(&e), e.to_string().as_str()),
                (state, message),
                "{sql}"
            );
        }
        // Accepted as PostgreSQL accepts them.
        for sql in [
            "(HEADER match, FORMAT csv)",
            "(HEADER 1)",
            "(HEADER off)",
            "(\"format\" 'csv', NULL 1)",
            "(FORMAT csv, QUOTE 1)",
            "(ENCODING 'UTF-8', FREEZE false)",
            "WITH CSV NULL 'x' QUOTE '\"'",
            "WITH CSV DELIMITER ';' QUOTE '\"'",
            "WITH CSV HEADER ENCODING 'UTF8'",
            "DELIMITER AS '|' NULL AS ''",
            "(FORMAT csv, FORCE_NOT_NULL (delay, origin), FORCE_NULL (ts))",
            "CSV FORCE NOT NULL delay, origin",
        ] {
            assert!(
                matches!(
                    plan(&format!("COPY flights FROM STDIN {sql}")),
                    Ok(Plan::CopyFrom(_))
                ),
                "{sql}: {:?}",
                plan(&format!("COPY flights FROM STDIN {sql}"))
            );
        }
        let Plan::CopyFrom(c) = plan(
            "COPY flights (origin, delay) FROM STDIN (FORMAT csv, FORCE_NOT_NULL (delay), HEADER MATCH)",
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(c.options.force_not_null, vec![1]);
        assert!(c.options.header && c.options.header_match);
        assert_eq!(
            err("COPY flights (origin) FROM STDIN (FORMAT csv, FORCE_NULL (delay))"),
            Error::InvalidColumnReference(
                "FORCE_NULL column \"delay\" not referenced by COPY".into()
            )
        );
        assert_eq!(
            err("COPY (SELECT 1) TO STDOUT (HEADER match)"),
            Error::FeatureNotSupported("cannot use \"match\" with HEADER in COPY TO".into())
        );
        assert!(matches!(
            err("COPY flights FROM '/etc/passwd'"),
            Error::FeatureNotSupported(_)
        ));
        // LIVE, alone or beside other options, with or without a boolean.
        for (sql, live, format) in [
            (
                "COPY flights FROM STDIN WITH (LIVE)",
                true,
                CopyFormat::Text,
            ),
            (
                "COPY flights FROM STDIN (FORMAT csv, LIVE)",
                true,
                CopyFormat::Csv,
            ),
            (
                "COPY flights FROM STDIN (LIVE true, FORMAT csv)",
                true,
                CopyFormat::Csv,
            ),
            (
                "COPY flights FROM STDIN (FORMAT csv, LIVE off, HEADER)",
                false,
                CopyFormat::Csv,
            ),
            (
                "COPY flights FROM STDIN (FORMAT csv, LIVE '1')",
                true,
                CopyFormat::Csv,
            ),
            (
                "COPY flights FROM STDIN (FORMAT csv)",
                false,
                CopyFormat::Csv,
            ),
        ] {
            let Plan::CopyFrom(c) = plan(sql).unwrap() else {
                panic!("{sql}")
            };
            assert_eq!((c.options.live, c.options.format), (live, format), "{sql}");
        }
        assert!(matches!(
            err("COPY flights FROM STDIN (FORMAT csv, LIVE maybe)"),
            Error::Syntax(_)
        ));
        assert!(matches!(
            err("COPY (SELECT count(*) FROM flights [RANGE BY '1 minute']) TO STDOUT (LIVE)"),
            Error::Syntax(_)
        ));
        let Plan::CopyTo { query, options } = plan("COPY (SELECT count(*) FROM flights [RANGE BY '1 minute']) TO STDOUT WITH (FORMAT csv, HEADER)").unwrap() else { panic!() };
        assert_eq!(query.windows.len(), 1);
        assert!(options.header && options.format == CopyFormat::Csv);
        let ps = parse_all("COPY flights FROM STDIN; SELECT 1").unwrap();
        assert!(matches!(
            bind(&ps[1], &Schema, &[]).unwrap(),
            Plan::Query(_)
        ));
    }

    #[test]
    fn declare_explain_advance() {
        let Plan::Declare { cursor, query, .. } =
            plan("DECLARE c CURSOR FOR SELECT count(*) FROM flights [RANGE BY '1 minute']")
                .unwrap()
        else {
            panic!()
        };
        assert_eq!(cursor, "c");
        assert_eq!(query.windows.len(), 1);
        let Plan::Explain { query, options } = plan("EXPLAIN (FORMAT DOT, EVENT_RATE '1 per minute') SELECT sum(delay) FROM flights [RANGE BY '10 minutes'] [RANGE BY '20 minutes']").unwrap() else { panic!() };
        assert_eq!(query.windows.len(), 2);
        assert_eq!(options.format, ExplainFormat::Dot);
        assert!((options.event_rate_per_sec.unwrap() - 1.0 / 60.0).abs() < 1e-12);
        let Plan::Explain { options, .. } = plan("EXPLAIN ANALYZE SELECT 1").unwrap() else {
            panic!()
        };
        assert!(options.analyze);
        assert!(matches!(
            err("EXPLAIN (FORMAT xml) SELECT 1"),
            Error::InvalidParameterValue(_)
        ));
        assert!(matches!(
            err("EXPLAIN (EVENT_RATE 'lots') SELECT 1"),
            Error::InvalidParameterValue(_)
        ));
        assert_eq!(
            plan("SELECT tcq_advance('flights', '2001-01-01 01:00')").unwrap(),
            Plan::Advance {
                stream: Expr::Literal(Value::Text("flights".into())),
                time_expr: Expr::Literal(Value::Timestamp(978_310_800_000_000)),
                param_types: vec![],
                result_type: DataType::Timestamp,
            }
        );
        let Plan::Advance { param_types, .. } = plan("SELECT tcq_advance($1, $2)").unwrap() else {
            panic!()
        };
        assert_eq!(param_types, vec![DataType::Text, DataType::Text]);
        let Plan::SessionCall {
            func,
            column,
            param_types,
            ..
        } = plan("SELECT pg_try_advisory_lock($1, 2) AS got").unwrap()
        else {
            panic!()
        };
        assert_eq!(func, SessionFunc::TryAdvisoryLock);
        assert_eq!(column, Column::new("got", DataType::Bool));
        assert_eq!(param_types, vec![DataType::Int4]);
        assert!(matches!(
            err("SELECT 1 + pg_advisory_lock(1)"),
            Error::FeatureNotSupported(_)
        ));
        assert!(matches!(
            err("SELECT pg_advisory_lock(1, 2, 3)"),
            Error::UndefinedFunction(_)
        ));
        assert_eq!(
            plan("ROLLBACK TO SAVEPOINT a").unwrap(),
            Plan::Savepoint(SavepointOp::RollbackTo("a".into()))
        );
        assert_eq!(
            plan("UNLISTEN *").unwrap(),
            Plan::Unlisten { channel: None }
        );
        assert_eq!(
            plan("NOTIFY Jobs, 'x'").unwrap(),
            Plan::Notify {
                channel: "jobs".into(),
                payload: "x".into()
            }
        );
        assert_eq!(
            err("SELECT tcq_advance('nope', '2001-01-01')"),
            Error::UndefinedTable("nope".into())
        );
    }
}

#[cfg(test)]
mod edge_tests {
    use super::tests::*;
    use super::*;
    use crate::sql::parse::parse_all;

    #[test]
    fn window_after_alias_or_name() {
        assert_eq!(
            query("SELECT count(*) FROM flights [RANGE BY '1 minute'] f")
                .windows
                .len(),
            1
        );
        assert_eq!(
            query("SELECT count(*) FROM flights AS f [RANGE BY '1 minute']")
                .windows
                .len(),
            1
        );
    }

    #[test]
    fn varchar_compares_as_text() {
        let q = query("SELECT * FROM flights WHERE code = 'SFOX'");
        assert_eq!(
            q.filter,
            Some(Expr::Binary {
                op: BinaryOp::Eq,
                left: Box::new(Expr::Column(5)),
                right: Box::new(Expr::Literal(Value::Text("SFOX".into())))
            })
        );
        let Plan::Insert(i) = plan("INSERT INTO flights (code) VALUES ($1)").unwrap() else {
            panic!()
        };
        assert_eq!(
            i.rows[0][0],
            Expr::Cast {
                expr: Box::new(Expr::Param(0)),
                to: DataType::Varchar(Some(3))
            }
        );
        assert_eq!(i.param_types, vec![DataType::Varchar(Some(3))]);
        let p = parse_all("INSERT INTO flights (ts) VALUES ($1)").unwrap();
        let Plan::Insert(i) = bind(&p[0], &Schema, &[Some(DataType::Varchar(None))]).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            i.rows[0][0],
            Expr::Cast {
                expr: Box::new(Expr::Param(0)),
                to: DataType::Timestamp
            }
        );
    }

    #[test]
    fn statements_clients_send_bind() {
        for sql in [
            "SET extra_float_digits = 3",
            "SET application_name = 'PostgreSQL JDBC Driver'",
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SHOW TRANSACTION ISOLATION LEVEL",
            "SELECT version()",
            "SELECT pg_catalog.version()",
            "SELECT current_schema(), current_database(), current_user, session_user",
            "SELECT current_setting('server_version_num')::int",
            "select 1",
            "COPY flights FROM STDIN WITH (FORMAT 'csv')",
            "COPY flights FROM STDIN WITH (FORMAT csv, HEADER true, DELIMITER E'\\t')",
            "COPY flights FROM STDIN CSV",
            "COPY flights FROM STDIN WITH DELIMITER ',' NULL AS ''",
            "COPY (SELECT * FROM flights) TO STDOUT",
            "BEGIN READ ONLY",
            "START TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "COMMIT AND NO CHAIN",
            "SELECT count(*) AS n, wtime(*) AS t FROM flights [RANGE BY '1 minute' SLIDE BY '30 seconds'] WHERE origin IN ('SFO', 'LAX') AND delay IS NOT NULL",
            "SELECT origin, stddev_pop(speed), var_samp(delay), variance(distance) FROM flights [RANGE BY '1 hour'] GROUP BY origin ORDER BY origin NULLS LAST",
            "SELECT * FROM flights LIMIT ALL",
            "SELECT TIMESTAMP '2001-01-01 00:00' + INTERVAL '1 hour'",
            "SELECT now() - INTERVAL '5 minutes' < now()",
            "SELECT '2001-01-01'::timestamp AT TIME ZONE 'UTC' IS NULL",
            "SELECT ts AT TIME ZONE 'UTC', now() AT TIME ZONE 'utc' FROM flights",
            "SELECT ts AT TIME ZONE 'Europe/Paris' FROM flights",
        ] {
            let r = plan(sql);
            assert!(r.is_ok(), "{sql}: {r:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, .. Default::default() })]

        /// No text, however garbled, panics the parser, the binder or the value inputs.
        #[test]
        fn no_input_panics(text in "[ -~]{0,60}", stem in 0usize..8) {
            let stems = [
                "SELECT ", "SELECT count(*) FROM flights [RANGE BY '", "INSERT INTO flights VALUES (",
                "CREATE STREAM s (", "COPY flights FROM STDIN WITH (", "EXPLAIN (", "FETCH ", "SET x = ",
            ];
            let sql = format!("{}{}", stems[stem], text);
            if let Ok(stmts) = crate::sql::parse::parse_all(&sql) {
                for st in &stmts {
                    let _ = bind(st, &Schema, &[]);
                }
            }
            for ty in [DataType::Bool, DataType::Int2, DataType::Int4, DataType::Int8, DataType::Float4, DataType::Float8,
                       DataType::Numeric, DataType::Varchar(Some(3)), DataType::Timestamp, DataType::TimestampTz, DataType::Interval] {
                let _ = parse_value(&text, ty);
            }
        }
    }

    fn expr_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just("0".to_string()),
            Just("1".to_string()),
            Just("-1".to_string()),
            Just("2147483647".to_string()),
            Just("(-2147483648)".to_string()),
            Just("9223372036854775807".to_string()),
            Just("1.5".to_string()),
            Just("1e308".to_string()),
            Just("'abc'".to_string()),
            Just("'2001-01-01'".to_string()),
            Just("'1 hour'".to_string()),
            Just("NULL".to_string()),
            Just("true".to_string()),
            Just("32767::int2".to_string()),
            Just("'NaN'::float8".to_string()),
            Just("'Infinity'::float4".to_string()),
            Just("now()".to_string()),
            Just("TIMESTAMP '294246-01-01'".to_string()),
            Just("INTERVAL '2147483647 days'".to_string()),
            Just("99999999999999999999999999.9::numeric".to_string()),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            let casts = [
                "int2",
                "int4",
                "int8",
                "float4",
                "float8",
                "numeric",
                "text",
                "interval",
                "timestamp",
                "timestamptz",
                "boolean",
                "varchar(2)",
            ];
            let ops = ["+", "-", "*", "/", "%", "||", "=", "<", "AND", "OR"];
            let funcs = [
                "abs",
                "round",
                "floor",
                "ceil",
                "sqrt",
                "lower",
                "length",
                "to_timestamp",
                "coalesce",
                "greatest",
            ];
            prop_oneof![
                (
                    inner.clone(),
                    proptest::sample::select(ops.to_vec()),
                    inner.clone()
                )
                    .prop_map(|(a, o, b)| format!("({a} {o} {b})")),
                (inner.clone(), proptest::sample::select(casts.to_vec()))
                    .prop_map(|(a, c)| format!("({a})::{c}")),
                (proptest::sample::select(funcs.to_vec()), inner.clone())
                    .prop_map(|(f, a)| format!("{f}({a})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("round({a}, {b})")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, c)| format!("substr({a}, {b}, {c})")),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("date_trunc('hour', {a} + {b})")),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("extract(epoch FROM {a} - {b})")),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("CASE WHEN {a} THEN {b} END")),
                (inner.clone(), inner).prop_map(|(a, b)| format!("{a} IN ({b}, 1)")),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2048, .. Default::default() })]

        /// Constant expressions bind and evaluate to a value or a clean error, never a panic.
        #[test]
        fn constant_expressions_never_panic(e in expr_strategy()) {
            let sql = format!("SELECT {e}");
            if let Ok(Plan::Query(q)) = plan(&sql) {
                let ctx = crate::expr::EvalContext::new(&[], &[], None);
                for p in &q.projection {
                    if let Ok(v) = crate::expr::eval(p, &ctx) {
                        let _ = v.to_text();
                    }
                }
            }
        }
    }
}
