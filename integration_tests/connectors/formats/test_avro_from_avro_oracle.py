"""Every Avro type decodes to what Spark's own ``from_avro`` gives: same Spark type, same values.

The oracle is spark-avro from Maven Central run in a child Spark (``from_avro_oracle``); our side is
``AvroDecoder`` with the same payloads (written by fastavro). Both are compared as Arrow values and
as Spark type strings.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from connectors.formats.avro_decoder import AvroDecoder, native_avro_decoder
from integration_tests.connectors.formats.from_avro_oracle import run_oracle
from unit_tests.connectors.formats.avro_every_type import (
    EVERY_TYPE,
    NATIVE_TYPES,
    UNIONS,
    every_type_row,
    native_row,
    payloads,
    unions_row,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(600)]


def _oracle(cases: list[dict[str, Any]]) -> list[tuple[str, pa.Table]]:
    return run_oracle("integration_tests.connectors.formats.from_avro_oracle", cases)


def _spark_type(arrow: pa.DataType) -> str:
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(arrow, prefer_timestamp_ntz=True).simpleString()


def test_every_avro_type_matches_spark_from_avro() -> None:
    rows = [every_type_row(k) for k in range(8)]
    every_payloads = payloads(EVERY_TYPE, rows)
    native_payloads = payloads(NATIVE_TYPES, [native_row(k) for k in range(8)])
    union_payloads = payloads(UNIONS, [unions_row(k) for k in range(12)])
    cases = [(EVERY_TYPE, every_payloads), (NATIVE_TYPES, native_payloads), (UNIONS, union_payloads)]
    spark = _oracle([{"schema": schema, "payloads": [p.hex() for p in data]} for schema, data in cases])

    for (schema, data), (spark_type, spark_table) in zip(cases, spark, strict=True):
        decoder = AvroDecoder(json.dumps(schema))  # the fastavro path, then the native one
        ours = decoder.to_arrow(decoder.decode_group(data, json.dumps(schema)))
        _assert_same(ours, spark_type, spark_table, schema)
        native = decoder.decode_arrow(pa.array(data, pa.binary()), json.dumps(schema))
        if native_avro_decoder() is not None:  # the compiled module is built by make test
            assert decoder.native and native is not None
            _assert_same(native, spark_type, spark_table, schema)


def _assert_same(ours: pa.Array, spark_type: str, spark_table: pa.Table, schema: dict[str, Any]) -> None:
    assert _spark_type(ours.type) == spark_type
    ours_rows, spark_rows = ours.to_pylist(), spark_table.column("v").combine_chunks().to_pylist()
    for name in [f["name"] for f in schema["fields"]]:
        assert [r[name] for r in ours_rows] == [r[name] for r in spark_rows], name
