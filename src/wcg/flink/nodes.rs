//! The views of one shared plan: its input (WHERE, group keys, aggregate arguments) and one
//! view per plan node, a window aggregation over the stream or a cascading one over its
//! parent's rows; the partial aggregate columns of each state and their final values.

use super::render::{ident, interval};
use super::{refuse, Group, MS};
use crate::error::Result;
use crate::sql::AggFunc;
use crate::types::DataType;
use crate::wcg::flink_cost::{hop_for, FlinkNode};
use crate::window::{Start, Window};

/// One aggregate state of a shared plan: several queries' calls may read it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct State {
    pub(crate) func: AggFunc,
    /// The argument as Flink SQL over the stream's columns; `None` for count(*).
    pub(crate) arg: Option<String>,
    pub(crate) arg_type: DataType,
    pub(crate) distinct: bool,
}

/// A short, stable name for a window: range, slide and START AT (`r10m_s5m_at978307200`).
pub(crate) fn window_tag(w: &Window) -> String {
    fn unit(us: i64) -> String {
        for (u, n) in [
            (86_400_000_000, "d"),
            (3_600_000_000, "h"),
            (60_000_000, "m"),
            (1_000_000, "s"),
        ] {
            if us % u == 0 {
                return format!("{}{n}", us / u);
            }
        }
        format!("{}ms", us / MS)
    }
    let mut tag = format!("r{}_s{}", unit(w.range_us), unit(w.slide_us));
    if let Start::At(o) = w.start {
        if o % 1_000_000 == 0 {
            tag.push_str(&format!("_at{}", o / 1_000_000));
        } else {
            tag.push_str(&format!("_at{}ms", o.div_euclid(MS)));
        }
    }
    tag.replace('-', "m")
}

/// The partial aggregate columns of state `j`: folded from arguments (`root`) or merged
/// from the parent's partials.
pub(crate) fn partials(j: usize, s: &State, root: bool) -> Vec<String> {
    let a = format!("a{j}");
    let exact = format!("CAST({a} AS DECIMAL(38, 0))");
    let sum_arg = || match s.arg_type {
        DataType::Int2 | DataType::Int4 => format!("CAST({a} AS BIGINT)"),
        DataType::Int8 => exact.clone(),
        DataType::Float4 if s.func == AggFunc::Avg => format!("CAST({a} AS DOUBLE)"),
        _ => a.clone(),
    };
    let merge = |c: &str| format!("SUM({c}{j}) AS {c}{j}");
    use AggFunc::*;
    match (s.func, root) {
        (CountStar, true) => vec![format!("COUNT(*) AS c{j}")],
        (Count, true) if s.distinct => vec![format!("COUNT(DISTINCT {a}) AS c{j}")],
        (Count, true) => vec![format!("COUNT({a}) AS c{j}")],
        (CountStar | Count, false) => vec![merge("c")],
        (Sum, true) => vec![format!("SUM({}) AS s{j}", sum_arg())],
        (Sum, false) => vec![merge("s")],
        (Avg, true) => vec![
            format!("SUM({}) AS s{j}", sum_arg()),
            format!("COUNT({a}) AS n{j}"),
        ],
        (Avg, false) => vec![merge("s"), merge("n")],
        (Min, true) => vec![format!("MIN({a}) AS m{j}")],
        (Max, true) => vec![format!("MAX({a}) AS m{j}")],
        (Min, false) => vec![format!("MIN(m{j}) AS m{j}")],
        (Max, false) => vec![format!("MAX(m{j}) AS m{j}")],
        (StddevSamp | StddevPop | VarSamp | VarPop, true) => vec![
            format!("SUM({exact}) AS s{j}"),
            format!("SUM({exact} * {exact}) AS q{j}"),
            format!("COUNT({a}) AS n{j}"),
        ],
        (StddevSamp | StddevPop | VarSamp | VarPop, false) => {
            vec![merge("s"), merge("q"), merge("n")]
        }
        // bool_and, bool_or, and any aggregate `check_call` refuses.
        _ => unreachable!("refused by check_query"),
    }
}

/// The final value of state `j` as call `func` reads it, over a node view's partials.
pub(crate) fn finalise(j: usize, s: &State) -> String {
    // n * sum(x^2) - sum(x)^2, exact in DECIMAL(38, 0), then one rounding to DOUBLE.
    let spread = format!("CAST(n{j} * q{j} - s{j} * s{j} AS DOUBLE)");
    let samp = format!("CASE WHEN n{j} > 1 THEN {spread} / CAST(n{j} * (n{j} - 1) AS DOUBLE) END");
    let pop = format!("CASE WHEN n{j} > 0 THEN {spread} / CAST(n{j} * n{j} AS DOUBLE) END");
    match s.func {
        AggFunc::CountStar | AggFunc::Count => format!("c{j}"),
        AggFunc::Sum => format!("s{j}"),
        AggFunc::Avg => match s.arg_type {
            DataType::Float4 | DataType::Float8 => format!("s{j} / NULLIF(n{j}, 0)"),
            // DECIMAL(20, 0) / DECIMAL(19, 0) is DECIMAL(38, 18) under Flink's rules: 18
            // fractional digits, against PostgreSQL's 16 or more significant ones.
            DataType::Numeric => format!("s{j} / CAST(NULLIF(n{j}, 0) AS DECIMAL(19, 0))"),
            _ => format!("CAST(s{j} AS DECIMAL(20, 0)) / CAST(NULLIF(n{j}, 0) AS DECIMAL(19, 0))"),
        },
        AggFunc::VarSamp => samp,
        AggFunc::VarPop => pop,
        // Rounded like PostgreSQL's sqrt of the variance; never negative under the root.
        AggFunc::StddevSamp => format!("SQRT(GREATEST({samp}, 0.0))"),
        AggFunc::StddevPop => format!("SQRT(GREATEST({pop}, 0.0))"),
        _ => format!("m{j}"),
    }
}

fn grid_offset(w: &Window) -> i64 {
    match w.start {
        Start::At(o) => o,
        Start::Epoch => 0,
    }
}

/// The view of node `i` of `group`'s Flink plan.
pub(crate) fn node_view(group: &Group, i: usize) -> Result<Vec<String>> {
    let node: &FlinkNode = &group.plan.nodes[i];
    let w = &node.window;
    let parent = node.parent.map(|p| &group.plan.nodes[p].window);
    let (from, time, size) = match parent {
        None => (group.input_name(), ident(&group.ts_column), w.range_us),
        Some(pw) => (
            group.node_name(node.parent.unwrap_or(0)),
            "rt".to_string(),
            w.range_us - pw.range_us + pw.slide_us,
        ),
    };
    let comment = match parent {
        None => format!(
            "-- {}: {} over the stream ({:.3} records/s in the Flink cost model).",
            group.node_name(i),
            describe(w),
            node.cost
        ),
        Some(_) => format!(
            "-- {}: {} from {}'s rows on their window_time ({:.3} records/s; {:.3} from the stream).",
            group.node_name(i),
            describe(w),
            from,
            node.cost,
            node.stream_cost
        ),
    };
    // The TVF's instances end where the window's do: [a + range - size, a + range).
    let hop = hop_for(size, w.slide_us);
    let on_grid = hop != w.slide_us;
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
    let keys: Vec<String> = (0..group.nkeys).map(|k| format!("k{k}")).collect();
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
    for (j, s) in group.states.iter().enumerate() {
        items.extend(partials(j, s, parent.is_none()));
    }
    let mut by = vec![
        "window_start".to_string(),
        "window_end".into(),
        "window_time".into(),
    ];
    by.extend(keys);
    let select = format!(
        "SELECT {} FROM TABLE({tvf}) GROUP BY {}",
        items.join(", "),
        by.join(", ")
    );
    let mut out = vec![
        comment,
        format!("CREATE TEMPORARY VIEW {} AS", group.node_name(i)),
    ];
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
    let h = crate::time::human_interval;
    let start = match w.start {
        Start::Epoch => String::new(),
        Start::At(o) => format!(" START AT {}", crate::time::format_timestamp(o)),
    };
    format!("RANGE {} SLIDE {}{start}", h(w.range_us), h(w.slide_us))
}
