"""The hybrid source's enumerator, planner, reader and serializers, over two bounded sequence sources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from connector_base import Source
from connector_base.hybrid import (
    HybridEnumeratorStateSerializer,
    HybridSource,
    HybridSourceSplit,
    HybridSplitEnumerator,
    HybridSplitPlanner,
    HybridStage,
    SwitchStart,
    conform_batch,
    conformance_problems,
)
from connector_base.spark import SplitPlanner, to_arrow_schema
from connector_base.spark.partition_reader import read_splits_as_arrow
from connector_base.testing.recording_enumerator_context import RecordingEnumeratorContext
from connectors.sequence import SequenceSplit
from connectors.sequence.datasource import SCHEMA
from connectors.sequence.options import SequenceOptions
from connectors.sequence.source import SequencePlanner, SequenceSource

GOLDEN = Path(__file__).parents[1] / "golden"
TARGET = pa.schema(
    [
        pa.field("partition", pa.int32()),
        pa.field("index", pa.int64()),
        pa.field("value", pa.binary()),
        pa.field("note", pa.string()),
    ]
)


class _SequenceStage(HybridStage):
    def __init__(self, name: str, partitions: int, rows: int, schema: pa.Schema) -> None:
        self._name, self._schema = name, schema
        self._options = SequenceOptions(partitions=partitions, rows_per_partition=rows)

    @property
    def name(self) -> str:
        return self._name

    @property
    def read_schema(self) -> pa.Schema:
        return self._schema

    def source(self, starting_timestamp_ms: int | None = None) -> Source[Any, Any, Any]:
        return SequenceSource(self._options)

    def planner(self, source: Source[Any, Any, Any]) -> SplitPlanner[Any]:
        assert isinstance(source, SequenceSource)
        return SequencePlanner(source.options)


def _source(streaming: bool) -> HybridSource:
    stages = [
        _SequenceStage("history", 2, 5, to_arrow_schema(SCHEMA)),
        _SequenceStage("live", 1, 3, to_arrow_schema(SCHEMA)),
    ]
    return HybridSource(stages, TARGET, SwitchStart.configured(), streaming)


def _assigned(context: RecordingEnumeratorContext[HybridSourceSplit]) -> list[HybridSourceSplit]:
    return [s for splits in context.assigned.values() for s in splits]


def _started(source: HybridSource, state: Any = None) -> tuple[HybridSplitEnumerator, Any]:
    context: RecordingEnumeratorContext[HybridSourceSplit] = RecordingEnumeratorContext()
    enumerator = source.restore_enumerator(context, state) if state else source.create_enumerator(context)
    enumerator.start()
    enumerator.add_reader(0)
    enumerator.handle_split_request(0)
    return enumerator, context


def test_streaming_switches_only_when_the_stage_is_read_and_holds_the_next_stage_once() -> None:
    source = _source(streaming=True)
    planner = HybridSplitPlanner(source)
    enumerator, context = _started(source)
    first = _assigned(context)
    assert [s.split_id for s in first] == ["0/p0", "0/p1"] and context.backlog_reports == [True]
    assert not planner.is_finished(first[0], 4)
    enumerator.handle_split_request(0)
    assert enumerator.stage == 0 and context.no_more_splits == set()
    assert all(planner.is_finished(s, 5) for s in first)
    enumerator.handle_split_request(0)
    assert enumerator.stage == 1 and context.backlog_reports == [True, False]
    live = [s for s in _assigned(context) if s.stage == 1]
    assert [s.split_id for s in live] == ["1/p0"] and context.no_more_splits == {0}
    # the switch is a micro-batch of its own: held at the start until the bridge asks again
    assert planner.start_position(live[0]) == 0
    assert planner.end_positions({"1/p0": (live[0], 0)}) == {"1/p0": 0}
    assert planner.target_positions({"1/p0": (live[0], 0)}) == {"1/p0": 3}
    assert not planner.is_finished(live[0], 0)
    assert planner.end_positions({"1/p0": (live[0], 0)}) == {"1/p0": 3}
    assert planner.range_splits(live[0], 0, 3) == [HybridSourceSplit(1, SequenceSplit(0, 0, 3))]


def test_a_restored_enumerator_continues_in_its_stage() -> None:
    source = _source(streaming=True)
    planner = HybridSplitPlanner(source)
    enumerator, context = _started(source)
    first = _assigned(context)
    planner.is_finished(first[0], 5)
    serializer = source.enumerator_checkpoint_serializer
    state = serializer.deserialize(json.loads(json.dumps(serializer.serialize(enumerator.snapshot_state(1)))))
    assert state.stage == 0 and state.finished == ["0/p0"] and len(state.stage_splits) == 2
    again = _source(streaming=True)
    restored, context = _started(again, state)
    assert restored.stage == 0 and _assigned(context) == []
    HybridSplitPlanner(again).is_finished(first[1], 5)
    restored.handle_split_request(0)
    assert restored.stage == 1 and [s.split_id for s in _assigned(context)] == ["1/p0"]
    state = serializer.deserialize(serializer.serialize(restored.snapshot_state(2)))
    assert state.stage == 1 and state.stage_splits == [] and state.starting_timestamps == {1: None}


def test_batch_switches_once_the_stage_has_handed_out_its_splits() -> None:
    enumerator, context = _started(_source(streaming=False))
    enumerator.handle_split_request(0)
    assert enumerator.stage == 1
    assert [s.split_id for s in _assigned(context)] == ["0/p0", "0/p1", "1/p0"]


def test_the_reader_reads_stage_by_stage_and_conforms_earlier_rows() -> None:
    source = _source(streaming=False)
    splits = [
        HybridSourceSplit(1, SequenceSplit(0, 0, 3)),
        HybridSourceSplit(0, SequenceSplit(0, 0, 5)),
        HybridSourceSplit(0, SequenceSplit(1, 2, 5)),
    ]
    table = pa.Table.from_batches(list(read_splits_as_arrow(source, splits, TARGET)), schema=TARGET)
    rows = table.to_pylist()
    assert len(rows) == 11 and table.schema == TARGET
    assert all(r["note"] is None and isinstance(r["value"], bytes) for r in rows)
    assert [r["index"] for r in rows[-3:]] == [0, 1, 2], "the last stage comes after the first"


def test_conformance_names_extra_columns_and_impossible_casts() -> None:
    source = pa.schema(
        [pa.field("value", pa.string()), pa.field("extra", pa.int64()), pa.field("note", pa.list_(pa.int8()))]
    )
    problems = conformance_problems(source, TARGET)
    assert "column 'extra' is not in the hybrid schema" in problems
    assert any("'note'" in p and "cannot be cast" in p for p in problems)
    batch = pa.record_batch({"value": ["a"], "index": [7]})
    assert conform_batch(batch, TARGET).to_pylist() == [
        {"partition": None, "index": 7, "value": b"a", "note": None}
    ]


def test_switch_start_strategies() -> None:
    assert SwitchStart.derived("ts", overlap_ms=5000).starting_timestamp(1_000_000) == 995_001
    assert SwitchStart.timestamp(42).starting_timestamp(None) == 42
    assert SwitchStart.configured().starting_timestamp(1_000_000) is None
    with pytest.raises(ValueError):
        SwitchStart.derived("ts", overlap_ms=-1)


def test_v1_golden_files_read_and_rewrite_identically() -> None:
    source = _source(streaming=True)
    split_data = json.loads((GOLDEN / "hybrid_split_v1.json").read_text())
    split = source.split_serializer.deserialize(split_data)
    assert split == HybridSourceSplit(1, SequenceSplit(0, 2, 3))
    assert source.split_serializer.serialize(split) == split_data
    state_data = json.loads((GOLDEN / "hybrid_enumerator_state_v1.json").read_text())
    state = HybridEnumeratorStateSerializer().deserialize(state_data)
    assert state.stage == 1 and state.starting_timestamps == {1: 1763859600001}
    assert HybridEnumeratorStateSerializer().serialize(state) == state_data
