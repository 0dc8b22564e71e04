"""Refusing a checkpoint written for more sequence partitions than the options name."""

from __future__ import annotations

from collections.abc import Iterable

from connector_base.spark.restore_check import source_changed

__all__ = ["check_sequence_restore"]


def check_sequence_restore(partitions: int, recorded: Iterable[int]) -> set[str]:
    """Fail when the offset holds partitions at or above ``partitions``."""
    beyond = {f"partition {p}" for p in recorded if p >= partitions}
    if beyond:
        raise source_changed("sequence", beyond, f"partitions={partitions}")
    return set()
