#!/usr/bin/env python3
"""The five JSONBench queries in one process and on a coordinator with worker
processes on this machine (`df-variant worker`), on the same shredded Parquet
files: hot wall time (best of --runs, the CLI's own timing line), the answers
cross-checked, and the bytes shipped between processes per query (plans sent to
the workers and rows sent back, from the coordinator's EXPLAIN ANALYZE).

    python3 benches/distributed.py [--rows 1000000] [--workers 2] [--runs 3] [--keep DIR]

On one machine more processes share the same cores: the numbers are the
overhead of distribution (planning the stages, serializing plans, moving rows
through gRPC), not a speedup.
"""

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benches"))
from jsonbench import ours  # noqa: E402  (the five queries, as our users write them)


def cli():
    return ROOT / "target" / "release" / "df-variant"


def run(extra, statements):
    args = [str(cli()), "--format", "csv"] + extra
    p = subprocess.run(args + [x for s in statements for x in ("-c", s)],
                       text=True, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip()[:800])
    return p


def size(text):
    mult = {"K": 1e3, "M": 1e6, "G": 1e9}
    text = text.strip().rstrip("B").strip()
    if text and text[-1] in mult:
        return float(text[:-1]) * mult[text[-1]]
    return float(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="keep the data in this directory (reused when present)")
    a = ap.parse_args()

    print("building df-variant (release) ...", file=sys.stderr)
    subprocess.run(["cargo", "build", "--release", "--bin", "df-variant"], cwd=ROOT, check=True)
    work = a.keep or Path(tempfile.mkdtemp(prefix="distributed_bench_"))
    work.mkdir(parents=True, exist_ok=True)
    ndjson, parquet = work / "bluesky.ndjson", work / "shredded"
    if not ndjson.exists():
        subprocess.run([str(cli()), "generate-bluesky", "--rows", str(a.rows), "--out", str(ndjson)], check=True)
    if not parquet.exists():
        run([], [f"COPY (SELECT v FROM read_json_variant('{ndjson}')) TO '{parquet}/' STORED AS PARQUET"])
    setup = [f"CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{parquet}/'"]

    workers, urls = [], []
    try:
        for _ in range(a.workers):
            w = subprocess.Popen([str(cli()), "worker", "--port", "0"], stdout=subprocess.PIPE, text=True)
            line = w.stdout.readline().strip()
            workers.append(w)
            urls.append(line.removeprefix("listening on "))
        distributed = ["--workers", ",".join(urls)]
        print(f"{a.rows} events, {a.workers} workers on this machine ({', '.join(urls)}), "
              f"hot, best of {a.runs}; seconds\n")
        print("| query | one process | coordinator + workers | plan bytes sent | row bytes moved | answers |")
        print("|---|---|---|---|---|---|")
        for i, q in enumerate(ours(), 1):
            times, answers = {}, {}
            for name, extra in (("one", []), ("dist", distributed)):
                p = run(extra, setup + [q] * a.runs)
                times[name] = min(float(m) for m in re.findall(r"rows? in ([0-9.]+) s", p.stderr)[-a.runs:])
                answers[name] = p.stdout.split("\n\n")[-1] if "\n\n" in p.stdout else p.stdout
            explain = run(distributed, setup + [f"EXPLAIN ANALYZE {q}"]).stdout
            plan_bytes = sum(size(v.split(":", 1)[1]) for m in re.findall(r"plan_bytes_sent=\{([^}]*)\}", explain)
                             for v in m.split(",") if ":" in v)
            row_bytes = sum(size(m) for m in re.findall(r"bytes_transferred=([0-9.]+ ?[KMG]?) ?B", explain))
            same = "same" if answers["one"] == answers["dist"] else "DIFFER"
            print(f"| Q{i} | {times['one']:.3f} | {times['dist']:.3f} | {plan_bytes / 1e3:.1f} KB "
                  f"| {row_bytes / 1e3:.1f} KB | {same} |")
        print(f"\nour SQL: benches/jsonbench.py ours(); started {time.strftime('%Y-%m-%d %H:%M')}")
    finally:
        for w in workers:
            w.kill()


if __name__ == "__main__":
    main()
