//! The derived stream and sink examples of docs/connectors.md, run as written (the sink's
//! file put in a temporary directory): the rows and the line the page shows.

use crate::common::sinks::wait_lines;
use crate::common::sources::fetch;
use crate::common::{self, connect, exec};

/// The page's fenced SQL block that contains `needle`.
fn block(needle: &str) -> String {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/connectors.md"))
        .unwrap();
    page.split("```sql\n")
        .skip(1)
        .map(|b| b.split("\n```").next().unwrap().to_string())
        .find(|b| b.contains(needle))
        .unwrap_or_else(|| panic!("no sql block with {needle} in docs/connectors.md"))
}

const FLIGHTS: &str =
    "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text)";

/// Three late ORD flights and two SFO ones in the first ten minutes, then later ones
/// that close the windows.
const INSERT: &str = "INSERT INTO flights VALUES ('2001-01-01 00:01', 20, 'ORD'), \
    ('2001-01-01 00:02', 30, 'ORD'), ('2001-01-01 00:03', 5, 'SFO'), \
    ('2001-01-01 00:04', 40, 'ORD'), ('2001-01-01 00:15', 1, 'SFO'), \
    ('2001-01-01 01:05', 0, 'SFO')";

#[tokio::test]
async fn the_derived_stream_example() {
    let port = common::start_server();
    let c = connect(port).await;
    exec(&c, FLIGHTS).await;
    let example = block("CREATE STREAM hourly");
    let (create, select) = example.split_once(";\n").unwrap();
    exec(&c, create).await;
    exec(
        &c,
        &format!(
            "BEGIN; DECLARE h CURSOR FOR {}",
            select.trim_end_matches(';')
        ),
    )
    .await;
    let other = connect(port).await;
    common::wait_for_queries(&other, 2).await;
    exec(&other, INSERT).await;
    assert_eq!(
        fetch(&c, "h", 1, 20).await,
        common::table(&[&["ORD", "3", "2001-01-01 01:00:00"]])
    );
}

#[tokio::test]
async fn the_sink_example() {
    let c = connect(common::start_server()).await;
    exec(&c, FLIGHTS).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late.ndjson");
    let sql = block("CREATE SINK late").replace("/var/lib/tcq/late.ndjson", path.to_str().unwrap());
    exec(&c, &sql).await;
    exec(&c, INSERT).await;
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/connectors.md"))
        .unwrap();
    let shown = page
        .split("writes one line per row, `")
        .nth(1)
        .and_then(|s| s.split('`').next())
        .expect("the page shows the line");
    assert_eq!(wait_lines(&path, 1, 20).await, [shown]);
}
