"""Minimal Parquet footer reader (Thrift compact protocol), independent of pyarrow.

Used by check.py to see the raw `LogicalType` of each schema element, in particular
the VARIANT annotation (LogicalType union field 16, `struct VariantType { 1: optional
i8 specification_version }`), which pyarrow 26 only shows through the text of
`ParquetFile.schema`.
"""

import struct

# Thrift compact type ids.
_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)

# LogicalType union members (parquet.thrift).
LOGICAL_TYPE_NAMES = {
    1: "STRING", 2: "MAP", 3: "LIST", 4: "ENUM", 5: "DECIMAL", 6: "DATE", 7: "TIME",
    8: "TIMESTAMP", 10: "INTEGER", 11: "UNKNOWN", 12: "JSON", 13: "BSON", 14: "UUID",
    15: "FLOAT16", 16: "VARIANT", 17: "GEOMETRY", 18: "GEOGRAPHY",
}


class _Struct(dict):
    stop = None


class _Reader:
    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def byte(self):
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self):
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def zigzag(self):
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, t):
        if t == _TRUE:
            return True
        if t == _FALSE:
            return False
        if t == _BYTE:
            b = self.byte()
            return b - 256 if b > 127 else b
        if t in (_I16, _I32, _I64):
            return self.zigzag()
        if t == _DOUBLE:
            v = struct.unpack_from("<d", self.buf, self.pos)[0]
            self.pos += 8
            return v
        if t == _BINARY:
            n = self.varint()
            v = bytes(self.buf[self.pos:self.pos + n])
            self.pos += n
            return v
        if t in (_LIST, _SET):
            h = self.byte()
            n, et = h >> 4, h & 0x0F
            if n == 15:
                n = self.varint()
            if et in (_TRUE, _FALSE):  # booleans in lists are one byte each
                return [self.byte() == 1 for _ in range(n)]
            return [self.value(et) for _ in range(n)]
        if t == _MAP:
            n = self.varint()
            if n == 0:
                return {}
            kv = self.byte()
            kt, vt = kv >> 4, kv & 0x0F
            return {self.value(kt): self.value(vt) for _ in range(n)}
        if t == _STRUCT:
            return self.struct()
        raise ValueError(f"unknown thrift compact type {t} at byte {self.pos}")

    def struct(self):
        """A struct as {field id: value}; `.stop` is the position of its STOP byte."""
        out = _Struct()
        last = 0
        while True:
            h = self.byte()
            t = h & 0x0F
            if t == _STOP:
                out.stop = self.pos - 1
                return out
            delta = h >> 4
            fid = last + delta if delta else self.zigzag()
            last = fid
            out[fid] = self.value(t)


def _footer(data, path):
    if data[-4:] != b"PAR1":
        raise ValueError(f"{path}: not a Parquet file (no PAR1 trailer)")
    (n,) = struct.unpack_from("<I", data, len(data) - 8)
    start = len(data) - 8 - n
    return start, _Reader(memoryview(data)[start:len(data) - 8]).struct()


def read_footer(path):
    """The FileMetaData struct of a Parquet file as nested {field id: value} dicts."""
    with open(path, "rb") as f:
        data = f.read()
    return _footer(data, path)[1]


def with_variant_spec_version(src, dst, version=1):
    """Copies `src` to `dst`, adding `specification_version = version` to every VARIANT
    annotation that has none. Returns how many annotations were patched.

    Only the footer changes (2 bytes inserted per annotation, the footer length
    updated); page offsets point before the footer and stay valid.
    """
    with open(src, "rb") as f:
        data = f.read()
    start, meta = _footer(data, src)
    inserts = []
    for e in meta[2]:
        lt = e.get(10)
        if lt and 16 in lt and 1 not in lt[16]:
            # Field 1 (delta 1 from 0), compact type BYTE (3), value `version`.
            inserts.append(lt[16].stop)
    footer = bytearray(data[start:len(data) - 8])
    for pos in sorted(inserts, reverse=True):
        footer[pos:pos] = bytes([0x13, version & 0xFF])
    out = data[:start] + bytes(footer) + struct.pack("<I", len(footer)) + b"PAR1"
    with open(dst, "wb") as f:
        f.write(out)
    return len(inserts)


def schema_elements(path):
    """[(dotted path, element dict)] for every schema element, root excluded.

    The element dict has: name, physical (int or None), repetition (0 required,
    1 optional, 2 repeated), num_children, logical (name or None), logical_fields
    (the union member's struct as {field id: value}).
    """
    meta = read_footer(path)
    elems = meta[2]
    out = []

    def walk(i, prefix):
        e = elems[i]
        name = e[4].decode()
        lt = e.get(10) or {}
        logical, logical_fields = None, None
        if lt:
            (fid, fields), = lt.items()
            logical, logical_fields = LOGICAL_TYPE_NAMES.get(fid, f"#{fid}"), fields
        path = f"{prefix}.{name}" if prefix else name
        info = {
            "name": name,
            "physical": e.get(1),
            "repetition": e.get(3),
            "num_children": e.get(5, 0),
            "logical": logical,
            "logical_fields": logical_fields,
        }
        out.append((path, info))
        j = i + 1
        for _ in range(info["num_children"]):
            j = walk(j, path)
        return j

    root = elems[0]
    j = 1
    for _ in range(root.get(5, 0)):
        j = walk(j, "")
    return out


if __name__ == "__main__":
    import sys

    for p in sys.argv[1:]:
        print(p)
        for path, e in schema_elements(p):
            if e["logical"]:
                print(f"  {path}: {e['logical']} {e['logical_fields']}")
