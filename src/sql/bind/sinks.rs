//! Binding of the statements of queries that run without a client: a derived stream's
//! `CREATE STREAM ... AS SELECT` and `CREATE SINK`.
//!
//! Both bind their query as a continuous SELECT, then fix each row's event time: a
//! windowed query's is `wtime(*)` (the slide event's instant), a query without a window
//! passes tuples through and keeps each tuple's TIMESTAMPCOLUMN. When the select list
//! does not hold it, it is added as a last column (`wtime`, or the stream's column name):
//! a derived stream needs it as its TIMESTAMPCOLUMN, and a sink uses it to tell slide
//! events apart and to resume after a restart (it writes the select list's columns only).

use crate::sql::parse::QueryPart;

use super::*;

impl Binder<'_> {
    pub(super) fn create_derived(
        &mut self,
        name: &str,
        if_not_exists: bool,
        archived: bool,
        options: &[(String, String)],
        part: &QueryPart,
    ) -> Result<Plan> {
        let name = self.relation(name)?;
        let (mut slack_us, mut retention_us) = (0, None);
        for (k, v) in options {
            match k.as_str() {
                "slack" => slack_us = slack_length(v)?,
                "retention" => retention_us = Some(retention_length(v)?),
                "connector" => {
                    return Err(unsupported(
                        "a derived stream is fed by its query: it takes no connector",
                    ))
                }
                other => {
                    return Err(Error::InvalidParameterValue(format!(
                        "unrecognized option \"{other}\" for a derived stream; the options are retention and slack"
                    )))
                }
            }
        }
        if retention_us.is_some() && !archived {
            return Err(Error::InvalidParameterValue(
                "retention applies to archived streams only (TYPE ARCHIVED)".into(),
            ));
        }
        let query = self.background_query(part, "a derived stream")?;
        let mut columns = query.query.columns.clone();
        for c in &mut columns {
            c.catalog_type = None;
        }
        Ok(Plan::CreateDerived(CreateDerived {
            stream: CreateStream {
                name,
                columns,
                timestamp_column: query.time_column,
                archived,
                if_not_exists,
                slack_us,
                retention_us,
                source: None,
            },
            query,
        }))
    }

    pub(super) fn create_sink(
        &mut self,
        name: &str,
        if_not_exists: bool,
        part: &QueryPart,
        options: &[(String, String)],
    ) -> Result<Plan> {
        let spec = crate::connect::sink::sink_spec(options)?;
        let query = self.background_query(part, "a sink")?;
        Ok(Plan::CreateSink(CreateSink {
            name: name.to_string(),
            if_not_exists,
            query,
            spec,
        }))
    }

    /// The query of a derived stream or sink (`what`), with its event time column.
    /// Errors: 0A000 for a query that reads no stream or has a LIMIT, 42701 for two
    /// result columns of one name, 42601 for a parameter.
    fn background_query(&mut self, part: &QueryPart, what: &str) -> Result<BackgroundQuery> {
        let ast::Statement::Query(q) = &*part.statement else {
            return Err(Error::Syntax(format!("{what} needs a SELECT")));
        };
        let mut query = self.query(q, &part.text)?;
        if !query.is_continuous() {
            return Err(unsupported(format!(
                "the query of {what} must read a stream: it runs until dropped"
            )));
        }
        if query.limit.is_some() || query.limit_param.is_some() {
            return Err(unsupported(format!(
                "the query of {what} has no LIMIT: it runs until dropped"
            )));
        }
        if !self.params.is_empty() {
            return Err(Error::Syntax(format!(
                "there is no parameter $1 in the query of {what}"
            )));
        }
        let visible = query.columns.len();
        let time_column = self.event_time_column(&mut query)?;
        for (i, c) in query.columns.iter().enumerate() {
            if query.columns[..i].iter().any(|d| d.name == c.name) {
                return Err(Error::DuplicateColumn(format!(
                    "column \"{}\" specified more than once",
                    c.name
                ))
                .with_hint("Give the select list's columns distinct names with AS."));
            }
        }
        let key_columns = key_columns(&query, visible);
        let inputs = match &query.source {
            Source::Stream { name, .. } => vec![name.clone()],
            Source::Join { inputs, .. } => {
                let mut names: Vec<String> = inputs.iter().map(|i| i.stream.clone()).collect();
                names.dedup();
                names
            }
            _ => Vec::new(),
        };
        Ok(BackgroundQuery {
            query: Box::new(query),
            time_column,
            visible,
            key_columns,
            inputs,
            text: part.text.clone(),
        })
    }

    /// The result column with each row's event time, added at the end when the select
    /// list lacks it; `None` for a query without a window over a stream stamped on
    /// arrival.
    fn event_time_column(&self, query: &mut Query) -> Result<Option<usize>> {
        let windowed = !query.windows.is_empty() || matches!(query.source, Source::Join { .. });
        let (expr, column) = if windowed {
            let expr = Expr::WindowMeta(WindowMeta::Wtime);
            (expr, Column::new("wtime", self.window_time_type(query)))
        } else {
            let Source::Stream { name, columns } = &query.source else {
                return Ok(None);
            };
            let Some((_, Some(ts))) = self.schema.stream(name) else {
                return Ok(None);
            };
            (Expr::Column(ts), columns[ts].clone())
        };
        if let Some(i) = query.projection.iter().position(|e| *e == expr) {
            return Ok(Some(i));
        }
        query.projection.push(expr);
        query.columns.push(column);
        Ok(Some(query.columns.len() - 1))
    }

    /// The type of `wtime(*)` in `query`: its streams' time type, `timestamptz` unless
    /// every stream's is `timestamp` (as the FROM clause's binding decides it).
    fn window_time_type(&self, query: &Query) -> DataType {
        let time_type = |name: &str| match self.schema.stream(name) {
            Some((cols, Some(ts))) => cols[ts].data_type,
            _ => DataType::TimestampTz,
        };
        match &query.source {
            Source::Stream { name, .. } => time_type(name),
            Source::Join { inputs, .. }
                if inputs
                    .iter()
                    .all(|i| time_type(&i.stream) == DataType::Timestamp) =>
            {
                DataType::Timestamp
            }
            _ => DataType::TimestampTz,
        }
    }
}

/// The select-list columns (of the first `visible`) that are GROUP BY keys.
fn key_columns(query: &Query, visible: usize) -> Vec<usize> {
    let Some(agg) = &query.aggregate else {
        return Vec::new();
    };
    let keys = agg.group_by.len();
    query.projection[..visible]
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Expr::Column(k) if *k < keys))
        .map(|(i, _)| i)
        .collect()
}
