"""The kit's own test: a deliberately broken variant of the outbox source for each check, which
the kit must fail (each check is called directly and must raise, not pass or skip)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import override

from connector_base import ReaderOutput, SourceReaderContext, VersionedSerializer
from connector_base.serialization import Json
from connector_base.spark import Position, SplitPlanner
from connector_base.testing import SourceTestContext, SourceTestSuite
from unit_tests.tutorial_outbox.outbox_source import (
    UNBOUNDED,
    OutboxDataSource,
    OutboxOptions,
    OutboxPlanner,
    OutboxRecordEmitter,
    OutboxSource,
    OutboxSourceReader,
    OutboxSplit,
    OutboxSplitReader,
    OutboxSplitSerializer,
    OutboxSplitState,
)
from unit_tests.tutorial_outbox.test_outbox_connector_kit import OutboxTestContext

KIT = SourceTestSuite()


class _StuckEmitter(OutboxRecordEmitter):
    """Emits rows but never advances the split state."""

    @override
    def emit_records(
        self, elements: Iterable[Any], output: ReaderOutput[Any], split_state: OutboxSplitState
    ) -> None:
        for element in elements:
            output.collect(element)


class _StuckEmitterSource(OutboxSource):
    @override
    def create_reader(self, context: SourceReaderContext) -> OutboxSourceReader:
        path = self.options.path
        return OutboxSourceReader(lambda: OutboxSplitReader(path), _StuckEmitter(), context)


class _ForgetfulSerializer(OutboxSplitSerializer):
    """Drops the end of a split."""

    @override
    def to_json(self, value: OutboxSplit) -> Json:
        return {"t": value.table, "s": value.start, "e": UNBOUNDED}


class _NewVersionSerializer(OutboxSplitSerializer):
    """Writes a version 2 for which nobody added a golden file."""

    @property
    @override
    def version(self) -> int:
        return 2

    @override
    def to_json(self, value: OutboxSplit) -> Json:
        return {"table": value.table, "s": value.start, "e": value.end}

    @override
    def from_json(self, version: int, data: Json) -> OutboxSplit:
        if version == 2:
            return OutboxSplit(str(data["table"]), int(data["s"]), int(data["e"]))
        return super().from_json(version, data)


def _with_serializer(serializer: VersionedSerializer[OutboxSplit]) -> type[OutboxSource]:
    class _Source(OutboxSource):
        @property
        @override
        def split_serializer(self) -> VersionedSerializer[OutboxSplit]:
            return serializer

    return _Source


class _UnlimitedPlanner(OutboxPlanner):
    """A cut that ignores ``maxRecordsPerTrigger``."""

    @override
    def cut(
        self,
        split: OutboxSplit,
        start: Position,
        end: Position,
        max_records: int | None,
        max_bytes: int | None,
    ) -> Position:
        return end


class _UnlimitedDataSource(OutboxDataSource):
    @classmethod
    @override
    def name(cls) -> str:
        return "sqlite-outbox-unlimited"

    @override
    def create_planner(self, source: OutboxSource) -> SplitPlanner[OutboxSplit]:  # type: ignore[override]
        return _UnlimitedPlanner(source.options)


class _Context(OutboxTestContext):
    """The outbox context with a source class of the test's choosing."""

    source_class: type[OutboxSource] = OutboxSource

    @override
    def create_source(self, continuous: bool) -> OutboxSource:
        return self.source_class(OutboxOptions(self.path), bounded=not continuous)


@pytest.fixture
def context(tmp_path: Path) -> Iterator[_Context]:
    ctx = _Context(tmp_path / "outbox.db")
    yield ctx
    ctx.close()


def test_an_emitter_that_never_advances_the_state_fails(context: _Context) -> None:
    context.source_class = _StuckEmitterSource
    with pytest.raises(AssertionError, match="RecordEmitter must advance the split state"):
        KIT.test_split_state_advances_with_every_emitted_batch(context)


def test_a_serializer_that_loses_a_field_fails(context: _Context) -> None:
    context.source_class = _with_serializer(_ForgetfulSerializer())
    with pytest.raises(AssertionError, match="does not round-trip"):
        KIT.test_split_serializer_round_trips_and_reads_its_golden_files(context)


def test_a_new_serializer_version_without_a_golden_file_fails(context: _Context) -> None:
    context.source_class = _with_serializer(_NewVersionSerializer())
    with pytest.raises(AssertionError, match="no golden file holds what version 2 writes"):
        KIT.test_split_serializer_round_trips_and_reads_its_golden_files(context)


def test_a_context_without_add_split_says_what_to_implement(context: _Context, monkeypatch: Any) -> None:
    monkeypatch.setattr(_Context, "add_split", SourceTestContext.add_split)
    with pytest.raises(NotImplementedError, match=r"add_split\(count\).*supports_new_splits = False"):
        KIT.test_splits_discovered_later_are_read(context)


def test_a_cut_that_ignores_the_per_trigger_limit_fails(
    context: _Context, spark: Any, tmp_path: Path
) -> None:
    spark.dataSource.register(_UnlimitedDataSource)
    context.spark_format = _UnlimitedDataSource.name()
    with pytest.raises(AssertionError, match="micro-batches of .* rows, limit"):
        KIT.test_spark_stream_honours_the_limit_and_restarts_from_its_checkpoint(context, spark, tmp_path)
