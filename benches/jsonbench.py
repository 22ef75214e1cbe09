#!/usr/bin/env python3
"""JSONBench side by side: df-variant and the engines users would pick instead.

    python3 benches/jsonbench.py [--rows 1000000] [--runs 3] [--no-spark] [--keep DIR] [--accelerate]

Generates JSONBench-shaped Bluesky events (`df-variant generate-bluesky`, the
Rust port of the JSONBench Bluesky generator, bluesky_gen.py), loads them into every layout,
runs the five JSONBench queries and two through arrays (A1: language counts
from `$.commit.record.langs[*]`, A2: link features by URI prefix from
`$.commit.record.facets[*].features[*].uri`) and two full-object reads (F1:
the length of every event's JSON, F2: a search of every event's text) on each
engine x layout (the datafusion+json peer runs the five only), checks that every
engine returns the same answers, and prints one table: best-of-N wall time
(df-variant, whose every query starts a process, after one untimed run: the
peers' sessions are long-lived),
CPU time of that run, bytes read (df-variant: the scan's bytes_scanned), and
our shredded time's ratio to each peer; then load time and size per layout.

Engines and layouts:
  df-variant        our shredded Parquet, our unshredded Parquet (the library's
                    default: scan cache off, so every run decodes its pages;
                    each also with the cache at 1G), an
                    in-memory table (CREATE TABLE ... AS from the unshredded
                    file, which shreds itself), Parquet with the JSON as text
                    (parse_json per query)
  duckdb 2.0        JSON text table (->>), native VARIANT table, its own shredded
                    VARIANT Parquet, our shredded Parquet; queried on the tables in
                    the form DuckDB's docs use, default settings
  spark 4.3         our shredded Parquet, its own shredded Parquet (local[N])
  datafusion+json   datafusion-functions-json 0.55 on the JSON text Parquet
                    (benches/json_text.rs)
  clickhouse 26.9   in-process through chdb 4.4.0, on JSONBench's own table:
                    its DDL (sorted by kind, operation, collection, did, time),
                    load settings and queries verbatim from ClickHouse/JSONBench
                    clickhouse/ (ddl.sql, load_data.sh, queries.sql); timed on
                    its first run after the load, hot (best of N), and once per
                    query in a fresh process on the same database

df-variant on shredded Parquet is also timed on the first run of each query in a
fresh process (the layout "shredded, first run"), and on a second shredded file
sorted on the paths of that table's sort key, in row groups of 128Ki rows
("shredded, sorted"): the layout ClickHouse's table has.

A missing peer (pip install duckdb==2.0.0 pyspark==4.3.0 chdb==4.4.0) is reported and skipped.
df-variant and Spark get --threads (default: the cores); DuckDB runs with its
defaults (all cores). The SQL behind every number is printed after the table.
"""

import argparse
import datetime as dt
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# --- the five queries, per dialect -----------------------------------------

FILTER = ("{kind} = 'commit' AND {op} = 'create'")

def five(c, f, did, t, hour, ts, div, table="bluesky"):
    """The five queries, given the dialect's expressions for the collection, the
    commit filter, the DID and time_us, and its hour-of, micros-to-timestamp and
    integer-division forms; over `table`."""
    return [q.replace("FROM bluesky", f"FROM {table}") for q in [
        f"SELECT {c} AS event, count(*) AS count FROM bluesky GROUP BY event ORDER BY count DESC, event",
        f"SELECT {c} AS event, count(*) AS count, count(DISTINCT {did}) AS users FROM bluesky WHERE {f} GROUP BY event ORDER BY count DESC, event",
        f"SELECT {c} AS event, {hour.format(ts.format(t))} AS hour_of_day, count(*) AS count FROM bluesky WHERE {f} AND {c} IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like') GROUP BY event, hour_of_day ORDER BY hour_of_day, event",
        f"SELECT {did} AS user_id, {ts.format(f'min({t})')} AS first_post_ts FROM bluesky WHERE {f} AND {c} = 'app.bsky.feed.post' GROUP BY user_id ORDER BY first_post_ts ASC, user_id LIMIT 3",
        f"SELECT {did} AS user_id, max({t}) {div} 1000 - min({t}) {div} 1000 AS activity_span FROM bluesky WHERE {f} AND {c} = 'app.bsky.feed.post' GROUP BY user_id ORDER BY activity_span DESC, user_id LIMIT 3",
    ]]

DATAFUSION = dict(hour="date_part('hour', {})", ts="to_timestamp_micros({})", div="/")
SPARK = dict(hour="hour({})", ts="timestamp_micros({})", div="DIV")
DUCKDB = dict(hour="hour({})", ts="make_timestamp({})", div="//")

def ours(col="v"):
    c = f"{col}:commit.collection::string"
    kind, op = f"{col}:kind::string", f"{col}:commit.operation::string"
    return five(c, FILTER.format(kind=kind, op=op), f"{col}:did::string", f"{col}:time_us::bigint", **DATAFUSION)

def spark_sql():
    g = lambda p, t: f"variant_get(v, '$.{p}', '{t}')"
    f = FILTER.format(kind=g("kind", "string"), op=g("commit.operation", "string"))
    return five(g("commit.collection", "string"), f, g("did", "string"), g("time_us", "bigint"), **SPARK)

def duck_text(table):
    g = lambda p: f"(j->>'$.{p}')"
    f = FILTER.format(kind=g("kind"), op=g("commit.operation"))
    return five(g("commit.collection"), f, g("did"), "CAST(j->>'$.time_us' AS BIGINT)", **DUCKDB, table=table)

def duck_variant(table, col="j"):
    """DuckDB's VARIANT queries in the form its documentation writes them,
    `(j.commit.collection)::VARCHAR`, straight on the table (a view in between
    kept DuckDB from pushing the paths into its shredded storage)."""
    c, did = f"({col}.commit.collection)::VARCHAR", f"({col}.did)::VARCHAR"
    f = FILTER.format(kind=f"({col}.kind)::VARCHAR", op=f"({col}.commit.operation)::VARCHAR")
    q = five(c, f, did, f"({col}.time_us)::BIGINT", **DUCKDB, table=table)
    # The one-level Q2 hits a DuckDB 2.0.0 planner cliff (section 5.3 of the JSONBench notes).
    q[1] = (f"SELECT event, count(*) AS count, count(DISTINCT did) AS users FROM "
            f"(SELECT {c} AS event, {did} AS did FROM {table} WHERE {f}) GROUP BY event ORDER BY count DESC, event")
    return q

def df_json():
    g = lambda *p: "json_get_str(j, " + ", ".join(f"'{x}'" for x in p) + ")"
    f = FILTER.format(kind=g("kind"), op=g("commit", "operation"))
    return five(g("commit", "collection"), f, g("did"), "json_get_int(j, 'time_us')", **DATAFUSION)

# The paths of the sort key of JSONBench's ClickHouse table (below), in our syntax.
SORT_KEY = ("v:kind::string, v:commit.operation::string, v:commit.collection::string, "
            "v:did::string, v:time_us::bigint")

# ClickHouse: JSONBench's table, load and queries as ClickHouse/JSONBench runs
# them (clickhouse/ddl.sql; load_data.sh's INSERT settings, its stdin read as
# file(..., 'JSONAsObject') in-process; queries.sql). The queries break ties
# differently from ours (no second sort key), so their answers are compared as
# sets (Q1-Q3) and by the sorted column (Q4, Q5): see `same_answer`.
CH_DDL = """CREATE TABLE bluesky
(
    `data` JSON(
        max_dynamic_paths = 0,
        kind LowCardinality(String),
        commit.operation LowCardinality(String),
        commit.collection LowCardinality(String),
        did String,
        time_us UInt64)  CODEC(ZSTD(1))
)
ORDER BY (
    data.kind,
    data.commit.operation,
    data.commit.collection,
    data.did,
    fromUnixTimestamp64Micro(data.time_us))
SETTINGS object_serialization_version = 'v3',
         dynamic_serialization_version = 'v3',
         object_shared_data_serialization_version = 'advanced',
         object_shared_data_serialization_version_for_zero_level_parts='map_with_buckets'"""
CH_LOAD = ("INSERT INTO bluesky SETTINGS min_insert_block_size_rows = 1_000_000, "
           "min_insert_block_size_bytes = 0 SELECT * FROM file('{path}', 'JSONAsObject')")
CH_QUERIES = [
    "SELECT data.commit.collection AS event, count() AS count FROM bluesky GROUP BY event ORDER BY count DESC;",
    "SELECT data.commit.collection AS event, count() AS count, uniqExact(data.did) AS users FROM bluesky WHERE data.kind = 'commit' AND data.commit.operation = 'create' GROUP BY event ORDER BY count DESC;",
    "SELECT data.commit.collection AS event, toHour(fromUnixTimestamp64Micro(data.time_us)) as hour_of_day, count() AS count FROM bluesky WHERE data.kind = 'commit' AND data.commit.operation = 'create' AND data.commit.collection in ['app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like'] GROUP BY event, hour_of_day ORDER BY hour_of_day, event;",
    "SELECT data.did::String as user_id, min(fromUnixTimestamp64Micro(data.time_us)) as first_post_ts FROM bluesky WHERE data.kind = 'commit' AND data.commit.operation = 'create' AND data.commit.collection = 'app.bsky.feed.post' GROUP BY user_id ORDER BY first_post_ts ASC LIMIT 3;",
    "SELECT data.did::String as user_id, date_diff( 'milliseconds', min(fromUnixTimestamp64Micro(data.time_us)), max(fromUnixTimestamp64Micro(data.time_us))) AS activity_span FROM bluesky WHERE data.kind = 'commit' AND data.commit.operation = 'create' AND data.commit.collection = 'app.bsky.feed.post' GROUP BY user_id ORDER BY activity_span DESC LIMIT 3;",
]

# One query in a fresh process on the database at argv[1]: its wall time.
CH_FRESH = """
import json, sys, time
from chdb import session
s = session.Session(sys.argv[1])
t0 = time.perf_counter()
r = s.query(sys.argv[2], "JSONCompact")
w = time.perf_counter() - t0
if r.has_error():
    sys.exit(r.error_message())
print(w)
print(json.dumps(json.loads(r.bytes() or b'{"data": []}')["data"]))
s.close()
"""

def ch_rows(result):
    if result.has_error():
        raise RuntimeError(result.error_message()[:300])
    return json.loads(result.bytes() or b'{"data": []}')["data"]

# --- two queries through arrays (beyond JSONBench's five) --------------------

URI_PREFIX = "https://example.com/a"

def arrays_ours(col="v"):
    """Language counts from `$.commit.record.langs[*]`, and link features whose
    URI has a prefix from `$.commit.record.facets[*].features[*].uri`, with
    df-variant's wildcards."""
    return [
        f"SELECT lang, count(*) AS count FROM (SELECT unnest({col}:commit.record.langs[*]::array<string>) AS lang FROM bluesky) GROUP BY lang ORDER BY count DESC, lang",
        f"SELECT count(*) AS links FROM (SELECT unnest({col}:commit.record.facets[*].features[*].uri::array<string>) AS uri FROM bluesky) WHERE uri LIKE '{URI_PREFIX}%'",
    ]

def arrays_duck_text(table):
    """DuckDB's JSON paths with `[*]` on the JSON text table, as its docs write them."""
    return [
        f"SELECT lang, count(*) AS count FROM (SELECT unnest(j->>'$.commit.record.langs[*]') AS lang FROM {table}) GROUP BY lang ORDER BY count DESC, lang",
        f"SELECT count(*) AS links FROM (SELECT unnest(j->>'$.commit.record.facets[*].features[*].uri') AS uri FROM {table}) WHERE uri LIKE '{URI_PREFIX}%'",
    ]

def arrays_duck_variant(table, col="j"):
    """DuckDB 2.0's VARIANT has no `[*]`: a cast to a list, and list_transform."""
    return [
        f"SELECT lang, count(*) AS count FROM (SELECT unnest(({col}.commit.record.langs)::VARCHAR[]) AS lang FROM {table}) GROUP BY lang ORDER BY count DESC, lang",
        f"SELECT count(*) AS links FROM (SELECT unnest(flatten(list_transform(({col}.commit.record.facets)::VARIANT[], lambda f: list_transform((f.features)::VARIANT[], lambda x: (x.uri)::VARCHAR)))) AS uri FROM {table}) WHERE uri LIKE '{URI_PREFIX}%'",
    ]

def arrays_spark():
    """Spark 4.3: `variant_explode`, laterally (it refuses `[*]`)."""
    return [
        "SELECT variant_get(e.value, '$', 'string') AS lang, count(*) AS count FROM bluesky, LATERAL variant_explode(variant_get(v, '$.commit.record.langs')) e GROUP BY lang ORDER BY count DESC, lang",
        f"SELECT count(*) AS links FROM bluesky, LATERAL variant_explode(variant_get(v, '$.commit.record.facets')) f, LATERAL variant_explode(variant_get(f.value, '$.features')) x WHERE variant_get(x.value, '$.uri', 'string') LIKE '{URI_PREFIX}%'",
    ]

# --- two full-object reads ----------------------------------------------------

NEEDLE = "app.bsky.feed.post"

def full_ours(col="v"):
    """Every event rebuilt whole: its JSON text (F1), and a search of that text
    (F2), the two ways users read whole objects."""
    return [
        f"SELECT sum(length(to_json({col}))) AS chars FROM bluesky",
        f"SELECT count(*) AS hits FROM bluesky WHERE CAST({col} AS STRING) LIKE '%{NEEDLE}%'",
    ]

def full_duck_text(table):
    return [
        f"SELECT sum(length(json(j))) AS chars FROM {table}",
        f"SELECT count(*) AS hits FROM {table} WHERE j LIKE '%{NEEDLE}%'",
    ]

def full_duck_variant(table, col="j"):
    """`to_json` gives the same text as ours; the cast to VARCHAR prints DuckDB's
    own format, which holds the needle wherever the JSON does."""
    return [
        f"SELECT sum(length(to_json({col}))) AS chars FROM {table}",
        f"SELECT count(*) AS hits FROM {table} WHERE {col}::VARCHAR LIKE '%{NEEDLE}%'",
    ]

def full_spark():
    return full_ours()

# --- answers ----------------------------------------------------------------

TS = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}(:?\d{2})?)?$")

def norm(cell):
    """One cell as a comparable string: empty/NULL alike, integral numbers as ints,
    timestamps as 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC)."""
    if cell is None:
        return ""
    if isinstance(cell, dt.datetime):
        if cell.tzinfo is not None:
            cell = cell.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return cell.strftime("%Y-%m-%d %H:%M:%S.%f")
    s = str(cell).strip()
    if s.upper() == "NULL":
        return ""
    m = TS.match(s)
    if m:
        frac = (m.group(3) or ".0")[1:].ljust(6, "0")[:6]
        return f"{m.group(1)} {m.group(2)}.{frac}"
    try:
        x = float(s)
        if math.isfinite(x) and x == int(x):
            return str(int(x))
        return repr(round(x, 6))
    except ValueError:
        return s

def answer(rows):
    return [[norm(c) for c in r] for r in rows]

# Engines whose queries are another benchmark's text, with other tie-breaking.
LOOSE = {"clickhouse 26.9"}

def same_answer(engine, i, rows, reference):
    """Whether `rows` answer query `i` as `reference` (ours) does. An engine
    in LOOSE orders ties otherwise: Q1-Q3 are compared as sets of rows, Q4 and
    Q5 (top 3 by the second column) by that column's values."""
    got, want = answer(rows), answer(reference)
    if engine not in LOOSE:
        return got == want
    if i < 3:
        return sorted(got) == sorted(want)
    return [r[1] for r in got] == [r[1] for r in want]

# --- runners ----------------------------------------------------------------

PROFILE = "release"
# Where cargo builds (CARGO_TARGET_DIR, as .ci/run sets it, or ./target).
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
# `--accelerate`: df-variant's opt-in speedups of plain plans (df_variant::accel).
ACCEL = []


def cli():
    return TARGET / PROFILE / "df-variant"

def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)

def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def ours_run(setup, query, runs, threads, with_cpu=True):
    """Best-of-`runs` wall time (from the CLI's own timing line) after one untimed
    run, mean CPU time per run (the process's CPU minus a process that only sets
    up, over all runs), bytes read, rows."""
    args = [str(cli()), "-q", "--format", "ndjson", "--partitions", str(threads)] + ACCEL
    def process(statements):
        before = child_cpu()
        p = subprocess.run(args + [x for s in statements for x in ("-c", s)],
                           text=True, capture_output=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip()[:500])
        return p, child_cpu() - before
    _, base_cpu = process(setup)
    timed = [str(cli()), "--format", "csv", "--partitions", str(threads)] + ACCEL
    before = child_cpu()
    # One untimed run first: each query gets a fresh process, whose first run
    # fills the scan cache and the allocator's memory, while DuckDB's connection
    # and the DataFusion peer's session are long-lived and already warm.
    p = subprocess.run(timed + [x for s in setup + [query] * (runs + 1) for x in ("-c", s)],
                       text=True, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip()[:500])
    cpu = (child_cpu() - before - base_cpu) / (runs + 1)
    if not with_cpu:
        cpu = None
    all_walls = [float(m) for m in re.findall(r"rows? in ([0-9.]+) s", p.stderr)]
    walls = all_walls[-runs:]
    # The untimed run: the query's first in a fresh process.
    first = all_walls[-(runs + 1)]
    out, _ = process(setup + [query])
    rows = [list(json.loads(line).values()) for line in out.stdout.splitlines() if line.strip()]
    p2, _ = process(setup + [f"EXPLAIN ANALYZE {query}"])
    scanned = sum(parse_size(m) for m in re.findall(r"bytes_scanned=([0-9.]+ ?[KMG]?)", p2.stdout))
    return min(walls), cpu, scanned, rows, first

def parse_size(text):
    text = text.strip()
    mult = {"K": 1e3, "M": 1e6, "G": 1e9}
    if text and text[-1] in mult:
        return float(text[:-1]) * mult[text[-1]]
    return float(text)

def fmt_bytes(b):
    return "-" if b is None else f"{b / 1e6:.1f} MB"

# --- main -------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-spark", action="store_true", help="skip Spark (a JVM start and several minutes)")
    ap.add_argument("--keep", type=Path, help="keep the data in this directory (reused when present)")
    ap.add_argument("--profile", default="release",
                    help="cargo profile to build and run (`profiling` is release with line tables, "
                         "for perf; the same code generation)")
    ap.add_argument("--accelerate", action="store_true",
                    help="df-variant with its opt-in speedups of plain plans (--accelerate); "
                         "default: the session an embedder gets from with_variant")
    a = ap.parse_args()
    global PROFILE, ACCEL
    PROFILE = a.profile
    ACCEL = ["--accelerate"] if a.accelerate else []

    print(f"building df-variant and the DataFusion JSON-text peer ({PROFILE}) ...", file=sys.stderr)
    subprocess.run(["cargo", "build", "--profile", PROFILE, "--bin", "df-variant", "--example", "json_text"],
                   cwd=ROOT, check=True)
    work = a.keep or Path(tempfile.mkdtemp(prefix="jsonbench_"))
    work.mkdir(parents=True, exist_ok=True)
    ndjson = work / "bluesky.ndjson"
    if not ndjson.exists():
        t0 = time.perf_counter()
        sh([str(cli()), "generate-bluesky", "--rows", str(a.rows), "--out", str(ndjson)])
        print(f"generated {a.rows} events in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    layouts = {}  # name -> (load seconds, bytes)
    def load(name, path, fn):
        if not Path(path).exists():
            t0 = time.perf_counter()
            fn()
            layouts[name] = (time.perf_counter() - t0, size(path))
        else:
            layouts[name] = (float("nan"), size(path))

    def size(path):
        p = Path(path)
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size

    P = lambda n: str(work / n)
    ndj = str(ndjson)
    copy = lambda shredding, out, select="v": lambda: sh([str(cli()), "-q", "--partitions", str(a.threads), "-c",
        f"COPY (SELECT {select} FROM read_json_variant('{ndj}')) TO '{out}' STORED AS PARQUET OPTIONS ('variant.shredding' '{shredding}')"])
    load("ours shredded", P("ours_shredded.parquet"), copy("auto", P("ours_shredded.parquet")))
    load("ours unshredded", P("ours_plain.parquet"), copy("off", P("ours_plain.parquet")))
    load("JSON text", P("text.parquet"), copy("off", P("text.parquet"), "to_json(v) AS j"))
    # Layout parity with ClickHouse's table: our shredded Parquet sorted on the
    # paths of JSONBench's sort key, in row groups of 128Ki rows, so that
    # row-group and page pruning can skip what its granules skip.
    sorted_copy = lambda: sh([str(cli()), "-q", "--partitions", str(a.threads), "-c",
        f"COPY (SELECT v FROM read_json_variant('{ndj}') ORDER BY {SORT_KEY}) TO '{P('ours_sorted.parquet')}' "
        f"STORED AS PARQUET OPTIONS ('variant.shredding' 'auto', 'max_row_group_size' '131072')"])
    load("ours shredded, sorted", P("ours_sorted.parquet"), sorted_copy)

    results = {}  # (engine, layout) -> list of (wall, cpu, bytes, rows) or error string
    peer_sql = {}  # (engine, layout) -> the SQL texts run, printed with the table
    NQ = 9  # the five JSONBench queries, the two through arrays (A1, A2), the two full reads (F1, F2)
    def record(key, i, value):
        results.setdefault(key, [None] * NQ)[i] = value

    # df-variant
    tables = {
        "shredded": f"CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{P('ours_shredded.parquet')}'",
        "unshredded": f"CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{P('ours_plain.parquet')}'",
        "JSON text": f"CREATE VIEW bluesky AS SELECT parse_json(j) AS v FROM '{P('text.parquet')}'",
        "shredded, sorted": f"CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{P('ours_sorted.parquet')}'",
    }
    # The library's default has the scan cache off: every run decodes its
    # pages. The same files with the cache on (1 GiB, reserved in the pool):
    # what a repeated query costs when its extracted columns are kept.
    cache_on = "SET variant.scan_cache_size = '1G'"
    runs = [(layout, [ddl]) for layout, ddl in tables.items()]
    runs[2:2] = [(f"{layout}, cache 1G", [cache_on, tables[layout]]) for layout in ("shredded", "unshredded")]
    # An in-memory table (CREATE TABLE ... AS, from the unshredded file): the
    # table shreds itself, as DuckDB's VARIANT table does on insert.
    runs.insert(2, ("in-memory table", [
        f"CREATE EXTERNAL TABLE src STORED AS PARQUET LOCATION '{P('ours_plain.parquet')}'",
        "CREATE TABLE bluesky AS SELECT v FROM src",
    ]))
    for layout, statements in runs:
        setup = ["SET datafusion.execution.time_zone = 'UTC'"] + statements
        for i, q in enumerate(ours() + arrays_ours() + full_ours()):
            print(f"df-variant {layout} Q{i + 1}", file=sys.stderr)
            try:
                # A setup that loads a table (CREATE TABLE ... AS) costs more CPU,
                # and varies more, than a query: no per-query CPU can be told apart.
                with_cpu = not layout.startswith("in-memory")
                wall, cpu, scanned, rows, first = ours_run(setup, q, a.runs, a.threads, with_cpu)
                record(("df-variant", layout), i, (wall, cpu, scanned, rows))
                if layout in ("shredded", "shredded, sorted"):
                    record(("df-variant", f"{layout}, first run"), i, (first, None, scanned, rows))
            except Exception as e:  # noqa: BLE001 - reported in the table
                record(("df-variant", layout), i, f"error: {e}")

    # DataFusion + datafusion-functions-json on the JSON text
    qfile = work / "df_json.sql"
    qfile.write_text("\n".join(df_json()) + "\n")
    ex = TARGET / PROFILE / "examples" / "json_text"
    p = subprocess.run([str(ex), P("text.parquet"), str(a.runs), str(qfile)], text=True, capture_output=True,
                       env={**os.environ, "DATAFUSION_EXECUTION_TARGET_PARTITIONS": str(a.threads)})
    if p.returncode != 0:
        for i in range(5):
            record(("datafusion+json", "JSON text"), i, f"error: {p.stderr.strip()[:300]}")
    else:
        for line in p.stdout.splitlines():
            r = json.loads(line)
            best = min(range(len(r["wall"])), key=lambda k: r["wall"][k])
            record(("datafusion+json", "JSON text"), r["query"] - 1,
                   (r["wall"][best], r["cpu"][best], None, r["rows"]))

    # DuckDB
    try:
        import duckdb
        if duckdb.__version__ != "2.0.0":
            print(f"note: duckdb {duckdb.__version__}, the harness expects 2.0.0", file=sys.stderr)
        con = duckdb.connect(str(work / "duck.db"))
        # Default settings, as a DuckDB user runs it (threads: all cores).
        con.execute("SET TimeZone = 'UTC'")
        have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "bluesky_text" not in have:
            t0 = time.perf_counter()
            con.execute(f"CREATE TABLE bluesky_text AS SELECT json AS j FROM read_json_objects('{ndj}', format='newline_delimited')")
            layouts["duckdb JSON table"] = (time.perf_counter() - t0, float("nan"))
        if "bluesky_variant" not in have:
            t0 = time.perf_counter()
            con.execute("CREATE TABLE bluesky_variant AS SELECT j::VARIANT AS j FROM bluesky_text")
            layouts["duckdb VARIANT table"] = (time.perf_counter() - t0, float("nan"))
        con.execute("CHECKPOINT")  # DuckDB compresses (and shreds) a table on checkpoint
        duck_parquet = P("duck_shredded.parquet")
        if not Path(duck_parquet).exists():
            t0 = time.perf_counter()
            con.execute(f"COPY (SELECT j FROM bluesky_variant) TO '{duck_parquet}' (FORMAT parquet)")
            layouts["duckdb shredded Parquet"] = (time.perf_counter() - t0, size(duck_parquet))
        else:
            layouts["duckdb shredded Parquet"] = (float("nan"), size(duck_parquet))
        duck_layouts = {
            "JSON text": duck_text("bluesky_text") + arrays_duck_text("bluesky_text")
            + full_duck_text("bluesky_text"),
            "VARIANT table": duck_variant("bluesky_variant") + arrays_duck_variant("bluesky_variant")
            + full_duck_variant("bluesky_variant"),
            "own shredded Parquet": duck_variant(f"read_parquet('{duck_parquet}')")
            + arrays_duck_variant(f"read_parquet('{duck_parquet}')")
            + full_duck_variant(f"read_parquet('{duck_parquet}')"),
            "our shredded Parquet": duck_variant(f"read_parquet('{P('ours_shredded.parquet')}')", "v")
            + arrays_duck_variant(f"read_parquet('{P('ours_shredded.parquet')}')", "v")
            + full_duck_variant(f"read_parquet('{P('ours_shredded.parquet')}')", "v"),
        }
        for layout, qs in duck_layouts.items():
            peer_sql[("duckdb 2.0", layout)] = qs
            for i, q in enumerate(qs):
                print(f"duckdb {layout} Q{i + 1}", file=sys.stderr)
                try:
                    best = None
                    for _ in range(a.runs):
                        w0, c0 = time.perf_counter(), time.process_time()
                        rows = con.execute(q).fetchall()
                        run = (time.perf_counter() - w0, time.process_time() - c0)
                        if best is None or run[0] < best[0]:
                            best = run
                    record(("duckdb 2.0", layout), i, (best[0], best[1], None, rows))
                except Exception as e:  # noqa: BLE001
                    record(("duckdb 2.0", layout), i, f"error: {str(e)[:200]}")
    except ImportError:
        print("duckdb is not installed (pip install duckdb==2.0.0): skipped", file=sys.stderr)

    # ClickHouse, in-process (chdb), on JSONBench's table
    try:
        import chdb
        from chdb import session as ch_session
        if chdb.__version__ != "4.4.0":
            print(f"note: chdb {chdb.__version__}, the harness expects 4.4.0", file=sys.stderr)
        ch_path = str(work / "clickhouse")
        ch = ch_session.Session(ch_path)
        if ch_rows(ch.query("EXISTS TABLE bluesky", "JSONCompact")) != [[1]]:
            ch_rows(ch.query(CH_DDL))
            t0 = time.perf_counter()
            ch_rows(ch.query(CH_LOAD.format(path=ndj)))
            layouts["clickhouse JSONBench table"] = (time.perf_counter() - t0, size(ch_path))
        else:
            layouts["clickhouse JSONBench table"] = (float("nan"), size(ch_path))
        for layout in ("JSONBench table", "JSONBench table, first run", "JSONBench table, fresh process"):
            peer_sql[("clickhouse 26.9", layout)] = CH_QUERIES
        for i, q in enumerate(CH_QUERIES):
            print(f"clickhouse Q{i + 1}", file=sys.stderr)
            try:
                runs = []
                for _ in range(a.runs + 1):
                    w0, c0 = time.perf_counter(), time.process_time()
                    rows = ch_rows(ch.query(q, "JSONCompact"))
                    runs.append((time.perf_counter() - w0, time.process_time() - c0))
                record(("clickhouse 26.9", "JSONBench table, first run"), i, (runs[0][0], runs[0][1], None, rows))
                best = min(runs[1:])
                record(("clickhouse 26.9", "JSONBench table"), i, (best[0], best[1], None, rows))
            except Exception as e:  # noqa: BLE001
                record(("clickhouse 26.9", "JSONBench table"), i, f"error: {str(e)[:200]}")
        ch.close()
        # A fresh process per query on the same database (the session above
        # holds the database's lock until closed).
        for i, q in enumerate(CH_QUERIES):
            print(f"clickhouse fresh process Q{i + 1}", file=sys.stderr)
            p = subprocess.run([sys.executable, "-c", CH_FRESH, ch_path, q], text=True, capture_output=True)
            if p.returncode != 0:
                record(("clickhouse 26.9", "JSONBench table, fresh process"), i, f"error: {p.stderr.strip()[:200]}")
                continue
            wall, rows = p.stdout.strip().splitlines()[-2:]
            record(("clickhouse 26.9", "JSONBench table, fresh process"), i,
                   (float(wall), None, None, json.loads(rows)))
    except ImportError:
        print("chdb is not installed (pip install chdb==4.4.0): skipped", file=sys.stderr)

    # Spark
    if a.no_spark:
        print("Spark skipped (--no-spark)", file=sys.stderr)
    else:
        try:
            from pyspark.sql import SparkSession
            spark = (SparkSession.builder.master(f"local[{a.threads}]")
                     .config("spark.ui.enabled", "false")
                     .config("spark.sql.session.timeZone", "UTC")
                     .config("spark.driver.memory", "6g")
                     .config("spark.sql.variant.writeShredding.enabled", "true")
                     .config("spark.sql.variant.inferShreddingSchema", "true")
                     .getOrCreate())
            spark.sparkContext.setLogLevel("ERROR")
            spark_own = P("spark_shredded")
            if not Path(spark_own).exists():
                t0 = time.perf_counter()
                (spark.read.text(ndj).selectExpr("parse_json(value) AS v")
                 .write.mode("overwrite").parquet(spark_own))
                layouts["spark shredded Parquet"] = (time.perf_counter() - t0, size(spark_own))
            else:
                layouts["spark shredded Parquet"] = (float("nan"), size(spark_own))
            for layout, path in (("our shredded Parquet", P("ours_shredded.parquet")),
                                 ("own shredded Parquet", spark_own)):
                spark.read.parquet(path).createOrReplaceTempView("bluesky")
                for i, q in enumerate(spark_sql() + arrays_spark() + full_spark()):
                    print(f"spark {layout} Q{i + 1}", file=sys.stderr)
                    try:
                        best = None
                        for _ in range(a.runs):
                            w0 = time.perf_counter()
                            rows = [list(r) for r in spark.sql(q).collect()]
                            w = time.perf_counter() - w0
                            if best is None or w < best:
                                best = w
                        record(("spark 4.3", layout), i, (best, None, None, rows))
                    except Exception as e:  # noqa: BLE001
                        record(("spark 4.3", layout), i, f"error: {str(e).splitlines()[0][:200]}")
            spark.stop()
        except ImportError:
            print("pyspark is not installed (pip install pyspark==4.3.0): skipped", file=sys.stderr)

    # Cross-check and the table.
    reference = results.get(("df-variant", "shredded"))
    print(f"\nJSONBench, {a.rows:,} events, {a.threads} threads, best of {a.runs} "
          f"(wall s / CPU s; bytes read where known; ratio = peer time / our shredded time)\n"
          f"df-variant: {'with --accelerate' if a.accelerate else 'the default session (no accelerations)'}, "
          f"scan cache off unless the layout says 'cache 1G'\n")
    names = [f"Q{i + 1}" for i in range(5)] + ["A1 langs[*]", "A2 facets[*]", "F1 to_json", "F2 text LIKE"]
    header = f"{'engine':<16} {'layout':<22}" + "".join(f" {n:>22}" for n in names)
    print(header)
    print("-" * len(header))
    mismatches = []
    for (engine, layout), qs in results.items():
        cells = []
        for i, r in enumerate(qs):
            if r is None:
                cells.append("-")
                continue
            if isinstance(r, str):
                cells.append("error")
                mismatches.append(f"{engine} / {layout} {names[i]}: {r}")
                continue
            wall, cpu, scanned, rows = r
            ok = True
            if reference and not isinstance(reference[i], str) and reference[i] is not None:
                ok = same_answer(engine, i, rows, reference[i][3])
                if not ok:
                    mismatches.append(f"{engine} / {layout} {names[i]}: {answer(rows)[:3]} != {answer(reference[i][3])[:3]}")
            cpu_s = "-" if cpu is None else f"{cpu:.3f}"
            ratio = ""
            if reference and not isinstance(reference[i], str) and (engine, layout) != ("df-variant", "shredded"):
                ratio = f" {wall / reference[i][0]:.1f}x"
            cells.append(f"{wall:.3f}/{cpu_s}{ratio}{'' if ok else ' !='}")
        print(f"{engine:<16} {layout:<22}" + "".join(f" {c:>22}" for c in cells))
    if reference:
        print(f"{'':<39}" + "".join(
            f" {fmt_bytes(r[2]) if not isinstance(r, str) and r else '-':>22}" for r in reference)
            + "   <- bytes read, our shredded")
    print("\nlayouts (load s, size):")
    for name, (secs, b) in layouts.items():
        s = "-" if b != b else f"{b / 1e6:.1f} MB"
        l = "reused" if secs != secs else f"{secs:.1f} s"
        print(f"  {name:<26} {l:>10} {s:>12}")
    print("\nthe SQL behind each number:")
    peer_sql.setdefault(("df-variant", "shredded, unshredded, JSON text"), ours() + arrays_ours() + full_ours())
    peer_sql.setdefault(("datafusion+json", "JSON text"), df_json())
    peer_sql.setdefault(("spark 4.3", "both"), spark_sql() + arrays_spark() + full_spark())
    for (engine, layout), qs in peer_sql.items():
        print(f"  {engine} / {layout}:")
        for i, q in enumerate(qs):
            print(f"    {names[i]}: {q}")
    if mismatches:
        print("\nanswers that differ from df-variant on shredded Parquet, or errors:")
        for m in mismatches:
            print("  " + m)
    else:
        print("\nall answers identical across engines and layouts")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
