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

use super::functions;
use super::parse::{normalize_word, CopyItem, CopyValue, ParsedStmt, RawExplain, RawWindow, Stmt};
use super::plan::*;
use crate::error::{Error, Result};
use crate::types::{parse_value, Column, DataType, Value};

mod call;
mod copy;
mod ddl;
mod dml;
mod expr;
mod forms;
mod from;
mod func_math;
mod func_types;
mod leaves;
mod overlaps;
mod predicates;
pub(crate) use predicates::like_quantifier;
mod route;
mod row_arrays;
mod scope;
mod select;
mod sinks;
#[cfg(test)]
mod tests;
mod window;

use call::*;
use expr::*;
use scope::*;
use window::*;

pub(crate) use crate::sql::types::*;
pub(crate) use expr::{
    bit_operator, bpchar_as_text, expr_uses_column, like_of_operator, number_literal,
    regex_operator,
};
pub(crate) use leaves::{bind_walked, ExprScope};
pub(crate) use scope::closest;

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
    /// The plan builder's leaves, asked for each node before the binder takes it apart
    /// (see [`ExprScope`]); `None` for the streaming binder.
    leaves: Option<&'a mut dyn ExprScope>,
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
pub(crate) const EXPRESSION_DEPTH_MAX: usize = 1000;

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
        leaves: None,
    };
    let plan = b.statement(p)?;
    if !p.windows.is_empty()
        && !matches!(
            plan,
            Plan::Query(_)
                | Plan::CopyTo { .. }
                | Plan::Declare { .. }
                | Plan::Explain { .. }
                | Plan::CreateDerived(_)
                | Plan::CreateSink(_)
        )
    {
        return Err(Error::Syntax(
            "a window clause may only follow a stream in the FROM clause of a SELECT".into(),
        ));
    }
    Ok(plan)
}

/// A stream name given as a string (`'flights'`, `'"Mixed"'`), normalised as an identifier.
pub(crate) fn stream_name_of(s: &str) -> String {
    if s.starts_with('"') && s.ends_with('"') && s.len() >= 2 {
        s[1..s.len() - 1].to_string()
    } else {
        s.to_lowercase()
    }
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

/// `s`, unless it holds a NUL character, which PostgreSQL text cannot (22021).
pub(crate) fn no_nul(s: &str) -> Result<&str> {
    if s.contains('\0') {
        return Err(Error::CharacterNotInRepertoire(
            "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
        ));
    }
    Ok(s)
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
            Stmt::DropStream {
                names,
                if_exists,
                cascade,
            } => Ok(Plan::DropStream {
                names: names
                    .iter()
                    .map(|n| self.relation(n))
                    .collect::<Result<_>>()?,
                if_exists: *if_exists,
                cascade: *cascade,
            }),
            Stmt::CreateDerived {
                name,
                if_not_exists,
                archived,
                options,
                query,
            } => self.create_derived(name, *if_not_exists, *archived, options, query),
            Stmt::CreateSink {
                name,
                if_not_exists,
                query,
                options,
            } => self.create_sink(name, *if_not_exists, query, options),
            Stmt::DropSink { names, if_exists } => Ok(Plan::DropSink {
                names: names.clone(),
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
                local: false,
            }),
            Stmt::SetLocal { name, value } => Ok(Plan::Set {
                name: name.clone(),
                value: value.clone(),
                local: true,
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
            Stmt::ExplainQueries { options, ids } => select::explain_queries(options, ids),
            Stmt::Ast(s) => self.ast_statement(s, &p.text),
        }
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

    fn finish_params(&self) -> Vec<DataType> {
        self.params
            .iter()
            .map(|p| p.unwrap_or(DataType::Text))
            .collect()
    }
}

/// The catalog of a binder that only types expressions: it names no relation.
struct NoRelations;

impl SchemaProvider for NoRelations {
    fn stream(&self, _: &str) -> Option<(Vec<Column>, Option<usize>)> {
        None
    }
    fn system_view(&self, _: &str) -> Option<Vec<Column>> {
        None
    }
}

/// An operand the relational plan builder has bound: its expression over the template's
/// argument row (`Expr::Column(i)`, or a literal or parameter as written) and its type
/// (`None`: PostgreSQL's unknown).
pub(crate) type Operand = (Expr, Option<DataType>);

/// Run `f` on a binder that types expressions only, with the statement's parameter types
/// `params` (updated by what `f` infers).
fn typing<R>(
    params: &mut Vec<Option<DataType>>,
    f: impl FnOnce(&mut Binder) -> Result<R>,
) -> Result<R> {
    let mut b = Binder::for_typing(std::mem::take(params));
    let r = f(&mut b);
    *params = b.params;
    r
}

impl Binder<'_> {
    /// A binder that types expressions only (no relations), with parameter types `params`.
    fn for_typing(params: Vec<Option<DataType>>) -> Self {
        Binder {
            schema: &NoRelations,
            source: "",
            params,
            windows: &[],
            agg: None,
            agg_mode: false,
            in_agg_arg: false,
            clause: "",
            depth: 0,
            join_conds: Vec::new(),
            left_conds: Vec::new(),
            copy_items: Vec::new(),
            leaves: None,
        }
    }
}

fn bounds(args: Vec<Operand>) -> Vec<Bound> {
    args.into_iter()
        .map(|(expr, ty)| Bound { expr, ty })
        .collect()
}

/// Type a scalar function call with the expression binder's rules (argument coercions,
/// result type, parameter inference), for the relational plan builder: one set of rules
/// for both plans. Errors as the binder gives them (42883 for no such overload).
pub(crate) fn type_scalar(
    func: ScalarFunc,
    args: Vec<Operand>,
    params: &mut Vec<Option<DataType>>,
) -> Result<(Expr, DataType)> {
    typing(params, |b| {
        let out = b.scalar(func, bounds(args))?;
        Ok((out.expr, out.ty.unwrap_or(DataType::Text)))
    })
}

/// Type an arithmetic or `||` operator with the expression binder's rules, for the
/// relational plan builder (see [`type_scalar`]).
pub(crate) fn type_binary(
    op: BinaryOp,
    left: Operand,
    right: Operand,
    params: &mut Vec<Option<DataType>>,
) -> Result<(Expr, DataType)> {
    typing(params, |b| {
        let mut ops = bounds(vec![left, right]).into_iter();
        let (l, r) = (ops.next().expect("two"), ops.next().expect("two"));
        let out = b.binary(op, l, r)?;
        Ok((out.expr, out.ty.unwrap_or(DataType::Text)))
    })
}
