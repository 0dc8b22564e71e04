"""``InferenceSample``: which records schema inference reads under ``samplingRatio``.

Spark samples the lines (``multiLine``: the files) of each partition with a seeded Bernoulli
sampler whose draws depend on how the files fall into partitions, so no other reader can pick the
same lines. files-unified samples deterministically instead: the ``k``-th record (counting from 0
across the files in the order inference reads them) is kept when ``ceil((k + 1) * ratio)`` exceeds
``ceil(k * ratio)``: evenly spaced, about ``ratio`` of the records, the first one always. With a
ratio of 1 or more (Spark: above 0.99) every record counts, as in Spark.
"""

from __future__ import annotations

import math

SPARK_EVERY_RECORD = 0.99
"""Spark reads every record when ``samplingRatio`` is above this."""


class InferenceSample:
    """Counts the records inference sees and says which of them the sample keeps."""

    def __init__(self, ratio: float) -> None:
        self.ratio = ratio
        self.every = ratio > SPARK_EVERY_RECORD
        self._seen = 0

    def keep(self) -> bool:
        """Whether the next record belongs to the sample."""
        if self.every:
            return True
        k = self._seen
        self._seen += 1
        return math.ceil((k + 1) * self.ratio) > math.ceil(k * self.ratio)
