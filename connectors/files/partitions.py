"""Hive-style partition directories: ``<path>/year=2024/month=05/part-0.parquet``.

A file under ``name=value`` directories below ``path`` (a directory; partition directories are
read with ``recursive=true``) gets one column per segment, with that value on every row. Values are
unescaped as Spark writes them (``%2F`` is ``/``); ``__HIVE_DEFAULT_PARTITION__`` is null. An
inferred partition column is ``int`` when every value fits, ``bigint`` when every value is an
integer, ``string`` otherwise; a given schema may type it as anything its values cast to.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
from pyspark.sql.types import IntegerType, LongType, StringType, StructField

from connector_base import ConnectorError
from connectors.files.listing import is_glob, local_path

__all__ = ["NULL_PARTITION", "partition_fields", "partition_names", "partition_value", "partition_values"]

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_INT_MAX = 2**31 - 1


def _base(path: str) -> str | None:
    local = local_path(path)
    if is_glob(local) or not os.path.isdir(local):
        return None
    return os.path.abspath(local)


def partition_values(path: str, file: str) -> tuple[tuple[str, str | None], ...]:
    """The ``(name, raw value)`` pairs of ``file``'s directories below ``path``, outermost first
    (none when ``path`` is not a directory or a directory segment is not ``name=value``)."""
    return _values(_base(path), os.path.abspath(file))


@lru_cache(maxsize=4096)
def _values(base: str | None, file: str) -> tuple[tuple[str, str | None], ...]:
    if base is None:
        return ()
    rel = os.path.relpath(os.path.dirname(file), base)
    if rel in (".", "") or rel.startswith(".."):
        return ()
    out: list[tuple[str, str | None]] = []
    for segment in rel.split(os.sep):
        name, eq, raw = segment.partition("=")
        if not eq or not name:
            return ()
        value = unquote(raw)
        out.append((unquote(name), None if value == NULL_PARTITION else value))
    return tuple(out)


def partition_names(path: str) -> tuple[str, ...]:
    """The partition column names under ``path``, from its first file in sorted order (cheap: the
    names are the same for every file, which schema inference checks)."""
    base = _base(path)
    if base is None:
        return ()
    for root, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        visible = sorted(f for f in files if not f.startswith(("_", ".")))
        if visible:
            return tuple(n for n, _v in _values(base, os.path.join(root, visible[0])))
    return ()


def _infer_type(values: Iterable[str | None]) -> Any:
    present = [v for v in values if v is not None]
    try:
        ints = [int(v) for v in present]
    except ValueError:
        return StringType()
    if not present:
        return StringType()
    return IntegerType() if all(-_INT_MAX - 1 <= i <= _INT_MAX for i in ints) else LongType()


def partition_fields(path: str, files: Iterable[str]) -> list[StructField]:
    """Inferred partition columns of ``files`` under ``path``; raises when the files disagree."""
    base = _base(path)
    names: tuple[str, ...] | None = None
    seen: dict[str, list[str | None]] = {}
    for f in files:
        pairs = _values(base, os.path.abspath(f))
        these = tuple(n for n, _v in pairs)
        if names is None:
            names = these
        elif these != names:
            raise ConnectorError(
                f"conflicting partition directories under {path}: {list(names)} and {list(these)} "
                f"(at {f}); every file must sit under the same name=value directories"
            )
        for n, v in pairs:
            seen.setdefault(n, []).append(v)
    return [StructField(n, _infer_type(seen[n]), True) for n in names or ()]


def partition_value(raw: str | None, arrow_type: pa.DataType) -> Any:
    """``raw`` as a Python value of ``arrow_type`` (``None`` for null); raises when it does not cast."""
    if raw is None:
        return None
    try:
        return pa.scalar(raw, pa.string()).cast(arrow_type).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ConnectorError(f"partition value {raw!r} is not a {arrow_type}: {e}") from e
