#!/usr/bin/env python3
"""COPY FROM STDIN and COPY TO STDOUT, tcq against a real PostgreSQL, case by case.

    python3 scripts/copy_vs_postgres.py [--tcq DSN] [--pg DSN] [--seed N] [--cases N]
        [--out diffs.jsonl]

Each case draws a COPY option set (text or CSV; DELIMITER, NULL, QUOTE, ESCAPE, HEADER
[MATCH], FORCE_NOT_NULL, FORCE_NULL, ENCODING, FREEZE, a column list, the legacy
spelling) and a small input over bytes that matter to COPY (delimiters, quotes,
backslashes, `\\.`, CR, LF, multibyte UTF-8, invalid bytes), cut into random CopyData
pieces, and sends it with psycopg's `cursor.copy()` to both servers' table
`t (a integer, b text, c text)` (dropped and created on each). It compares success or
failure, the rows stored (NULL apart from ''), the SQLSTATE, the message, and the line and
column (the CONTEXT field). Some cases are sent again to tcq one
byte per message and whole, which must give the same result; after successful loads, COPY
TO of the table or of a query is compared byte for byte. tcq must answer `SELECT 1` after
every case.

Differences go to the --out file (one JSON object each, with the SQL and the bytes); the
summary prints them grouped by kind, then what matched. Needs `pip install
'psycopg[binary]'`, a running `tcqd` and a PostgreSQL (Debian: `pg_ctlcluster 15 main
start`; the database of --pg must exist). Not part of `cargo test`: it needs PostgreSQL.
"""
import argparse
import json
import random
import re

import psycopg

TCQ = "host=127.0.0.1 port=5433 user=tcq dbname=tcq"
PG = "host=127.0.0.1 user=postgres dbname=postgres"

CTX = re.compile(r"^COPY t, line (\d+)(?:, column (\w+))?")


class Server:
    def __init__(self, name, dsn):
        self.name, self.dsn = name, dsn
        self.connect()

    def connect(self):
        self.conn = psycopg.connect(self.dsn, autocommit=True)
        self.conn.execute("DROP TABLE IF EXISTS t")
        self.conn.execute("CREATE TABLE t (a integer, b text, c text)")

    def reset(self):
        try:
            self.conn.execute("TRUNCATE t")
        except Exception:
            self.connect()

    def err(self, e):
        d = e.diag
        msg = d.message_primary or str(e)
        line = col = None
        if d.context:
            m = CTX.match(d.context)
            if m:
                line, col = m.group(1), m.group(2)
        return ("err", d.sqlstate, msg, line, col)

    def run(self, sql, data, pieces):
        """Returns a result tuple."""
        cur = self.conn.cursor()
        try:
            with cur.copy(sql) as cp:
                pos = 0
                for n in pieces:
                    cp.write(data[pos : pos + n])
                    pos += n
            rc = cur.rowcount
        except psycopg.Error as e:
            return self.failed(e)
        rows = self.conn.execute("SELECT a, b, c FROM t").fetchall()
        rows = sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r))
        return ("ok", rc, rows)

    def copy_out(self, sql):
        cur = self.conn.cursor()
        try:
            out = bytearray()
            with cur.copy(sql) as cp:
                for b in cp:
                    out += b
            return ("ok", bytes(out))
        except psycopg.Error as e:
            return self.failed(e)

    def failed(self, e):
        """The result of a statement that raised `e`; a lost connection is made again."""
        if self.conn.broken or self.conn.closed:
            r = ("broken", type(e).__name__, str(e))
            self.connect()
            return r
        return self.err(e)


def sqlstr(s):
    if "\t" in s or "\\" in s:
        return "E'" + s.replace("\\", "\\\\").replace("'", "\\'").replace("\t", "\\t") + "'"
    return "'" + s.replace("'", "''") + "'"


# ---------------------------------------------------------------- options
def gen_options(rng):
    o = {}
    o["format"] = rng.choice(["text", "text", "csv", "csv", "csv", None])
    csv = o["format"] == "csv"
    r = rng.random()
    if r < 0.45:
        o["delimiter"] = None
    elif r < 0.97:
        o["delimiter"] = rng.choice([",", "|", ";", "\t"])
    else:
        o["delimiter"] = rng.choice(["ab", ".", "\\", "x", '"', "", "\n", "\r", "é", "N"])
    r = rng.random()
    if r < 0.5:
        o["null"] = None
    elif r < 0.97:
        o["null"] = rng.choice(["", "NA", "\\N"])
    else:
        o["null"] = rng.choice([",", "|", '"', "N", "a\\b", "\n", "\r", "é"])
    if csv or rng.random() < 0.04:
        if rng.random() < 0.4:
            o["quote"] = rng.choice(['"', "'", "|", "N", "é", "ab", ""] if rng.random() < 0.1 else ['"', "'", "|"])
        if rng.random() < 0.4:
            o["escape"] = rng.choice(['"', "\\", "'", "|"] if rng.random() < 0.95 else ["ab", "", "é"])
    r = rng.random()
    if r < 0.55:
        o["header"] = None
    else:
        o["header"] = rng.choice(["true", "false", "match", "MATCH", "on", "1", "0", None] + (["bogus", "2"] if rng.random() < 0.1 else []))
        if o["header"] is None:
            o["header"] = ""  # bare HEADER
    if csv or rng.random() < 0.03:
        if rng.random() < 0.25:
            o["fnn"] = rng.choice(["b", "c", "b, c", "a"] + (["*", "d", "b, b"] if rng.random() < 0.15 else []))
        if rng.random() < 0.25:
            o["fn"] = rng.choice(["b", "c", "b, c", "a"] + (["*", "d", "c, c"] if rng.random() < 0.15 else []))
    if rng.random() < 0.02:
        o["encoding"] = rng.choice(["UTF8", "utf-8", "LATIN1", "nope"])
    if rng.random() < 0.01:
        o["freeze"] = rng.choice(["", "true", "false"])
    if rng.random() < 0.01:
        o["dup"] = True
    o["cols"] = rng.choice([None] * 12 + ["a, b, c", "b, c", "c, a, b", "a, c", "b, c, a"] + (["a, a, b", "a, d"] if rng.random() < 0.1 else []))
    o["legacy"] = rng.random() < 0.15
    return o


def options_sql(o, direction="FROM"):
    tgt = "t" + (" (%s)" % o["cols"] if o["cols"] else "")
    head = "COPY %s %s %s" % (tgt, direction, "STDIN" if direction == "FROM" else "STDOUT")
    if o["legacy"]:
        parts = []
        if o["format"] == "csv":
            parts.append("CSV")
        if o["delimiter"] is not None:
            parts.append("DELIMITER AS " + sqlstr(o["delimiter"]))
        if o["null"] is not None:
            parts.append("NULL AS " + sqlstr(o["null"]))
        if o.get("header") is not None:
            parts.append("HEADER")  # legacy only has bare HEADER
        if "quote" in o:
            parts.append("QUOTE AS " + sqlstr(o["quote"]))
        if "escape" in o:
            parts.append("ESCAPE AS " + sqlstr(o["escape"]))
        if "fnn" in o and o["fnn"] != "*":
            parts.append("FORCE NOT NULL " + o["fnn"])
        if "freeze" in o:
            parts.append("FREEZE")
        if "encoding" in o:
            parts.append("ENCODING " + sqlstr(o["encoding"]))
        if not parts:
            return head
        return head + " WITH " + " ".join(parts)
    parts = []
    if o["format"] is not None:
        parts.append("FORMAT " + o["format"])
    if o["delimiter"] is not None:
        parts.append("DELIMITER " + sqlstr(o["delimiter"]))
    if o["null"] is not None:
        parts.append("NULL " + sqlstr(o["null"]))
    if o.get("header") is not None:
        parts.append(("HEADER " + o["header"]).strip())
    if "quote" in o:
        parts.append("QUOTE " + sqlstr(o["quote"]))
    if "escape" in o:
        parts.append("ESCAPE " + sqlstr(o["escape"]))
    if "fnn" in o:
        parts.append("FORCE_NOT_NULL " + ("*" if o["fnn"] == "*" else "(%s)" % o["fnn"]))
    if "fn" in o:
        parts.append("FORCE_NULL " + ("*" if o["fn"] == "*" else "(%s)" % o["fn"]))
    if "encoding" in o:
        parts.append("ENCODING " + sqlstr(o["encoding"]))
    if "freeze" in o:
        parts.append(("FREEZE " + o["freeze"]).strip())
    if o.get("dup") and parts:
        parts.append(parts[0])
    if not parts:
        return head
    return head + " (" + ", ".join(parts) + ")"


# ---------------------------------------------------------------- data
ALPHA = ["\t", ",", '"', "\\", ".", "N", "\r", "\n", "0", "1", "7", "9", "a", "b", "x", "é", "'", "|", ";", " ", "A", "-"]
SAFE = ["a", "b", "x", "é", "1", "7", " ", "-", "N", "A", "."]


def rnd_str(rng, alpha, lo=0, hi=5):
    return "".join(rng.choice(alpha) for _ in range(rng.randint(lo, hi)))


def gen_data(rng, o):
    csv = o["format"] == "csv"
    delim = o["delimiter"] if o["delimiter"] not in (None, "") else ("," if csv else "\t")
    if len(delim) != 1:
        delim = delim[:1] or ","
    null = o["null"] if o["null"] is not None else ("" if csv else "\\N")
    quote = o.get("quote") or '"'
    quote = quote[:1]
    escape = (o.get("escape") or quote)[:1]
    eol = rng.choice(["\n", "\n", "\n", "\r\n", "\r"])
    ncols = len(o["cols"].split(",")) if o["cols"] else 3

    def field(ci):
        r = rng.random()
        if ci == 0 and (r < 0.5 or rng.random() < 0.6):
            return str(rng.randint(-50, 1000))
        if r < 0.12:
            return null
        if r < 0.17 and not csv:
            return "\\N"
        if csv:
            if rng.random() < 0.45:
                body = ""
                for _ in range(rng.randint(0, 5)):
                    t = rng.choice(ALPHA + [quote, quote, eol])
                    if t == quote:
                        t = (escape + quote) if rng.random() < 0.9 else quote
                    elif t == escape and escape != quote and rng.random() < 0.8:
                        t = escape + escape
                    body += t
                return quote + body + quote + (rng.choice(ALPHA) if rng.random() < 0.05 else "")
            return rnd_str(rng, SAFE + ([rng.choice(ALPHA)] if rng.random() < 0.3 else []))
        # text
        s = ""
        for _ in range(rng.randint(0, 5)):
            r2 = rng.random()
            if r2 < 0.6:
                s += rng.choice(SAFE)
            elif r2 < 0.85:
                s += "\\" + rng.choice(["t", "n", "r", "\\", delim, "\n", "\r", "N", ".", "x41", "x", "xé", "101", "7", "0", "b", "f", "v", "a", "é", "x4", "xff", "377", "x80", "v"])
            else:
                s += rng.choice(ALPHA)
        return s

    lines = []
    if o.get("header") is not None and o.get("header") not in ("false", "0") and rng.random() < 0.9:
        names = (o["cols"] or "a, b, c").replace(" ", "").split(",")
        r = rng.random()
        if r < 0.15:
            names = names[::-1]
        elif r < 0.25:
            names = names[:-1]
        elif r < 0.3:
            names = names + ["d"]
        elif r < 0.4:
            names = [(quote + n + quote) if csv else n for n in names]
        elif r < 0.45:
            names = [null] + names[1:]
        lines.append(delim.join(names))
    for _ in range(rng.randint(0, 5)):
        n = ncols
        r = rng.random()
        if r < 0.1:
            n = ncols - 1
        elif r < 0.15:
            n = ncols + 1
        elif r < 0.17:
            n = 1
        lines.append(delim.join(field(i % 3) for i in range(n)))
    if rng.random() < 0.15:
        lines.append("\\." + (rng.choice(["", "", "x", " "]) if rng.random() < 0.3 else ""))
        if rng.random() < 0.4:
            lines.append(rnd_str(rng, ALPHA, 0, 6))
    if rng.random() < 0.05 and lines:
        i = rng.randrange(len(lines))
        lines[i] += "\\."
    s = eol.join(lines)
    if lines and rng.random() < 0.85:
        s += eol
    # mixed eol
    if rng.random() < 0.08:
        s = s.replace(eol, rng.choice(["\n", "\r\n", "\r"]), 1) if rng.random() < 0.5 else s + rng.choice(["\n", "\r\n", "\r"])
    # mutations
    if rng.random() < 0.2 and s:
        b = list(s)
        for _ in range(rng.randint(1, 3)):
            k = rng.random()
            p = rng.randrange(len(b) + 1)
            if k < 0.4:
                b.insert(p, rng.choice(ALPHA))
            elif k < 0.7 and b:
                del b[min(p, len(b) - 1)]
            elif b:
                b[min(p, len(b) - 1)] = rng.choice(ALPHA)
        s = "".join(b)
    data = s.encode()
    if rng.random() < 0.01 and data:
        p = rng.randrange(len(data))
        data = data[:p] + rng.choice([b"\xff", b"\xc3", b"\x00", b"\xe9"]) + data[p:]
    return data


def gen_pieces(rng, n, mode=None):
    if mode is None:
        r = rng.random()
        mode = "one" if r < 0.1 else "whole" if r < 0.3 else "small" if r < 0.7 else "mid"
    if n == 0:
        return [0] if rng.random() < 0.5 else []
    if mode == "whole":
        return [n]
    res = []
    left = n
    while left > 0:
        k = 1 if mode == "one" else rng.randint(1, 5) if mode == "small" else rng.randint(1, 40)
        k = min(k, left)
        res.append(k)
        left -= k
    return res


# ---------------------------------------------------------------- compare
def signature(rt, rp):
    """None if equal, else a difference kind string."""
    if rt[0] != rp[0]:
        if rt[0] == "broken":
            return "tcq-broken"
        if rt[0] == "ok":
            return "tcq-ok/pg-err %s" % rp[1]
        return "tcq-err %s/pg-ok" % rt[1]
    if rt[0] == "ok":
        kinds = []
        if rt[1] != rp[1]:
            kinds.append("rowcount")
        if rt[2] != rp[2]:
            kinds.append("rows")
        return ("ok-differ " + "+".join(kinds)) if kinds else None
    if rt[0] == "broken":
        return "both-broken"
    kinds = []
    if rt[1] != rp[1]:
        kinds.append("sqlstate %s vs %s" % (rt[1], rp[1]))
    elif rt[2] != rp[2]:
        kinds.append("msg %s" % rt[1])
    else:
        if rt[3] != rp[3]:
            kinds.append("line %s" % rt[1])
        if rt[4] != rp[4]:
            kinds.append("column %s" % rt[1])
    return "; ".join(kinds) if kinds else None


def norm_msg(m):
    m = re.sub(r'"[^"]*"', '"…"', m or "")
    return re.sub(r"\d+", "N", m)


def bucket(sig, rt, rp):
    if sig.startswith("msg") or sig.startswith("sqlstate"):
        return sig + " | " + norm_msg(rt[2]) + " || " + norm_msg(rp[2])
    if sig.startswith("tcq-ok") or sig.startswith("tcq-err"):
        m = rp[2] if rp[0] == "err" else rt[2]
        return sig + " | " + norm_msg(m)
    return sig


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tcq", default=TCQ, help="tcq's libpq connection string")
    ap.add_argument("--pg", default=PG, help="PostgreSQL's libpq connection string")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--out", default=None, help="differences, JSON lines (diffs-SEED.jsonl)")
    args = ap.parse_args()
    seed, n = args.seed, args.cases
    outname = args.out or "diffs-%d.jsonl" % seed
    rng = random.Random(seed)
    tcq, pg = Server("tcq", args.tcq), Server("pg", args.pg)
    out = open(outname, "w")
    stats = {"cases": 0, "ok_both": 0, "err_both": 0, "diff": 0, "one_byte": 0, "copyout": 0, "copyout_diff": 0, "select1_fail": 0}
    buckets = {}
    matched = {}
    for i in range(n):
        o = gen_options(rng)
        sql = options_sql(o)
        data = gen_data(rng, o)
        pieces = gen_pieces(rng, len(data))
        if pieces and all(p == 1 for p in pieces):
            stats["one_byte"] += 1
        tcq.reset()
        pg.reset()
        rt = tcq.run(sql, data, pieces)
        rp = pg.run(sql, data, pieces)
        stats["cases"] += 1
        try:
            tcq.conn.execute("SELECT 1").fetchall()
        except Exception as e:
            stats["select1_fail"] += 1
            out.write(json.dumps({"select1_fail": str(e), "sql": sql, "data": repr(data)}) + "\n")
            tcq.connect()
        if rng.random() < 0.15 and len(data) > 1 and not all(p == 1 for p in pieces):
            stats["selfcheck"] = stats.get("selfcheck", 0) + 1
            tcq.reset()
            rt1 = tcq.run(sql, data, [1] * len(data))
            tcq.reset()
            rt2 = tcq.run(sql, data, [len(data)])
            if not (rt1 == rt2 == rt):
                stats["selfcheck_diff"] = stats.get("selfcheck_diff", 0) + 1
                out.write(json.dumps({"bucket": "tcq-piece-dependence", "sql": sql, "data": repr(data), "pieces": pieces, "tcq": repr((rt, rt1, rt2)), "pg": repr(rp)}) + "\n")
        sig = signature(rt, rp)
        if sig is None:
            stats["ok_both" if rt[0] == "ok" else "err_both"] += 1
            k = "ok" if rt[0] == "ok" else "%s %s" % (rp[1], norm_msg(rp[2]))
            matched[k] = matched.get(k, 0) + 1
        else:
            stats["diff"] += 1
            b = bucket(sig, rt, rp)
            buckets[b] = buckets.get(b, 0) + 1
            out.write(json.dumps({"bucket": b, "sql": sql, "data": repr(data), "pieces": pieces if len(pieces) < 50 else "many", "tcq": repr(rt), "pg": repr(rp)}) + "\n")
            out.flush()
        # COPY TO on success
        if rt[0] == "ok" and rp[0] == "ok" and rt[2] == rp[2] and rng.random() < 0.5:
            o2 = dict(o)
            o2.pop("fnn", None)
            o2.pop("fn", None)
            o2.pop("freeze", None)
            o2["cols"] = None
            if o2.get("header") and o2["header"].lower() == "match":
                o2["header"] = "true"
            if rng.random() < 0.5:
                q = options_sql(o2, "TO")
            else:
                q = options_sql(o2, "TO").replace("COPY t TO", "COPY (SELECT a, b, c FROM t ORDER BY a, b, c) TO")
            ct, cp_ = tcq.copy_out(q), pg.copy_out(q)
            stats["copyout"] += 1
            if ct != cp_:
                # ignore storage-order-only differences for COPY t
                if ct[0] == cp_[0] == "ok" and sorted(ct[1].splitlines()) == sorted(cp_[1].splitlines()) and "ORDER BY" not in q:
                    pass
                else:
                    stats["copyout_diff"] += 1
                    b = "copyout " + (ct[0] + "/" + cp_[0]) + " " + (norm_msg(ct[2]) if ct[0] == "err" else "") + " || " + (norm_msg(cp_[2]) if cp_[0] == "err" else "")
                    buckets[b] = buckets.get(b, 0) + 1
                    out.write(json.dumps({"bucket": b, "sql": q, "tcq": repr(ct), "pg": repr(cp_), "data_in": repr(data), "sql_in": sql}) + "\n")
    out.close()
    print(json.dumps(stats))
    for b, c in sorted(buckets.items(), key=lambda x: -x[1]):
        print("%5d  %s" % (c, b))
    print("---- matched")
    for b, c in sorted(matched.items(), key=lambda x: -x[1]):
        print("%5d  %s" % (c, b))


if __name__ == "__main__":
    main()
