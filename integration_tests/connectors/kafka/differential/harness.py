"""Run one read through Spark's ``kafka`` and ``kafka-unified``, and list how the outcomes differ.

An :class:`Outcome` is what a user sees: the rows (every column), for streaming the records per
partition of every micro-batch, or the error and the stage it came at (``load()``, the batch action,
``start()``, the first or a later micro-batch). :func:`compare` lists the differences that matter:
rows or batch composition not equal, one side failing where the other does not, ours failing later
than Spark's, or our error naming neither the option at fault nor the record.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "SPARK",
    "OURS",
    "Difference",
    "Outcome",
    "compare",
    "error_text",
    "run_batch",
    "run_stream",
]

SPARK = "kafka"
OURS = "kafka-unified"

BATCH_STAGES = ("load", "action")
STREAM_STAGES = ("load", "start", "first batch", "later batch")
STREAM_TIMEOUT_S = 120.0


@dataclass
class Outcome:
    """What one format did with one example."""

    stage: str | None = None  # where it failed; None when it succeeded
    error: str = ""
    schema: list[tuple[str, str]] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    batches: list[dict[str, int]] = field(default_factory=list)  # "topic/partition" -> records

    @property
    def ok(self) -> bool:  # noqa: D102
        return self.stage is None

    def summary(self) -> str:
        """One line for reports."""
        if not self.ok:
            return f"failed at {self.stage}: {self.error[:300]}"
        shown = f", batches {self.batches}" if self.batches else ""
        return f"{len(self.rows)} rows{shown}"


@dataclass(frozen=True)
class Difference:
    """One way the two outcomes differ."""

    kind: str  # rows, schema, batches, fails-only-ours, fails-only-spark, later, unnamed
    detail: str


_RAISED = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$")


def error_text(e: BaseException) -> str:
    """Spark's error line, and for a Python source the exception its traceback ends with."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    if not lines:
        return type(e).__name__
    raised = [m for m in (_RAISED.match(ln) for ln in lines) if m]
    head = lines[0][:300]
    if "Traceback" in str(e) and raised:
        name, message = raised[-1].groups()
        return f"{head} ... {name}: {message}"[:1500]
    return " ".join(lines[:3])[:1500]


def _value(v: Any) -> Any:
    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, list):
        return tuple(_value(x) for x in v)
    if hasattr(v, "asDict"):
        return tuple(_value(x) for x in v)
    return v


def _row(r: Any) -> tuple[Any, ...]:
    return tuple(_value(v) for v in r)


def _sorted_rows(rows: list[Any], names: list[str]) -> list[tuple[Any, ...]]:
    t, p, o = names.index("topic"), names.index("partition"), names.index("offset")
    return sorted((_row(r) for r in rows), key=lambda r: (r[t], r[p], r[o]))


def _reader(spark: Any, fmt: str, options: Mapping[str, str], streaming: bool) -> Any:
    base = spark.readStream if streaming else spark.read
    return base.format(fmt).options(**options)


WORKER_START_TIMEOUT = "Python worker failed to connect back"
"""Spark's 10 s limit on a new Python worker's start (``PythonWorkerFactory``, no setting changes it),
hit on loaded machines: not an outcome of the source, so the run is made again (as ``make test``'s
``RERUN`` does for whole tests); a long run hit it once in 141 streaming examples at load ~10."""
WORKER_START_ATTEMPTS = 3
WORKER_START_PAUSE_S = 5.0
"""Between attempts, as ``make test``'s ``--reruns-delay``."""


def _again_on_worker_start(run: Callable[[], Outcome]) -> Outcome:
    out = run()
    for _ in range(WORKER_START_ATTEMPTS - 1):
        if WORKER_START_TIMEOUT not in out.error:
            break
        time.sleep(WORKER_START_PAUSE_S)
        out = run()
    return out


def run_batch(spark: Any, fmt: str, options: Mapping[str, str]) -> Outcome:
    """``spark.read.format(fmt).options(...).load().collect()``."""
    return _again_on_worker_start(lambda: _run_batch_once(spark, fmt, options))


def _run_batch_once(spark: Any, fmt: str, options: Mapping[str, str]) -> Outcome:
    out = Outcome()
    try:
        df = _reader(spark, fmt, options, streaming=False).load()
    except Exception as e:  # the error is the observation
        return Outcome(stage="load", error=error_text(e))
    out.schema = [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
    try:
        rows = df.collect()
    except Exception as e:
        return Outcome(stage="action", error=error_text(e), schema=out.schema)
    out.rows = _sorted_rows(rows, df.columns)
    return out


def run_stream(
    spark: Any,
    fmt: str,
    options: Mapping[str, str],
    trigger: Mapping[str, Any],
    idle_s: float = 3.0,
) -> Outcome:
    """``readStream`` into ``foreachBatch``, recording every micro-batch's records per partition.

    ``Trigger.AvailableNow`` runs until the query ends; a processing-time trigger until no new
    batch has come for ``idle_s`` and Spark reports no data available (the topic is not written
    while an example runs).
    """
    return _again_on_worker_start(lambda: _run_stream_once(spark, fmt, options, trigger, idle_s))


def _run_stream_once(
    spark: Any, fmt: str, options: Mapping[str, str], trigger: Mapping[str, Any], idle_s: float
) -> Outcome:
    try:
        df = _reader(spark, fmt, options, streaming=True).load()
    except Exception as e:
        return Outcome(stage="load", error=error_text(e))
    out = Outcome(schema=[(f.name, f.dataType.simpleString()) for f in df.schema.fields])
    names = df.columns
    collected: list[tuple[int, list[Any]]] = []

    def on_batch(batch: Any, batch_id: int) -> None:
        collected.append((batch_id, batch.collect()))

    checkpoint = os.path.join(tempfile.gettempdir(), f"diff-kafka-{uuid.uuid4().hex[:12]}")
    try:
        try:
            query = (
                df.writeStream.foreachBatch(on_batch)
                .option("checkpointLocation", checkpoint)
                .trigger(**trigger)
                .start()
            )
        except Exception as e:
            return Outcome(stage="start", error=error_text(e), schema=out.schema)
        error = _await(query, trigger, collected, idle_s)
    finally:
        _remove(checkpoint)
    rows: list[Any] = []
    for _id, batch_rows in sorted(collected, key=lambda c: c[0]):
        if not batch_rows:
            continue  # an empty micro-batch (Spark runs one when only offsets moved)
        t, p = names.index("topic"), names.index("partition")
        out.batches.append(dict(Counter(f"{r[t]}/{r[p]}" for r in batch_rows)))
        rows.extend(batch_rows)
    out.rows = _sorted_rows(rows, names)
    if error is not None:
        out.stage = "first batch" if not out.batches else "later batch"
        out.error = error
    return out


def _await(query: Any, trigger: Mapping[str, Any], collected: list[Any], idle_s: float) -> str | None:
    deadline = time.monotonic() + STREAM_TIMEOUT_S
    try:
        if trigger.get("availableNow"):
            query.awaitTermination(STREAM_TIMEOUT_S)
        else:
            seen, since = -1, time.monotonic()
            while time.monotonic() < deadline and query.isActive:
                if len(collected) != seen:
                    seen, since = len(collected), time.monotonic()
                status = query.status
                if (
                    query.lastProgress is not None
                    and time.monotonic() - since >= idle_s
                    and not status.get("isDataAvailable")
                    and not status.get("isTriggerActive")
                ):
                    break
                time.sleep(0.2)
        error = query.exception()
        if error is None and query.isActive and trigger.get("availableNow"):
            return f"did not end within {STREAM_TIMEOUT_S:.0f} s"
        return None if error is None else error_text(error)
    except Exception as e:
        return error_text(e)
    finally:
        try:
            query.stop()
        except Exception:  # a failed query may refuse to stop; it is stopped either way
            pass


def _remove(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _stage_rank(stage: str | None) -> int:
    if stage is None:
        return 99
    for order in (BATCH_STAGES, STREAM_STAGES):
        if stage in order:
            return order.index(stage)
    return 50


def compare(
    spark_out: Outcome,
    ours: Outcome,
    suspects: tuple[str, ...],
    names_ok: Callable[[str], bool] | None = None,
) -> list[Difference]:
    """The differences between Spark's outcome and ours.

    ``suspects`` are the options whose drawn value may be invalid: when ours fails, its message
    must name one of them, or ``names_ok(message)`` must hold (it names the topic or the record).
    """
    diffs: list[Difference] = []
    if spark_out.ok and ours.ok:
        if spark_out.schema != ours.schema:
            diffs.append(Difference("schema", f"Spark {spark_out.schema} vs ours {ours.schema}"))
        if spark_out.rows != ours.rows:
            diffs.append(Difference("rows", _rows_diff(spark_out.rows, ours.rows)))
        if spark_out.batches != ours.batches:
            diffs.append(Difference("batches", f"Spark {spark_out.batches} vs ours {ours.batches}"))
        return diffs
    if spark_out.ok:
        diffs.append(Difference("fails-only-ours", f"ours {ours.summary()}; Spark {spark_out.summary()}"))
    elif ours.ok:
        diffs.append(Difference("fails-only-spark", f"Spark {spark_out.summary()}; ours {ours.summary()}"))
    elif _stage_rank(ours.stage) > _stage_rank(spark_out.stage):
        diffs.append(
            Difference("later", f"ours at {ours.stage}, Spark at {spark_out.stage}: ours {ours.error[:300]}")
        )
    if not ours.ok:
        lowered = ours.error.lower()
        named = any(s.lower() in lowered for s in suspects) or (names_ok is not None and names_ok(ours.error))
        if not named:
            diffs.append(Difference("unnamed", f"ours names none of {suspects}: {ours.error[:300]}"))
    return diffs


def _rows_diff(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> str:
    sa, sb = Counter(a), Counter(b)
    only_spark = list((sa - sb).elements())
    only_ours = list((sb - sa).elements())
    return (
        f"Spark {len(a)} rows, ours {len(b)}; only Spark's (first 3): {only_spark[:3]}; "
        f"only ours (first 3): {only_ours[:3]}"
    )
