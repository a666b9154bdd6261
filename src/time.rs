//! Timestamps and intervals (to be written).
