//! tcq from Rust with tokio-postgres: binary COPY in (`BinaryCopyInWriter`) and out
//! (`BinaryCopyOutStream`), a parameterised INSERT, `query_raw` (a row stream), portals
//! (row-limited `query_portal`), and cancelling a query with `cancel_token`.
//!
//! Run (with tcqd serving on 127.0.0.1:5433, e.g. `cargo run --release`):
//!
//! ```text
//! cargo run --example tokio_postgres_client -- [port]
//! ```
//!
//! For each reader the program creates a stream, starts
//! `SELECT k, count(*), sum(v), wtime(*) ... [RANGE BY '10 seconds'] GROUP BY k ... LIMIT 3`,
//! waits until tcq lists it in tcq_queries, then sends three tuples with binary COPY and two
//! with a parameterised INSERT. Every reader prints the same three rows as they arrive: the
//! window ending at :10 holds a (2 tuples, sum 4) and b (1, 2); the one ending at :20 holds a
//! (1, 10). Then a query without LIMIT is cancelled, and the program introspects the
//! catalogs with tokio-postgres's own type lookup query.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::{pin_mut, StreamExt, TryStreamExt};
use tokio_postgres::binary_copy::{BinaryCopyInWriter, BinaryCopyOutStream};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, NoTls};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// 2001-01-01 00:00:00 UTC plus `secs`.
fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(978_307_200 + secs)
}

/// `2001-01-01 00:00:10` for a time in 2001-01-01's first minute, as the server prints it.
fn show(t: SystemTime) -> String {
    let secs = t.duration_since(at(0)).map(|d| d.as_secs()).unwrap_or(0);
    format!("2001-01-01 00:{:02}:{:02}", secs / 60, secs % 60)
}

fn query(stream: &str) -> String {
    format!(
        "SELECT k, count(*), sum(v), wtime(*) FROM {stream} \
         [RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k ORDER BY k LIMIT 3"
    )
}

async fn connect(port: u16) -> Result<Client, Error> {
    let conn = format!("host=127.0.0.1 port={port} user=tcq dbname=tcq");
    let (client, connection) = tokio_postgres::connect(&conn, NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

async fn queries(admin: &Client) -> Result<i64, Error> {
    Ok(admin
        .query_one("SELECT count(*) FROM tcq_queries", &[])
        .await?
        .get(0))
}

async fn wait_for_query(admin: &Client, before: i64) -> Result<(), Error> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while queries(admin).await? <= before {
        if std::time::Instant::now() > deadline {
            return Err("the continuous query did not start".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

async fn ingest(admin: &Client, stream: &str) -> Result<(), Error> {
    let sink = admin
        .copy_in(&format!(
            "COPY {stream} (ts, k, v) FROM STDIN (FORMAT binary)"
        ))
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &[Type::TIMESTAMP, Type::TEXT, Type::INT4]);
    pin_mut!(writer);
    for (t, k, v) in [(1, "a", 1i32), (3, "b", 2), (5, "a", 3)] {
        writer.as_mut().write(&[&at(t), &k, &v]).await?;
    }
    writer.finish().await?;
    let insert = format!("INSERT INTO {stream} (ts, k, v) VALUES ($1, $2, $3)");
    for (t, k, v) in [(12, "a", 10i32), (25, "z", 0)] {
        admin.execute(&insert, &[&at(t), &k, &v]).await?;
    }
    Ok(())
}

/// One row as the readers print it.
type Row = (String, i64, i64, SystemTime);

async fn read_query_raw(client: Client, sql: String) -> Result<Vec<Row>, Error> {
    let params: Vec<&(dyn ToSql + Sync)> = Vec::new();
    let rows = client.query_raw(&sql, params).await?;
    pin_mut!(rows);
    let mut out = Vec::new();
    while let Some(r) = rows.try_next().await? {
        out.push((r.get(0), r.get(1), r.get(2), r.get(3)));
    }
    Ok(out)
}

async fn read_portal(mut client: Client, sql: String) -> Result<Vec<Row>, Error> {
    let tx = client.transaction().await?;
    let portal = tx.bind(&sql, &[]).await?;
    let mut out = Vec::new();
    loop {
        // Each call waits for two rows or the end of the query.
        let rows = tx.query_portal(&portal, 2).await?;
        if rows.is_empty() {
            break;
        }
        out.extend(
            rows.iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3))),
        );
    }
    tx.commit().await?;
    Ok(out)
}

async fn read_binary_copy(client: Client, sql: String) -> Result<Vec<Row>, Error> {
    let out = client
        .copy_out(&format!("COPY ({sql}) TO STDOUT (FORMAT binary)"))
        .await?;
    let rows =
        BinaryCopyOutStream::new(out, &[Type::TEXT, Type::INT8, Type::INT8, Type::TIMESTAMP]);
    pin_mut!(rows);
    let mut got = Vec::new();
    while let Some(r) = rows.next().await {
        let r = r?;
        got.push((r.get(0), r.get(1), r.get(2), r.get(3)));
    }
    Ok(got)
}

/// Start a reader on its own connection, feed its stream, and return its lines.
async fn run<F, Fut>(port: u16, admin: &Client, name: &str, read: F) -> Result<Vec<String>, Error>
where
    F: FnOnce(Client, String) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<Row>, Error>> + Send + 'static,
{
    let stream = format!("rs_{name}");
    admin
        // Dropped first, so that the program runs again on the same server.
        .batch_execute(&format!(
            "DROP STREAM IF EXISTS {stream}; \
             CREATE STREAM {stream} (ts timestamp TIMESTAMPCOLUMN, k text, v integer)"
        ))
        .await?;
    let before = queries(admin).await?;
    let reader = tokio::spawn(read(connect(port).await?, query(&stream)));
    wait_for_query(admin, before).await?;
    ingest(admin, &stream).await?;
    let rows = reader.await??;
    Ok(rows
        .into_iter()
        .map(|(k, n, s, t)| format!("{name}: {k} {n} {s} {}", show(t)))
        .collect())
}

async fn cancel(port: u16, admin: &Client) -> Result<String, Error> {
    admin
        .batch_execute(
            "DROP STREAM IF EXISTS rs_cancel; \
             CREATE STREAM rs_cancel (ts timestamp TIMESTAMPCOLUMN, v integer)",
        )
        .await?;
    let before = queries(admin).await?;
    let reader = connect(port).await?;
    let token = reader.cancel_token();
    let running = tokio::spawn(async move { reader.simple_query("SELECT v FROM rs_cancel").await });
    wait_for_query(admin, before).await?;
    token.cancel_query(NoTls).await?;
    Ok(match running.await? {
        Ok(_) => "cancel: not cancelled".into(),
        Err(e) => format!("cancel: {}", e.code().map_or("?", |c| c.code())),
    })
}

/// Introspection with tokio-postgres's own type lookup query (the one it sends for a type
/// OID it does not know), bound as tokio-postgres binds it: `$1` is described as an `oid`
/// and takes a `u32`, and `typelem`/`rngsubtype` are oids. tcq describes only types
/// tokio-postgres knows (arrays, `oid` and `int2vector` included), so a connection never
/// sends the lookup by itself. Then a catalog query listing the stream's columns with
/// their types.
async fn introspect(admin: &Client) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    let typeinfo = "SELECT t.typname, t.typtype, t.typelem, r.rngsubtype, t.typbasetype, \
                    n.nspname, t.typrelid FROM pg_catalog.pg_type t \
                    LEFT OUTER JOIN pg_catalog.pg_range r ON r.rngtypid = t.oid \
                    INNER JOIN pg_catalog.pg_namespace n ON t.typnamespace = n.oid \
                    WHERE t.oid = $1";
    for oid in [23u32, 1007] {
        let row = admin.query_one(typeinfo, &[&oid]).await?;
        // typtype is a "char": one byte, an i8 to tokio-postgres (as its own lookup reads it).
        let (name, kind, elem): (String, i8, u32) = (row.get(0), row.get(1), row.get(2));
        let kind = char::from(kind as u8);
        let (range, schema): (Option<u32>, String) = (row.get(3), row.get(5));
        out.push(format!(
            "typeinfo {oid}: {name} {kind} elem {elem} range {range:?} {schema}"
        ));
    }
    let columns = admin
        .query(
            "SELECT a.attname, a.atttypid::regtype::text FROM pg_catalog.pg_attribute a \
             WHERE a.attrelid = 'rs_query_raw'::regclass AND a.attnum > 0 ORDER BY a.attnum",
            &[],
        )
        .await?;
    let columns: Vec<String> = columns
        .iter()
        .map(|r| format!("{} {}", r.get::<_, String>(0), r.get::<_, String>(1)))
        .collect();
    out.push(format!("columns: {}", columns.join(", ")));
    Ok(out)
}

/// Everything the program prints, in order.
pub async fn lines(port: u16) -> Result<Vec<String>, Error> {
    let admin = connect(port).await?;
    let mut out = Vec::new();
    out.extend(run(port, &admin, "query_raw", read_query_raw).await?);
    out.extend(run(port, &admin, "portal", read_portal).await?);
    out.extend(run(port, &admin, "binary_copy", read_binary_copy).await?);
    out.push(cancel(port, &admin).await?);
    out.extend(introspect(&admin).await?);
    out.push("done".into());
    Ok(out)
}

#[allow(dead_code)] // a test includes this file as a module and calls `lines`
#[tokio::main]
async fn main() -> Result<(), Error> {
    let port = std::env::args().nth(1).map_or(Ok(5433), |p| p.parse())?;
    for line in lines(port).await? {
        println!("{line}");
    }
    Ok(())
}
