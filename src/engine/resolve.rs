//! A query's window clauses resolved at registration: START AT defaults and SLACK.
//!
//! A leaf of the engine: pure functions of the window clauses, the submission time and the
//! stream's default SLACK.

use crate::error::{Error, Result};
use crate::sql::{StartSpec, WindowSpec};
use crate::window::{Start, Window};

/// Resolve a window clause: the default START AT is the submission time rounded down to a
/// multiple of the slide since the epoch (TelegraphCQ 2.1's rule).
///
/// A default START AT is run as an epoch grid shown from that instant on (the second
/// value): the results are the same, and windows with default starts share work with each
/// other as their grids are all aligned to the epoch.
pub(crate) fn resolve_window(
    spec: &WindowSpec,
    submitted_us: i64,
) -> Result<(Window, Option<i64>)> {
    let (start, cutoff) = match spec.start {
        StartSpec::Epoch => (Start::Epoch, None),
        StartSpec::At(t) => (Start::At(t), None),
        StartSpec::Default => (
            Start::Epoch,
            Some(submitted_us.div_euclid(spec.slide_us) * spec.slide_us),
        ),
    };
    let w = Window::new(spec.range_us, spec.slide_us, start)
        .map_err(|e| Error::InvalidParameterValue(e.to_string()))?;
    Ok((w, cutoff))
}

/// Windows with their display cut-off (see [`resolve_window`]).
pub(crate) type ResolvedWindows = Vec<(Window, Option<i64>)>;

/// The SLACK a query applies to one stream: the largest its window clauses over that stream
/// give, each defaulting to the stream's `WITH (slack = ...)`.
pub(crate) fn query_slack_us(windows: &[WindowSpec], stream_default_us: i64) -> i64 {
    windows
        .iter()
        .map(|w| w.slack_us.unwrap_or(stream_default_us))
        .max()
        .unwrap_or(stream_default_us)
}
