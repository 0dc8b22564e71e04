"""JSON Schema -> Arrow types and ``JsonDecoder`` (no network)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from connectors.formats.avro_types import AvroSchemaError
from connectors.formats.json_decoder import JsonDecoder, json_schema_arrow_type


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
    dec = JsonDecoder(json.dumps(schema))
    out = dec.decode_group([b'{"id": 1, "extra": true, "any": {"k": [1]}}', b"{broken", b'{"id": "x"}'], "")
    assert out[0] == {"id": 1, "any": '{"k": [1]}'} and isinstance(out[1], Exception)
    assert list(dec.bad_values([out[0], None, out[2]])) == [2]
    assert dec.to_arrow([out[0], None]).to_pylist() == [{"id": 1, "any": '{"k": [1]}'}, None]
