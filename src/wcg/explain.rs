//! EXPLAIN renderers, to be written.
