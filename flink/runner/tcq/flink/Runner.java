package tcq.flink;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * Runs a Flink SQL job exported by tcq (`tcqd flink export`) through a TableEnvironment.
 *
 * <p>Usage: {@code Runner [--validate] [SCRIPT]}. Without SCRIPT the job is the resource
 * {@code tcq-job.sql} packaged in this jar by {@code tcqd flink submit}. The script's
 * statements end with a semicolon at the end of a line; an {@code EXECUTE STATEMENT SET}
 * block runs to its {@code END;}. {@code SET 'key' = 'value'} sets the table configuration
 * (parallelism, checkpoint interval, state backend). Every other statement goes to
 * {@code executeSql}: the views and tables are declared, and the statement set submits one
 * job, whose id is printed as {@code job <id>}; the runner does not wait for it.
 *
 * <p>With {@code --validate} nothing runs: each statement set (or INSERT) is planned with
 * {@code EXPLAIN} and the plan printed, so a job whose sources or sinks need a connector
 * that is not installed can be checked against Flink's planner (see ValidationFactory).
 */
public final class Runner {
    private Runner() {}

    public static void main(String[] args) throws Exception {
        boolean validate = false;
        String path = null;
        for (String a : args) {
            if (a.equals("--validate")) {
                validate = true;
            } else {
                path = a;
            }
        }
        String script = path == null ? resource("tcq-job.sql") : read(path);
        TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        for (String stmt : statements(script)) {
            String head = stmt.trim().toUpperCase();
            if (head.startsWith("SET ")) {
                set(env, stmt);
            } else if (head.startsWith("EXECUTE STATEMENT SET") || head.startsWith("INSERT ")) {
                if (validate) {
                    String body = head.startsWith("EXECUTE ")
                            ? stmt.trim().substring("EXECUTE ".length())
                            : stmt;
                    env.executeSql("EXPLAIN " + body).print();
                    System.out.println("validated");
                } else {
                    TableResult r = env.executeSql(stmt);
                    String id = r.getJobClient()
                            .map(c -> c.getJobID().toString())
                            .orElse("none");
                    System.out.println("job " + id);
                }
            } else {
                env.executeSql(stmt);
            }
        }
    }

    /** {@code SET 'key' = 'value'} into the table configuration. */
    private static void set(TableEnvironment env, String stmt) {
        String[] parts = stmt.trim().substring(4).split("=", 2);
        if (parts.length != 2) {
            throw new IllegalArgumentException("not SET 'key' = 'value': " + stmt);
        }
        env.getConfig().set(unquote(parts[0]), unquote(parts[1]));
    }

    private static String unquote(String s) {
        String t = s.trim();
        if (t.length() >= 2 && t.startsWith("'") && t.endsWith("'")) {
            t = t.substring(1, t.length() - 1).replace("''", "'");
        }
        return t;
    }

    /** The script's statements: comment lines dropped, split at a line ending with ';'. */
    static List<String> statements(String script) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean inSet = false;
        for (String line : script.split("\n")) {
            String t = line.trim();
            if (t.isEmpty() || t.startsWith("--")) {
                continue;
            }
            if (cur.length() == 0 && t.toUpperCase().startsWith("EXECUTE STATEMENT SET")) {
                inSet = true;
            }
            cur.append(line).append('\n');
            boolean ends = inSet ? t.equalsIgnoreCase("END;") : t.endsWith(";");
            if (ends) {
                String s = cur.toString().trim();
                out.add(s.substring(0, s.length() - 1));
                cur.setLength(0);
                inSet = false;
            }
        }
        if (cur.toString().trim().length() > 0) {
            out.add(cur.toString().trim());
        }
        return out;
    }

    private static String read(String path) throws IOException {
        return new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8);
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = Runner.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("no " + name + " in the jar and no script given");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
