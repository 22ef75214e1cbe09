#!/usr/bin/env python3
"""(Re)creates sqllogictests/data/delta/deltalake_dv/, a Delta table with deletion
vectors, and its description sqllogictests/data/delta/deltalake_dv.md.

    python3 interop/delta_dv_fixture.py      # ~2 s; needs deltalake 1.6.6 and pyarrow

No producer available here writes deletion vectors (Python deltalake 1.6.6 rewrites
files on DELETE; pysail 0.7 has no DELETE; Spark needs the Delta jars, not available
offline). So the table is made by Python `deltalake` and its deletion vectors are then
added by hand, by this script, following the Delta protocol (PROTOCOL.md, "Deletion
Vectors"):

* version 0: `DeltaTable.create` (id long, part string, v variant; partitioned by part;
  configuration delta.enableDeletionVectors=true, which makes deltalake write protocol
  (3, 7) with deletionVectors in both feature lists);
* version 1: `write_deltalake` appends ids 1-10 (part a) and 11-20 (part b), one file each;
* version 2, by hand (commitInfo operation DELETE): each file is removed and added again
  with a `deletionVector` descriptor and `tightBounds: false` in its stats:
  - part a: an *inline* vector (storageType "i"): the RoaringBitmapArray (magic 1681511377
    little-endian, then the 64-bit portable format: bitmap count u64 LE, then per bitmap its
    high 32 bits u32 LE and a 32-bit portable RoaringBitmap) z85-encoded, deleting the rows of
    ids 2 and 5;
  - part b: a vector in a file (storageType "u": a random prefix "dv" and the z85 of a UUID,
    so the file is dv/deletion_vector_<uuid>.bin): format version byte 1, then at offset 1
    the size (u32 big-endian), the same RoaringBitmapArray, and its CRC-32 (big-endian),
    deleting the rows of ids 11, 15 and 20;
* version 3: `write_deltalake` appends ids 21-22 (part a): a file without a vector.

The expected rows are checked by second readers: Python deltalake's
`DeltaTable.deletion_vectors()` (its own decoding of the vectors) applied to the files read
with pyarrow, and deltalake's `QueryBuilder` scan; both must keep exactly the ids this script
did not delete.
"""

import base64
import json
import os
import shutil
import struct
import sys
import time
import uuid
import zlib

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(REPO, "sqllogictests", "data", "delta")
NAME = "deltalake_dv"

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from deltalake import DeltaTable, QueryBuilder, write_deltalake  # noqa: E402
from deltalake.schema import Field, PrimitiveType, Schema, VariantType  # noqa: E402

Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def z85(data):
    assert len(data) % 4 == 0
    out = []
    for i in range(0, len(data), 4):
        n = struct.unpack(">I", data[i:i + 4])[0]
        chars = []
        for _ in range(5):
            n, r = divmod(n, 85)
            chars.append(Z85[r])
        out.extend(reversed(chars))
    return "".join(out)


def roaring32(values):
    """The portable RoaringBitmap format, array containers only (no run containers)."""
    containers = {}
    for v in sorted(set(values)):
        containers.setdefault(v >> 16, []).append(v & 0xFFFF)
    assert all(len(c) <= 4096 for c in containers.values())
    out = struct.pack("<II", 12346, len(containers))  # SERIAL_COOKIE_NO_RUNCONTAINER
    for key, c in sorted(containers.items()):
        out += struct.pack("<HH", key, len(c) - 1)
    offset = len(out) + 4 * len(containers)
    for _, c in sorted(containers.items()):
        out += struct.pack("<I", offset)
        offset += 2 * len(c)
    for _, c in sorted(containers.items()):
        out += b"".join(struct.pack("<H", x) for x in c)
    return out


def roaring_bitmap_array(rows):
    """Delta's RoaringBitmapArray: the magic number, then a 64-bit portable treemap."""
    highs = {}
    for r in rows:
        highs.setdefault(r >> 32, []).append(r & 0xFFFFFFFF)
    out = struct.pack("<I", 1681511377) + struct.pack("<Q", len(highs))
    for high, lows in sorted(highs.items()):
        out += struct.pack("<I", high) + roaring32(lows)
    return out


def variant(i):
    """{"a": i, "tag": "t<i % 3>"} as Variant metadata and value (int8 a, short string)."""
    keys = [b"a", b"tag"]
    metadata = bytes([0x11, 2, 0, 1, 4]) + b"".join(keys)  # sorted dictionary, 1-byte offsets
    tag = f"t{i % 3}".encode()
    a = bytes([0x0C, i])  # int8
    s = bytes([(len(tag) << 2) | 1]) + tag  # short string
    # object: header (1-byte ids and offsets), 2 fields, ids 0 1, offsets 0 2 2+len(s)
    value = bytes([0x02, 2, 0, 1, 0, len(a), len(a) + len(s)]) + a + s
    return metadata, value


def append(path, ids, part):
    vtype = pa.struct([pa.field("metadata", pa.binary(), False), pa.field("value", pa.binary(), False)])
    encoded = [variant(i) for i in ids]
    v = pa.StructArray.from_arrays([pa.array([m for m, _ in encoded], pa.binary()),
                                    pa.array([x for _, x in encoded], pa.binary())], fields=list(vtype))
    t = pa.table({"id": pa.array(ids, pa.int64()), "part": pa.array([part] * len(ids)), "v": v})
    write_deltalake(path, t, mode="append", partition_by=["part"])


def main():
    path = os.path.join(OUT, NAME)
    shutil.rmtree(path, ignore_errors=True)
    schema = Schema([Field("id", PrimitiveType("long")), Field("part", PrimitiveType("string")),
                     Field("v", VariantType())])
    DeltaTable.create(path, schema, partition_by=["part"],
                      configuration={"delta.enableDeletionVectors": "true"})
    append(path, list(range(1, 11)), "a")
    append(path, list(range(11, 21)), "b")
    # deltalake writes one commit per append: versions 1 and 2. Our DELETE is version 3.
    dt = DeltaTable(path)
    version = dt.version() + 1
    adds = [json.loads(line)["add"]
            for v in range(version)
            for line in open(os.path.join(path, "_delta_log", f"{v:020}.json"))
            if "add" in json.loads(line)]
    delete = {"a": [2, 5], "b": [11, 15, 20]}
    now = int(time.time() * 1000)
    actions = [{"commitInfo": {"timestamp": now, "operation": "DELETE",
                               "operationParameters": {"predicate": "id IN (2, 5, 11, 15, 20)"},
                               "engineInfo": "df-variant interop/delta_dv_fixture.py (hand-built)"}}]
    for add in adds:
        part = add["partitionValues"]["part"]
        ids = pq.read_table(os.path.join(path, add["path"]), columns=["id"]).column("id").to_pylist()
        rows = [i for i, x in enumerate(ids) if x in delete[part]]
        bitmap = roaring_bitmap_array(rows)
        if part == "a":
            dv = {"storageType": "i", "pathOrInlineDv": z85(bitmap),
                  "sizeInBytes": len(bitmap), "cardinality": len(rows)}
        else:
            u = uuid.UUID("5d0b1f3e-6a7c-4b8e-9f10-2a3b4c5d6e7f")
            os.makedirs(os.path.join(path, "dv"), exist_ok=True)
            body = struct.pack(">I", len(bitmap)) + bitmap + struct.pack(">I", zlib.crc32(bitmap))
            with open(os.path.join(path, "dv", f"deletion_vector_{u}.bin"), "wb") as f:
                f.write(b"\x01" + body)
            dv = {"storageType": "u", "pathOrInlineDv": "dv" + z85(u.bytes), "offset": 1,
                  "sizeInBytes": len(bitmap), "cardinality": len(rows)}
        actions.append({"remove": {"path": add["path"], "deletionTimestamp": now, "dataChange": True,
                                   "extendedFileMetadata": True,
                                   "partitionValues": add["partitionValues"], "size": add["size"]}})
        stats = json.loads(add["stats"]) if add.get("stats") else {}
        stats["tightBounds"] = False
        new = dict(add, dataChange=True, deletionVector=dv, stats=json.dumps(stats),
                   modificationTime=now)
        actions.append({"add": new})
    with open(os.path.join(path, "_delta_log", f"{version:020}.json"), "x") as f:
        f.write("".join(json.dumps(a) + "\n" for a in actions))
    append(path, [21, 22], "a")

    # The second reader: deltalake's decoding of the vectors, applied to the files.
    dt = DeltaTable(path)
    masks = {}
    for batch in dt.deletion_vectors():
        for p, sel in zip(batch.column("filepath").to_pylist(), batch.column("selection_vector").to_pylist()):
            masks[os.path.basename(p)] = sel
    rows = []
    for uri in dt.file_uris():
        t = pq.read_table(uri, columns=["id"])
        ids = t.column("id").to_pylist()
        keep = masks.get(os.path.basename(uri), [True] * len(ids))
        keep = keep + [True] * (len(ids) - len(keep))  # a selection vector may stop early
        rows.extend(x for x, k in zip(ids, keep) if k)
    rows.sort()
    want = [i for i in range(1, 23) if i not in (2, 5, 11, 15, 20)]
    assert rows == want, (rows, want)
    # And deltalake's QueryBuilder (delta-rs's DataFusion scan) applies them itself.
    scanned = pa.table(QueryBuilder().register("t", dt).execute("SELECT id FROM t ORDER BY id")
                       .read_all()).column("id").to_pylist()
    assert scanned == want, (scanned, want)
    assert len(masks) == 2, masks
    protocol = dt.protocol()
    doc = f"""# deltalake_dv: a Delta table with deletion vectors

Made by `python3 interop/delta_dv_fixture.py` (do not edit by hand; rerun it; its docstring
says step by step how). Python `deltalake` 1.6.6 made versions 0, 1, 2 and 4; version 3, a
DELETE of ids 2, 5, 11, 15 and 20, was written by hand following the Delta protocol, since no
producer available here writes deletion vectors: part a's file got an inline vector
(`storageType` "i"), part b's a vector in `dv/deletion_vector_<uuid>.bin` (`storageType` "u",
offset 1, with its CRC).

- Protocol ({protocol.min_reader_version}, {protocol.min_writer_version}), readerFeatures
  {sorted(protocol.reader_features or [])}, writerFeatures {sorted(protocol.writer_features or [])};
  configuration {{delta.enableDeletionVectors: true}}.
- Columns: id long, part string (partition), v variant (unshredded; `{{"a": id, "tag": "t<id % 3>"}}`).
- Live rows: ids {want} ({len(want)} rows).
- Cross-checked twice: Python deltalake's `DeltaTable.deletion_vectors()` decodes both
  vectors, and its selection vectors applied to the files (read with pyarrow) give exactly
  those ids; and deltalake's `QueryBuilder` (delta-rs's DataFusion scan) returns exactly those
  ids. (Its pyarrow path, `to_pyarrow_table`, refuses the table: "reader features
  {{'deletionVectors'}} not yet supported".)
"""
    with open(os.path.join(OUT, NAME + ".md"), "w") as f:
        f.write(doc)
    print(doc)


if __name__ == "__main__":
    main()
