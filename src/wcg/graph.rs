//! The window coverage graph (paper section 2.2) and its augmented form (section 4).
//!
//! One vertex per distinct window; an edge `W2 -> W1` for every `W1 <= W2`, `W1 != W2`,
//! under the relation the aggregates allow ("partitioned by" or "covered by", Theorems 5 and
//! 6). The augmented WCG adds the virtual root `S`, the raw stream on the pane grid, with an
//! edge to every window that no other window covers; it is implicit here: every vertex can
//! always be computed from raw events ([`crate::wcg::cost::Source::Raw`]), and
//! [`Wcg::roots`] lists `S`'s downstream windows.

use super::Sharing;
use crate::window::Window;

/// `w1 <= w2` under the relation of `sharing` (never for [`Sharing::None`]).
pub fn relation_holds(sharing: Sharing, w1: &Window, w2: &Window) -> bool {
    match sharing {
        Sharing::None => false,
        Sharing::PartitionedBy => w1.is_partitioned_by(w2),
        Sharing::CoveredBy => w1.is_covered_by(w2),
    }
}

/// A vertex of the WCG: a distinct window, with the user windows it computes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Vertex {
    /// The window.
    pub(crate) window: Window,
    /// Indices into the query's window list; empty for a factor window (paper Definition 6).
    pub(crate) user_windows: Vec<usize>,
}

impl Vertex {
    /// True for a factor window, whose results are never shown.
    pub(crate) fn is_factor(&self) -> bool {
        self.user_windows.is_empty()
    }
}

/// An edge `upstream -> downstream` of the WCG (`downstream <= upstream`), by vertex index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Edge {
    /// The covering window.
    pub(crate) upstream: usize,
    /// The covered window.
    pub(crate) downstream: usize,
    /// `M(downstream, upstream)` (Theorem 3).
    pub(crate) multiplier: i64,
}

/// The WCG of a window set under one relation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Wcg {
    /// The relation the edges follow.
    pub(crate) sharing: Sharing,
    /// The vertices: the query's distinct windows in order of first mention, then any factor
    /// windows.
    pub(crate) vertices: Vec<Vertex>,
    /// Every edge, ordered by downstream then upstream vertex.
    pub(crate) edges: Vec<Edge>,
}

impl Wcg {
    /// The WCG of the query's `windows` (duplicates share a vertex).
    pub(crate) fn of_query(windows: &[Window], sharing: Sharing) -> Wcg {
        let mut vertices: Vec<Vertex> = Vec::new();
        for (i, w) in windows.iter().enumerate() {
            match vertices.iter_mut().find(|v| v.window == *w) {
                Some(v) => v.user_windows.push(i),
                None => vertices.push(Vertex {
                    window: *w,
                    user_windows: vec![i],
                }),
            }
        }
        Wcg::with_vertices(vertices, sharing)
    }

    /// The WCG over the given vertices: `O(|W|^2)` relation checks (paper section 2.2).
    pub(crate) fn with_vertices(vertices: Vec<Vertex>, sharing: Sharing) -> Wcg {
        let mut edges = Vec::new();
        for (d, down) in vertices.iter().enumerate() {
            for (u, up) in vertices.iter().enumerate() {
                if u != d && relation_holds(sharing, &down.window, &up.window) {
                    let multiplier = down.window.covering_multiplier(&up.window);
                    edges.push(Edge {
                        upstream: u,
                        downstream: d,
                        multiplier,
                    });
                }
            }
        }
        Wcg {
            sharing,
            vertices,
            edges,
        }
    }

    /// The edges into vertex `v`.
    pub(crate) fn incoming(&self, v: usize) -> impl Iterator<Item = &Edge> {
        self.edges.iter().filter(move |e| e.downstream == v)
    }

    /// The vertices directly downstream of `v` (every window `v` covers).
    pub(crate) fn downstream_of(&self, v: usize) -> Vec<usize> {
        self.edges
            .iter()
            .filter(|e| e.upstream == v)
            .map(|e| e.downstream)
            .collect()
    }

    /// The downstream windows of the virtual root `S` in the augmented WCG: the vertices
    /// with no incoming edge (paper section 4, "Augmented WCG").
    pub(crate) fn roots(&self) -> Vec<usize> {
        (0..self.vertices.len())
            .filter(|&v| self.incoming(v).next().is_none())
            .collect()
    }

    /// The windows of the vertices, in vertex order.
    pub(crate) fn windows(&self) -> Vec<Window> {
        self.vertices.iter().map(|v| v.window).collect()
    }
}
