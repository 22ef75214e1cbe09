#!/usr/bin/env python3
"""Tables df-variant writes, read back by other Delta readers.

    python3 interop/delta_interop.py [--bin target/release/df-variant] [--keep DIR]

Writes, with the df-variant CLI (built with `cargo build --release` unless `--bin`
is given), into a temporary directory:

* `plain/`    -- shredding not enabled: protocol (3,7) [variantType], unshredded
                 files; created by COPY, partitioned, then a second version by INSERT;
* `shredded/` -- `delta.enableVariantShredding = true`: [variantType,
                 variantShredding], shredded files, z85 per-path statistics;
* `preview/`  -- the same with `delta.feature.variantShredding-preview = supported`
                 (the feature name Delta Spark 4.0-4.4 writes by default);
* `altered/`, `altered_shredding/` -- made without a VARIANT column, then
                 `ALTER TABLE t ADD COLUMN v VARIANT` (and `SET TBLPROPERTIES
                 ('delta.enableVariantShredding' = 'true')`), then an append;
* `dropped_shredding/` -- `altered_shredding` then `ALTER TABLE t DROP FEATURE
                 variantShredding` (its shredded file rewritten unshredded);

then checks:

* Python `deltalake` (delta-rs 1.6) reads `plain` (latest and version 0) with the
  expected rows, and refuses the shredding tables (it does not implement shredding);
* pysail (Sail 0.7, a Spark-compatible engine with its own Delta reader) reads
  `shredded` and `preview` with the expected rows;
* the independent raw reader of `delta_read.py` (log replay + pyarrow + our Python
  Variant decoder) agrees on all three;
* the shredding tables' files really have `typed_value`, and their `add.stats` carry
  `minValues.v`/`maxValues.v` strings.

Needs `pip install "deltalake==1.6.*" pysail pyarrow`; pysail 0.7 accepts PySpark
connect clients up to 4.2 only, so `delta_read.py --engine pysail` runs in a venv
(`~/.cache/df-variant/venv-delta`, or `$DELTA_PYTHON`) with `pyspark-client==4.2.0` (see
delta_read.py). A missing reader is reported as SKIPPED, not as a pass;
with `--require-all` (as `.ci/run` runs it, after installing the readers) a
skipped check fails.
Exit status: 0 all checks passed (or skipped), 1 a check failed.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

ROWS = [
    (1, "a", '{"a": 1, "b": "x", "c": {"d": 10}}'),
    (2, "a", '{"a": 2, "b": "y", "c": {"d": 20}}'),
    (3, "b", '{"a": 30, "b": "z", "c": {"d": 1.5}}'),
    (4, "b", None),
    (5, "b", '{"a": 31, "b": "a long string of more than sixty-three bytes: abcdefghijklmnopqrstuvwxyz"}'),
    (6, "a", "null"),
    (7, "a", '[1, "two", {"three": 3}]'),
]
LATER = [(8, "c", '{"a": 5000, "b": "later"}')]

EXPECTED = {
    1: '{"a":1,"b":"x","c":{"d":10}}',
    2: '{"a":2,"b":"y","c":{"d":20}}',
    3: '{"a":30,"b":"z","c":{"d":1.5}}',
    4: "NULL",
    5: '{"a":31,"b":"a long string of more than sixty-three bytes: abcdefghijklmnopqrstuvwxyz"}',
    6: "null",
    7: '[1,"two",{"three":3}]',
    8: '{"a":5000,"b":"later"}',
}


def values(rows):
    def lit(j):
        return "NULL" if j is None else "'" + j.replace("'", "''") + "'"
    return ", ".join(f"({i}, '{p}', {lit(j)})" for i, p, j in rows)


def sql_for(name, options):
    src = f"SELECT id, p, parse_json(j) AS v FROM (VALUES {values(ROWS)}) t(id, p, j)"
    # Not `INSERT ... SELECT ... FROM (VALUES ...)`: DataFusion 55 types such a
    # VALUES list by the insert's target columns.
    later = " UNION ALL ".join(
        f"SELECT {i} AS id, '{p}' AS p, parse_json('{j}') AS v" for i, p, j in LATER
    )
    opts = ""
    if options:
        opts = " OPTIONS (" + ", ".join(f"'{k}' '{v}'" for k, v in options.items()) + ")"
    return [
        f"COPY ({src}) TO '{name}' STORED AS DELTA PARTITIONED BY (p){opts}",
        f"CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '{name}'",
        f"INSERT INTO t {later}",
    ]


def expected_file(directory, ids):
    path = os.path.join(directory, f"expected-{len(ids)}.tsv")
    with open(path, "w") as f:
        for i in ids:
            f.write(f"{i}\t{EXPECTED[i]}\n")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=None, help="df-variant binary (default: cargo build --release)")
    ap.add_argument("--keep", default=None, help="write the tables here and keep them")
    ap.add_argument("--require-all", action="store_true",
                    help="a check skipped for a missing reader fails the run")
    args = ap.parse_args()

    binary = args.bin
    if binary is None:
        subprocess.run(["cargo", "build", "--release", "--bin", "df-variant"], cwd=ROOT, check=True)
        binary = os.path.join(ROOT, "target", "release", "df-variant")
    work = args.keep or tempfile.mkdtemp(prefix="delta-interop-")
    os.makedirs(work, exist_ok=True)
    tables = {
        "plain": {},
        "shredded": {"delta.enableVariantShredding": "true"},
        "preview": {
            "delta.enableVariantShredding": "true",
            "delta.feature.variantShredding-preview": "supported",
        },
    }
    for name, options in tables.items():
        path = os.path.join(work, name)
        shutil.rmtree(path, ignore_errors=True)
        cmd = [binary]
        for s in sql_for(path, options):
            cmd += ["-c", s]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    # Tables changed by ALTER TABLE: ids 1-7 without a VARIANT column (protocol
    # (1, 2)), `ADD COLUMN v VARIANT` (upgrade to (3, 7) with variantType), then
    # id 8 appended with v; `altered_shredding` also turns shredding on before
    # the append (variantShredding; the appended file is shredded).
    altered = {"altered": [], "altered_shredding": [
        "ALTER TABLE t SET TBLPROPERTIES ('delta.enableVariantShredding' = 'true')"],
        "dropped_shredding": [
        "ALTER TABLE t SET TBLPROPERTIES ('delta.enableVariantShredding' = 'true')"]}
    for name, more in altered.items():
        path = os.path.join(work, name)
        shutil.rmtree(path, ignore_errors=True)
        src = f"SELECT id, p FROM (VALUES {values(ROWS)}) t(id, p, j)"
        i, p, j = LATER[0]
        statements = [
            f"COPY ({src}) TO '{path}' STORED AS DELTA PARTITIONED BY (p)",
            f"CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '{path}'",
            "ALTER TABLE t ADD COLUMN v VARIANT",
            *more,
            f"INSERT INTO t SELECT {i} AS id, '{p}' AS p, parse_json('{j}') AS v",
        ]
        if name == "dropped_shredding":
            # The shredded file is rewritten unshredded, the feature dropped.
            statements.append("ALTER TABLE t DROP FEATURE variantShredding")
        cmd = [binary]
        for s in statements:
            cmd += ["-c", s]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

    all_ids = sorted(EXPECTED)
    first_ids = [i for i, _, _ in ROWS]
    expect_all = expected_file(work, all_ids)
    expect_v0 = expected_file(work, first_ids)
    failures, skipped, passed = [], [], []

    def available(engine):
        if engine == "raw":
            return None
        if engine == "deltalake":
            py, probe = sys.executable, "import deltalake"
        else:
            py = os.environ.get(
                "DELTA_PYTHON", os.path.expanduser("~/.cache/df-variant/venv-delta/bin/python")
            )
            probe = "import pysail, pyspark"
        try:
            r = subprocess.run([py, "-c", probe], capture_output=True, text=True)
        except OSError as e:
            return f"{py}: {e}"
        return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]

    missing = {e: available(e) for e in ("deltalake", "pysail", "raw")}

    def read(engine, table, expect, version=None, must_fail=None):
        if missing[engine]:
            skipped.append(f"{engine} on {table}: reader not available ({missing[engine]})")
            return
        cmd = [sys.executable, os.path.join(HERE, "delta_read.py"), "--engine", engine]
        if version is not None:
            cmd += ["--version", str(version)]
        cmd += ["--expect", expect, os.path.join(work, table)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        label = f"{engine} reads {table}" + (f" at version {version}" if version is not None else "")
        out = (r.stdout + r.stderr).strip()
        if must_fail:
            label = f"{engine} refuses {table}"
            if r.returncode == 2 and must_fail in out:
                passed.append(label)
            elif "No module named" in out or "not installed" in out:
                skipped.append(f"{label}: {out.splitlines()[-1]}")
            else:
                failures.append(f"{label}: exit {r.returncode}: {out[-800:]}")
            return
        if r.returncode == 0:
            passed.append(label)
        elif r.returncode == 2 and ("No module named" in out or "not installed" in out or "venv" in out):
            skipped.append(f"{label}: {out.splitlines()[-1] if out else 'reader missing'}")
        else:
            failures.append(f"{label}: exit {r.returncode}: {out[-1500:]}")

    read("deltalake", "plain", expect_all)
    read("deltalake", "plain", expect_v0, version=0)
    read("deltalake", "shredded", expect_all, must_fail="variantShredding")
    read("pysail", "shredded", expect_all)
    read("pysail", "preview", expect_all)
    read("pysail", "plain", expect_all)
    for t in tables:
        read("raw", t, expect_all)
    expect_altered = os.path.join(work, "expected-altered.tsv")
    with open(expect_altered, "w") as f:
        for i in all_ids:
            f.write(f"{i}\t{EXPECTED[i] if i == LATER[0][0] else 'NULL'}\n")
    # deltalake's pyarrow path cannot fill a VARIANT column missing from older
    # files ("nulls in input cannot be viewed as non-nullable"); its DataFusion
    # scan (QueryBuilder) reads the table.
    if missing["deltalake"]:
        skipped.append(f"deltalake QueryBuilder on altered: {missing['deltalake']}")
    else:
        import pyarrow as pa
        from deltalake import DeltaTable, QueryBuilder
        import variant_decode as vd
        for t in ("altered", "dropped_shredding"):
            got = {}
            table = pa.table(QueryBuilder().register("t", DeltaTable(os.path.join(work, t)))
                             .execute("SELECT id, v FROM t").read_all())
            for row in table.to_pylist():
                v = row["v"]
                got[row["id"]] = "NULL" if v is None else json.dumps(
                    vd.decode(v["metadata"], v["value"]), separators=(",", ":"), sort_keys=True)
            want = {i: (EXPECTED[i] if i == LATER[0][0] else "NULL") for i in all_ids}
            label = f"deltalake QueryBuilder reads {t}"
            (passed if got == want else failures).append(label if got == want else f"{label}: {got}")
    read("deltalake", "altered_shredding", expect_altered, must_fail="variantShredding")
    read("pysail", "altered", expect_altered)
    read("pysail", "altered_shredding", expect_altered)
    read("pysail", "dropped_shredding", expect_altered)
    read("raw", "altered", expect_altered)
    read("raw", "altered_shredding", expect_altered)
    read("raw", "dropped_shredding", expect_altered)
    for t, want in [("altered", ["variantType"]), ("altered_shredding", ["variantType", "variantShredding"]),
                    ("dropped_shredding", ["variantType"])]:
        protocols = []
        for log in sorted(glob.glob(os.path.join(work, t, "_delta_log", "*.json"))):
            for line in open(log):
                if '"protocol"' in line:
                    protocols.append(json.loads(line)["protocol"])
        last = protocols[-1]
        label = f"{t}: protocol {protocols[0]} then {last}"
        if (protocols[0]["minReaderVersion"] == 1 and last["minReaderVersion"] == 3
                and last["readerFeatures"] == want):
            passed.append(label)
        else:
            failures.append(label)

    # The shredding tables: shredded files and z85 statistics in the log.
    import pyarrow.parquet as pq
    for t in ("shredded", "preview"):
        files = glob.glob(os.path.join(work, t, "**", "*.parquet"), recursive=True)
        typed = [f for f in files if "typed_value" in str(pq.ParquetFile(f).schema)]
        stats = []
        for log in sorted(glob.glob(os.path.join(work, t, "_delta_log", "*.json"))):
            for line in open(log):
                a = json.loads(line).get("add")
                if a:
                    s = json.loads(a["stats"])
                    stats.append(isinstance(s.get("minValues", {}).get("v"), str)
                                 and isinstance(s.get("maxValues", {}).get("v"), str))
        label = f"{t}: {len(typed)} of {len(files)} files shredded, {sum(stats)} of {len(stats)} adds with z85 bounds"
        if files and len(typed) == len(files) and stats and all(stats):
            passed.append(label)
        else:
            failures.append(label)
        with open(os.path.join(work, t, "_delta_log", "00000000000000000000.json")) as f:
            protocol = next(json.loads(l)["protocol"] for l in f if '"protocol"' in l)
        want = "variantShredding-preview" if t == "preview" else "variantShredding"
        label = f"{t}: protocol {protocol}"
        if want in protocol["readerFeatures"] and want in protocol["writerFeatures"]:
            passed.append(label)
        else:
            failures.append(label)

    for p in passed:
        print("ok       ", p)
    for s in skipped:
        print("SKIPPED  ", s)
    for f in failures:
        print("FAILED   ", f)
    print(f"{len(passed)} passed, {len(skipped)} skipped, {len(failures)} failed; tables in {work}")
    if not args.keep and not failures:
        shutil.rmtree(work, ignore_errors=True)
    if args.require_all and skipped:
        print(f"--require-all: {len(skipped)} check(s) skipped for a missing reader")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
