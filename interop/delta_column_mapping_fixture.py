#!/usr/bin/env python3
"""(Re)creates sqllogictests/data/delta/hand_column_mapping/, a Delta table with column
mapping (mode "name"), and its description sqllogictests/data/delta/hand_column_mapping.md.

    python3 interop/delta_column_mapping_fixture.py    # ~1 s; needs deltalake 1.6.6, pyarrow

No producer available here writes column-mapped tables (Python deltalake 1.6.6 and pysail
0.7 do not; Spark needs the Delta jars, not available offline), so the table is built by
hand following the Delta protocol (PROTOCOL.md, "Column Mapping"):

* protocol (3, 7) with columnMapping and variantType in both feature lists; configuration
  delta.columnMapping.mode = name, delta.columnMapping.maxColumnId = 3;
* schemaString: `id` long, `payload` variant, `part` string (the partition column), each with
  `delta.columnMapping.id` and `delta.columnMapping.physicalName` (col-<uuid> names: the
  columns were "renamed" from whatever they were first called, as after ALTER TABLE RENAME);
* two data files written by pyarrow (one per partition) whose columns carry the physical
  names and the Parquet field ids; `partitionValues` and the statistics (numRecords,
  minValues / maxValues / nullCount of `id`) are keyed by physical names, as the protocol
  requires.

Cross-checked by a second reader: Python deltalake's `QueryBuilder` (delta-rs's DataFusion
scan, which implements column mapping; its pyarrow path refuses the feature) reads the table
and must give the same rows as this script wrote.
"""

import json
import os
import shutil
import sys
import time
import uuid

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO = os.path.dirname(HERE)
OUT = os.path.join(REPO, "sqllogictests", "data", "delta")
NAME = "hand_column_mapping"

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from deltalake import DeltaTable, QueryBuilder  # noqa: E402

from delta_dv_fixture import variant  # noqa: E402

PHYS = {"id": "col-8c1e0a9e-1b2c-4d3e-8f40-5a6b7c8d9e01",
        "payload": "col-2b7d4f1a-3c5e-4a6b-9c8d-0e1f2a3b4c5d",
        "part": "col-f0e1d2c3-b4a5-4968-8776-655443322110"}
IDS = {"id": 1, "payload": 2, "part": 3}


def field(name, typ):
    return {"name": name, "type": typ, "nullable": True,
            "metadata": {"delta.columnMapping.id": IDS[name],
                         "delta.columnMapping.physicalName": PHYS[name]}}


def main():
    path = os.path.join(OUT, NAME)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.join(path, "_delta_log"))
    schema = {"type": "struct", "fields": [field("id", "long"), field("payload", "variant"),
                                           field("part", "string")]}
    now = int(time.time() * 1000)
    actions = [
        {"commitInfo": {"timestamp": now, "operation": "CREATE TABLE",
                        "engineInfo": "df-variant interop/delta_column_mapping_fixture.py (hand-built)"}},
        {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                      "readerFeatures": ["columnMapping", "variantType"],
                      "writerFeatures": ["columnMapping", "variantType"]}},
        {"metaData": {"id": str(uuid.UUID("0b7e2c4a-9d1f-4e3b-8a6c-5d4e3f2a1b0c")),
                      "format": {"provider": "parquet", "options": {}},
                      "schemaString": json.dumps(schema), "partitionColumns": ["part"],
                      "configuration": {"delta.columnMapping.mode": "name",
                                        "delta.columnMapping.maxColumnId": "3"},
                      "createdTime": now}},
    ]
    vtype = pa.struct([pa.field("metadata", pa.binary(), False), pa.field("value", pa.binary(), False)])
    written = []
    for part, ids in [("a", [1, 2, 3, 4]), ("b", [5, 6, 7])]:
        encoded = [variant(i) for i in ids]
        v = pa.StructArray.from_arrays([pa.array([m for m, _ in encoded], pa.binary()),
                                        pa.array([x for _, x in encoded], pa.binary())],
                                       fields=list(vtype))
        fid = lambda n: {b"PARQUET:field_id": str(IDS[n]).encode()}  # noqa: E731
        arrow_schema = pa.schema([pa.field(PHYS["id"], pa.int64(), metadata=fid("id")),
                                  pa.field(PHYS["payload"], vtype, metadata=fid("payload"))])
        table = pa.Table.from_arrays([pa.array(ids, pa.int64()), v], schema=arrow_schema)
        rel = f"{PHYS['part']}={part}/part-00000-{uuid.uuid5(uuid.NAMESPACE_URL, part)}.c000.parquet"
        os.makedirs(os.path.join(path, os.path.dirname(rel)), exist_ok=True)
        pq.write_table(table, os.path.join(path, rel))
        stats = {"numRecords": len(ids), "minValues": {PHYS["id"]: min(ids)},
                 "maxValues": {PHYS["id"]: max(ids)}, "nullCount": {PHYS["id"]: 0, PHYS["payload"]: 0}}
        actions.append({"add": {"path": rel, "partitionValues": {PHYS["part"]: part},
                                "size": os.path.getsize(os.path.join(path, rel)),
                                "modificationTime": now, "dataChange": True,
                                "stats": json.dumps(stats)}})
        written.extend((i, part) for i in ids)
    with open(os.path.join(path, "_delta_log", f"{0:020}.json"), "x") as f:
        f.write("".join(json.dumps(a) + "\n" for a in actions))

    # The second reader.
    dt = DeltaTable(path)
    got = pa.table(QueryBuilder().register("t", dt).execute(
        "SELECT id, part, payload IS NULL AS n FROM t").read_all()).to_pylist()
    assert not any(r["n"] for r in got), got
    got = sorted((r["id"], r["part"]) for r in got)
    assert got == sorted(written), (got, written)
    doc = f"""# hand_column_mapping: a Delta table with column mapping

Made by `python3 interop/delta_column_mapping_fixture.py` (do not edit by hand; rerun it;
its docstring says how). Built by hand following the Delta protocol, since no producer
available here writes column mapping.

- Protocol (3, 7), readerFeatures [columnMapping, variantType], writerFeatures
  [columnMapping, variantType]; configuration {{delta.columnMapping.mode: name,
  delta.columnMapping.maxColumnId: 3}}.
- Columns (logical -> physical): {", ".join(f"{k} -> {v}" for k, v in PHYS.items())}; `part`
  partitions the table; `payload` is an unshredded variant `{{"a": id, "tag": "t<id % 3>"}}`.
- Rows: ids 1-4 in part a, 5-7 in part b. The data files, `partitionValues` and the statistics
  use the physical names only.
- Cross-checked: Python deltalake {__import__("deltalake").__version__}'s `QueryBuilder` (delta-rs's DataFusion
  scan) reads the same (id, part) rows, with no NULL `payload` (its pyarrow path refuses
  `columnMapping`).
"""
    with open(os.path.join(OUT, NAME + ".md"), "w") as f:
        f.write(doc)
    print(doc)


if __name__ == "__main__":
    main()
