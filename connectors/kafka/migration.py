"""Move a Spark ``format("kafka")`` streaming query to ``kafka-unified`` without re-reading or skipping.

A Spark checkpoint's ``offsets/<batchId>`` files are Spark's offset log (``OffsetSeqLog``), version 1:
the line ``v1``, one line of batch metadata (JSON), then one line per source of the query, in the
order the sources appear in the plan (``-`` for a source without an offset). The Kafka source writes
its offset as ``{"topic":{"partition":offset}}`` (``KafkaSourceOffset``): the offset to read next.
``commits/<batchId>`` exists once a batch finished. The last finished batch's offsets are where the
new query must start, so they become ``startingOffsets`` for ``kafka-unified``::

    python -m connectors.kafka.migration /path/to/checkpoint            # prints the JSON
    spark.readStream.format("kafka-unified").option("startingOffsets", that_json)...

Give the new query a new checkpoint location: the old one holds Spark's Kafka offsets, which
``kafka-unified`` does not read. Only local (or locally mounted) checkpoint directories are read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from connector_base import ConnectorError

__all__ = ["last_committed_batch", "main", "starting_offsets_from_checkpoint"]

OFFSET_LOG_VERSION = "v1"
NO_OFFSET = "-"


def _batch_ids(directory: Path) -> list[int]:
    if not directory.is_dir():
        return []
    return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit())


def last_committed_batch(checkpoint: str | Path) -> int:
    """The id of the last batch that has both an offsets and a commits entry."""
    root = Path(checkpoint)
    offsets = set(_batch_ids(root / "offsets"))
    if not offsets:
        raise ConnectorError(f"{root} is not a Spark streaming checkpoint: it has no offsets/<batchId> files")
    done = [b for b in _batch_ids(root / "commits") if b in offsets]
    if not done:
        raise ConnectorError(
            f"no batch of the query in {root} has finished (commits/ is empty): nothing was processed, "
            "so start kafka-unified with the old query's startingOffsets"
        )
    return done[-1]


def _is_kafka_offset(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(
            isinstance(parts, dict)
            and all(p.isdigit() and isinstance(o, int) and not isinstance(o, bool) for p, o in parts.items())
            for parts in value.values()
        )
    )


def starting_offsets_from_checkpoint(checkpoint: str | Path, source: int | None = None) -> str:
    """``startingOffsets`` JSON from the last finished batch of a Spark Kafka query's checkpoint.

    ``source`` is the position of the Kafka source among the query's sources (0 first); it may be
    left out when exactly one source line holds Kafka offsets.
    """
    root = Path(checkpoint)
    batch = last_committed_batch(root)
    path = root / "offsets" / str(batch)
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != OFFSET_LOG_VERSION:
        found = lines[0].strip() if lines else "an empty file"
        raise ConnectorError(
            f"{path}: expected Spark's offset log version {OFFSET_LOG_VERSION}, found {found!r}"
        )
    sources = lines[2:]
    parsed: list[Any] = []
    for line in sources:
        try:
            parsed.append(None if line.strip() == NO_OFFSET else json.loads(line))
        except json.JSONDecodeError:
            parsed.append(None)
    kafka = [i for i, v in enumerate(parsed) if _is_kafka_offset(v)]
    if source is None:
        if len(kafka) != 1:
            raise ConnectorError(
                f"{path} has {len(kafka)} Kafka source offsets (sources {kafka}); choose one with source=N"
            )
        source = kafka[0]
    if not 0 <= source < len(parsed) or not _is_kafka_offset(parsed[source]):
        raise ConnectorError(f"{path}: source {source} does not hold Kafka offsets (Kafka sources: {kafka})")
    offsets = parsed[source]
    return json.dumps(
        {t: {p: offsets[t][p] for p in sorted(offsets[t], key=int)} for t in sorted(offsets)},
        separators=(",", ":"),
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m connectors.kafka.migration CHECKPOINT [--source N]``: print ``startingOffsets``."""
    parser = argparse.ArgumentParser(
        prog="python -m connectors.kafka.migration",
        description="Print startingOffsets for kafka-unified from a Spark Kafka query's checkpoint.",
    )
    parser.add_argument("checkpoint", help="the old query's checkpointLocation (a local directory)")
    parser.add_argument("--source", type=int, default=None, help="the Kafka source's position (0 first)")
    args = parser.parse_args(argv)
    try:
        print(starting_offsets_from_checkpoint(args.checkpoint, args.source))
    except (ConnectorError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
