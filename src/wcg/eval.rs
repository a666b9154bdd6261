//! The paper's evaluation (section 5), to be written.
