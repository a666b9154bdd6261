// tcq from Node.js with node-postgres: COPY in and out with pg-copy-streams, a parameterised
// INSERT, a cursor (pg-cursor), a row stream (pg-query-stream), and cancelling a query.
//
// Run (with tcqd serving on 127.0.0.1:5433, e.g. `cargo run --release`):
//
//     npm install --prefix clients/node
//     node clients/node/node_pg.js [port]
//
// For each reader the program creates a stream, starts
// `SELECT k, count(*), sum(v), wtime(*) ... [RANGE BY '10 seconds'] GROUP BY k ... LIMIT 3`,
// waits until tcq lists it in tcq_queries, then sends three tuples with COPY FROM STDIN (CSV)
// and two with a parameterised INSERT. Every reader prints the same three rows as they
// arrive: the window ending at :10 holds a (2 tuples, sum 4) and b (1, 2); the one ending at
// :20 holds a (1, 10). Then a query without LIMIT is cancelled with a CancelRequest.

const { pipeline } = require('node:stream/promises');
const { Readable } = require('node:stream');
const { Client } = require('pg');
const Cursor = require('pg-cursor');
const QueryStream = require('pg-query-stream');
const { from: copyFrom, to: copyTo } = require('pg-copy-streams');

const port = Number(process.argv[2] || 5433);
const config = { host: '127.0.0.1', port, user: 'tcq', database: 'tcq' };

const BULK_CSV = '2001-01-01 00:00:01,a,1\n2001-01-01 00:00:03,b,2\n2001-01-01 00:00:05,a,3\n';
const INSERTED = [['2001-01-01 00:00:12', 'a', 10], ['2001-01-01 00:00:25', 'z', 0]];

const query = (stream) =>
  `SELECT k, count(*), sum(v), wtime(*) FROM ${stream} ` +
  "[RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k ORDER BY k LIMIT 3";

// node-postgres parses timestamps as local time; the process runs in UTC (set below).
const show = (t) => (t instanceof Date ? t.toISOString().replace('T', ' ').slice(0, 19) : t);

async function queries(admin) {
  return Number((await admin.query('SELECT count(*) AS n FROM tcq_queries')).rows[0].n);
}

async function waitForQuery(admin, before) {
  const deadline = Date.now() + 10000;
  while ((await queries(admin)) <= before) {
    if (Date.now() > deadline) throw new Error('the continuous query did not start');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function ingest(admin, stream) {
  await pipeline(Readable.from([BULK_CSV]),
    admin.query(copyFrom(`COPY ${stream} (ts, k, v) FROM STDIN (FORMAT csv)`)));
  for (const r of INSERTED) {
    await admin.query(`INSERT INTO ${stream} (ts, k, v) VALUES ($1, $2, $3)`, r);
  }
}

// Start `read` on its own connection, feed the stream, print what `read` returned.
async function run(admin, name, read) {
  const stream = `node_${name}`;
  // Dropped first, so that the program runs again on the same server.
  await admin.query(`DROP STREAM IF EXISTS ${stream}`);
  await admin.query(`CREATE STREAM ${stream} (ts timestamp TIMESTAMPCOLUMN, k text, v integer)`);
  const before = await queries(admin);
  const reader = new Client(config);
  await reader.connect();
  const reading = read(reader, query(stream));
  await waitForQuery(admin, before);
  await ingest(admin, stream);
  const rows = await reading;
  await reader.end();
  for (const [k, n, s, wtime] of rows) console.log(`${name}: ${k} ${n} ${s} ${show(wtime)}`);
}

async function readCursor(client, sql) {
  await client.query('BEGIN');
  const cursor = client.query(new Cursor(sql));
  const rows = [];
  for (;;) {
    const batch = await cursor.read(2); // waits for two rows or the end of the query
    if (batch.length === 0) break;
    for (const r of batch) rows.push([r.k, r.count, r.sum, r.wtime]);
  }
  await cursor.close();
  await client.query('COMMIT');
  return rows;
}

async function readQueryStream(client, sql) {
  const rows = [];
  for await (const r of client.query(new QueryStream(sql, [], { batchSize: 1 }))) {
    rows.push([r.k, r.count, r.sum, r.wtime]);
  }
  return rows;
}

async function readCopyTo(client, sql) {
  const rows = [];
  for await (const chunk of client.query(copyTo(`COPY (${sql}) TO STDOUT (FORMAT csv)`))) {
    for (const line of chunk.toString().split('\n').filter((l) => l)) rows.push(line.split(','));
  }
  return rows;
}

async function cancel(admin) {
  await admin.query('DROP STREAM IF EXISTS node_cancel');
  await admin.query('CREATE STREAM node_cancel (ts timestamp TIMESTAMPCOLUMN, v integer)');
  const before = await queries(admin);
  const reader = new Client(config);
  await reader.connect();
  const running = reader.query(new QueryStream('SELECT v FROM node_cancel'));
  const ended = new Promise((resolve) => {
    running.on('error', (e) => resolve(e.code));
    running.on('end', () => resolve('not cancelled'));
    running.resume();
  });
  await waitForQuery(admin, before);
  new Client(config).cancel(reader, running);
  console.log(`cancel: ${await ended}`);
  await reader.end();
}

// A catalog query, as tools built on node-postgres list a database's relations.
async function introspect(admin) {
  const res = await admin.query(
    'SELECT n.nspname, c.relname, format_type(a.atttypid, a.atttypmod) AS type ' +
      'FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ' +
      'JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = $1 ' +
      "WHERE c.relkind = 'f' AND c.relname LIKE 'node_%' ORDER BY 2",
    [1],
  );
  for (const r of res.rows) console.log(`catalog: ${r.nspname} ${r.relname} ${r.type}`);
  // Arrays and oids arrive typed: node-postgres parses text[] and smallint[] into arrays
  // and an oid into a number.
  const cols = await admin.query(
    'SELECT array_agg(a.attname::text ORDER BY a.attnum) AS names, ' +
      'array_agg(a.attnum ORDER BY a.attnum) AS nums, c.oid ' +
      'FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid ' +
      "WHERE c.relname = 'node_cursor' AND a.attnum > 0 GROUP BY c.oid",
  );
  const r = cols.rows[0];
  console.log(`arrays: ${JSON.stringify(r.names)} ${JSON.stringify(r.nums)} ${typeof r.oid}`);
}

async function main() {
  const admin = new Client(config);
  await admin.connect();
  await run(admin, 'cursor', readCursor);
  await run(admin, 'query_stream', readQueryStream);
  await run(admin, 'copy_to', readCopyTo);
  await cancel(admin);
  await introspect(admin);
  await admin.end();
  console.log('done');
}

process.env.TZ = 'UTC';
main().catch((e) => { console.error(e); process.exit(1); });
