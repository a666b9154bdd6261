//! pgjdbc's `DatabaseMetaData` (getSchemas, getTables, getColumns, getPrimaryKeys,
//! getIndexInfo, getImportedKeys, getExportedKeys, getTypeInfo) against a real in-process
//! server: each issues pgjdbc's own catalog query, which runs on the relational engine
//! (getPrimaryKeys and getIndexInfo select `(_pg_expandarray(indkey)).n`, a field of a
//! set-returning function's records). Runs `tests/java/CatalogMetadata.java` with the
//! system's Java and pgjdbc jar; skipped, with a message, when either is missing (.ci/run
//! installs pgjdbc).

use crate::common;

#[test]
fn pgjdbc_metadata_describes_streams_tables_and_keys() {
    let port = common::start_server();
    let Some((stdout, stderr)) = common::java::run("CatalogMetadata.java", [port.to_string()])
    else {
        return;
    };
    assert_eq!(
        stdout,
        concat!(
            "schema: information_schema|null\n",
            "schema: network|null\n",
            "schema: pg_catalog|null\n",
            "schema: public|null\n",
            "table: null|network|tcpdump|FOREIGN TABLE|UNARCHIVED stream, TIMESTAMPCOLUMN at\n",
            "table: null|public|flights|FOREIGN TABLE|UNARCHIVED stream, TIMESTAMPCOLUMN ts\n",
            "table: null|public|airports|TABLE|null\n",
            "table fl%: flights|FOREIGN TABLE\n",
            "column: 1|ts|timestamp|93|29|6|0|NO|NO\n",
            "column: 2|k|varchar|12|8|0|1|YES|NO\n",
            "column: 3|v|int4|4|10|0|1|YES|NO\n",
            "column: 1|at|timestamptz|93|35|6|0|NO|NO\n",
            "column: 2|src|varchar|12|15|0|1|YES|NO\n",
            "column: 3|bytes|int8|-5|19|0|1|YES|NO\n",
            "column: 4|rtt|float8|8|17|17|1|YES|NO\n",
            "column: 5|ok|bool|-7|1|0|1|YES|NO\n",
            "column: 1|code|text|12|2147483647|0|0|NO|NO\n",
            "column: 3|city|text|12|2147483647|0|0|NO|NO\n",
            "primary key: public|airports|code|1|airports_pkey\n",
            "primary key: public|airports|terminal|2|airports_pkey\n",
            "primary key of a stream: none (6 columns)\n",
            "index: airports_city_key|f|3|1|city|A\n",
            "index: airports_pkey|f|3|1|code|A\n",
            "index: airports_pkey|f|3|2|terminal|A\n",
            "unique index: airports_city_key|city\n",
            "unique index: airports_pkey|code\n",
            "unique index: airports_pkey|terminal\n",
            "imported key: none (14 columns)\n",
            "exported key: none (14 columns)\n",
            "type info has int8: true\n",
        ),
        "stderr:\n{stderr}"
    );
}
