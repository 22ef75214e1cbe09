"""A small, independent, pure-Python Parquet Variant decoder.

Written from the spec (apache/parquet-format VariantEncoding.md / VariantShredding.md,
summarised in shared/docs/variant-spec.md), not from the crate's code, so that
`check.py` can tell whether a file means what our `to_json` says it means.

* `decode_metadata(bytes) -> [str]` and `decode(metadata, value) -> Python value`
  decode the binary encoding, validating what the spec requires (version 1, offsets
  in range, UTF-8, object keys unique and listed in unsigned-byte name order,
  field ids inside the dictionary, no trailing bytes at the top level).
* `reconstruct(array, metadata_list)` rebuilds every row of a (possibly shredded)
  Variant column read with pyarrow: `typed_value` objects / arrays / primitives plus
  the residual `value`, with the spec's missing-vs-null rules and its error cases.

Decoded values use plain Python types where they are unambiguous and small marker
types otherwise:

| Variant | Python |
|---|---|
| null | `None` |
| boolean | `bool` |
| int8/16/32/64 | `int` |
| decimal4/8/16 | `decimal.Decimal` (with its scale) |
| double | `float` |
| float | `Float32` (a `float` subclass) |
| string | `str` |
| binary | `bytes` |
| date | `Date(days)` |
| timestamp / timestamp_ntz (micros or nanos) | `Timestamp(value, unit, utc)` |
| time | `Time(micros)` |
| uuid | `uuid.UUID` |
| object | `dict` (keys in encoded order) |
| array | `list` |
"""

import decimal
import struct
import uuid
from dataclasses import dataclass

import pyarrow as pa


class VariantError(ValueError):
    """The bytes or the shredded layout break the spec."""


class Float32(float):
    """A Variant `float` (4-byte), kept apart from doubles."""


@dataclass(frozen=True)
class Date:
    days: int


@dataclass(frozen=True)
class Timestamp:
    value: int  # since the epoch, in `unit`
    unit: str  # "us" or "ns"
    utc: bool  # True: timestamp (UTC-adjusted); False: timestamp_ntz


@dataclass(frozen=True)
class Time:
    micros: int


MAX_DEPTH = 1000


def _uint(buf, pos, width):
    if pos + width > len(buf):
        raise VariantError(f"truncated: {width}-byte integer at {pos}, length {len(buf)}")
    return int.from_bytes(buf[pos:pos + width], "little")


def _sint(buf, pos, width):
    if pos + width > len(buf):
        raise VariantError(f"truncated: {width}-byte integer at {pos}, length {len(buf)}")
    return int.from_bytes(buf[pos:pos + width], "little", signed=True)


def decode_metadata(buf):
    """The dictionary strings of a metadata binary."""
    buf = bytes(buf)
    if not buf:
        raise VariantError("empty metadata")
    header = buf[0]
    version = header & 0x0F
    if version != 1:
        raise VariantError(f"metadata version {version}, expected 1")
    sorted_strings = bool(header & 0x10)
    width = ((header >> 6) & 0x03) + 1
    size = _uint(buf, 1, width)
    offsets_at = 1 + width
    bytes_at = offsets_at + (size + 1) * width
    if bytes_at > len(buf):
        raise VariantError(f"metadata: {size} offsets do not fit in {len(buf)} bytes")
    offsets = [_uint(buf, offsets_at + i * width, width) for i in range(size + 1)]
    if offsets[0] != 0:
        raise VariantError("metadata: first offset is not 0")
    if bytes_at + offsets[-1] != len(buf):
        raise VariantError(
            f"metadata: last offset {offsets[-1]} does not end the buffer "
            f"({len(buf) - bytes_at} string bytes)"
        )
    keys = []
    for i in range(size):
        if offsets[i + 1] < offsets[i]:
            raise VariantError("metadata: offsets decrease")
        raw = buf[bytes_at + offsets[i]:bytes_at + offsets[i + 1]]
        try:
            keys.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise VariantError(f"metadata: key {i} is not UTF-8: {e}") from None
    if sorted_strings:
        enc = [k.encode() for k in keys]
        if any(a >= b for a, b in zip(enc, enc[1:])):
            raise VariantError("metadata: sorted_strings set but keys are not sorted and unique")
    return keys


def decode(metadata, value, keys=None, warn=None):
    """Decodes one Variant (top-level `value` against `metadata`).

    `warn`: when a list, object keys out of order are appended to it as messages
    instead of raising (lenient mode, to still compare values of files that break
    that rule); duplicates always raise.
    """
    if keys is None:
        keys = decode_metadata(metadata)
    buf = bytes(value)
    v, end = _value(keys, buf, 0, 0, warn)
    if end != len(buf):
        raise VariantError(f"{len(buf) - end} trailing bytes after the value")
    return v


def decode_nested(keys, value, warn=None):
    """Decodes a shredded `value` column entry (a complete value, top-level metadata)."""
    buf = bytes(value)
    v, end = _value(keys, buf, 0, 0, warn)
    if end != len(buf):
        raise VariantError(f"{len(buf) - end} trailing bytes after the value")
    return v


def _value(keys, buf, pos, depth, warn=None):
    """(value, end position) of the value starting at `pos`."""
    if depth > MAX_DEPTH:
        raise VariantError("nested too deeply")
    if pos >= len(buf):
        raise VariantError(f"truncated: no value header at {pos}")
    h = buf[pos]
    basic, header = h & 0x03, h >> 2
    p = pos + 1
    if basic == 1:  # short string
        end = p + header
        if end > len(buf):
            raise VariantError("truncated short string")
        return _utf8(buf[p:end]), end
    if basic == 2:  # object
        off_w = (header & 0x03) + 1
        id_w = ((header >> 2) & 0x03) + 1
        large = bool(header & 0x10)
        n_w = 4 if large else 1
        n = _uint(buf, p, n_w)
        p += n_w
        ids = [_uint(buf, p + i * id_w, id_w) for i in range(n)]
        p += n * id_w
        offs = [_uint(buf, p + i * off_w, off_w) for i in range(n + 1)]
        base = p + (n + 1) * off_w
        out = {}
        prev = None
        for i, fid in enumerate(ids):
            if fid >= len(keys):
                raise VariantError(f"field id {fid} outside the dictionary ({len(keys)} keys)")
            name = keys[fid]
            enc = name.encode()
            if name in out:
                raise VariantError(f"duplicate object key {name!r}")
            if prev is not None and enc <= prev:
                msg = (f"object keys not in ascending unsigned-byte order: "
                       f"{prev.decode()!r} then {name!r}")
                if warn is None:
                    raise VariantError(msg)
                warn.append(msg)
            prev = enc
            if offs[i] >= offs[n]:
                raise VariantError(f"field {name!r}: offset {offs[i]} past the values ({offs[n]})")
            v, end = _value(keys, buf, base + offs[i], depth + 1, warn)
            if end > base + offs[n]:
                raise VariantError(f"field {name!r} runs past the object's values")
            out[name] = v
        end = base + offs[n]
        if end > len(buf):
            raise VariantError("truncated object")
        return out, end
    if basic == 3:  # array
        off_w = (header & 0x03) + 1
        large = bool(header & 0x04)
        n_w = 4 if large else 1
        n = _uint(buf, p, n_w)
        p += n_w
        offs = [_uint(buf, p + i * off_w, off_w) for i in range(n + 1)]
        base = p + (n + 1) * off_w
        out = []
        for i in range(n):
            v, end = _value(keys, buf, base + offs[i], depth + 1, warn)
            if end != base + offs[i + 1]:
                raise VariantError(f"array element {i} size disagrees with its offsets")
            out.append(v)
        end = base + offs[n]
        if end > len(buf):
            raise VariantError("truncated array")
        return out, end
    return _primitive(header, buf, p)


def _utf8(b):
    try:
        return bytes(b).decode("utf-8")
    except UnicodeDecodeError as e:
        raise VariantError(f"string is not UTF-8: {e}") from None


def _decimal(unscaled, scale):
    if scale > 38:
        raise VariantError(f"decimal scale {scale} > 38")
    # From text: exact at any precision (scaleb would round to the context's 28 digits).
    return decimal.Decimal(f"{unscaled}E-{scale}")


def _primitive(t, buf, p):
    def need(n):
        if p + n > len(buf):
            raise VariantError(f"truncated primitive type {t}")

    if t == 0:
        return None, p
    if t == 1:
        return True, p
    if t == 2:
        return False, p
    if t in (3, 4, 5, 6):
        w = {3: 1, 4: 2, 5: 4, 6: 8}[t]
        need(w)
        return _sint(buf, p, w), p + w
    if t == 7:
        need(8)
        return struct.unpack_from("<d", buf, p)[0], p + 8
    if t in (8, 9, 10):
        w = {8: 4, 9: 8, 10: 16}[t]
        need(1 + w)
        scale = buf[p]
        return _decimal(_sint(buf, p + 1, w), scale), p + 1 + w
    if t == 11:
        need(4)
        return Date(_sint(buf, p, 4)), p + 4
    if t in (12, 13, 18, 19):
        need(8)
        unit = "us" if t in (12, 13) else "ns"
        return Timestamp(_sint(buf, p, 8), unit, t in (12, 18)), p + 8
    if t == 14:
        need(4)
        return Float32(struct.unpack_from("<f", buf, p)[0]), p + 4
    if t in (15, 16):
        need(4)
        n = _uint(buf, p, 4)
        need(4 + n)
        raw = bytes(buf[p + 4:p + 4 + n])
        return (raw if t == 15 else _utf8(raw)), p + 4 + n
    if t == 17:
        need(8)
        return Time(_sint(buf, p, 8)), p + 8
    if t == 20:
        need(16)
        return uuid.UUID(bytes=bytes(buf[p:p + 16])), p + 16
    raise VariantError(f"unknown primitive type id {t}")


# ---------------------------------------------------------------------------
# Shredded reconstruction from pyarrow arrays
# ---------------------------------------------------------------------------

MISSING = object()  # an object field that is absent


def _storage(t):
    return t.storage_type if isinstance(t, pa.ExtensionType) else t


def _int_view(t):
    """`t` with temporal leaves replaced by integers of the same width (exact values)."""
    t = _storage(t)
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _int_view(f.type), f.nullable) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        f = t.value_field
        inner = pa.field(f.name, _int_view(f.type), f.nullable)
        return pa.large_list(inner) if pa.types.is_large_list(t) else pa.list_(inner)
    if pa.types.is_timestamp(t) or pa.types.is_time64(t):
        return pa.int64()
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return pa.int32()
    return t


def _check_typed(t, where):
    """Raises when `t` is not a `typed_value` type the shredding spec allows."""
    t = _storage(t)
    ok = (
        pa.types.is_boolean(t)
        or t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64())
        or pa.types.is_decimal(t)
        or pa.types.is_date32(t)
        or (pa.types.is_time64(t) and t.unit == "us")
        or (pa.types.is_timestamp(t) and t.unit in ("us", "ns"))
        or pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)
        or pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
        or (pa.types.is_fixed_size_binary(t) and t.byte_width == 16)
        or pa.types.is_struct(t)
        or pa.types.is_list(t) or pa.types.is_large_list(t)
    )
    if not ok:
        raise VariantError(f"{where}: {t} is not a valid shredded type")


def _typed_primitive(t, v):
    """The Variant value of a shredded primitive (`v` from the integer view)."""
    orig = t
    t = _storage(t)
    if pa.types.is_boolean(t):
        return bool(v)
    if pa.types.is_integer(t):
        return int(v)
    if pa.types.is_float32(t):
        return Float32(v)
    if pa.types.is_float64(t):
        return float(v)
    if pa.types.is_decimal(t):
        return v  # pyarrow gives an exact Decimal with the column's scale
    if pa.types.is_date32(t):
        return Date(int(v))
    if pa.types.is_timestamp(t):
        return Timestamp(int(v), t.unit, t.tz is not None)
    if pa.types.is_time64(t):
        return Time(int(v))
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return v
    if pa.types.is_fixed_size_binary(t):
        return v if isinstance(v, uuid.UUID) else uuid.UUID(bytes=bytes(v))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return bytes(v)
    if isinstance(v, uuid.UUID):
        return v
    raise VariantError(f"unsupported typed_value {orig}")


def _rebuild(t, rec, keys, is_field, where, warn=None):
    """Rebuilds one `{value, typed_value}` level (`t` its struct type, `rec` the row)."""
    if rec is None:
        # A null shredded-field group (the spec requires these groups): treat as missing.
        if is_field:
            raise VariantError(f"{where}: null field group (groups must be required)")
        raise VariantError(f"{where}: null element group")
    names = [f.name for f in t]
    value = rec.get("value") if "value" in names else None
    has_typed = "typed_value" in names
    typed = rec.get("typed_value") if has_typed else None
    if has_typed and typed is not None:
        tt = _storage(t.field("typed_value").type)
        if pa.types.is_struct(tt):
            out = {}
            key_set = set(keys)
            for f in tt:
                child = _rebuild(_storage(f.type), typed.get(f.name), keys, True, f"{where}.{f.name}", warn)
                if child is not MISSING:
                    if f.name not in key_set:
                        raise VariantError(
                            f"{where}: shredded field {f.name!r} is not in the metadata dictionary"
                        )
                    out[f.name] = child
            if value is not None:
                residual = decode_nested(keys, value, warn)
                if not isinstance(residual, dict):
                    raise VariantError(f"{where}: typed_value is an object but value is not")
                shredded_names = {f.name for f in tt}
                for k, v in residual.items():
                    if k in shredded_names:
                        raise VariantError(f"{where}: key {k!r} both shredded and in value")
                    out[k] = v
            return dict(sorted(out.items(), key=lambda kv: kv[0].encode()))
        if value is not None:
            raise VariantError(f"{where}: both value and a non-object typed_value are set")
        if pa.types.is_list(tt) or pa.types.is_large_list(tt):
            et = _storage(tt.value_type)
            return [_rebuild(et, e, keys, False, f"{where}[{i}]", warn) for i, e in enumerate(typed)]
        return _typed_primitive(tt, typed)
    if value is not None:
        return decode_nested(keys, value, warn)
    return MISSING if is_field else None


def _check_layout(t, where):
    names = [f.name for f in t]
    for n in names:
        if n not in ("value", "typed_value"):
            raise VariantError(f"{where}: unexpected child {n!r}")
    if "value" not in names and "typed_value" not in names:
        raise VariantError(f"{where}: neither value nor typed_value")
    if "value" in names and not pa.types.is_binary(_storage(t.field("value").type)) \
            and not pa.types.is_large_binary(_storage(t.field("value").type)) \
            and not pa.types.is_binary_view(_storage(t.field("value").type)):
        raise VariantError(f"{where}.value: not binary")
    if "typed_value" in names:
        tt = _storage(t.field("typed_value").type)
        _check_typed(tt, f"{where}.typed_value")
        if pa.types.is_struct(tt):
            if tt.num_fields == 0:
                raise VariantError(f"{where}.typed_value: empty struct")
            for f in tt:
                if f.nullable:
                    # pyarrow marks Parquet `required` groups non-nullable.
                    raise VariantError(f"{where}.typed_value.{f.name}: field group must be required")
                if not pa.types.is_struct(_storage(f.type)):
                    raise VariantError(f"{where}.typed_value.{f.name}: not a group")
                _check_layout(_storage(f.type), f"{where}.typed_value.{f.name}")
        elif pa.types.is_list(tt) or pa.types.is_large_list(tt):
            ef = tt.value_field
            if ef.nullable:
                raise VariantError(f"{where}.typed_value.element: must be required")
            _check_layout(_storage(ef.type), f"{where}.typed_value.element")


def check_column_type(t):
    """Validates the Arrow type of a Variant column (metadata/value/typed_value)."""
    t = _storage(t)
    if not pa.types.is_struct(t):
        raise VariantError(f"Variant column is {t}, not a struct")
    names = [f.name for f in t]
    if "metadata" not in names:
        raise VariantError("no metadata child")
    if t.field("metadata").nullable:
        raise VariantError("metadata must be required")
    rest = pa.struct([f for f in t if f.name != "metadata"])
    _check_layout(rest, "v")


def reconstruct(column, lenient=False):
    """Every row of a Variant column (pyarrow Array/ChunkedArray) as decoded values.

    Returns a list with one entry per row: `("sql_null", None)` for a null group,
    `("ok", value, warnings)` for a reconstructed Variant, or `("error", message)`.
    `lenient`: object keys out of order become warnings instead of errors.
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    t = _storage(column.type)
    if isinstance(column, pa.ExtensionArray):
        column = column.storage
    check_column_type(t)
    column = column.cast(_int_view(t))
    rest = pa.struct([f for f in t if f.name != "metadata"])
    out = []
    for i, rec in enumerate(column.to_pylist()):
        if rec is None:
            out.append(("sql_null", None))
            continue
        warn = [] if lenient else None
        try:
            keys = decode_metadata(rec["metadata"])
            v = _rebuild(rest, rec, keys, False, "v", warn)
            out.append(("ok", v, warn or []))
        except VariantError as e:
            out.append(("error", f"row {i}: {e}"))
    return out


def _selftest(root):
    """Runs the decoder over apache/parquet-testing's `shredded_variant` cases:
    every expected row must reconstruct to the value of its `.variant.bin`
    (metadata followed by value), every error case must be refused, and the
    cases noted INVALID may be refused or read."""
    import json
    import os

    import pyarrow.parquet as pq

    cases = json.load(open(os.path.join(root, "cases.json")))
    failures = []
    for c in cases:
        if "parquet_file" not in c:  # case 3 is an empty entry upstream
            continue
        path = os.path.join(root, c["parquet_file"])
        name = f"case {c['case_number']} ({c['test']})"
        try:
            col = pq.read_table(path, arrow_extensions_enabled=False).column("var")
            rows = reconstruct(col)
        except Exception as e:  # noqa: BLE001
            rows = [("error", f"{type(e).__name__}: {e}")]
        errored = any(r[0] == "error" for r in rows)
        if "INVALID" in c["parquet_file"] and errored:
            continue  # invalid files: an error is a correct answer too
        if "error_message" in c:
            if not errored:
                failures.append(f"{name}: expected an error, decoded {rows}")
            continue
        files = c.get("variant_files") or ([c["variant_file"]] if c.get("variant_file") else [])
        for i, vf in enumerate(files):
            if vf is None:
                if rows[i][0] != "sql_null":
                    failures.append(f"{name} row {i}: expected SQL NULL, got {rows[i]}")
                continue
            raw = open(os.path.join(root, vf), "rb").read()
            try:
                keys = decode_metadata_prefix(raw)
                expected = decode(raw[: keys[1]], raw[keys[1]:])
            except VariantError as e:
                failures.append(f"{name} row {i}: cannot decode {vf}: {e}")
                continue
            if rows[i][0] != "ok" or rows[i][1] != expected:
                failures.append(f"{name} row {i}: expected {expected!r}, got {rows[i]!r}")
    return len(cases), failures


def decode_metadata_prefix(buf):
    """(keys, length) of the metadata at the start of `buf`."""
    header = buf[0]
    width = ((header >> 6) & 0x03) + 1
    size = _uint(buf, 1, width)
    offsets_at = 1 + width
    bytes_at = offsets_at + (size + 1) * width
    end = bytes_at + _uint(buf, offsets_at + size * width, width)
    return decode_metadata(buf[:end]), end


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--selftest":
        n, failures = _selftest(sys.argv[2])
        for f in failures:
            print(f)
        print(f"{n} cases, {len(failures)} failures")
        sys.exit(1 if failures else 0)
    print("usage: variant_decode.py --selftest PARQUET_TESTING/shredded_variant")
    sys.exit(2)
