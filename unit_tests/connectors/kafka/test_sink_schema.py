"""The Kafka sink's column rules (Spark's ``KafkaWriter``: exact names, fixed types)."""

from __future__ import annotations

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from connector_base import ConnectorError, InvalidOptionError
from connectors.kafka.datasource import HEADERS
from connectors.kafka.sink import KafkaSinkOptions, validate_sink_schema

OPTS = KafkaSinkOptions.parse({"kafka.bootstrap.servers": "127.0.0.1:9", "topic": "t"})


def _schema(**cols: object) -> StructType:
    return StructType([StructField(n, t) for n, t in cols.items()])  # type: ignore[arg-type]


def test_exact_names_and_types_pass() -> None:
    validate_sink_schema(
        _schema(
            key=StringType(), value=BinaryType(), topic=StringType(), partition=IntegerType(), headers=HEADERS
        ),
        OPTS,
    )


@pytest.mark.parametrize("name", ["Key", "VALUE", "Value", "Topic", "Partition", "Headers"])
def test_a_kafka_column_in_another_case_is_refused_not_dropped(name: str) -> None:
    cols = {"value": BinaryType(), name: BinaryType()} if name.lower() != "value" else {name: BinaryType()}
    with pytest.raises(ConnectorError, match=f"column '{name}'.*withColumnRenamed"):
        validate_sink_schema(_schema(**cols), OPTS)


@pytest.mark.parametrize(
    ("cols", "match"),
    [
        ({"key": BinaryType()}, "needs a 'value' column"),
        ({"value": LongType()}, "'value' must be binary or string"),
        ({"value": BinaryType(), "key": IntegerType()}, "'key' must be binary or string"),
        ({"value": BinaryType(), "partition": LongType()}, "'partition' must be an int"),
        ({"value": BinaryType(), "topic": BinaryType()}, "'topic' must be a string"),
        ({"value": BinaryType(), "headers": ArrayType(StringType())}, "'headers' must be array<struct"),
    ],
)
def test_types_as_kafka_writer(cols: dict[str, object], match: str) -> None:
    with pytest.raises(ConnectorError, match=match):
        validate_sink_schema(_schema(**cols), OPTS)


def test_topic_from_option_or_column() -> None:
    no_topic = KafkaSinkOptions.parse({"kafka.bootstrap.servers": "127.0.0.1:9"})
    validate_sink_schema(_schema(value=BinaryType(), topic=StringType()), no_topic)
    with pytest.raises(InvalidOptionError, match="topic"):
        validate_sink_schema(_schema(value=BinaryType()), no_topic)
