"""Bad input on format("pravega") in Spark (issue 17 §3): a restart of a streaming query on another
stream, and a stream that does not exist, each failing with a message that says what is wrong."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import collect_available_now, keyed_events, new_stream, read_options, write_events

from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(300)]


def _available_now(spark: Any, options: dict[str, str], checkpoint: Path) -> int:
    batches, query = collect_available_now(spark, options, str(checkpoint))
    if query.exception() is not None:
        raise query.exception()
    return sum(len(rows) for _id, rows in batches)


def test_restart_on_another_stream_fails_naming_both(
    spark: Any, pravega_cluster: PravegaCluster, tmp_path: Path
) -> None:
    scope, first = new_stream(pravega_cluster, 1)
    _scope, second = new_stream(pravega_cluster, 1, scope=scope)
    write_events(pravega_cluster, scope, first, keyed_events("a", 3))
    write_events(pravega_cluster, scope, second, keyed_events("b", 2))
    checkpoint = tmp_path / "chk"
    assert _available_now(spark, read_options(pravega_cluster, scope, first), checkpoint) == 3
    # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
    with pytest.raises(
        Exception,
        match=f"(?s)checkpoint was written for another source.*{re.escape(first)}.*{re.escape(second)}",
    ):
        _available_now(spark, read_options(pravega_cluster, scope, second), checkpoint)
    # the first stream again: the checkpoint goes on where it stopped (nothing read twice)
    write_events(pravega_cluster, scope, first, keyed_events("a", 1, start=3))
    assert _available_now(spark, read_options(pravega_cluster, scope, first), checkpoint) == 1


def test_a_stream_that_does_not_exist_fails_naming_it(
    spark: Any, pravega_cluster: PravegaCluster, tmp_path: Path
) -> None:
    scope, _stream = new_stream(pravega_cluster, 1)
    missing = "missing" + tmp_path.name.replace("_", "")[-30:]
    options = read_options(pravega_cluster, scope, missing)
    with pytest.raises(Exception, match=missing) as batch:
        spark.read.format("pravega").options(**options).load().collect()
    assert "stream" in str(batch.value), str(batch.value)[-800:]
    with pytest.raises(Exception, match=missing):
        _available_now(spark, options, tmp_path / "chk")
