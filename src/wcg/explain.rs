//! EXPLAIN for shared window aggregation: text, JSON and Graphviz DOT with the same content.
//!
//! All three render a [`PlanReport`]: the windows (with human intervals, "RANGE 20 minutes
//! SLIDE 20 minutes"), the WCG's edges, Algorithm 1's forest and cost, the factor window
//! candidates with their pattern costs, Algorithm 2's result, the final choice, each plan
//! window's cost, and the total against the unshared baseline with the saving in percent.
//! Costs are shown in events per period `R` when `R` fits (the paper's figures) and per hour
//! of stream time (the long-run rate the optimizer ranks by). For EXPLAIN ANALYZE, an optional
//! [`Measured`] adds the executor's counters beside the model's prediction for the same span
//! of stream time.
//!
//! Names: user windows are `w1, w2, ...` after their position in the query (duplicates show
//! as `w1=w3`), factor windows `f1, f2, ...`, the virtual root `S`. The functions are pure:
//! the server decides how the lines reach the client.

use super::alg1::Forest;
use super::cost::{Cost, Source};
use super::factor::FactorSearch;
use super::graph::Vertex;
use super::report::{percent_saved, Choice, PlanReport};
use super::sliding::Slider;
use super::Sharing;
use crate::time::human_interval;
use crate::window::{Start, Window};
use std::fmt::Write as _;

/// Work the executor measured for one plan node (EXPLAIN ANALYZE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MeasuredNode {
    /// Raw tuples folded into the node's instances (roots).
    pub(crate) tuples_folded: u64,
    /// Partial aggregates of the parent merged into the node's instances (non-roots).
    pub(crate) partials_merged: u64,
}

/// Work the executor measured, per node of [`PlanReport::plan`] (same order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Measured {
    /// The stream time the counters cover, microseconds.
    pub(crate) stream_time_us: i64,
    /// One entry per plan node.
    pub(crate) nodes: Vec<MeasuredNode>,
}

impl Measured {
    /// Measured work from per-node counter slices in plan order (missing entries count 0).
    pub(crate) fn from_counters(
        stream_time_us: i64,
        tuples_folded: &[u64],
        partials_merged: &[u64],
    ) -> Measured {
        let n = tuples_folded.len().max(partials_merged.len());
        let nodes = (0..n)
            .map(|i| MeasuredNode {
                tuples_folded: tuples_folded.get(i).copied().unwrap_or(0),
                partials_merged: partials_merged.get(i).copied().unwrap_or(0),
            })
            .collect();
        Measured {
            stream_time_us,
            nodes,
        }
    }
}

/// A window as its clause: `RANGE 20 minutes SLIDE 20 minutes`, plus `START AT '...'` for a
/// grid with a first instance.
pub(crate) fn window_text(w: &Window) -> String {
    let mut s = format!(
        "RANGE {} SLIDE {}",
        human_interval(w.range_us),
        human_interval(w.slide_us)
    );
    if let Start::At(o) = w.start {
        let _ = write!(s, " START AT '{}'", crate::time::format_timestamp(o));
    }
    s
}

/// An event rate in the largest unit that shows at least one event: `"1 per minute"`.
pub(crate) fn event_rate_text(eta_per_sec: f64) -> String {
    for (secs, unit) in [(1.0, "second"), (60.0, "minute"), (3600.0, "hour")] {
        if eta_per_sec * secs >= 1.0 - 1e-9 {
            return format!("{} per {unit}", number(eta_per_sec * secs));
        }
    }
    format!("{} per day", number(eta_per_sec * 86_400.0))
}

/// A figure for humans: whole numbers without decimals, others with up to 3.
pub(crate) fn number(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if (v - v.round()).abs() <= 1e-6 * v.abs().max(1.0) {
        return format!("{}", v.round() as i128);
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn sharing_text(s: Sharing) -> &'static str {
    match s {
        Sharing::None => "none",
        Sharing::PartitionedBy => "partitioned by",
        Sharing::CoveredBy => "covered by",
    }
}

fn choice_text(c: Choice) -> &'static str {
    match c {
        Choice::Unshared => "unshared",
        Choice::Algorithm1 => "Algorithm 1",
        Choice::Algorithm2 => "Algorithm 2",
    }
}

/// Names for the nodes of `forest` (see the module docs).
fn names(forest: &Forest) -> Vec<String> {
    let mut factor = 0;
    forest
        .nodes
        .iter()
        .map(|n| vertex_name(&n.vertex, &mut factor))
        .collect()
}

fn vertex_name(v: &Vertex, factor: &mut usize) -> String {
    if v.is_factor() {
        *factor += 1;
        format!("f{factor}")
    } else {
        let ws: Vec<String> = v
            .user_windows
            .iter()
            .map(|u| format!("w{}", u + 1))
            .collect();
        ws.join("=")
    }
}

fn cost_text(c: &Cost) -> String {
    match c.per_period {
        Some(p) => format!(
            "{} events per R, {} per hour",
            number(p),
            number(c.per_hour())
        ),
        None => format!("{} events per hour", number(c.per_hour())),
    }
}

fn edge_text(forest: &Forest, names: &[String], v: usize) -> String {
    let n = &forest.nodes[v];
    match (n.parent, n.multiplier) {
        (Some(p), Some(m)) => format!("{} (M = {m})", names[p]),
        _ => "raw".to_string(),
    }
}

fn forest_lines(out: &mut Vec<String>, forest: &Forest, indent: &str) {
    let names = names(forest);
    for v in forest.topological_order() {
        let n = &forest.nodes[v];
        out.push(format!(
            "{indent}{} <- {}: {}",
            names[v],
            edge_text(forest, &names, v),
            cost_text(&n.cost)
        ));
    }
}

fn search_lines(out: &mut Vec<String>, report: &PlanReport, s: &FactorSearch) {
    let user = names(&report.unshared);
    let target = s.target.map_or("S".to_string(), |t| user[t].clone());
    let ds: Vec<&str> = s.downstream.iter().map(|&d| user[d].as_str()).collect();
    out.push(format!(
        "    target {target} (downstream {}): without a factor window {}",
        ds.join(", "),
        cost_text(&s.pattern_cost_without)
    ));
    for (i, c) in s.candidates.iter().enumerate() {
        let verdict = if s.chosen == Some(i) {
            "beneficial, chosen"
        } else if c.dominated {
            "beneficial, dominated"
        } else if c.beneficial {
            "beneficial"
        } else {
            "not beneficial"
        };
        out.push(format!(
            "      candidate {}: {} ({verdict})",
            window_text(&c.window),
            cost_text(&c.pattern_cost)
        ));
    }
    if s.truncated {
        out.push("      (candidate enumeration bounded)".to_string());
    }
}

/// The lines of EXPLAIN's `QUERY PLAN` column.
pub(crate) fn explain_text(report: &PlanReport, measured: Option<&Measured>) -> Vec<String> {
    let mut out = vec![format!(
        "Shared window aggregation (sharing: {}, event rate {})",
        sharing_text(report.sharing),
        event_rate_text(report.eta_per_sec)
    )];
    if let Some(p) = &report.pane {
        out.push(format!(
            "  Virtual root S: the raw stream on the pane grid, {}",
            window_text(p)
        ));
    }
    match report.period_us {
        // "Per R" is the paper's figure: the instances that lie within one period R
        // (n = 1 + (R - r) / s); "per hour" is the long-run rate, which counts every
        // instance and is what plans are ranked by. They differ for sliding windows.
        Some(r) => out.push(format!(
            "  Period R: {} (events per R: the paper's cost, n = 1 + (R - r) / s instances of a window in one period; per hour: the long-run rate over every instance, which ranks the plans)",
            human_interval(r)
        )),
        None => out.push("  Period R: too long to show; costs per hour".to_string()),
    }
    out.push("  Windows:".to_string());
    let user = names(&report.unshared);
    for (v, n) in report.unshared.nodes.iter().enumerate() {
        out.push(format!(
            "    {}: {}",
            user[v],
            window_text(&n.vertex.window)
        ));
    }
    let n = report.wcg.edges.len();
    let plural = if n == 1 { "" } else { "s" };
    out.push(format!("  Window coverage graph ({n} edge{plural}):"));
    for e in &report.wcg.edges {
        out.push(format!(
            "    {} <- {} (M = {})",
            user[e.downstream], user[e.upstream], e.multiplier
        ));
    }
    if report.choice != Choice::Unshared {
        out.push(format!(
            "  Algorithm 1 (min-cost WCG): {}",
            cost_text(&report.algorithm1.total)
        ));
        forest_lines(&mut out, &report.algorithm1, "    ");
    }
    if let Some(a2) = &report.algorithm2 {
        out.push("  Factor windows (Algorithm 2):".to_string());
        for s in &a2.searches {
            search_lines(&mut out, report, s);
        }
        out.push(format!(
            "  Algorithm 2 (with factor windows): {}",
            cost_text(&a2.forest.total)
        ));
        forest_lines(&mut out, &a2.forest, "    ");
    }
    out.push(format!("  Chosen: {}", choice_text(report.choice)));
    if let Some(sp) = &report.slide_panes {
        out.push(format!(
            "  Slide panes (per parent and slide, a tumbling factor window of the slide): {}",
            cost_text(&sp.total)
        ));
    }
    out.push("  Plan:".to_string());
    plan_lines(&mut out, report);
    let chosen = report.chosen();
    out.push(format!(
        "  Total: {}; unshared: {}; saving {}%",
        cost_text(&chosen.total),
        cost_text(&report.unshared.total),
        number((report.saving_percent() * 10.0).round() / 10.0)
    ));
    if let Some(m) = measured {
        measured_lines(&mut out, report, m);
    }
    out
}

fn plan_lines(out: &mut Vec<String>, report: &PlanReport) {
    let forest = report.chosen();
    let names = names(forest);
    let mut depth = vec![0usize; forest.nodes.len()];
    for v in forest.topological_order() {
        let n = &forest.nodes[v];
        if let Some(p) = n.parent {
            depth[v] = depth[p] + 1;
        }
        let factor = if n.vertex.is_factor() {
            " (factor window, not shown)"
        } else {
            ""
        };
        out.push(format!(
            "    {}{}: {}{factor} <- {}: {}{}",
            "  ".repeat(depth[v]),
            names[v],
            window_text(&n.vertex.window),
            edge_text(forest, &names, v),
            cost_text(&n.cost),
            slider_text(report, forest, v)
        ));
    }
}

/// The model cost of every aggregator the node's edge allows (empty for a root), with
/// the chosen one first: the sliding-window aggregator choice of [`super::sliding`].
pub(crate) fn slider_options(
    report: &PlanReport,
    forest: &Forest,
    v: usize,
) -> Vec<(Slider, Cost)> {
    let n = &forest.nodes[v];
    match n.parent {
        None => Vec::new(),
        Some(p) => {
            let up = &forest.nodes[p].vertex.window;
            report.model.options(&n.vertex.window, Source::Window(up))
        }
    }
}

/// `; sliding: two-stacks (panes 86400, two-stacks 180 events per hour)` for a node with a
/// parent; nothing for a root, which folds raw tuples into its instances.
fn slider_text(report: &PlanReport, forest: &Forest, v: usize) -> String {
    let options = slider_options(report, forest, v);
    if options.is_empty() {
        return String::new();
    }
    let each: Vec<String> = options
        .iter()
        .map(|(s, c)| format!("{} {}", s.name(), number(c.per_hour())))
        .collect();
    format!(
        "; sliding: {} ({} events per hour)",
        forest.nodes[v].slider.name(),
        each.join(", ")
    )
}

/// The model's prediction for `stream_time_us` of stream time, for node `v` of the chosen
/// forest: events (raw tuples or partials) it should process.
fn predicted(cost: &Cost, stream_time_us: i64) -> f64 {
    cost.per_sec * stream_time_us as f64 / 1e6
}

fn measured_lines(out: &mut Vec<String>, report: &PlanReport, m: &Measured) {
    let forest = report.chosen();
    let names = names(forest);
    out.push(format!(
        "  Measured over {} of stream time (model in brackets):",
        human_interval(m.stream_time_us)
    ));
    let (mut total, mut model) = (0u64, 0.0);
    for (i, v) in forest.topological_order().into_iter().enumerate() {
        let got = m.nodes.get(i).copied().unwrap_or_default();
        let expect = predicted(&forest.nodes[v].cost, m.stream_time_us);
        total += got.tuples_folded + got.partials_merged;
        model += expect;
        out.push(format!(
            "    {}: tuples folded {}, partials merged {} [{}]",
            names[v],
            got.tuples_folded,
            got.partials_merged,
            number(expect.round())
        ));
    }
    let base = predicted(&report.unshared.total, m.stream_time_us);
    out.push(format!(
        "    Total work {total} [{}]; unshared model {}; measured saving {}%",
        number(model.round()),
        number(base.round()),
        number((percent_saved(total as f64, base) * 10.0).round() / 10.0)
    ));
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_num(v: f64) -> String {
    if v.is_finite() {
        number(v)
    } else {
        "null".to_string()
    }
}

fn json_cost(c: &Cost) -> String {
    format!(
        "{{\"per_period\":{},\"per_hour\":{}}}",
        c.per_period.map_or("null".to_string(), json_num),
        json_num(c.per_hour())
    )
}

fn json_window(w: &Window) -> String {
    let start = match w.start {
        Start::At(o) => o.to_string(),
        Start::Epoch => "null".to_string(),
    };
    format!(
        "{{\"range_us\":{},\"slide_us\":{},\"start_us\":{start},\"text\":{}}}",
        w.range_us,
        w.slide_us,
        json_str(&window_text(w))
    )
}

fn json_forest(f: &Forest) -> String {
    let names = names(f);
    let nodes: Vec<String> = f
        .topological_order()
        .into_iter()
        .map(|v| {
            let n = &f.nodes[v];
            format!(
                "{{\"name\":{},\"window\":{},\"factor\":{},\"parent\":{},\"multiplier\":{},\"slider\":{},\"cost\":{}}}",
                json_str(&names[v]),
                json_window(&n.vertex.window),
                n.vertex.is_factor(),
                n.parent.map_or("null".to_string(), |p| json_str(&names[p])),
                n.multiplier.map_or("null".to_string(), |m| m.to_string()),
                json_str(n.slider.name()),
                json_cost(&n.cost)
            )
        })
        .collect();
    format!(
        "{{\"total\":{},\"nodes\":[{}]}}",
        json_cost(&f.total),
        nodes.join(",")
    )
}

/// Per node of the chosen plan with a parent: its aggregator and every option's cost.
fn json_sliders(report: &PlanReport) -> String {
    let f = report.chosen();
    let names = names(f);
    let nodes: Vec<String> = f
        .topological_order()
        .into_iter()
        .filter(|&v| f.nodes[v].parent.is_some())
        .map(|v| {
            let options: Vec<String> = slider_options(report, f, v)
                .iter()
                .map(|(s, c)| {
                    format!(
                        "{{\"slider\":{},\"cost\":{}}}",
                        json_str(s.name()),
                        json_cost(c)
                    )
                })
                .collect();
            format!(
                "{{\"name\":{},\"chosen\":{},\"options\":[{}]}}",
                json_str(&names[v]),
                json_str(f.nodes[v].slider.name()),
                options.join(",")
            )
        })
        .collect();
    format!("[{}]", nodes.join(","))
}

fn json_search(report: &PlanReport, s: &FactorSearch) -> String {
    let user = names(&report.unshared);
    let cands: Vec<String> = s
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                "{{\"window\":{},\"pattern_cost\":{},\"beneficial\":{},\"dominated\":{},\"chosen\":{}}}",
                json_window(&c.window),
                json_cost(&c.pattern_cost),
                c.beneficial,
                c.dominated,
                s.chosen == Some(i)
            )
        })
        .collect();
    let ds: Vec<String> = s.downstream.iter().map(|&d| json_str(&user[d])).collect();
    format!(
        "{{\"target\":{},\"downstream\":[{}],\"without_factor\":{},\"candidates\":[{}],\"truncated\":{}}}",
        json_str(&s.target.map_or("S".to_string(), |t| user[t].clone())),
        ds.join(","),
        json_cost(&s.pattern_cost_without),
        cands.join(","),
        s.truncated
    )
}

/// EXPLAIN (FORMAT JSON): one JSON object with the content of [`explain_text`].
pub(crate) fn explain_json(report: &PlanReport, measured: Option<&Measured>) -> String {
    let user = names(&report.unshared);
    let windows: Vec<String> = report
        .unshared
        .nodes
        .iter()
        .enumerate()
        .map(|(v, n)| {
            format!(
                "{{\"name\":{},\"window\":{}}}",
                json_str(&user[v]),
                json_window(&n.vertex.window)
            )
        })
        .collect();
    let edges: Vec<String> = report
        .wcg
        .edges
        .iter()
        .map(|e| {
            format!(
                "{{\"from\":{},\"to\":{},\"multiplier\":{}}}",
                json_str(&user[e.upstream]),
                json_str(&user[e.downstream]),
                e.multiplier
            )
        })
        .collect();
    let mut o = String::from("{");
    let _ = write!(o, "\"sharing\":{},", json_str(sharing_text(report.sharing)));
    let _ = write!(o, "\"event_rate_per_sec\":{},", report.eta_per_sec);
    let _ = write!(
        o,
        "\"event_rate\":{},",
        json_str(&event_rate_text(report.eta_per_sec))
    );
    let pane = report.pane.as_ref().map_or("null".to_string(), json_window);
    let _ = write!(o, "\"pane\":{pane},");
    let period = report
        .period_us
        .map_or("null".to_string(), |r| r.to_string());
    let _ = write!(o, "\"period_us\":{period},");
    let _ = write!(o, "\"windows\":[{}],", windows.join(","));
    let _ = write!(o, "\"wcg_edges\":[{}],", edges.join(","));
    let _ = write!(o, "\"unshared\":{},", json_forest(&report.unshared));
    let _ = write!(o, "\"algorithm1\":{},", json_forest(&report.algorithm1));
    match &report.algorithm2 {
        Some(a2) => {
            let s: Vec<String> = a2.searches.iter().map(|s| json_search(report, s)).collect();
            let _ = write!(o, "\"factor_searches\":[{}],", s.join(","));
            let _ = write!(o, "\"algorithm2\":{},", json_forest(&a2.forest));
        }
        None => o.push_str("\"factor_searches\":[],\"algorithm2\":null,"),
    }
    let _ = write!(o, "\"choice\":{},", json_str(choice_text(report.choice)));
    let slide_panes = report
        .slide_panes
        .as_ref()
        .map_or("null".to_string(), json_forest);
    let _ = write!(o, "\"slide_panes\":{slide_panes},");
    let _ = write!(o, "\"plan\":{},", json_forest(report.chosen()));
    let _ = write!(o, "\"sliders\":{},", json_sliders(report));
    let _ = write!(
        o,
        "\"saving_percent\":{}",
        json_num(report.saving_percent())
    );
    if let Some(m) = measured {
        let nodes: Vec<String> = m
            .nodes
            .iter()
            .map(|n| {
                format!(
                    "{{\"tuples_folded\":{},\"partials_merged\":{}}}",
                    n.tuples_folded, n.partials_merged
                )
            })
            .collect();
        let _ = write!(
            o,
            ",\"measured\":{{\"stream_time_us\":{},\"nodes\":[{}]}}",
            m.stream_time_us,
            nodes.join(",")
        );
    }
    o.push('}');
    o
}

/// A DOT string literal; line breaks become Graphviz's `\n`.
fn dot_str(s: &str) -> String {
    let escaped = s
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("\"{escaped}\"")
}

/// EXPLAIN (FORMAT DOT): the chosen forest as a Graphviz digraph. User windows are
/// ellipses, factor windows grey dashed boxes, the virtual root `S` a box; chosen edges are
/// solid and labelled with `M`, WCG edges the plan does not use are dotted.
pub(crate) fn explain_dot(report: &PlanReport, measured: Option<&Measured>) -> String {
    let forest = report.chosen();
    let names = names(forest);
    let order = forest.topological_order();
    let mut o = String::from("digraph wcg {\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];\n");
    let pane = report
        .pane
        .as_ref()
        .map_or(String::new(), |p| format!("\n{}", window_text(p)));
    let _ = writeln!(
        o,
        "  S [label={}, shape=box];",
        dot_str(&format!("S (raw stream){pane}"))
    );
    for (i, &v) in order.iter().enumerate() {
        let n = &forest.nodes[v];
        let mut label = format!(
            "{}\n{}\n{}",
            names[v],
            window_text(&n.vertex.window),
            cost_text(&n.cost)
        );
        if n.parent.is_some() {
            let _ = write!(label, "\nsliding: {}", n.slider.name());
        }
        if let Some(m) = measured.and_then(|m| m.nodes.get(i)) {
            let _ = write!(
                label,
                "\nmeasured: {} tuples, {} partials",
                m.tuples_folded, m.partials_merged
            );
        }
        let style = if n.vertex.is_factor() {
            "shape=box, style=\"dashed,filled\", fillcolor=lightgrey"
        } else {
            "shape=ellipse"
        };
        let _ = writeln!(
            o,
            "  {} [label={}, {style}];",
            dot_str(&names[v]),
            dot_str(&label)
        );
    }
    for &v in &order {
        let n = &forest.nodes[v];
        match (n.parent, n.multiplier) {
            (Some(p), Some(m)) => {
                let _ = writeln!(
                    o,
                    "  {} -> {} [label=\"M = {m}\"];",
                    dot_str(&names[p]),
                    dot_str(&names[v])
                );
            }
            _ => {
                let _ = writeln!(o, "  S -> {} [label=\"raw\"];", dot_str(&names[v]));
            }
        }
    }
    // WCG edges between user windows that the plan does not use.
    let user_node = |u: usize| {
        forest
            .nodes
            .iter()
            .position(|n| n.vertex == report.wcg.vertices[u])
    };
    for e in &report.wcg.edges {
        let (Some(up), Some(down)) = (user_node(e.upstream), user_node(e.downstream)) else {
            continue;
        };
        if forest.nodes[down].parent != Some(up) {
            let _ = writeln!(
                o,
                "  {} -> {} [style=dotted, color=gray, label=\"M = {}\"];",
                dot_str(&names[up]),
                dot_str(&names[down]),
                e.multiplier
            );
        }
    }
    let caption = format!(
        "{}: total {}; unshared {}; saving {}%",
        choice_text(report.choice),
        cost_text(&forest.total),
        cost_text(&report.unshared.total),
        number((report.saving_percent() * 10.0).round() / 10.0)
    );
    let _ = writeln!(o, "  label={};\n  labelloc=b;", dot_str(&caption));
    o.push_str("}\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wcg::optimize;

    const MIN: i64 = 60_000_000;

    fn tumbling(m: i64) -> Window {
        Window::new(m * MIN, m * MIN, Start::Epoch).unwrap()
    }

    #[test]
    fn intervals_and_rates_read_like_sql() {
        assert_eq!(human_interval(20 * MIN), "20 minutes");
        assert_eq!(human_interval(90 * MIN), "1 hour 30 minutes");
        assert_eq!(human_interval(1_500), "1 millisecond 500 microseconds");
        assert_eq!(human_interval(2 * 86_400_000_000), "2 days");
        assert_eq!(
            window_text(&tumbling(20)),
            "RANGE 20 minutes SLIDE 20 minutes"
        );
        assert_eq!(event_rate_text(1.0 / 60.0), "1 per minute");
        assert_eq!(event_rate_text(100.0), "100 per second");
        assert_eq!(number(68.75), "68.75");
        assert_eq!(number(150.000000001), "150");
    }

    #[test]
    fn example_7_text_json_and_dot_tell_the_same_story() {
        let r = optimize(
            &[20, 30, 40].map(tumbling),
            Sharing::PartitionedBy,
            1.0 / 60.0,
        );
        let text = explain_text(&r, None);
        let joined = text.join("\n");
        for needle in [
            "event rate 1 per minute",
            "Period R: 2 hours",
            "w3 <- w1 (M = 2)",
            "Algorithm 1 (min-cost WCG): 246 events per R",
            "target S (downstream w1, w2): without a factor window 240 events per R",
            "candidate RANGE 10 minutes SLIDE 10 minutes: 144 events per R, 72 per hour (beneficial, chosen)",
            "Algorithm 2 (with factor windows): 150 events per R",
            "Chosen: Algorithm 2",
            "f1: RANGE 10 minutes SLIDE 10 minutes (factor window, not shown) <- raw: 120 events per R",
            "w1: RANGE 20 minutes SLIDE 20 minutes <- f1 (M = 2): 12 events per R",
            "w3: RANGE 40 minutes SLIDE 40 minutes <- w1 (M = 2): 6 events per R",
            "Total: 150 events per R, 75 per hour; unshared: 360 events per R, 180 per hour; saving 58.3%",
        ] {
            assert!(joined.contains(needle), "missing {needle:?} in\n{joined}");
        }
        let json = explain_json(&r, None);
        assert!(json.contains("\"choice\":\"Algorithm 2\""), "{json}");
        assert!(json.contains("\"per_period\":150,"), "{json}");
        assert!(json.contains("\"name\":\"f1\""));
        let dot = explain_dot(&r, None);
        assert!(dot.contains("\"f1\" -> \"w1\" [label=\"M = 2\"]"), "{dot}");
        assert!(dot.contains("S -> \"f1\" [label=\"raw\"]"), "{dot}");
        assert!(dot.contains("fillcolor=lightgrey"));
        assert!(dot.contains("label=\"w1\\nRANGE 20 minutes SLIDE 20 minutes\\n12 events per R"));
    }

    #[test]
    fn explain_analyze_shows_measured_work_beside_the_model() {
        let r = optimize(&[10, 20].map(tumbling), Sharing::PartitionedBy, 1.0 / 60.0);
        let m = Measured::from_counters(120 * MIN, &[120, 0], &[0, 12]);
        let text = explain_text(&r, Some(&m)).join("\n");
        assert!(
            text.contains("Measured over 2 hours of stream time"),
            "{text}"
        );
        assert!(
            text.contains("w1: tuples folded 120, partials merged 0 [120]"),
            "{text}"
        );
        assert!(
            text.contains("w2: tuples folded 0, partials merged 12 [12]"),
            "{text}"
        );
        assert!(text.contains("Total work 132 [132]; unshared model 240; measured saving 45%"));
        assert!(explain_json(&r, Some(&m)).contains("\"partials_merged\":12"));
        assert!(explain_dot(&r, Some(&m)).contains("measured: 120 tuples"));
    }
}
