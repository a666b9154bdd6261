//! agg (to be written).
