"""``kafka.reader`` and ``kafka.writer``: auto picks the compiled path only where it is installed; bad values
fail at parse. Each test runs for both options (the source's reader, the sink's producing path)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pytest

from connector_base import InvalidOptionError
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.reader_choice import (
    DEFAULT_READER_ENV,
    DEFAULT_WRITER_ENV,
    NATIVE_MODULE,
    KafkaReader,
    KafkaWriter,
    native_module,
)
from connectors.kafka.sink import KafkaSinkOptions

BOOTSTRAP = {"kafka.bootstrap.servers": "localhost:9092"}


@dataclass(frozen=True)
class Choice:
    """One of the two options: how to parse with it, and what it yields."""

    option: str
    env: str
    kind: type[Enum]
    parse: Callable[[dict[str, str]], Any]
    chosen: Callable[[Any], Enum]
    client_config: Callable[[Any], dict[str, Any]]


READER = Choice(
    "kafka.reader",
    DEFAULT_READER_ENV,
    KafkaReader,
    lambda o: KafkaSourceOptions.parse({**BOOTSTRAP, "subscribe": "t", **o}, True),
    lambda opts: opts.reader,
    lambda opts: opts.consumer_config(),
)
WRITER = Choice(
    "kafka.writer",
    DEFAULT_WRITER_ENV,
    KafkaWriter,
    lambda o: KafkaSinkOptions.parse({**BOOTSTRAP, "topic": "t", **o}),
    lambda opts: opts.writer,
    lambda opts: opts.producer_config(),
)


@pytest.fixture(params=[READER, WRITER], ids=["reader", "writer"])
def choice(request: Any, monkeypatch: Any) -> Choice:
    c: Choice = request.param
    monkeypatch.delenv(c.env, raising=False)
    return c


def _chosen(c: Choice, **options: str) -> Enum:
    return c.chosen(c.parse(options))


def test_python_is_always_available_and_never_a_client_setting(choice: Choice) -> None:
    opts = choice.parse({choice.option: "Python"})
    assert choice.chosen(opts) is choice.kind("python")
    name = choice.option.split(".")[1]
    assert not any(name in key for key in choice.client_config(opts))


def test_hidden_module_auto_falls_back_and_native_says_how_to_install(
    choice: Choice, monkeypatch: Any
) -> None:
    monkeypatch.setitem(sys.modules, NATIVE_MODULE, None)  # as on a machine without the wheel
    assert native_module() is None
    assert _chosen(choice) is choice.kind("python")
    assert _chosen(choice, **{choice.option: "auto"}) is choice.kind("python")
    with pytest.raises(InvalidOptionError) as e:
        _chosen(choice, **{choice.option: "native"})
    assert choice.option in str(e.value)
    assert "pip install 'sparkflow-connectors[kafka-native]'" in str(e.value)
    monkeypatch.setenv(choice.env, "native")
    with pytest.raises(InvalidOptionError, match=choice.env):
        _chosen(choice)


@pytest.mark.skipif(native_module() is None, reason="the kafka-native wheel is not installed (make native)")
def test_auto_picks_native_where_installed(choice: Choice, monkeypatch: Any) -> None:
    native, python = choice.kind("native"), choice.kind("python")
    assert _chosen(choice) is native
    assert _chosen(choice, **{choice.option: "native"}) is native
    monkeypatch.setenv(choice.env, "python")
    assert _chosen(choice) is python
    assert _chosen(choice, **{choice.option: "native"}) is native  # the option wins


def test_bad_value_names_the_option(choice: Choice) -> None:
    with pytest.raises(InvalidOptionError, match=re.escape(choice.option) + ".*auto, native or python"):
        _chosen(choice, **{choice.option: "jvm"})
