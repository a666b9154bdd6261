//! `EXPLAIN (FORMAT FLINK)`: the shared plan as Flink SQL (Flink 2.x), for users whose
//! stream outgrows one machine.
//!
//! [`flink_sql`] writes one script, statement by statement:
//! 1. `SET 'table.local-time-zone' = 'UTC'` (tcq's windows are aligned to the epoch in UTC);
//! 2. the source table: the stream's columns, a `WATERMARK` on its TIMESTAMPCOLUMN (the
//!    column minus the SLACK minus 1 ms: Flink fires an instance `[a, e)` once the watermark
//!    reaches `e - 1 ms`, tcq once its time, the highest timestamp minus the SLACK, reaches
//!    `e`), and placeholder filesystem/CSV options to replace with the real source's;
//! 3. `tcq_input`: the stream after WHERE, with the group keys `k0..` and aggregate
//!    arguments `a0..` computed once;
//! 4. one view `tcq_n<i>` per node of the [`SharedPlan`] (factor windows included), in plan
//!    order. A root is a window aggregation over `tcq_input`; any other node is a cascading
//!    window aggregation over its parent's rows, on the parent's `window_time` (as the paper
//!    does for Trill). Each view carries `ws`/`we` (the instance's start and end), `rt` (its
//!    `window_time`, the time attribute children window on), the keys, and partial
//!    aggregates: count as `c<j>`, sum as `s<j>`, avg as sum `s<j>` plus count `n<j>`, min and
//!    max as `m<j>`;
//! 5. the sink table and one `INSERT INTO tcq_sink` that unites (`UNION ALL`) the user
//!    windows' rows, finalised and projected as tcq emits them, `wtime(*)` as `we`,
//!    `wstart(*)` as `ws`, with the START AT cut-off as a filter `ws >= TIMESTAMP '...'`.
//!
//! The cascade is exact by construction: parent rows sit at `rt = b + r_p - 1 ms` (Flink's
//! `window_time` of instance `[b, b + r_p)`), and a child instance `[a, a + r)` must merge the
//! parent instances `b = a, a + s_p, .., a + r - r_p` (the covering instances of
//! DESIGN.md section 3). A hopping window of size `r - r_p + s_p`, ending at `a + r`, holds
//! exactly those `rt`; for a tumbling parent that is the child's own size. Flink's HOP needs
//! its size to be a multiple of its slide; where it is not (`r mod s != 0`, or jumping
//! windows), the view hops by `gcd(size, slide)` and keeps the instances on the window's
//! own grid with a filter on `ws`.
//!
//! What Flink cannot match, refused with [`Error::FeatureNotSupported`] (SQLSTATE 0A000):
//! ungrouped aggregates (tcq emits one row per slide event even for an empty instance; a
//! Flink window aggregation emits nothing for it), joins, queries without a window clause or
//! without aggregates, count(DISTINCT) and the statistical aggregates (stddev, variance),
//! avg(bigint) (Flink's DECIMAL division at that width keeps 6 fractional digits),
//! LIMIT/OFFSET (which end a continuous query after a count of rows in arrival order),
//! streams stamped on arrival (processing time has no reproducible windows), `$n`
//! parameters, functions without a Flink equivalent here, and times finer than Flink's
//! milliseconds. Differences that remain, documented rather than refused: avg(integer) is a
//! DECIMAL(38, 18) where tcq gives PostgreSQL's numeric (they agree to 16 significant
//! digits); tuples later than the SLACK, which tcq drops at once while Flink's periodic
//! watermark may still admit some of them; select-list arithmetic follows Flink's typing
//! (its integer division and overflow rules); and the grid filter of a window whose range is
//! not a multiple of its slide counts whole units since the epoch in an INT, which for
//! slides of whole seconds (not minutes) overflows after 2038.
//!
//! ```
//! use tcq::wcg::flink::interval;
//! assert_eq!(interval(600_000_000).unwrap(), "INTERVAL '10' MINUTE");
//! assert_eq!(interval(5_400_000_000).unwrap(), "INTERVAL '90' MINUTE");
//! assert_eq!(interval(86_400_000_000 * 120).unwrap(), "INTERVAL '120 00:00:00.000' DAY(3) TO SECOND(3)");
//! ```

use super::SharedPlan;
use crate::error::{Error, Result};
use crate::sql::{
    AggCall, AggFunc, BinaryOp, Expr, Query, ScalarFunc, Source, UnaryOp, WindowMeta,
};
use crate::types::{Column, DataType, Value};
use crate::window::{Start, Window};

/// The stream a query reads, as the export needs it.
#[derive(Clone, Copy, Debug)]
pub struct FlinkSource<'a> {
    /// Stream name, normalised (the Flink table gets the same name).
    pub name: &'a str,
    /// The stream's columns in declaration order.
    pub columns: &'a [Column],
    /// Index of the TIMESTAMPCOLUMN; `None` (stamped on arrival) is refused.
    pub ts_col: Option<usize>,
    /// The query's SLACK over this stream, microseconds: the watermark's delay.
    pub slack_us: i64,
}

const MS: i64 = 1_000;

fn refuse<T>(what: impl Into<String>) -> Result<T> {
    Err(Error::FeatureNotSupported(format!(
        "EXPLAIN (FORMAT FLINK) cannot express this query exactly: {}",
        what.into()
    )))
}

/// The Flink SQL script for `query` over `source`, one line of text per element: `windows`
/// are the query's resolved windows, `cutoffs` their display cut-offs (a default START AT:
/// instances starting before it are not shown), `plan` the shared plan the executor runs.
///
/// Errors: 0A000 ([`Error::FeatureNotSupported`]) for what Flink cannot compute exactly
/// (see the module header).
pub fn flink_sql(
    query: &Query,
    source: &FlinkSource<'_>,
    windows: &[Window],
    cutoffs: &[Option<i64>],
    plan: &SharedPlan,
) -> Result<Vec<String>> {
    let agg = check_query(query, source, windows, cutoffs)?;
    let ts_col = source.ts_col.expect("checked");
    let mut out: Vec<String> = vec![
        "-- Flink SQL (Flink 2.x) for the shared plan of:".into(),
        format!("--   {}", select_text(&query.text)),
        "SET 'table.local-time-zone' = 'UTC';".into(),
        String::new(),
    ];
    out.extend(source_ddl(source, ts_col)?);
    out.push(String::new());
    out.extend(input_view(query, source, ts_col)?);
    for (i, node) in plan.nodes.iter().enumerate() {
        out.push(String::new());
        let parent = node.parent.map(|p| (p, plan.nodes[p].window));
        out.extend(node_view(i, &node.window, parent, agg, source, ts_col)?);
    }
    out.push(String::new());
    out.extend(sink(query, windows, cutoffs, plan)?);
    Ok(out)
}

/// The query's text from its SELECT on (EXPLAIN's options cut off), on one line.
fn select_text(text: &str) -> String {
    let from = text.to_ascii_lowercase().find("select").unwrap_or(0);
    text[from..]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The query's shape, checked against what the export can express exactly.
fn check_query<'q>(
    query: &'q Query,
    source: &FlinkSource<'_>,
    windows: &[Window],
    cutoffs: &[Option<i64>],
) -> Result<&'q crate::sql::Aggregate> {
    if !matches!(query.source, Source::Stream { .. }) {
        return refuse("only a single stream's window aggregation is exported (no joins)");
    }
    if windows.is_empty() {
        return refuse("a query without a window clause has no window aggregation");
    }
    let Some(agg) = &query.aggregate else {
        return refuse("a windowed query without aggregates emits raw tuples, not a plan");
    };
    if agg.group_by.is_empty() {
        return refuse(
            "an ungrouped aggregate emits a row for every slide event, even for an empty \
             instance (count 0), and a Flink window aggregation emits no row for an empty \
             instance; add a GROUP BY",
        );
    }
    if agg.calls.is_empty() {
        return refuse("GROUP BY without aggregates");
    }
    for c in &agg.calls {
        if c.distinct {
            return refuse(
                "count(DISTINCT) is holistic: no window can be computed from another's partials",
            );
        }
        if !matches!(
            c.func,
            AggFunc::CountStar
                | AggFunc::Count
                | AggFunc::Sum
                | AggFunc::Avg
                | AggFunc::Min
                | AggFunc::Max
        ) {
            return refuse(
                "only count, sum, avg, min and max are exported (not stddev or variance)",
            );
        }
        if c.func == AggFunc::Avg && c.arg_type == DataType::Int8 {
            return refuse(
                "avg(bigint): a sum of bigints needs DECIMAL(38, 0), and Flink's division of \
                 that keeps 6 fractional digits where PostgreSQL's numeric keeps 16",
            );
        }
    }
    if query.limit.is_some() || query.offset.is_some() {
        return refuse("LIMIT and OFFSET end a continuous query after rows in arrival order");
    }
    if source.ts_col.is_none() {
        return refuse(
            "the stream has no TIMESTAMPCOLUMN; windows on arrival time are not reproducible",
        );
    }
    if source.slack_us % MS != 0 {
        return refuse("the SLACK is finer than Flink's milliseconds");
    }
    for (w, c) in windows.iter().zip(cutoffs) {
        let start = match w.start {
            Start::At(o) => o,
            Start::Epoch => 0,
        };
        if w.range_us % MS != 0
            || w.slide_us % MS != 0
            || start % MS != 0
            || c.unwrap_or(0) % MS != 0
        {
            return refuse(
                "a window's RANGE, SLIDE or START AT is finer than Flink's milliseconds",
            );
        }
    }
    Ok(agg)
}

/// A Flink identifier, always quoted (Flink reserves many common words).
fn ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn flink_type(t: &DataType) -> Result<&'static str> {
    Ok(match t {
        DataType::Bool => "BOOLEAN",
        DataType::Int2 => "SMALLINT",
        DataType::Int4 => "INT",
        DataType::Int8 => "BIGINT",
        DataType::Float4 => "FLOAT",
        DataType::Float8 => "DOUBLE",
        DataType::Numeric => "DECIMAL(38, 18)",
        DataType::Text | DataType::Varchar(_) => "STRING",
        DataType::Timestamp => "TIMESTAMP(3)",
        DataType::TimestampTz => "TIMESTAMP_LTZ(3)",
        DataType::Interval => return refuse("interval values have no exact Flink type"),
    })
}

/// A Flink interval literal for `us` microseconds (a whole number of milliseconds): the
/// largest of DAY, HOUR, MINUTE, SECOND that divides it with fewer than 100 units (the
/// default leading precision), else seconds with milliseconds below 100 s, else
/// `DAY TO SECOND(3)`.
///
/// Errors: 0A000 when `us` is not a positive whole number of milliseconds.
pub fn interval(us: i64) -> Result<String> {
    if us <= 0 || us % MS != 0 {
        return refuse(format!("the interval of {us} microseconds"));
    }
    const UNITS: [(i64, &str); 4] = [
        (86_400_000_000, "DAY"),
        (3_600_000_000, "HOUR"),
        (60_000_000, "MINUTE"),
        (1_000_000, "SECOND"),
    ];
    for (unit, name) in UNITS {
        if us % unit == 0 && us / unit < 100 {
            return Ok(format!("INTERVAL '{}' {name}", us / unit));
        }
    }
    if us < 100_000_000 {
        return Ok(format!(
            "INTERVAL '{}.{:03}' SECOND",
            us / 1_000_000,
            us % 1_000_000 / MS
        ));
    }
    let ms = us / MS;
    let (days, rest) = (ms / 86_400_000, ms % 86_400_000);
    let text = format!(
        "{days} {:02}:{:02}:{:02}.{:03}",
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    );
    let lead = if days >= 100 { "DAY(3)" } else { "DAY" };
    if days >= 1000 {
        return refuse("an interval of 1000 days or more");
    }
    Ok(format!("INTERVAL '{text}' {lead} TO SECOND(3)"))
}

fn timestamp(us: i64) -> String {
    format!("TIMESTAMP '{}'", crate::time::format_timestamp(us))
}

fn source_ddl(source: &FlinkSource<'_>, ts_col: usize) -> Result<Vec<String>> {
    let mut out = vec![
        "-- The stream. Replace the WITH options with the real source's (Kafka, ...);".into(),
        "-- rows are read in their arrival order, as tcq reads them.".into(),
        format!("CREATE TEMPORARY TABLE {} (", ident(source.name)),
    ];
    for c in source.columns {
        out.push(format!(
            "  {} {},",
            ident(&c.name),
            flink_type(&c.data_type)?
        ));
    }
    let ts = ident(&source.columns[ts_col].name);
    let watermark = format!("{ts} - {}", interval(source.slack_us + MS)?);
    out.push(format!("  WATERMARK FOR {ts} AS {watermark}"));
    out.push(format!(
        ") WITH ('connector' = 'filesystem', 'path' = '{}.csv', 'format' = 'csv');",
        source.name
    ));
    Ok(out)
}

fn input_view(query: &Query, source: &FlinkSource<'_>, ts_col: usize) -> Result<Vec<String>> {
    let agg = query.aggregate.as_ref().expect("checked");
    let col = |i: usize| Ok(ident(&source.columns[i].name));
    let no_meta = |_: WindowMeta| refuse("wtime(*) outside the select list");
    let mut items = vec![ident(&source.columns[ts_col].name)];
    for (k, e) in agg.group_by.iter().enumerate() {
        items.push(format!("{} AS k{k}", render(e, &col, &no_meta)?));
    }
    for (j, c) in agg.calls.iter().enumerate() {
        if let Some(a) = &c.arg {
            items.push(format!("{} AS a{j}", render(a, &col, &no_meta)?));
        }
    }
    let mut out = vec![
        "-- WHERE, group keys k<i> and aggregate arguments a<j>.".into(),
        "CREATE TEMPORARY VIEW tcq_input AS".into(),
        format!("SELECT {}", items.join(", ")),
        format!("FROM {}", ident(source.name)),
    ];
    if let Some(f) = &query.filter {
        out.push(format!("WHERE {}", render(f, &col, &no_meta)?));
    }
    if let Some(last) = out.last_mut() {
        last.push(';');
    }
    Ok(out)
}

/// The partial aggregate columns of call `j`, computed from raw arguments (`root`) or
/// merged from the parent's partials.
fn partials(j: usize, c: &AggCall, root: bool) -> Vec<String> {
    let a = format!("a{j}");
    let sum_arg = || match c.arg_type {
        DataType::Int2 | DataType::Int4 => format!("CAST({a} AS BIGINT)"),
        DataType::Int8 => format!("CAST({a} AS DECIMAL(38, 0))"),
        DataType::Float4 if c.func == AggFunc::Avg => format!("CAST({a} AS DOUBLE)"),
        _ => a.clone(),
    };
    match (c.func, root) {
        (AggFunc::CountStar, true) => vec![format!("COUNT(*) AS c{j}")],
        (AggFunc::Count, true) => vec![format!("COUNT({a}) AS c{j}")],
        (AggFunc::CountStar | AggFunc::Count, false) => vec![format!("SUM(c{j}) AS c{j}")],
        (AggFunc::Sum, true) => vec![format!("SUM({}) AS s{j}", sum_arg())],
        (AggFunc::Sum, false) => vec![format!("SUM(s{j}) AS s{j}")],
        (AggFunc::Avg, true) => vec![
            format!("SUM({}) AS s{j}", sum_arg()),
            format!("COUNT({a}) AS n{j}"),
        ],
        (AggFunc::Avg, false) => vec![format!("SUM(s{j}) AS s{j}"), format!("SUM(n{j}) AS n{j}")],
        (AggFunc::Min, true) => vec![format!("MIN({a}) AS m{j}")],
        (AggFunc::Max, true) => vec![format!("MAX({a}) AS m{j}")],
        (AggFunc::Min, false) => vec![format!("MIN(m{j}) AS m{j}")],
        (AggFunc::Max, false) => vec![format!("MAX(m{j}) AS m{j}")],
        _ => unreachable!("check_query admits count, sum, avg, min and max only"),
    }
}

/// The finished value of call `j` over a node view's partials.
fn finalise(j: usize, c: &AggCall) -> String {
    match c.func {
        AggFunc::CountStar | AggFunc::Count => format!("c{j}"),
        AggFunc::Sum => format!("s{j}"),
        AggFunc::Avg => match c.arg_type {
            DataType::Float4 | DataType::Float8 => format!("s{j} / NULLIF(n{j}, 0)"),
            // DECIMAL(20, 0) / DECIMAL(19, 0) is DECIMAL(38, 18) under Flink's rules: 18
            // fractional digits, against PostgreSQL's 16 or more significant ones.
            DataType::Numeric => format!("s{j} / CAST(NULLIF(n{j}, 0) AS DECIMAL(19, 0))"),
            _ => format!("CAST(s{j} AS DECIMAL(20, 0)) / CAST(NULLIF(n{j}, 0) AS DECIMAL(19, 0))"),
        },
        _ => format!("m{j}"),
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn grid_offset(w: &Window) -> i64 {
    match w.start {
        Start::At(o) => o,
        Start::Epoch => 0,
    }
}

/// The view of plan node `i`: window `w`, computed from the stream or from `parent`.
fn node_view(
    i: usize,
    w: &Window,
    parent: Option<(usize, Window)>,
    agg: &crate::sql::Aggregate,
    source: &FlinkSource<'_>,
    ts_col: usize,
) -> Result<Vec<String>> {
    let (from, time, size, comment) = match parent {
        None => (
            "tcq_input".to_string(),
            ident(&source.columns[ts_col].name),
            w.range_us,
            format!("-- Node {i}: {} over the stream.", describe(w)),
        ),
        Some((p, pw)) => (
            format!("tcq_n{p}"),
            "rt".to_string(),
            w.range_us - pw.range_us + pw.slide_us,
            format!(
                "-- Node {i}: {} from node {p}'s instances (rt = window_time of each).",
                describe(w)
            ),
        ),
    };
    // The TVF's instances end where the window's do: [a + range - size, a + range).
    let s = w.slide_us;
    let (hop, on_grid) = if size % s == 0 {
        (s, false)
    } else {
        (gcd(size, s), true)
    };
    let offset = (grid_offset(w) + w.range_us - size).rem_euclid(hop);
    let offset_arg = if offset == 0 {
        String::new()
    } else {
        format!(", {}", interval(offset)?)
    };
    let tvf = if size == hop {
        format!(
            "TUMBLE(TABLE {from}, DESCRIPTOR({time}), {}{offset_arg})",
            interval(size)?
        )
    } else {
        format!(
            "HOP(TABLE {from}, DESCRIPTOR({time}), {}, {}{offset_arg})",
            interval(hop)?,
            interval(size)?
        )
    };
    let keys: Vec<String> = (0..agg.group_by.len()).map(|k| format!("k{k}")).collect();
    let mut items = vec![
        if size == w.range_us {
            "window_start AS ws".to_string()
        } else {
            format!("window_end - {} AS ws", interval(w.range_us)?)
        },
        "window_end AS we".into(),
        "window_time AS rt".into(),
    ];
    items.extend(keys.iter().cloned());
    for (j, c) in agg.calls.iter().enumerate() {
        items.extend(partials(j, c, parent.is_none()));
    }
    let mut group = vec![
        "window_start".to_string(),
        "window_end".into(),
        "window_time".into(),
    ];
    group.extend(keys);
    let select = format!(
        "SELECT {} FROM TABLE({tvf}) GROUP BY {}",
        items.join(", "),
        group.join(", ")
    );
    let mut out = vec![comment, format!("CREATE TEMPORARY VIEW tcq_n{i} AS")];
    if on_grid {
        out.push(format!(
            "-- Flink's HOP needs its size to be a multiple of its slide: hop by {} and keep the window's own grid.",
            interval(hop)?
        ));
        out.push(format!("SELECT * FROM ({select})"));
        out.push(format!("WHERE {};", on_grid_filter(w)?));
    } else {
        out.push(format!("{select};"));
    }
    Ok(out)
}

/// `ws` lies on `w`'s grid: `(ws - offset) mod slide = 0`, in the coarsest unit that divides
/// both (TIMESTAMPDIFF gives an INT).
fn on_grid_filter(w: &Window) -> Result<String> {
    let o = grid_offset(w).rem_euclid(w.slide_us);
    for (unit, name) in [
        (3_600_000_000, "HOUR"),
        (60_000_000, "MINUTE"),
        (1_000_000, "SECOND"),
    ] {
        if w.slide_us % unit == 0 && o % unit == 0 {
            return Ok(format!(
                "MOD(TIMESTAMPDIFF({name}, TIMESTAMP '1970-01-01 00:00:00', ws), {}) = {}",
                w.slide_us / unit,
                o / unit
            ));
        }
    }
    refuse("a window whose RANGE is not a multiple of its SLIDE needs a SLIDE of whole seconds")
}

fn describe(w: &Window) -> String {
    let h = super::explain::human_interval;
    let start = match w.start {
        Start::Epoch => String::new(),
        Start::At(o) => format!(" START AT {}", crate::time::format_timestamp(o)),
    };
    format!("RANGE {} SLIDE {}{start}", h(w.range_us), h(w.slide_us))
}

fn sink(
    query: &Query,
    windows: &[Window],
    cutoffs: &[Option<i64>],
    plan: &SharedPlan,
) -> Result<Vec<String>> {
    let agg = query.aggregate.as_ref().expect("checked");
    let nkeys = agg.group_by.len();
    let mut out = vec![
        "-- The user-visible windows' rows, united. Replace 'print' with the real sink.".into(),
        "CREATE TEMPORARY TABLE tcq_sink (".into(),
    ];
    for (i, c) in query.columns.iter().enumerate() {
        let comma = if i + 1 < query.columns.len() { "," } else { "" };
        out.push(format!(
            "  {} {}{comma}",
            ident(&c.name),
            flink_type(&c.data_type)?
        ));
    }
    out.push(") WITH ('connector' = 'print');".into());
    out.push("INSERT INTO tcq_sink".into());
    let mut branches = Vec::new();
    for (u, w) in windows.iter().enumerate() {
        let node = plan
            .nodes
            .iter()
            .position(|n| n.user_windows.contains(&u))
            .ok_or_else(|| Error::Internal(format!("user window {u} has no plan node")))?;
        let col = |i: usize| -> Result<String> {
            Ok(if i < nkeys {
                format!("k{i}")
            } else {
                finalise(i - nkeys, &agg.calls[i - nkeys])
            })
        };
        let meta = |m: WindowMeta| -> Result<String> {
            match m {
                WindowMeta::Wtime => Ok("we".into()),
                WindowMeta::Wstart => Ok("ws".into()),
                WindowMeta::Wrange => interval(w.range_us),
                WindowMeta::Wslide => interval(w.slide_us),
            }
        };
        let items: Vec<String> = query
            .projection
            .iter()
            .zip(&query.columns)
            .map(|(e, c)| {
                Ok(format!(
                    "CAST({} AS {}) AS {}",
                    render(e, &col, &meta)?,
                    flink_type(&c.data_type)?,
                    ident(&c.name)
                ))
            })
            .collect::<Result<_>>()?;
        let mut filters = Vec::new();
        let first = match (w.start, cutoffs.get(u).copied().flatten()) {
            (_, Some(c)) => Some(c),
            (Start::At(o), None) => Some(o),
            (Start::Epoch, None) => None,
        };
        if let Some(f) = first {
            filters.push(format!("ws >= {}", timestamp(f)));
        }
        if let Some(h) = &query.having {
            filters.push(render(h, &col, &meta)?);
        }
        let mut b = format!("SELECT {} FROM tcq_n{node}", items.join(", "));
        if !filters.is_empty() {
            b.push_str(&format!(" WHERE {}", filters.join(" AND ")));
        }
        branches.push(b);
    }
    let n = branches.len();
    for (i, b) in branches.into_iter().enumerate() {
        out.push(if i + 1 < n { b } else { format!("{b};") });
        if i + 1 < n {
            out.push("UNION ALL".into());
        }
    }
    Ok(out)
}

/// Render a bound expression as Flink SQL; `col` renders a column of the row in context,
/// `meta` a window function.
fn render(
    e: &Expr,
    col: &dyn Fn(usize) -> Result<String>,
    meta: &dyn Fn(WindowMeta) -> Result<String>,
) -> Result<String> {
    let r = |x: &Expr| render(x, col, meta);
    Ok(match e {
        Expr::Column(i) => col(*i)?,
        Expr::Literal(v) => literal(v)?,
        Expr::Param(_) => return refuse("parameters ($n); explain the query with its values"),
        Expr::Unary { op, expr } => match op {
            UnaryOp::Neg => format!("(- {})", r(expr)?),
            UnaryOp::Not => format!("(NOT {})", r(expr)?),
        },
        Expr::Binary { op, left, right } => {
            let (a, b) = (r(left)?, r(right)?);
            let sym = match op {
                BinaryOp::Mod => return Ok(format!("MOD({a}, {b})")),
                BinaryOp::Add => "+",
                BinaryOp::Sub => "-",
                BinaryOp::Mul => "*",
                BinaryOp::Div => "/",
                BinaryOp::Eq => "=",
                BinaryOp::NotEq => "<>",
                BinaryOp::Lt => "<",
                BinaryOp::LtEq => "<=",
                BinaryOp::Gt => ">",
                BinaryOp::GtEq => ">=",
                BinaryOp::And => "AND",
                BinaryOp::Or => "OR",
                BinaryOp::Concat => "||",
            };
            format!("({a} {sym} {b})")
        }
        Expr::Cast { expr, to } => format!("CAST({} AS {})", r(expr)?, flink_type(to)?),
        // A cast to numeric(p, s): ROUND to the scale, as tcq rounded such casts before it
        // checked the precision (an overflow is an error in tcq, not a row).
        Expr::Func {
            func: ScalarFunc::NumericTypmod,
            args,
        } if args.len() == 3 => format!("ROUND({}, {})", r(&args[0])?, r(&args[2])?),
        Expr::Func { func, args } => {
            let name = match func {
                ScalarFunc::Abs => "ABS",
                ScalarFunc::Round => "ROUND",
                ScalarFunc::Floor => "FLOOR",
                ScalarFunc::Ceil => "CEIL",
                ScalarFunc::Sqrt => "SQRT",
                ScalarFunc::Coalesce => "COALESCE",
                ScalarFunc::NullIf => "NULLIF",
                ScalarFunc::Greatest => "GREATEST",
                ScalarFunc::Least => "LEAST",
                ScalarFunc::Lower => "LOWER",
                ScalarFunc::Upper => "UPPER",
                ScalarFunc::Length => "CHAR_LENGTH",
                other => return refuse(format!("the function {other:?}")),
            };
            let args: Vec<String> = args.iter().map(r).collect::<Result<_>>()?;
            format!("{name}({})", args.join(", "))
        }
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            let mut s = "CASE".to_string();
            if let Some(o) = operand {
                s.push_str(&format!(" {}", r(o)?));
            }
            for (w, t) in branches {
                s.push_str(&format!(" WHEN {} THEN {}", r(w)?, r(t)?));
            }
            if let Some(o) = otherwise {
                s.push_str(&format!(" ELSE {}", r(o)?));
            }
            s.push_str(" END");
            s
        }
        Expr::IsNull { expr, negated } => {
            format!(
                "({} IS {}NULL)",
                r(expr)?,
                if *negated { "NOT " } else { "" }
            )
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let items: Vec<String> = list.iter().map(r).collect::<Result<_>>()?;
            format!(
                "({} {}IN ({}))",
                r(expr)?,
                if *negated { "NOT " } else { "" },
                items.join(", ")
            )
        }
        Expr::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
        } => {
            let not = if *negated { "NOT " } else { "" };
            if *case_insensitive {
                format!("(LOWER({}) {not}LIKE LOWER({}))", r(expr)?, r(pattern)?)
            } else {
                format!("({} {not}LIKE {})", r(expr)?, r(pattern)?)
            }
        }
        Expr::WindowMeta(m) => meta(*m)?,
    })
}

fn literal(v: &Value) -> Result<String> {
    Ok(match v {
        Value::Null => "NULL".into(),
        Value::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
        Value::Int2(n) => format!("CAST({n} AS SMALLINT)"),
        Value::Int4(n) => n.to_string(),
        Value::Int8(n) => format!("CAST({n} AS BIGINT)"),
        Value::Float4(x) if x.is_finite() => format!("CAST({x:?} AS FLOAT)"),
        Value::Float8(x) if x.is_finite() => format!("CAST({x:?} AS DOUBLE)"),
        Value::Numeric(d) => d.to_string(),
        Value::Text(s) => format!("'{}'", s.replace('\'', "''")),
        Value::Timestamp(us) if us % MS == 0 => timestamp(*us),
        _ => return refuse(format!("the constant {v:?}")),
    })
}

#[cfg(test)]
mod tests {
    //! The emitted text for the paper's 10/20/30/40 example and issue 7's Q1, the HOP
    //! workarounds, and each refusal. `scripts/flink_check.sh` runs such scripts on Flink.
    use super::*;
    use crate::sql::{bind, parse, Plan, SchemaProvider, StartSpec};

    struct Flights;

    fn columns() -> Vec<Column> {
        vec![
            Column::new("ts", DataType::Timestamp),
            Column::new("delay", DataType::Int4),
            Column::new("distance", DataType::Int8),
            Column::new("origin", DataType::Text),
        ]
    }

    impl SchemaProvider for Flights {
        fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
            match name {
                "flights" => Some((columns(), Some(0))),
                "clicks" => Some((vec![Column::new("url", DataType::Text)], None)),
                _ => None,
            }
        }
        fn system_view(&self, _: &str) -> Option<Vec<Column>> {
            None
        }
    }

    /// The script for `sql`, planned as the executor plans it at one event per minute.
    fn export(sql: &str, slack_us: i64) -> Result<Vec<String>> {
        let stmts = parse(sql).unwrap();
        let Plan::Query(q) = bind(&stmts[0], &Flights, &[]).unwrap() else {
            panic!("{sql} is a query")
        };
        let now = 978_307_200_000_000 + 123_000_000; // 2001-01-01 00:02:03
        let resolved: Vec<(Window, Option<i64>)> = q
            .windows
            .iter()
            .map(|w| {
                // As the engine resolves START AT (session::resolve_window).
                let (start, cutoff) = match w.start {
                    StartSpec::Default => (Start::Epoch, Some(now - now % w.slide_us)),
                    StartSpec::Epoch => (Start::Epoch, None),
                    StartSpec::At(t) => (Start::At(t), None),
                };
                (Window::new(w.range_us, w.slide_us, start).unwrap(), cutoff)
            })
            .collect();
        let (windows, cutoffs): (Vec<Window>, Vec<Option<i64>>) = resolved.into_iter().unzip();
        let plan = crate::exec::plan_windows(&q, &windows, 1.0 / 60.0);
        let cols = columns();
        let (name, cols, ts_col) = match &q.source {
            Source::Stream { name, .. } if name == "clicks" => {
                (name.clone(), vec![Column::new("url", DataType::Text)], None)
            }
            Source::Stream { name, .. } => (name.clone(), cols, Some(0)),
            _ => ("join".to_string(), cols, Some(0)),
        };
        let source = FlinkSource {
            name: &name,
            columns: &cols,
            ts_col,
            slack_us,
        };
        flink_sql(&q, &source, &windows, &cutoffs, &plan)
    }

    fn refused(sql: &str) -> String {
        match export(sql, 0) {
            Err(Error::FeatureNotSupported(m)) => m,
            other => panic!("{sql}: expected 0A000, got {other:?}"),
        }
    }

    const O: &str = "START AT '2001-01-01 00:00:00'";

    /// The lines of `script` that define views or feed the sink (comments and DDL aside).
    fn body(script: &[String]) -> Vec<&str> {
        script
            .iter()
            .map(String::as_str)
            .filter(|l| l.starts_with("SELECT") || l.starts_with("WHERE") || l.starts_with("UNION"))
            .collect()
    }

    #[test]
    fn paper_10_20_30_40_cascades_along_the_min_cost_wcg() {
        let q = format!(
            "SELECT origin, wtime(*), min(delay) FROM flights [RANGE BY '10 minutes' {O}] \
             [RANGE BY '20 minutes' {O}] [RANGE BY '30 minutes' {O}] [RANGE BY '40 minutes' {O}] \
             GROUP BY origin"
        );
        let script = export(&q, 0).unwrap();
        assert_eq!(script[2], "SET 'table.local-time-zone' = 'UTC';");
        assert!(
            script.contains(&"  WATERMARK FOR `ts` AS `ts` - INTERVAL '0.001' SECOND".to_string())
        );
        let node = |from: &str, time: &str, minutes: i64, agg: &str| {
            format!(
                "SELECT window_start AS ws, window_end AS we, window_time AS rt, k0, {agg} AS m0 \
                 FROM TABLE(TUMBLE(TABLE {from}, DESCRIPTOR({time}), INTERVAL '{minutes}' MINUTE)) \
                 GROUP BY window_start, window_end, window_time, k0;"
            )
        };
        let out = |n: usize| {
            format!(
                "SELECT CAST(k0 AS STRING) AS `origin`, CAST(we AS TIMESTAMP(3)) AS `wtime`, \
                 CAST(m0 AS INT) AS `min` FROM tcq_n{n} WHERE ws >= TIMESTAMP '2001-01-01 00:00:00'"
            )
        };
        // The paper's forest: 20 <- 10, 30 <- 10, 40 <- 20 (plan order 10, 20, 40, 30).
        let expected = vec![
            "SELECT `ts`, `origin` AS k0, `delay` AS a0".to_string(),
            node("tcq_input", "`ts`", 10, "MIN(a0)"),
            node("tcq_n0", "rt", 20, "MIN(m0)"),
            node("tcq_n1", "rt", 40, "MIN(m0)"),
            node("tcq_n0", "rt", 30, "MIN(m0)"),
            out(0),
            "UNION ALL".into(),
            out(1),
            "UNION ALL".into(),
            out(3),
            "UNION ALL".into(),
            out(2) + ";",
        ];
        assert_eq!(body(&script), expected);
    }

    #[test]
    fn q1_hops_over_the_ten_minute_factor_window_and_carries_avg_as_sum_and_count() {
        let q = format!(
            "SELECT origin, wtime(*), count(*), avg(delay), max(delay) FROM flights \
             [RANGE BY '1 hour' SLIDE BY '10 minutes' {O}] GROUP BY origin"
        );
        let script = export(&q, 0).unwrap();
        let expected = vec![
            "SELECT `ts`, `origin` AS k0, `delay` AS a1, `delay` AS a2",
            "SELECT window_start AS ws, window_end AS we, window_time AS rt, k0, COUNT(*) AS c0, \
             SUM(CAST(a1 AS BIGINT)) AS s1, COUNT(a1) AS n1, MAX(a2) AS m2 FROM \
             TABLE(TUMBLE(TABLE tcq_input, DESCRIPTOR(`ts`), INTERVAL '10' MINUTE)) \
             GROUP BY window_start, window_end, window_time, k0;",
            "SELECT window_start AS ws, window_end AS we, window_time AS rt, k0, SUM(c0) AS c0, \
             SUM(s1) AS s1, SUM(n1) AS n1, MAX(m2) AS m2 FROM TABLE(HOP(TABLE tcq_n0, \
             DESCRIPTOR(rt), INTERVAL '10' MINUTE, INTERVAL '1' HOUR)) \
             GROUP BY window_start, window_end, window_time, k0;",
            "SELECT CAST(k0 AS STRING) AS `origin`, CAST(we AS TIMESTAMP(3)) AS `wtime`, \
             CAST(c0 AS BIGINT) AS `count`, CAST(CAST(s1 AS DECIMAL(20, 0)) / \
             CAST(NULLIF(n1, 0) AS DECIMAL(19, 0)) AS DECIMAL(38, 18)) AS `avg`, \
             CAST(m2 AS INT) AS `max` FROM tcq_n1 WHERE ws >= TIMESTAMP '2001-01-01 00:00:00';",
        ];
        assert_eq!(body(&script), expected);
        assert!(script.contains(&"  `avg` DECIMAL(38, 18),".to_string()));
    }

    #[test]
    fn a_hopping_parent_shifts_the_childs_window_so_it_merges_only_covering_instances() {
        // min: 10 -> <20, 10> -> factor <20, 20> -> <40, 20>. The factor window merges one
        // instance of <20, 10> (M = 1): a window of 20 - 20 + 10 = 10 minutes over rt ends
        // where the child's instance ends, and ws = we - 20 minutes; the 10-minute hop keeps
        // the 20-minute grid with the MOD filter.
        let q = format!(
            "SELECT origin, wstart(*), min(delay) FROM flights \
             [RANGE BY '20 minutes' SLIDE BY '10 minutes' {O}] \
             [RANGE BY '40 minutes' SLIDE BY '20 minutes' {O}] GROUP BY origin"
        );
        let script = export(&q, 0).unwrap();
        let b = body(&script);
        assert_eq!(
            b[3],
            "SELECT * FROM (SELECT window_end - INTERVAL '20' MINUTE AS ws, window_end AS we, \
             window_time AS rt, k0, MIN(m0) AS m0 FROM TABLE(TUMBLE(TABLE tcq_n1, DESCRIPTOR(rt), \
             INTERVAL '10' MINUTE)) GROUP BY window_start, window_end, window_time, k0)"
        );
        assert_eq!(
            b[4],
            "WHERE MOD(TIMESTAMPDIFF(MINUTE, TIMESTAMP '1970-01-01 00:00:00', ws), 20) = 0;"
        );
        assert_eq!(
            b[5],
            "SELECT window_start AS ws, window_end AS we, window_time AS rt, k0, MIN(m0) AS m0 \
             FROM TABLE(HOP(TABLE tcq_n2, DESCRIPTOR(rt), INTERVAL '20' MINUTE, INTERVAL '40' MINUTE)) \
             GROUP BY window_start, window_end, window_time, k0;"
        );
        assert!(b[6].starts_with(
            "SELECT CAST(k0 AS STRING) AS `origin`, CAST(ws AS TIMESTAMP(3)) AS `wstart`"
        ));
        assert!(b[8].ends_with("FROM tcq_n3 WHERE ws >= TIMESTAMP '2001-01-01 00:00:00';"));
    }

    #[test]
    fn ranges_that_are_not_multiples_of_the_slide_hop_by_the_gcd_and_keep_their_grid() {
        let q = "SELECT origin, wtime(*), max(delay) FROM flights \
                 [RANGE BY '25 minutes' SLIDE BY '10 minutes' START AT '2001-01-01 00:07:00'] \
                 GROUP BY origin";
        let script = export(q, 0).unwrap().join("\n");
        assert!(
            script.contains(
                "FROM TABLE(HOP(TABLE tcq_n0, DESCRIPTOR(rt), INTERVAL '5' MINUTE, \
                 INTERVAL '25' MINUTE, INTERVAL '2' MINUTE))"
            ),
            "{script}"
        );
        assert!(
            script.contains(
                "WHERE MOD(TIMESTAMPDIFF(MINUTE, TIMESTAMP '1970-01-01 00:00:00', ws), 10) = 7;"
            ),
            "{script}"
        );
        assert!(
            script.contains("WHERE ws >= TIMESTAMP '2001-01-01 00:07:00';"),
            "{script}"
        );
        // A jumping window: 5 minutes every 15.
        let q = format!(
            "SELECT origin, wtime(*), max(delay) FROM flights \
             [RANGE BY '5 minutes' SLIDE BY '15 minutes' {O}] GROUP BY origin"
        );
        let script = export(&q, 0).unwrap().join("\n");
        assert!(
            script
                .contains("TABLE(TUMBLE(TABLE tcq_input, DESCRIPTOR(`ts`), INTERVAL '5' MINUTE))"),
            "{script}"
        );
        assert!(script.contains("ws), 15) = 0;"), "{script}");
    }

    #[test]
    fn default_start_filters_from_the_submission_slide_and_epoch_does_not_filter() {
        let q = "SELECT origin, wtime(*), count(*) FROM flights [RANGE BY '10 minutes'] \
                 WHERE delay > 5 AND origin IN ('SFO', 'LAX') GROUP BY origin";
        let script = export(q, 5_000_000).unwrap().join("\n");
        assert!(
            script.contains("WHERE ws >= TIMESTAMP '2001-01-01 00:00:00';"),
            "{script}"
        );
        assert!(script.contains("WATERMARK FOR `ts` AS `ts` - INTERVAL '5.001' SECOND"));
        assert!(script.contains("WHERE ((`delay` > 5) AND (`origin` IN ('SFO', 'LAX')));"));
        let q = "SELECT origin, count(*) FROM flights [RANGE BY '10 minutes' START AT 'epoch'] \
                 GROUP BY origin HAVING count(*) > 2";
        let script = export(q, 0).unwrap().join("\n");
        assert!(script.contains("FROM tcq_n0 WHERE (c0 > 2);"), "{script}");
        assert!(!script.contains("ws >="), "{script}");
    }

    #[test]
    fn what_flink_cannot_match_is_refused() {
        let w = format!("[RANGE BY '10 minutes' {O}]");
        let cases = [
            (
                format!("SELECT count(*) FROM flights {w}"),
                "ungrouped aggregate",
            ),
            (
                format!("SELECT origin, count(DISTINCT delay) FROM flights {w} GROUP BY origin"),
                "count(DISTINCT)",
            ),
            (
                format!("SELECT origin, stddev(delay) FROM flights {w} GROUP BY origin"),
                "stddev",
            ),
            (
                format!("SELECT origin, avg(distance) FROM flights {w} GROUP BY origin"),
                "avg(bigint)",
            ),
            (
                format!("SELECT origin, count(*) FROM flights {w} GROUP BY origin LIMIT 3"),
                "LIMIT",
            ),
            (
                format!("SELECT origin, delay FROM flights {w}"),
                "without aggregates",
            ),
            (
                "SELECT origin, delay FROM flights".to_string(),
                "without a window clause",
            ),
            (
                "SELECT url, count(*) FROM clicks [RANGE BY '1 minute'] GROUP BY url".to_string(),
                "TIMESTAMPCOLUMN",
            ),
        ];
        for (sql, why) in cases {
            let m = refused(&sql);
            assert!(m.contains(why), "{sql}: {m}");
            assert!(
                m.starts_with("EXPLAIN (FORMAT FLINK) cannot express"),
                "{m}"
            );
        }
    }

    #[test]
    fn intervals_use_the_largest_unit_below_100() {
        assert_eq!(interval(90_000_000).unwrap(), "INTERVAL '90' SECOND");
        assert_eq!(interval(3_600_000_000).unwrap(), "INTERVAL '1' HOUR");
        assert_eq!(interval(1_000).unwrap(), "INTERVAL '0.001' SECOND");
        assert_eq!(
            interval(100_500_000).unwrap(),
            "INTERVAL '0 00:01:40.500' DAY TO SECOND(3)"
        );
        assert!(interval(1_500).is_err(), "sub-millisecond");
        assert!(interval(0).is_err());
    }
}
