#!/usr/bin/env python3
"""Scaling harness for the cases that were quadratic (issue #15): each runs at
size n and 4n through the release CLI, and the harness fails when the time grows
by more than 8x (linear work grows about 4x, quadratic about 16x).

    python3 benches/scaling.py

Cases: a shredded COPY of one object with n keys; `schema_of_variant` of
2,000 arrays nested n deep; planning `v[0]` repeated n times; exploding one
object with n keys.
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cli():
    return ROOT / "target" / "release" / "df-variant"


def wide(n):
    return f"(SELECT parse_json('{{' || string_agg('\"k' || i || '\":' || i, ',') || '}}') AS v FROM generate_series(1, {n}) t(i))"


def cases(tmp):
    return {
        "shredded COPY of one object with n keys": (
            25_000, lambda n: f"COPY {wide(n)} TO '{tmp}/wide_{n}.parquet' STORED AS PARQUET"),
        "schema_of_variant of 2,000 arrays n deep": (
            200, lambda n: f"SELECT count(DISTINCT schema_of_variant(v)) FROM (SELECT parse_json(repeat('[', {n}) || i || repeat(']', {n})) AS v FROM generate_series(1, 2000) t(i))"),
        "planning v[0] repeated n times": (
            2_500, lambda n: "EXPLAIN SELECT v" + "[0]" * n + " FROM (SELECT parse_json('[1]') AS v)"),
        "exploding one object with n keys": (
            50_000, lambda n: f"SELECT count(*) FROM (SELECT unnest(variant_explode(v)) FROM {wide(n)})"),
    }


def timed(sql):
    """Best of 3 of the CLI's own timing of the last statement (the setup work of
    building the input is part of it, and linear)."""
    best = None
    for _ in range(3):
        p = subprocess.run([str(cli()), "-c", sql], text=True, capture_output=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip()[:500])
        t = float(re.findall(r"rows? in ([0-9.]+) s", p.stderr)[-1])
        best = t if best is None else min(best, t)
    return best


def main():
    subprocess.run(["cargo", "build", "--release", "--bin", "df-variant"], cwd=ROOT, check=True)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        print("| case | n | time at n (s) | time at 4n (s) | growth |")
        print("|---|---|---|---|---|")
        for name, (n, sql) in cases(tmp).items():
            small, large = timed(sql(n)), timed(sql(4 * n))
            growth = large / max(small, 1e-3)
            flag = "" if growth <= 8 else "  QUADRATIC?"
            failed |= bool(flag)
            print(f"| {name} | {n} | {small:.3f} | {large:.3f} | {growth:.1f}x{flag} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
