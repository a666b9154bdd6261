// tcq from Node.js with node-postgres and pg-cursor: create a stream, insert rows, and read
// a continuous query through a cursor (extended-protocol portal with a row limit), which
// returns each batch of rows as soon as the server has produced it.
//
// Run (with tcqd serving on 127.0.0.1:5433, e.g. `cargo run --release`):
//
//     npm install pg pg-cursor
//     node clients/node_pg.js [port]
//
// Prints one `row:` line per result row, then `done`.

const { Client } = require('pg');
const Cursor = require('pg-cursor');

const port = Number(process.argv[2] || 5433);
const config = { host: '127.0.0.1', port, user: 'tcq', database: 'tcq' };

const rows = [
  ['2001-01-01 00:10:00', 5, 'ATL'],
  ['2001-01-01 00:20:00', 15, 'ORD'],
  ['2001-01-01 00:40:00', 25, 'ATL'],
  ['2001-01-01 01:05:00', -3, 'ORD'],
  ['2001-01-01 01:30:00', 7, 'ATL'],
  ['2001-01-01 02:00:00', 0, 'SFO'],
];

async function main() {
  const writer = new Client(config);
  const reader = new Client(config);
  await writer.connect();
  await reader.connect();
  await writer.query(
    'CREATE STREAM node_flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text)');
  const before = Number((await writer.query('SELECT count(*) AS n FROM tcq_queries')).rows[0].n);

  await reader.query('BEGIN');
  const cursor = reader.query(new Cursor(
    "SELECT origin, count(*), max(delay), wtime(*) FROM node_flights " +
    "[RANGE BY '1 hour' START AT '2001-01-01 00:00:00'] GROUP BY origin ORDER BY origin LIMIT 4"));
  const reading = (async () => {
    for (;;) {
      const batch = await cursor.read(2); // waits for two rows or the end of the query
      if (batch.length === 0) break;
      for (const r of batch) {
        const wtime = r.wtime.toISOString().replace('T', ' ').slice(0, 19);
        console.log(`row: ${r.origin} ${r.count} ${r.max} ${wtime}`);
      }
    }
  })();

  // Send tuples only once the query is installed.
  while (Number((await writer.query('SELECT count(*) AS n FROM tcq_queries')).rows[0].n) <= before) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const r of rows) {
    await writer.query('INSERT INTO node_flights (ts, delay, origin) VALUES ($1, $2, $3)', r);
  }
  await reading;
  await cursor.close();
  await reader.query('COMMIT');
  await writer.query('DROP STREAM node_flights');
  await reader.end();
  await writer.end();
  console.log('done');
}

// node-postgres parses timestamps as local time; read them as UTC so they print as sent.
process.env.TZ = 'UTC';
main().catch((e) => { console.error(e); process.exit(1); });
