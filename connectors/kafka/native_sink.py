"""``kafka.writer=native``: the sink's rows produced by the compiled producer, no Python object per record.

The ``sparkflow-kafka-native`` wheel (built from ``native/kafka_reader``, ``src/producer.rs``) holds a
librdkafka producer whose ``produce`` takes each Arrow batch Spark hands the writer and calls
``rd_kafka_produceva`` for every row with the GIL released; delivery reports are counted there. What
the write means is shared with the confluent-kafka path (``python_sink.py``): the same
producer settings (``KafkaSinkOptions.producer_config``: the translated client settings, SASL/SSL
included), ``keyFormat``/``valueFormat`` encoding, the same unrecoverable client errors
(``ConnectErrorWatch``), and the same flush (``wait_for_deliveries``): the task reports its rows
written only once every delivery is acknowledged, so the sink stays at least once. Producers are
pooled per worker between tasks (``producer_pool.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from connector_base import ConnectorError
from connectors.formats.writer_schemas import PayloadEncoder, writer_encoder
from connectors.kafka import producer_pool
from connectors.kafka.client_errors import ConnectErrorWatch
from connectors.kafka.deliveries import wait_for_deliveries
from connectors.kafka.native_split_reader import config_value
from connectors.kafka.reader_choice import INSTALL_HINT, NATIVE_MODULE, native_module
from connectors.kafka.sink_options import KafkaSinkOptions

__all__ = ["produce_batches_native"]


def _encoded(batch: pa.RecordBatch, encoders: dict[str, PayloadEncoder]) -> pa.RecordBatch:
    """``batch`` with its ``keyFormat``/``valueFormat`` columns replaced by their encoded bytes."""
    for name, encoder in encoders.items():
        idx = batch.schema.get_field_index(name)
        if idx >= 0:
            encoded = pa.array(encoder.encode(batch.column(idx), name), type=pa.binary())
            batch = batch.set_column(idx, name, encoded)
    return batch


class _Client:
    """The compiled producer, its client errors fed to the borrowing task's ``ConnectErrorWatch``."""

    def __init__(self, options: KafkaSinkOptions) -> None:
        module = native_module()
        if module is None:
            raise ConnectorError(
                f"kafka.writer=native: the module {NATIVE_MODULE} is missing; {INSTALL_HINT}"
            )
        self.error_type = module.NativeKafkaError
        self.watch = ConnectErrorWatch("producing to Kafka")
        settings = [(k, config_value(v)) for k, v in options.producer_config().items()]
        try:
            self.producer = module.NativeProducer(settings)
        except self.error_type as e:
            raise ConnectorError(f"creating the Kafka producer failed: {e.args[1]}") from None

    def close(self) -> None:
        self.producer.close()

    def check(self) -> None:
        """Raise on the first unrecoverable client error reported so far."""
        from confluent_kafka import KafkaError

        for code, message, fatal in self.producer.client_errors():
            self.watch(KafkaError(code, message, fatal=fatal))
        self.watch.raise_if_failed()

    def produce(self, batch: pa.RecordBatch, topic: str | None, first_row: int) -> None:
        """Every row of ``batch`` handed to librdkafka (or stopped by a failed delivery)."""
        start = 0
        while start < batch.num_rows and self.producer.failure() is None:
            try:
                start = self.producer.produce(batch, topic, first_row, start)
            except ValueError as e:
                raise ConnectorError(str(e)) from None
            except self.error_type as e:
                raise ConnectorError(e.args[1]) from None
            self.check()

    def flush(self, seconds: float) -> int:
        remaining: int = self.producer.flush(int(seconds * 1000))
        return remaining


def produce_batches_native(options: KafkaSinkOptions, batches: Iterator[pa.RecordBatch]) -> int:
    """Produce every row, wait for all delivery reports; raise with the broker's reason on failure."""
    key, client = producer_pool.acquire("native", options.producer_config(), lambda: _Client(options))
    client.watch = ConnectErrorWatch("producing to Kafka")
    encoders: dict[str, PayloadEncoder] = {r: writer_encoder(w) for r, w in options.writer_schemas.items()}
    sent = 0
    delivered = False
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            client.produce(_encoded(batch, encoders), options.topic, sent)
            if client.producer.failure() is not None:
                break
            sent += batch.num_rows
        wait_for_deliveries(client.flush, client.producer.failure, client.check)
        delivered = True
    finally:
        producer_pool.release(key, client, reusable=delivered)
    return sent
