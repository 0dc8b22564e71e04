"""The native JSON batch decoder (``JsonBatchDecoder`` in the compiled module) against the Python path.

Same payloads through the compiled decoder and through ``decode_group`` + ``to_arrow`` (orjson,
jsonschema-rs then ``jsonschema``, pyarrow; ``bad_values`` where a value does not fit), the Python
path being the reference: where the native decoder answers, the Arrow array is the Python path's
(type and values); where the Python path finds a malformed record or reads a case differently, the
native decoder refuses the group (``JsonBatchError``) and ``decode_arrow`` hands it to Python.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.json_decoder import JsonDecoder, native_json_decoder
from connectors.formats.reader_schemas import ReaderSchema
from connectors.formats.record_decoder import RecordDecoder

pytestmark = pytest.mark.skipif(
    native_json_decoder() is None,
    reason="the compiled module (native/install_native.sh) without JsonBatchDecoder is installed",
)

EVERY_TYPE: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "i": {"type": "integer"},
        "n": {"type": ["number", "null"]},
        "s": {"type": "string", "format": "date-time"},
        "b": {"type": "boolean"},
        "e": {"type": "string", "enum": ["A", "B"]},
        "l": {"type": "array", "items": {"$ref": "#/definitions/P"}},
        "ls": {"type": "array", "items": {"type": "string"}},
        "ll": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        "lb": {"type": "array", "items": {"type": "boolean"}},
        "m": {"type": "object", "additionalProperties": {"type": "string"}},
        "mi": {"type": "object", "additionalProperties": {"type": "integer"}},
        "ms": {"type": "object", "additionalProperties": {"$ref": "#/definitions/P"}},
        "o": {"oneOf": [{"type": "null"}, {"type": "integer"}]},
        "any": {},
        "multi": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "nested": {
            "type": "object",
            "properties": {
                "x": {"type": "integer"},
                "deep": {"type": "object", "properties": {"y": {"type": ["string", "null"]}}},
            },
        },
    },
    "definitions": {"P": {"type": "object", "properties": {"x": {"type": "integer"}, "t": {}}}},
}


def every_type_row(k: int) -> dict[str, Any]:
    """A record with every property set (some null, missing or empty by ``k``)."""
    row: dict[str, Any] = {
        "i": k * 1_000_000_007 - 3,
        "n": None if k % 4 == 1 else k / 7,
        "s": f"2024-01-0{k % 9 + 1}T00:00:00Z",
        "b": k % 2 == 0,
        "e": "AB"[k % 2],
        "l": [{"x": j, "t": [j, {"k": "v"}]} for j in range(k % 3)] + ([None] if k % 5 == 2 else []),
        "ls": [f"s{j}é\n" for j in range(k % 4)],
        "ll": [[j, -j] for j in range(k % 3)],
        "lb": [True, False, None][: k % 4],
        "m": {f"k{j}": f"v{j}" for j in range(k % 3)},
        "mi": {"z": k, "a": -k, "m": None},
        "ms": {"p": {"x": k}, "q": None},
        "o": None if k % 2 else k,
        "any": [k, 1.5, "t", None, True, {"a": [1e300, -2.5e-7, 0.1]}][k % 6],
        "multi": [f"m{k}", k][k % 2],
        "nested": {"x": k, "deep": {"y": f"y{k}" if k % 3 else None}} if k % 5 != 4 else None,
    }
    for gone in ("n", "lb", "nested")[: k % 3]:
        row.pop(gone)
    if k == 3:
        row["extra"] = {"ignored": [1, 2]}
    return row


def _reference(decoder: JsonDecoder, payloads: list[bytes], writer: str) -> tuple[pa.Array, list[int]]:
    """The Python path's array (malformed records null) and its malformed rows."""
    out = decoder.decode_group(payloads, writer)
    errors = [i for i, v in enumerate(out) if isinstance(v, Exception)]
    values = [None if isinstance(v, Exception) else v for v in out]
    bad = decoder.bad_values(values)
    errors += list(bad)
    for i in bad:
        values[i] = None
    return decoder.to_arrow(values), sorted(errors)


def _native(decoder: JsonDecoder, payloads: list[bytes], writer: str) -> pa.Array | None:
    """The compiled decoder's array, or ``None`` where it refuses the group."""
    from sparkflow_kafka_native import JsonBatchError

    native = decoder._native_for(writer)
    assert native is not None, "the native decoder declined the writer schema"
    try:
        arr: pa.Array = native.decode(pa.array(payloads, pa.binary()))
        return arr
    except JsonBatchError:
        return None


def _same(native: pa.Array, python: pa.Array) -> None:
    assert native.type == python.type
    assert native.equals(python), (native.to_pylist(), python.to_pylist())


EVERY_TYPE_WRITER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": ["object", "null"],
    "properties": {k: EVERY_TYPE["properties"][k] for k in ("i", "s", "e", "multi")},
    "required": ["i", "e"],
}
"""A writer schema the rows validate against (nullable record, some properties constrained)."""


@pytest.mark.parametrize("validate", [True, False])
def test_every_type_equals_the_python_path(validate: bool) -> None:
    decoder = JsonDecoder(json.dumps(EVERY_TYPE), validate)
    assert decoder.native
    text = json.dumps(EVERY_TYPE_WRITER)
    payloads = [json.dumps(every_type_row(k)).encode() for k in range(12)] + [b"null"]
    python, errors = _reference(decoder, payloads, text)
    assert errors == []
    native = _native(decoder, payloads, text)
    assert native is not None, "the native decoder refused well-formed records"
    _same(native, python)
    _same(decoder.decode_arrow(pa.array(payloads, pa.binary()), text), python)
    rows = native.to_pylist()
    assert rows[0]["any"] == "0" and rows[5]["any"] == '{"a": [1e+300, -2.5e-07, 0.1]}'
    assert rows[1]["multi"] == "1" and rows[1]["l"] == [{"x": 0, "t": '[0, {"k": "v"}]'}]
    assert rows[2]["mi"] == [("z", 2), ("a", -2), ("m", None)] and rows[-1] is None


def test_a_slice_and_large_binary_decode_as_the_same_rows() -> None:
    decoder = JsonDecoder(json.dumps(EVERY_TYPE))
    text = json.dumps(EVERY_TYPE_WRITER)
    data = pa.array([json.dumps(every_type_row(k)).encode() for k in range(12)], pa.binary())
    whole = decoder.decode_arrow(data, text)
    part = decoder._native_for(text).decode(data.slice(3, 5))
    large = decoder._native_for(text).decode(data.cast(pa.large_binary()))
    assert whole is not None and part.to_pylist() == whole.to_pylist()[3:8] and large.equals(whole)
    assert len(decoder._native_for(text).decode(pa.array([], pa.binary()))) == 0


READER = {
    "type": "object",
    "properties": {
        "i": {"type": "integer"},
        "d": {"type": "number"},
        "s": {"type": "string"},
        "b": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "m": {"type": "object", "additionalProperties": {"type": "integer"}},
        "n": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "l": {"type": "array", "items": {}}},
        },
        "any": {},
    },
}
BASE = [b'{"i": 1, "d": 2.5, "s": "a", "b": true, "tags": ["x"], "m": {"k": 1}, "n": {"x": 3, "l": [1]}}']

# (payload, what the native decoder does: "same" = the Python path's value, "refuse" = Python decides)
EDGES: list[tuple[bytes, str]] = [
    (b'{"i": 3.0}', "same"),  # pyarrow takes an integral double for an integer
    (b'{"i": -9223372036854775808}', "same"),
    (b'{"i": -9223372036854775808.0}', "same"),
    (b'{"i": 9223372036854775807}', "same"),
    (b'{"i": 9223372036854775808}', "refuse"),  # malformed: beyond int64
    (b'{"i": 9223372036854775808.0}', "refuse"),
    (b'{"i": 1.5}', "refuse"),  # malformed: not cut to 1
    (b'{"i": true}', "refuse"),
    (b'{"i": "1"}', "refuse"),
    (b'{"i": -0}', "same"),
    (b'{"d": 1}', "same"),
    (b'{"d": 9007199254740992}', "same"),
    (b'{"d": 9007199254740993}', "refuse"),  # malformed: not exactly a double
    (b'{"d": 123456789012345678901234567890}', "same"),  # a double to orjson and serde_json
    (b'{"d": 1e-400}', "same"),
    (b'{"d": -0.0}', "refuse"),  # -0.0 read as -0.0 by both, but -0 differs: both refused
    (b'{"d": -0}', "refuse"),  # the integer 0 to orjson
    (b'{"d": true}', "refuse"),  # malformed: not 1.0
    (b'{"d": NaN}', "refuse"),  # json reads it, serde_json does not
    (b'{"d": -Infinity}', "refuse"),
    (b'{"d": 1e400}', "refuse"),  # json reads inf
    (b'{"b": 1}', "refuse"),
    (b'{"b": null}', "same"),
    (b'{"s": 5}', "same"),  # its JSON text
    (b'{"s": -5.25e-10}', "same"),
    (b'{"s": 1e16}', "same"),
    (b'{"s": 123456789012345678901234567890}', "same"),
    (b'{"s": {"k": ["\\u00e9\\ud83d\\ude00\\u0000\\u007f\\"\\\\/", null, true, 0.1]}}', "same"),
    (b'{"s": [-0]}', "refuse"),  # "[0]" to Python
    (b'{"s": "\\ud800"}', "refuse"),  # a lone surrogate: json reads it
    (b'{"any": {"b": 1, "a": [[], {}]}, "tags": null, "m": null, "n": null}', "same"),
    (b'{"tags": "ab"}', "refuse"),
    (b'{"tags": {"a": "b"}}', "refuse"),
    (b'{"tags": [1, "x"]}', "same"),  # the item's JSON text
    (b'{"m": {"a": 1.0, "b": null}}', "same"),
    (b'{"m": {"a": 1.5}}', "refuse"),
    (b'{"m": []}', "refuse"),
    (b'{"n": {"l": "xy"}}', "refuse"),
    (b'{"n": 5}', "refuse"),
    (b'{"n": {"x": -2.5}}', "refuse"),
    (b'{"i": 1, "i": 2}', "refuse"),  # a key written twice: Python keeps the last value
    (b'{"i": 1, "n": {"x": 1}, "n2": {"x": 2}}', "same"),
    (b"null", "same"),
    (b"5", "refuse"),
    (b'"text"', "refuse"),
    (b"[]", "refuse"),
    (b"{broken", "refuse"),
    (b"", "refuse"),
    (b"{} x", "refuse"),
    (b" \n{}\t ", "same"),
    (b"\xef\xbb\xbf{}", "refuse"),  # a BOM: json reads it
    (b'{"s": "\xff"}', "refuse"),  # not UTF-8
    ('{"s": "\u00e9"}'.encode("utf-16"), "refuse"),  # json reads UTF-16
    (b"[" * 200 + b"]" * 200, "refuse"),  # deeper than serde_json's 128
]


@pytest.mark.parametrize(("payload", "expect"), EDGES, ids=[repr(p[:40]) for p, _ in EDGES])
def test_edge_cases_are_read_as_python_reads_them_or_refused(payload: bytes, expect: str) -> None:
    text = json.dumps(READER)
    decoder = JsonDecoder(text, validate=False)
    payloads = [*BASE, payload]
    python, errors = _reference(decoder, payloads, text)
    native = _native(decoder, payloads, text)
    if expect == "same":
        assert errors == [] and native is not None
        _same(native, python)
    else:
        assert native is None
    # decode_arrow's answer, native or not, is never another than the Python path's
    bulk = decoder.decode_arrow(pa.array(payloads, pa.binary()), text)
    if bulk is not None:
        assert errors == [] and bulk.equals(python)


WRITER = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 0, "exclusiveMaximum": 1000},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": True},
        "a/b": {"type": "string"},
        "kind": {"enum": ["x", "y", 1]},
        "c": {"const": {"k": [1, 2.0]}},
        "email": {"type": "string", "format": "email"},
        "when": {"type": "string", "format": "date-time"},
    },
    "required": ["id"],
    "propertyNames": {"maxLength": 5},
    "additionalProperties": {"type": "integer"},
}
INSTANCES = [
    b'{"id": 1}',
    b'{"id": 1.0}',
    b'{"id": -1}',
    b'{"id": 1000}',
    b'{"id": 999.5}',
    b'{"tags": []}',
    b'{"id": 2, "tags": ["ab", "ab"]}',
    b'{"id": 2, "tags": ["ab", "abcd"]}',
    b'{"id": 3, "a/b": 5}',
    b'{"id": 4, "kind": "y"}',
    b'{"id": 4, "kind": 1.0}',
    b'{"id": 4, "kind": "z"}',
    b'{"id": 5, "c": {"k": [1.0, 2]}}',
    b'{"id": 5, "c": {"k": [1, 3]}}',
    b'{"id": 6, "email": "a@b.c"}',
    b'{"id": 6, "email": "no address"}',  # jsonschema-rs refuses (2020-12: format annotates only?)
    b'{"id": 7, "when": "2024-01-01T00:00:00Z"}',
    b'{"id": 7, "when": "yesterday"}',
    b'{"id": 8, "other": 1}',
    b'{"id": 8, "other": "x"}',
    b'{"id": 8, "toolongname": 1}',
    b'{"id": 9223372036854775807}',
    b'{"id": 123456789012345678901234567890}',
    b"null",
]


@pytest.mark.parametrize("draft", ["https://json-schema.org/draft/2020-12/schema",
                                   "http://json-schema.org/draft-07/schema#",
                                   "http://json-schema.org/draft-04/schema#"])  # fmt: skip
@pytest.mark.parametrize("payload", INSTANCES, ids=[repr(p) for p in INSTANCES])
def test_a_record_the_native_decoder_accepts_is_valid_to_the_python_validators(
    draft: str, payload: bytes
) -> None:
    """Accepted natively => valid to the Python path (jsonschema-rs, then jsonschema's last word); a
    record the Python path refuses is refused natively, and the error stays the Python path's."""
    schema = dict(WRITER, **{"$schema": draft})
    if "draft-04" in draft:
        schema["properties"] = dict(WRITER["properties"], id={"type": "integer", "minimum": 0})
    text = json.dumps(schema)
    reader = json.dumps({"type": "object", "properties": {"id": {"type": "integer"}}})
    decoder = JsonDecoder(reader)
    python, errors = _reference(decoder, [payload], text)
    native = _native(decoder, [payload], text)
    if native is not None:
        assert errors == []
        _same(native, python)
    if errors:
        assert native is None


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"p": {"type": "number", "multipleOf": 0.01}}},
        {"type": "object", "properties": {"h": {"type": "string", "format": "idn-hostname"}}},
        {"type": "object", "properties": {"h": {"type": "string", "format": "idn-email"}}},
        {"type": "object", "properties": {"n": {"type": "integer", "maximum": 18446744073709551617}}},
        {"type": "object", "properties": {"n": {"type": "number", "minimum": -1e300}}},
        {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}},  # jsonschema alone
        {"$ref": "http://example.com/elsewhere.json"},  # offline: not compiled
    ],
)
def test_writer_schemas_the_crate_could_judge_otherwise_are_left_to_python(schema: dict[str, Any]) -> None:
    text = json.dumps(schema)
    decoder = JsonDecoder(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}))
    assert decoder._native_for(text) is None
    unvalidated = JsonDecoder(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}), False)
    assert unvalidated._native_for(text) is not None  # nothing to validate: decoded natively


def test_the_switch_forces_the_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARKFLOW_JSON_DECODER", "python")
    decoder = JsonDecoder(json.dumps(READER))
    assert not decoder.native and decoder._native_for(json.dumps(READER)) is None
    assert decoder.decode_arrow(pa.array([b'{"i": 1}'], pa.binary()), json.dumps(READER)) is not None


def _batch(values: list[bytes | None]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([None] * len(values), pa.binary()), pa.array(values, pa.binary()),
         pa.array(np.arange(len(values)))],
        names=["key", "value", "offset"],
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED"])
def test_record_decoder_output_is_the_same_native_or_not(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Malformed and invalid records in a group: the native decoder refuses it, the parse mode still
    names each bad record with the Python path's reason."""
    text = json.dumps(WRITER)
    values: list[bytes | None] = [b'{"id": 1, "tags": ["a"]}', b'{"id": -5}', None, b"{broken",
                                  b'{"id": 2, "kind": "x"}', b'{"id": 3, "kind": 1.0}', b'{"id": 4}',
                                  b'{"id": 5, "a/b": "\\ud800"}']  # fmt: skip

    def decode() -> tuple[pa.RecordBatch, Any]:
        opts = RecordFormatOptions.parse({"valueFormat": "json", "valueSchema": text, "mode": mode})
        return RecordDecoder(opts, {"value": ReaderSchema("value", text)}).decode(_batch(values), str)

    native_out, native_kept = decode()
    monkeypatch.setenv("SPARKFLOW_JSON_DECODER", "python")
    python_out, python_kept = decode()
    assert native_out.equals(python_out), (native_out.to_pylist(), python_out.to_pylist())
    assert (native_kept is None) == (python_kept is None)
    if mode == "PERMISSIVE":
        reasons = native_out.column("_corrupt_record").to_pylist()
        assert [r is not None for r in reasons] == [False, True, False, True, False, False, False, True]
        assert "at /id (keyword 'minimum')" in reasons[1]
        assert "does not fit the JSON Schema: UnicodeEncodeError" in reasons[7]  # a lone surrogate


# ---- generated records: whatever the native decoder answers is the Python path's answer ----

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e6, max_value=1e6).map(lambda f: float(round(f))),
    st.text(max_size=6),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["x", "l", "k", "y"]), inner, max_size=3)
    ),
    max_leaves=8,
)
_RECORDS = st.dictionaries(
    st.sampled_from(["i", "d", "s", "b", "tags", "m", "n", "any", "z"]), _VALUES, max_size=6
)


def _text(value: Any) -> bytes:
    """A record's JSON text (integral doubles written ``3.0``, integers beyond 64 bits as digits)."""
    return json.dumps(value).encode()


ACCEPTED: list[bool] = []


# derandomized: the same 300 draws every run, so the share checked below is fixed (random draws gave
# 41-63 native groups of 300 over 8 seeds here, and 29 once in CI, under the test's 30)
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(st.one_of(_RECORDS, st.none()), min_size=1, max_size=4), validate=st.booleans())
def test_generated_records(records: list[Any], validate: bool) -> None:
    reader = json.dumps(READER)
    properties = {
        "i": {"type": "integer", "maximum": 2**40},
        "b": {"type": "boolean"},
        "tags": {"type": "array", "maxItems": 2},
    }
    writer = json.dumps({"type": "object", "properties": properties})
    decoder = JsonDecoder(reader, validate)
    payloads = [_text(r) for r in records]
    python, errors = _reference(decoder, payloads, writer)
    native = _native(decoder, payloads, writer)
    ACCEPTED.append(native is not None)
    if native is not None:
        assert errors == []
        _same(native, python)


def test_generated_records_were_decoded_natively_often() -> None:
    """The generated test is not vacuous: a good share of its groups were the native decoder's."""
    if len(ACCEPTED) < 100:
        pytest.skip("test_generated_records did not run first")
    assert sum(ACCEPTED) >= len(ACCEPTED) // 10, (sum(ACCEPTED), len(ACCEPTED))


@settings(max_examples=300, deadline=None)
@given(bits=st.integers(min_value=0, max_value=2**64 - 1))
def test_doubles_as_text_are_written_as_python_writes_them(bits: int) -> None:
    """Any double at a string position becomes Python's ``repr`` of it (``json.dumps``)."""
    f = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if not math.isfinite(f) or f == 0.0:
        return
    decoder = JsonDecoder(json.dumps({"type": "object", "properties": {"s": {"type": "string"}}}), False)
    payload = json.dumps({"s": [f]}).encode()
    native = _native(decoder, [payload], "")
    assert native is not None and native.to_pylist() == [{"s": json.dumps([f])}]
