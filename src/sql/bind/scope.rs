//! Name resolution: the relations of FROM and the columns an expression may name.

use sqlparser::ast;

use super::*;

/// What the expressions of a query may name.
#[derive(Clone, Debug, Default)]
pub(super) struct Scope {
    /// The relations of FROM, in order; their columns are consecutive in `columns`.
    pub(super) rels: Vec<Rel>,
    pub(super) columns: Vec<Column>,
    /// The columns `*` expands to, in order (a `USING` column appears once).
    pub(super) star: Vec<usize>,
    /// Columns of `JOIN ... USING`: an unqualified name resolves to the left side's column.
    pub(super) merged: Vec<(String, usize)>,
    /// Type of wtime(*) and wstart(*); `None` when the query has no window.
    pub(super) window_time: Option<DataType>,
}

/// One relation of FROM.
#[derive(Clone, Debug, Default)]
pub(super) struct Rel {
    /// Names by which the relation may qualify a column (name, last part, alias).
    pub(super) qualifiers: Vec<String>,
    /// The name PostgreSQL prints in errors for the relation (alias or name).
    pub(super) name: String,
    /// Index of its first column in the scope's row.
    pub(super) offset: usize,
    /// Number of its columns.
    pub(super) ncols: usize,
}

impl Scope {
    /// The scope of a single relation's columns (its name is already in `rels[0]`).
    pub(super) fn set_single(&mut self, columns: Vec<Column>) {
        if let Some(r) = self.rels.first_mut() {
            r.ncols = columns.len();
        }
        self.star = (0..columns.len()).collect();
        self.columns = columns;
    }

    pub(super) fn rel_by_qualifier(&self, q: &str) -> Option<&Rel> {
        self.rels
            .iter()
            .find(|r| r.qualifiers.iter().any(|x| x == q))
    }

    pub(super) fn rel_of_column(&self, i: usize) -> Option<&Rel> {
        self.rels
            .iter()
            .find(|r| i >= r.offset && i < r.offset + r.ncols)
    }
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
pub(super) fn levenshtein(a: &str, b: &str) -> usize {
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

/// The names a FROM relation answers to: its alias, else its name and the name's last part.
pub(super) fn relation_names(rel: &str, alias: Option<&ast::TableAlias>) -> Result<Rel> {
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

impl Binder<'_> {
    pub(super) fn lookup_table(&self, rel: &str) -> Option<TableInfo> {
        self.schema.table(rel).or_else(|| {
            rel.strip_prefix("public.")
                .and_then(|r| self.schema.table(r))
        })
    }

    /// A table's catalog name and shape; 42P01 when `name` is not a table (a stream gets
    /// its own message).
    pub(super) fn table_info(&self, name: &str) -> Result<(String, TableInfo)> {
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

    pub(super) fn lookup_stream(&self, rel: &str) -> Option<(Vec<Column>, Option<usize>)> {
        self.schema.stream(rel).or_else(|| {
            rel.strip_prefix("public.")
                .and_then(|r| self.schema.stream(r))
        })
    }

    pub(super) fn column_ref(&mut self, i: usize, scope: &Scope) -> Result<Bound> {
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
    pub(super) fn match_key(
        &mut self,
        input: Bound,
        name: impl FnOnce() -> String,
    ) -> Result<Bound> {
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

    pub(super) fn resolve_column(&mut self, parts: &[&ast::Ident], scope: &Scope) -> Result<usize> {
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
                    return Err(Error::MissingFromEntry(q.clone()).at(at));
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
    pub(super) fn position(&self, loc: sqlparser::tokenizer::Location) -> u32 {
        crate::sql::parse::Lines::new(self.source).position(loc)
    }
}
