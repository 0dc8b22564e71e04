"""``BacklogStatus``: an enumerator's FLIP-309 backlog flag with hysteresis.

An enumerator that knows how much is waiting (pending files, unread bytes) feeds that amount in;
the status enters backlog at ``enter`` or more and leaves at ``exit`` or less, and tells the
context (``set_is_processing_backlog``) only when the flag changes.

Threading: the enumerator's thread (the coordinator), like every enumerator call.
"""

from __future__ import annotations

import logging
from typing import Any

from connector_base.enumerator import SplitEnumeratorContext
from connector_base.errors import InvalidOptionError

__all__ = ["BacklogStatus"]

LOG = logging.getLogger(__name__)


class BacklogStatus:
    """Hysteresis over one measure; reports changes to the enumerator context."""

    def __init__(self, context: SplitEnumeratorContext[Any], enter: int, exit_: int, what: str) -> None:
        if exit_ >= enter:
            raise InvalidOptionError(f"backlog exit threshold ({what})", exit_, f"a value below {enter}")
        self._context = context
        self._enter = enter
        self._exit = exit_
        self._what = what
        self._in_backlog: bool | None = None

    @property
    def in_backlog(self) -> bool:
        """The flag as last reported (False before any update)."""
        return bool(self._in_backlog)

    def update(self, waiting: int) -> None:
        """The amount waiting now; reports a change of the flag to the context."""
        now = waiting >= self._enter if not self._in_backlog else waiting > self._exit
        if now != self._in_backlog:
            if self._in_backlog is not None or now:
                LOG.info("%s backlog: %d %s waiting", "entering" if now else "leaving", waiting, self._what)
            self._in_backlog = now
            self._context.set_is_processing_backlog(now)
