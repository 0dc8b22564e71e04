"""``Source``: the factory of a FLIP-27 source, and its ``Boundedness``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from connector_base.split import SourceSplit

if TYPE_CHECKING:
    from connector_base.enumerator import SplitEnumerator, SplitEnumeratorContext
    from connector_base.serialization import VersionedSerializer
    from connector_base.source_reader import SourceReader, SourceReaderContext

__all__ = ["Boundedness", "Source"]

T = TypeVar("T")
"""The record type a reader emits."""
SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""
EnumStateT = TypeVar("EnumStateT")
"""The enumerator's checkpoint type."""


class Boundedness(Enum):
    """Whether a source ends by itself."""

    BOUNDED = "bounded"
    CONTINUOUS_UNBOUNDED = "continuous_unbounded"


class Source(ABC, Generic[T, SplitT, EnumStateT]):
    """A factory for the enumerator and the readers of one source, plus their serializers.

    A ``Source`` is a plain value (it is pickled to executors): keep clients out of it and create
    them in the enumerator or reader it builds.
    """

    @property
    @abstractmethod
    def boundedness(self) -> Boundedness:
        """Whether this source ends by itself."""

    @abstractmethod
    def create_enumerator(
        self, context: SplitEnumeratorContext[SplitT]
    ) -> SplitEnumerator[SplitT, EnumStateT]:
        """Create a fresh enumerator (no checkpoint)."""

    @abstractmethod
    def restore_enumerator(
        self, context: SplitEnumeratorContext[SplitT], checkpoint: EnumStateT
    ) -> SplitEnumerator[SplitT, EnumStateT]:
        """Create an enumerator that continues from ``checkpoint``."""

    @abstractmethod
    def create_reader(self, context: SourceReaderContext) -> SourceReader[T, SplitT]:
        """Create a reader; splits arrive later through ``add_splits``."""

    @property
    @abstractmethod
    def split_serializer(self) -> VersionedSerializer[SplitT]:
        """The serializer of splits (checkpoints, Spark offsets and partitions)."""

    @property
    @abstractmethod
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[EnumStateT]:
        """The serializer of the enumerator's checkpoint."""

    def describe(self) -> dict[str, Any]:
        """A short, secret-free description for logs."""
        return {"source": type(self).__name__, "boundedness": self.boundedness.value}
