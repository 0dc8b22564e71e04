"""``kafka.writer=python``: the sink's rows produced with confluent-kafka's ``Producer``, one call per row.

The fallback where the compiled producer (``native_sink.py``) is not installed; delivery reports are
counted by ``_Delivery`` and awaited with ``wait_for_deliveries`` as on the compiled path. Producers
are pooled per worker between tasks (``producer_pool.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from connector_base import ConnectorError
from connectors.formats.writer_schemas import PayloadEncoder, writer_encoder
from connectors.kafka import producer_pool
from connectors.kafka.client_errors import ConnectErrorWatch
from connectors.kafka.deliveries import wait_for_deliveries
from connectors.kafka.sink_options import KafkaSinkOptions

__all__ = ["produce_batches"]


def _column(batch: pa.RecordBatch, name: str) -> list[Any] | None:
    idx = batch.schema.get_field_index(name)
    return None if idx < 0 else batch.column(idx).to_pylist()


def _bytes(values: list[Any] | None, n: int) -> list[Any]:
    if values is None:
        return [None] * n
    return [v.encode() if isinstance(v, str) else v for v in values]


def _encoded(batch: pa.RecordBatch, name: str, encoders: dict[str, PayloadEncoder]) -> list[Any] | None:
    encoder = encoders.get(name)
    idx = batch.schema.get_field_index(name)
    if encoder is None or idx < 0:
        return None
    return encoder.encode(batch.column(idx), name)


class _Delivery:
    """Counts delivery reports and keeps the first failure."""

    def __init__(self) -> None:
        self.delivered = 0
        self.error: str | None = None

    def __call__(self, err: Any, msg: Any) -> None:
        if err is not None:
            if self.error is None:
                self.error = f"{err.str()} (topic {msg.topic()}, partition {msg.partition()})"
        else:
            self.delivered += 1


class _Client:
    """A confluent-kafka ``Producer`` whose client errors go to the borrowing task's ``ConnectErrorWatch``."""

    def __init__(self, config: dict[str, Any]) -> None:
        from confluent_kafka import Producer

        self.watch = ConnectErrorWatch("producing to Kafka")
        self.producer = Producer({**config, "error_cb": self._on_error})

    def _on_error(self, error: Any) -> None:
        self.watch(error)

    def close(self) -> None:
        """Drop what is still queued (a failed task's records, none for an idle one) and let it go."""
        self.producer.purge()
        self.producer.flush(0)


def produce_batches(options: KafkaSinkOptions, batches: Iterator[pa.RecordBatch]) -> int:
    """Produce every row, wait for all delivery reports; raise with the broker's reason on failure."""
    config = options.producer_config()
    key, client = producer_pool.acquire("python", config, lambda: _Client(config))
    client.watch = ConnectErrorWatch("producing to Kafka")
    delivered = False
    try:
        sent = _produce_rows(options, batches, client)
        delivered = True
    finally:
        producer_pool.release(key, client, reusable=delivered)
    return sent


def _produce_rows(options: KafkaSinkOptions, batches: Iterator[pa.RecordBatch], client: _Client) -> int:
    from confluent_kafka import KafkaException

    connect_errors = client.watch
    producer = client.producer
    report = _Delivery()
    sent = 0
    produce = producer.produce
    encoders = {r: writer_encoder(w) for r, w in options.writer_schemas.items()}
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        values = _encoded(batch, "value", encoders) or _bytes(_column(batch, "value"), n)
        keys = _encoded(batch, "key", encoders) or _bytes(_column(batch, "key"), n)
        topics = [options.topic] * n if options.topic else _column(batch, "topic")
        partitions = _column(batch, "partition")
        headers = _column(batch, "headers")
        for i in range(n):
            topic = topics[i] if topics is not None else None
            if not topic:
                raise ConnectorError(f"row {sent} has a null topic and the 'topic' option is not set")
            kwargs: dict[str, Any] = {"value": values[i], "key": keys[i], "on_delivery": report}
            if partitions is not None and partitions[i] is not None:
                kwargs["partition"] = partitions[i]
            if headers is not None and headers[i]:
                kwargs["headers"] = [(h["key"], h["value"]) for h in headers[i]]
            while True:
                try:
                    produce(topic, **kwargs)
                    break
                except BufferError:
                    producer.poll(0.1)
                    connect_errors.raise_if_failed()
                except KafkaException as e:
                    raise ConnectorError(f"producing to topic {topic} failed: {e}") from e
            if report.error is not None:
                break
            sent += 1
            if sent % 10_000 == 0:
                producer.poll(0)
        if report.error is not None:
            break
    wait_for_deliveries(producer.flush, lambda: report.error, connect_errors.raise_if_failed)
    return sent
