"""``RecordDecoder`` and the Confluent header on raw batches (inline schemas: no registry, no network)."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from connector_base import InvalidOptionError, MalformedRecordError
from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.native_module import compiled_class
from connectors.formats.reader_schemas import ReaderSchema, from_metadata, to_metadata
from connectors.formats.record_decoder import RecordDecoder, confluent_header
from connectors.formats.registry_client import RegistryOptions, public_url

SCHEMA = {
    "type": "record",
    "name": "R",
    "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}],
}


def _body(rec: dict[str, Any], schema: dict[str, Any] = SCHEMA) -> bytes:
    import fastavro

    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), rec)
    return buf.getvalue()


def _batch(values: list[bytes | None]) -> pa.RecordBatch:
    n = len(values)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([None] * n, pa.binary()),
            pa.array(values, pa.binary()),
            pa.array(np.arange(n), pa.int64()),
        ],
        names=["key", "value", "offset"],
    )


def _decoder(**options: str) -> RecordDecoder:
    opts = RecordFormatOptions.parse({"valueFormat": "avro", "valueSchema": json.dumps(SCHEMA), **options})
    return RecordDecoder(opts, {"value": ReaderSchema("value", json.dumps(SCHEMA))})


def _locate(i: int) -> str:
    return f"offset {i}"


@pytest.mark.parametrize("native", [True, False], ids=["native-if-installed", "numpy"])
def test_confluent_header_reads_ids_and_flags_bad_records(native: bool) -> None:
    col = pa.array(
        [b"\x00\x00\x00\x01\x02abc", None, b"\x01\x00\x00\x00\x01x", b"\x00\x00", b"\x00\xff\xff\xff\xffz"]
    )
    valid, ok, ids = confluent_header(col, native)
    assert valid.tolist() == [True, False, True, True, True]
    assert ok.tolist() == [True, False, False, False, True]
    assert ids.tolist() == [258, -1, -1, -1, 2**32 - 1]
    valid, ok, ids = confluent_header(col.slice(2), native)  # offsets of a sliced array
    assert valid.tolist() == [True, True, True]
    assert ok.tolist() == [False, False, True] and ids.tolist() == [-1, -1, 2**32 - 1]
    assert confluent_header(pa.array([], pa.binary()), native)[2].tolist() == []
    assert confluent_header(col.cast(pa.large_binary()), native)[2].tolist() == [258, -1, -1, -1, 2**32 - 1]
    scan = compiled_class("confluent_schema_ids", None)
    if native and scan is not None:  # the compiled scan takes 64-bit offsets as they are
        large = pa.RecordBatch.from_arrays([col.cast(pa.large_binary())], names=["p"])
        assert scan(large).to_pylist() == [258, -1, -1, -1, 2**32 - 1]


def test_columns_layout_and_null_values() -> None:
    batch = _batch([_body({"id": 1, "name": "a"}), None, _body({"id": 3, "name": "c"})])
    out, kept = _decoder().decode(batch, _locate)
    assert kept is None and out.schema.names == ["key", "id", "name", "offset"]
    assert out.column("id").to_pylist() == [1, None, 3] and out.column("name").to_pylist() == ["a", None, "c"]


def test_parse_modes() -> None:
    batch = _batch([_body({"id": 1, "name": "a"}), b"\x02", _body({"id": 3, "name": "c"})])
    with pytest.raises(MalformedRecordError, match=r"offset 1: malformed Avro value \(the inline schema\)"):
        _decoder().decode(batch, _locate)
    out, kept = _decoder(mode="DROPMALFORMED").decode(batch, _locate)
    assert (
        kept is not None and kept.tolist() == [True, False, True] and out.column("id").to_pylist() == [1, 3]
    )
    out, _ = _decoder(mode="permissive", columnNameOfCorruptRecord="bad").decode(batch, _locate)
    assert out.column("id").to_pylist() == [1, None, 3]
    bad = out.column("bad").to_pylist()
    assert bad[0] is None and bad[2] is None and bad[1].startswith("offset 1: malformed Avro value")


def test_struct_layout_and_collisions() -> None:
    out, _ = _decoder(valueLayout="struct").decode(_batch([_body({"id": 1, "name": "a"})]), _locate)
    assert out.schema.names == ["key", "value", "offset"] and out.column("value").to_pylist() == [
        {"id": 1, "name": "a"}
    ]
    colliding = {"type": "record", "name": "R", "fields": [{"name": "offset", "type": "long"}]}
    opts = RecordFormatOptions.parse({"valueFormat": "avro", "valueSchema": json.dumps(colliding)})
    dec = RecordDecoder(opts, {"value": ReaderSchema("value", json.dumps(colliding))})
    with pytest.raises(Exception, match="offset appear twice.*valueLayout=struct"):
        dec.output_schema(_batch([]).schema)


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"valueFormat": "xml"}, "valueFormat"),
        ({"valueFormat": "avro"}, "valueSchema"),
        ({"valueFormat": "avro-confluent"}, "schemaRegistry.url"),
        ({"valueFormat": "avro-confluent", "schemaRegistry.url": "x://h"}, "schemaRegistry.url"),
        (
            {
                "valueFormat": "avro-confluent",
                "schemaRegistry.url": "http://h",
                "schemaRegistry.max.retries": "-1",
            },
            "schemaRegistry.max.retries",
        ),
        (
            {"valueFormat": "avro-confluent", "schemaRegistry.url": "http://h", "schemaRegistry.nope": "1"},
            "schemaRegistry.nope",
        ),
        (
            {"valueFormat": "avro-confluent", "schemaRegistry.url": "http://h", "valueSchemaId": "0"},
            "valueSchemaId",
        ),
        (
            {
                "valueFormat": "avro-confluent",
                "schemaRegistry.url": "http://h",
                "valueSchemaId": "1",
                "valueSchemaVersion": "2",
            },
            "valueSchemaVersion",
        ),
        (
            {"valueFormat": "avro-confluent", "schemaRegistry.url": "http://h", "valueRecordName": "1bad"},
            "valueRecordName",
        ),
        ({"schemaRegistry.url": "http://h"}, "schemaregistry.url"),
        ({"mode": "PERMISSIVE"}, "mode"),
        ({"valueSubject": "s"}, "valueFormat"),
    ],
)
def test_bad_options_name_the_option(options: dict[str, str], option: str) -> None:
    with pytest.raises(InvalidOptionError) as info:
        RecordFormatOptions.parse(options)
    assert info.value.option == option


def test_registry_options_keep_secrets_out_of_repr_and_urls() -> None:
    opts = RegistryOptions.parse(
        {"schemaregistry.url": "https://u:pw@reg:8081/x", "schemaregistry.bearer.auth.token": "tok"}, "test"
    )
    assert "pw" not in repr(opts) and "tok" not in repr(opts)
    assert opts.url == "https://reg:8081/x" == public_url("https://u:pw@reg:8081/x,https://other")
    with pytest.raises(InvalidOptionError) as info:
        RegistryOptions.parse(
            {"schemaregistry.url": "http://h", "schemaregistry.basic.auth.user.info": "nocolon-secret"}, "t"
        )
    assert "nocolon-secret" not in str(info.value)


def test_reader_schemas_round_trip_through_field_metadata() -> None:
    pinned = {"value": ReaderSchema("value", json.dumps(SCHEMA), 7, "t-value")}
    assert from_metadata(to_metadata(pinned)) == pinned and from_metadata({}) is None
