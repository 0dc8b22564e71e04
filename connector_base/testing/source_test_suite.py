"""``SourceTestSuite``: the reusable checks of the connector test kit (pytest)."""

from __future__ import annotations

import collections
import json
import os
import random
import time
from collections.abc import Hashable, Iterable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import pytest

from connector_base.runtime import LocalRuntime
from connector_base.runtime.local_runtime import rows_of
from connector_base.serialization import dumps_canonical
from connector_base.source import Source
from connector_base.source_reader import InputStatus, SourceReader, SourceReaderContext
from connector_base.spark.enumerator_context import DRIVER_SUBTASK, DriverEnumeratorContext
from connector_base.testing.source_test_context import SourceTestContext

__all__ = ["SourceTestSuite"]

RECORDS = 600
ROUNDING_SLACK = 8
"""Records a micro-batch may hold beyond its record limit: the limit is spread over splits with the
arithmetic of Spark's Kafka source, which rounds a share below one record up (one extra record per
such split; the kit's contexts have fewer than 8 splits)."""


def _counter(ctx: SourceTestContext, records: Iterable[Any]) -> collections.Counter[Hashable]:
    return collections.Counter(ctx.key(r) for r in records)


def assert_exactly_once(ctx: SourceTestContext, actual: Iterable[Any], expected: Iterable[Any]) -> None:
    """Every expected record exactly once, nothing else."""
    got = _counter(ctx, actual)
    want = _counter(ctx, expected)
    missing = want - got
    extra = got - want
    assert not missing and not extra, (
        f"{sum(missing.values())} records missing (e.g. {list(missing)[:3]}), "
        f"{sum(extra.values())} unexpected or duplicated (e.g. {list(extra)[:3]})"
    )


class _ListOutput:
    """Collects what a reader emits, batches expanded into rows."""

    def __init__(self) -> None:
        self.rows: list[Any] = []

    def collect(self, record: Any) -> None:
        self.rows.append(record)

    def collect_batch(self, batch: Any) -> None:
        self.rows.extend(rows_of(batch))


def all_splits(source: Source[Any, Any, Any]) -> list[Any]:
    """Every split the source's enumerator hands out now (discovery run once, synchronously)."""
    context: DriverEnumeratorContext[Any] = DriverEnumeratorContext()
    enumerator = source.create_enumerator(context)
    try:
        enumerator.start()
        enumerator.add_reader(DRIVER_SUBTASK)
        context.run_due(force=True)
        splits = context.take_assigned()
        for _ in range(100_000):
            enumerator.handle_split_request(DRIVER_SUBTASK, "kit")
            new = context.take_assigned()
            if not new:
                break
            splits += new
        return splits
    finally:
        enumerator.close()


def _poll(reader: SourceReader[Any, Any], output: _ListOutput, deadline: float) -> InputStatus:
    """One ``poll_next``, waiting on ``is_available`` when nothing is there (until ``deadline``)."""
    while True:
        status = reader.poll_next(output)
        if status is not InputStatus.NOTHING_AVAILABLE:
            return status
        assert time.monotonic() < deadline, "the reader made no progress before the deadline"
        try:
            reader.is_available().result(timeout=0.5)
        except FutureTimeout:
            pass


def _read_to_end(
    source: Source[Any, Any, Any], splits: list[Any], timeout: float, config: dict[str, Any]
) -> list[Any]:
    reader = source.create_reader(SourceReaderContext(0, 1, config))
    output = _ListOutput()
    try:
        reader.start()
        reader.add_splits(splits)
        reader.notify_no_more_splits()
        deadline = time.monotonic() + timeout
        while _poll(reader, output, deadline) is not InputStatus.END_OF_INPUT:
            pass
    finally:
        reader.close()
    return output.rows


class SourceTestSuite:
    """Subclass in a connector's tests and provide a ``source_context`` fixture (and ``spark``).

    ``spark`` must be a session-scoped SparkSession fixture for the Spark checks; the local checks
    need no Spark. Timeouts are generous: brokers started by fixtures can be slow on small CI.
    """

    parallelism = 2

    @pytest.fixture
    def source_context(self) -> SourceTestContext:
        """Override: the connector's test context."""
        raise NotImplementedError("provide a source_context fixture returning a SourceTestContext")

    # --- local runtime ------------------------------------------------------------------------
    @pytest.mark.timeout(180)
    def test_bounded_read_is_exactly_once(self, source_context: SourceTestContext) -> None:
        """A bounded read returns every record exactly once."""
        expected = source_context.write_records(RECORDS)
        with LocalRuntime(
            source_context.create_source(continuous=False),
            self.parallelism,
            reader_config=source_context.reader_config,
        ) as rt:
            rt.start()
            actual = rt.wait_finished(timeout=120)
        assert_exactly_once(source_context, actual, expected)

    @pytest.mark.timeout(240)
    @pytest.mark.parametrize("seed", [1, 2, 3])
    def test_checkpoint_and_restore_lose_and_duplicate_nothing(
        self, source_context: SourceTestContext, tmp_path: Any, seed: int
    ) -> None:
        """Checkpoint at an arbitrary point, stop, restore from the file: each record exactly once."""
        rnd = random.Random(seed)
        expected = source_context.write_records(RECORDS)
        path = os.path.join(str(tmp_path), f"ckpt-{seed}.json")
        source = source_context.create_source(continuous=False)
        rt = LocalRuntime(
            source,
            self.parallelism,
            checkpoint_path=path,
            reader_config={**source_context.reader_config, "source.reader.element.queue.capacity": 1},
        )
        rt.start()
        rt.wait_for_records(rnd.randint(0, RECORDS // 2), timeout=120)
        rt.checkpoint()
        first = rt.committed()
        rt.stop()
        with LocalRuntime(
            source_context.create_source(continuous=False),
            self.parallelism,
            checkpoint_path=path,
            reader_config=source_context.reader_config,
        ) as rt2:
            rt2.start(restore_from=path)
            second = rt2.wait_finished(timeout=120)
        assert_exactly_once(source_context, first + second, expected)

    @pytest.mark.timeout(240)
    def test_splits_discovered_later_are_read(self, source_context: SourceTestContext) -> None:
        """A continuous source finds splits created while it runs."""
        if not source_context.supports_new_splits:
            pytest.skip(source_context.new_splits_gap)
        expected = source_context.write_records(RECORDS // 2)
        with LocalRuntime(
            source_context.create_source(continuous=True),
            self.parallelism,
            reader_config=source_context.reader_config,
        ) as rt:
            rt.start()
            rt.wait_for_records(len(expected), timeout=120)
            expected += source_context.add_split(RECORDS // 2)
            rt.wait_for_records(len(expected), timeout=120)
            import time

            time.sleep(0.5)  # anything extra (a duplicate) would show up now
            actual = rt.records()
        assert_exactly_once(source_context, actual, expected)

    @pytest.mark.timeout(240)
    def test_failed_reader_rereads_from_its_last_checkpoint(self, source_context: SourceTestContext) -> None:
        """A reader fails after a checkpoint: its splits go back and are re-read from there."""
        expected = source_context.write_records(RECORDS)
        with LocalRuntime(
            source_context.create_source(continuous=False),
            self.parallelism,
            reader_config={**source_context.reader_config, "source.reader.element.queue.capacity": 1},
        ) as rt:
            rt.start()
            rt.wait_for_records(RECORDS // 4, timeout=120)
            rt.checkpoint()
            rt.fail_reader(0)
            actual = rt.wait_finished(timeout=120)
        assert_exactly_once(source_context, actual, expected)

    @pytest.mark.timeout(180)
    def test_split_state_advances_with_every_emitted_batch(self, source_context: SourceTestContext) -> None:
        """Deterministic: after each poll that emitted records, the snapshot has moved; a snapshot
        taken in the middle of a split, restored into a new reader, yields exactly the rest."""
        expected = source_context.write_records(RECORDS)
        source = source_context.create_source(continuous=False)
        serializer = source.split_serializer
        splits = all_splits(source)
        assert splits, "the enumerator handed out no split for the records written"
        config = {**source_context.reader_config, "source.reader.element.queue.capacity": 1}
        reader = source.create_reader(SourceReaderContext(0, 1, config))
        output = _ListOutput()
        middle: tuple[list[Any], int] | None = None
        try:
            reader.start()
            reader.add_splits(splits)
            reader.notify_no_more_splits()
            before = sorted(serializer.dumps(s) for s in reader.snapshot_state(0))
            deadline = time.monotonic() + 120
            checkpoint = 0
            while True:
                emitted = len(output.rows)
                if _poll(reader, output, deadline) is InputStatus.END_OF_INPUT:
                    break
                if len(output.rows) == emitted:
                    continue
                checkpoint += 1
                snapshot = reader.snapshot_state(checkpoint)
                now = sorted(serializer.dumps(s) for s in snapshot)
                assert now != before, (
                    f"a poll emitted {len(output.rows) - emitted} records but no split's snapshot moved "
                    f"({now[:2]}): the RecordEmitter must advance the split state past every record it "
                    "emits (a restore would read them again)"
                )
                if middle is None and snapshot:
                    middle = (list(snapshot), len(output.rows))
                before = now
        finally:
            reader.close()
        assert_exactly_once(source_context, output.rows, expected)
        if middle is None:
            pytest.skip("every split was read whole in one fetch: no mid-split snapshot to restore from")
        rest = _read_to_end(
            source_context.create_source(continuous=False), middle[0], 120, dict(source_context.reader_config)
        )
        assert_exactly_once(source_context, output.rows[: middle[1]] + rest, expected)

    def test_split_serializer_round_trips_and_reads_its_golden_files(
        self, source_context: SourceTestContext
    ) -> None:
        """Every split survives serialize/deserialize as JSON; golden files of each version still decode."""
        source_context.write_records(RECORDS // 10)
        source = source_context.create_source(continuous=False)
        serializer = source.split_serializer
        for split in all_splits(source):
            text = dumps_canonical(serializer.serialize(split))
            assert serializer.deserialize(json.loads(text)) == split, f"{split} does not round-trip: {text}"
        golden = source_context.split_golden_files()
        if not golden:
            pytest.skip("the context lists no split golden files (split_golden_files)")
        current = []
        for path, split in golden.items():
            with open(path) as f:
                data = json.load(f)
            assert serializer.deserialize(data) == split, f"{path} no longer decodes to {split}"
            current.append(serializer.serialize(split) == data)
        assert any(current), (
            f"no golden file holds what version {serializer.version} writes: add one for the new version"
        )

    # --- Spark ------------------------------------------------------------------------------------
    @pytest.mark.timeout(300)
    def test_spark_batch_and_available_now_stream_agree(
        self, source_context: SourceTestContext, spark: Any, tmp_path: Any
    ) -> None:
        """A batch read and an AvailableNow streaming read return the same records, exactly once."""
        expected = source_context.write_records(RECORDS)
        fmt = source_context.spark_format
        batch = (
            spark.read.format(fmt).options(**source_context.spark_options(continuous=False)).load().collect()
        )
        assert_exactly_once(source_context, batch, expected)
        name = f"kit_{abs(hash(str(tmp_path))) % 10**8}"
        query = (
            spark.readStream.format(fmt)
            .options(**source_context.spark_options(continuous=True))
            .load()
            .writeStream.format("memory")
            .queryName(name)
            .option("checkpointLocation", os.path.join(str(tmp_path), "chk"))
            .trigger(availableNow=True)
            .start()
        )
        try:
            assert query.awaitTermination(240), "the AvailableNow query did not finish"
            assert query.exception() is None, query.exception()
            streamed = spark.sql(f"select * from {name}").collect()
        finally:
            query.stop()
        assert_exactly_once(source_context, streamed, expected)

    @pytest.mark.timeout(180)
    def test_invalid_options_fail_early_and_clearly(
        self, source_context: SourceTestContext, spark: Any
    ) -> None:
        """Each invalid option fails at ``load()`` with a message naming it."""
        cases = source_context.invalid_options()
        if not cases:
            pytest.skip("the context lists no invalid options")
        for options, fragment in cases:
            with pytest.raises(Exception) as info:
                spark.read.format(source_context.spark_format).options(**options).load().schema  # noqa: B018 - reading the schema is what must raise
            assert fragment in str(info.value), (
                f"{options}: expected {fragment!r} in: {str(info.value)[:500]}"
            )

    @pytest.mark.timeout(420)
    def test_spark_stream_honours_the_limit_and_restarts_from_its_checkpoint(
        self, source_context: SourceTestContext, spark: Any, tmp_path: Any
    ) -> None:
        """``AvailableNow`` with a per-trigger limit, stopped, more records written, restarted from
        the checkpoint: no micro-batch exceeds the limit (but for Spark's rounding, ``ROUNDING_SLACK``)
        and every record arrives exactly once."""
        option = source_context.max_records_option
        if option is None:
            pytest.skip(source_context.max_records_gap)
        limit = RECORDS // 8
        expected = source_context.write_records(RECORDS // 2)
        out, checkpoint = os.path.join(str(tmp_path), "out"), os.path.join(str(tmp_path), "chk")

        def run() -> list[int]:
            options = {
                **source_context.spark_options(continuous=True),
                option: source_context.max_records_value(limit),
            }
            query = (
                spark.readStream.format(source_context.spark_format)
                .options(**options)
                .load()
                .writeStream.format("parquet")
                .option("path", out)
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start()
            )
            try:
                assert query.awaitTermination(240), "the AvailableNow query did not finish"
                assert query.exception() is None, query.exception()
                return [int(p["numInputRows"]) for p in query.recentProgress]
            finally:
                query.stop()

        def check(label: str, rows: list[int]) -> None:
            most = limit + ROUNDING_SLACK
            assert rows and max(rows) <= most, f"{label}: micro-batches of {rows} rows, limit {limit}"
            assert sum(1 for r in rows if r) >= 2, f"{label}: {rows}: the limit should split the backlog"

        check("first run", run())
        expected += source_context.write_records(RECORDS // 2)
        check("after the restart", run())
        assert_exactly_once(source_context, spark.read.parquet(out).collect(), expected)
