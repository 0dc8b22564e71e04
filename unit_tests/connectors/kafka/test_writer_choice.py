"""``kafka.writer``: auto picks the compiled producer only where it is installed; bad values fail at parse."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from connector_base import InvalidOptionError
from connectors.kafka.reader_choice import DEFAULT_WRITER_ENV, NATIVE_MODULE, KafkaWriter, native_module
from connectors.kafka.sink import KafkaSinkOptions

BASE = {"kafka.bootstrap.servers": "localhost:9092", "topic": "t"}


def _parse(**options: str) -> KafkaSinkOptions:
    return KafkaSinkOptions.parse({**BASE, **options})


@pytest.fixture(autouse=True)
def _no_env_default(monkeypatch: Any) -> None:
    monkeypatch.delenv(DEFAULT_WRITER_ENV, raising=False)


def test_python_is_always_available_and_never_a_client_setting() -> None:
    opts = _parse(**{"kafka.writer": "Python"})
    assert opts.writer is KafkaWriter.PYTHON
    assert not any("writer" in name for name in opts.producer_config())


def test_hidden_module_auto_falls_back_and_native_says_how_to_install(monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, NATIVE_MODULE, None)  # as on a machine without the wheel
    assert native_module() is None
    assert _parse().writer is KafkaWriter.PYTHON
    assert _parse(**{"kafka.writer": "auto"}).writer is KafkaWriter.PYTHON
    with pytest.raises(InvalidOptionError) as e:
        _parse(**{"kafka.writer": "native"})
    assert "kafka.writer" in str(e.value)
    assert "pip install 'sparkflow-connectors[kafka-native]'" in str(e.value)
    monkeypatch.setenv(DEFAULT_WRITER_ENV, "native")
    with pytest.raises(InvalidOptionError, match=DEFAULT_WRITER_ENV):
        _parse()


@pytest.mark.skipif(native_module() is None, reason="the kafka-native wheel is not installed (make native)")
def test_auto_picks_native_where_installed(monkeypatch: Any) -> None:
    assert _parse().writer is KafkaWriter.NATIVE
    assert _parse(**{"kafka.writer": "native"}).writer is KafkaWriter.NATIVE
    monkeypatch.setenv(DEFAULT_WRITER_ENV, "python")
    assert _parse().writer is KafkaWriter.PYTHON
    assert _parse(**{"kafka.writer": "native"}).writer is KafkaWriter.NATIVE  # the option wins


def test_bad_value_names_the_option() -> None:
    with pytest.raises(InvalidOptionError, match=r"kafka\.writer.*auto, native or python"):
        _parse(**{"kafka.writer": "jvm"})
