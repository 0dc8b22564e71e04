"""The reader schemas a streaming offset records, and the restart check against them (no Spark session)."""

from __future__ import annotations

import json

import pytest
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

from connector_base import ConnectorError
from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.reader_schemas import ReaderSchema, to_metadata
from connectors.formats.spark_schema import check_replay, replay_metadata

V1 = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}
V2 = {**V1, "fields": [*V1["fields"], {"name": "x", "type": "string", "default": ""}]}
OPTIONS = {"valueFormat": "avro-confluent", "schemaRegistry.url": "http://registry:8081"}


def _schema(reader: dict[str, object], schema_id: int) -> StructType:
    """A decoded schema as ``load()`` returns it: the reader schema pinned in its first field."""
    meta = to_metadata({"value": ReaderSchema("value", json.dumps(reader), schema_id, "t-value")})
    return StructType([StructField("key", BinaryType(), True, meta), StructField("id", LongType())])


def test_offsets_record_the_reader_schema_and_a_restart_with_the_same_one_passes() -> None:
    schema = _schema(V1, 5)
    recorded = replay_metadata(schema)
    assert recorded is not None and recorded["readerSchemas"]["value"]["id"] == 5
    assert json.loads(json.dumps(recorded)) == recorded  # JSON, as offsets are
    check_replay(recorded, schema, RecordFormatOptions.parse(OPTIONS))
    check_replay({}, schema, RecordFormatOptions.parse(OPTIONS))  # an offset of an older release


def test_keep_refuses_a_restart_with_another_reader_schema_and_names_the_pin() -> None:
    recorded = replay_metadata(_schema(V1, 5))
    with pytest.raises(
        ConnectorError, match=r"reader schema id 5 of subject 't-value'.*fixed id 9.*valueSchemaId=5"
    ):
        check_replay(recorded, _schema(V2, 9), RecordFormatOptions.parse(OPTIONS))


def test_fail_mode_takes_the_new_version_on_restart() -> None:
    recorded = replay_metadata(_schema(V1, 5))
    opts = RecordFormatOptions.parse({**OPTIONS, "schemaEvolutionMode": "fail"})
    check_replay(recorded, _schema(V2, 9), opts)  # no error: that mode's restart is for the new version
