//! FROM: tables, catalog relations, subqueries, joins (NATURAL, USING, LATERAL) and
//! functions in FROM, each item's columns added to the query level's scope.

use super::*;

impl RelBinder<'_> {
    pub(super) fn bind_from_list(
        &mut self,
        from: &[ast::TableWithJoins],
        level: &mut Level,
    ) -> Result<Option<RelFrom>> {
        let mut acc: Option<RelFrom> = None;
        for t in from {
            let left_width = level.width;
            // An item after the first may read the items before it (LATERAL): their row
            // starts the level's row.
            let avail = acc.is_some().then_some(0);
            let (item, read) = self.table_with_joins(t, level, avail)?;
            acc = Some(match acc {
                None => item,
                Some(left) => RelFrom::Join {
                    kind: JoinKind::Inner,
                    left: Box::new(left),
                    right: Box::new(item),
                    on: None,
                    left_width,
                    right_width: level.width - left_width,
                    lateral: read.map(|_| 0),
                },
            });
        }
        Ok(acc)
    }

    /// The items of one FROM entry and its joins, and the first column of the level's
    /// row before them that they read (LATERAL), of those from `avail` on, which the row
    /// it is evaluated with has (`None`: none).
    pub(super) fn table_with_joins(
        &mut self,
        t: &ast::TableWithJoins,
        level: &mut Level,
        avail: Option<usize>,
    ) -> Result<(RelFrom, Option<(usize, usize)>)> {
        let start = level.width;
        let (mut acc, mut outer_read) = self.factor(&t.relation, level, avail)?;
        for j in &t.joins {
            let left_width = level.width - start;
            let rels_before = level.rels.len();
            // A joined item sees this join's left row and what the entry's own row has.
            let seen_from = Some(avail.map_or(start, |a| a.min(start)));
            let (right, read) = self.factor(&j.relation, level, seen_from)?;
            // What it reads before the entry comes from the row the entry is evaluated
            // with; what it reads of the join's left row makes the join LATERAL.
            if let Some((first, _)) = read.filter(|r| r.0 < start) {
                let (a, b) = outer_read.unwrap_or((first, first));
                outer_read = Some((a.min(first), b.max(first)));
            }
            let local = read.map(|r| r.1).filter(|last| *last >= start);
            let right_width = level.width - start - left_width;
            let (kind, constraint) = match &j.join_operator {
                ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => {
                    (JoinKind::Inner, Some(c))
                }
                ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => {
                    (JoinKind::Left, Some(c))
                }
                ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c) => {
                    (JoinKind::Right, Some(c))
                }
                ast::JoinOperator::FullOuter(c) => (JoinKind::Full, Some(c)),
                ast::JoinOperator::CrossJoin(_) => (JoinKind::Inner, None),
                other => return Err(unsupported(format!("join kind {other:?} is not supported"))),
            };
            if let (Some(last), JoinKind::Right | JoinKind::Full) = (local, kind) {
                let alias = (level.rels.iter())
                    .find(|r| (r.offset..r.offset + r.columns.len()).contains(&last))
                    .map_or("", |r| r.alias.as_str());
                return Err(Error::InvalidColumnReference(format!(
                    "invalid reference to FROM-clause entry for table \"{alias}\""
                ))
                .with_detail(
                    "The combining JOIN type must be INNER or LEFT for a LATERAL reference.",
                ));
            }
            let on = match constraint {
                None | Some(ast::JoinConstraint::None) => None,
                Some(ast::JoinConstraint::On(e)) => {
                    // ON sees this join's inputs (and outer levels), as a level of its own
                    // whose row is the join's row.
                    let mut sub = level.clone();
                    sub.width -= start;
                    sub.types = sub.types[start..].to_vec();
                    sub.rels = level
                        .rels
                        .iter()
                        .filter(|r| r.offset >= start)
                        .map(|r| ScopeRel {
                            offset: r.offset - start,
                            ..r.clone()
                        })
                        .collect();
                    self.levels.push(sub);
                    let e = self
                        .refusing_srf(SRF_IN_JOIN, |b| b.expr(e))
                        .and_then(|e| self.condition(e, "JOIN/ON"));
                    self.levels.pop();
                    Some(e?)
                }
                Some(c @ (ast::JoinConstraint::Using(_) | ast::JoinConstraint::Natural)) => {
                    let names: Vec<String> = match c {
                        ast::JoinConstraint::Using(cols) => cols
                            .iter()
                            .map(|c| {
                                c.0.last()
                                    .and_then(|p| p.as_ident())
                                    .map(norm)
                                    .unwrap_or_default()
                            })
                            .collect(),
                        _ => natural_columns(&level.rels, start, rels_before)?,
                    };
                    let mut conj = Vec::new();
                    for name in names {
                        let find = |rels: &[ScopeRel]| {
                            rels.iter().find_map(|r| {
                                r.columns
                                    .iter()
                                    .position(|n| *n == name)
                                    .map(|i| (r.offset + i - start, r.offset + i))
                            })
                        };
                        let left_rels: Vec<ScopeRel> = level.rels[..rels_before]
                            .iter()
                            .filter(|r| r.offset >= start)
                            .cloned()
                            .collect();
                        let (l, _) = find(&left_rels).ok_or_else(|| {
                            Error::UndefinedColumn(format!(
                                "column \"{name}\" specified in USING clause does not exist in left table"
                            ))
                        })?;
                        let (r, abs) = find(&level.rels[rels_before..]).ok_or_else(|| {
                            Error::UndefinedColumn(format!(
                                "column \"{name}\" specified in USING clause does not exist in right table"
                            ))
                        })?;
                        for rel in &mut level.rels[rels_before..] {
                            if abs >= rel.offset && abs < rel.offset + rel.columns.len() {
                                rel.hidden[abs - rel.offset] = true;
                            }
                        }
                        // The level is not pushed yet: the operands' types are its own.
                        let (lt, rt) = (level.types[start + l], level.types[start + r]);
                        if let (RType::Base(a), RType::Base(b)) = (lt, rt) {
                            if crate::sql::types::select_common_type(a, b).is_none() {
                                return Err(Error::DatatypeMismatch(format!(
                                    "JOIN/USING types {} and {} cannot be matched",
                                    a.name(),
                                    b.name()
                                )));
                            }
                        }
                        let l = self.bpchar_operand(RExpr::Col { up: 0, idx: l }, lt, rt);
                        let r = self.bpchar_operand(RExpr::Col { up: 0, idx: r }, rt, lt);
                        conj.push(RExpr::Cmp {
                            op: CmpOp::Eq,
                            arrays: array_elems(lt, rt),
                            left: Box::new(l),
                            right: Box::new(r),
                        });
                    }
                    // A NATURAL join without common columns is a cross join.
                    (!conj.is_empty()).then_some(RExpr::And(conj))
                }
                Some(ast::JoinConstraint::UsingAlias(..)) => {
                    return Err(unsupported("USING ... AS is not supported"))
                }
            };
            acc = RelFrom::Join {
                kind,
                left: Box::new(acc),
                right: Box::new(right),
                on,
                left_width,
                right_width,
                lateral: local.map(|_| start),
            };
        }
        Ok((acc, outer_read))
    }

    /// A set-returning function in FROM (`generate_series(1, 3)`, `unnest(array)`,
    /// `UNNEST(current_schemas(true))`): its columns join the level as one relation.
    pub(super) fn function_in_from(
        &mut self,
        (fname, ordinality): (String, bool),
        args: &[&ast::Expr],
        alias: &Option<ast::TableAlias>,
        (level, avail): (&mut Level, Option<usize>),
    ) -> Result<(RelFrom, Option<(usize, usize)>)> {
        // A function in FROM sees the items before it (PostgreSQL's implicit LATERAL)
        // and the outer levels.
        self.levels.push(lateral_level(level));
        let bound: Result<Vec<RExpr>> = self.refusing_srf(SRF_IN_FROM_ARGS, |b| {
            args.iter().map(|e| b.expr(e)).collect()
        });
        let bound = match bound {
            Ok(b) if fname == "generate_series" => self.series_args(b),
            other => other,
        };
        // unnest's columns have their arrays' element types (typed while the
        // arguments' level is still pushed).
        let elems: Vec<RType> = bound.as_ref().map_or(vec![], |b| {
            b.iter()
                .map(|a| {
                    self.static_type(a)
                        .elem()
                        .unwrap_or(RType::Base(DataType::Text))
                })
                .collect()
        });
        let series = bound
            .as_ref()
            .map_or(RType::Unknown, |b| self.series_type(b));
        let seen = self.levels.pop().expect("pushed");
        let bound = bound?;
        let read = lateral_read(&seen, avail)?;
        let cols: Vec<(&str, RType)> = match fname.as_str() {
            "generate_series" => vec![("generate_series", series)],
            // Several arrays are read side by side, the shorter ones giving NULL.
            "unnest" => elems.iter().map(|t| ("unnest", *t)).collect(),
            "generate_subscripts" => {
                vec![("generate_subscripts", RType::Base(DataType::Int4))]
            }
            "regexp_matches" => vec![("regexp_matches", RType::Base(DataType::Text).array_of())],
            "regexp_split_to_table" => {
                vec![("regexp_split_to_table", RType::Base(DataType::Text))]
            }
            "_pg_expandarray" => vec![
                ("x", RType::Base(DataType::Int4)),
                ("n", RType::Base(DataType::Int4)),
            ],
            "pg_options_to_table" => vec![
                ("option_name", RType::Base(DataType::Text)),
                ("option_value", RType::Base(DataType::Text)),
            ],
            "pg_get_keywords" => vec![
                ("word", RType::Base(DataType::Text)),
                ("catcode", RType::Base(DataType::Text)),
                ("barelabel", RType::Base(DataType::Bool)),
                ("catdesc", RType::Base(DataType::Text)),
                ("baredesc", RType::Base(DataType::Text)),
            ],
            _ => {
                return Err(Error::UndefinedFunction(format!(
                    "function {fname} does not exist"
                )))
            }
        };
        let mut names: Vec<String> = cols.iter().map(|c| c.0.to_string()).collect();
        let mut rel_alias = fname.clone();
        if let Some(a) = alias {
            rel_alias = norm(&a.name);
            if a.columns.is_empty() && names.len() == 1 {
                names[0] = rel_alias.clone();
            }
            for (n, c) in names.iter_mut().zip(&a.columns) {
                *n = norm(&c.name);
            }
        }
        let types: Vec<RType> = cols.iter().map(|c| c.1).collect();
        let mut rel_types = types.clone();
        if ordinality {
            let alias_columns = alias.as_ref().map_or(&[][..], |a| &a.columns[..]);
            names.push(
                alias_columns
                    .get(cols.len())
                    .map_or("ordinality".into(), |c| norm(&c.name)),
            );
            rel_types.push(RType::Base(DataType::Int8));
        }
        push_rel(level, rel_alias, None, names, rel_types)?;
        let f = RelFrom::Func {
            name: fname,
            args: bound,
            types,
            ordinality,
        };
        Ok((f, read))
    }

    /// One FROM item, and the first column of the level's row before it that it reads
    /// (LATERAL). The row it is evaluated with has the columns from `avail` on (`None`:
    /// none, the first item). Errors: 42P01/42703 for an item not yet in FROM, 0A000 for
    /// one before `avail`.
    pub(super) fn factor(
        &mut self,
        f: &ast::TableFactor,
        level: &mut Level,
        avail: Option<usize>,
    ) -> Result<(RelFrom, Option<(usize, usize)>)> {
        match f {
            ast::TableFactor::Table {
                name,
                alias,
                args,
                with_ordinality,
                ..
            } => {
                let parts: Vec<String> = name
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident().map(norm))
                    .collect();
                if let Some(args) = args {
                    let fname = parts.last().cloned().unwrap_or_default();
                    let exprs = plain_args(&fname, &args.args)?;
                    return self.function_in_from(
                        (fname, *with_ordinality),
                        &exprs,
                        alias,
                        (level, avail),
                    );
                }
                let (schema, rel) = match parts.as_slice() {
                    [r] => (None, r.clone()),
                    [s, r] => (Some(s.clone()), r.clone()),
                    _ => {
                        // database.schema.name, checked as every statement checks it.
                        crate::sql::bind::relation_name(
                            &parts.join("."),
                            self.provider.database(),
                        )?;
                        let [_, s, r] = parts.as_slice() else {
                            unreachable!("relation_name refuses four parts or more")
                        };
                        (Some(s.clone()), r.clone())
                    }
                };
                let alias_name = alias.as_ref().map(|a| norm(&a.name));
                if schema.is_none() {
                    if let Some((_, id, cols, types)) =
                        self.ctes.iter().rev().find(|c| c.0 == rel).cloned()
                    {
                        let cols = rename(cols, alias)?;
                        push_rel(level, alias_name.unwrap_or(rel), None, cols, types)?;
                        return Ok((RelFrom::Cte(id), None));
                    }
                }
                let candidates: Vec<String> = match &schema {
                    Some(s) => vec![s.clone()],
                    None => vec!["pg_catalog".into(), "public".into()],
                };
                for s in candidates {
                    if let Some((cols, _)) = self.provider.relation(&s, &rel) {
                        let names = rename(cols.iter().map(|c| c.name.clone()).collect(), alias)?;
                        let types = cols.iter().map(RType::of_column).collect();
                        push_rel(
                            level,
                            alias_name.unwrap_or(rel.clone()),
                            schema.clone(),
                            names,
                            types,
                        )?;
                        level.rels.last_mut().expect("pushed").table = Some(format!("{s}.{rel}"));
                        let scan = RelFrom::Scan {
                            schema: s,
                            name: rel,
                        };
                        return Ok((scan, None));
                    }
                }
                Err(Error::UndefinedTable(parts.join(".")))
            }
            ast::TableFactor::Derived {
                subquery,
                alias,
                lateral,
                ..
            } => {
                // A subquery in FROM sees outer levels and, when LATERAL, the items
                // before it; otherwise an empty level stands for this one (the evaluator
                // pushes an empty row for it).
                self.levels.push(match lateral {
                    true => lateral_level(level),
                    false => Level::default(),
                });
                let q = self.query(subquery);
                let seen = self.levels.pop().expect("pushed");
                let q = q?;
                let read = lateral_read(&seen, avail)?;
                let names = rename(q.columns.iter().map(|c| c.0.clone()).collect(), alias)?;
                let types = q.columns.iter().map(|c| c.1).collect();
                let a = alias.as_ref().map(|a| norm(&a.name)).unwrap_or_default();
                push_rel(level, a, None, names, types)?;
                Ok((RelFrom::Sub(Box::new(q)), read))
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                if alias.is_some() {
                    return Err(unsupported("an alias on a parenthesised join"));
                }
                self.table_with_joins(table_with_joins, level, avail)
            }
            ast::TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } if !array_exprs.is_empty() => {
                let exprs: Vec<&ast::Expr> = array_exprs.iter().collect();
                self.function_in_from(
                    ("unnest".into(), *with_ordinality),
                    &exprs,
                    alias,
                    (level, avail),
                )
            }
            ast::TableFactor::Function {
                name,
                args,
                with_ordinality,
                alias,
                ..
            } => {
                let fname =
                    (name.0.last().and_then(|p| p.as_ident()).map(norm)).unwrap_or_default();
                let exprs = plain_args(&fname, args)?;
                self.function_in_from((fname, *with_ordinality), &exprs, alias, (level, avail))
            }
            ast::TableFactor::UNNEST {
                with_ordinality: true,
                ..
            } => Err(unsupported("WITH ORDINALITY is not supported")),
            other => Err(unsupported(format!("FROM item {other} is not supported"))),
        }
    }
}
