//! Scalar expression evaluation (to be written).
