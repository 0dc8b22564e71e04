import asyncio
import multiprocessing
import os

from connector_base.async_io import worker_event_loop


async def _loop_id() -> int:
    return id(asyncio.get_running_loop())


def _child(queue) -> None:
    loop = worker_event_loop()
    result = asyncio.run_coroutine_threadsafe(_loop_id(), loop).result(5)
    queue.put((os.getpid(), result == id(loop)))


def test_one_loop_per_process_reused():
    loop = worker_event_loop()
    assert worker_event_loop() is loop
    assert asyncio.run_coroutine_threadsafe(_loop_id(), loop).result(5) == id(loop)


def test_a_forked_child_starts_its_own_loop_and_the_parent_keeps_its_own():
    parent = worker_event_loop()
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue,))
    proc.start()
    pid, ran = queue.get(timeout=20)
    proc.join(20)
    assert proc.exitcode == 0 and pid != os.getpid() and ran
    assert worker_event_loop() is parent
