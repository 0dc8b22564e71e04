"""``bulk_read_gc`` raises the first-generation threshold while any user is inside, then restores it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from connector_base.gc_tuning import BULK_GEN0_THRESHOLD, bulk_read_gc


@pytest.fixture(autouse=True)
def _keep_thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_raises_and_restores() -> None:
    with bulk_read_gc():
        assert gc.get_threshold() == (BULK_GEN0_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_nested_and_concurrent_users_restore_once_the_last_leaves() -> None:
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with bulk_read_gc():
            inside.set()
            leave.wait(10)

    t = threading.Thread(target=other)
    with bulk_read_gc():
        t.start()
        assert inside.wait(10)
    assert gc.get_threshold()[0] == BULK_GEN0_THRESHOLD  # the other thread is still reading
    leave.set()
    t.join(10)
    assert gc.get_threshold() == (700, 10, 10)


def test_restores_after_an_error_and_leaves_higher_or_disabled_settings_alone() -> None:
    with pytest.raises(RuntimeError), bulk_read_gc():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)
    gc.set_threshold(100_000, 10, 10)
    with bulk_read_gc():
        assert gc.get_threshold()[0] == 100_000
    gc.set_threshold(0, 10, 10)  # automatic collection switched off by the application
    with bulk_read_gc():
        assert gc.get_threshold()[0] == 0


def test_bulk_gc_decorator_raises_the_threshold_inside_and_keeps_the_signature() -> None:
    import inspect

    from connector_base.gc_tuning import BULK_GEN0_THRESHOLD, bulk_gc

    @bulk_gc
    def step(start: int, limit: int = 2) -> int:
        return gc.get_threshold()[0]

    before = gc.get_threshold()
    assert step(1) == max(before[0], BULK_GEN0_THRESHOLD) and gc.get_threshold() == before
    assert list(inspect.signature(step).parameters) == ["start", "limit"]  # Spark inspects arity


def test_imported_objects_are_frozen_once_per_set_of_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark's reused worker collects after every task; frozen objects are not traversed then."""
    import sys
    import types
    import weakref

    from connector_base import gc_tuning

    class Node:
        cycle: object = None

    monkeypatch.setattr(gc_tuning, "_frozen_at", None)
    try:
        garbage = Node()
        garbage.cycle = garbage  # a cycle nobody references once the name is gone
        gone = weakref.ref(garbage)
        del garbage
        assert gc_tuning.freeze_imported_objects()
        frozen = gc.get_freeze_count()
        assert frozen > 1_000 and gone() is None  # the cycle was collected first, not frozen
        # frozen objects that other threads free leave the count (a CI lane's background clients),
        # so it never grows without a freeze but may shrink by a few
        assert not gc_tuning.freeze_imported_objects()  # nothing imported since: no collection
        assert gc.get_freeze_count() <= frozen
        monkeypatch.setitem(sys.modules, "imported_by_a_task", types.ModuleType("imported_by_a_task"))
        kept = [[i] for i in range(10_000)]  # tracked objects made since the last freeze
        assert gc_tuning.freeze_imported_objects()
        assert gc.get_freeze_count() >= frozen + len(kept) // 2
    finally:
        gc.unfreeze()


def test_planning_freezes_only_where_spark_collects_after_each_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark's reused workers (``SPARK_REUSE_WORKER``) collect after every task: planning there
    freezes; a driver, a test or the local runtime collects nothing after it, so nothing is paid."""
    from connector_base import gc_tuning

    monkeypatch.setattr(gc_tuning, "_frozen_at", None)
    try:
        monkeypatch.delenv("SPARK_REUSE_WORKER", raising=False)
        assert not gc_tuning.freeze_imported_objects_in_reused_worker()
        assert gc_tuning._frozen_at is None
        monkeypatch.setenv("SPARK_REUSE_WORKER", "1")
        assert gc_tuning.freeze_imported_objects_in_reused_worker()
        assert gc.get_freeze_count() > 1_000
        assert not gc_tuning.freeze_imported_objects_in_reused_worker()  # nothing imported since
    finally:
        gc.unfreeze()
