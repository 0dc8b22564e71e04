"""JSON Schema -> Arrow types and ``JsonDecoder`` (no network)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from connector_base import ConnectorError, InvalidOptionError, MalformedRecordError
from connectors.formats.avro_types import AvroSchemaError
from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.json_decoder import JsonDecoder, JsonSchemaValidationError, json_schema_arrow_type
from connectors.formats.json_encoder import JsonEncoder
from connectors.formats.reader_schemas import ReaderSchema
from connectors.formats.record_decoder import RecordDecoder


def test_type_mapping() -> None:
    schema = {
        "type": "object",
        "properties": {
            "i": {"type": "integer"},
            "n": {"type": ["number", "null"]},
            "s": {"type": "string", "format": "date-time"},
            "b": {"type": "boolean"},
            "a": {"type": "array", "items": {"$ref": "#/$defs/P"}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "o": {"oneOf": [{"type": "null"}, {"type": "integer"}]},
            "any": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    }
    assert json_schema_arrow_type(schema) == pa.struct(
        [
            ("i", pa.int64()),
            ("n", pa.float64()),
            ("s", pa.string()),
            ("b", pa.bool_()),
            ("a", pa.list_(pa.struct([("x", pa.int64())]))),
            ("m", pa.map_(pa.string(), pa.string())),
            ("o", pa.int64()),
            ("any", pa.string()),
        ]
    )
    with pytest.raises(AvroSchemaError, match="recursive"):
        json_schema_arrow_type(
            {
                "$ref": "#/definitions/N",
                "definitions": {"N": {"properties": {"n": {"$ref": "#/definitions/N"}}}},
            }
        )


def test_decoder_ignores_unknown_properties_and_flags_bad_rows() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "integer"}, "any": {}}}
    dec = JsonDecoder(json.dumps(schema), validate=False)
    out = dec.decode_group([b'{"id": 1, "extra": true, "any": {"k": [1]}}', b"{broken", b'{"id": "x"}'], "")
    assert out[0] == {"id": 1, "any": '{"k": [1]}'} and isinstance(out[1], Exception)
    assert list(dec.bad_values([out[0], None, out[2]])) == [2]
    assert dec.to_arrow([out[0], None]).to_pylist() == [{"id": 1, "any": '{"k": [1]}'}, None]


WRITER = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}},
        "a/b": {"type": "string"},
    },
    "required": ["id"],
}


def test_records_are_validated_against_the_writer_schema_naming_the_pointer() -> None:
    reader = {"type": "object", "properties": {"id": {"type": "integer"}, "tags": {"type": "array"}}}
    dec = JsonDecoder(json.dumps(reader))
    out = dec.decode_group(
        [b'{"id": 1, "tags": ["ab"]}', b'{"id": 2, "tags": ["ok", "toolong"]}', b'{"tags": []}',
         b'{"id": -1}', b'{"id": 3, "a/b": 5}'],
        json.dumps(WRITER),
    )  # fmt: skip
    assert out[0] == {"id": 1, "tags": ["ab"]}
    assert all(isinstance(e, JsonSchemaValidationError) for e in out[1:])
    assert "at /tags/1 (keyword 'maxLength')" in str(out[1])
    assert "at (the root) (keyword 'required')" in str(out[2]) and "'id' is a required property" in str(
        out[2]
    )
    assert "at /id (keyword 'minimum')" in str(out[3])
    assert "at /a~1b (keyword 'type')" in str(out[4])  # RFC 6901 escaping
    # the same records pass unvalidated (validate=false): only the reader's types matter then
    off = JsonDecoder(json.dumps(reader), validate=False).decode_group([b'{"id": -1}'], json.dumps(WRITER))
    assert off == [{"id": -1, "tags": None}]
    with pytest.raises(AvroSchemaError, match="not a valid JSON Schema"):
        dec.decode_group([b"{}"], json.dumps({"type": "no-such-type"}))


def _json_batch(values: list[bytes]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([None] * len(values), pa.binary()), pa.array(values, pa.binary())], names=["key", "value"]
    )


def test_parse_modes_apply_to_records_that_do_not_validate() -> None:
    text = json.dumps(WRITER)
    batch = _json_batch([b'{"id": 1}', b'{"id": -5}', b'{"id": 2}'])

    def decoder(**options: str) -> RecordDecoder:
        opts = RecordFormatOptions.parse({"valueFormat": "json", "valueSchema": text, **options})
        return RecordDecoder(opts, {"value": ReaderSchema("value", text)})

    with pytest.raises(
        MalformedRecordError, match=r"offset 1: malformed JSON value .*at /id \(keyword 'minimum'\)"
    ):
        decoder().decode(batch, lambda i: f"offset {i}")
    out, _ = decoder(mode="PERMISSIVE").decode(batch, lambda i: f"offset {i}")
    assert out.column("id").to_pylist() == [1, None, 2]
    assert "at /id" in out.column("_corrupt_record").to_pylist()[1]
    out, keep = decoder(mode="DROPMALFORMED").decode(batch, lambda i: f"offset {i}")
    assert (
        out.column("id").to_pylist() == [1, 2] and keep is not None and keep.tolist() == [True, False, True]
    )
    out, _ = decoder(valueValidate="false").decode(batch, lambda i: f"offset {i}")
    assert out.column("id").to_pylist() == [1, -5, 2]


def test_validate_option_is_checked() -> None:
    with pytest.raises(InvalidOptionError) as info:
        RecordFormatOptions.parse({"valueFormat": "json", "valueSchema": "{}", "valueValidate": "maybe"})
    assert info.value.option == "valueValidate"
    with pytest.raises(InvalidOptionError, match="only JSON Schema formats") as info:
        RecordFormatOptions.parse({"valueFormat": "avro", "valueSchema": "{}", "valueValidate": "true"})
    assert info.value.option == "valueValidate"
    assert RecordFormatOptions.parse({"valueFormat": "json", "valueSchema": "{}"}).value.validate is True


def test_encoder_refuses_rows_that_do_not_validate_naming_row_and_column() -> None:
    rows = pa.array([{"id": 1, "tags": ["a"]}, {"id": 2, "tags": ["long!"]}])
    enc = JsonEncoder(json.dumps(WRITER), 7)
    with pytest.raises(ConnectorError, match=r"row 1 of the batch: its value does not validate .* at /tags/0 "
                       r"\(keyword 'maxLength'\).*valueValidate=false"):  # fmt: skip
        enc.encode(rows, "value")
    assert enc.encode(rows.slice(0, 1), "value") == [b"\x00\x00\x00\x00\x07" + b'{"id": 1, "tags": ["a"]}']
    assert len(JsonEncoder(json.dumps(WRITER), None, validate=False).encode(rows, "value")) == 2


DRAFT7 = "http://json-schema.org/draft-07/schema#"


def test_jsonschema_rs_answers_first_and_jsonschema_has_the_last_word() -> None:
    from connectors.formats import json_decoder

    schema = {
        "$schema": DRAFT7,
        "type": "object",
        "properties": {"e": {"type": "string", "format": "email"}, "n": {"type": "integer", "maximum": 9}},
    }
    text = json.dumps(schema)
    fast = json_decoder._fast_check(schema, text)
    assert fast is not None and fast({"e": "a@b.c", "n": 1})
    # jsonschema-rs checks draft 7's formats, jsonschema does not: the value is valid (its verdict)
    assert not fast({"e": "no address", "n": 1})
    check = json_decoder.json_validator(text)
    check({"e": "no address", "n": 1})
    # refused by both: the error is jsonschema's (pointer and keyword)
    with pytest.raises(JsonSchemaValidationError, match=r"at /n \(keyword 'maximum'\)"):
        check({"e": "a@b.c", "n": 10})
    with pytest.raises(JsonSchemaValidationError, match=r"at /n \(keyword 'maximum'\)"):
        check({"n": 10**30})  # an integer beyond 64 bits


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"s": {"type": "string", "pattern": "^[0-9]+$"}}},
        {"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
        {"$ref": "http://example.com/elsewhere.json"},  # offline: jsonschema-rs refuses, fetches nothing
    ],
)
def test_regex_keywords_and_remote_refs_leave_jsonschema_to_decide_alone(schema: dict[str, object]) -> None:
    from connectors.formats import json_decoder

    assert json_decoder._fast_check(schema, json.dumps(schema)) is None


BULK_READER = {
    "type": "object",
    "properties": {
        "i": {"type": "integer"},
        "d": {"type": "number"},
        "s": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "m": {"type": "object", "additionalProperties": {"type": "string"}},
        "n": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "l": {"type": "array", "items": {}}},
        },
    },
}
GOOD = [
    b'{"i": 1, "d": 2, "s": "a", "tags": ["x"], "m": {"k": "v"}, "n": {"x": 3, "l": ["a", "b"]}}',
    b'{"i": -0, "d": 1E2, "extra": [1, {"a": null}], "s": "\\u00e9\\u0000"}',
    b"null",
    b'{"d": 123456789012345678901234567890, "i": 1.0}',
    b'{"i": 1, "i": 2, "d": -Infinity}',  # orjson refuses it, json reads it
    b'{"tags": null, "n": null, "m": {}}',
]
AS_TEXT = [b'{"s": 5}', b'{"m": {"k": 1}}', b'{"n": {"l": [1, {"a": true}]}}']
"""Values at string positions that are not strings: their JSON text, found record by record."""
BAD = [
    b'{"tags": "ab"}',  # a string for a list: not its characters
    b'{"tags": {"a": "b"}}',  # an object for a list: not its keys
    b'{"n": {"l": "xy"}}',
    b'{"i": 1.5}',  # not cut to 1
    b'{"n": {"x": -2.5}}',
    b'{"d": true}',  # not 1.0
    b'{"i": 123456789012345678901234567890}',
    b"5",
    b"{broken",
    b"",
]


@pytest.mark.parametrize("extra", [None, *AS_TEXT, *BAD])
def test_bulk_decoding_reads_what_record_by_record_decoding_reads(extra: bytes | None) -> None:
    """``decode_arrow`` (the whole group in one array) gives the array the per-record path gives, or
    ``None`` so that path decides; neither reads a value by changing it."""
    text = json.dumps(BULK_READER)
    dec = JsonDecoder(text, validate=False)
    payloads = GOOD + ([] if extra is None else [extra])
    bulk = dec.decode_arrow(pa.array(payloads, pa.binary()), text)
    one_by_one = dec.decode_group(payloads, text)
    errors = [i for i, v in enumerate(one_by_one) if isinstance(v, Exception)]
    values = [None if isinstance(v, Exception) else v for v in one_by_one]
    errors += list(dec.bad_values(values))
    if extra is None:
        assert errors == [] and bulk is not None and bulk.equals(dec.to_arrow(values))
        rows = bulk.to_pylist()
        assert rows[3]["d"] == 1.2345678901234568e29 and rows[3]["i"] == 1 and rows[4]["i"] == 2
    elif extra in AS_TEXT:
        assert bulk is None and errors == []
        assert dec.to_arrow(values).to_pylist()[-1] in (
            dict.fromkeys(("i", "d", "s", "tags", "m", "n")) | {"s": "5"},
            dict.fromkeys(("i", "d", "s", "tags", "n")) | {"m": [("k", "1")]},
            dict.fromkeys(("i", "d", "s", "tags", "m")) | {"n": {"x": None, "l": ["1", '{"a": true}']}},
        )
    else:
        assert bulk is None and errors == [len(GOOD)], one_by_one[-1]


def test_bulk_decoding_validates_and_leaves_regex_schemas_to_the_record_path() -> None:
    text = json.dumps(WRITER)
    dec = JsonDecoder(text)
    assert dec.decode_arrow(pa.array([b'{"id": 1, "tags": ["ab"]}'], pa.binary()), text) is not None
    assert dec.decode_arrow(pa.array([b'{"id": -1}'], pa.binary()), text) is None
    regex = json.dumps({"type": "object", "properties": {"id": {"type": "string", "pattern": "^a"}}})
    assert JsonDecoder(regex).decode_arrow(pa.array([b'{"id": "a"}'], pa.binary()), regex) is None
    with pytest.raises(AvroSchemaError, match="not a valid JSON Schema"):  # as decode_group says it
        bad = json.dumps({"type": "no-such-type"})
        assert dec.decode_arrow(pa.array([b"{}"], pa.binary()), bad) is None
        dec.decode_group([b"{}"], bad)
