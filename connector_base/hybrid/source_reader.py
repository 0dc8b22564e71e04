"""``HybridSourceReader``: reads each stage's splits with that stage's reader, stage by stage."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from typing_extensions import override

from connector_base.hybrid.split import HybridSourceSplit
from connector_base.hybrid.stage import conform_batch
from connector_base.hybrid.stages import HybridStages
from connector_base.source_reader import InputStatus, ReaderOutput, SourceReader, SourceReaderContext
from connector_base.spark.arrow_output import ArrowBatchOutput

__all__ = ["HybridSourceReader"]


@dataclass(slots=True)
class _StageReader:
    reader: SourceReader[Any, Any]
    output: ArrowBatchOutput | None
    """The child's own output when its rows must be conformed (``None``: its schema is the hybrid one)."""
    ended: bool = False


class HybridSourceReader(SourceReader[Any, HybridSourceSplit]):
    """Hands each split to its stage's child reader and reads the stages in order.

    Rows of a stage whose schema is not the hybrid one (every stage but the last, on Spark) are
    conformed to it (by name, cast, missing columns null) on their way out.

    Threading: the task thread only, as every reader; the child readers own their fetcher threads.
    """

    def __init__(self, source: HybridStages, context: SourceReaderContext) -> None:
        self._source = source
        self._context = context
        self._stages: dict[int, _StageReader] = {}
        self._no_more_splits = False

    def _stage_reader(self, stage: int) -> _StageReader:
        if stage not in self._stages:
            reader = self._source.child(stage).create_reader(self._context)
            reader.start()
            read_schema = self._source.stages[stage].read_schema
            same = read_schema.equals(self._source.schema)
            self._stages[stage] = _StageReader(reader, None if same else ArrowBatchOutput(read_schema))
        return self._stages[stage]

    @override
    def start(self) -> None:
        """Child readers start when their first split arrives."""

    @override
    def add_splits(self, splits: Sequence[HybridSourceSplit]) -> None:
        by_stage: dict[int, list[Any]] = {}
        for s in splits:
            by_stage.setdefault(s.stage, []).append(s.split)
        for stage, children in sorted(by_stage.items()):
            self._stage_reader(stage).reader.add_splits(children)

    @override
    def notify_no_more_splits(self) -> None:
        self._no_more_splits = True
        for stage in self._stages.values():
            stage.reader.notify_no_more_splits()

    def _current(self) -> _StageReader | None:
        for _index, stage in sorted(self._stages.items()):
            if not stage.ended:
                return stage
        return None

    def _forward(self, stage: _StageReader, output: ReaderOutput[Any], finished: bool) -> None:
        if stage.output is None:
            return
        batches = stage.output.finish() if finished else stage.output.drain()
        for batch in batches:
            output.collect_batch(conform_batch(batch, self._source.schema))

    @override
    def poll_next(self, output: ReaderOutput[Any]) -> InputStatus:
        stage = self._current()
        if stage is None:
            return InputStatus.END_OF_INPUT if self._no_more_splits else InputStatus.NOTHING_AVAILABLE
        status = stage.reader.poll_next(stage.output if stage.output is not None else output)
        ended = status is InputStatus.END_OF_INPUT
        self._forward(stage, output, ended)
        if not ended:
            return status
        stage.ended = True
        if self._current() is not None:
            return InputStatus.MORE_AVAILABLE
        return InputStatus.END_OF_INPUT if self._no_more_splits else InputStatus.NOTHING_AVAILABLE

    @override
    def is_available(self) -> Future[None]:
        stage = self._current()
        if stage is not None:
            return stage.reader.is_available()
        done: Future[None] = Future()
        done.set_result(None)
        return done

    @override
    def snapshot_state(self, checkpoint_id: int) -> list[HybridSourceSplit]:
        return [
            HybridSourceSplit(index, s)
            for index, stage in sorted(self._stages.items())
            for s in stage.reader.snapshot_state(checkpoint_id)
        ]

    @override
    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        for stage in self._stages.values():
            stage.reader.notify_checkpoint_complete(checkpoint_id)

    @override
    def close(self) -> None:
        stages, self._stages = self._stages, {}
        errors = []
        for stage in stages.values():
            try:
                stage.reader.close()
            except Exception as e:  # close every reader, then report the first failure
                errors.append(e)
        if errors:
            raise errors[0]
