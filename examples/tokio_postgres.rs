//! tcq from Rust with tokio-postgres: create a stream, feed it with COPY, and print a
//! continuous query's rows as windows close.
//!
//! Run (with tcqd serving on 127.0.0.1:5433, e.g. `cargo run --release` in another
//! terminal):
//!
//! ```text
//! cargo run --example tokio_postgres [-- PORT]
//! ```
//!
//! The query runs on one connection with the simple query protocol; its RowDescription
//! arrives once the server has installed it, and only then does the other connection send
//! tuples. Prints one `row:` line per result row, then `done`.

use futures::{SinkExt, StreamExt};
use tokio_postgres::{NoTls, SimpleQueryMessage};

const DATA: &str = "\
2001-01-01 00:10:00,5,ATL
2001-01-01 00:20:00,15,ORD
2001-01-01 00:40:00,25,ATL
2001-01-01 01:05:00,-3,ORD
2001-01-01 01:30:00,7,ATL
2001-01-01 02:00:00,0,SFO
";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port = std::env::args().nth(1).unwrap_or_else(|| "5433".into());
    let conninfo = format!("host=127.0.0.1 port={port} user=tcq dbname=tcq");
    let (writer, connection) = tokio_postgres::connect(&conninfo, NoTls).await?;
    tokio::spawn(connection);
    let (reader, connection) = tokio_postgres::connect(&conninfo, NoTls).await?;
    tokio::spawn(connection);

    writer
        .batch_execute(
            "CREATE STREAM rust_flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text)",
        )
        .await?;
    let rows = reader
        .simple_query_raw(
            "SELECT origin, count(*), max(delay), wtime(*) FROM rust_flights \
             [RANGE BY '1 hour' START AT '2001-01-01 00:00:00'] \
             GROUP BY origin ORDER BY origin LIMIT 4",
        )
        .await?;
    futures::pin_mut!(rows);
    // The first message is the RowDescription: the query is installed.
    rows.next().await.transpose()?;

    let sink = writer
        .copy_in("COPY rust_flights FROM STDIN WITH (FORMAT csv)")
        .await?;
    futures::pin_mut!(sink);
    sink.send(bytes::Bytes::from_static(DATA.as_bytes()))
        .await?;
    sink.as_mut().finish().await?;

    while let Some(message) = rows.next().await {
        if let SimpleQueryMessage::Row(row) = message? {
            let cell = |i| row.get(i).unwrap_or("NULL");
            println!("row: {} {} {} {}", cell(0), cell(1), cell(2), cell(3));
        }
    }
    writer.batch_execute("DROP STREAM rust_flights").await?;
    println!("done");
    Ok(())
}
