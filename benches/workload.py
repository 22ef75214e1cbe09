#!/usr/bin/env python3
"""Everyday shapes beyond JSONBench, side by side: df-variant, DuckDB 2.0, ClickHouse 26.9.

    python3 benches/workload.py [--rows 1000000] [--runs 3] [--keep DIR] [--only ENGINE ...]

Generates synthetic e-commerce orders (one JSON object per line: an increasing
`order_id`, an ISO `ts`, `status`, a nested `customer` {id, country, tier}, a
two-decimal `total`, an `items` array of 1-4 objects {sku, qty, price}, a
`comment` text, a `gift_note` on 1 % of the rows, and a `discount` that is a
number in some rows, a numeric string in others, missing in the rest), loads
them into every layout, runs 14 query shapes that are not JSONBench's on each,
checks that every engine returns the same answers, and prints one table:
best-of-N hot wall time per query and layout, our time's ratio to each peer,
and the geometric means; then the SQL behind every number.

The shapes (S1-S14): numeric aggregates per key, a numeric range count, a point
lookup, a high-cardinality integer group-by, two keys under IN, the month of an
ISO timestamp string, exploding an array of objects, a sparse key, a path whose
type varies between rows, LIKE on a text field, top-N by a numeric path,
count(DISTINCT) of an integer path per key, whole rows (to_json) of a 1 % slice,
a narrow range of the increasing id.

Layouts:
  df-variant        our shredded Parquet (COPY from read_json_variant, the
                    writer's inferred shredding), scan cache off (the library's
                    default) and at 1G; hot (best of N after one untimed run in
                    the same process) and the first run in a fresh process;
                    and typed Parquet columns (the same data as plain columns
                    of their types, queried as plain DataFusion: the physical
                    limit of a Parquet scan)
  duckdb 2.0        a native VARIANT table (`j::VARIANT` of the JSON text, the
                    form DuckDB's docs load it) and the JSON text table (->>),
                    default settings, hot
  clickhouse 26.9   in-process through chdb 4.4.0: a MergeTree table with one
                    `JSON` column (no type hints, ORDER BY tuple(): the table
                    ClickHouse's JSON docs create), hot

A missing peer (pip install duckdb==2.0.0 chdb==4.4.0) is reported and skipped.
Every answer is compared with our shredded layout's (floats to 9 significant
digits); S13's second column (the length of the JSON text) is each engine's own
spelling and is not compared.
"""

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jsonbench as jb  # noqa: E402  (its CLI runner and answer normalisation)

# --- the data ----------------------------------------------------------------

STATUSES = (["placed"] * 10 + ["paid"] * 25 + ["shipped"] * 30 + ["delivered"] * 30
            + ["returned"] * 5)
COUNTRIES = ["US", "DE", "FR", "GB", "JP", "BR", "IN", "CA", "AU", "ES", "IT", "NL", "SE",
             "PL", "MX", "KR", "CH", "BE", "AT", "NO", "DK", "FI", "IE", "PT", "NZ"]
TIERS = ["basic"] * 6 + ["silver"] * 3 + ["gold"]
WORDS = ("great product fast shipping would buy again item arrived late box damaged "
         "works as described color differs size fits well cheap quality excellent "
         "support helpful slow refund gift wrapped nicely").split()
CUSTOMERS = 200_000
SKUS = 5_000


def generate(path, rows, seed=42):
    """`rows` orders as NDJSON at `path`, the same bytes for the same seed."""
    rng = random.Random(seed)
    start = 1_704_067_200  # 2024-01-01T00:00:00Z
    step = 366 * 86_400 / rows
    with open(path, "w") as f:
        for i in range(rows):
            t = int(start + i * step + rng.random() * 60)
            o = {
                "order_id": i + 1,
                "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)),
                "status": rng.choice(STATUSES),
                "customer": {
                    "id": rng.randrange(CUSTOMERS),
                    "country": rng.choice(COUNTRIES),
                    "tier": rng.choice(TIERS),
                },
                "items": [
                    {"sku": f"SKU-{rng.randrange(SKUS):05d}", "qty": rng.randint(1, 5),
                     "price": None}
                    for _ in range(rng.randint(1, 4))
                ],
                "comment": " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))),
            }
            for item in o["items"]:
                item["price"] = rng.randrange(199, 49_999) / 100
            total = sum(round(x["price"] * 100) * x["qty"] for x in o["items"])
            if rng.random() < 0.01:
                o["gift_note"] = "for " + rng.choice(WORDS)
            r = rng.random()
            if r < 0.6:
                o["discount"] = rng.randint(0, 30)
            elif r < 0.9:
                o["discount"] = f"{rng.randint(0, 300) / 10}"
            # Two decimals written as such (a JSON decimal), not as a float's repr.
            line = json.dumps(o, separators=(",", ":"))
            line = line[:-1] + f',"total":{total // 100}.{total % 100:02d}}}'
            f.write(line + "\n")


# --- the queries ---------------------------------------------------------------

# Each shape as a template over typed paths: {int:p}, {str:p}, {dbl:p}, {has:p}
# (the path is present), rendered per engine below; shapes whose form differs
# beyond paths (exploding, dates, to_json) are written out per engine.
SHAPES = [
    ("S1 numeric aggregates per key",
     "SELECT {str:status} AS status, count(*) AS n, sum({dbl:total}) AS revenue, "
     "avg({dbl:total}) AS mean FROM {t} GROUP BY 1 ORDER BY 1"),
    ("S2 numeric range count",
     "SELECT count(*) AS n FROM {t} WHERE {dbl:total} BETWEEN 100 AND 110"),
    ("S3 point lookup",
     "SELECT {int:customer.id} AS customer, {dbl:total} AS total FROM {t} "
     "WHERE {int:order_id} = {point}"),
    ("S4 high-cardinality integer group-by",
     "SELECT {int:customer.id} AS customer, count(*) AS n FROM {t} GROUP BY 1 "
     "ORDER BY n DESC, customer LIMIT 10"),
    ("S5 two keys under IN",
     "SELECT {str:customer.country} AS country, {str:status} AS status, count(*) AS n "
     "FROM {t} WHERE {str:customer.country} IN ('DE', 'FR', 'US') GROUP BY 1, 2 ORDER BY 1, 2"),
    ("S6 month of an ISO timestamp string", None),
    ("S7 exploding an array of objects", None),
    ("S8 a sparse key",
     "SELECT count(*) AS n, count(DISTINCT {str:gift_note}) AS notes FROM {t} "
     "WHERE {has:gift_note}"),
    ("S9 a path whose type varies",
     "SELECT count({dbl:discount}) AS n, sum({dbl:discount}) AS discounts FROM {t}"),
    ("S10 LIKE on a text field",
     "SELECT count(*) AS n FROM {t} WHERE {str:comment} LIKE '%fast shipping%'"),
    ("S11 top-N by a numeric path",
     "SELECT {int:order_id} AS id, {dbl:total} AS total FROM {t} "
     "ORDER BY total DESC, id LIMIT 10"),
    ("S12 count(DISTINCT) of an integer path per key",
     "SELECT {str:customer.tier} AS tier, count(DISTINCT {int:customer.id}) AS customers "
     "FROM {t} GROUP BY 1 ORDER BY 1"),
    ("S13 whole rows of a 1 % slice", None),
    ("S14 a narrow range of an increasing id",
     "SELECT count(*) AS n, sum({dbl:total}) AS total FROM {t} "
     "WHERE {int:order_id} BETWEEN {lo} AND {hi}"),
]

RENDER = {
    "ours": dict(int="v:{}::bigint", str="v:{}::string", dbl="v:{}::double",
                 has="v:{} IS NOT NULL", t="orders"),
    "typed": dict(int="{}", str="{}", dbl="{}", has="{} IS NOT NULL", t="typed"),
    "duck variant": dict(int="(j.{})::BIGINT", str="(j.{})::VARCHAR", dbl="(j.{})::DOUBLE",
                         has="j.{} IS NOT NULL", t="orders_variant"),
    "duck text": dict(int="CAST(j->>'$.{}' AS BIGINT)", str="(j->>'$.{}')",
                      dbl="CAST(j->>'$.{}' AS DOUBLE)", has="(j->>'$.{}') IS NOT NULL",
                      t="orders_text"),
    "clickhouse": dict(int="data.{}::Int64", str="data.{}::String", dbl="data.{}::Float64",
                       has="NOT isNull(data.{})", t="orders"),
}

SPECIAL = {
    "ours": {
        5: "SELECT date_part('month', v:ts::timestamp) AS month, count(*) AS n FROM orders "
           "GROUP BY 1 ORDER BY 1",
        6: "SELECT e:sku::string AS sku, sum(e:qty::bigint) AS units FROM orders, "
           "LATERAL variant_explode(v:items) AS x(pos, key, e) GROUP BY 1 "
           "ORDER BY units DESC, sku LIMIT 10",
        12: "SELECT count(*) AS n, sum(length(to_json(v))) AS chars FROM orders "
            "WHERE v:customer.id::bigint < 2000",
    },
    "typed": {
        5: "SELECT date_part('month', ts) AS month, count(*) AS n FROM typed "
           "GROUP BY 1 ORDER BY 1",
        6: "SELECT e['sku'] AS sku, sum(e['qty']) AS units FROM "
           "(SELECT unnest(items) AS e FROM typed) GROUP BY 1 ORDER BY units DESC, sku LIMIT 10",
        # The typed layout has no document to print: every column of the rows.
        12: "SELECT count(*) AS n, sum(length(concat_ws(',', order_id, ts, status, "
            "\"customer.id\", \"customer.country\", \"customer.tier\", total, comment, "
            "gift_note, discount, array_length(items)))) AS chars FROM typed "
            "WHERE \"customer.id\" < 2000",
    },
    "duck variant": {
        5: "SELECT month((j.ts)::TIMESTAMP) AS month, count(*) AS n FROM orders_variant "
           "GROUP BY 1 ORDER BY 1",
        6: "SELECT (e.sku)::VARCHAR AS sku, sum((e.qty)::BIGINT) AS units FROM "
           "(SELECT unnest((j.items)::VARIANT[]) AS e FROM orders_variant) GROUP BY 1 "
           "ORDER BY units DESC, sku LIMIT 10",
        12: "SELECT count(*) AS n, sum(length(j::JSON::VARCHAR)) AS chars FROM orders_variant "
            "WHERE (j.customer.id)::BIGINT < 2000",
    },
    "duck text": {
        5: "SELECT month(CAST(j->>'$.ts' AS TIMESTAMP)) AS month, count(*) AS n FROM orders_text "
           "GROUP BY 1 ORDER BY 1",
        6: "SELECT (e->>'$.sku') AS sku, sum(CAST(e->>'$.qty' AS BIGINT)) AS units FROM "
           "(SELECT unnest(j->'$.items[*]') AS e FROM orders_text) GROUP BY 1 "
           "ORDER BY units DESC, sku LIMIT 10",
        12: "SELECT count(*) AS n, sum(length(j::VARCHAR)) AS chars FROM orders_text "
            "WHERE CAST(j->>'$.customer.id' AS BIGINT) < 2000",
    },
    "clickhouse": {
        5: "SELECT toMonth(data.ts::DateTime64(6, 'UTC')) AS month, count() AS n FROM orders "
           "GROUP BY month ORDER BY month",
        6: "SELECT e.sku::String AS sku, sum(e.qty::Int64) AS units FROM orders "
           "ARRAY JOIN data.items[] AS e GROUP BY sku ORDER BY units DESC, sku LIMIT 10",
        # A missing path casts to 0 unless the type is Nullable.
        8: "SELECT count(data.discount::Nullable(Float64)) AS n, "
           "sum(data.discount::Nullable(Float64)) AS discounts FROM orders",
        12: "SELECT count() AS n, sum(length(toJSONString(data))) AS chars FROM orders "
            "WHERE data.customer.id::Int64 < 2000",
    },
}


# The ids of the point lookup and the narrow range (S3, S14), scaled to the
# row count (777777 and 500000-500999 at 1M rows); set by `main`.
IDS = {"point": 777_777, "lo": 500_000, "hi": 500_999}


def render(engine, template):
    r = RENDER[engine]

    def path(kind, p):
        if engine == "typed" and "." in p:
            p = f'"{p}"'
        return r[kind].format(p)
    out, i = [], 0
    while i < len(template):
        if template[i] == "{":
            j = template.index("}", i)
            token = template[i + 1:j]
            if token == "t":
                out.append(r["t"])
            elif token in IDS:
                out.append(str(IDS[token]))
            else:
                kind, p = token.split(":", 1)
                out.append(path(kind, p))
            i = j + 1
        else:
            out.append(template[i])
            i += 1
    return "".join(out)


def queries(engine):
    return [SPECIAL[engine][i] if i in SPECIAL[engine] else render(engine, t)
            for i, (_, t) in enumerate(SHAPES)]


# --- answers -------------------------------------------------------------------

def norm(cell):
    if isinstance(cell, str):
        try:
            cell = float(cell) if any(c in cell for c in ".eE") else int(cell)
        except ValueError:
            return cell
    if isinstance(cell, float):
        if cell.is_integer() and abs(cell) < 1e15:
            return int(cell)
        return float(f"{cell:.9g}")
    return cell


def answer(i, rows):
    rows = [[norm(c) for c in r] for r in rows]
    if i == 12:  # S13: the JSON text's length is each engine's own spelling
        rows = [r[:1] for r in rows]
    return rows


# --- runners -------------------------------------------------------------------

def best_of(f, runs):
    f()
    walls = []
    rows = None
    for _ in range(runs):
        t0 = time.perf_counter()
        rows = f()
        walls.append(time.perf_counter() - t0)
    return min(walls), rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--keep", help="a directory for the data, kept between runs")
    ap.add_argument("--profile", default="release", help="the cargo profile of the CLI")
    ap.add_argument("--only", nargs="*", help="layouts to run (a prefix of their names)")
    args = ap.parse_args()
    jb.PROFILE = args.profile
    IDS.update(point=args.rows * 7 // 9, lo=args.rows // 2,
               hi=args.rows // 2 + max(args.rows // 1000, 1) - 1)
    if not jb.cli().exists():
        sys.exit(f"{jb.cli()} is missing: cargo build --profile {args.profile}")
    work = Path(args.keep or tempfile.mkdtemp(prefix="df-variant-workload-"))
    work.mkdir(parents=True, exist_ok=True)
    ndjson = work / f"orders-{args.rows}.ndjson"
    if not ndjson.exists():
        print(f"generating {args.rows} orders", file=sys.stderr)
        generate(ndjson, args.rows)
    shredded, typed = work / f"orders-{args.rows}.parquet", work / f"typed-{args.rows}.parquet"
    cli = [str(jb.cli()), "-q"]
    if not shredded.exists():
        subprocess.run(cli + ["-c", f"COPY (SELECT v FROM read_json_variant('{ndjson}')) "
                              f"TO '{shredded}'"], check=True)
    if not typed.exists():
        cols = ", ".join([
            "v:order_id::bigint AS order_id", "v:ts::timestamp AS ts", "v:status::string AS status",
            "v:customer.id::bigint AS \"customer.id\"",
            "v:customer.country::string AS \"customer.country\"",
            "v:customer.tier::string AS \"customer.tier\"", "v:total::double AS total",
            "v:comment::string AS comment", "v:gift_note::string AS gift_note",
            "v:discount::double AS discount",
            "variant_get(v, '$.items', 'array<struct<sku: string, qty: bigint, price: double>>') "
            "AS items"])
        subprocess.run(cli + ["-c", f"COPY (SELECT {cols} FROM read_json_variant('{ndjson}')) "
                              f"TO '{typed}'"], check=True)
    only = args.only
    wanted = lambda name: not only or any(name.startswith(o) for o in only)

    results = {}  # layout -> [(seconds, rows) or error text]
    sql = {}      # engine -> queries
    first = {}    # the first run in a fresh process, our shredded layout

    def measure(layout, engine, timed):
        """Every shape of `engine` through `timed(i, sql)` -> (seconds, rows); a
        failing query is reported in its cell."""
        qs = queries(engine)
        sql[engine] = qs
        out = []
        for i, q in enumerate(qs):
            print(f"{layout} S{i + 1}", file=sys.stderr)
            try:
                out.append(timed(i, q))
            except Exception as e:  # noqa: BLE001 (an engine's error is reported)
                out.append(f"error: {str(e)[:200]}")
        results[layout] = out

    def ours(layout, setup, engine):
        def timed(i, q):
            wall, _cpu, _scanned, rows, first_run = jb.ours_run(setup, q, args.runs,
                                                                 args.threads, False)
            if layout == "df-variant shredded":
                first[i] = first_run
            return wall, rows
        measure(layout, engine, timed)

    table = f"CREATE EXTERNAL TABLE orders STORED AS PARQUET LOCATION '{shredded}'"
    if wanted("df-variant shredded"):
        ours("df-variant shredded", [table], "ours")
    if wanted("df-variant shredded, cache 1G"):
        ours("df-variant shredded, cache 1G",
             ["SET variant.scan_cache_size = '1G'", table], "ours")
    if wanted("df-variant typed"):
        ours("df-variant typed Parquet columns",
             [f"CREATE EXTERNAL TABLE typed STORED AS PARQUET LOCATION '{typed}'"], "typed")

    if wanted("duckdb"):
        try:
            import duckdb
            con = duckdb.connect(str(work / f"duck-{args.rows}.db"))
            have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            if "orders_text" not in have:
                con.execute(f"CREATE TABLE orders_text AS SELECT json AS j FROM "
                            f"read_ndjson_objects('{ndjson}')")
            if "orders_variant" not in have:
                con.execute("CREATE TABLE orders_variant AS SELECT j::VARIANT AS j FROM orders_text")
            for layout, engine in (("duckdb 2.0 VARIANT table", "duck variant"),
                                   ("duckdb 2.0 JSON text table", "duck text")):
                measure(layout, engine,
                        lambda i, q: best_of(lambda: con.execute(q).fetchall(), args.runs))
            con.close()
        except ImportError:
            print("duckdb is not installed (pip install duckdb==2.0.0): skipped", file=sys.stderr)

    if wanted("clickhouse"):
        try:
            from chdb import session as ch_session
            db = work / f"chdb-{args.rows}"
            fresh = not db.exists()
            s = ch_session.Session(str(db))
            if fresh:
                s.query("CREATE TABLE orders (data JSON) ORDER BY tuple()")
                s.query(f"INSERT INTO orders SELECT * FROM file('{ndjson}', 'JSONAsObject')")
            run = lambda q: [list(r) for r in jb.ch_rows(s.query(q, "JSONCompact"))]
            measure("clickhouse 26.9 JSON table", "clickhouse",
                    lambda i, q: best_of(lambda: run(q), args.runs))
            s.close()
        except ImportError:
            print("chdb is not installed (pip install chdb==4.4.0): skipped", file=sys.stderr)

    # --- the table -------------------------------------------------------------
    ref_name = "df-variant shredded"
    ref = results.get(ref_name)
    layouts = list(results)
    print(f"\n{args.rows} orders, {args.threads} threads, hot: best of {args.runs} after one "
          f"untimed run (df-variant's 'first run' column: that untimed run, the first in a "
          f"fresh process); seconds\n")
    head = ["shape"] + layouts + (["shredded, first run"] if first else [])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    ratios = {l: [] for l in layouts}
    mismatches = []
    for i, (name, _) in enumerate(SHAPES):
        cells = [name]
        for l in layouts:
            r = results[l][i]
            if isinstance(r, str):
                cells.append(" ".join(r.split())[:80])
                continue
            cell = f"{r[0]:.3f}"
            if ref and not isinstance(ref[i], str):
                if answer(i, r[1]) != answer(i, ref[i][1]):
                    cell += " ≠"
                    mismatches.append((l, name, r[1][:3], ref[i][1][:3]))
                ratios[l].append(r[0] / ref[i][0])
            cells.append(cell)
        if first:
            cells.append(f"{first.get(i, float('nan')):.3f}")
        print("| " + " | ".join(cells) + " |")
    if ref:
        print("\nour shredded layout (cache off) against each: geometric mean of (their time / "
              "ours), worst shape (≥ 1 means we are faster)\n")
        for l in layouts:
            if l == ref_name or not ratios[l]:
                continue
            rs = ratios[l]
            g = math.exp(sum(math.log(x) for x in rs) / len(rs))
            worst = min(range(len(rs)), key=lambda k: rs[k])
            print(f"- {l}: {g:.2f}× (worst {rs[worst]:.2f}×, {SHAPES[worst][0]})")
    for m in mismatches:
        print(f"MISMATCH {m[0]} {m[1]}: {m[2]} vs ours {m[3]}")
    print("\nThe SQL:")
    for engine, qs in sql.items():
        print(f"\n{engine}:")
        for i, q in enumerate(qs):
            print(f"  S{i + 1}: {q}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
