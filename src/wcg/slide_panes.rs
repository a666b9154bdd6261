//! Slide panes: one tumbling factor window per parent and slide.
//!
//! Algorithm 2 inserts at most one factor window per target, between the target and *all*
//! its downstream windows. When the windows of a set have co-prime slides (1, 7, 13, 15, 17
//! and 60 minutes), the only window every one of them is partitioned by is the pane of
//! their gcd, so each window ends up reading one-minute partials: a window sliding by `s`
//! takes in `s / g` small partials per slide event where, computed alone, it would take one
//! partial of its own slide. This step, run on the chosen forest, groups the children of
//! each node (and the windows that read raw events) by slide, and for a slide `s` larger
//! than the parent's inserts the tumbling window `<s, s>` (a factor window, never shown)
//! between the parent and the children it partitions, when the model says the group costs
//! less through it: the slide pane's own cost (`s / s'` partials merged per instance, once
//! for the whole group) plus each child's cost from one partial per slide, against the
//! children's costs from the parent. Every window of that slide then shares the slide
//! pane's partials, so the work of combining a slide's small partials grows with the
//! distinct (parent, slide) pairs, not with the windows.
//!
//! The step only lowers the forest's cost (a group moves only when it is clearly cheaper,
//! and each child only when its own edge is no dearer), so the plan it returns is never
//! costlier than the forest it is given. It runs under the priced model only
//! ([`CostModel::is_paper`] false): the paper's model and worked examples are left as the
//! paper has them.

use super::alg1::{Forest, ForestNode};
use super::cost::{at_most, clearly_less, Cost, CostModel, Source};
use super::graph::{relation_holds, Vertex};
use super::Sharing;
use crate::window::{Start, Window};

/// The slide pane for the windows `group` (one slide `s`): `<s, s>` on the epoch grid when
/// one of them is on it, else from the earliest START AT among them.
fn slide_pane(slide_us: i64, group: &[Window]) -> Window {
    let start = if group.iter().any(|w| !w.is_bounded()) {
        Start::Epoch
    } else {
        Start::At(group.iter().map(|w| w.offset_us()).min().unwrap_or(0))
    };
    Window {
        range_us: slide_us,
        slide_us,
        start,
    }
}

/// `forest` with slide panes inserted where they lower its cost (see the module docs), or
/// `None` when none does (or the model is the paper's). Node indices of `forest` are kept;
/// slide panes are appended.
pub(crate) fn slide_panes(forest: &Forest, sharing: Sharing, model: &CostModel) -> Option<Forest> {
    if model.is_paper() || sharing == Sharing::None {
        return None;
    }
    let mut f = forest.clone();
    let mut inserted = false;
    let parents: Vec<Option<usize>> = std::iter::once(None)
        .chain((0..forest.nodes.len()).map(Some))
        .collect();
    for p in parents {
        let kids: Vec<usize> = (0..f.nodes.len())
            .filter(|&c| f.nodes[c].parent == p)
            .collect();
        let mut slides: Vec<i64> = kids
            .iter()
            .map(|&c| f.nodes[c].vertex.window.slide_us)
            .collect();
        slides.sort_unstable();
        slides.dedup();
        for s in slides {
            let group: Vec<usize> = kids
                .iter()
                .copied()
                .filter(|&c| f.nodes[c].vertex.window.slide_us == s)
                .collect();
            inserted |= try_insert(&mut f, p, s, &group, sharing, model);
        }
    }
    if !inserted {
        return None;
    }
    f.total = Cost::sum(f.nodes.iter().map(|n| n.cost));
    debug_assert!(
        f.is_forest(),
        "a slide pane sits between a node and its children"
    );
    Some(f)
}

/// Insert the slide pane of slide `s` between parent `p` (`None`: raw events) and the
/// windows of `group` it partitions, if that is clearly cheaper. Returns whether it did.
fn try_insert(
    f: &mut Forest,
    p: Option<usize>,
    s: i64,
    group: &[usize],
    sharing: Sharing,
    model: &CostModel,
) -> bool {
    let up: Option<Window> = p.map(|p| f.nodes[p].vertex.window);
    if up.is_some_and(|u| s <= u.slide_us) {
        return false;
    }
    let windows: Vec<Window> = group.iter().map(|&c| f.nodes[c].vertex.window).collect();
    let pane = slide_pane(s, &windows);
    if f.nodes.iter().any(|n| n.vertex.window == pane) {
        // A window of the set already: Algorithm 1 weighed it as a parent.
        return false;
    }
    if up.is_some_and(|u| !relation_holds(sharing, &pane, &u)) {
        return false;
    }
    let movers: Vec<(usize, super::Slider, Cost)> = group
        .iter()
        .copied()
        .filter(|&c| relation_holds(sharing, &f.nodes[c].vertex.window, &pane))
        .filter_map(|c| {
            let (slider, cost) = model.best(&f.nodes[c].vertex.window, Source::Window(&pane));
            at_most(cost.per_sec, f.nodes[c].cost.per_sec).then_some((c, slider, cost))
        })
        .collect();
    if movers.is_empty() {
        return false;
    }
    let source = up.as_ref().map_or(Source::Raw, Source::Window);
    let (slider, cost) = model.best(&pane, source);
    let before: f64 = movers.iter().map(|m| f.nodes[m.0].cost.per_sec).sum();
    let after: f64 = cost.per_sec + movers.iter().map(|m| m.2.per_sec).sum::<f64>();
    if !clearly_less(after, before) {
        return false;
    }
    let at = f.nodes.len();
    f.nodes.push(ForestNode {
        vertex: Vertex {
            window: pane,
            user_windows: Vec::new(),
        },
        parent: p,
        multiplier: up.map(|u| pane.covering_multiplier(&u)),
        slider,
        cost,
    });
    for (c, slider, cost) in movers {
        let n = &mut f.nodes[c];
        n.parent = Some(at);
        n.multiplier = Some(n.vertex.window.covering_multiplier(&pane));
        n.slider = slider;
        n.cost = cost;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wcg::sliding::{Groups, Sliders, Workload};
    use crate::wcg::{optimize_for, plan_for};

    const MIN: i64 = 60_000_000;

    fn hop(r: i64, s: i64) -> Window {
        Window::new(r * MIN, s * MIN, Start::Epoch).unwrap()
    }

    fn workload(groups: Groups) -> Workload {
        Workload {
            eta_per_sec: 11.4 / 60.0,
            groups,
            sliders: Sliders {
                two_stacks: true,
                subtract: false,
            },
        }
    }

    /// Co-prime slides share only a one-minute pane; every window of slide 7, 13 or 60
    /// reads its slide's pane, one per slide, and the plan is cheaper than without.
    #[test]
    fn one_slide_pane_per_slide_feeds_every_window_of_that_slide() {
        let set = [
            hop(1, 1),
            hop(14, 7),
            hop(28, 7),
            hop(84, 7),
            hop(26, 13),
            hop(52, 13),
            hop(120, 60),
            hop(1440, 60),
        ];
        for groups in [Groups::Unknown, Groups::Estimated(229.0)] {
            let r = optimize_for(&set, Sharing::PartitionedBy, &workload(groups));
            let sp = r.slide_panes.as_ref().expect("slide panes pay here");
            assert!(clearly_less(
                sp.total.per_sec,
                r.before_slide_panes().total.per_sec
            ));
            let plan = plan_for(&set, Sharing::PartitionedBy, &workload(groups));
            for s in [7, 13, 60] {
                let at = plan
                    .nodes
                    .iter()
                    .position(|n| n.window == hop(s, s))
                    .expect("a slide pane per slide");
                assert!(plan.nodes[at].user_windows.is_empty(), "never shown");
                let root = plan.nodes[at]
                    .parent
                    .expect("read from the one-minute pane");
                assert_eq!(plan.nodes[root].window, hop(1, 1));
                let kids: Vec<Window> = plan
                    .nodes
                    .iter()
                    .filter(|n| n.parent == Some(at))
                    .map(|n| n.window)
                    .collect();
                let want: Vec<Window> = set
                    .iter()
                    .copied()
                    .filter(|w| w.slide_us == s * MIN)
                    .collect();
                assert_eq!(kids, want, "slide {s}");
            }
        }
    }

    /// A slide of the parent's own length gains nothing, and the paper's model is left
    /// alone.
    #[test]
    fn no_slide_pane_where_it_cannot_pay_or_under_the_paper_model() {
        let set = [hop(1, 1), hop(3, 1), hop(5, 1)];
        let r = optimize_for(&set, Sharing::PartitionedBy, &workload(Groups::Unknown));
        assert!(r.slide_panes.is_none());
        let set = [hop(1, 1), hop(14, 7), hop(28, 7)];
        let r = crate::wcg::optimize(&set, Sharing::PartitionedBy, 1.0);
        assert!(r.slide_panes.is_none());
    }
}
