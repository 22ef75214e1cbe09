#!/usr/bin/env python3
"""(Re)creates small Delta Lake fixture tables with Variant columns, made by real
third-party producers, under sqllogictests/data/delta/, and writes
sqllogictests/data/delta/README.md (how each was made, protocol/stats facts, and the
expected rows as `id<TAB>to_json`, cross-checked between readers).

    python3 interop/delta_fixtures.py            # ~3 s; re-execs into ~/.cache/df-variant/venv-delta
    python3 interop/delta_fixtures.py --spark    # + Spark 4.3 reads the data files (~25 s, a JVM)

Environment: ~/.cache/df-variant/venv-delta (python 3.11.7 venv with --system-site-packages) holds
pyspark-client 4.2.0, pandas 2.3.3, numpy 2.4.6, grpcio/grpcio-status 1.85.3,
googleapis-common-protos 1.76.0, zstandard 0.25.0; deltalake 1.6.6, pysail 0.7.2 and
pyarrow 26.0.1 are global. pysail 0.7.2 refuses the global pyspark 4.3.0 connect client
("unsupported PySpark version: 4.3.0"), hence the venv (the global pyspark 4.3.0 stays
as it is; `--spark` runs it in a child process with the base interpreter). Each table
directory is deleted and recreated; the rows are deterministic (file names, table ids
and timestamps in the logs are not).

Tables (facts as of the last run; README.md has the full details):

* deltalake_unshredded/ -- Python `deltalake` 1.6.6 (delta-rs; engineInfo
  `delta-rs:py-1.6.6`, Parquet created_by `delta-rs version py-1.6.6`):
  `DeltaTable.create` with schema {id long, part string, v variant} partitioned by
  `part` (version 0), then two `write_deltalake(mode="append", partition_by=["part"])`
  of a pyarrow table whose `v` is struct<metadata binary not null, value binary not
  null> holding Variant bytes hand-encoded by `encode_variant` in interop/delta_fixtures.py (version 1: ids
  1-5, version 2: ids 6-11; int8/16/32/64, double, decimal4 (12.50, scale 2), bool,
  null, short and long (>63 bytes) strings, objects (sorted keys, nested), arrays,
  top-level array/string; ids 3 and 8 SQL NULL, id 5 a Variant null; every value
  checked with interop/variant_decode.py). Protocol (3,7) readerFeatures
  [variantType], writerFeatures [variantType]; configuration {}; 4 files (2 appends x
  2 partitions, add paths `part=a/...`); Parquet `v { required binary metadata;
  required binary value; }` (metadata first), no VARIANT annotation; stats: numRecords
  and min/max/nullCount of `id` only, nothing for `v`.
* deltalake_checkpoint/ -- deltalake_unshredded copied, then Python `deltalake` 1.6.6
  `DeltaTable.create_checkpoint()` (a classic Parquet checkpoint at version 2 plus
  `_last_checkpoint`), JSON commits 0-1 deleted as log cleanup would, and version 3 (id 12,
  part a) appended with `write_deltalake`: reading it needs the checkpoint.
* pysail_shredded/ -- pysail 0.7.2 (engineInfo `sail-delta-lake:0.7.2`, Parquet
  `parquet-rs version 59.2.0`) via pyspark-client 4.2.0: `CREATE TABLE t (id BIGINT, v
  VARIANT) USING delta LOCATION ... TBLPROPERTIES('delta.enableVariantShredding'=
  'true')`, then three `INSERT INTO t SELECT id, parse_json(j) FROM VALUES ...`
  (versions 1-3, one file each, ids 1-15; v:a in 1..5, 11..15, 21..25, v:b "s<a>",
  v:c {"d": 10*a}). Protocol (3,7) readerFeatures [variantType,
  variantShredding-preview], writerFeatures [variantType, variantShredding-preview,
  appendOnly, invariants]; configuration {delta.enableVariantShredding: true};
  Parquet `v { required metadata; optional value; optional typed_value { required a
  {value, typed_value int64}, required b {value, typed_value string}, required c
  {value, typed_value {required d {value, typed_value int64}}} } }`, no annotation;
  stats: nullCount.v = 0 (a long) and minValues.v / maxValues.v z85 strings, decoded:
  dictionary ["$['a']", "$['b']", "$['c']['d']"], primitive bounds per path (the
  z85 input is zero-padded to a multiple of 4 bytes: 1 trailing 0x00 in one file).
* pysail_unshredded/ -- pysail 0.7.2 the same way without TBLPROPERTIES, two INSERTs
  (versions 1-2, 2 files, ids 1-10). Protocol (3,7) [variantType] / [variantType,
  appendOnly, invariants]; configuration {}; Parquet `v { required binary metadata;
  required binary value; }`; stats: nullCount.v (long) only. Sail's parse_json makes
  every non-integer number a double ('12.50' -> double 12.5, unlike Spark's decimal).
* pysail_nested/ -- pysail 0.7.2, `(id BIGINT, s STRUCT<x: VARIANT>, arr
  ARRAY<VARIANT>, m MAP<STRING, VARIANT>)`, two INSERTs of a 2-branch UNION ALL each
  (4 files, ids 1-4). pysail accepts it, but: (a) only `s.x` is `variant` in
  schemaString; the array element and the map value are recorded as struct<value
  binary not null, metadata binary not null (field metadata {"variant": true})>, so
  for any other Delta reader they are plain structs (Parquet: value before metadata);
  (b) stats treat `s.x` as a struct (nullCount.s.x = {metadata, value}, minValues.s.x
  = {}) instead of one LONG nullCount; (c) pysail cannot read it back: a scan of `s`
  panics ("Found unmasked nulls for non-nullable StructArray field "metadata""), even
  for one non-null row. Protocol (3,7) [variantType] / [variantType, appendOnly,
  invariants]. Python deltalake, the raw reader and Spark 4.3 (on the files) read it.

pysail quirks seen while reading: on the delta-rs table `v` shows as VariantType but
`to_json(v)` prints the struct ({"metadata":"<base64>","value":...}) and
`variant_get` fails ("field does not have extension type VariantType"): Sail seems to
rely on the Arrow extension type stored in its own files. Its `to_json` of the double
1.5E300 prints 1500000...0 (301 digits); Spark prints 1.5E300. It also writes
`_delta_log/N.crc` files.

Not reproducible here: Spark/Delta-written tables (no Delta jars offline).
"""

import decimal
import json
import os
import shutil
import struct
import sys
import time

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
OUT = os.path.join(REPO, "sqllogictests", "data", "delta")
VENV = os.path.expanduser("~/.cache/df-variant/venv-delta")


def _reexec():
    py = os.environ.get("DELTA_PYTHON", os.path.join(VENV, "bin", "python"))
    if os.path.realpath(sys.prefix) != os.path.realpath(os.path.dirname(os.path.dirname(py))) \
            and not os.environ.get("DELTA_FIXTURES_REEXEC") and os.path.exists(py) \
            and "--spark-worker" not in sys.argv:
        os.environ["DELTA_FIXTURES_REEXEC"] = "1"
        os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


_reexec()

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import delta_read as dr  # noqa: E402
import variant_decode as vd  # noqa: E402


# ---------------------------------------------------------------------------
# A small Variant encoder (spec: parquet-format VariantEncoding.md)
# ---------------------------------------------------------------------------

def _width(n):
    return 1 if n <= 0xFF else 2 if n <= 0xFFFF else 3 if n <= 0xFFFFFF else 4


def _keys(v, acc):
    if isinstance(v, dict):
        for k, e in v.items():
            acc.add(k)
            _keys(e, acc)
    elif isinstance(v, list):
        for e in v:
            _keys(e, acc)
    return acc


def _metadata(keys):
    if not keys:
        return b"\x01\x00\x00"  # version 1, empty dictionary (what Spark/Sail write)
    enc = [k.encode() for k in keys]
    total = sum(map(len, enc))
    w = _width(max(total, len(enc)))
    out = bytearray([0x01 | 0x10 | ((w - 1) << 6)])  # version 1, sorted_strings
    out += len(enc).to_bytes(w, "little")
    off = 0
    out += off.to_bytes(w, "little")
    for e in enc:
        off += len(e)
        out += off.to_bytes(w, "little")
    for e in enc:
        out += e
    return bytes(out)


def _value(v, ids):
    if v is None:
        return b"\x00"
    if v is True:
        return bytes([1 << 2])
    if v is False:
        return bytes([2 << 2])
    if isinstance(v, int):
        for tid, w in ((3, 1), (4, 2), (5, 4), (6, 8)):
            if -(1 << (8 * w - 1)) <= v < (1 << (8 * w - 1)):
                return bytes([tid << 2]) + v.to_bytes(w, "little", signed=True)
        raise ValueError(f"int {v} too large")
    if isinstance(v, float):
        return bytes([7 << 2]) + struct.pack("<d", v)
    if isinstance(v, decimal.Decimal):
        sign, digits, exp = v.as_tuple()
        unscaled = int("".join(map(str, digits))) * (-1 if sign else 1)
        scale = -exp
        for tid, w, prec in ((8, 4, 9), (9, 8, 18), (10, 16, 38)):
            if len(digits) <= prec:
                return bytes([tid << 2, scale]) + unscaled.to_bytes(w, "little", signed=True)
        raise ValueError(f"decimal {v} too wide")
    if isinstance(v, str):
        b = v.encode()
        if len(b) <= 63:
            return bytes([(len(b) << 2) | 1]) + b
        return bytes([16 << 2]) + len(b).to_bytes(4, "little") + b
    if isinstance(v, dict):
        items = sorted(v.items(), key=lambda kv: kv[0].encode())
        vals = [_value(e, ids) for _, e in items]
        n = len(items)
        large = n > 255
        id_w = _width(max([ids[k] for k, _ in items], default=0))
        data = b"".join(vals)
        off_w = _width(len(data))
        out = bytearray([(((int(large) << 4) | ((id_w - 1) << 2) | (off_w - 1)) << 2) | 2])
        out += n.to_bytes(4 if large else 1, "little")
        for k, _ in items:
            out += ids[k].to_bytes(id_w, "little")
        off = 0
        for x in vals:
            out += off.to_bytes(off_w, "little")
            off += len(x)
        out += off.to_bytes(off_w, "little")
        return bytes(out + data)
    if isinstance(v, list):
        vals = [_value(e, ids) for e in v]
        n = len(v)
        large = n > 255
        data = b"".join(vals)
        off_w = _width(len(data))
        out = bytearray([((((int(large) << 2) | (off_w - 1))) << 2) | 3])
        out += n.to_bytes(4 if large else 1, "little")
        off = 0
        for x in vals:
            out += off.to_bytes(off_w, "little")
            off += len(x)
        out += off.to_bytes(off_w, "little")
        return bytes(out + data)
    raise TypeError(f"cannot encode {type(v).__name__}")


def encode_variant(v):
    """(metadata, value) bytes of a Python value; checked with the independent decoder."""
    keys = sorted(_keys(v, set()), key=str.encode)
    meta = _metadata(keys)
    val = _value(v, {k: i for i, k in enumerate(keys)})
    back = vd.decode(meta, val)
    if back != v or type(back) is not type(v):
        raise AssertionError(f"encoder round trip: {v!r} -> {back!r}")
    return meta, val


# ---------------------------------------------------------------------------
# Table contents
# ---------------------------------------------------------------------------

D = decimal.Decimal
SQL_NULL = object()
LONG = "a long string of more than sixty-three bytes: abcdefghijklmnopqrstuvwxyz 0123456789"

# deltalake_unshredded: (id, part, v) per append
DL_APPENDS = [
    [
        (1, "a", {"a": 1, "b": "x1", "c": {"d": 10}}),                                  # int8
        (2, "b", {"a": 300, "b": LONG, "c": {"d": -20}}),                                # int16, long string
        (3, "a", SQL_NULL),
        (4, "b", {"a": 70000, "b": "x4", "c": {"d": 40}, "e": [1, "two", None, True, 2.5]}),  # int32, array
        (5, "a", None),                                                                  # Variant null
    ],
    [
        (6, "b", {"a": 1099511627776, "b": "x6", "c": {"d": 60, "e": {"f": False}}}),    # int64, deeper object
        (7, "a", {"a": "seven", "b": "x7"}),                                             # v:a a string, no c
        (8, "b", SQL_NULL),
        (9, "a", [1, {"a": 9}, "nine"]),                                                 # top-level array
        (10, "b", {"a": -10, "b": "x10", "c": {"d": 100}, "g": D("12.50"), "h": -2.25}),  # decimal4, double
        (11, "a", "a top-level string"),
    ],
]

# pysail tables: INSERT statements as (id, JSON text or None) lists
SH_INSERTS = [
    [(i, json.dumps({"a": a, "b": f"s{a}", "c": {"d": a * 10}}, separators=(",", ":")))
     for i, a in zip(range(base_id, base_id + 5), range(lo, lo + 5))]
    for base_id, lo in ((1, 1), (6, 11), (11, 21))
]
UN_INSERTS = [
    [
        (1, '{"a":1,"b":"u1","c":{"d":10}}'),
        (2, '{"c":{"d":20},"b":"u2","a":70000,"e":[1,2.5,"x",null,true]}'),  # keys unsorted in the text
        (3, None),                                                            # SQL NULL
        (4, "null"),                                                          # Variant null
    ],
    [
        (5, '{"a":1099511627776,"b":"' + LONG + '","c":{"d":50}}'),
        (6, "12.50"),
        (7, '[{"z":1,"a":2},-3]'),
        (8, '"just a string"'),
        (9, "1.5e300"),
        (10, '{"a":-5,"b":"u10","c":{"d":-50,"e":{"f":false}}}'),
    ],
]
NESTED_INSERTS = [
    """INSERT INTO {t}
       SELECT 1, named_struct('x', parse_json('{{"a":1,"b":"n1"}}')),
              array(parse_json('1'), parse_json('"two"'), parse_json('{{"c":3}}')),
              map('k1', parse_json('{{"d":4}}'), 'k2', parse_json('null'))
       UNION ALL
       SELECT 2, CAST(NULL AS STRUCT<x: VARIANT>), CAST(NULL AS ARRAY<VARIANT>),
              CAST(NULL AS MAP<STRING, VARIANT>)""",
    """INSERT INTO {t}
       SELECT 3, named_struct('x', CAST(NULL AS VARIANT)),
              array(parse_json('[5,6]'), CAST(NULL AS VARIANT)),
              map('k3', CAST(NULL AS VARIANT))
       UNION ALL
       SELECT 4, named_struct('x', parse_json('12.5')), CAST(array() AS ARRAY<VARIANT>),
              CAST(map() AS MAP<STRING, VARIANT>)""",
]


def _fresh(name):
    p = os.path.join(OUT, name)
    shutil.rmtree(p, ignore_errors=True)
    return p


def build_deltalake_unshredded():
    from deltalake import DeltaTable, write_deltalake
    from deltalake.schema import Field, PrimitiveType, Schema, VariantType

    path = _fresh("deltalake_unshredded")
    schema = Schema([Field("id", PrimitiveType("long")), Field("part", PrimitiveType("string")),
                     Field("v", VariantType())])
    DeltaTable.create(path, schema, partition_by=["part"])
    vtype = pa.struct([pa.field("metadata", pa.binary(), False), pa.field("value", pa.binary(), False)])
    for rows in DL_APPENDS:
        metas, vals, mask = [], [], []
        for _, _, v in rows:
            if v is SQL_NULL:
                metas.append(b"\x01\x00\x00")
                vals.append(b"\x00")
                mask.append(True)
            else:
                m, x = encode_variant(v)
                metas.append(m)
                vals.append(x)
                mask.append(False)
        v_arr = pa.StructArray.from_arrays([pa.array(metas, pa.binary()), pa.array(vals, pa.binary())],
                                           fields=list(vtype), mask=pa.array(mask))
        t = pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                      "part": pa.array([r[1] for r in rows], pa.string()), "v": v_arr})
        write_deltalake(path, t, mode="append", partition_by=["part"])


def build_deltalake_checkpoint():
    """deltalake_unshredded copied, checkpointed at version 2 by Python deltalake
    (`create_checkpoint()`), its JSON commits 0-1 removed (as log cleanup would), and a
    version 3 appended: a reader must start from the Parquet checkpoint."""
    from deltalake import DeltaTable, write_deltalake

    src = os.path.join(OUT, "deltalake_unshredded")
    path = _fresh("deltalake_checkpoint")
    shutil.copytree(src, path)
    DeltaTable(path).create_checkpoint()
    for v in range(2):
        os.remove(os.path.join(path, "_delta_log", f"{v:020}.json"))
    m, x = encode_variant({"a": 12, "b": "after the checkpoint"})
    vtype = pa.struct([pa.field("metadata", pa.binary(), False), pa.field("value", pa.binary(), False)])
    v_arr = pa.StructArray.from_arrays([pa.array([m], pa.binary()), pa.array([x], pa.binary())], fields=list(vtype))
    t = pa.table({"id": pa.array([12], pa.int64()), "part": pa.array(["a"], pa.string()), "v": v_arr})
    write_deltalake(path, t, mode="append", partition_by=["part"])


def _values_sql(rows):
    def lit(j):
        return "CAST(NULL AS STRING)" if j is None else "'" + j.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return ", ".join(f"({i}, {lit(j)})" for i, j in rows)


def build_pysail(spark):
    made = {}
    for name, props, inserts in (
        ("pysail_shredded", " TBLPROPERTIES('delta.enableVariantShredding'='true')", SH_INSERTS),
        ("pysail_unshredded", "", UN_INSERTS),
    ):
        path = _fresh(name)
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} (id BIGINT, v VARIANT) USING delta LOCATION '{path}'{props}")
        for rows in inserts:
            spark.sql(f"INSERT INTO {name} SELECT id, parse_json(j) FROM VALUES {_values_sql(rows)} AS t(id, j)")
        made[name] = None
    path = _fresh("pysail_nested")
    try:
        spark.sql("DROP TABLE IF EXISTS pysail_nested")
        spark.sql("CREATE TABLE pysail_nested (id BIGINT, s STRUCT<x: VARIANT>, arr ARRAY<VARIANT>, "
                  f"m MAP<STRING, VARIANT>) USING delta LOCATION '{path}'")
        for stmt in NESTED_INSERTS:
            spark.sql(stmt.format(t="pysail_nested"))
        made["pysail_nested"] = None
    except Exception as e:  # noqa: BLE001
        made["pysail_nested"] = f"pysail refused: {dr._short(e)}"
        shutil.rmtree(path, ignore_errors=True)
    return made


# ---------------------------------------------------------------------------
# Facts about a table
# ---------------------------------------------------------------------------

Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def z85_decode(s):
    if len(s) % 5:
        raise ValueError(f"z85 length {len(s)} is not a multiple of 5")
    out = bytearray()
    for i in range(0, len(s), 5):
        n = 0
        for c in s[i:i + 5]:
            n = n * 85 + Z85.index(c)
        out += n.to_bytes(4, "big")
    return bytes(out)


def decode_stats_variant(s):
    """z85 text -> (keys, decoded object, note about trailing padding and the types)."""
    raw = z85_decode(s)
    keys, mlen = vd.decode_metadata_prefix(raw)
    val, end = vd._value(keys, raw[mlen:], 0, 0)
    pad = raw[mlen + end:]
    note = f"{len(pad)} zero padding byte(s)" if pad and not any(pad) else (f"trailing {pad!r}" if pad else "")
    types = field_types(keys, raw[mlen:])
    return keys, val, ", ".join(x for x in (note, "types " + json.dumps(types)) if x)


PRIM = {0: "null", 1: "true", 2: "false", 3: "int8", 4: "int16", 5: "int32", 6: "int64", 7: "double",
        8: "decimal4", 9: "decimal8", 10: "decimal16", 11: "date", 12: "timestamp", 13: "timestamp_ntz",
        14: "float", 15: "binary", 16: "string", 17: "time", 18: "timestamp_nanos", 19: "timestamp_ntz_nanos",
        20: "uuid"}


def field_types(keys, buf):
    """{key: encoding type} of the top-level object in `buf` (for the stats report)."""
    h = buf[0]
    if h & 3 != 2:
        return {}
    header = h >> 2
    off_w, id_w, n_w = (header & 3) + 1, ((header >> 2) & 3) + 1, 4 if header & 0x10 else 1
    n = int.from_bytes(buf[1:1 + n_w], "little")
    p = 1 + n_w
    ids = [int.from_bytes(buf[p + i * id_w:p + (i + 1) * id_w], "little") for i in range(n)]
    p += n * id_w
    offs = [int.from_bytes(buf[p + i * off_w:p + (i + 1) * off_w], "little") for i in range(n + 1)]
    base = p + (n + 1) * off_w
    out = {}
    for fid, o in zip(ids, offs):
        fh = buf[base + o]
        out[keys[fid]] = "short string" if fh & 3 == 1 else PRIM.get(fh >> 2, "?") if fh & 3 == 0 else "nested"
    return out


def parquet_group(path, col):
    """The text of top-level group column `col` in pyarrow's Parquet schema printout."""
    out, depth = [], 0
    for line in str(pq.ParquetFile(path).schema).splitlines():
        tok = line.split()
        if not out:
            if line.startswith("  ") and not line.startswith("   ") and len(tok) > 3 \
                    and tok[1] == "group" and tok[3] == col:
                out.append(line[2:])
                depth = 1
            continue
        out.append(line[2:])
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            break
    return "\n".join(out)


def facts(name):
    path = os.path.join(OUT, name)
    st = dr.read_log(path)
    cols = dr.variant_columns(st["schema"])
    p = st["protocol"]
    lines = [f"### {name}", ""]
    lines.append(f"* versions 0..{st['version']}; live files: {len(st['adds'])}; "
                 f"total size {sum(a['size'] for a in st['adds'].values())} bytes; partitionColumns "
                 f"{st['metaData']['partitionColumns']}")
    lines.append(f"* protocol: `{json.dumps(p, separators=(',', ':'))}`")
    lines.append(f"* configuration: `{json.dumps(st['metaData']['configuration'], separators=(',', ':'))}`")
    lines.append(f"* schemaString: `{st['metaData']['schemaString']}`")
    first = sorted(st["adds"].values(), key=lambda a: a["modificationTime"])[0]
    f = os.path.join(path, first["path"])
    pf = pq.ParquetFile(f)
    lines.append(f"* Parquet writer: `{pf.metadata.created_by}`; schema of the variant column(s) "
                 f"(pyarrow `ParquetFile.schema`, file `{first['path']}`):")
    lines.append("")
    lines.append("```")
    for c in cols if name != "pysail_nested" else ["s", "arr", "m"]:
        lines.append(parquet_group(f, c))
    lines.append("```")
    stats = [json.loads(a["stats"]) if a.get("stats") else None for a in st["adds"].values()]
    has = {k: sum(1 for s in stats if s and any(c in s.get(k, {}) for c in cols)) for k in
           ("nullCount", "minValues", "maxValues")}
    lines.append(f"* stats of {len(stats)} add actions mentioning {cols}: "
                 + ", ".join(f"{k} {n}/{len(stats)}" for k, n in has.items()))
    lines.append(f"* one add action's stats (verbatim): `{first.get('stats')}`")
    if any(isinstance(s.get("minValues", {}).get("v"), str) for s in stats if s):
        lines.append("* z85-decoded variant bounds per file (metadata dictionary | min | max):")
        for a in sorted(st["adds"].values(), key=lambda a: a["modificationTime"]):
            s = json.loads(a["stats"])
            kmin, vmin, n1 = decode_stats_variant(s["minValues"]["v"])
            kmax, vmax, n2 = decode_stats_variant(s["maxValues"]["v"])
            lines.append(f"  * `{kmin}` | `{dr.spark_json(vmin)}` | `{dr.spark_json(vmax)}`"
                         f"{' (' + n1 + ')' if n1 else ''}; nullCount.v = {s['nullCount'].get('v')}")
    lines.append("")
    return lines


# ---------------------------------------------------------------------------
# Spark 4.3 cross-check (--spark): the global pyspark 4.3.0 in a child process
# reads each table's live Parquet files with an explicit VARIANT read schema (no
# Delta: Spark has no Delta jars here) and prints to_json of every column.
# ---------------------------------------------------------------------------

SPARK_SCHEMAS = {
    "pysail_nested": ("id BIGINT, s STRUCT<x: VARIANT>, arr ARRAY<VARIANT>, m MAP<STRING, VARIANT>",
                      ["s", "arr", "m"]),
}
DEFAULT_SPARK_SCHEMA = ("id BIGINT, v VARIANT", ["v"])


def spark_worker(spec_path, out_path):
    from pyspark.sql import SparkSession

    jobs = json.load(open(spec_path))
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    res = {"version": spark.version}
    for name, schema, cols, files in jobs:
        try:
            df = spark.read.schema(schema).parquet(*files)
            rows = df.selectExpr("id", *[f"to_json(`{c}`)" for c in cols]).orderBy("id").collect()
            res[name] = ["\t".join([str(r[0])] + ["NULL" if x is None else x for x in r[1:]]) for r in rows]
        except Exception as e:  # noqa: BLE001
            res[name] = "ERROR: " + " ".join(str(e).split())[:400]
    spark.stop()
    with open(out_path, "w") as f:
        json.dump(res, f)


def run_spark(tables):
    import subprocess
    import tempfile

    jobs = []
    for t in tables:
        path = os.path.join(OUT, t)
        schema, cols = SPARK_SCHEMAS.get(t, DEFAULT_SPARK_SCHEMA)
        files = [os.path.join(path, p) for p in sorted(dr.read_log(path)["adds"])]
        jobs.append((t, schema, cols, files))
    with tempfile.TemporaryDirectory() as d:
        spec, out, log = (os.path.join(d, n) for n in ("jobs.json", "out.json", "spark.log"))
        json.dump(jobs, open(spec, "w"))
        py = os.path.join(sys.base_prefix, "bin", "python3")
        # (the pysail session sets SPARK_REMOTE & co., which would make the child connect)
        env = {k: v for k, v in os.environ.items()
               if k not in ("VIRTUAL_ENV", "PYTHONPATH") and not k.startswith("SPARK_")}
        with open(log, "w") as lf:
            rc = subprocess.run(["nice", py, os.path.abspath(__file__), "--spark-worker", spec, out],
                                stdout=lf, stderr=subprocess.STDOUT, env=env).returncode
        if rc != 0 or not os.path.exists(out):
            return {"error": f"Spark worker failed (rc {rc}): " + open(log).read()[-1500:]}
        return json.load(open(out))


def compare(ref, got):
    if isinstance(got, Exception):
        return f"**fails**: {str(got)[:300]}"
    if isinstance(got, str):
        return f"**fails**: {got[:300]}"
    if isinstance(ref, Exception):
        return f"read {len(got)} rows"
    if got == ref:
        return "same rows"
    bad = [(r, g) for r, g in zip(ref, got) if r != g]
    msg = f"DIFFERENT: {len(bad)} of {len(ref)} rows differ" if len(ref) == len(got) else \
        f"DIFFERENT: {len(got)} rows instead of {len(ref)}"
    if bad:
        r, g = bad[0]
        msg += f"; e.g. `{g[:160]}{'...' if len(g) > 160 else ''}`"
    return msg


# ---------------------------------------------------------------------------

def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--spark-worker":
        return spark_worker(sys.argv[2], sys.argv[3])
    with_spark = "--spark" in sys.argv[1:]
    if any(a not in ("--spark",) for a in sys.argv[1:]):
        print(__doc__)
        return 2
    t0 = time.time()
    os.makedirs(OUT, exist_ok=True)
    build_deltalake_unshredded()
    build_deltalake_checkpoint()
    with dr.SailSession() as spark:
        notes = build_pysail(spark)
        t_built = time.time()
        tables = ["deltalake_unshredded", "pysail_shredded", "pysail_unshredded", "pysail_nested"]
        tables = [t for t in tables if os.path.isdir(os.path.join(OUT, t))]
        report = {}
        for t in tables:
            path = os.path.join(OUT, t)
            cols = ["s", "arr", "m"] if t == "pysail_nested" else None
            res = {}
            for engine in ("raw", "deltalake", "pysail"):
                try:
                    if engine == "pysail":
                        c = cols or dr.variant_columns(dr.read_log(path)["schema"])
                        res[engine] = dr.sail_rows(spark, path, None, c)
                    else:
                        res[engine] = dr.read_table(engine, path, None, cols)
                except dr.ReadError as e:
                    res[engine] = e
            report[t] = res
        tt = {}
        for engine in ("raw", "deltalake", "pysail"):
            try:
                path = os.path.join(OUT, "deltalake_unshredded")
                tt[engine] = (dr.sail_rows(spark, path, 1, ["v"]) if engine == "pysail"
                              else dr.read_table(engine, path, 1))
            except dr.ReadError as e:
                tt[engine] = e
    t_sail = time.time()
    spark_res = run_spark(tables) if with_spark else None
    t_end = time.time()

    md = ["# Delta Lake fixtures with Variant columns", "",
          "Made by `interop/delta_fixtures.py` (do not edit by hand; rerun it). Third-party producers,",
          "not the Delta reference implementation (no Delta jars offline). Rows are printed as",
          "`id<TAB>to_json` (Spark-style: keys sorted, no spaces; `NULL` = SQL NULL) by",
          "`interop/delta_read.py`; `--engine raw` (log replay + pyarrow + interop/variant_decode.py)",
          "is the reference, the other engines are compared with it below.", "",
          "## How they were made", "",
          __doc__.split("Tables (facts as of the last run; README.md has the full details):")[1]
          .split("Not reproducible here")[0].strip(), "",
          "## Facts per table", ""]
    for t in tables:
        md += facts(t)
    for t, n in notes.items():
        if n:
            md += [f"* {t}: {n}", ""]
    md += ["## Rows (latest version, sorted by id)", ""]
    if spark_res is None:
        md += ["(Spark cross-check not run this time: `delta_fixtures.py --spark`.)", ""]
    elif "error" in spark_res:
        md += [f"Spark cross-check failed: {spark_res['error']}", ""]
    for t in tables:
        res = report[t]
        ref = res["raw"]
        md.append(f"### {t}" + (" (columns s, arr, m)" if t == "pysail_nested" else ""))
        md.append("")
        md.append("```")
        md += ref if not isinstance(ref, Exception) else [f"raw reader failed: {ref}"]
        md.append("```")
        for engine in ("deltalake", "pysail"):
            md.append(f"* {engine}: {compare(ref, res[engine])}")
        if spark_res and "error" not in spark_res:
            if t == "pysail_nested":
                md.append("* Spark: see below (it reads arr/m as variants, as asked by its read schema)")
            else:
                md.append(f"* Spark {spark_res['version']} on the Parquet files (read schema "
                          f"`{SPARK_SCHEMAS.get(t, DEFAULT_SPARK_SCHEMA)[0]}`): "
                          f"{compare(ref, spark_res.get(t, 'no result'))}")
        md.append("")
    md += ["### deltalake_unshredded, time travel to version 1", "", "```"]
    md += tt["raw"] if not isinstance(tt["raw"], Exception) else [str(tt["raw"])]
    md.append("```")
    md += [f"* {e}: {compare(tt['raw'], tt[e])}" for e in ("deltalake", "pysail")]
    if "pysail_nested" in tables:
        path = os.path.join(OUT, "pysail_nested")
        ref = dr.read_table("raw", path, None, ["s", "arr", "m"], marker=True)
        md += ["", "### pysail_nested, with `--sail-marker` (arr/m decoded as variants)", "", "```"] + ref + ["```"]
        try:
            got = dr.read_table("deltalake", path, None, ["s", "arr", "m"], marker=True)
        except dr.ReadError as e:
            got = e
        md.append(f"* deltalake (+ marker): {compare(ref, got)}")
        if spark_res and "error" not in spark_res:
            md.append(f"* Spark {spark_res['version']} on the Parquet files: "
                      f"{compare(ref, spark_res.get('pysail_nested'))}")
    md += ["", f"Run time: {t_end - t0:.1f} s (tables {t_built - t0:.1f} s, reads {t_sail - t_built:.1f} s"
           + (f", Spark {t_end - t_sail:.1f} s" if with_spark else "") + ").", ""]
    with open(os.path.join(OUT, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    sys.exit(main())
