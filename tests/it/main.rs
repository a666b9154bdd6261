//! tcq's integration tests, in one binary so that `cargo test` links one executable
//! instead of one per file. Each module talks to a real server over a real socket (an
//! in-process engine on 127.0.0.1:0, or a `tcqd` child process where a restart or the
//! command line matters); `cargo test --test it MODULE::` runs one module.

mod common;

mod archive;
mod auth;
mod bad_input_corpus;
mod catalog_sql;
mod clients_java;
mod clients_jdbc_catalog;
mod clients_node;
mod clients_python;
mod clients_rust;
mod console;
mod console_browser;
mod copy_binary;
mod copy_pg_rules;
mod copy_properties;
mod copy_session;
mod data_dir;
mod derived_streams;
mod differential;
mod exec_columnar;
mod exec_shared_vs_alone;
mod fds;
mod flink_export;
mod input_rules;
mod join_differential;
mod joins;
mod limits;
mod load;
mod memory_budget;
mod messages;
mod numeric_typmod;
mod pg_differential;
mod pg_rules;
mod protocol_attacks;
mod psql_regress;
mod regress;
mod result_blocks;
mod roles;
mod semantics;
mod server_protocol;
mod session_state;
mod share_properties;
mod share_wire;
mod shutdown;
mod sinks;
mod sinks_kafka;
mod slack;
mod slow_subscribers;
mod sources_docs;
mod sources_file;
mod sources_http;
mod sources_kafka;
mod sources_mqtt;
mod startup_errors;
mod stream_table_joins;
mod table_join_differential;
mod tables;
mod test_script;
mod tls;
mod wcg_properties;
mod wcg_semantics;
mod wcg_wire;
