#!/usr/bin/env python3
"""Interop check: df-variant's VARIANT Parquet files read by pyarrow (plus an
independent decoder), DuckDB and Spark; DuckDB's VARIANT Parquet files read by us.

    python3 interop/check.py                  # pyarrow + duckdb
    python3 interop/check.py --spark          # + Spark 4.3 (slow: a JVM)
    python3 interop/check.py --engines pyarrow --keep /tmp/interop

See interop/README.md for what is checked, what is normalised and why.
Exit status: 0 when every comparison matched, 1 on any mismatch or crash,
2 on a usage/setup error (e.g. an engine module missing).
"""

import argparse
import base64
import datetime
import decimal
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import uuid

sys.dont_write_bytecode = True  # no __pycache__ in the repository

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import parquet_footer  # noqa: E402
import variant_decode as vd  # noqa: E402

OUR_FILES = [
    "unshredded.parquet",
    "auto.parquet",
    "auto_mixed.parquet",
    "explicit.parquet",
    "scalars.parquet",
    "arrays.parquet",
]
# Whether each of our files must have `typed_value` columns (None: not checked;
# whether 'auto' shreds a column mixing objects, arrays and scalars is the
# writer's policy, which has changed; the note column shows what it did).
EXPECT_SHREDDED = {
    "unshredded.parquet": False,
    "auto.parquet": True,
    "auto_mixed.parquet": None,
    "explicit.parquet": True,
    "scalars.parquet": True,
    "arrays.parquet": True,
}

# DuckDB's explicit shredding type for duckdb_explicit.parquet (some event fields).
DUCKDB_EXPLICIT = (
    "STRUCT(event_id BIGINT, kind VARCHAR, \"user\" STRUCT(id BIGINT, name VARCHAR, "
    "tags VARCHAR[]), score DOUBLE, flag BOOLEAN, big BIGINT, "
    "items STRUCT(sku VARCHAR, qty BIGINT)[])"
)

# Rows of DuckDB-native types for duckdb_typed*.parquet: (id, DuckDB expression).
# Objects of one shape first (so DuckDB's shredding has typed columns to infer),
# then scalars of every type DuckDB can write into a Parquet VARIANT.
_TYPED_OBJECTS = [
    (
        f"{{'d': DATE '{d}', 'ts': TIMESTAMPTZ '{ts}', 'ntz': TIMESTAMP '{ntz}', "
        f"'ns': TIMESTAMP_NS '{ns}', 't': TIME '{t}', 'dec': ({dec})::DECIMAL(9,2), "
        f"'dec18': ({dec18})::DECIMAL(18,6), 'u': UUID '{u}', 'b': '{b}'::BLOB, "
        f"'f': ({f})::FLOAT, 'x': ({x})::DOUBLE, 'i': ({i})::INTEGER, 's': '{s}'}}"
    )
    for d, ts, ntz, ns, t, dec, dec18, u, b, f, x, i, s in [
        ("2024-02-29", "2024-01-15 10:20:30.123456+00", "2024-01-15 10:20:30.5",
         "2024-01-15 10:20:30.123456789", "12:34:56.789", "12.50", "1234567890.123456",
         "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "\\x00\\x01\\xFFab", "1.1", "1e300", 1, "a"),
        ("1969-07-20", "1969-12-31 23:59:59.999999+00", "1900-01-01 00:00:00",
         "1969-12-31 23:59:59.999999999", "00:00:00", "-0.01", "-0.000001",
         "00000000-0000-0000-0000-000000000000", "", "-3.4e38", "-2.5e-300", -2147483648, ""),
        ("0099-12-31", "2200-04-11 23:47:16.854775+00", "9999-12-31 23:59:59.999999",
         "2200-04-11 23:47:16.854775807", "23:59:59.999999", "9999999.99", "999999999999.999999",
         "ffffffff-ffff-ffff-ffff-ffffffffffff", "\\x5C\\x22quote", "1.4e-45", "0.1", 2147483647,
         "é \"q\" \\ 😀"),
        ("1970-01-01", "1970-01-01 00:00:00+00", "1970-01-01 00:00:00.000001",
         "1970-01-01 00:00:00.000000001", "12:00:00.5", "0.00", "0", "12345678-1234-5678-1234-567812345678",
         "text", "16777217", "4.9e-324", 0, "x"),
    ]
]
TYPED_ROWS = list(enumerate(_TYPED_OBJECTS, start=1)) + list(enumerate([
    "12.50::DECIMAL(4,2)",
    "1234567890123.45678::DECIMAL(18,5)",
    "'12345678901234567890.123456789012345678'::DECIMAL(38,18)",
    "(-0.001)::DECIMAL(9,3)",
    "1.1::FLOAT",
    "'NaN'::DOUBLE",
    "'-Infinity'::DOUBLE",
    "'Infinity'::FLOAT",
    "DATE '2024-02-29'",
    "TIMESTAMPTZ '2024-01-15 10:20:30.123456+00'",
    "TIMESTAMP '2024-01-15 10:20:30.5'",
    "TIMESTAMP_NS '2024-01-15 10:20:30.123456789'",
    "TIME '12:34:56.789'",
    "UUID '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'",
    "'\\x00\\x01\\xFFab'::BLOB",
    "(-5)::TINYINT",
    "1000::SMALLINT",
    "(-9007199254740993)::BIGINT",
    "12::HUGEINT",
    "200::UTINYINT",
    "4000000000::UINTEGER",
    "9223372036854775807::UBIGINT",
    "[1, 2, NULL]",
    "{'a': [{'b': 1}], 'n': NULL}",
    "MAP {'k': 1}",
    "'a'::ENUM('a', 'b')",
    "[DATE '2024-01-01', NULL]",
    "[{'z': 1, 'a': 2}, {'a': 3, 'z': 4}]",
    # DuckDB cannot write these into a Parquet VARIANT (checked, reported as notes):
    "TIMESTAMP_MS '2024-01-15 10:20:30.123'",
    "TIMETZ '12:34:56+02'",
    "INTERVAL 3 DAY",
    "18446744073709551615::UBIGINT",
    "170141183460469231731687303715884105727::HUGEINT",
], start=101))


# ---------------------------------------------------------------------------
# Comparison: JSON texts, canonicalised with the decoded value as a type guide
# ---------------------------------------------------------------------------

NO_GUIDE = object()


class Dup(ValueError):
    pass


def _pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise Dup(f"duplicate key {k!r} in JSON text")
        out[k] = v
    return out


def parse_json(text):
    """JSON text -> Python, numbers as exact Decimals, duplicate keys refused."""
    return json.loads(
        text,
        parse_float=decimal.Decimal,
        parse_int=decimal.Decimal,
        # DuckDB prints NaN/Infinity as bare (non-JSON) tokens; Spark and we print
        # them as strings. Read the bare tokens as those strings.
        parse_constant=str,
        object_pairs_hook=_pairs,
    )


def _f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _dbl_key(x):
    return "nan" if math.isnan(x) else x


_TS_RE = re.compile(
    r"^(-?\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?$"
)
_TIME_RE = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$")
_DATE_RE = re.compile(r"^(-?\d{4,})-(\d{2})-(\d{2})$")
_EPOCH_ORD = datetime.date(1970, 1, 1).toordinal()


def _days(y, m, d):
    return datetime.date(y, m, d).toordinal() - _EPOCH_ORD


def _parse_ts(s):
    """`(ns since epoch, has offset)` of a timestamp text, or None."""
    m = _TS_RE.match(s)
    if not m:
        return None
    y, mo, d, hh, mi, ss, frac, z, sign, oh, om, os_ = m.groups()
    try:
        days = _days(int(y), int(mo), int(d))
    except ValueError:
        return None
    ns = ((days * 24 + int(hh)) * 60 + int(mi)) * 60 + int(ss)
    ns = ns * 10**9 + int((frac or "").ljust(9, "0") or 0)
    has_offset = bool(z or sign)
    if sign:
        off = (int(oh) * 60 + int(om or 0)) * 60 + int(os_ or 0)
        ns -= (off if sign == "+" else -off) * 10**9
    return ns, has_offset


def _duckdb_blob(text):
    """Bytes of DuckDB's BLOB text form (`\\xHH` escapes, other characters as is)."""
    out = bytearray()
    i = 0
    while i < len(text):
        if text.startswith("\\x", i) and i + 4 <= len(text):
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out.extend(text[i].encode())
            i += 1
    return bytes(out)


def canon_decoded(v):
    """Canonical form of a value from variant_decode."""
    if v is None:
        return ("null",)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("num", decimal.Decimal(v))
    if isinstance(v, decimal.Decimal):
        return ("num", v)
    if isinstance(v, vd.Float32):
        return ("f32", _dbl_key(float(v)))
    if isinstance(v, float):
        return ("dbl", _dbl_key(v))
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, bytes):
        return ("bin", v)
    if isinstance(v, vd.Date):
        return ("date", v.days)
    if isinstance(v, vd.Timestamp):
        return ("ts", v.value * (1000 if v.unit == "us" else 1), v.utc)
    if isinstance(v, vd.Time):
        return ("time", v.micros)
    if isinstance(v, uuid.UUID):
        return ("uuid", v)
    if isinstance(v, list):
        return ("arr", [canon_decoded(e) for e in v])
    if isinstance(v, dict):
        return ("obj", sorted((k, canon_decoded(e)) for k, e in v.items()))
    raise TypeError(f"cannot canonicalise {type(v)}")


def canon_text(p, guide=NO_GUIDE):
    """Canonical form of parsed JSON `p`; `guide` (a decoded value) says how to read
    leaves whose JSON form is ambiguous (doubles vs exact numerics, timestamps,
    dates, binary, uuid printed as strings)."""
    g = guide
    if p is None:
        return ("null",)
    if isinstance(p, bool):
        return ("bool", p)
    if isinstance(p, decimal.Decimal):
        if isinstance(g, vd.Float32):
            return ("f32", _dbl_key(_f32(float(p))))
        if isinstance(g, float):
            return ("dbl", _dbl_key(float(p)))
        return ("num", p)
    if isinstance(p, str):
        if isinstance(g, float) and p in ("NaN", "Infinity", "-Infinity"):
            f = float(p.replace("Infinity", "inf"))
            return ("f32" if isinstance(g, vd.Float32) else "dbl", _dbl_key(f))
        if isinstance(g, vd.Timestamp):
            ts = _parse_ts(p)
            if ts is not None and ts[1] == g.utc:
                return ("ts", ts[0], g.utc)
        if isinstance(g, vd.Date):
            m = _DATE_RE.match(p)
            if m:
                try:
                    return ("date", _days(*map(int, m.groups())))
                except ValueError:
                    pass
        if isinstance(g, vd.Time):
            m = _TIME_RE.match(p)
            if m:
                hh, mi, ss, frac = m.groups()
                us = ((int(hh) * 60 + int(mi)) * 60 + int(ss)) * 10**6
                return ("time", us + int((frac or "").ljust(6, "0")[:6] or 0))
        if isinstance(g, bytes):
            if p == base64.b64encode(g).decode() or _duckdb_blob(p) == g:
                return ("bin", g)
        if isinstance(g, uuid.UUID):
            try:
                return ("uuid", uuid.UUID(p))
            except ValueError:
                pass
        return ("str", p)
    if isinstance(p, list):
        gs = g if isinstance(g, list) and len(g) == len(p) else [NO_GUIDE] * len(p)
        return ("arr", [canon_text(e, ge) for e, ge in zip(p, gs)])
    if isinstance(p, dict):
        gd = g if isinstance(g, dict) else {}
        return ("obj", sorted((k, canon_text(e, gd.get(k, NO_GUIDE))) for k, e in p.items()))
    raise TypeError(type(p))


def canon_answer(text, guide=NO_GUIDE, top_null_is_sql_null=False):
    """Canonical form of an engine's answer: None for SQL NULL, else canon_text."""
    if text is None:
        return None
    c = canon_text(parse_json(text), guide)
    if top_null_is_sql_null and c == ("null",):
        return None
    return c


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


class Results:
    def __init__(self, show):
        self.rows = []  # (direction, reader, file, compared, mismatches, note)
        self.mismatches = {}  # key -> [(id, expected, got, why)]
        self.notes = []
        self.show = show
        self.failed = False

    def add(self, direction, reader, file, compared, bad, note=""):
        self.rows.append((direction, reader, file, compared, len(bad), note))
        if bad:
            self.failed = True
            self.mismatches[(direction, reader, file)] = bad

    def crash(self, direction, reader, file, message):
        self.failed = True
        self.rows.append((direction, reader, file, 0, "CRASH", message.splitlines()[0][:150]))
        self.mismatches[(direction, reader, file)] = [(None, None, None, message)]

    def note(self, msg):
        if msg not in self.notes:
            self.notes.append(msg)

    def print(self):
        print()
        head = ("direction", "reader", "file", "rows", "mismatches", "note")
        table = [head] + [tuple(str(c) for c in r) for r in self.rows]
        widths = [max(len(r[i]) for r in table) for i in range(5)]
        for r in table:
            print("  ".join(r[i].ljust(widths[i]) for i in range(5)) + ("  " + r[5] if r[5] else ""))
        if self.mismatches:
            print("\nFirst mismatches:")
            for (direction, reader, file), bad in self.mismatches.items():
                print(f"\n== {direction} / {reader} / {file}: {len(bad)}")
                for id_, exp, got, why in bad[: self.show]:
                    if id_ is None:
                        lines = why.splitlines()
                        print("  " + "\n  ".join(lines[:12]))
                        if len(lines) > 12:
                            print(f"  ... [{len(lines) - 12} more lines]")
                        continue
                    print(f"  id {id_}: {why}")
                    print(f"    expected: {_clip(exp)}")
                    print(f"    got:      {_clip(got)}")
        if self.notes:
            print("\nNotes:")
            for n in self.notes:
                print(f"  - {n}")


def _clip(s, n=3000):
    s = "NULL (SQL)" if s is None else s
    return s if len(s) <= n else s[:n] + f"... [{len(s) - n} more characters]"


def compare_rows(expected, got, guides, top_null_is_sql_null=False, exact_strings=None):
    """Compares {id: text} maps; returns mismatches [(id, expected, got, why)].

    `guides`: {id: decoded value or NO_GUIDE}. `exact_strings`: a list that collects
    ids whose texts differ as strings while equal after canonicalisation.
    """
    bad = []
    for id_ in sorted(set(expected) | set(got)):
        if id_ not in got:
            bad.append((id_, expected[id_], None, "row missing"))
            continue
        if id_ not in expected:
            bad.append((id_, None, got[id_], "unexpected row"))
            continue
        e, g = expected[id_], got[id_]
        guide = guides.get(id_, NO_GUIDE)
        try:
            ce = canon_answer(e, guide, top_null_is_sql_null)
            cg = canon_answer(g, guide, top_null_is_sql_null)
        except (ValueError, TypeError) as ex:
            bad.append((id_, e, g, f"unparseable: {ex}"))
            continue
        if ce != cg:
            bad.append((id_, e, g, "values differ"))
        elif exact_strings is not None and e != g:
            exact_strings.append((id_, e, g))
    return bad


# ---------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------


def timed(timings, name):
    class T:
        def __enter__(self):
            self.t = time.time()

        def __exit__(self, *a):
            timings.append((name, time.time() - self.t))

    return T()


def build(args):
    if args.bin:
        return args.bin
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
    exe = os.path.join(target, "debug", "examples", "interop")
    if not args.skip_build:
        print("building: cargo build --example interop", flush=True)
        p = subprocess.run(["cargo", "build", "--example", "interop"], cwd=REPO)
        if p.returncode != 0:
            raise SetupError("`cargo build --example interop` failed (see above); "
                             "--skip-build uses the last build")
    if not os.path.exists(exe):
        sys.exit(f"error: {exe} does not exist (build it, or pass --bin)")
    return exe


def ours_read(exe, path):
    """Our reading of a file: {id: to_json text or None}, {id: error message}."""
    p = subprocess.run([exe, "read", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"`interop read {path}` failed: {p.stderr.strip()}")
    texts, errors = {}, {}
    for line in p.stdout.splitlines():
        r = json.loads(line)
        texts[r["id"]] = r["v"]
        if "errors" in r:
            errors[r["id"]] = r["errors"]["v"]
    return texts, errors


def pyarrow_file_check(pq, path, name):
    """Schema checks of one file; returns (problems, notes, decoded rows by position)."""
    problems, notes = [], []
    pf = pq.ParquetFile(path, arrow_extensions_enabled=False)
    text = str(pf.schema)
    m = re.search(r"group field_id=-?\d+ v \((Variant[^)]*\))\)", text)
    if not m:
        problems.append("pyarrow: the schema does not mark `v` with the VARIANT logical type")
    # The raw annotation, straight from the footer.
    elems = dict(parquet_footer.schema_elements(path))
    v = elems.get("v")
    if not v or v["logical"] != "VARIANT":
        problems.append(f"footer: `v` has logical type {v and v['logical']}, not VARIANT")
    else:
        spec = v["logical_fields"].get(1)
        if spec is None:
            notes.append(
                "our files' VARIANT annotation has no specification_version "
                f"(pyarrow shows {m.group(1) if m else '?'}; parquet-java reads it as VARIANT(0), "
                "which Spark 4.3 refuses)"
            )
        elif spec != 1:
            problems.append(f"footer: VARIANT specification_version {spec}, expected 1")
    t = pf.schema_arrow.field("v").type
    try:
        vd.check_column_type(t)
    except vd.VariantError as e:
        problems.append(f"column structure: {e}")
    shredded = "typed_value" in [f.name for f in t]
    return problems, notes, shredded


def step_pyarrow(res, dir_, answers, guides_out):
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError as e:
        raise SetupError(f"pyarrow is not importable: {e}")
    for name in OUR_FILES:
        path = os.path.join(dir_, name)
        try:
            problems, notes, shredded = pyarrow_file_check(pq, path, name)
            for n in notes:
                res.note(n)
            expect = EXPECT_SHREDDED[name]
            if expect is not None and shredded != expect:
                problems.append(f"expected {'a' if expect else 'no'} typed_value column, "
                                f"found {'one' if shredded else 'none'}")
            table = pq.read_table(path, arrow_extensions_enabled=False)
            ids = table.column("id").to_pylist()
            rows = vd.reconstruct(table.column("v"))
            expected = {i: t for i, t in answers[name]}
            got, guides, bad = {}, {}, []
            for id_, r in zip(ids, rows):
                if r[0] == "error":
                    bad.append((id_, expected.get(id_), None, f"decoder: {r[1]}"))
                    continue
                if r[0] == "sql_null":
                    got[id_] = None
                    continue
                guides[id_] = r[1]
                got[id_] = r[1]
            # Compare: decoded values (canonical) vs our to_json (guided canonical).
            for id_ in sorted(set(expected) | set(got)):
                if any(b[0] == id_ for b in bad):
                    continue
                if id_ not in got or id_ not in expected:
                    bad.append((id_, expected.get(id_), None, "row missing on one side"))
                    continue
                e = expected[id_]
                d = got[id_]
                if e is None or id_ not in guides:
                    if not (e is None and id_ not in guides):
                        bad.append((id_, e, _show(d, id_ in guides), "SQL NULL on one side only"))
                    continue
                try:
                    ok = canon_answer(e, d) == canon_decoded(d)
                except (ValueError, TypeError) as ex:
                    ok, why = False, f"unparseable: {ex}"
                else:
                    why = "decoded value differs from our to_json"
                if not ok:
                    bad.append((id_, e, _show(d, True), why))
            guides_out[name] = guides
            for p in problems:
                bad.insert(0, (None, None, None, p))
            shape = "shredded" if shredded else "unshredded"
            res.add("ours->pyarrow", "pyarrow+decoder", name, len(ids), bad, shape)
        except SetupError:
            raise
        except Exception:
            res.crash("ours->pyarrow", "pyarrow+decoder", name, traceback.format_exc())


def _show(v, present):
    if not present:
        return None
    try:
        return json.dumps(_jsonable(v), ensure_ascii=False)
    except Exception:
        return repr(v)


def _jsonable(v):
    if isinstance(v, dict):
        return {k: _jsonable(e) for k, e in v.items()}
    if isinstance(v, list):
        return [_jsonable(e) for e in v]
    if isinstance(v, decimal.Decimal):
        return float(v) if abs(v.adjusted()) > 300 else v.__str__() + "(dec)"
    if isinstance(v, (vd.Date, vd.Timestamp, vd.Time, uuid.UUID, bytes)):
        return repr(v)
    return v


class SetupError(Exception):
    pass


class _RawNum(str):
    """A JSON number kept as its text."""


def sorted_keys_json(text):
    """`text` re-serialised with every object's keys in code-point order (= UTF-8
    byte order) and numbers kept exactly as written."""
    if text is None:
        return None
    doc = json.loads(text, parse_float=_RawNum, parse_int=_RawNum)

    def out(v):
        if isinstance(v, _RawNum):
            return str(v)
        if isinstance(v, dict):
            return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + out(v[k]) for k in sorted(v)) + "}"
        if isinstance(v, list):
            return "[" + ",".join(out(e) for e in v) + "]"
        return json.dumps(v, ensure_ascii=False)

    return out(doc)


def duckdb_answers(con, path):
    """DuckDB's reading: {id: JSON text or None}. `CAST(v AS JSON)` is exact;
    DuckDB's `to_json(v)` goes through DOUBLE for decimals (see README)."""
    rows = con.execute(
        f"SELECT id, CAST(v AS JSON)::VARCHAR FROM read_parquet('{path}') ORDER BY id"
    ).fetchall()
    return {i: t for i, t in rows}


def step_duckdb(res, dir_, answers, guides, exe, timings):
    try:
        import duckdb
        import pyarrow.parquet as pq
    except ImportError as e:
        raise SetupError(f"duckdb is not importable: {e}")
    con = duckdb.connect()
    with timed(timings, "duckdb reads our files"):
        for name in OUR_FILES:
            path = os.path.join(dir_, name)
            try:
                got = duckdb_answers(con, path)
                expected = {i: t for i, t in answers[name]}
                bad = compare_rows(expected, got, guides.get(name, {}), top_null_is_sql_null=True)
                folded = sum(1 for i, t in expected.items() if t == "null" and got.get(i) is None)
                res.add("ours->duckdb", "duckdb", name, len(got), bad,
                        f"{folded} top-level Variant nulls read as SQL NULL" if folded else "")
            except Exception:
                res.crash("ours->duckdb", "duckdb", name, traceback.format_exc())

    # Reverse: DuckDB writes, we read.
    with timed(timings, "duckdb writes, we read"):
        docs = [json.loads(line) for line in open(os.path.join(dir_, "docs.jsonl"))]
        con.execute("CREATE TABLE docs (id BIGINT, doc VARCHAR)")
        con.executemany("INSERT INTO docs VALUES (?, ?)", [(d["id"], d["doc"]) for d in docs])
        con.execute("CREATE TABLE src AS SELECT id, CAST(CAST(doc AS JSON) AS VARIANT) AS v FROM docs")
        # The same documents with keys pre-sorted in the text: DuckDB keeps object
        # keys in insertion order in the binary (see README), so this is the input
        # with which its files respect the spec's key order.
        con.execute("CREATE TABLE sorted_docs (id BIGINT, doc VARCHAR)")
        con.executemany("INSERT INTO sorted_docs VALUES (?, ?)",
                        [(d["id"], sorted_keys_json(d["doc"])) for d in docs])
        con.execute("CREATE TABLE src_sorted AS SELECT id, CAST(CAST(doc AS JSON) AS VARIANT) AS v "
                    "FROM sorted_docs")
        con.execute("CREATE TABLE typed_all (id BIGINT, v VARIANT)")
        for i, e in TYPED_ROWS:
            try:
                con.execute(f"INSERT INTO typed_all VALUES ({i}, ({e})::VARIANT)")
            except Exception as ex:
                res.note(f"DuckDB cannot make a VARIANT of `{e}`: {str(ex).splitlines()[0]}")

        unshredded = "(SHREDDING {'v': 'VARIANT'})"
        explicit = "(SHREDDING {'v': '%s'})" % DUCKDB_EXPLICIT.replace("'", "''")
        outputs = [
            ("duckdb_unshredded.parquet", "src", unshredded),
            ("duckdb_auto.parquet", "src", ""),
            ("duckdb_explicit.parquet", "src", explicit),
            ("duckdb_sorted_unshredded.parquet", "src_sorted", unshredded),
            ("duckdb_sorted_auto.parquet", "src_sorted", ""),
            ("duckdb_sorted_explicit.parquet", "src_sorted", explicit),
            ("duckdb_typed_unshredded.parquet", "typed_all", unshredded),
            ("duckdb_typed.parquet", "typed_all", ""),
        ]
        unwritable = {}  # table -> ids DuckDB could not write
        for name, table, opts in outputs:
            path = os.path.join(dir_, name)
            try:
                skipped = duckdb_write(con, table, path, opts, unwritable.setdefault(table, {}))
                for id_, msg in skipped:
                    res.note(f"DuckDB cannot write {table} id {id_} to Parquet, left out: {msg}")
                theirs = duckdb_answers(con, path)
                # Guides from the decoder (lenient about key order, which DuckDB breaks).
                tab = pq.read_table(path, arrow_extensions_enabled=False)
                rows = vd.reconstruct(tab.column("v"), lenient=True)
                guides_d, spec, broken = {}, [], set()
                for id_, r in zip(tab.column("id").to_pylist(), rows):
                    if r[0] == "ok":
                        guides_d[id_] = r[1]
                        spec.extend(f"id {id_}: {w}" for w in r[2][:1])
                        if r[2]:
                            broken.add(id_)
                    elif r[0] == "error":
                        spec.append(f"id {id_}: {r[1]}")
                        broken.add(id_)
                if spec:
                    res.note(
                        f"{name} breaks the Variant spec in {len(spec)} rows "
                        f"(independent decoder), e.g. {spec[0]}"
                    )
                ours, errors = ours_read(exe, path)
                bad = compare_rows(theirs, ours, guides_d, top_null_is_sql_null=True)
                bad = [
                    (i, e, g, f"our read failed: {errors[i]}" if i in errors else why)
                    for i, e, g, why in bad
                ]
                # Rows that break the spec (the independent decoder says so) and that
                # we refuse with an error are correct refusals, not mismatches: we do
                # not guess what invalid bytes mean. Wrong answers still fail.
                refused = [b for b in bad if b[0] in broken and b[0] in errors]
                bad = [b for b in bad if not (b[0] in broken and b[0] in errors)]
                shape = "shredded" if "typed_value" in tab.schema.field("v").type.names else "unshredded"
                note = f"{shape}; vs DuckDB's CAST(v AS JSON)"
                if refused:
                    note += f"; {len(refused)} spec-breaking rows refused with an error"
                res.add("duckdb->ours", "ours (interop read)", name, len(ours), bad, note)
            except Exception:
                res.crash("duckdb->ours", "ours (interop read)", name, traceback.format_exc())


def duckdb_write(con, table, path, opts, known):
    """COPY `table` to `path`; rows DuckDB cannot write are left out (found one
    by one, remembered in `known` {id: message} per table) and returned as
    [(id, message)]."""
    def where():  # not `NOT IN (NULL)`, which keeps no row
        return f"WHERE id NOT IN ({', '.join(str(i) for i in known)})" if known else ""

    try:
        con.execute(f"COPY (SELECT * FROM {table} {where()} ORDER BY id) TO '{path}' {opts}")
        return sorted(known.items())
    except Exception:
        pass
    skipped = []
    probe = path + ".probe.parquet"
    for (id_,) in con.execute(f"SELECT id FROM {table} ORDER BY id").fetchall():
        try:
            con.execute(f"COPY (SELECT * FROM {table} WHERE id = {id_}) TO '{probe}' {opts}")
        except Exception as ex:
            skipped.append((id_, str(ex).splitlines()[0][:200]))
    if os.path.exists(probe):
        os.remove(probe)
    known.update(skipped)
    con.execute(f"COPY (SELECT * FROM {table} {where()} ORDER BY id) TO '{path}' {opts}")
    return sorted(known.items())


def step_spark(res, dir_, answers, guides, timings):
    try:
        import pyspark  # noqa: F401
    except ImportError as e:
        raise SetupError(f"pyspark is not importable: {e}")
    jobs = []
    patched_dir = os.path.join(dir_, "spark_v1")
    os.makedirs(patched_dir, exist_ok=True)
    for name in OUR_FILES:
        jobs.append(("spark", name, os.path.join(dir_, name)))
        dst = os.path.join(patched_dir, name)
        n = parquet_footer.with_variant_spec_version(os.path.join(dir_, name), dst)
        if n:
            jobs.append(("spark (footer patched: VARIANT(1))", name, dst))
    spec = os.path.join(dir_, "spark_jobs.json")
    out = os.path.join(dir_, "spark_answers.json")
    log = os.path.join(dir_, "spark.log")
    with open(spec, "w") as f:
        json.dump([p for _, _, p in jobs], f)
    with timed(timings, "spark (JVM start + reads)"), open(log, "w") as logf:
        p = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--spark-worker", spec, out],
            stdout=logf, stderr=subprocess.STDOUT,
        )
    if p.returncode != 0 or not os.path.exists(out):
        res.crash("ours->spark", "spark", "*", f"the Spark worker failed; see {log}")
        return
    results = json.load(open(out))
    for reader, name, path in jobs:
        r = results[path]
        if "error" in r:
            res.crash("ours->spark", reader, name, r["error"])
            continue
        got = {i: t for i, t in r["rows"]}
        expected = {i: t for i, t in answers[name]}
        text_diffs = []
        bad = compare_rows(expected, got, guides.get(name, {}), exact_strings=text_diffs)
        note = f"{len(text_diffs)} rows equal only after parsing" if text_diffs else "all rows string-equal"
        res.add("ours->spark", reader, name, len(got), bad, note)
        for id_, e, g in text_diffs[:3]:
            res.note(f"spark {name} id {id_}: same value, different text: ours {_clip(e, 300)} / spark {_clip(g, 300)}")


def spark_worker(spec, out):
    """Runs in a child process (JVM logs go to spark.log)."""
    from pyspark.sql import SparkSession

    paths = json.load(open(spec))
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("df-variant-interop")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    results = {}
    for path in paths:
        try:
            df = spark.read.parquet(path)
            rows = df.selectExpr("id", "to_json(v) AS j").orderBy("id").collect()
            results[path] = {"rows": [[r["id"], r["j"]] for r in rows],
                             "schema": df.schema.simpleString()}
        except Exception as e:  # noqa: BLE001 - reported per file
            msg = str(e)
            results[path] = {"error": msg[:4000]}
    spark.stop()
    with open(out, "w") as f:
        json.dump(results, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default="pyarrow,duckdb",
                    help="comma-separated: pyarrow,duckdb,spark (default pyarrow,duckdb)")
    ap.add_argument("--spark", action="store_true", help="add spark to --engines")
    ap.add_argument("--skip", action="append", default=[], metavar="ENGINE",
                    help="leave an engine out (also when its module is missing)")
    ap.add_argument("--keep", metavar="DIR", help="write into DIR and keep it (default: a temp dir, removed)")
    ap.add_argument("--skip-build", action="store_true", help="use target/debug/examples/interop as built")
    ap.add_argument("--bin", metavar="PATH", help="a prebuilt interop example binary (implies --skip-build)")
    ap.add_argument("--show", type=int, default=3, help="mismatches printed per file (default 3)")
    ap.add_argument("--spark-worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.spark_worker:
        spark_worker(*args.spark_worker)
        return 0

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if args.spark and "spark" not in engines:
        engines.append("spark")
    skip = {s for arg in args.skip for s in arg.split(",")}
    engines = [e for e in engines if e not in skip]
    for e in engines:
        if e not in ("pyarrow", "duckdb", "spark"):
            ap.error(f"unknown engine {e!r}")
    # pyarrow reads the files for every engine's type guides.
    needed = {"pyarrow": "pyarrow", "duckdb": "duckdb", "spark": "pyspark"}
    missing = []
    for e in engines + ["pyarrow"]:
        try:
            __import__(needed[e])
        except ImportError as ex:
            missing.append(f"{e} ({needed[e]}: {ex})")
    if missing:
        print("error: engine modules missing: " + "; ".join(sorted(set(missing))) +
              " (install them or pass --skip ENGINE)", file=sys.stderr)
        return 2

    timings = []
    t0 = time.time()
    dir_ = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="df-variant-interop-")
    os.makedirs(dir_, exist_ok=True)
    try:
        with timed(timings, "build example"):
            exe = build(args)
        with timed(timings, "write our files (interop write)"):
            if subprocess.run([exe, "write", dir_]).returncode != 0:
                raise SetupError(f"`{exe} write {dir_}` failed (see above)")
        answers = json.load(open(os.path.join(dir_, "answers.json")))
        res = Results(args.show)
        guides = {}
        # The decoder itself, on apache/parquet-testing's shredded cases (if present).
        testing = os.path.join(REPO, "testdata", "parquet-testing", "shredded_variant")
        if os.path.isdir(testing):
            with timed(timings, "decoder self-test"):
                n, failures = vd._selftest(testing)
            res.add("self-test", "decoder", "parquet-testing shredded_variant", n,
                    [(None, None, None, f) for f in failures])
        # The decoder's values guide every comparison of our files.
        with timed(timings, "pyarrow + decoder"):
            step_pyarrow(res, dir_, answers, guides)
        if "pyarrow" not in engines:
            res.rows = [r for r in res.rows if r[0] != "ours->pyarrow"]
            res.mismatches = {k: v for k, v in res.mismatches.items() if k[0] != "ours->pyarrow"}
            res.failed = bool(res.mismatches)
        if "duckdb" in engines:
            step_duckdb(res, dir_, answers, guides, exe, timings)
        if "spark" in engines:
            step_spark(res, dir_, answers, guides, timings)
        res.print()
        print("\nTimings:")
        for name, secs in timings:
            print(f"  {name:<34} {secs:6.1f} s")
        print(f"  {'total':<34} {time.time() - t0:6.1f} s")
        print(f"\nfiles in {dir_}" + ("" if args.keep else " (removed; --keep DIR keeps them)"))
        print("RESULT:", "FAIL" if res.failed else "OK")
        return 1 if res.failed else 0
    except SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        if not args.keep:
            shutil.rmtree(dir_, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
