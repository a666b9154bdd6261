// tcq console: plain JavaScript, no libraries. Pages are chosen by the URL's hash:
// #/streams, #/queries, #/plan/ID, #/tail/ID, #/sql. Every text from the server is set
// with textContent (never innerHTML), so names and query texts cannot inject markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const main = document.getElementById("main");
let cleanup = [];

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function fmt(n) {
  if (n === null || n === undefined) return "-";
  if (typeof n !== "number") return String(n);
  if (Number.isInteger(n)) return n.toLocaleString("en-US");
  return n.toLocaleString("en-US", { maximumFractionDigits: 2 });
}

function bytes(n) {
  if (n < 1024) return n + " B";
  if (n < 1 << 20) return (n / 1024).toFixed(1) + " KiB";
  if (n < 1 << 30) return (n / (1 << 20)).toFixed(1) + " MiB";
  return (n / (1 << 30)).toFixed(2) + " GiB";
}

async function getJSON(url, options) {
  const r = await fetch(url, options);
  const body = await r.json();
  if (!r.ok) throw new Error(body.error ? body.error.message : r.statusText);
  return body;
}

function setStatus(text) {
  document.getElementById("status").textContent = text;
}

function every(ms, fn) {
  fn();
  const id = setInterval(fn, ms);
  cleanup.push(() => clearInterval(id));
}

// ---- Streams ------------------------------------------------------------------------

function sparkline(values, width, height) {
  const s = svg("svg", { width, height, class: "sparkline" });
  if (values.length < 2) return s;
  const max = Math.max(1, ...values);
  const step = width / (values.length - 1);
  const pts = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`);
  s.append(svg("polyline", { class: "spark", points: pts.join(" ") }));
  return s;
}

// A stream's source: connector and state, messages, bad messages (the last error on hover)
// and lag.
function sourceCell(src) {
  if (!src) return el("td", { class: "muted" }, "-");
  const parts = [`${src.connector} ${src.state}`, `${fmt(src.messages)} messages`];
  if (src.bad_messages) parts.push(`${fmt(src.bad_messages)} bad`);
  if (src.lag !== null && src.lag !== undefined) parts.push(`lag ${fmt(src.lag)}`);
  return el("td", { class: "source", title: src.last_error || "" }, parts.join(" · "));
}

function streamsPage() {
  const body = el("tbody"), tableBody = el("tbody");
  main.append(el("h2", {}, "Streams"),
    el("table", { id: "streams" },
      el("thead", {}, el("tr", {},
        ["Stream", "Schema", "Type", "Tuples", "Ingest rate /s", "Last minute", "Current time", "Late tuples", "Queries", "On disk", "Retention", "Source"]
          .map((h, i) => el("th", { class: i === 3 || i === 4 || (i >= 7 && i <= 9) ? "num" : "" }, h)))),
      body),
    el("h2", { class: "section" }, "Tables"),
    el("table", { id: "tables" },
      el("thead", {}, el("tr", {}, ["Table", "Columns", "Primary key", "Rows"]
        .map((h, i) => el("th", { class: i === 3 ? "num" : "" }, h)))),
      tableBody));
  every(1000, async () => {
    const [streams, tables] = await Promise.all([getJSON("/api/streams"), getJSON("/api/tables")]);
    body.replaceChildren(...streams.map((s) => el("tr", { "data-stream": s.name },
      el("td", {}, el("b", {}, s.name)),
      el("td", { class: "mono" }, s.columns.map((c, i) => [i ? ", " : "",
        el("span", { class: c.name === s.timestamp_column ? "ts-col" : "" }, c.name),
        " " + c.type + (c.name === s.timestamp_column ? " TIMESTAMPCOLUMN" : "")])),
      el("td", {}, s.type),
      el("td", { class: "num" }, fmt(s.tuples)),
      el("td", { class: "num" }, fmt(s.rate_per_sec)),
      el("td", {}, sparkline(s.rate_history, 140, 28)),
      el("td", {}, s.current_time || "-"),
      el("td", { class: "num" }, fmt(s.late_tuples)),
      el("td", { class: "num" }, fmt(s.queries)),
      el("td", { class: "num disk" }, s.disk_bytes === null || s.disk_bytes === undefined ? "-" : bytes(s.disk_bytes)),
      el("td", { class: "retention" }, s.type === "ARCHIVED" ? (s.retention || "keeps all") : "-"),
      sourceCell(s.source))));
    if (!streams.length) body.append(el("tr", {}, el("td", { colspan: 12, class: "muted" }, "No streams yet: CREATE STREAM from psql or the SQL page.")));
    tableBody.replaceChildren(...tables.map((t) => el("tr", { "data-table": t.name },
      el("td", {}, el("b", {}, t.name)),
      el("td", { class: "mono" }, t.columns.map((c) => `${c.name} ${c.type}`).join(", ")),
      el("td", { class: "mono" }, t.primary_key.join(", ") || "-"),
      el("td", { class: "num" }, fmt(t.rows)))));
    if (!tables.length) tableBody.append(el("tr", {}, el("td", { colspan: 4, class: "muted" }, "No tables: CREATE TABLE from psql or the SQL page.")));
    setStatus(`${streams.length} streams, ${tables.length} tables`);
  });
}

// ---- Queries ------------------------------------------------------------------------

function queriesPage() {
  const body = el("tbody"), sinkBody = el("tbody");
  const message = el("div", { class: "error" });
  main.append(el("h2", {}, "Queries"), message,
    el("table", { id: "queries" },
      el("thead", {}, el("tr", {},
        ["Id", "Query", "Client", "Current time", "Rows out", "Slide events", "Late tuples", "Open instances", "Groups", "State", ""]
          .map((h, i) => el("th", { class: i >= 4 && i <= 9 ? "num" : "" }, h)))),
      body),
    el("h2", { class: "section" }, "Derived streams and sinks"),
    el("table", { id: "sinks" },
      el("thead", {}, el("tr", {},
        ["Name", "Kind", "Query", "State", "Rows", "Slide events", "Errors", "Delivered up to"]
          .map((h, i) => el("th", { class: i >= 4 && i <= 6 ? "num" : "" }, h)))),
      sinkBody));
  every(1000, async () => {
    const [queries, sinks] = await Promise.all([getJSON("/api/queries"), getJSON("/api/sinks")]);
    sinkBody.replaceChildren(...sinks.map((s) => el("tr", { "data-sink": s.name },
      el("td", {}, el("b", {}, s.name)),
      el("td", { title: s.options || "" }, s.kind === "sink" ? `sink (${s.connector})` : "derived stream"),
      el("td", {}, el("pre", { class: "sql" }, s.query)),
      el("td", { class: "state", title: s.last_error || "" }, s.state),
      el("td", { class: "num" }, fmt(s.rows)),
      el("td", { class: "num" }, fmt(s.slide_events)),
      el("td", { class: "num", title: s.last_error || "" }, fmt(s.errors)),
      el("td", {}, s.position || "-"))));
    if (!sinks.length) sinkBody.append(el("tr", {}, el("td", { colspan: 8, class: "muted" }, "None: CREATE STREAM ... AS SELECT or CREATE SINK.")));
    body.replaceChildren(...queries.map((q) => el("tr", { "data-query": q.id },
      el("td", {}, q.id),
      el("td", {}, el("pre", { class: "sql" }, q.text),
        q.flink_job ? el("div", { class: "muted" }, `on Flink job ${q.flink_job}: ${q.flink_state}`) : null),
      el("td", {}, q.client ? [q.client.application_name || q.client.user, el("div", { class: "muted" }, `pid ${q.client.pid} · ${q.client.client_addr}`)] : (q.feeds || "-")),
      el("td", {}, q.current_time || "-"),
      el("td", { class: "num" }, fmt(q.rows_out)),
      el("td", { class: "num" }, fmt(q.slide_events)),
      el("td", { class: "num" }, fmt(q.late_tuples)),
      el("td", { class: "num" }, fmt(q.open_instances)),
      el("td", { class: "num" }, fmt(q.groups)),
      el("td", { class: "num" }, bytes(q.state_bytes)),
      el("td", {},
        q.has_plan ? el("a", { class: "button secondary", href: `#/plan/${q.id}` }, "Plan") : null,
        el("a", { class: "button secondary", href: `#/tail/${q.id}` }, "Live tail"),
        el("button", { class: "danger", onclick: async () => {
          try {
            const r = await getJSON(`/api/queries/${q.id}/cancel`, { method: "POST" });
            message.textContent = r.cancelled ? `Query ${q.id} cancelled.` : `Query ${q.id} had nothing to cancel.`;
          } catch (e) { message.textContent = e.message; }
        } }, "Cancel")))));
    if (!queries.length) body.append(el("tr", {}, el("td", { colspan: 11, class: "muted" }, "No continuous queries are registered.")));
    setStatus(`${queries.length} queries`);
  });
}

// ---- Plan picture -------------------------------------------------------------------

// Draw a window coverage graph (the JSON of EXPLAIN (FORMAT JSON)) as an SVG: the raw
// stream S on top, each plan node below its parent, edges labelled with the covering
// multiplier M, factor windows grey and dashed.
function drawPlan(plan) {
  const nodes = plan.plan.nodes;
  const measured = plan.measured ? plan.measured.nodes : [];
  const depth = {};
  const layers = [[{ name: "S", source: true }]];
  nodes.forEach((n, i) => {
    const d = n.parent === null ? 1 : depth[n.parent] + 1;
    depth[n.name] = d;
    (layers[d] = layers[d] || []).push({ ...n, index: i });
  });
  const W = 270, H = 84, GX = 30, GY = 64, PAD = 20;
  const width = PAD * 2 + Math.max(...layers.map((l) => l.length)) * (W + GX) - GX;
  const height = PAD * 2 + layers.length * (H + GY) - GY;
  const pos = {};
  layers.forEach((layer, d) => {
    const row = layer.length * (W + GX) - GX;
    layer.forEach((n, i) => {
      pos[n.name] = { x: (width - row) / 2 + i * (W + GX), y: PAD + d * (H + GY) };
    });
  });
  const picture = svg("svg", { id: "plan-graph", width, height, viewBox: `0 0 ${width} ${height}` },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#475467" }))));
  for (const n of nodes) {
    const from = pos[n.parent === null ? "S" : n.parent], to = pos[n.name];
    const x1 = from.x + W / 2, y1 = from.y + H, x2 = to.x + W / 2, y2 = to.y;
    const label = n.parent === null ? "raw tuples" : `M = ${n.multiplier}`;
    picture.append(svg("g", { class: "edge", "data-from": n.parent === null ? "S" : n.parent, "data-to": n.name },
      svg("path", { d: `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2 - 2}`, "marker-end": "url(#arrow)" }),
      svg("text", { x: (x1 + x2) / 2 + 6, y: (y1 + y2) / 2 + 4 }, label)));
  }
  const box = (n, lines, cls) => {
    const p = pos[n.name];
    const g = svg("g", { class: cls, "data-name": n.name, transform: `translate(${p.x},${p.y})` },
      svg("title", {}, n.window ? n.window.text : "the stream's tuples"),
      svg("rect", { width: W, height: H, rx: 8 }));
    lines.forEach(([text, kind], i) => g.append(svg("text", { x: 10, y: 18 + i * 16, class: kind }, text)));
    picture.append(g);
  };
  // START AT is in each node's tooltip; the box shows RANGE and SLIDE.
  const short = (w) => w.text.replace(/ START AT .*$/, "");
  box({ name: "S" }, [["S (raw stream)", "name"], [plan.pane ? `pane: ${short(plan.pane)}` : "", "small"], [plan.event_rate, "small"]], "node source");
  nodes.forEach((n, i) => {
    const m = measured[i];
    const work = m ? (n.parent === null ? `measured: ${fmt(m.tuples_folded)} tuples` : `measured: ${fmt(m.partials_merged)} partials`) : "";
    box(n, [[n.name + (n.factor ? "  (factor window)" : ""), "name"], [short(n.window), "small"],
      [`model: ${fmt(n.cost.per_hour)} per hour`, "small"], [work, "measured"]],
      n.factor ? "node factor" : "node user");
  });
  return picture;
}

function planFacts(plan) {
  const fact = (k, v) => el("div", {}, el("b", {}, k), v);
  return el("div", { class: "facts" },
    fact("Aggregate sharing", plan.sharing),
    fact("Event rate", plan.event_rate),
    fact("Plan chosen", plan.choice),
    fact("Cost per hour", `${fmt(plan.plan.total.per_hour)} (unshared ${fmt(plan.unshared.total.per_hour)})`),
    fact("Saving", `${fmt(plan.saving_percent)} %`),
    plan.measured ? fact("Measured over", `${fmt(plan.measured.stream_time_us / 1e6)} s of stream time`) : null);
}

function planPage(id) {
  const facts = el("div"), picture = el("div", { class: "card plan" }), error = el("div", { class: "error" });
  main.append(el("h2", {}, `Plan of query ${id}`), error, facts, picture,
    el("p", { class: "legend muted" }, "Windows are nodes; an edge W → V means V merges M consecutive partial aggregates of W. Grey dashed boxes are factor windows, computed only to be shared. Measured work updates every two seconds."),
    el("a", { class: "button secondary", href: `#/tail/${id}` }, "Live tail"));
  every(2000, async () => {
    try {
      const plan = await getJSON(`/api/queries/${id}/plan`);
      facts.replaceChildren(planFacts(plan));
      picture.replaceChildren(drawPlan(plan));
      error.textContent = "";
    } catch (e) { error.textContent = e.message; }
  });
}

// ---- Live results (tail and SQL) -----------------------------------------------------

const COLORS = ["#2f6fdf", "#d92d20", "#12b76a", "#f79009", "#7a5af8", "#0ba5ec", "#ee46bc", "#667085"];
const NUMERIC = ["smallint", "integer", "bigint", "real", "double precision", "numeric"];
// Column names of aggregates: the chart prefers them to a numeric group key.
const AGGREGATE = /^(count|sum|avg|min|max|stddev|stddev_pop|stddev_samp|variance|var_pop|var_samp|bool_and|bool_or|every|mode|median|percentile_cont|percentile_disc)$/;

// The column the chart starts with: the first aggregate, else the last numeric column
// (group keys come first in a select list).
function defaultChartColumn(numeric) {
  const agg = numeric.find((c) => AGGREGATE.test(c.name));
  return agg ? agg.name : numeric.length ? numeric[numeric.length - 1].name : "";
}

// A table of the latest rows and a chart of one numeric column over wtime for the chosen
// groups (the values of the text columns). The chart is shown only for rows it can draw
// (a time column and a numeric one); `continuous` (the live tail) shows it before its
// first window closes, saying so.
function liveView(container, continuous) {
  const ROWS_SHOWN = 200, POINTS_MAX = 2000;
  let columns = [], rows = [], received = 0;
  const series = new Map(); // group -> [[t, {col: v}]]
  const chosen = new Set();
  const head = el("thead"), body = el("tbody");
  const pick = el("select", { id: "chart-column" });
  const groups = el("div", { class: "groups", id: "chart-groups" });
  const chart = el("div", { id: "chart" });
  const info = el("div", { class: "muted", id: "tail-info" });
  const card = el("div", { class: "card", id: "chart-card", hidden: "" },
    el("div", { class: "row-controls" }, el("label", {}, "Chart ", pick), info), chart, groups);
  container.append(card, el("div", { class: "scroll" }, el("table", { id: "tail-rows" }, head, body)));
  const timeCol = () => columns.findIndex((c) => c.name === "wtime") >= 0
    ? columns.findIndex((c) => c.name === "wtime")
    : columns.findIndex((c) => c.type.startsWith("timestamp"));
  // Groups are told apart by their text columns, and by interval columns such as
  // wrange(*), which tell the windows of a multi-window query apart.
  const keyCols = () => columns.map((c, i) => i).filter((i) => ["text", "interval"].includes(columns[i].type));
  const groupOf = (r) => keyCols().map((i) => r[i]).join(" / ") || "all rows";
  const parseTime = (v) => Date.parse(String(v).replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00") + (/[zZ+-]\d\d(:\d\d)?$/.test(String(v)) ? "" : "Z"));

  function setColumns(cols) {
    columns = cols;
    head.replaceChildren(el("tr", {}, cols.map((c) => el("th", {}, c.name))));
    const numeric = cols.filter((c) => NUMERIC.includes(c.type));
    pick.replaceChildren(...numeric.map((c) => el("option", { value: c.name }, c.name)));
    pick.value = defaultChartColumn(numeric);
    pick.onchange = draw;
    if (continuous && chartable()) card.hidden = false;
    draw();
  }

  const chartable = () => timeCol() >= 0 && columns.some((c) => NUMERIC.includes(c.type));

  function addRows(batch) {
    received += batch.length;
    rows = batch.concat(rows).slice(0, ROWS_SHOWN);
    body.replaceChildren(...rows.map((r) => el("tr", {}, r.map((v) => el("td", {}, v === null ? "NULL" : String(v))))));
    const tc = timeCol();
    if (tc >= 0) {
      for (const r of batch) {
        const g = groupOf(r);
        if (!series.has(g)) {
          series.set(g, []);
          if (chosen.size < 5) chosen.add(g);
        }
        const s = series.get(g);
        s.push([parseTime(r[tc]), r]);
        if (s.length > POINTS_MAX) s.shift();
      }
    }
    info.textContent = `${fmt(received)} rows received`;
    drawGroups();
    draw();
  }

  function drawGroups() {
    if (groups.childElementCount === series.size) return;
    groups.replaceChildren(...[...series.keys()].sort().map((g) => el("label", { style: "display:block" },
      el("input", { type: "checkbox", ...(chosen.has(g) ? { checked: "" } : {}), onchange: (e) => {
        if (e.target.checked) chosen.add(g); else chosen.delete(g);
        draw();
      } }), " " + g)));
  }

  function draw() {
    const col = columns.findIndex((c) => c.name === pick.value);
    const W = 900, H = 260, L = 60, B = 24;
    const picture = svg("svg", { id: "tail-chart", width: W, height: H });
    const lines = [...chosen].map((g) => [g, (series.get(g) || []).map(([t, r]) => [t, r[col] === null ? NaN : Number(r[col])]).filter(([t, v]) => !isNaN(t) && !isNaN(v))]);
    const pts = lines.flatMap(([, p]) => p);
    if (col < 0 || !pts.length) {
      // Nothing to draw yet: the live tail says it waits; other results show no chart.
      card.hidden = !(continuous && chartable());
      picture.append(svg("text", { x: L, y: H / 2, class: "axis-label" }, "waiting for windows to close…"));
      chart.replaceChildren(picture);
      return;
    }
    card.hidden = false;
    const t0 = Math.min(...pts.map((p) => p[0])), t1 = Math.max(...pts.map((p) => p[0]));
    const v0 = Math.min(0, ...pts.map((p) => p[1])), v1 = Math.max(...pts.map((p) => p[1]));
    const x = (t) => L + (t1 === t0 ? 0.5 : (t - t0) / (t1 - t0)) * (W - L - 10);
    const y = (v) => H - B - (v1 === v0 ? 0.5 : (v - v0) / (v1 - v0)) * (H - B - 10);
    picture.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - 10, y2: H - B }),
      svg("line", { class: "axis", x1: L, y1: 10, x2: L, y2: H - B }),
      svg("text", { class: "axis-label", x: 4, y: 16 }, fmt(v1)),
      svg("text", { class: "axis-label", x: 4, y: H - B }, fmt(v0)),
      svg("text", { class: "axis-label", x: L, y: H - 6 }, new Date(t0).toISOString().replace("T", " ").slice(0, 19)),
      svg("text", { class: "axis-label", x: W - 130, y: H - 6 }, new Date(t1).toISOString().replace("T", " ").slice(0, 19)));
    const legend = el("div", { class: "legend" });
    lines.forEach(([g, p], i) => {
      const color = COLORS[i % COLORS.length];
      picture.append(svg("polyline", { class: "series", "data-group": g, fill: "none", stroke: color, "stroke-width": 1.5,
        points: p.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ") }));
      // A group's points as dots too while they are few, so a group of one point shows.
      if (p.length <= 60) {
        for (const [t, v] of p) {
          picture.append(svg("circle", { class: "point", "data-group": g, cx: x(t).toFixed(1), cy: y(v).toFixed(1), r: 2.5, fill: color }));
        }
      }
      legend.append(el("span", {}, el("i", { style: `background:${color}` }), g));
    });
    chart.replaceChildren(picture, legend);
  }

  return { setColumns, addRows };
}

// Follow an event stream of the console's protocol (session, columns, rows, notice,
// complete, error, limit, end) into a live view; returns a function that stops it.
function follow(url, view, log) {
  const source = new EventSource(url);
  const stop = () => source.close();
  source.addEventListener("session", (e) => log(`session pid ${JSON.parse(e.data).pid}`, "muted"));
  source.addEventListener("columns", (e) => view.setColumns(JSON.parse(e.data)));
  source.addEventListener("rows", (e) => view.addRows(JSON.parse(e.data)));
  source.addEventListener("notice", (e) => log("NOTICE: " + JSON.parse(e.data), "notice"));
  source.addEventListener("complete", (e) => log(JSON.parse(e.data).tag, "muted"));
  source.addEventListener("limit", (e) => { log(`stopped after ${JSON.parse(e.data).rows} rows (the console's limit)`, "notice"); stop(); });
  source.addEventListener("end", () => { log("done", "muted"); stop(); });
  // A named "error" event carries the statement's error; a plain one is the connection's.
  source.addEventListener("error", (e) => {
    if (e.data) {
      const err = JSON.parse(e.data);
      log([`ERROR ${err.sqlstate}: ${err.message}`, err.detail ? `DETAIL: ${err.detail}` : null,
        err.hint ? `HINT: ${err.hint}` : null].filter(Boolean).join("\n"), "error");
    }
    else if (source.readyState !== EventSource.OPEN) log("connection closed", "error");
    stop();
  });
  return stop;
}

function logger(box) {
  return (text, cls) => box.append(el("div", { class: cls }, text));
}

function tailPage(id) {
  const log = el("div", { id: "tail-log" });
  const view = el("div");
  main.append(el("h2", {}, `Live tail of query ${id}`),
    el("p", { class: "muted" }, "The query's rows from now on, as its windows close."), log, view);
  getJSON("/api/queries").then((qs) => {
    const q = qs.find((q) => String(q.id) === String(id));
    if (q) view.before(el("pre", { class: "sql card" }, q.text));
  });
  const stop = follow(`/api/queries/${id}/tail`, liveView(view, true), logger(log));
  cleanup.push(stop);
}

function sqlPage() {
  const text = el("textarea", { id: "sql-text", spellcheck: "false" },
    "SELECT origin, count(*), avg(delay), wtime(*)\nFROM flights [RANGE BY '1 hour' SLIDE BY '10 minutes' START AT 'epoch']\nGROUP BY origin");
  const out = el("div", { id: "sql-out" });
  const state = el("span", { id: "sql-state", class: "muted" });
  let stop = null, log = null;
  // Stop: the statement's event stream is closed (which cancels it) and the page says so.
  const halt = () => {
    if (stop) {
      stop();
      if (log) log.append(el("div", { class: "notice stopped" }, "stopped"));
      state.textContent = "stopped";
    }
    stop = null;
  };
  cleanup.push(() => { if (stop) stop(); stop = null; });
  const run = async () => {
    if (stop) stop();
    stop = null;
    out.replaceChildren();
    state.textContent = "running";
    const sql = text.value;
    const explain = /^\s*explain\b/i.test(sql);
    log = el("div");
    out.append(log);
    if (explain) {
      // The plan picture comes from EXPLAIN (FORMAT JSON) of the statement being explained.
      const inner = sql.replace(/^\s*explain\s+(\([^)]*\)\s*)?(analyze\s+)?(verbose\s+)?/i, "");
      try {
        const plan = await getJSON("/api/explain", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ sql: inner }) });
        out.append(planFacts(plan), el("div", { class: "card plan" }, drawPlan(plan)));
      } catch (e) { out.append(el("div", { class: "muted" }, `No plan picture: ${e.message}`)); }
    }
    const view = el("div");
    out.append(view);
    const write = logger(log);
    stop = follow(`/api/sql/stream?sql=${encodeURIComponent(sql)}`, liveView(view, false), (text, cls) => {
      write(text, cls);
      if (text === "done" || cls === "error") {
        state.textContent = text === "done" ? "done" : "failed";
        stop = null;
      }
    });
  };
  main.append(el("h2", {}, "SQL"), text,
    el("div", {}, el("button", { id: "sql-run", onclick: run }, "Run"),
      el("button", { class: "secondary", id: "sql-stop", onclick: halt }, "Stop"), " ", state),
    el("p", { class: "muted" }, "Statements run in a session of their own. A continuous SELECT streams its rows until it ends or you press Stop; EXPLAIN also draws the plan."),
    out);
}

// ---- Routing ------------------------------------------------------------------------

function route() {
  cleanup.forEach((f) => f());
  cleanup = [];
  main.replaceChildren();
  const [page, arg] = (location.hash.replace(/^#\//, "") || "streams").split("/");
  document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("active", a.dataset.page === page));
  setStatus("");
  if (page === "queries") queriesPage();
  else if (page === "plan") planPage(arg);
  else if (page === "tail") tailPage(arg);
  else if (page === "sql") sqlPage();
  else streamsPage();
}

window.addEventListener("hashchange", route);
route();
