//! Stream-table joins: windowed streams joined to stored tables, each table read as it is
//! at every slide event.
//!
//! A query whose FROM joins one or more windowed streams to stored tables runs in two
//! stages. The streams are joined by a [`super::JoinExec`] exactly as a join of streams
//! alone (global current time, birth and death, late tuples, SLACK), with the predicates
//! that read only the streams pushed down into it; it keeps the live join tuples of the
//! streams. At each slide event, the [`TableStage`] takes a snapshot of every table, joins
//! each live tuple to them in the order written (inner or LEFT), checks the remaining
//! predicates, and aggregates, projects and sorts the event's rows over the result.
//!
//! Design decision: the table is read at the slide event, not when a stream tuple arrives.
//! A row inserted, updated or deleted before an event is seen by that event's rows for
//! every live tuple, old ones included, so the answer at each event is the join of the
//! current windows with the table as it is then; this is what recomputing the query at that
//! instant gives. The price is that the stage works per event over the live tuples
//! (aggregates are not folded on arrival as in a join of streams), which the window bounds.
//!
//! Look-ups: an equality between a table's column and an expression over the relations
//! before it is a hash look-up. When the equated columns cover a PRIMARY KEY or UNIQUE key,
//! the table's own index answers it; otherwise a hash table on those columns is built once
//! per event; a table with no such equality is scanned for each live tuple.

use std::collections::HashMap;
use std::sync::Arc;

use super::group::{GroupDict, GroupTable, KeyHasher};
use super::join::{aggregate_rows, conjuncts, map_columns, output_row, sort_rows, truthy, walk};
use crate::agg::AggSpec;
use crate::error::{Error, Result};
use crate::expr::{eval, EvalContext, WindowMetaValues};
use crate::sql::{BinaryOp, Expr, JoinInput, Query, Source};
use crate::table::{Key, TableSnapshot};
use crate::types::Value;

/// Where a stream-table join reads its tables: a snapshot of each, taken at every slide
/// event. Implemented by the engine over its catalog.
pub(crate) trait TableReader: Send + Sync {
    /// Table `name` as it is now; `None` once it no longer exists.
    fn snapshot(&self, name: &str) -> Option<TableSnapshot>;
}

/// How one table is joined.
#[derive(Debug)]
struct TableStep {
    name: String,
    /// The OID of the table the query was planned on.
    oid: u32,
    alias: String,
    offset: usize,
    ncols: usize,
    left: bool,
    /// The ON predicates of a LEFT JOIN, over the full row.
    on: Vec<Expr>,
    /// Equalities `table column = expression over the relations before it`: the column's
    /// index in the table's row, and the expression over the full row.
    equi: Vec<(usize, Expr)>,
    /// The table's PRIMARY KEY / UNIQUE key that `equi` covers: its index in the table's
    /// keys and, per key column, the probe expression over the full row.
    key: Option<(usize, Vec<Expr>)>,
}

/// The table stage of a stream-table join (see the module docs).
pub(crate) struct TableStage {
    query: Query,
    /// Predicates over the full row not pushed down to the streams' join.
    residual: Vec<Expr>,
    /// Per stream input: its offset in the full row, in the streams' row, its width.
    streams_at: Vec<(usize, usize, usize)>,
    width: usize,
    tables: Vec<TableStep>,
    reader: Arc<dyn TableReader>,
    params: Vec<Value>,
    clock_us: i64,
    groups_max: usize,
    rows_max: usize,
}

/// Split a stream-table join `query` into the join of its streams (a query over the
/// streams' row, to run on a [`super::JoinExec`]) and the [`TableStage`] that joins the
/// tables at each slide event. Errors: 42P01 for a table that no longer exists.
pub(crate) fn split(
    query: Query,
    reader: Arc<dyn TableReader>,
    params: Vec<Value>,
    groups_max: usize,
    rows_max: usize,
) -> Result<(Query, TableStage)> {
    let Source::Join { inputs, tables } = &query.source else {
        return Err(Error::Internal("a stream-table join reads a join".into()));
    };
    let mut streams_at = Vec::with_capacity(inputs.len());
    let mut inner_inputs: Vec<JoinInput> = Vec::with_capacity(inputs.len());
    let mut inner_width = 0;
    for input in inputs {
        streams_at.push((input.offset, inner_width, input.columns.len()));
        inner_inputs.push(JoinInput {
            offset: inner_width,
            ..input.clone()
        });
        inner_width += input.columns.len();
    }
    let width = inputs
        .iter()
        .map(|i| i.offset + i.columns.len())
        .chain(tables.iter().map(|t| t.offset + t.columns.len()))
        .max()
        .unwrap_or(0);
    let (pushed, residual) = split_filter(&query, &streams_at);
    let mut steps = Vec::with_capacity(tables.len());
    for j in 0..tables.len() {
        steps.push(table_step(tables, j, &streams_at, &residual, &*reader)?);
    }
    let inner = streams_query(&query, inner_inputs, inner_width, pushed);
    let stage = TableStage {
        query,
        residual,
        streams_at,
        width,
        tables: steps,
        reader,
        params,
        clock_us: crate::time::now_us(),
        groups_max,
        rows_max,
    };
    Ok((inner, stage))
}

/// Column `c` of the full row in the streams' row, if it is a stream's column.
/// `streams_at` as in [`TableStage`].
fn to_inner(streams_at: &[(usize, usize, usize)], c: usize) -> Option<usize> {
    streams_at
        .iter()
        .find(|(full, _, n)| c >= *full && c < full + n)
        .map(|(full, inner, _)| c - full + inner)
}

/// WHERE's conjuncts split: those over the streams alone (rewritten over the streams'
/// row), which go down to the streams' join, and the rest, which stay in the stage.
fn split_filter(query: &Query, streams_at: &[(usize, usize, usize)]) -> (Vec<Expr>, Vec<Expr>) {
    let mut all = Vec::new();
    if let Some(f) = &query.filter {
        conjuncts(f, &mut all);
    }
    let (mut pushed, mut residual) = (Vec::new(), Vec::new());
    for c in all {
        let mut streams_only = true;
        walk(&c, &mut |x| match x {
            Expr::Column(i) => streams_only &= to_inner(streams_at, *i).is_some(),
            Expr::WindowMeta(_) => streams_only = false,
            _ => {}
        });
        if streams_only {
            pushed.push(map_columns(&c, &|i| {
                to_inner(streams_at, i).expect("a stream column")
            }));
        } else {
            residual.push(c);
        }
    }
    (pushed, residual)
}

/// How table `tables[j]` is joined: its equalities with the relations before it (a LEFT
/// JOIN's from its ON, an inner join's from the stage's `residual`) and the key they
/// cover. Errors: 42P01 for a table that no longer exists, or a LEFT JOIN's ON reading a
/// later relation.
fn table_step(
    tables: &[crate::sql::JoinTable],
    j: usize,
    streams_at: &[(usize, usize, usize)],
    residual: &[Expr],
    reader: &dyn TableReader,
) -> Result<TableStep> {
    let t = &tables[j];
    let snapshot = reader
        .snapshot(&t.table)
        .ok_or_else(|| Error::UndefinedTable(t.table.clone()))?;
    // Columns bound before this table: the streams' and the earlier tables'.
    let bound = |c: usize| {
        to_inner(streams_at, c).is_some()
            || tables[..j]
                .iter()
                .any(|p| c >= p.offset && c < p.offset + p.columns.len())
    };
    check_left_on(t, tables, &bound)?;
    let preds = if t.left { &t.on[..] } else { residual };
    let mut equi = Vec::new();
    for p in preds {
        let mut ps = Vec::new();
        conjuncts(p, &mut ps);
        for p in ps {
            if let Some(e) = equality_on(&p, t.offset, t.columns.len(), &bound) {
                equi.push(e);
            }
        }
    }
    let key = snapshot.keys.iter().enumerate().find_map(|(k, def)| {
        let probes: Option<Vec<Expr>> = def
            .columns
            .iter()
            .map(|c| {
                equi.iter()
                    .find(|(col, _)| col == c)
                    .map(|(_, e)| e.clone())
            })
            .collect();
        probes.map(|p| (k, p))
    });
    Ok(TableStep {
        name: t.table.clone(),
        oid: snapshot.oid,
        alias: t.alias.clone(),
        offset: t.offset,
        ncols: t.columns.len(),
        left: t.left,
        on: t.on.clone(),
        equi,
        key,
    })
}

/// A LEFT JOIN's ON may read only the relations before it and the table itself, as in
/// PostgreSQL (later ones are not bound when it is checked): 42P01 otherwise.
fn check_left_on(
    t: &crate::sql::JoinTable,
    tables: &[crate::sql::JoinTable],
    bound: &dyn Fn(usize) -> bool,
) -> Result<()> {
    for p in &t.on {
        let mut later = None;
        walk(p, &mut |x| {
            if let Expr::Column(c) = x {
                let own = *c >= t.offset && *c < t.offset + t.columns.len();
                if !own && !bound(*c) {
                    later = tables
                        .iter()
                        .find(|o| *c >= o.offset && *c < o.offset + o.columns.len());
                }
            }
        });
        if let Some(o) = later {
            return Err(Error::UndefinedTable(format!(
                "invalid reference to FROM-clause entry for table \"{}\": the ON of a LEFT JOIN reads only the relations before it",
                o.alias
            )));
        }
    }
    Ok(())
}

/// The streams' part of a stream-table join: their join alone, over the streams' row,
/// with the `pushed` predicates, projecting the whole row.
fn streams_query(
    query: &Query,
    inner_inputs: Vec<JoinInput>,
    inner_width: usize,
    pushed: Vec<Expr>,
) -> Query {
    let filter = pushed.into_iter().reduce(|l, r| Expr::Binary {
        op: BinaryOp::And,
        left: Box::new(l),
        right: Box::new(r),
    });
    let columns = inner_inputs
        .iter()
        .flat_map(|i| i.columns.clone())
        .collect();
    Query {
        source: Source::Join {
            inputs: inner_inputs,
            tables: Vec::new(),
        },
        windows: Vec::new(),
        filter,
        aggregate: None,
        having: None,
        projection: (0..inner_width).map(Expr::Column).collect(),
        columns,
        order_by: Vec::new(),
        limit: query.limit,
        offset: None,
        limit_param: None,
        offset_param: None,
        param_types: query.param_types.clone(),
        text: query.text.clone(),
    }
}

/// `table.col = e` (either side) where `col` is one of the table's columns and `e` reads
/// only bound columns: `(col's index in the table's row, e)`.
fn equality_on(
    p: &Expr,
    offset: usize,
    ncols: usize,
    bound: &dyn Fn(usize) -> bool,
) -> Option<(usize, Expr)> {
    let Expr::Binary {
        op: BinaryOp::Eq,
        left,
        right,
    } = p
    else {
        return None;
    };
    let reads_bound_only = |e: &Expr| {
        let mut ok = true;
        walk(e, &mut |x| match x {
            Expr::Column(c) => ok &= bound(*c),
            Expr::WindowMeta(_) => ok = false,
            _ => {}
        });
        ok
    };
    for (a, b) in [(left, right), (right, left)] {
        if let Expr::Column(c) = **a {
            if c >= offset && c < offset + ncols && reads_bound_only(b) {
                return Some((c - offset, (**b).clone()));
            }
        }
    }
    None
}

/// Where the rows a join produces at one event go: the aggregate's groups, or the
/// projected rows.
struct Sink {
    agg: Option<(Vec<AggSpec>, GroupDict, GroupTable, KeyHasher)>,
    rows: Vec<(Vec<Value>, Vec<Value>)>,
    keybuf: Vec<Value>,
    argbuf: Vec<Value>,
}

impl TableStage {
    /// True when an event with no live tuple still gives a row (an aggregate without
    /// GROUP BY).
    pub(crate) fn emits_empty_events(&self) -> bool {
        self.query
            .aggregate
            .as_ref()
            .is_some_and(|a| a.group_by.is_empty())
    }

    /// Number of tables joined.
    pub(crate) fn table_count(&self) -> usize {
        self.tables.len()
    }

    /// The full query (its projection, HAVING and ORDER BY read window metadata).
    pub(crate) fn query(&self) -> &Query {
        &self.query
    }

    /// The rows of one slide event, sorted by ORDER BY: `live` are the live join tuples of
    /// the streams (each the streams' row), `meta` the event's window values. Errors: 42P01
    /// when a table has been dropped, 54000 past `live_tuples_max` rows or `groups_max`
    /// groups, and expression errors.
    pub(crate) fn event(
        &self,
        meta: WindowMetaValues,
        live: &[&[Value]],
    ) -> Result<Vec<(Vec<Value>, Vec<Value>)>> {
        let snaps: Vec<TableSnapshot> = self
            .tables
            .iter()
            .map(|t| {
                // A table dropped (and perhaps created again, with other columns) since the
                // query was planned ends the query.
                self.reader
                    .snapshot(&t.name)
                    .filter(|s| s.oid == t.oid)
                    .ok_or_else(|| {
                        Error::UndefinedTable(format!("{} (dropped while a join read it)", t.name))
                    })
            })
            .collect::<Result<_>>()?;
        let hashes: Vec<Option<HashMap<Key, Vec<usize>>>> = self
            .tables
            .iter()
            .zip(&snaps)
            .map(|(t, s)| (t.key.is_none() && !t.equi.is_empty()).then(|| per_event_hash(t, s)))
            .collect();
        let mut sink = Sink {
            agg: self.query.aggregate.as_ref().map(|a| {
                let specs = a
                    .calls
                    .iter()
                    .map(|c| AggSpec::new(c.func, c.arg_type, c.distinct))
                    .collect();
                (
                    specs,
                    GroupDict::new(a.group_by.len()),
                    GroupTable::new(),
                    KeyHasher::new(),
                )
            }),
            rows: Vec::new(),
            keybuf: Vec::new(),
            argbuf: Vec::new(),
        };
        let mut full = vec![Value::Null; self.width];
        for row in live {
            for &(at, inner, n) in &self.streams_at {
                full[at..at + n].clone_from_slice(&row[inner..inner + n]);
            }
            self.extend(0, &mut full, &snaps, &hashes, meta, &mut sink)?;
        }
        self.finish(sink, meta)
    }

    /// Join `full` (bound up to table `j`) to tables `j..`, then check the residual
    /// predicates and hand each complete row to the sink.
    fn extend(
        &self,
        j: usize,
        full: &mut Vec<Value>,
        snaps: &[TableSnapshot],
        hashes: &[Option<HashMap<Key, Vec<usize>>>],
        meta: WindowMetaValues,
        sink: &mut Sink,
    ) -> Result<()> {
        let Some(step) = self.tables.get(j) else {
            for p in &self.residual {
                if !truthy(&eval(p, &self.ctx(full, None))?) {
                    return Ok(());
                }
            }
            return self.take(full, meta, sink);
        };
        let snap = &snaps[j];
        let mut matched = false;
        let mut try_row = |this: &Self, full: &mut Vec<Value>, trow: &[Value]| -> Result<()> {
            full[step.offset..step.offset + step.ncols].clone_from_slice(trow);
            for p in &step.on {
                if !truthy(&eval(p, &this.ctx(full, None))?) {
                    return Ok(());
                }
            }
            matched = true;
            this.extend(j + 1, full, snaps, hashes, meta, sink)
        };
        if let Some((k, probes)) = &step.key {
            let key = self.eval_all(probes, full)?;
            if let Some(trow) = snap.lookup(*k, &key) {
                try_row(self, full, trow)?;
            }
        } else if let Some(map) = &hashes[j] {
            let probes: Vec<Expr> = step.equi.iter().map(|(_, e)| e.clone()).collect();
            let key = self.eval_all(&probes, full)?;
            if !key.iter().any(Value::is_null) {
                if let Some(hits) = map.get(&Key(key)) {
                    for &i in hits {
                        try_row(self, full, &snap.rows()[i])?;
                    }
                }
            }
        } else {
            for trow in snap.rows() {
                try_row(self, full, trow)?;
            }
        }
        if step.left && !matched {
            full[step.offset..step.offset + step.ncols].fill(Value::Null);
            self.extend(j + 1, full, snaps, hashes, meta, sink)?;
        }
        Ok(())
    }

    /// One complete joined row: fold it into its group, or project it.
    fn take(&self, full: &[Value], meta: WindowMetaValues, sink: &mut Sink) -> Result<()> {
        let Some((specs, dict, table, hasher)) = &mut sink.agg else {
            if sink.rows.len() >= self.rows_max {
                return Err(Error::ProgramLimitExceeded(format!(
                    "a slide event of the join gives more than {} rows (live_tuples_max)",
                    self.rows_max
                )));
            }
            return self.output_row(full, meta, &mut sink.rows);
        };
        let agg = self.query.aggregate.as_ref().expect("an aggregate query");
        let c = self.ctx(full, None);
        sink.keybuf.clear();
        for e in &agg.group_by {
            sink.keybuf.push(eval(e, &c)?);
        }
        sink.argbuf.clear();
        for call in &agg.calls {
            sink.argbuf.push(match &call.arg {
                None => Value::Bool(true),
                Some(e) => eval(e, &c)?,
            });
        }
        let gid = dict.intern(hasher.hash(&sink.keybuf), &sink.keybuf);
        let slot = table.slot(gid, specs, self.groups_max)?;
        table.update(slot, specs, &sink.argbuf)
    }

    /// The event's rows: the aggregate rows (one for no rows without GROUP BY), sorted.
    fn finish(
        &self,
        mut sink: Sink,
        meta: WindowMetaValues,
    ) -> Result<Vec<(Vec<Value>, Vec<Value>)>> {
        if let Some((specs, dict, table, _)) = &sink.agg {
            let mut rows = Vec::new();
            let table = (!table.is_empty()).then_some(table);
            aggregate_rows(
                specs,
                dict,
                table,
                self.emits_empty_events(),
                &mut |agg_row| self.output_row(agg_row, meta, &mut rows),
            )?;
            sink.rows = rows;
        }
        sort_rows(&self.query, &mut sink.rows);
        Ok(sink.rows)
    }

    /// HAVING, projection and sort keys over one aggregate (or joined) row.
    fn output_row(
        &self,
        row: &[Value],
        meta: WindowMetaValues,
        rows: &mut Vec<(Vec<Value>, Vec<Value>)>,
    ) -> Result<()> {
        output_row(&self.query, &self.ctx(row, Some(meta)), rows)
    }

    fn eval_all(&self, exprs: &[Expr], row: &[Value]) -> Result<Vec<Value>> {
        self.eval_all_in(exprs, &self.ctx(row, None))
    }

    fn eval_all_in(&self, exprs: &[Expr], c: &EvalContext<'_>) -> Result<Vec<Value>> {
        exprs.iter().map(|e| eval(e, c)).collect()
    }

    fn ctx<'a>(&'a self, row: &'a [Value], window: Option<WindowMetaValues>) -> EvalContext<'a> {
        EvalContext {
            row,
            params: &self.params,
            window,
            now_us: self.clock_us,
            session: None,
            lazy: None,
        }
    }

    /// EXPLAIN lines: how each table is joined. `columns` names the full row's columns.
    pub(crate) fn explain(&self, columns: &[String]) -> Vec<String> {
        let show = |e: &Expr| match e {
            Expr::Column(c) => columns.get(*c).cloned().unwrap_or_else(|| "?".into()),
            _ => "<expression>".to_string(),
        };
        let mut lines = Vec::new();
        for t in &self.tables {
            let name = if t.alias == t.name {
                t.name.clone()
            } else {
                format!("{} AS {}", t.name, t.alias)
            };
            let how = match (&t.key, t.equi.is_empty()) {
                (Some((k, probes)), _) => {
                    let snap = self.reader.snapshot(&t.name);
                    let key_name = snap
                        .as_ref()
                        .map_or_else(|| format!("key {k}"), |s| s.keys[*k].name.clone());
                    let shown: Vec<String> = probes.iter().map(show).collect();
                    format!("look-up by {key_name} on ({})", shown.join(", "))
                }
                (None, false) => {
                    let shown: Vec<String> = t
                        .equi
                        .iter()
                        .map(|(c, e)| format!("{} = {}", columns[t.offset + c], show(e)))
                        .collect();
                    format!("hash join built per slide event on {}", shown.join(" AND "))
                }
                (None, true) => "scanned for each live tuple (no equality to hash on)".into(),
            };
            lines.push(format!(
                "  Table {name}{}: read as it is at each slide event; {how}",
                if t.left { " (LEFT JOIN)" } else { "" }
            ));
        }
        lines
    }
}

/// A hash table of `snap`'s rows on `step`'s equated columns (rows with a NULL there are
/// left out: `=` is never true for them).
fn per_event_hash(step: &TableStep, snap: &TableSnapshot) -> HashMap<Key, Vec<usize>> {
    let mut map: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, row) in snap.rows().iter().enumerate() {
        let key: Vec<Value> = step.equi.iter().map(|(c, _)| row[*c].clone()).collect();
        if !key.iter().any(Value::is_null) {
            map.entry(Key(key)).or_default().push(i);
        }
    }
    map
}
