//! exec (to be written).
