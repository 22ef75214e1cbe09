#!/usr/bin/env python3
"""The shredding advisor, measured: a poor shredding, its workload, the advice,
an in-place re-shred, and the same queries again.

    python3 benches/advice.py [--rows 1000000] [--runs 3] [--work DIR]

1. Writes the Bluesky events (JSONBench's, from `df-variant generate-bluesky`)
   to Parquet with a poor shredding: `variant.shredding_max_leaves = 3`.
2. Runs the five JSONBench queries (hot, best of --runs, in one process per
   query) with `variant.workload_log` set, so the scans are logged.
3. Asks `variant_shredding_advice` and prints its rows.
4. Re-shreds the files in place with the advised schema (`variant_reshred`,
   which checks every row before it swaps the files in).
5. Runs the five queries again, and the same on a copy written with the
   default (inferred) shredding, the reference.

Prints the times, the bytes read (EXPLAIN ANALYZE's `bytes_scanned`) and checks
that the answers are identical before, after and on the reference.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jsonbench as jb  # noqa: E402


def run(statements, fmt="ndjson"):
    p = subprocess.run([str(jb.cli()), "-q", "--format", fmt] + [x for s in statements for x in ("-c", s)],
                       text=True, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip()[:800])
    return p


def rows_of(p):
    return [list(json.loads(line).values()) for line in p.stdout.splitlines() if line.strip()]


def measure(table_ddl, log, runs, threads):
    setup = ["SET datafusion.execution.time_zone = 'UTC'", f"SET variant.workload_log = '{log}'", table_ddl]
    out = []
    for i, q in enumerate(jb.ours()):
        wall, _cpu, scanned, rows = jb.ours_run(setup, q, runs, threads)
        out.append((wall, scanned, jb.answer(rows)))
        print(f"  Q{i + 1}: {wall:.3f} s, {jb.fmt_bytes(scanned)} read", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/df_variant_advice"))
    a = ap.parse_args()
    # As jsonbench.py builds it (same features, so one build serves both).
    subprocess.run(["cargo", "build", "--release", "--bin", "df-variant", "--example", "json_text"],
                   cwd=jb.ROOT, check=True)
    work = a.work
    work.mkdir(parents=True, exist_ok=True)
    ndjson = work / "bluesky.ndjson"
    if not ndjson.exists():
        jb.sh([str(jb.cli()), "generate-bluesky", "--rows", str(a.rows), "--out", str(ndjson)])
    poor, ref, log = work / "poor", work / "reference", work / "log"
    for d in (poor, ref, log):
        subprocess.run(["rm", "-rf", str(d)], check=True)
    t0 = time.perf_counter()
    run([f"SET variant.shredding_max_leaves = 3",
         f"COPY (SELECT v FROM read_json_variant('{ndjson}')) TO '{poor}/' STORED AS PARQUET"])
    run([f"COPY (SELECT v FROM read_json_variant('{ndjson}')) TO '{ref}/' STORED AS PARQUET"])
    print(f"wrote both layouts in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    ddl = lambda d: f"CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{d}/'"
    shredding = lambda d: rows_of(run([f"SELECT DISTINCT shredding FROM variant_shredding_schema('{d}/')"]))
    print(f"poor shredding: {shredding(poor)}", file=sys.stderr)
    print("before:", file=sys.stderr)
    before = measure(ddl(poor), log, a.runs, a.threads)

    advice = rows_of(run([f"SET variant.workload_log = '{log}'",
                          f"SELECT action, path, type, queried, bytes_saved_per_query, reason "
                          f"FROM variant_shredding_advice('{poor}/') ORDER BY action, path"]))
    schema = next(r[2] for r in advice if r[0] == "schema")
    t0 = time.perf_counter()
    report = rows_of(run([f"SELECT variant_reshred('{poor}/', '{schema}') AS r"]))
    reshred_s = time.perf_counter() - t0
    print(f"advised shredding: {shredding(poor)}", file=sys.stderr)
    subprocess.run(["rm", "-rf", str(log)], check=True)
    print("after:", file=sys.stderr)
    after = measure(ddl(poor), log, a.runs, a.threads)
    print("reference (inferred shredding):", file=sys.stderr)
    reference = measure(ddl(ref), work / "log_ref", a.runs, a.threads)

    same = all(b[2] == x[2] == r[2] for b, x, r in zip(before, after, reference))
    print(f"\nShredding advice on {a.rows:,} Bluesky events, {a.threads} threads, best of {a.runs} (hot)\n")
    print("The advice:")
    for r in advice:
        print("  " + " | ".join("" if c is None else str(c) for c in r))
    print(f"\nvariant_reshred: {report[0][0]} ({reshred_s:.1f} s wall, every row checked)\n")
    print("| query | poor shredding | after the advice | inferred shredding (reference) |")
    print("|---|---|---|---|")
    for i, (b, x, r) in enumerate(zip(before, after, reference)):
        print(f"| Q{i + 1} | {b[0]:.3f} s, {jb.fmt_bytes(b[1])} | {x[0]:.3f} s, {jb.fmt_bytes(x[1])} | "
              f"{r[0]:.3f} s, {jb.fmt_bytes(r[1])} |")
    print(f"\nanswers identical before, after and on the reference: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
