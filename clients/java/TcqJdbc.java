/*
 * tcq from Java with pgjdbc: every way pgjdbc has to ingest and to read a continuous query's
 * rows as they arrive, and cancelling one.
 *
 * Build and run (with tcqd serving on 127.0.0.1:5433, e.g. `cargo run --release`; the driver
 * is Debian's libpostgresql-jdbc-java, or any pgjdbc 42.x jar):
 *
 *     javac -cp /usr/share/java/postgresql.jar -d /tmp/tcq-java clients/java/TcqJdbc.java
 *     java -cp /tmp/tcq-java:/usr/share/java/postgresql.jar TcqJdbc [port]
 *
 * For each streaming API (CopyManager.copyOut over COPY (SELECT ...) TO STDOUT, and a
 * ResultSet read through a server-side cursor: autocommit off and setFetchSize) the program
 * creates a stream, starts the query
 * `SELECT k, count(*), sum(v), wtime(*) ... [RANGE BY '10 seconds'] GROUP BY k ... LIMIT 3`
 * on its own connection, waits until tcq lists it in tcq_queries, then sends three tuples by
 * CopyManager.copyIn and two by a batched PreparedStatement INSERT. Each API prints the same
 * three rows: the window ending at :10 holds a (2 tuples, sum 4) and b (1, 2); the one ending
 * at :20 holds a (1, 10); the tuple at :25 closes it. Then a query without LIMIT is cancelled
 * with Statement.cancel(), which ends it with SQLSTATE 57014.
 */

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import org.postgresql.copy.CopyOut;

public final class TcqJdbc {
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    /** The bulk tuples, as COPY text lines: ts, k, v. */
    private static final String BULK =
            "2001-01-01 00:00:01\ta\t1\n"
            + "2001-01-01 00:00:03\tb\t2\n"
            + "2001-01-01 00:00:05\ta\t3\n";

    private static String url;

    private interface Reader {
        void read(Connection conn, String sql, List<String> out) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 5433;
        url = "jdbc:postgresql://127.0.0.1:" + port + "/tcq?user=tcq&ApplicationName=tcq-jdbc";
        try (Connection admin = DriverManager.getConnection(url)) {
            run(admin, "copy_out", TcqJdbc::readCopyOut);
            run(admin, "fetch_size", TcqJdbc::readFetchSize);
            run(admin, "live_binary", TcqJdbc::readLiveBinary);
            cancel(admin);
        }
        System.out.println("done");
    }

    static String query(String stream) {
        return "SELECT k, count(*), sum(v), wtime(*) FROM " + stream
                + " [RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k ORDER BY k LIMIT 3";
    }

    static long queries(Connection admin) throws SQLException {
        try (Statement st = admin.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM tcq_queries")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Wait until tcq lists more than `before` continuous queries: the reader's is installed. */
    static void waitForQuery(Connection admin, long before) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (queries(admin) <= before) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the continuous query did not start");
            }
            Thread.sleep(20);
        }
    }

    /** Three tuples by CopyManager.copyIn, then two by a batched PreparedStatement INSERT. */
    static void ingest(Connection admin, String stream) throws Exception {
        CopyManager copy = admin.unwrap(PGConnection.class).getCopyAPI();
        long copied = copy.copyIn("COPY " + stream + " (ts, k, v) FROM STDIN", new StringReader(BULK));
        if (copied != 3) {
            throw new IllegalStateException("copyIn reported " + copied + " rows, not 3");
        }
        try (PreparedStatement ps =
                admin.prepareStatement("INSERT INTO " + stream + " (ts, k, v) VALUES (?, ?, ?)")) {
            ps.setObject(1, LocalDateTime.of(2001, 1, 1, 0, 0, 12));
            ps.setString(2, "a");
            ps.setInt(3, 10);
            ps.addBatch();
            ps.setObject(1, LocalDateTime.of(2001, 1, 1, 0, 0, 25));
            ps.setString(2, "z");
            ps.setInt(3, 0);
            ps.addBatch();
            int[] counts = ps.executeBatch();
            if (counts.length != 2 || counts[0] != 1 || counts[1] != 1) {
                throw new IllegalStateException("executeBatch counts " + java.util.Arrays.toString(counts));
            }
        }
    }

    /** Start `reader` on its own connection, feed the stream, print what the reader read. */
    static void run(Connection admin, String name, Reader reader) throws Exception {
        String stream = "jdbc_" + name;
        try (Statement st = admin.createStatement()) {
            st.execute("DROP STREAM IF EXISTS " + stream);
            st.execute("CREATE STREAM " + stream + " (ts timestamp TIMESTAMPCOLUMN, k text, v integer)");
        }
        long before = queries(admin);
        List<String> lines = new ArrayList<>();
        AtomicReference<Exception> error = new AtomicReference<>();
        Thread thread = new Thread(() -> {
            try (Connection conn = DriverManager.getConnection(url)) {
                reader.read(conn, query(stream), lines);
            } catch (Exception e) {
                error.set(e);
            }
        });
        thread.start();
        waitForQuery(admin, before);
        ingest(admin, stream);
        thread.join(10_000);
        if (thread.isAlive()) {
            throw new IllegalStateException(name + ": the reader did not end");
        }
        if (error.get() != null) {
            throw new IllegalStateException(name + ": " + error.get(), error.get());
        }
        // LIMIT, and closing the portal, end the continuous query on the server.
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (queries(admin) != before) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(name + ": the continuous query did not end");
            }
            Thread.sleep(20);
        }
        for (String line : lines) {
            System.out.println(name + ": " + line);
        }
        System.out.flush();
    }

    /** CopyManager.copyOut: one row per readFromCopy(), as PostgreSQL sends them. */
    static void readCopyOut(Connection conn, String sql, List<String> out) throws Exception {
        CopyManager copy = conn.unwrap(PGConnection.class).getCopyAPI();
        CopyOut copyOut = copy.copyOut("COPY (" + sql + ") TO STDOUT");
        byte[] row;
        while ((row = copyOut.readFromCopy()) != null) {
            String line = new String(row, StandardCharsets.UTF_8);
            if (!line.endsWith("\n") || line.indexOf('\n') != line.length() - 1) {
                throw new IllegalStateException("a CopyData message that is not one row: " + line);
            }
            out.add(line.substring(0, line.length() - 1).replace('\t', ' '));
        }
        if (copyOut.getHandledRowCount() != 3) {
            throw new IllegalStateException("COPY reported " + copyOut.getHandledRowCount() + " rows");
        }
    }

    /**
     * A cursor: with autocommit off and a fetch size, pgjdbc reads the result through a
     * portal, two rows per Execute, and returns each batch as it arrives.
     */
    static void readFetchSize(Connection conn, String sql, List<String> out) throws Exception {
        conn.setAutoCommit(false);
        try (Statement st = conn.createStatement()) {
            st.setFetchSize(2);
            try (ResultSet rs = st.executeQuery(sql)) {
                while (rs.next()) {
                    LocalDateTime wtime = rs.getObject(4, LocalDateTime.class);
                    out.add(rs.getString(1) + " " + rs.getLong(2) + " " + rs.getLong(3) + " "
                            + wtime.format(TS));
                }
            }
        }
        conn.commit();
    }

    /**
     * The same query without its LIMIT, so it never ends by itself: through a portal read
     * one row at a time in binary (prepareThreshold=-1 makes pgjdbc ask for binary results
     * from the first execution), the three rows must arrive while the query still runs.
     * Closing the ResultSet closes the portal, which ends the continuous query.
     */
    static void readLiveBinary(Connection ignored, String sql, List<String> out) throws Exception {
        String unbounded = sql.substring(0, sql.lastIndexOf(" LIMIT "));
        try (Connection conn = DriverManager.getConnection(url + "&prepareThreshold=-1")) {
            conn.setAutoCommit(false);
            try (PreparedStatement ps = conn.prepareStatement(unbounded)) {
                ps.setFetchSize(1);
                try (ResultSet rs = ps.executeQuery()) {
                    while (out.size() < 3 && rs.next()) {
                        LocalDateTime wtime = rs.getObject(4, LocalDateTime.class);
                        out.add(rs.getString(1) + " " + rs.getLong(2) + " " + rs.getLong(3) + " "
                                + wtime.format(TS));
                    }
                }
            }
            conn.commit();
        }
    }

    /** A query without LIMIT runs until cancelled: Statement.cancel() from another thread. */
    static void cancel(Connection admin) throws Exception {
        try (Statement st = admin.createStatement()) {
            st.execute("DROP STREAM IF EXISTS jdbc_cancel");
            st.execute("CREATE STREAM jdbc_cancel (ts timestamp TIMESTAMPCOLUMN, v integer)");
        }
        long before = queries(admin);
        try (Connection conn = DriverManager.getConnection(url);
                Statement st = conn.createStatement()) {
            AtomicReference<Exception> error = new AtomicReference<>();
            Thread canceller = new Thread(() -> {
                try {
                    waitForQuery(admin, before);
                    st.cancel();
                } catch (Exception e) {
                    error.set(e);
                }
            });
            canceller.start();
            try (ResultSet rs = st.executeQuery("SELECT v FROM jdbc_cancel")) {
                System.out.println("cancel: not cancelled");
            } catch (SQLException e) {
                System.out.println("cancel: " + e.getSQLState());
            }
            canceller.join(10_000);
            if (error.get() != null) {
                throw error.get();
            }
        }
    }
}
