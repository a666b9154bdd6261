"""Drive the web console in headless Chromium and check what each page renders.

Run by tests/it/console_browser.rs against a server fed with the flights sample, which keeps
ingesting while this runs (so windows close and the live views receive rows). Usage:

    python3 console_check.py URL SCREENSHOT_DIR

It uses Playwright for Python against the system's Chromium (/usr/bin/chromium, Debian's
package; Playwright's own browser download is never used). Every check prints one line;
the first failure raises, so the exit status is non-zero. Screenshots of every page go to
SCREENSHOT_DIR.
"""

import os
import sys

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

        # Streams: the flights stream with its TIMESTAMPCOLUMN and counters.
        page.goto(url + "#/streams")
        row = page.wait_for_selector('tr[data-stream="flights"]', timeout=15000)
        text = row.inner_text()
        check("ts timestamp without time zone TIMESTAMPCOLUMN" in text, "streams: schema marks the timestamp column")
        check("UNARCHIVED" in text, "streams: stream type shown")
        page.wait_for_selector('tr[data-stream="flights"] svg.sparkline polyline', timeout=15000)
        check(True, "streams: ingest-rate sparkline drawn")
        page.screenshot(path=os.path.join(out, "streams.png"))

        # Queries: the registered query with its client and a Plan link.
        page.goto(url + "#/queries")
        row = page.wait_for_selector('tr[data-query="1"]', timeout=15000)
        text = row.inner_text()
        check("GROUP BY origin" in text, "queries: query text shown")
        check("console-browser-reader" in text, "queries: client application shown")
        check(row.query_selector('a[href="#/plan/1"]') is not None, "queries: plan link present")
        page.screenshot(path=os.path.join(out, "queries.png"))

        # Plan: S, the factor window and the three user windows, with labelled edges.
        page.goto(url + "#/plan/1")
        page.wait_for_selector("svg#plan-graph g.node", timeout=15000)
        nodes = page.eval_on_selector_all("svg#plan-graph g.node", "ns => ns.map(n => n.dataset.name)")
        check(sorted(nodes) == ["S", "f1", "w1", "w2", "w3"], f"plan: nodes {sorted(nodes)}")
        factors = page.eval_on_selector_all("svg#plan-graph g.node.factor", "ns => ns.map(n => n.dataset.name)")
        check(factors == ["f1"], f"plan: factor windows marked {factors}")
        edges = page.eval_on_selector_all(
            "svg#plan-graph g.edge", "es => es.map(e => [e.dataset.from, e.dataset.to, e.textContent])"
        )
        check(
            sorted(edges) == [["S", "f1", "raw tuples"], ["f1", "w1", "M = 2"], ["f1", "w2", "M = 3"], ["w1", "w3", "M = 2"]],
            f"plan: edges with multipliers {sorted(edges)}",
        )
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


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
