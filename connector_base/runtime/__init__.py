"""The local runtime: one enumerator and N readers on threads, checkpoints to a JSON file."""

from connector_base.runtime.local_runtime import LocalRuntime, RuntimeCheckpoint

__all__ = ["LocalRuntime", "RuntimeCheckpoint"]
