"""``format("hybrid")`` options: parsed once, bad input refused naming the option (no network, no Spark)."""

from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connector_base.hybrid import SwitchStartKind
from connectors.hybrid import HybridOptions

BASE = {
    "sources": "files-unified,kafka-unified",
    "files-unified.path": "/archive",
    "kafka-unified.subscribe": "orders",
}


def test_prefixed_options_go_to_their_source_and_derived_sets_the_kafka_start() -> None:
    opts = HybridOptions.parse({**BASE, "hybrid.eventTimeColumn": "timestamp", "hybrid.switchOverlap": "5s"})
    assert opts.formats == ("files-unified", "kafka-unified")
    assert opts.child_options == ({"path": "/archive"}, {"subscribe": "orders"})
    assert opts.switch_start.kind is SwitchStartKind.DERIVED and opts.switch_start.overlap_ms == 5000
    assert opts.timestamp_options(1, 42) == {
        "startingTimestamp": "42",
        "startingOffsetsByTimestampStrategy": "latest",
    }


def test_defaults_and_query_options() -> None:
    opts = HybridOptions.parse(
        {**BASE, "kafka-unified.startingOffsets": "earliest", "backlog.maxRecordsPerTrigger": "9"}
    )
    assert opts.switch_start.kind is SwitchStartKind.CONFIGURED
    assert opts.child_options[1] == {"subscribe": "orders", "startingOffsets": "earliest"}
    assert (
        HybridOptions.parse(
            {**BASE, "hybrid.switchStart": "timestamp", "hybrid.switchTimestamp": "7"}
        ).switch_start.timestamp_ms
        == 7
    )


@pytest.mark.parametrize(
    "extra, option, fragment",
    [
        ({"sources": "files-unified"}, "sources", "two or more"),
        ({"sources": "files-unified,nosuch"}, "sources", "pyspark_<name>"),
        ({"sources": "files-unified,files-unified"}, "sources", "distinct"),
        ({"path": "/x"}, "path", "files-unified.path"),
        ({"hybrid.switchStart": "sometimes"}, "hybrid.switchStart", "derived, timestamp or configured"),
        ({"hybrid.switchStart": "derived"}, "hybrid.eventTimeColumn", "a column"),
        ({"hybrid.switchStart": "timestamp"}, "hybrid.switchTimestamp", "milliseconds"),
        (
            {"hybrid.switchStart": "timestamp", "hybrid.switchTimestamp": "soon"},
            "hybrid.switchTimestamp",
            "milliseconds",
        ),
        ({"hybrid.switchOverlap": "5s"}, "hybrid.switchOverlap", "only with"),
        (
            {"hybrid.eventTimeColumn": "ts", "hybrid.switchOverlap": "soon"},
            "hybrid.switchOverlap",
            "duration",
        ),
        (
            {"hybrid.eventTimeColumn": "ts", "kafka-unified.startingOffsets": "earliest"},
            "kafka-unified.startingOffsets",
            "unset",
        ),
        (
            {"hybrid.eventTimeColumn": "ts", "sources": "kafka-unified,files-unified"},
            "hybrid.switchStart",
            "cannot start at a timestamp",
        ),
    ],
)
def test_bad_options_name_the_option(extra: dict[str, str], option: str, fragment: str) -> None:
    with pytest.raises(InvalidOptionError) as info:
        HybridOptions.parse({**BASE, **extra})
    assert info.value.option == option and fragment in str(info.value)
