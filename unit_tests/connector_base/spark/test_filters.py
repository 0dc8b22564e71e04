"""Spark's filters to ``ColumnFilter``s, and which of them go back to Spark."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNotNull, IsNull, LessThanOrEqual, Not

from connector_base.errors import InvalidOptionError
from connector_base.spark.filters import (
    ColumnFilter,
    FilterSupport,
    pushdown_requested,
    split_by_support,
    to_column_filter,
)


def test_translation() -> None:
    assert to_column_filter(EqualTo(("a", "b"), 1)) == ColumnFilter("a.b", "=", (1,))
    assert to_column_filter(In(("p",), (1, 2))) == ColumnFilter("p", "in", (1, 2))
    naive = dt.datetime(2024, 1, 1, 12)
    got = to_column_filter(LessThanOrEqual(("t",), naive))
    assert got is not None and got.value.tzinfo is not None and got.value == naive.astimezone(dt.UTC)
    assert to_column_filter(IsNull(("a",))) == ColumnFilter("a", "is_null", ())
    assert to_column_filter(IsNotNull(("a",))) == ColumnFilter("a", "is_not_null", ())
    assert to_column_filter(Not(EqualTo(("a",), 1))) is None


def test_exact_filters_leave_spark_narrowing_ones_stay() -> None:
    exact, narrows, ignored, untranslated = (
        EqualTo(("e",), 1),
        GreaterThan(("n",), 1),
        EqualTo(("x",), 1),
        Not(EqualTo(("e",), 1)),
    )

    def support(f: ColumnFilter) -> FilterSupport:
        return {"e": FilterSupport.EXACT, "n": FilterSupport.NARROWS}.get(f.column, FilterSupport.NONE)

    pushed, returned = split_by_support([exact, narrows, ignored, untranslated], support)
    assert [f.column for f in pushed] == ["e", "n"]
    assert returned == [narrows, ignored, untranslated]


def test_option() -> None:
    assert pushdown_requested({}) is False
    assert pushdown_requested({"filterpushdown": " TRUE "}) is True
    with pytest.raises(InvalidOptionError, match="filterPushdown"):
        pushdown_requested({"filterPushdown": "on"})
