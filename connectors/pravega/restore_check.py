"""Refusing a checkpoint written for other Pravega streams than the options name."""

from __future__ import annotations

from collections.abc import Mapping

from connector_base.spark.restore_check import source_changed
from connectors.pravega.enumerator import PravegaEnumeratorState
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.split import PravegaSegmentSplit

__all__ = ["check_pravega_restore"]


def check_pravega_restore(
    options: PravegaSourceOptions, state: PravegaEnumeratorState, splits: Mapping[str, PravegaSegmentSplit]
) -> set[str]:
    """Fail when the offset holds segments of a stream the options do not read."""
    selected = set(options.streams)
    recorded = set(state.segments) | {(s.scope, s.stream) for s in splits.values()}
    others = {f"{scope}/{stream}" for scope, stream in recorded if (scope, stream) not in selected}
    if others:
        now = ",".join(f"{scope}/{stream}" for scope, stream in options.streams)
        raise source_changed("the Pravega streams", others, f"stream={now}")
    return set()
