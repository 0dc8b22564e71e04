import threading

import pytest

from connector_base.async_io import OrderedStreamElementQueue, UnorderedStreamElementQueue
from connector_base.errors import InvalidOptionError


def test_ordered_queue_emits_the_completed_prefix_only():
    q = OrderedStreamElementQueue(3)
    a, b, c = (q.add(v, None) for v in "abc")
    assert not q.has_capacity()
    q.complete(b, ["B"], None)
    assert q.pop_ready() == [] and len(q) == 3
    q.complete(a, ["A"], None)
    assert [e.value for e in q.pop_ready()] == ["a", "b"]
    assert len(q) == 1 and q.has_capacity()
    q.complete(c, [], None)
    assert [e.value for e in q.pop_ready()] == ["c"]


def test_unordered_queue_emits_in_completion_order():
    q = UnorderedStreamElementQueue(3)
    a, b, c = (q.add(v, None) for v in "abc")
    q.complete(c, [], None)
    q.complete(a, [], None)
    assert [e.value for e in q.pop_ready()] == ["c", "a"]
    q.complete(b, [], None)
    assert [e.value for e in q.pop_ready()] == ["b"]


def test_a_full_queue_refuses_and_capacity_is_validated():
    q = UnorderedStreamElementQueue(1)
    q.add(1, None)
    with pytest.raises(RuntimeError, match="full"):
        q.add(2, None)
    with pytest.raises(InvalidOptionError, match="capacity"):
        OrderedStreamElementQueue(0)


def test_wait_ready_wakes_on_a_completion_from_another_thread():
    q = OrderedStreamElementQueue(2)
    e = q.add("x", None)
    threading.Timer(0.05, q.complete, (e, ["X"], None)).start()
    assert q.wait_ready(5.0)
    assert q.pop_ready()[0].results == ["X"]
