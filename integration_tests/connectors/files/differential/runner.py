"""Running one ``Case`` through Spark's own file source and through files-unified.

An ``Outcome`` is what a user sees: the columns and the rows (as a multiset), or the error and
the stage it came at: ``load`` (``load()``, where Spark lists the path and infers a schema),
``read`` (the first action of a batch read), ``start`` / ``run`` (a streaming query). Streaming
outcomes keep the rows of every micro-batch, in batch order.
"""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from integration_tests.connectors.files.differential.cases import Case
from integration_tests.connectors.spark_batches import collect_batches

STAGES = ("load", "read", "start", "run")
"""Where an error can come, earliest first."""
STREAM_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class Outcome:
    """Columns and rows of a read, or its error."""

    columns: tuple[tuple[str, str], ...] = ()
    rows: tuple[Any, ...] = ()
    """Sorted rows (batch), or per micro-batch the sorted rows of each non-empty batch (streaming)."""
    error: str | None = None
    error_class: str | None = None
    stage: str | None = None

    @property
    def failed(self) -> bool:
        """Whether the read failed."""
        return self.error is not None

    def summary(self) -> str:
        """A short description of the outcome (the behaviour column of the parity table)."""
        if self.failed:
            return f"fails at {self.stage}() ({self.error_class})"
        return f"{len(self.rows)} {'micro-batches' if self._batches else 'rows'}"

    @property
    def _batches(self) -> bool:
        return bool(self.rows) and isinstance(self.rows[0], tuple) and self.rows[0][:1] == ("batch",)


def _value(v: Any) -> Any:
    if hasattr(v, "asDict"):
        return tuple((k, _value(x)) for k, x in v.asDict(recursive=False).items())
    if isinstance(v, list):
        return tuple(_value(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _value(x)) for k, x in v.items()))
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def _row(r: Any) -> tuple[Any, ...]:
    return tuple(_value(v) for v in r)


def _sorted(rows: list[Any]) -> tuple[Any, ...]:
    return tuple(sorted((_row(r) for r in rows), key=repr))


_CLASS = re.compile(r"\[([A-Z_][A-Z0-9_.]+)\]")


def _error(e: BaseException, stage: str) -> Outcome:
    text = str(e)
    names = [m.group(1) for m in _CLASS.finditer(text)]
    if "InvalidOptionError" in text:
        cls = "InvalidOptionError"
    elif "MalformedRecordError" in text:
        cls = "MalformedRecordError"
    elif "DataLossError" in text:
        cls = "DataLossError"
    elif "ConnectorError" in text:
        cls = "ConnectorError"
    elif names:
        cls = names[-1] if names[0] == "FAILED_READ_FILE.NO_HINT" and len(names) > 1 else names[0]
    else:
        cls = type(e).__name__
    return Outcome(error=text, error_class=cls, stage=stage)


def _columns(df: Any) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, f.dataType.simpleString()) for f in df.schema.fields)


def _load(spark: Any, case: Case, root: Path, ours: bool, streaming: bool) -> tuple[Any, Outcome | None]:
    """The DataFrame of the case (and its columns), or the outcome of a failed ``load()``."""
    base = spark.readStream if streaming else spark.read
    if ours:
        reader = base.format("files-unified").options(**case.ours_options())
    else:
        reader = base.format(case.fmt).options(**case.spark_options())
    if case.schema:
        reader = reader.schema(case.schema)
    try:
        df = reader.load(case.path(root))
        return (df, _columns(df)), None
    except Exception as e:
        return None, _error(e, "load")


@contextmanager
def _session_conf(spark: Any, case: Case) -> Iterator[None]:
    """The case's session settings (``Case.conf``) while it runs; the previous ones after."""
    before = {k: spark.conf.get(k, None) for k, _v in case.conf}
    for k, v in case.conf:
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, old in before.items():
            if old is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, old)


def read_batch(spark: Any, case: Case, root: Path, ours: bool) -> Outcome:
    """``spark.read`` of the case through Spark's source (``ours=False``) or files-unified."""
    with _session_conf(spark, case):
        return _read_batch(spark, case, root, ours)


def _read_batch(spark: Any, case: Case, root: Path, ours: bool) -> Outcome:
    loaded, failed = _load(spark, case, root, ours, streaming=False)
    if failed is not None:
        return failed
    df, columns = loaded
    try:
        rows = df.collect()
    except Exception as e:
        return _error(e, "read")
    return Outcome(columns, _sorted(rows))


def read_stream(spark: Any, case: Case, root: Path, checkpoint: Path, ours: bool) -> Outcome:
    """``spark.readStream`` of the case with ``Trigger.AvailableNow``; rows kept per micro-batch."""
    with _session_conf(spark, case):
        return _read_stream(spark, case, root, checkpoint, ours)


def _read_stream(spark: Any, case: Case, root: Path, checkpoint: Path, ours: bool) -> Outcome:
    shutil.rmtree(checkpoint, ignore_errors=True)
    loaded, failed = _load(spark, case, root, ours, streaming=True)
    if failed is not None:
        return failed
    df, columns = loaded
    try:
        kept = collect_batches(df, checkpoint, lambda bid, r: (bid, _row(r)), timeout_s=STREAM_TIMEOUT_S)
    except Exception as e:
        return _error(e, "run")
    batches: dict[int, list[Any]] = {}
    for bid, row in kept:
        batches.setdefault(bid, []).append(row)
    ordered = tuple(
        ("batch", tuple(sorted(rows, key=repr))) for _bid, rows in sorted(batches.items()) if rows
    )
    return Outcome(columns, ordered)
