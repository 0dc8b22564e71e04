"""``sequence-unified``: the worked example connector of the "write a source for your own system" tutorial.

It reads an imaginary in-house system that holds, per partition ``p``, the records
``(p, i, "p-i")`` for ``i = 0, 1, 2, ...``; in continuous mode a partition grows by
``rowsPerSecond`` rows each second, like Spark's ``rate`` source. Records are a pure function of
their position, so replay is deterministic. Every piece a real connector needs is here: a split
(``SequenceSplit``), an enumerator, a ``SplitReader``, a ``RecordEmitter``, the ``Source``, a
``SplitPlanner`` for Spark and a thin PySpark adapter (``SequenceDataSource``).
"""

from connectors.sequence.datasource import SequenceDataSource
from connectors.sequence.enumerator import SequenceEnumerator
from connectors.sequence.options import SequenceOptions
from connectors.sequence.source import SequenceSource
from connectors.sequence.split import SequenceSplit, SequenceSplitSerializer, SequenceSplitState
from connectors.sequence.split_reader import SequenceSplitReader

__all__ = [
    "SequenceDataSource",
    "SequenceEnumerator",
    "SequenceOptions",
    "SequenceSource",
    "SequenceSplit",
    "SequenceSplitReader",
    "SequenceSplitSerializer",
    "SequenceSplitState",
]
