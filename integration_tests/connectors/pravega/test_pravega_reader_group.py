"""Reader-group splits (FLIP-27's Pravega mapping) in the local runtime, on the official client.

Everything runs in a spawned child with a timeout: the official client holds the GIL while it
blocks. Of the connector test kit's local checks, the ones whose semantics a reader group allows
run here (continuous reads, splits appearing later through a scale); bounded reads and
checkpoint/restore do not hold for reader groups (no end stream cut and no reader-group
checkpoints in the Python client), see docs/pravega.md.
"""

from __future__ import annotations

import collections
import time
from typing import Any

import pytest
from pravega_helpers import _write, keyed_events, new_stream, read_options

from connectors.testing.pravega_cluster import PravegaCluster, run_isolated, unique_name

pytestmark = [pytest.mark.integration]


def _source(cluster: PravegaCluster, scope: str, stream: str, group: str) -> Any:
    from connectors.pravega.options import PravegaSourceOptions
    from connectors.pravega.reader_group_source import PravegaReaderGroupSource

    options = read_options(cluster, scope, stream, mode="reader_group", reader_group=group)
    return PravegaReaderGroupSource(PravegaSourceOptions.parse(options, streaming=True))


def _read_while_scaling(cluster: PravegaCluster, scope: str, stream: str) -> dict[str, int]:
    from connector_base.runtime import LocalRuntime

    expected = [p for _k, p in keyed_events("g", 600, keys=8)]
    _write(cluster.controller_uri, scope, stream, keyed_events("g", 600, keys=8))  # in this child
    with LocalRuntime(_source(cluster, scope, stream, unique_name("rg")), 2) as rt:
        rt.start()
        rt.wait_for_records(600, timeout=60)
        control = cluster.control
        control.split(scope, stream, control.active_segments(scope, stream)[0]["id"])
        more = keyed_events("g", 400, keys=8, start=600)
        _write(cluster.controller_uri, scope, stream, more)
        expected += [p for _k, p in more]
        rt.wait_for_records(1000, timeout=60)
        time.sleep(1.5)  # a duplicate would show up now
        got = collections.Counter(bytes(r[0]) for r in rt.records())
        segments = {r[3] for r in rt.records()}
    want = collections.Counter(expected)
    return {
        "missing": sum((want - got).values()),
        "extra": sum((got - want).values()),
        "segment_ids": len(segments),
    }


@pytest.mark.timeout(240)
def test_reader_group_splits_read_exactly_once_across_a_scale(emulator_cluster: PravegaCluster) -> None:
    scope, stream = new_stream(emulator_cluster, segments=3)
    result = run_isolated(_read_while_scaling, emulator_cluster, scope, stream, timeout=200)
    assert result == {"missing": 0, "extra": 0, "segment_ids": 1}, result


class _ReaderGroupContext:
    """The kit's context for reader-group splits (built in the child)."""

    spark_format = "pravega"
    supports_new_splits = True

    def __init__(self, cluster: PravegaCluster, scope: str, stream: str) -> None:
        self.cluster, self.scope, self.stream = cluster, scope, stream
        self.group = unique_name("rg")
        self.next = 0

    def create_source(self, continuous: bool) -> Any:
        assert continuous, "reader groups read continuously"
        return _source(self.cluster, self.scope, self.stream, self.group)

    def write_records(self, count: int) -> list[Any]:
        events = keyed_events("kit", count, keys=10, start=self.next)
        self.next += count
        _write(self.cluster.controller_uri, self.scope, self.stream, events)  # already in a child
        return [(p,) for _k, p in events]

    def add_split(self, count: int) -> list[Any]:
        control = self.cluster.control
        control.split(self.scope, self.stream, control.active_segments(self.scope, self.stream)[0]["id"])
        return self.write_records(count)

    def key(self, record: Any) -> Any:
        return (bytes(record[0]),)


def _kit_splits_discovered_later(cluster: PravegaCluster, scope: str, stream: str) -> str:
    from connector_base.testing import SourceTestSuite

    SourceTestSuite().test_splits_discovered_later_are_read(_ReaderGroupContext(cluster, scope, stream))  # type: ignore[arg-type]
    return "ok"


@pytest.mark.timeout(300)
def test_connector_kit_splits_discovered_later_with_reader_groups(emulator_cluster: PravegaCluster) -> None:
    scope, stream = new_stream(emulator_cluster, segments=2)
    assert run_isolated(_kit_splits_discovered_later, emulator_cluster, scope, stream, timeout=260) == "ok"


def test_reader_group_options_are_checked() -> None:
    from connector_base import InvalidOptionError
    from connectors.pravega.options import PravegaSourceOptions
    from connectors.pravega.reader_group_source import PravegaReaderGroupSource

    base = {"controller": "tcp://127.0.0.1:1", "scope": "s", "stream": "t", "mode": "reader_group"}
    with pytest.raises(InvalidOptionError, match="'reader_group'"):
        PravegaReaderGroupSource(PravegaSourceOptions.parse(base, streaming=True))
    with pytest.raises(InvalidOptionError, match="'end_stream_cut'"):
        PravegaReaderGroupSource(PravegaSourceOptions.parse({**base, "reader_group": "g"}, streaming=False))
    with pytest.raises(InvalidOptionError, match="'start_stream_cut'"):
        PravegaReaderGroupSource(
            PravegaSourceOptions.parse({**base, "reader_group": "g", "start_stream_cut": "s/t:0=0"}, True)
        )
