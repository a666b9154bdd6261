//! pgjdbc's `DatabaseMetaData` (getSchemas, getTables, getColumns, getPrimaryKeys,
//! getTypeInfo) against a real in-process server: each issues pgjdbc's own catalog query,
//! which runs on the relational engine. Runs `tests/java/CatalogMetadata.java` with the
//! system's Java and pgjdbc jar; skipped, with a message, when either is missing (.ci/run
//! installs pgjdbc).

mod common;

use std::path::Path;
use std::process::Command;

const JAR: &str = "/usr/share/java/postgresql.jar";

#[test]
fn pgjdbc_metadata_describes_streams() {
    let java = Command::new("java").arg("-version").output();
    if java.is_err() || !Path::new(JAR).exists() {
        eprintln!("SKIPPED: java or {JAR} is missing (apt-get install libpostgresql-jdbc-java)");
        return;
    }
    let port = common::start_server();
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/CatalogMetadata.java");
    let out = Command::new("java")
        .args(["-cp", JAR])
        .arg(&program)
        .arg(port.to_string())
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(
        stdout,
        "schema: information_schema\n\
         schema: pg_catalog\n\
         schema: public\n\
         table: public.flights FOREIGN TABLE\n\
         column: 1 ts timestamp 93 29 NO\n\
         column: 2 k varchar 12 8 YES\n\
         column: 3 v int4 4 10 YES\n\
         primary key columns: 0\n\
         type info has int8: true\n",
        "stderr:\n{stderr}"
    );
}
