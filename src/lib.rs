//! tcq: a continuous query server in the line of Berkeley's TelegraphCQ.
//!
//! Clients speak the PostgreSQL wire protocol. They declare streams, push tuples with INSERT
//! or COPY, and register continuous SELECTs whose FROM clause carries
//! `[RANGE BY ... SLIDE BY ... START AT ...]` window clauses. Aggregates over several
//! correlated windows share sub-aggregates along a min-cost window coverage graph (WCG).
//!
//! The modules follow the pipeline: [`sql`] turns text into a [`sql::Plan`]; [`wcg`] turns a
//! set of windows into a shared plan; [`exec`] runs it over batches of tuples; [`engine`]
//! ties catalog, sessions and execution together; `table` stores tables' rows; `server`
//! speaks the wire protocol and calls only [`engine`]; [`http`] serves the web console and
//! `/metrics` over the same public surface. `password` holds stored password verifiers,
//! which the engine's roles keep and the server's SCRAM exchange checks.

#![deny(missing_docs)]

pub mod agg;
mod connect;
mod date;
pub mod engine;
mod error;
pub mod exec;
pub mod expr;
mod expr_datetime;
mod expr_format;
mod expr_format_parse;
mod expr_funcs;
mod expr_funcs_misc;
mod expr_quantified;
mod expr_regex;
pub(crate) mod expr_regexp15;
pub(crate) mod expr_trig;
pub(crate) mod expr_units;
pub mod flink;
pub mod http;
mod numeric_math;
mod password;
pub mod server;
pub mod sql;
mod table;
pub mod time;
pub mod types;
mod types_wide;
mod tz;
pub mod wcg;
pub mod window;

pub use error::{Error, Result};
