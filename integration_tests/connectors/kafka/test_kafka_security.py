"""Security end to end on real Apache Kafka: SASL PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512 and TLS.

One broker with a SASL_PLAINTEXT and an SSL listener (``sparkflow_testing.kafka.apache_kafka``) is
started for this module only. Every mechanism writes, reads in a batch and reads in a stream with
the options Spark users pass; a wrong password or an untrusted certificate fails within seconds
naming the cause; and no secret reaches an error, a log, Spark's event log, the checkpoint or the
query progress (a separate driver, so that its event log can be switched on).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from integration_tests.connectors.kafka.helpers import FORMAT, memory_query, values_of
from integration_tests.connectors.kafka.security import MECHANISMS, client_options
from sparkflow_testing.kafka.apache_kafka import KafkaSecurity, start_apache_kafka
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.maven import java_and_maven_available

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    pytest.mark.timeout(300),
    pytest.mark.skipif(not java_and_maven_available(), reason="real Kafka needs java and mvn"),
]

FAILS_WITHIN_S = 60.0
"""A bound on the whole Spark action. The connector itself fails within about a second of connecting
(librdkafka reports the cause at once); the rest is Spark starting Python workers on a loaded
machine. Without the fix, the first contact waited kafka.default.api.timeout.ms and then said
"cannot reach", and the sink waited 120 s: the message checks below tell the two apart."""

SECRETS_DRIVER = Path(__file__).with_name("secure_driver.py")


@pytest.fixture(scope="module")
def secured(tmp_path_factory: Any) -> Iterator[tuple[KafkaBroker, KafkaSecurity]]:
    """A broker with PLAINTEXT, SASL_PLAINTEXT and SSL listeners, and its users and trust stores."""
    security = KafkaSecurity.generate(tmp_path_factory.mktemp("kafka-security"))
    broker = start_apache_kafka(security)
    try:
        yield broker, security
    finally:
        broker.stop()


def _listeners(broker: KafkaBroker) -> dict[str, str]:
    return broker.listeners  # type: ignore[attr-defined, no-any-return]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_write_and_read_through_each_mechanism(
    spark: Any, secured: tuple[KafkaBroker, KafkaSecurity], mechanism: str, tmp_path: Path
) -> None:
    broker, security = secured
    options = client_options(security, _listeners(broker), mechanism)
    topic = broker.create_topic(2)
    values = [f"{mechanism}-{i}".encode() for i in range(20)]
    frame = spark.createDataFrame([(v,) for v in values], "value binary")
    frame.write.format(FORMAT).options(**options).option("topic", topic).mode("append").save()
    batch = spark.read.format(FORMAT).options(**options).option("subscribe", topic).load().collect()
    assert sorted(values_of(batch)) == sorted(values)
    stream = (
        spark.readStream.format(FORMAT)
        .options(**options)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    query, table = memory_query(stream, tmp_path, {"availableNow": True})
    assert query.awaitTermination(120) and query.exception() is None, query.exception()
    assert sorted(values_of(spark.sql(f"select * from {table}").collect())) == sorted(values)


def _fails_fast(action: Any, *expected: str) -> str:
    started = time.monotonic()
    # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
    with pytest.raises(Exception, match="|".join(re.escape(e) for e in expected)) as info:
        action()
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert elapsed < FAILS_WITHIN_S, f"took {elapsed:.1f}s: {message[:500]}"
    return message


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_wrong_password_fails_fast_naming_authentication(
    spark: Any, secured: tuple[KafkaBroker, KafkaSecurity], mechanism: str, tmp_path: Path
) -> None:
    broker, security = secured
    topic = broker.create_topic(1)
    broker.produce(topic, [b"x"] * 3)
    wrong = "wrong-password-1234"
    options = client_options(security, _listeners(broker), mechanism, password=wrong)
    reader = spark.read.format(FORMAT).options(**options).option("subscribe", topic)
    message = _fails_fast(lambda: reader.load().collect(), "SASL authentication error")
    assert wrong not in message
    stream = spark.readStream.format(FORMAT).options(**options).option("subscribe", topic).load()

    def run_stream() -> None:
        query, _ = memory_query(stream, tmp_path)
        try:
            query.awaitTermination(FAILS_WITHIN_S)
        finally:
            query.stop()

    assert wrong not in _fails_fast(run_stream, "SASL authentication error")
    frame = spark.createDataFrame([(b"v",)], "value binary")
    writer = frame.write.format(FORMAT).options(**options).option("topic", topic).mode("append")
    assert wrong not in _fails_fast(writer.save, "SASL authentication error")


def test_untrusted_certificate_fails_fast(spark: Any, secured: tuple[KafkaBroker, KafkaSecurity]) -> None:
    broker, security = secured
    topic = broker.create_topic(1)
    options = client_options(security, _listeners(broker), "SSL-PEM")
    options["kafka.ssl.truststore.location"] = str(security.untrusted_ca_pem)
    reader = spark.read.format(FORMAT).options(**options).option("subscribe", topic)
    _fails_fast(lambda: reader.load().collect(), "certificate verify failed")
    frame = spark.createDataFrame([(b"v",)], "value binary")
    writer = frame.write.format(FORMAT).options(**options).option("topic", topic).mode("append")
    _fails_fast(writer.save, "certificate verify failed")


@pytest.mark.parametrize("mechanism", ["SSL-JKS", "SSL-PKCS12"])
def test_wrong_trust_store_password_fails_at_load(
    spark: Any, secured: tuple[KafkaBroker, KafkaSecurity], mechanism: str
) -> None:
    broker, security = secured
    wrong = "wrong-store-password-99"
    options = client_options(security, _listeners(broker), mechanism, password=wrong)
    message = _fails_fast(
        lambda: spark.read.format(FORMAT).options(**options).option("subscribe", "t").load(),
        "kafka.ssl.truststore.password",
    )
    assert wrong not in message and security.store_password not in message


@pytest.mark.timeout(600)
def test_no_secret_in_errors_logs_event_log_checkpoint_or_progress(
    secured: tuple[KafkaBroker, KafkaSecurity], tmp_path: Path
) -> None:
    broker, security = secured
    topic = broker.create_topic(2)
    broker.produce(topic, [f"s{i}".encode() for i in range(30)])
    wrong = "wrong-password-for-the-leak-test"
    config = {
        "listeners": _listeners(broker),
        "security": {k: str(v) for k, v in vars(security).items()},
        "topic": topic,
        "wrong": wrong,
        "out": str(tmp_path),
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    log = tmp_path / "driver.log"
    with open(log, "wb") as out:
        done = subprocess.run(
            [sys.executable, str(SECRETS_DRIVER), str(tmp_path / "config.json")],
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=500,
        )
    text = log.read_text(errors="replace")
    assert done.returncode == 0, text[-3000:]
    events = [p for p in (tmp_path / "events").rglob("*") if p.is_file()]  # v2 event logs are directories
    offsets = list((tmp_path / "checkpoint" / "offsets").iterdir())
    assert events and offsets and (tmp_path / "progress.json").exists() and (tmp_path / "errors.txt").exists()
    assert "SASL authentication error" in (tmp_path / "errors.txt").read_text()
    searched = [log, *events, *(p for p in (tmp_path / "checkpoint").rglob("*") if p.is_file())]
    searched += [tmp_path / "progress.json", tmp_path / "errors.txt"]
    for secret in (*security.secrets, wrong):
        for path in searched:
            assert secret not in path.read_text(errors="replace"), f"a secret in {path}"
