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
