"""Synchronization primitives shared by fetcher threads and the task thread."""

from connector_base.synchronization.future_completing_blocking_queue import FutureCompletingBlockingQueue

__all__ = ["FutureCompletingBlockingQueue"]
