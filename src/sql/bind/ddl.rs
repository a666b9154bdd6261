//! DDL: CREATE STREAM and CREATE TABLE (columns, types, keys, defaults).

use sqlparser::ast;

use super::*;

/// A literal, or casts of one: a DEFAULT that can be evaluated when the table is created.
pub(super) fn is_constant(e: &Expr) -> bool {
    match e {
        Expr::Literal(_) => true,
        Expr::Cast { expr, .. } => is_constant(expr),
        _ => false,
    }
}

impl Binder<'_> {
    pub(super) fn create_stream(
        &mut self,
        name: &str,
        raw: &[crate::sql::parse::RawColumn],
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
            if matches!(ty, DataType::Date | DataType::Time | DataType::Bpchar(_)) {
                return Err(Error::FeatureNotSupported(format!(
                    "type {} is not supported for stream columns (tables may have it)",
                    ty.name()
                )));
            }
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
            column.typmod = column_typmod(&c.type_name)?;
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

    pub(super) fn create_table(&mut self, ct: &ast::CreateTable) -> Result<Plan> {
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
            column.typmod = column_typmod(&c.data_type.to_string())?;
            columns.push(column);
            not_null.push(nn);
            defaults.push(default);
        }
        if !self.params.is_empty() {
            return Err(Error::UndefinedParameter(
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
}
