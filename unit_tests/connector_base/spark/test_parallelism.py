"""``minPartitions`` for every connector and the plan's parallelism (option, cluster hint, driver cores)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from connector_base import InvalidOptionError
from connector_base.spark.bridge import SourceDataSource, _BridgeBatchReader
from connector_base.spark.parallelism import PARALLELISM_ENV, planning_parallelism
from connectors.files.datasource import FilesDataSource
from connectors.kafka.datasource import KafkaDataSource
from connectors.kinesis.datasource import KinesisDataSource
from connectors.pravega.datasource import PravegaDataSource

FILES_DIR = tempfile.mkdtemp(prefix="min-partitions-")
Path(FILES_DIR, "one.jsonl").write_text('{"id": 1}\n')

CONNECTORS: list[tuple[type[SourceDataSource], dict[str, str]]] = [
    (KafkaDataSource, {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}),
    (PravegaDataSource, {"controller": "tcp://127.0.0.1:9090", "scope": "sc", "stream": "s"}),
    (KinesisDataSource, {"streamName": "s", "region": "us-east-1", "endpointUrl": "http://127.0.0.1:9"}),
    (FilesDataSource, {"path": FILES_DIR, "format": "jsonl"}),
]


@pytest.fixture(autouse=True)
def _no_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PARALLELISM_ENV, raising=False)


@pytest.mark.parametrize(("cls", "options"), CONNECTORS, ids=lambda x: getattr(x, "__name__", ""))
def test_every_connector_accepts_min_partitions_at_load(
    cls: type[SourceDataSource], options: dict[str, str]
) -> None:
    ds = cls({**options, "minPartitions": "6"})
    ds.schema()
    assert planning_parallelism(ds) == 6
    # Kafka keeps the option (its planner cuts offset ranges with it); the others never see it
    assert ("minPartitions" in ds.options) == (cls is KafkaDataSource)


@pytest.mark.parametrize(("cls", "options"), CONNECTORS, ids=lambda x: getattr(x, "__name__", ""))
@pytest.mark.parametrize("bad", ["0", "-2", "many", "1.5"])
def test_bad_min_partitions_fails_at_load_naming_it(
    cls: type[SourceDataSource], options: dict[str, str], bad: str
) -> None:
    with pytest.raises(InvalidOptionError, match="minPartitions"):
        cls({**options, "minPartitions": bad}).schema()


def test_parallelism_option_then_cluster_hint_then_driver_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    options = CONNECTORS[3][1]
    assert planning_parallelism(FilesDataSource(dict(options))) == (os.cpu_count() or 1)
    monkeypatch.setenv(PARALLELISM_ENV, "12")
    assert planning_parallelism(FilesDataSource(dict(options))) == 12
    assert planning_parallelism(FilesDataSource({**options, "MINPARTITIONS": "3"})) == 3
    monkeypatch.setenv(PARALLELISM_ENV, "zero")
    with pytest.raises(InvalidOptionError, match=PARALLELISM_ENV):
        FilesDataSource(dict(options)).schema()


def _plan(tmp_path: Path, files: int, **options: str) -> list[Any]:
    for i in range(files):
        (tmp_path / f"part-{i:02d}.jsonl").write_text(json.dumps({"id": 10 + i}) + "\n")  # equal sizes
    ds = FilesDataSource({"path": str(tmp_path), "format": "jsonl", **options})
    schema = ds.schema()
    return list(_BridgeBatchReader(ds, schema).partitions())


def test_small_files_are_packed_to_the_parallelism(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(_plan(tmp_path, 12, minPartitions="4")) == 4
    assert len(_plan(tmp_path, 12, minPartitions="12")) == 12
    monkeypatch.setenv(PARALLELISM_ENV, "6")  # a cluster's executor cores, from the driver's environment
    assert len(_plan(tmp_path, 12)) == 6
    assert len(_plan(tmp_path, 12, minPartitions="2")) == 2
