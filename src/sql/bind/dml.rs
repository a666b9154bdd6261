//! INSERT, UPDATE, DELETE and their RETURNING and ON CONFLICT clauses.

use sqlparser::ast;

use super::*;

/// The DEFAULT of column `c` of a table (`defaults` is `None` for a stream): its
/// expression, else NULL.
/// A table's column defaults, one per column (`None`: NULL); `None` for a stream.
type ColumnDefaults = Option<Vec<Option<Expr>>>;

pub(super) fn column_default(defaults: &ColumnDefaults, c: usize) -> Expr {
    defaults
        .as_ref()
        .and_then(|d| d[c].clone())
        .unwrap_or(Expr::Literal(Value::Null))
}

/// The columns an INSERT names, as indexes into `columns` (all of them, in order, without
/// a list). Errors: 42703 for a column the relation lacks, 42701 for one named twice.
fn insert_target_columns(
    relation: &str,
    columns: &[Column],
    named: &[ast::ObjectName],
) -> Result<Vec<usize>> {
    if named.is_empty() {
        return Ok((0..columns.len()).collect());
    }
    let mut t = Vec::with_capacity(named.len());
    for c in named {
        let name = object_name(c)?;
        let i = columns.iter().position(|x| x.name == name).ok_or_else(|| {
            Error::UndefinedColumn(format!(
                "column \"{name}\" of relation \"{relation}\" does not exist"
            ))
        })?;
        if t.contains(&i) {
            return Err(Error::DuplicateColumn(format!(
                "column \"{name}\" specified more than once"
            )));
        }
        t.push(i);
    }
    Ok(t)
}

/// A table row of `width` columns from the values of `target_columns`; the columns left
/// out take their DEFAULT (NULL without one).
fn full_row(
    row: Vec<Expr>,
    width: usize,
    target_columns: &[usize],
    defaults: &ColumnDefaults,
) -> Vec<Expr> {
    let mut full: Vec<Expr> = (0..width).map(|c| column_default(defaults, c)).collect();
    for (e, &c) in row.into_iter().zip(target_columns) {
        full[c] = e;
    }
    full
}

/// The arbiter key an ON CONFLICT target names (`ON CONFLICT (cols)`), as the table's key
/// definition gives its columns; `None` without a target. A target's `WHERE` (which picks
/// among partial unique indexes in PostgreSQL) is satisfied by any key, tables having no
/// partial ones; `ON CONSTRAINT name` names the key by its constraint name. Errors: 42703
/// for a column the table lacks, 42P10 when no PRIMARY KEY or UNIQUE key has exactly those
/// columns, 42704 for a constraint the table does not have.
fn conflict_key(
    table: &str,
    info: &TableInfo,
    target: Option<&ast::ConflictTarget>,
) -> Result<Option<Vec<usize>>> {
    let columns = match target {
        None => return Ok(None),
        Some(ast::ConflictTarget::Columns { columns, .. }) => columns,
        Some(ast::ConflictTarget::OnConstraint(name)) => {
            let name = object_name(name)?;
            return match info.key_names.iter().position(|k| *k == name) {
                Some(i) => Ok(Some(info.keys[i].clone())),
                None => Err(Error::UndefinedObject(format!(
                    "constraint \"{name}\" for table \"{table}\" does not exist"
                ))),
            };
        }
    };
    let mut sorted = Vec::new();
    for c in columns {
        let n = ident_name(c);
        let i = info
            .columns
            .iter()
            .position(|x| x.name == n)
            .ok_or_else(|| Error::UndefinedColumn(format!("column \"{n}\" does not exist")))?;
        sorted.push(i);
    }
    sorted.sort_unstable();
    sorted.dedup();
    let key = info.keys.iter().find(|k| {
        let mut k = (*k).clone();
        k.sort_unstable();
        k == sorted
    });
    match key {
        Some(k) => Ok(Some(k.clone())),
        None => Err(Error::InvalidColumnReference(
            "there is no unique or exclusion constraint matching the ON CONFLICT specification"
                .into(),
        )),
    }
}

impl Binder<'_> {
    /// `ON CONFLICT (cols) DO UPDATE SET ... [WHERE ...]`: the arbiter key and the
    /// assignments over the held row followed by the proposed one (`EXCLUDED`).
    pub(super) fn on_conflict_update(
        &mut self,
        table: &str,
        info: &TableInfo,
        target: Option<&ast::ConflictTarget>,
        du: &ast::DoUpdate,
    ) -> Result<OnConflict> {
        let Some(key) = conflict_key(table, info, target)? else {
            return Err(Error::Syntax(
                "ON CONFLICT DO UPDATE requires inference specification or constraint name: name the key's columns, ON CONFLICT (col, ...)".into(),
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
            key_columns: key,
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
    pub(super) fn bind_assignments(
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
    pub(super) fn dml_target(&self, factor: &ast::TableFactor) -> Result<(String, Scope)> {
        let ast::TableFactor::Table { name, alias, .. } = factor else {
            return Err(unsupported("UPDATE and DELETE take one table by name"));
        };
        let (table, info) = self.table_info(&self.ast_relation(name)?)?;
        let mut scope = Scope::default();
        scope.rels.push(relation_names(&table, alias.as_ref())?);
        scope.set_single(info.columns);
        Ok((table, scope))
    }

    pub(super) fn update(&mut self, u: &ast::Update) -> Result<Plan> {
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

    pub(super) fn delete(&mut self, d: &ast::Delete) -> Result<Plan> {
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
    pub(super) fn returning(
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

    pub(super) fn dml_filter(
        &mut self,
        e: Option<&ast::Expr>,
        scope: &Scope,
    ) -> Result<Option<Expr>> {
        let Some(e) = e else { return Ok(None) };
        self.clause = "WHERE";
        let b = self.expr(e, scope)?;
        Ok(Some(self.boolean(b, "WHERE")?))
    }

    pub(super) fn insert(&mut self, ins: &ast::Insert) -> Result<Plan> {
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
        let on_conflict = self.insert_on_conflict(&stream, table.as_ref(), ins.on.as_ref())?;
        let target_columns = insert_target_columns(&stream, &columns, &ins.columns)?;
        // Without a column list a table's row may be short: the rest take defaults.
        let short_ok = defaults.is_some() && ins.columns.is_empty();
        let (values, select) = match ins.source.as_deref() {
            // INSERT ... DEFAULT VALUES (sqlparser leaves no source): one row of defaults.
            None if short_ok => (&[][..], None),
            None => {
                return Err(unsupported(
                    "INSERT ... DEFAULT VALUES applies to tables; a stream's tuples need values",
                ))
            }
            Some(source) => match &*source.body {
                ast::SetExpr::Values(values) => (&values.rows[..], None),
                _ if table.is_none() => {
                    return Err(unsupported(
                        "INSERT ... SELECT into a stream is not supported; use INSERT ... VALUES or COPY",
                    ))
                }
                _ => {
                    let (row, q) =
                        self.insert_select(source, &columns, &target_columns, short_ok)?;
                    (&[][..], Some((row, q)))
                }
            },
        };
        let mut rows = Vec::with_capacity(values.len() + 1);
        if let Some((row, _)) = &select {
            rows.push(row.clone());
        }
        if ins.source.is_none() {
            rows.push(Vec::new());
        }
        let target = (&columns[..], &target_columns[..], &defaults);
        for row in values {
            rows.push(self.insert_values_row(&row.content, target, short_ok)?);
        }
        // A table's rows name every column: those left out take their DEFAULT.
        let target_columns = match &defaults {
            None => target_columns,
            Some(_) => {
                for row in &mut rows {
                    *row = full_row(
                        std::mem::take(row),
                        columns.len(),
                        &target_columns,
                        &defaults,
                    );
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
        let mut param_types = self.finish_params();
        let select = select.map(|(_, q)| self.select_param_types(q, &mut param_types));
        Ok(Plan::Insert(Insert {
            stream,
            table: table.is_some(),
            on_conflict,
            returning,
            target_columns,
            rows,
            select,
            param_types,
        }))
    }

    /// INSERT's ON CONFLICT clause: streams have no keys (0A000); a table's target must
    /// name one of its keys (42P10).
    fn insert_on_conflict(
        &mut self,
        stream: &str,
        table: Option<&TableInfo>,
        on: Option<&ast::OnInsert>,
    ) -> Result<OnConflict> {
        let (on, info) = match (on, table) {
            (None, _) => return Ok(OnConflict::Error),
            (Some(_), None) => {
                return Err(unsupported(
                    "INSERT ... ON CONFLICT applies to tables; a stream has no keys",
                ))
            }
            (Some(on), Some(info)) => (on, info),
        };
        match on {
            ast::OnInsert::OnConflict(ast::OnConflict {
                conflict_target,
                action: ast::OnConflictAction::DoNothing,
            }) => Ok(OnConflict::DoNothing {
                key_columns: conflict_key(stream, info, conflict_target.as_ref())?,
            }),
            ast::OnInsert::OnConflict(ast::OnConflict {
                conflict_target,
                action: ast::OnConflictAction::DoUpdate(du),
            }) => self.on_conflict_update(stream, info, conflict_target.as_ref(), du),
            _ => Err(unsupported(
                "only INSERT ... ON CONFLICT DO NOTHING / DO UPDATE is supported",
            )),
        }
    }

    /// One row of INSERT ... VALUES bound to its target columns' types: `DEFAULT` takes the
    /// column's default; more values than columns is 42601, fewer too unless `short_ok`.
    fn insert_values_row(
        &mut self,
        row: &[ast::Expr],
        (columns, target_columns, defaults): (&[Column], &[usize], &ColumnDefaults),
        short_ok: bool,
    ) -> Result<Vec<Expr>> {
        if row.len() > target_columns.len() {
            return Err(Error::Syntax(
                "INSERT has more expressions than target columns".into(),
            ));
        }
        if row.len() < target_columns.len() && !short_ok {
            return Err(Error::Syntax(
                "INSERT has more target columns than expressions".into(),
            ));
        }
        let scope = Scope::default();
        self.clause = "VALUES";
        let mut out = Vec::with_capacity(row.len());
        for (e, &col) in row.iter().zip(target_columns) {
            if let ast::Expr::Identifier(id) = e {
                if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default") {
                    out.push(column_default(defaults, col));
                    continue;
                }
            }
            let b = self.expr(e, &scope)?;
            out.push(self.assign(b, columns[col].data_type, &columns[col].name)?);
        }
        Ok(out)
    }

    /// The SELECT's parameters are typed by its own binding where INSERT left them open.
    fn select_param_types(&self, q: Box<Query>, param_types: &mut Vec<DataType>) -> Box<Query> {
        for (i, t) in q.param_types.iter().enumerate() {
            match param_types.get_mut(i) {
                Some(p) if self.params[i].is_none() => *p = *t,
                Some(_) => {}
                None => param_types.push(*t),
            }
        }
        q
    }

    /// A select-list item that is a bare parameter of no declared type (`SELECT $1, $2`)
    /// takes its target column's type, as PostgreSQL infers it for INSERT ... SELECT.
    fn type_bare_params(
        &mut self,
        source: &ast::Query,
        columns: &[Column],
        target_columns: &[usize],
    ) -> Result<()> {
        let ast::SetExpr::Select(select) = &*source.body else {
            return Ok(());
        };
        for (item, &col) in select.projection.iter().zip(target_columns) {
            let (ast::SelectItem::UnnamedExpr(ast::Expr::Value(v))
            | ast::SelectItem::ExprWithAlias {
                expr: ast::Expr::Value(v),
                ..
            }) = item
            else {
                continue;
            };
            let ast::Value::Placeholder(p) = &v.value else {
                continue;
            };
            let i = crate::sql::placeholder_index(p)?;
            if self.params.len() <= i {
                self.params.resize(i + 1, None);
            }
            self.params[i].get_or_insert(columns[col].data_type);
        }
        Ok(())
    }

    /// `INSERT INTO table [(cols)] SELECT ...`: the SELECT, bound as a finite query, and one
    /// row of expressions over its result row (`Expr::Column(i)` assigned to the target
    /// column's type), which each result row fills. Errors: 0A000 for a SELECT that reads a
    /// stream, 42601 for more (or, with a column list, fewer) result columns than targets,
    /// 42804 for a result column that does not assign to its target's type.
    fn insert_select(
        &mut self,
        source: &ast::Query,
        columns: &[Column],
        target_columns: &[usize],
        short_ok: bool,
    ) -> Result<(Vec<Expr>, Box<Query>)> {
        self.type_bare_params(source, columns, target_columns)?;
        let q = self.query(source, &source.to_string())?;
        if q.is_continuous() {
            return Err(unsupported(
                "INSERT ... SELECT from a stream is not supported: a continuous query has no end",
            ));
        }
        if q.columns.len() > target_columns.len() {
            return Err(Error::Syntax(
                "INSERT has more expressions than target columns".into(),
            ));
        }
        if q.columns.len() < target_columns.len() && !short_ok {
            return Err(Error::Syntax(
                "INSERT has more target columns than expressions".into(),
            ));
        }
        self.clause = "INSERT";
        let mut row = Vec::with_capacity(q.columns.len());
        for (i, (c, &col)) in q.columns.iter().zip(target_columns).enumerate() {
            let b = Bound::new(Expr::Column(i), c.data_type);
            row.push(self.assign(b, columns[col].data_type, &columns[col].name)?);
        }
        Ok((row, Box::new(q)))
    }

    /// Cast for storing into a column of type `ty` (PostgreSQL's assignment rules): unknown
    /// string literals go through the type's input function at execution.
    pub(super) fn assign(&mut self, b: Bound, ty: DataType, column: &str) -> Result<Expr> {
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
}
