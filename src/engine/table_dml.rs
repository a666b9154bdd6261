//! Table statements of a session: CREATE / DROP / TRUNCATE TABLE, INSERT, UPDATE, DELETE.
//!
//! Streams and tables share one namespace (42P07 on a clash, with system views too). A
//! table statement takes effect when it completes: tables, like streams, are not
//! transactional, so ROLLBACK does not undo a table change (README, "Tables").
//!
//! Order with streams: a change to a table first waits until every stream-table join
//! reading it has processed the stream statements accepted before the change. The slide
//! events those statements cause then read the table as it was, and every later event
//! reads it changed: a table change sits between stream statements exactly where the
//! server accepted it.
//! Expressions (VALUES, SET, WHERE, DEFAULT) are evaluated with the session's settings.
//!
//! The statements run on a [`TableDml`]: the engine and what the session tells of itself
//! ([`SessionInfo`]), nothing else of the session.

use std::sync::Arc;

use super::{Engine, Notice, Outcome};
use crate::error::{Error, Result};
use crate::expr::{eval, EvalContext, SessionInfo};
use crate::sql::{self, Expr, OnConflict};
use crate::table::{Conflict, KeyDef, Table};
use crate::types::Value;

/// The DEFAULT of each of the `ncols` columns of CREATE TABLE statement `ddl`, as SQL
/// text (`None` for a column without one, and for every column of a text that does not
/// parse, which the binder has already accepted).
fn default_sql(ddl: &str, ncols: usize) -> Vec<Option<String>> {
    use sqlparser::ast::{ColumnOption, Statement};
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let parsed = sqlparser::parser::Parser::parse_sql(&dialect, ddl);
    let Some(Statement::CreateTable(ct)) = parsed.ok().and_then(|mut v| v.pop()) else {
        return vec![None; ncols];
    };
    let mut out: Vec<Option<String>> = ct
        .columns
        .iter()
        .map(|c| {
            c.options.iter().find_map(|o| match &o.option {
                ColumnOption::Default(e) => Some(e.to_string()),
                _ => None,
            })
        })
        .collect();
    out.resize(ncols, None);
    out
}

/// A stored table made by `c` (whose text is `ddl`), with a log on the engine's data
/// directory when it has one: a new, empty log when `create`, else the rows the log holds
/// (start-up). The log is registered in the catalog's `table_logs`.
pub(super) fn new_table(
    engine: &Engine,
    c: sql::CreateTable,
    ddl: &str,
    create: bool,
) -> Result<Arc<Table>> {
    let mut keys = Vec::new();
    if let Some(columns) = c.primary_key {
        keys.push(KeyDef {
            name: format!("{}_pkey", c.name),
            columns,
            primary: true,
        });
    }
    for columns in c.unique {
        let names: Vec<&str> = columns
            .iter()
            .map(|&i| c.columns[i].name.as_str())
            .collect();
        keys.push(KeyDef {
            name: format!("{}_{}_key", c.name, names.join("_")),
            columns,
            primary: false,
        });
    }
    let oid = engine
        .catalog
        .next_oids(crate::table::oids_taken(keys.len()));
    let ncols = c.columns.len();
    let mut table = Table::new(
        c.name.clone(),
        oid,
        c.columns,
        c.not_null,
        c.defaults,
        keys,
        engine.limits().table_rows_max,
    );
    table.default_sql = default_sql(ddl, ncols);
    let Some(data) = &engine.data else {
        return Ok(Arc::new(table));
    };
    let (log, rows) = super::table_log::TableLog::open(
        &data.config.dir,
        &c.name,
        ddl.to_string(),
        ncols,
        data.config.sync,
        create,
    )?;
    let log = Arc::new(log);
    let table = table.with_journal(log.clone(), rows).map_err(|e| {
        Error::DataCorrupted(format!(
            "the log of table \"{}\" does not fit its keys: {e}",
            c.name
        ))
    })?;
    engine.catalog.table_logs().insert(oid, log);
    Ok(Arc::new(table))
}

/// Table statements of one session: the engine, and the session as expressions see it
/// (its user, settings and time zone).
pub(crate) struct TableDml<'a> {
    /// The engine whose catalog holds the tables.
    pub(crate) engine: &'a Engine,
    /// The session running the statement.
    pub(crate) session: &'a (dyn SessionInfo + Sync),
}

impl TableDml<'_> {
    pub(super) fn create_table(&self, c: sql::CreateTable, text: &str) -> Result<Outcome> {
        let catalog = &self.engine.catalog;
        let streams = catalog.streams_read();
        let mut tables = catalog.tables_write();
        if streams.contains_key(&c.name)
            || tables.contains_key(&c.name)
            || super::views::system_view_columns(&c.name).is_some()
        {
            if c.if_not_exists {
                return Ok(Outcome::Rows {
                    columns: vec![],
                    rows: vec![],
                    tag: "CREATE TABLE".into(),
                    notices: vec![Notice::relation_exists(&c.name)],
                });
            }
            return Err(Error::DuplicateTable(c.name));
        }
        let name = c.name.clone();
        let table = new_table(self.engine, c, text, true)?;
        tables.insert(name.clone(), table.clone());
        self.engine
            .catalog
            .roles()
            .set_owner(&name, self.session.user());
        // The table exists once the catalog on disk says so; if that write fails, it does
        // not exist at all.
        if let Err(e) = super::persist::save_catalog(self.engine, &streams) {
            tables.remove(&name);
            self.engine.catalog.roles().remove_relation(&name);
            if let Some(log) = catalog.table_logs().remove(&table.oid) {
                log.remove();
            }
            return Err(e);
        }
        Ok(Outcome::Command("CREATE TABLE".into()))
    }

    pub(super) async fn drop_table(&self, names: Vec<String>, if_exists: bool) -> Result<Outcome> {
        for n in &names {
            self.settle_readers(n).await;
        }
        let catalog = &self.engine.catalog;
        let streams = catalog.streams_read();
        let mut tables = catalog.tables_write();
        for n in &names {
            if !tables.contains_key(n) && !if_exists {
                return Err(Error::UndefinedRelationOfKind {
                    kind: "table",
                    name: n.clone(),
                });
            }
        }
        let mut notices = Vec::new();
        let mut logs = Vec::new();
        for n in names {
            match tables.remove(&n) {
                Some(t) => {
                    self.engine.catalog.roles().remove_relation(&n);
                    logs.extend(catalog.table_logs().remove(&t.oid))
                }
                None => notices.push(format!("table \"{n}\" does not exist, skipping").into()),
            }
        }
        if !logs.is_empty() {
            super::persist::save_catalog(self.engine, &streams)?;
            for log in logs {
                log.remove();
            }
        }
        Ok(Outcome::Rows {
            columns: vec![],
            rows: vec![],
            tag: "DROP TABLE".into(),
            notices,
        })
    }

    pub(super) async fn truncate(&self, names: Vec<String>) -> Result<Outcome> {
        let tables: Vec<Arc<Table>> = names
            .iter()
            .map(|n| self.engine.catalog.table(n))
            .collect::<Result<_>>()?;
        for n in &names {
            self.settle_readers(n).await;
        }
        for t in &tables {
            t.truncate()?;
        }
        for t in &tables {
            self.engine.catalog.table_durable(t.oid).await?;
        }
        Ok(Outcome::Command("TRUNCATE TABLE".into()))
    }

    /// INSERT into a table: every row is evaluated, then inserted at once (all or none).
    /// `selected` holds the rows of INSERT ... SELECT, each filling the plan's one row of
    /// expressions over it.
    pub(super) async fn insert_table(
        &self,
        ins: sql::Insert,
        params: &[Value],
        selected: Option<Vec<Vec<Value>>>,
    ) -> Result<Outcome> {
        let table = self.engine.catalog.table(&ins.stream)?;
        let ncols = table.columns.len();
        let no_input: [Vec<Value>; 1] = [Vec::new()];
        let (templates, inputs): (&[Vec<Expr>], &[Vec<Value>]) = match &selected {
            Some(src) => (&ins.rows[..1], src),
            None => (&ins.rows, &no_input),
        };
        let mut rows = Vec::with_capacity(templates.len() * inputs.len());
        for input in inputs {
            for exprs in templates {
                let mut row = vec![Value::Null; ncols];
                for (e, &c) in exprs.iter().zip(&ins.target_columns) {
                    row[c] = self.eval_over(e, input, params)?;
                }
                rows.push(row);
            }
        }
        self.settle_readers(&table.name).await;
        let keep = ins.returning.is_some();
        let (n, affected) = match &ins.on_conflict {
            OnConflict::Error => table.insert_with(rows, Conflict::Error, keep)?,
            OnConflict::DoNothing { key_columns } => {
                let arbiter = match key_columns {
                    None => None,
                    Some(cols) => Some(arbiter(&table, cols)?),
                };
                table.insert_with(rows, Conflict::Skip(arbiter), keep)?
            }
            OnConflict::DoUpdate {
                key_columns,
                assignments,
                filter,
            } => {
                let key = arbiter(&table, key_columns)?;
                let mut update = |held: &[Value], proposed: &[Value]| {
                    let both: Vec<Value> = held.iter().chain(proposed).cloned().collect();
                    if !self.matches(filter.as_ref(), &both, params)? {
                        return Ok(None);
                    }
                    let mut new = held.to_vec();
                    for (c, e) in assignments {
                        new[*c] = self.eval_over(e, &both, params)?;
                    }
                    Ok(Some(new))
                };
                table.upsert(rows, key, &mut update, keep)?
            }
        };
        self.engine.catalog.table_durable(table.oid).await?;
        self.done(
            format!("INSERT 0 {n}"),
            ins.returning.as_ref(),
            affected,
            params,
        )
    }

    pub(super) async fn update_table(&self, u: sql::Update, params: &[Value]) -> Result<Outcome> {
        let table = self.engine.catalog.table(&u.table)?;
        self.settle_readers(&table.name).await;
        let mut affected = Vec::new();
        let n = table.update(|row| {
            if !self.matches(u.filter.as_ref(), row, params)? {
                return Ok(None);
            }
            let mut new = row.to_vec();
            for (c, e) in &u.assignments {
                new[*c] = self.eval_over(e, row, params)?;
            }
            // RETURNING shows the row as stored: `SET n = DEFAULT` in numeric(5,2) is 1.50.
            table.conform(&mut new)?;
            if u.returning.is_some() {
                affected.push(new.clone());
            }
            Ok(Some(new))
        })?;
        self.engine.catalog.table_durable(table.oid).await?;
        self.done(
            format!("UPDATE {n}"),
            u.returning.as_ref(),
            affected,
            params,
        )
    }

    pub(super) async fn delete_table(&self, d: sql::Delete, params: &[Value]) -> Result<Outcome> {
        let table = self.engine.catalog.table(&d.table)?;
        self.settle_readers(&table.name).await;
        let mut affected = Vec::new();
        let n = table.delete(|row| {
            let doomed = self.matches(d.filter.as_ref(), row, params)?;
            if doomed && d.returning.is_some() {
                affected.push(row.to_vec());
            }
            Ok(doomed)
        })?;
        self.engine.catalog.table_durable(table.oid).await?;
        self.done(
            format!("DELETE {n}"),
            d.returning.as_ref(),
            affected,
            params,
        )
    }

    /// Let the joins reading table `name` catch up with the stream statements accepted
    /// before this one, so the change is ordered after them (see the module docs).
    async fn settle_readers(&self, name: &str) {
        let stall = self.engine.limits().output_stall_timeout;
        self.engine.catalog.barrier_table_readers(name, stall).await;
    }

    /// The statement's outcome: its tag, with the RETURNING rows of `affected` if asked.
    fn done(
        &self,
        tag: String,
        returning: Option<&sql::Returning>,
        affected: Vec<Vec<Value>>,
        params: &[Value],
    ) -> Result<Outcome> {
        let Some(r) = returning else {
            return Ok(Outcome::Command(tag));
        };
        let rows = affected
            .iter()
            .map(|row| {
                r.projection
                    .iter()
                    .map(|e| self.eval_over(e, row, params))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Outcome::Rows {
            columns: r.columns.clone(),
            rows,
            tag,
            notices: vec![],
        })
    }

    fn eval_over(&self, e: &Expr, row: &[Value], params: &[Value]) -> Result<Value> {
        eval(
            e,
            &EvalContext::new(row, params, None).with_session(self.session),
        )
    }

    /// True when `filter` (none: every row) holds for `row`; NULL is false, as in WHERE.
    fn matches(&self, filter: Option<&Expr>, row: &[Value], params: &[Value]) -> Result<bool> {
        match filter {
            None => Ok(true),
            Some(f) => Ok(matches!(self.eval_over(f, row, params)?, Value::Bool(true))),
        }
    }
}

/// The index among `table`'s keys of the one on `columns` (an ON CONFLICT arbiter, bound
/// against the catalog). Errors: 42P10 when the table has no such key (any more).
fn arbiter(table: &crate::table::Table, columns: &[usize]) -> Result<usize> {
    table
        .keys
        .iter()
        .position(|k| k.columns == columns)
        .ok_or_else(|| {
            Error::InvalidColumnReference(
                "there is no unique or exclusion constraint matching the ON CONFLICT specification"
                    .into(),
            )
        })
}
