// pgjdbc against tcq with SCRAM-SHA-256 and TLS (tests/it/tls.rs runs it with the test CA it
// generates). Arguments: port, CA file, other CA file. Each case prints one line; a case
// that should fail prints the SQLSTATE (or the kind of failure) it got.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

public class TlsScram {
    static Connection open(String port, String password, String sslmode, String root)
            throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "alice");
        p.setProperty("password", password);
        p.setProperty("sslmode", sslmode);
        if (root != null) {
            p.setProperty("sslrootcert", root);
        }
        p.setProperty("connectTimeout", "20");
        return DriverManager.getConnection("jdbc:postgresql://localhost:" + port + "/tcq", p);
    }

    static String rows(Connection c, String sql) throws SQLException {
        StringBuilder out = new StringBuilder();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            int n = r.getMetaData().getColumnCount();
            while (r.next()) {
                for (int i = 1; i <= n; i++) {
                    out.append(i > 1 ? "|" : "").append(r.getString(i));
                }
                out.append(";");
            }
        }
        return out.toString();
    }

    static void failing(String label, String port, String password, String sslmode, String root) {
        try (Connection c = open(port, password, sslmode, root)) {
            System.out.println(label + ": connected (unexpected)");
        } catch (SQLException e) {
            String state = e.getSQLState();
            boolean certificate = false;
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof javax.net.ssl.SSLException) {
                    certificate = true;
                }
            }
            System.out.println(label + ": " + (certificate ? "ssl error" : state));
        }
    }

    public static void main(String[] args) throws Exception {
        String port = args[0], ca = args[1], otherCa = args[2];
        try (Connection c = open(port, "wonderland", "verify-full", ca);
                Statement s = c.createStatement()) {
            System.out.println("verify-full: " + rows(c, "SELECT current_user, 40 + 2"));
            s.execute("CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)");
        }
        // A continuous query over a TLS connection, fed from another one.
        try (Connection reader = open(port, "wonderland", "verify-full", ca);
                Connection writer = open(port, "wonderland", "require", null)) {
            final String[] got = new String[1];
            Thread t = new Thread(() -> {
                try {
                    got[0] = rows(reader, "SELECT wtime(*), count(*), sum(v) FROM s "
                            + "[RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] LIMIT 2");
                } catch (SQLException e) {
                    got[0] = "error " + e.getSQLState() + ": " + e.getMessage();
                }
            });
            t.start();
            for (int i = 0; i < 200 && rows(writer, "SELECT id FROM tcq_queries").isEmpty(); i++) {
                Thread.sleep(50);
            }
            try (Statement s = writer.createStatement()) {
                s.execute("INSERT INTO s VALUES ('2001-01-01 00:00:01', 5), "
                        + "('2001-01-01 00:00:04', 7), ('2001-01-01 00:00:12', 1), "
                        + "('2001-01-01 00:00:25', 0)");
            }
            t.join(20000);
            System.out.println("stream: " + got[0]);
        }
        // SCRAM without TLS (loopback may connect in plaintext).
        try (Connection c = open(port, "wonderland", "disable", null)) {
            System.out.println("disable: " + rows(c, "SELECT current_user, 7"));
        }
        failing("wrong password", port, "wrong", "verify-full", ca);
        failing("wrong password in plaintext", port, "wrong", "disable", null);
        failing("other CA", port, "wonderland", "verify-full", otherCa);
        System.out.println("done");
    }
}
