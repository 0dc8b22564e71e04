"""A stream reader that stands for one whose construction failed, so Spark shows the real error.

PySpark's streaming source runner builds the reader inside ``try: ... finally: reader.stop()``:
when ``streamReader()`` raises, ``reader`` is unbound and the ``finally`` raises
``UnboundLocalError``, which Spark reports last with the connector's error buried above it. The
bridge returns this reader instead; its first call from Spark (``initialOffset``, the read limit,
``prepareForTriggerAvailableNow``) raises the original error, when the query initializes its
sources and before any micro-batch runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
from typing_extensions import override

__all__ = ["FailedStreamReader"]


class FailedStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Raises ``error`` from every call Spark makes, except ``stop``."""

    def __init__(self, error: BaseException) -> None:
        self._error = error

    def _raise(self) -> NoReturn:
        raise self._error

    @override
    def initialOffset(self) -> dict[str, Any]:
        self._raise()

    @override
    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, Any]:
        self._raise()

    @override
    def getDefaultReadLimit(self) -> Any:
        self._raise()

    @override
    def prepareForTriggerAvailableNow(self) -> None:
        self._raise()

    @override
    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        self._raise()

    @override
    def read(self, partition: InputPartition) -> Iterator[Any]:
        self._raise()

    @override
    def commit(self, end: dict[str, Any]) -> None:
        self._raise()

    @override
    def stop(self) -> None:
        """Nothing was opened."""
