import pytest

from sparkflow_testing.pravega.emulator.metadata import (
    Metadata,
    PreconditionError,
    StreamConfiguration,
    TxnState,
    segment_id,
    segment_name,
    transaction_segment_name,
)
from sparkflow_testing.pravega.emulator.storage import SegmentStorage


def _metadata() -> Metadata:
    metadata = Metadata(SegmentStorage())
    metadata.create_scope("s")
    metadata.create_stream("s", "t", StreamConfiguration(min_segments=2))
    return metadata


def test_names_and_ids() -> None:
    assert segment_id(3, 7) == (3 << 32) | 7
    assert segment_name("s", "t", segment_id(3, 7)) == "s/t/7.#epoch.3"
    assert (
        transaction_segment_name("s/t/0.#epoch.0", 1 << 96)
        == "s/t/0.#epoch.0#transaction." + "00000001" + "0" * 24
    )


def test_create_stream_splits_the_key_space() -> None:
    stream = _metadata().stream("s", "t")
    assert [(r.id, r.min_key, r.max_key) for r in stream.active()] == [(0, 0.0, 0.5), (1, 0.5, 1.0)]
    assert stream.head == {0: 0, 1: 0}


def test_scale_seals_creates_successors_and_a_new_epoch() -> None:
    metadata = _metadata()
    epoch = metadata.scale("s", "t", [1], [(0.5, 0.75), (0.75, 1.0)])
    stream = metadata.stream("s", "t")
    assert epoch == 1 and stream.epochs[1] == [0, segment_id(1, 2), segment_id(1, 3)]
    assert metadata.storage.get("s/t/1.#epoch.0").sealed
    successors = metadata.successors(stream, 1)
    assert [(r.id, preds) for r, preds in successors] == [(segment_id(1, 2), [1]), (segment_id(1, 3), [1])]
    assert metadata.successors(stream, 0) == []
    merged = metadata.scale("s", "t", [0, segment_id(1, 2), segment_id(1, 3)], [(0.0, 1.0)])
    (record,) = stream.active()
    assert merged == 2 and record.predecessors == [0, segment_id(1, 2), segment_id(1, 3)]


def test_scale_rejects_ranges_that_do_not_cover_the_sealed_segments() -> None:
    metadata = _metadata()
    with pytest.raises(PreconditionError):
        metadata.scale("s", "t", [1], [(0.5, 0.7)])
    with pytest.raises(PreconditionError):
        metadata.scale("s", "t", [1], [(0.4, 1.0)])
    with pytest.raises(PreconditionError):
        metadata.scale("s", "t", [5], [(0.0, 1.0)])


def test_truncate_moves_the_head_and_truncates_predecessors() -> None:
    metadata = _metadata()
    storage = metadata.storage
    storage.append(storage.get("s/t/0.#epoch.0"), b"x" * 10)
    storage.append(storage.get("s/t/1.#epoch.0"), b"y" * 10)
    metadata.scale("s", "t", [1], [(0.5, 1.0)])
    storage.append(storage.get("s/t/2.#epoch.1"), b"z" * 10)
    metadata.truncate("s", "t", {0: 4, segment_id(1, 2): 6})
    assert storage.get("s/t/0.#epoch.0").start_offset == 4
    assert storage.get("s/t/1.#epoch.0").start_offset == 10
    assert storage.get("s/t/2.#epoch.1").start_offset == 6
    assert metadata.segments_at(metadata.stream("s", "t"), 0) == {0: 4, segment_id(1, 2): 6}
    with pytest.raises(PreconditionError):
        metadata.truncate("s", "t", {0: 4})  # does not cover the key space


def test_transactions_merge_on_commit_and_vanish_on_abort() -> None:
    metadata = _metadata()
    storage = metadata.storage
    txn = metadata.create_transaction("s", "t", 10_000)
    assert txn.id >> 96 == 0 and not txn.id & (1 << 63)
    name = transaction_segment_name("s/t/0.#epoch.0", txn.id)
    storage.append(storage.get(name), b"abc")
    metadata.commit_transaction("s", "t", txn.id)
    assert bytes(storage.get("s/t/0.#epoch.0").data) == b"abc" and name not in storage.segments
    assert txn.state == TxnState.COMMITTED
    other = metadata.create_transaction("s", "t", 10_000)
    metadata.abort_transaction("s", "t", other.id)
    assert other.state == TxnState.ABORTED
    assert transaction_segment_name("s/t/0.#epoch.0", other.id) not in storage.segments


def test_seal_and_delete() -> None:
    metadata = _metadata()
    with pytest.raises(PreconditionError):
        metadata.delete_stream("s", "t")
    metadata.seal_stream("s", "t")
    metadata.delete_stream("s", "t")
    assert "s/t/0.#epoch.0" not in metadata.storage.segments
    metadata.delete_scope("s")


def test_data_directory_round_trip(tmp_path) -> None:
    storage = SegmentStorage(tmp_path)
    storage.load()
    metadata = Metadata(storage)
    storage.snapshot_provider = metadata.to_json
    metadata.create_scope("s")
    metadata.create_stream("s", "t", StreamConfiguration(min_segments=2, tags=["x"]))
    segment = storage.get("s/t/0.#epoch.0")
    storage.append(segment, b"hello")
    segment.writers[42] = 7
    metadata.scale("s", "t", [1], [(0.5, 1.0)])
    metadata.truncate("s", "t", {0: 2, segment_id(1, 2): 0})
    txn = metadata.create_transaction("s", "t", 1000)
    table = storage.create_table("s/_rg_kvtable/0.#epoch.0")
    table.update([(b"k", -1, b"v")])
    storage.close()

    again = SegmentStorage(tmp_path)
    again.load()
    restored = Metadata(again)
    restored.load_json(again.extra_state)
    stream = restored.stream("s", "t")
    assert stream.epochs == [[0, 1], [0, segment_id(1, 2)]] and stream.config.tags == ["x"]
    assert stream.head == {0: 2, segment_id(1, 2): 0}
    copy = again.get("s/t/0.#epoch.0")
    assert bytes(copy.data) == b"hello" and copy.start_offset == 2 and copy.writers == {42: 7}
    assert again.get("s/t/1.#epoch.0").sealed
    assert stream.transactions[txn.id].state == TxnState.OPEN
    assert again.get_table("s/_rg_kvtable/0.#epoch.0").get(b"k") == (b"v", 0)


def test_segments_between_stream_cuts() -> None:
    metadata = _metadata()
    metadata.scale("s", "t", [1], [(0.5, 0.75), (0.75, 1.0)])  # 1 -> 2, 3 (epoch 1)
    metadata.scale("s", "t", [0], [(0.0, 0.5)])  # 0 -> 4 (epoch 2)
    stream = metadata.stream("s", "t")
    s2, s3, s4 = segment_id(1, 2), segment_id(1, 3), segment_id(2, 4)
    assert metadata.segments_between(stream, {}, {}) == sorted([0, 1, s2, s3, s4])
    assert metadata.segments_between(stream, {0: 0, 1: 0}, {0: 5, s2: 0, s3: 0}) == sorted([0, 1, s2, s3])
    assert metadata.segments_between(stream, {s4: 0, s2: 0, s3: 0}, {}) == sorted([s2, s3, s4])
