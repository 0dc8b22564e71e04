"""``kafka.reader``: auto picks the compiled reader only where it is installed; bad values fail at parse."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from connector_base import InvalidOptionError
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.reader_choice import DEFAULT_READER_ENV, NATIVE_MODULE, KafkaReader, native_module

BASE = {"kafka.bootstrap.servers": "localhost:9092", "subscribe": "t"}


def _parse(**options: str) -> KafkaSourceOptions:
    return KafkaSourceOptions.parse({**BASE, **options}, True)


@pytest.fixture(autouse=True)
def _no_env_default(monkeypatch: Any) -> None:
    monkeypatch.delenv(DEFAULT_READER_ENV, raising=False)


def test_python_is_always_available_and_never_a_client_setting() -> None:
    opts = _parse(**{"kafka.reader": "Python"})
    assert opts.reader is KafkaReader.PYTHON
    assert "reader" not in opts.consumer_config() and "kafka.reader" not in opts.consumer_config()


def test_hidden_module_auto_falls_back_and_native_says_how_to_install(monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, NATIVE_MODULE, None)  # as on a machine without the wheel
    assert native_module() is None
    assert _parse().reader is KafkaReader.PYTHON
    assert _parse(**{"kafka.reader": "auto"}).reader is KafkaReader.PYTHON
    with pytest.raises(InvalidOptionError) as e:
        _parse(**{"kafka.reader": "native"})
    assert "kafka.reader" in str(e.value)
    assert "pip install 'sparkflow-connectors[kafka-native]'" in str(e.value)
    monkeypatch.setenv(DEFAULT_READER_ENV, "native")
    with pytest.raises(InvalidOptionError, match=DEFAULT_READER_ENV):
        _parse()


@pytest.mark.skipif(native_module() is None, reason="the kafka-native wheel is not installed (make native)")
def test_auto_picks_native_where_installed(monkeypatch: Any) -> None:
    assert _parse().reader is KafkaReader.NATIVE
    assert _parse(**{"kafka.reader": "native"}).reader is KafkaReader.NATIVE
    monkeypatch.setenv(DEFAULT_READER_ENV, "python")
    assert _parse().reader is KafkaReader.PYTHON
    assert _parse(**{"kafka.reader": "native"}).reader is KafkaReader.NATIVE  # the option wins


def test_bad_value_names_the_option() -> None:
    with pytest.raises(InvalidOptionError, match=r"kafka\.reader.*auto, native or python"):
        _parse(**{"kafka.reader": "jvm"})
