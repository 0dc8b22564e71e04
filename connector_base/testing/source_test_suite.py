"""``SourceTestSuite``: the reusable checks of the connector test kit (pytest)."""

from __future__ import annotations

import collections
import os
import random
from collections.abc import Hashable, Iterable
from typing import Any

import pytest

from connector_base.runtime import LocalRuntime
from connector_base.testing.source_test_context import SourceTestContext

__all__ = ["SourceTestSuite"]

RECORDS = 600


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
        with LocalRuntime(source_context.create_source(continuous=False), self.parallelism) as rt:
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
            reader_config={"source.reader.element.queue.capacity": 1},
        )
        rt.start()
        rt.wait_for_records(rnd.randint(0, RECORDS // 2), timeout=120)
        rt.checkpoint()
        first = rt.committed()
        rt.stop()
        with LocalRuntime(
            source_context.create_source(continuous=False), self.parallelism, checkpoint_path=path
        ) as rt2:
            rt2.start(restore_from=path)
            second = rt2.wait_finished(timeout=120)
        assert_exactly_once(source_context, first + second, expected)

    @pytest.mark.timeout(240)
    def test_splits_discovered_later_are_read(self, source_context: SourceTestContext) -> None:
        """A continuous source finds splits created while it runs."""
        if not source_context.supports_new_splits:
            pytest.skip("this connector's test context cannot create splits while running")
        expected = source_context.write_records(RECORDS // 2)
        with LocalRuntime(source_context.create_source(continuous=True), self.parallelism) as rt:
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
            reader_config={"source.reader.element.queue.capacity": 1},
        ) as rt:
            rt.start()
            rt.wait_for_records(RECORDS // 4, timeout=120)
            rt.checkpoint()
            rt.fail_reader(0)
            actual = rt.wait_finished(timeout=120)
        assert_exactly_once(source_context, actual, expected)

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
                spark.read.format(source_context.spark_format).options(**options).load().schema  # noqa: B018
            assert fragment in str(info.value), (
                f"{options}: expected {fragment!r} in: {str(info.value)[:500]}"
            )
