import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;

/**
 * pgjdbc's DatabaseMetaData over tcq's catalogs, as a JDBC tool (DBeaver, DataGrip, a schema
 * browser) calls it: the schemas (one per schema a stream's qualified name creates), the
 * streams (foreign tables, whose REMARKS give the stream type and TIMESTAMPCOLUMN) and a
 * stored table, their columns with JDBC types, sizes and nullability, a stored table's
 * primary key (getPrimaryKeys), its indexes (getIndexInfo) and its (absent) foreign keys
 * (getImportedKeys, getExportedKeys), and the type list. Each call runs pgjdbc's own
 * catalog query on tcq's relational engine. Prints one line per row;
 * tests/it/clients_jdbc_catalog.rs asserts the output exactly.
 *
 * Run: java -cp /usr/share/java/postgresql.jar tests/java/CatalogMetadata.java PORT
 */
public class CatalogMetadata {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/tcq?user=tcq";
        try (Connection c = DriverManager.getConnection(url)) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, k varchar(8), v integer)");
                st.execute("CREATE STREAM network.tcpdump (at timestamptz TIMESTAMPCOLUMN,"
                    + " src varchar(15), bytes bigint, rtt double precision, ok boolean)");
                st.execute("CREATE TABLE airports (code text, terminal int, city text NOT NULL,"
                    + " PRIMARY KEY (code, terminal), UNIQUE (city))");
            }
            DatabaseMetaData m = c.getMetaData();
            print("schema", m.getSchemas(), "TABLE_SCHEM", "TABLE_CATALOG");
            print("table", m.getTables(null, null, "%", new String[] {"FOREIGN TABLE", "TABLE"}),
                "TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS");
            print("table fl%", m.getTables(null, "public", "fl%", null), "TABLE_NAME", "TABLE_TYPE");
            String[] column = {"ORDINAL_POSITION", "COLUMN_NAME", "TYPE_NAME", "DATA_TYPE",
                "COLUMN_SIZE", "DECIMAL_DIGITS", "NULLABLE", "IS_NULLABLE", "IS_AUTOINCREMENT"};
            print("column", m.getColumns(null, null, "flights", "%"), column);
            print("column", m.getColumns(null, "network", "tcpdump", "%"), column);
            print("column", m.getColumns(null, "public", "airports", "c%"), column);
            print("primary key", m.getPrimaryKeys(null, null, "airports"),
                "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME");
            print("primary key of a stream", m.getPrimaryKeys(null, null, "flights"), "COLUMN_NAME");
            print("index", m.getIndexInfo(null, "public", "airports", false, false),
                "INDEX_NAME", "NON_UNIQUE", "TYPE", "ORDINAL_POSITION", "COLUMN_NAME", "ASC_OR_DESC");
            print("unique index", m.getIndexInfo(null, "public", "airports", true, false),
                "INDEX_NAME", "COLUMN_NAME");
            print("imported key", m.getImportedKeys(null, "public", "airports"), "FKCOLUMN_NAME");
            print("exported key", m.getExportedKeys(null, "public", "airports"), "PKCOLUMN_NAME");
            boolean int8 = false;
            try (ResultSet r = m.getTypeInfo()) {
                while (r.next()) {
                    int8 |= r.getString("TYPE_NAME").equals("int8");
                }
            }
            System.out.println("type info has int8: " + int8);
        }
    }

    /** One line per row: `what: v1|v2|...` of the named columns; `what: none` for no rows. */
    static void print(String what, ResultSet r, String... columns) throws Exception {
        try (r) {
            ResultSetMetaData md = r.getMetaData();
            boolean any = false;
            while (r.next()) {
                any = true;
                StringBuilder line = new StringBuilder(what + ":");
                for (int i = 0; i < columns.length; i++) {
                    line.append(i == 0 ? " " : "|").append(r.getString(columns[i]));
                }
                System.out.println(line);
            }
            if (!any) {
                System.out.println(what + ": none (" + md.getColumnCount() + " columns)");
            }
        }
    }
}
