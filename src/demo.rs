//! The flights demo (to be written).
