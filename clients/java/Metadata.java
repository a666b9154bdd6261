/*
 * tcq's streams through pgjdbc's DatabaseMetaData: getSchemas, getTables and getColumns, as
 * a JDBC tool (DBeaver, DataGrip, a schema browser) lists them. Each call runs pgjdbc's own
 * catalog queries (joins over pg_namespace, pg_class, pg_attribute, pg_type, pg_description)
 * and the program asserts exact values.
 *
 * Build and run (with tcqd serving on 127.0.0.1:5433):
 *
 *     javac -cp /usr/share/java/postgresql.jar -d /tmp/tcq-java clients/java/Metadata.java
 *     java -cp /tmp/tcq-java:/usr/share/java/postgresql.jar Metadata [port]
 *
 * What it expects, beyond what PostgreSQL itself would answer for two tables:
 * - A stream is a relation whose pgjdbc TABLE_TYPE is STREAM_TABLE_TYPE below: "FOREIGN
 *   TABLE", i.e. relkind 'f' (a foreign table whose options give the TIMESTAMPCOLUMN and the
 *   stream type). Change that one constant if streams are listed with another relkind.
 * - A stream's comment (REMARKS) gives its type and its TIMESTAMPCOLUMN, which is NOT NULL
 *   while its other columns are nullable.
 * - The schemas are those of PostgreSQL (information_schema, pg_catalog, public) plus one
 *   per schema that a stream's qualified name creates (network), and nothing else.
 *
 * It prints "metadata: ok" and exits 0 when every value matches, and otherwise names the
 * first value that differs and exits 1.
 */

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

public final class Metadata {
    /** pgjdbc's TABLE_TYPE for relkind 'f'. */
    static final String STREAM_TABLE_TYPE = "FOREIGN TABLE";

    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 5433;
        String url = "jdbc:postgresql://127.0.0.1:" + port + "/tcq?user=tcq";
        try (Connection conn = DriverManager.getConnection(url)) {
            try (Statement st = conn.createStatement()) {
                st.execute("DROP STREAM IF EXISTS flights");
                st.execute("DROP STREAM IF EXISTS network.tcpdump");
                st.execute("CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer,"
                        + " distance integer, origin text, destination text)");
                st.execute("CREATE STREAM network.tcpdump (at timestamptz TIMESTAMPCOLUMN,"
                        + " src varchar(15), bytes bigint, rtt double precision, ok boolean)");
            }
            DatabaseMetaData md = conn.getMetaData();
            schemas(md);
            tables(md);
            columns(md);
        }
        System.out.println("metadata: ok");
    }

    static void schemas(DatabaseMetaData md) throws Exception {
        List<String> got = new ArrayList<>();
        try (ResultSet rs = md.getSchemas()) {
            while (rs.next()) {
                expect("getSchemas TABLE_CATALOG", null, rs.getString("TABLE_CATALOG"));
                got.add(rs.getString("TABLE_SCHEM"));
            }
        }
        expect("getSchemas", Arrays.asList("information_schema", "network", "pg_catalog", "public"), got);
    }

    static void tables(DatabaseMetaData md) throws Exception {
        // Every schema but the system ones: the two streams, ordered by type, schema, name.
        List<String> got = new ArrayList<>();
        try (ResultSet rs = md.getTables(null, null, "%", new String[] {STREAM_TABLE_TYPE})) {
            while (rs.next()) {
                got.add(rs.getString("TABLE_CAT") + "|" + rs.getString("TABLE_SCHEM") + "|"
                        + rs.getString("TABLE_NAME") + "|" + rs.getString("TABLE_TYPE") + "|"
                        + rs.getString("REMARKS"));
            }
        }
        expect("getTables", Arrays.asList(
                "null|network|tcpdump|" + STREAM_TABLE_TYPE + "|UNARCHIVED stream, TIMESTAMPCOLUMN at",
                "null|public|flights|" + STREAM_TABLE_TYPE + "|UNARCHIVED stream, TIMESTAMPCOLUMN ts"), got);
        // A name pattern in one schema, all types: the stream alone.
        got.clear();
        try (ResultSet rs = md.getTables(null, "public", "fl%", null)) {
            while (rs.next()) {
                got.add(rs.getString("TABLE_NAME") + "|" + rs.getString("TABLE_TYPE"));
            }
        }
        expect("getTables public fl%", List.of("flights|" + STREAM_TABLE_TYPE), got);
    }

    /** SCHEMA|TABLE|COLUMN|DATA_TYPE|TYPE_NAME|COLUMN_SIZE|DECIMAL_DIGITS|NULLABLE|ORDINAL|IS_NULLABLE|IS_AUTOINCREMENT */
    static String column(ResultSet rs) throws Exception {
        return rs.getString("TABLE_SCHEM") + "|" + rs.getString("TABLE_NAME") + "|"
                + rs.getString("COLUMN_NAME") + "|" + rs.getInt("DATA_TYPE") + "|"
                + rs.getString("TYPE_NAME") + "|" + rs.getInt("COLUMN_SIZE") + "|"
                + rs.getInt("DECIMAL_DIGITS") + "|" + rs.getInt("NULLABLE") + "|"
                + rs.getInt("ORDINAL_POSITION") + "|" + rs.getString("IS_NULLABLE") + "|"
                + rs.getString("IS_AUTOINCREMENT");
    }

    static void columns(DatabaseMetaData md) throws Exception {
        int notNull = DatabaseMetaData.columnNoNulls;
        int nullable = DatabaseMetaData.columnNullable;
        List<String> got = new ArrayList<>();
        try (ResultSet rs = md.getColumns(null, "public", "flights", "%")) {
            while (rs.next()) {
                got.add(column(rs));
            }
        }
        expect("getColumns flights", Arrays.asList(
                "public|flights|ts|" + Types.TIMESTAMP + "|timestamp|29|6|" + notNull + "|1|NO|NO",
                "public|flights|delay|" + Types.INTEGER + "|int4|10|0|" + nullable + "|2|YES|NO",
                "public|flights|distance|" + Types.INTEGER + "|int4|10|0|" + nullable + "|3|YES|NO",
                "public|flights|origin|" + Types.VARCHAR + "|text|2147483647|0|" + nullable + "|4|YES|NO",
                "public|flights|destination|" + Types.VARCHAR + "|text|2147483647|0|" + nullable + "|5|YES|NO"),
                got);
        got.clear();
        try (ResultSet rs = md.getColumns(null, "network", "tcpdump", "%")) {
            while (rs.next()) {
                got.add(column(rs));
            }
        }
        expect("getColumns network.tcpdump", Arrays.asList(
                "network|tcpdump|at|" + Types.TIMESTAMP + "|timestamptz|35|6|" + notNull + "|1|NO|NO",
                "network|tcpdump|src|" + Types.VARCHAR + "|varchar|15|0|" + nullable + "|2|YES|NO",
                "network|tcpdump|bytes|" + Types.BIGINT + "|int8|19|0|" + nullable + "|3|YES|NO",
                "network|tcpdump|rtt|" + Types.DOUBLE + "|float8|17|17|" + nullable + "|4|YES|NO",
                "network|tcpdump|ok|" + Types.BIT + "|bool|1|0|" + nullable + "|5|YES|NO"),
                got);
        // A column name pattern.
        got.clear();
        try (ResultSet rs = md.getColumns(null, "public", "flights", "d%")) {
            while (rs.next()) {
                got.add(rs.getString("COLUMN_NAME"));
            }
        }
        expect("getColumns flights d%", Arrays.asList("delay", "distance", "destination"), got);
    }

    static void expect(String what, Object expected, Object actual) {
        if (!Objects.equals(expected, actual)) {
            System.out.println(what + ":\n  expected " + expected + "\n  actual   " + actual);
            System.exit(1);
        }
    }
}
