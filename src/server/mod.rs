//! server (to be written).
