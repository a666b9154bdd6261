//! FROM: one stream, table or system view, or a join of windowed streams and tables.

use sqlparser::ast;

use super::*;

impl Binder<'_> {
    pub(super) fn join_cond(&mut self, cond: JoinCond, scope: &Scope) -> Result<Expr> {
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
    pub(super) fn from(
        &mut self,
        from: &[ast::TableWithJoins],
    ) -> Result<(Source, Scope, Vec<WindowSpec>)> {
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
    pub(super) fn join_from(
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
    pub(super) fn join_input(
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
    pub(super) fn join_table(
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
    pub(super) fn join_constraint(
        &mut self,
        c: &ast::JoinConstraint,
        scope: &mut Scope,
    ) -> Result<()> {
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
}
