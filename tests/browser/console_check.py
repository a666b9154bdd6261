"""Drive the web console in headless Chromium and check what each page renders.

Run by tests/it/console_browser.rs against a server fed with the flights sample, which keeps
ingesting while this runs (so windows close and the live views receive rows). Usage:

    python3 console_check.py URL SCREENSHOT_DIR

It uses Playwright for Python against the system's Chromium (/usr/bin/chromium, Debian's
package; Playwright's own browser download is never used). Every check prints one line;
the first failure raises, so the exit status is non-zero. Screenshots of every page go to
SCREENSHOT_DIR.
"""

import json
import os
import sys
import urllib.request

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("TCQ_CHROMIUM", "/usr/bin/chromium")
# The flags this machine's closed network needs (no background fetches, no QUIC).
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print("ok:", what)


def main(url, out):
    os.makedirs(out, exist_ok=True)
    errors = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 820})
        page.on("pageerror", lambda e: errors.append(str(e)))
        # Every resource loads: no 404 (the favicon was one on every page) and no failure
        # other than the event streams the console closes itself.
        failed = []
        page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.on(
            "requestfailed",
            lambda r: None if "/api/" in r.url else failed.append(f"failed {r.url}"),
        )

        # Streams: the flights stream with its TIMESTAMPCOLUMN and counters.
        page.goto(url + "#/streams")
        row = page.wait_for_selector('tr[data-stream="flights"]', timeout=15000)
        text = row.inner_text()
        check("ts timestamp without time zone TIMESTAMPCOLUMN" in text, "streams: schema marks the timestamp column")
        check("UNARCHIVED" in text, "streams: stream type shown")
        page.wait_for_selector('tr[data-stream="flights"] svg.sparkline polyline', timeout=15000)
        check(True, "streams: ingest-rate sparkline drawn")
        header = page.eval_on_selector_all("#streams thead th", "ts => ts.map(t => t.textContent)")
        check(header[-3:] == ["On disk", "Retention", "Source"], f"streams: disk size, retention and source columns {header[-3:]}")
        table = page.wait_for_selector('#tables tr[data-table="airports"]', timeout=15000).inner_text()
        check("code text, hubs integer" in table and "2" in table, f"streams: tables listed {table!r}")
        page.screenshot(path=os.path.join(out, "streams.png"))

        # Queries: the registered query with its client and a Plan link.
        page.goto(url + "#/queries")
        row = page.wait_for_selector('tr[data-query="1"]', timeout=15000)
        text = row.inner_text()
        check("GROUP BY origin" in text, "queries: query text shown")
        check("console-browser-reader" in text, "queries: client application shown")
        check(row.query_selector('a[href="#/plan/1"]') is not None, "queries: plan link present")
        page.screenshot(path=os.path.join(out, "queries.png"))

        # Plan: S and every node of the plan the server runs (which it chose by cost from
        # the data), factor windows marked, and an edge per node labelled with its source.
        plan = json.load(urllib.request.urlopen(url + "api/queries/1/plan"))["plan"]["nodes"]
        want_nodes = sorted(["S"] + [n["name"] for n in plan])
        want_factors = sorted(n["name"] for n in plan if n["factor"])
        want_edges = sorted(
            [n["parent"] or "S", n["name"], f"M = {n['multiplier']}" if n["parent"] else "raw tuples"]
            for n in plan
        )
        check({"w1", "w2", "w3"} <= set(want_nodes), f"plan: the three user windows served {want_nodes}")
        page.goto(url + "#/plan/1")
        page.wait_for_selector("svg#plan-graph g.node", timeout=15000)
        nodes = page.eval_on_selector_all("svg#plan-graph g.node", "ns => ns.map(n => n.dataset.name)")
        check(sorted(nodes) == want_nodes, f"plan: nodes {sorted(nodes)}")
        factors = page.eval_on_selector_all("svg#plan-graph g.node.factor", "ns => ns.map(n => n.dataset.name)")
        check(sorted(factors) == want_factors, f"plan: factor windows marked {factors}")
        edges = page.eval_on_selector_all(
            "svg#plan-graph g.edge", "es => es.map(e => [e.dataset.from, e.dataset.to, e.textContent])"
        )
        check(sorted(edges) == want_edges, f"plan: edges with multipliers {sorted(edges)} (plan {want_edges})")
        measured = page.eval_on_selector_all("svg#plan-graph text.measured", "ts => ts.map(t => t.textContent)")
        check(any(m.startswith("measured: ") and "tuples" in m for m in measured), f"plan: measured work {measured}")
        page.screenshot(path=os.path.join(out, "plan.png"))

        # Live tail: rows arrive as windows close, and the chart draws a line per group.
        page.goto(url + "#/tail/1")
        page.wait_for_selector("#tail-rows tbody tr", timeout=30000)
        page.wait_for_function(
            "() => [...document.querySelectorAll('#tail-chart polyline.series')]"
            ".some(p => p.getAttribute('points').split(' ').length >= 3)",
            timeout=30000,
        )
        header = page.eval_on_selector_all("#tail-rows thead th", "ts => ts.map(t => t.textContent)")
        check(header == ["origin", "wrange", "count", "avg", "max", "wtime"], f"tail: columns {header}")
        check(page.locator("#tail-rows tbody tr").count() > 0, "tail: rows rendered")
        legend = page.eval_on_selector_all("#chart .legend span", "ss => ss.map(s => s.textContent)")
        check(len(legend) >= 1 and all(" / " in g for g in legend), f"tail: a line per group and window {legend}")
        picked = page.eval_on_selector("#chart-column", "s => s.value")
        check(picked == "count", f"tail: the chart starts on an aggregate, not a key ({picked})")
        page.screenshot(path=os.path.join(out, "tail.png"))

        # SQL box: EXPLAIN draws the plan picture, and a continuous SELECT streams rows.
        page.goto(url + "#/sql")
        page.fill(
            "#sql-text",
            "EXPLAIN SELECT count(*) FROM flights [RANGE BY '10 minutes'] [RANGE BY '20 minutes'] [RANGE BY '40 minutes']",
        )
        page.click("#sql-run")
        page.wait_for_selector("#sql-out svg#plan-graph g.node", timeout=15000)
        explained = page.eval_on_selector_all("#sql-out svg#plan-graph g.edge", "es => es.map(e => e.textContent)")
        check(sorted(explained) == ["M = 2", "M = 2", "raw tuples"], f"sql: EXPLAIN drawn {sorted(explained)}")
        page.wait_for_selector("#tail-rows tbody tr", timeout=15000)
        header = page.eval_on_selector_all("#tail-rows thead th", "ts => ts.map(t => t.textContent)")
        check(header == ["QUERY PLAN"], f"sql: EXPLAIN's text rows shown, columns {header}")
        page.wait_for_selector("#sql-state:has-text('done')", timeout=15000)
        check(page.eval_on_selector("#chart-card", "c => c.hidden"), "sql: no empty chart box above EXPLAIN")
        lines = page.eval_on_selector_all("#tail-rows tbody td", "ts => ts.map(t => t.innerText)")
        check(any(l.startswith("    w1") for l in lines), f"sql: EXPLAIN keeps its indentation {lines[:4]}")
        page.screenshot(path=os.path.join(out, "sql-explain.png"))

        # A finite SELECT: its rows, no chart and no "waiting for windows".
        page.fill("#sql-text", "SELECT code, hubs FROM airports ORDER BY code")
        page.click("#sql-run")
        page.wait_for_selector("#sql-state:has-text('done')", timeout=15000)
        rows = page.eval_on_selector_all("#tail-rows tbody tr", "rs => rs.map(r => r.innerText)")
        check(len(rows) == 2, f"sql: finite rows {rows}")
        check(page.eval_on_selector("#chart-card", "c => c.hidden"), "sql: no chart under a finite SELECT")
        check("waiting for windows" not in page.inner_text("#sql-out"), "sql: no waiting message under a finite SELECT")

        # An error keeps psql's HINT.
        page.fill("#sql-text", "SELECT count(*) FROM flights [RANG BY '1 hour']")
        page.click("#sql-run")
        error = page.wait_for_selector("#sql-out .error", timeout=15000).inner_text()
        check("ERROR 42601" in error and "HINT: A window clause is [RANGE BY" in error, f"sql: error with its HINT {error!r}")

        # Hourly windows of a stream with one key a window: each group has a single point,
        # drawn as a dot.
        page.fill(
            "#sql-text",
            "SELECT k, count(*), wtime(*) FROM solo [RANGE BY '1 hour' START AT '2001-01-01'] GROUP BY k",
        )
        page.click("#sql-run")
        page.wait_for_selector("#tail-chart circle.point", timeout=30000)
        single = page.evaluate(
            "() => { const n = {}; document.querySelectorAll('#tail-chart circle.point')"
            ".forEach(c => n[c.dataset.group] = (n[c.dataset.group] || 0) + 1);"
            " return Object.values(n).filter(v => v === 1).length; }"
        )
        check(single >= 1, f"sql: a group with a single point is drawn ({single} such groups)")
        check(page.eval_on_selector("#chart-column", "s => s.value") == "count", "sql: the chart starts on count")
        page.click("#sql-stop")
        state = page.inner_text("#sql-state")
        check(state == "stopped" and page.query_selector("#sql-out .stopped") is not None, f"sql: Stop shows a stopped state ({state})")
        page.screenshot(path=os.path.join(out, "sql-stopped.png"))
        page.fill(
            "#sql-text",
            "SELECT origin, count(*), wtime(*) FROM flights [RANGE BY '10 minutes' START AT 'epoch'] GROUP BY origin",
        )
        page.click("#sql-run")
        page.wait_for_selector("#tail-rows tbody tr", timeout=30000)
        header = page.eval_on_selector_all("#tail-rows thead th", "ts => ts.map(t => t.textContent)")
        check(header == ["origin", "count", "wtime"], f"sql: continuous rows streamed, columns {header}")
        page.screenshot(path=os.path.join(out, "sql.png"))
        page.click("#sql-stop")

        browser.close()
    check(errors == [], f"no script errors {errors}")
    check(failed == [], f"every resource loaded {failed}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
