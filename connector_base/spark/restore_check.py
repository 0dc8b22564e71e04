"""Checking a restored offset against the query's options: the source must not have changed.

A streaming query restarted on the same checkpoint with another source (another topic, stream,
assignment or path) would otherwise go on reading the splits recorded in the offset, or skip the
new source's data. A planner that can tell implements ``check_restored``; the bridge calls it when
it rebuilds the driver plan from an offset, before anything is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from connector_base.errors import ConnectorError
from connector_base.split import SourceSplit

__all__ = ["SourceChangedError", "SupportsRestoreCheck", "check_restored", "source_changed"]

SHOWN = 5
"""How many of the checkpoint's sources a message lists."""


class SourceChangedError(ConnectorError):
    """The checkpoint was written for another source than the options now name."""


@runtime_checkable
class SupportsRestoreCheck(Protocol):
    """A planner that checks a restored offset against its options."""

    def check_restored(self, enumerator_state: Any, splits: Mapping[str, SourceSplit]) -> set[str]:
        """Raise ``SourceChangedError`` if the offset belongs to another source.

        Returns the ids of splits to forget instead (where the options allow it, as Kafka's
        ``failOnDataLoss=false``); an empty set when everything matches.
        """


def check_restored(planner: object, enumerator_state: Any, splits: Mapping[str, SourceSplit]) -> set[str]:
    """Run the planner's check when it has one; the ids of splits to forget."""
    if isinstance(planner, SupportsRestoreCheck):
        return planner.check_restored(enumerator_state, splits)
    return set()


def source_changed(what: str, recorded: Iterable[str], now: str, remedy: str = "") -> SourceChangedError:
    """The error for a checkpoint whose ``recorded`` sources the options (``now``) no longer select."""
    names = sorted(set(recorded))
    shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
    return SourceChangedError(
        f"the checkpoint was written for another source: it holds positions of {what} {shown}, which "
        f"the options no longer select ({now}). A checkpoint belongs to one source: restore the "
        f"previous options, or start the query with a new checkpointLocation{remedy}"
    )
