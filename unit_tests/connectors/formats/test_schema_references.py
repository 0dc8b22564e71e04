"""Registry schemas with references made self-contained, judged by the libraries' own reference
resolution: fastavro with named schemas (what confluent-kafka's Avro serializer does) and
``jsonschema`` with a ``referencing`` registry (what its JSON serializer does)."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import jsonschema
import pytest
from referencing import Registry, Resource

from connectors.formats.avro_types import AvroSchemaError
from connectors.formats.json_decoder import json_schema_arrow_type
from connectors.formats.schema_references import (
    inline_avro_references,
    inline_json_references,
    self_contained,
)

GEO = {"type": "record", "name": "Geo", "namespace": "geo", "fields": [{"name": "lat", "type": "double"}]}
ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "shop",
    "fields": [
        {"name": "city", "type": "string"},
        {"name": "where", "type": ["null", "geo.Geo"], "default": None},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["HOME", "WORK"]}},
    ],
}
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "ship_to", "type": "shop.Address"},  # full name
        {"name": "bill_to", "type": ["null", "Address"], "default": None},  # short name, same namespace
        {"name": "history", "type": {"type": "array", "items": "shop.Address"}},
        {"name": "kind", "type": "Kind"},  # defined inside the reference
        {"name": "at", "type": "geo.Geo"},
    ],
}
AVRO_REFS = [("geo.Geo", json.dumps(GEO)), ("shop.Address", json.dumps(ADDRESS))]


def order_record(i: int) -> dict[str, Any]:
    """A record of ``ORDER`` (nulls and empty arrays included)."""
    address = {"city": f"c{i}", "where": None if i % 2 else {"lat": 1.5 * i}, "kind": "WORK"}
    return {
        "id": i,
        "ship_to": address,
        "bill_to": None if i % 3 else address,
        "history": [address] * (i % 3),
        "kind": "HOME",
        "at": {"lat": -float(i)},
    }


def test_avro_references_inlined_read_what_named_schemas_wrote() -> None:
    named: dict[str, Any] = {}
    fastavro.parse_schema(GEO, named_schemas=named)
    fastavro.parse_schema(ADDRESS, named_schemas=named)
    with_refs = fastavro.parse_schema(ORDER, named_schemas=named)
    standalone = fastavro.parse_schema(json.loads(inline_avro_references(json.dumps(ORDER), AVRO_REFS)))
    for i in range(6):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, with_refs, order_record(i))
        assert fastavro.schemaless_reader(io.BytesIO(buf.getvalue()), standalone) == order_record(i)


def test_avro_each_name_is_defined_once_at_its_first_use() -> None:
    text = inline_avro_references(json.dumps(ORDER), AVRO_REFS)
    fields = {f["name"]: f["type"] for f in json.loads(text)["fields"]}
    assert fields["ship_to"]["name"] == "shop.Address"  # defined here, by its full name
    assert fields["bill_to"] == ["null", "shop.Address"]  # then used by name
    assert fields["history"]["items"] == "shop.Address"
    assert fields["kind"] == "shop.Kind" and fields["at"] == "geo.Geo"
    assert text.count('"name": "shop.Address"') == 1
    # a name used as an object's type (Avro's Java parser accepts it, fastavro does not)
    wrapped = {**ORDER, "fields": [{"name": "a", "type": {"type": "shop.Address"}}]}
    fields = json.loads(inline_avro_references(json.dumps(wrapped), AVRO_REFS))["fields"]
    assert fields[0]["type"]["name"] == "shop.Address"


def test_avro_without_references_or_with_unknown_names_is_left_to_the_parser() -> None:
    assert self_contained("AVRO", json.dumps(ORDER), []) == json.dumps(ORDER)
    text = inline_avro_references(json.dumps(ORDER), [("geo.Geo", json.dumps(GEO))])
    with pytest.raises(fastavro.schema.UnknownType):
        fastavro.parse_schema(json.loads(text))
    with pytest.raises(AvroSchemaError, match="'shop.Address' is not JSON"):
        inline_avro_references(json.dumps(ORDER), [("shop.Address", "{nope")])


ZIP = {"type": "string", "pattern": "^[0-9]{5}$"}
GEO_JSON = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"lat": {"type": "number"}}, "required": ["lat"]}  # fmt: skip
ADDRESS_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "$id": "address.json",
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "zip": {"$ref": "#/definitions/Zip"},
        "geo": {"$ref": "geo.json"},
        "note": {"const": {"$ref": "geo.json"}},  # data, not a reference
    },
    "required": ["city"],
    "definitions": {"Zip": ZIP},
}
ORDER_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "ship_to": {"$ref": "address.json"},
        "zip": {"$ref": "address.json#/definitions/Zip"},
        "lines": {"type": "array", "items": {"$ref": "#/definitions/Line"}},
    },
    "required": ["id", "ship_to"],
    "definitions": {"Line": {"type": "object", "properties": {"sku": {"type": "string"}}}},
}
JSON_REFS = [("geo.json", json.dumps(GEO_JSON)), ("address.json", json.dumps(ADDRESS_JSON))]
DOCS = [
    {"id": 1, "ship_to": {"city": "a"}},
    {"id": 2, "ship_to": {"city": "a", "zip": "12345", "geo": {"lat": 1.5}}, "zip": "54321"},
    {"id": 3, "ship_to": {"city": "a", "zip": "1234"}},  # bad zip inside the reference
    {"id": 4, "ship_to": {"city": "a", "geo": {}}},  # geo without lat
    {"id": 5, "ship_to": {"zip": "12345"}},  # no city
    {"id": 6, "ship_to": {"city": "a"}, "zip": "x"},  # bad zip through a pointer into the reference
    {"id": 7, "ship_to": {"city": "a"}, "lines": [{"sku": 3}]},  # bad local definition
    {"id": 8, "ship_to": {"city": "a", "note": {"$ref": "geo.json"}}},
    {"id": 9, "ship_to": {"city": "a", "note": 1}},
]


def test_json_references_inlined_validate_as_a_referencing_registry_does() -> None:
    registry: Registry[Any] = Registry().with_resources(
        [(name, Resource.from_contents(json.loads(text))) for name, text in JSON_REFS]
    )
    oracle = jsonschema.Draft7Validator(ORDER_JSON, registry=registry)
    ours = jsonschema.Draft7Validator(json.loads(inline_json_references(json.dumps(ORDER_JSON), JSON_REFS)))
    verdicts = [oracle.is_valid(d) for d in DOCS]
    assert verdicts == [True, True, False, False, False, False, False, True, False]
    assert [ours.is_valid(d) for d in DOCS] == verdicts


def test_json_references_map_to_spark_types() -> None:
    schema = json.loads(inline_json_references(json.dumps(ORDER_JSON), JSON_REFS))
    assert str(json_schema_arrow_type(schema)) == (
        "struct<id: int64, ship_to: struct<city: string, zip: string, geo: struct<lat: double>, "
        "note: string>, zip: string, lines: list<item: struct<sku: string>>>"
    )


def test_json_relative_names_against_the_roots_id_and_key_clashes() -> None:
    root = {**ORDER_JSON, "$id": "https://example.com/schemas/order.json"}
    refs = [("https://example.com/schemas/geo.json", json.dumps(GEO_JSON)), *JSON_REFS[1:]]
    ours = jsonschema.Draft7Validator(json.loads(inline_json_references(json.dumps(root), refs)))
    assert [ours.is_valid(d) for d in DOCS[:4]] == [True, True, False, False]
    clash = {**ORDER_JSON, "$defs": {"registry-reference-0": {}}}
    with pytest.raises(AvroSchemaError, match="registry-reference-0"):
        inline_json_references(json.dumps(clash), JSON_REFS)


def test_protobuf_keeps_its_references_apart() -> None:
    assert self_contained("PROTOBUF", "syntax = 'proto3';", [("a.proto", "x")]) == "syntax = 'proto3';"
