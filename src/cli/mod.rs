//! The `tcqd` subcommands that drive the library from outside, as a client or a harness
//! would: `tcqd demo` (the flights through a live server) and `tcqd paper` (the WCG paper's
//! evaluation). They use only the library's public API.

pub(crate) mod demo;
pub(crate) mod paper;
