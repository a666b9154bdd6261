//! What the export can express exactly, checked query by query; the rest is refused with
//! 0A000 and the reason (see the module header of [`super`]).

use super::{refuse, FlinkQuery, MS};
use crate::error::Result;
use crate::sql::{AggFunc, Aggregate, Source};
use crate::types::DataType;
use crate::window::Start;

/// The query's aggregate, once its shape is one the export computes exactly.
pub(crate) fn check_query<'q>(q: &FlinkQuery<'q>) -> Result<&'q Aggregate> {
    let query = q.query;
    if !matches!(query.source, Source::Stream { .. }) {
        return refuse("only a single stream's window aggregation is exported (no joins)");
    }
    if q.windows.is_empty() {
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
        check_call(c.func, c.arg_type, c.distinct)?;
    }
    if query.limit.is_some() || query.offset.is_some() || query.limit_param.is_some() {
        return refuse("LIMIT and OFFSET end a continuous query after rows in arrival order");
    }
    if q.source.ts_col.is_none() {
        return refuse(
            "the stream has no TIMESTAMPCOLUMN; windows on arrival time are not reproducible",
        );
    }
    if q.slack_us % MS != 0 {
        return refuse("the SLACK is finer than Flink's milliseconds");
    }
    for (w, c) in q.windows.iter().zip(&q.cutoffs) {
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

fn is_integer(t: DataType) -> bool {
    matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8)
}

fn check_call(func: AggFunc, arg_type: DataType, distinct: bool) -> Result<()> {
    if distinct && func != AggFunc::Count {
        return refuse(
            "DISTINCT is exported for count only (count(DISTINCT x), computed from the stream)",
        );
    }
    match func {
        AggFunc::CountStar | AggFunc::Count | AggFunc::Sum | AggFunc::Min | AggFunc::Max => {}
        AggFunc::Avg if arg_type == DataType::Int8 => {
            return refuse(
                "avg(bigint): a sum of bigints needs DECIMAL(38, 0), and Flink's division of \
                 that keeps 6 fractional digits where PostgreSQL's numeric keeps 16",
            )
        }
        AggFunc::Avg => {}
        AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
            if !is_integer(arg_type) {
                return refuse(
                    "stddev and variance are exported over integers only (exact sums of \
                     squares); over floating-point or numeric values Flink's rounding differs",
                );
            }
        }
        AggFunc::BoolAnd | AggFunc::BoolOr => {
            return refuse("bool_and, bool_or and every have no Flink aggregate")
        }
        // An aggregate is refused until it is given an export here and in `nodes.rs`.
        #[allow(unreachable_patterns)]
        _ => return refuse(format!("{func:?} has no Flink aggregate")),
    }
    Ok(())
}
