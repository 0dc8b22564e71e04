"""``SourceTestContext``: what the test kit needs to know about one connector."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from connector_base.source import Source

__all__ = ["SourceTestContext"]


class SourceTestContext(ABC):
    """How the kit creates a connector's source and test data (one instance per test).

    ``write_records`` returns the records it wrote as the connector will emit them (compared through
    ``key``), so the kit can assert exactly-once delivery without knowing the system.
    """

    spark_format: str = ""
    """The ``format(...)`` name for Spark reads."""
    supports_new_splits: bool = True
    """Whether ``add_split`` can create a split that a running continuous source discovers.

    True (the default) requires ``add_split``; set it to False when the system cannot add splits,
    and say why in ``new_splits_gap`` (the kit's skip reason).
    """
    new_splits_gap: str = "this connector's test context cannot create splits while running"
    """Why ``add_split`` cannot apply (shown when ``supports_new_splits`` is False)."""
    reader_config: Mapping[str, Any] = {}
    """Reader configuration the kit's local checks add (e.g. a fetch size smaller than a split, so
    that a split takes several fetches and a snapshot in its middle exists)."""
    max_records_option: str | None = None
    """The per-trigger record limit option (``"maxRecordsPerTrigger"``, ``"maxOffsetsPerTrigger"``).

    When set, the kit runs a Spark stream with the limit, stops it, writes more records, restarts it
    from the checkpoint and checks that no micro-batch exceeded the limit and nothing was lost or
    duplicated; ``write_records`` must then add records that a continuous source reads.
    """
    max_records_gap: str = "the context names no per-trigger limit option (max_records_option)"
    """Why the limit check cannot apply (shown when ``max_records_option`` is None)."""

    def max_records_value(self, records: int) -> str:
        """The ``max_records_option`` value that keeps a micro-batch at or under ``records`` records.

        The default is ``records``; a limit counted in other units (files) maps it to those.
        """
        return str(records)

    @abstractmethod
    def create_source(self, continuous: bool) -> Source[Any, Any, Any]:
        """A source over the test data (bounded: ends after what was written before it started)."""

    @abstractmethod
    def write_records(self, count: int) -> list[Any]:
        """Write ``count`` records into the existing splits (creating some if none exist)."""

    def add_split(self, count: int) -> list[Any]:
        """Create a new split holding ``count`` records (a file, a partition, a shard)."""
        raise NotImplementedError(
            f"{type(self).__name__}.add_split(count) is not implemented: the kit's discovery check "
            "needs it to create a split holding `count` records and return them as the reader emits "
            "them; or set `supports_new_splits = False` on the context to skip that check"
        )

    @abstractmethod
    def spark_options(self, continuous: bool) -> Mapping[str, str]:
        """Options for ``spark.read`` / ``spark.readStream`` over the same data."""

    def invalid_options(self) -> Sequence[tuple[Mapping[str, str], str]]:
        """``(options, fragment)`` pairs: loading with ``options`` fails with ``fragment`` in the message."""
        return []

    def split_golden_files(self) -> Mapping[str, Any]:
        """Golden files of the split serializer: ``{path of a JSON file: the split it must decode to}``.

        Write one file per serializer version when you introduce it (``serializer.serialize(split)``
        dumped as JSON) and never change it: the kit checks that every file still decodes to its
        split and that one of them is what the current version writes.
        """
        return {}

    def key(self, record: Any) -> Hashable:
        """The comparison key of a record emitted by a reader or a Spark row (default: its tuple)."""
        return tuple(record)

    def close(self) -> None:
        """Release what the context created."""
