import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;

/**
 * pgjdbc's DatabaseMetaData over tcq's catalogs: the schemas, the streams (foreign
 * tables), a stream's columns with their JDBC types, its (absent) primary key, and the
 * type list. Prints what each call returns; tests/clients_jdbc_catalog.rs asserts it.
 *
 * Run: java -cp /usr/share/java/postgresql.jar tests/java/CatalogMetadata.java PORT
 */
public class CatalogMetadata {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/tcq?user=tcq";
        try (Connection c = DriverManager.getConnection(url)) {
            c.createStatement().execute(
                "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, k varchar(8), v integer)");
            DatabaseMetaData m = c.getMetaData();
            try (ResultSet r = m.getSchemas()) {
                while (r.next()) {
                    System.out.println("schema: " + r.getString("TABLE_SCHEM"));
                }
            }
            try (ResultSet r = m.getTables(null, "public", "%", null)) {
                while (r.next()) {
                    System.out.println("table: " + r.getString("TABLE_SCHEM") + "."
                        + r.getString("TABLE_NAME") + " " + r.getString("TABLE_TYPE"));
                }
            }
            try (ResultSet r = m.getColumns(null, null, "flights", "%")) {
                while (r.next()) {
                    System.out.println("column: " + r.getInt("ORDINAL_POSITION") + " "
                        + r.getString("COLUMN_NAME") + " " + r.getString("TYPE_NAME") + " "
                        + r.getInt("DATA_TYPE") + " " + r.getInt("COLUMN_SIZE") + " "
                        + r.getString("IS_NULLABLE"));
                }
            }
            int keys = 0;
            try (ResultSet r = m.getPrimaryKeys(null, null, "flights")) {
                while (r.next()) {
                    keys++;
                }
            }
            System.out.println("primary key columns: " + keys);
            boolean int8 = false;
            try (ResultSet r = m.getTypeInfo()) {
                while (r.next()) {
                    int8 |= r.getString("TYPE_NAME").equals("int8");
                }
            }
            System.out.println("type info has int8: " + int8);
        }
    }
}
