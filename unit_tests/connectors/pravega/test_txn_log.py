"""The streaming sink's transaction log and how a re-run batch picks the transactions to commit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connector_base import ConnectorError
from connectors.pravega import sink
from connectors.pravega.options import PravegaSinkOptions
from connectors.pravega.txn_log import KEEP_BATCHES, TransactionLog, local_directory


def test_record_replace_and_prune(tmp_path: Path) -> None:
    log = TransactionLog(tmp_path / "log")
    assert log.get(3) is None
    log.put(3, [0xABC, None, 1 << 62])
    assert log.get(3) == [0xABC, None, 1 << 62]
    log.put(3, [7, None, 8])
    assert log.get(3) == [7, None, 8]
    assert not list((tmp_path / "log").glob("*.tmp"))
    log.put(4, [1])
    log.prune(3 + KEEP_BATCHES)
    assert log.get(3) is None and log.get(4) == [1]


def test_a_record_of_another_batch_or_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "5.json").write_text('{"version": 1, "batch": 6, "transactions": []}')
    with pytest.raises(ConnectorError, match="expected version 1 for batch 5"):
        TransactionLog(tmp_path).get(5)


def test_local_directory_accepts_paths_and_file_uris_only() -> None:
    assert local_directory("/tmp/chk", "checkpointLocation") == Path("/tmp/chk")
    assert local_directory("file:/tmp/chk", "checkpointLocation") == Path("/tmp/chk")
    assert local_directory("file:///tmp/chk", "checkpointLocation") == Path("/tmp/chk")
    with pytest.raises(ConnectorError, match="checkpointLocation='hdfs://nn/chk'.*local directory"):
        local_directory("hdfs://nn/chk", "checkpointLocation")


def test_sink_options_put_the_log_under_the_checkpoint_for_exactly_once_only() -> None:
    base = {"controller": "tcp://127.0.0.1:9090", "scope": "s", "stream": "t", "checkpointLocation": "/c"}
    assert (
        PravegaSinkOptions.parse({**base, "exactly_once": "true"}).transaction_log_dir == "/c/sinks/pravega"
    )
    assert PravegaSinkOptions.parse(base).transaction_log_dir is None
    explicit = {**base, "exactly_once": "true", "transaction_log_dir": "/elsewhere"}
    assert PravegaSinkOptions.parse(explicit).transaction_log_dir == "/elsewhere"


class _Controller:
    def __init__(self, states: dict[int, str]) -> None:
        self.states = states

    def txn_state(self, scope: str, stream: str, txn: int) -> str:
        return self.states[txn]


@pytest.fixture()
def options() -> PravegaSinkOptions:
    return PravegaSinkOptions.parse({"controller": "tcp://127.0.0.1:9090", "scope": "s", "stream": "t"})


def _resolve(
    monkeypatch: pytest.MonkeyPatch, options: PravegaSinkOptions, states: dict[int, str], *args: Any
) -> list[int | None]:
    monkeypatch.setattr(sink, "shared_controller", lambda _settings: _Controller(states))
    return sink._resolve_replay(options, *args)


def test_replay_keeps_committed_or_open_recorded_transactions_and_replaces_aborted_ones(
    monkeypatch: pytest.MonkeyPatch, options: PravegaSinkOptions
) -> None:
    states = {1: "COMMITTED", 2: "OPEN", 3: "ABORTED", 4: "COMMITTING"}
    chosen = _resolve(monkeypatch, options, states, [1, 2, 3, 4, None], [11, 12, 13, 14, 15], 7)
    assert chosen == [1, 2, 13, 4, 15]


def test_replay_with_another_task_count(monkeypatch: pytest.MonkeyPatch, options: PravegaSinkOptions) -> None:
    committed = {1: "COMMITTED", 2: "COMMITTED"}
    assert _resolve(monkeypatch, options, committed, [1, 2], [11, 12, 13], 7) == [1, 2]
    aborted = {1: "ABORTED", 2: "ABORTED"}
    assert _resolve(monkeypatch, options, aborted, [1, 2], [11, 12, 13], 7) == [11, 12, 13]
    with pytest.raises(
        ConnectorError, match="batch 7 re-ran with 3 tasks where the transaction log records 2"
    ):
        _resolve(monkeypatch, options, {1: "COMMITTED", 2: "ABORTED"}, [1, 2], [11, 12, 13], 7)
