//! Running tcq's continuous queries on an Apache Flink cluster: [`cli`] is `tcqd flink
//! export | validate | submit | status | cancel`; [`package`] builds the runner jar that
//! carries an exported job (the SQL of [`crate::wcg::flink`]); [`rest`] talks to the
//! cluster's REST API. docs/flink.md is the deployment guide.

pub mod cli;
pub(crate) mod package;
pub(crate) mod rest;
