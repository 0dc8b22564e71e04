"""Conformance of the Pravega backend with the official client (``pravega_client``), nothing else.

Every scenario runs in a spawned child process via ``run_isolated``: the Rust client can panic or
hang on a reply it does not expect, and while blocked it holds the GIL, so only a process boundary
bounds it reliably. The ``timeout`` marks are a second line of defence.

Every scenario runs on both backends (``any_pravega_cluster``: the real Pravega standalone and
the emulator); scaling and truncation go through the controller's own API
(:attr:`PravegaCluster.admin`). The one emulator-only check (a restart with a data directory) is
named ``test_emulator_only_*``. Differences from the real server are fixed in the emulator or
listed in docs/pravega-emulator.md with the test that shows them.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from sparkflow_testing.pravega.cluster import (
    PravegaCluster,
    official_client_available,
    run_isolated,
    start_emulator,
    start_isolated,
    unique_name,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not official_client_available(),
        reason="the official client (pravega 0.3.8) installs on CPython 3.11 only; this is its conformance",
    ),
]

# ---- helpers (run in the child) ---------------------------------------------------------------


def _official_writer(cluster: PravegaCluster, scope: str, stream: str, max_inflight_events: int = 0):
    """The official client's ``StreamWriter`` (what this suite checks the backends against)."""
    return cluster.manager.create_writer(scope, stream, max_inflight_events)


async def _read_async(reader, expected: int, timeout: float = 40.0, settle: float = 1.5) -> list[bytes]:
    """Read until ``expected`` events arrived, then ``settle`` seconds more (to catch duplicates).

    One reader per process: ``release_segment`` blocks while holding the GIL, and a pending
    ``get_segment_slice_async`` of another reader in the same process can then deadlock it.
    """
    events: list[bytes] = []
    deadline = time.monotonic() + timeout
    settle_until = None
    while time.monotonic() < deadline and (settle_until is None or time.monotonic() < settle_until):
        segment_slice = await reader.get_segment_slice_async()
        events.extend(bytes(event.data()) for event in segment_slice)
        reader.release_segment(segment_slice)
        if len(events) >= expected and settle_until is None:
            settle_until = time.monotonic() + settle
    return events


def _read_all(reader, expected: int, timeout: float = 40.0, settle: float = 1.5) -> list[bytes]:
    """:func:`_read_async` from synchronous code."""
    return asyncio.run(_read_async(reader, expected, timeout, settle))


def _payloads(events: list[bytes]) -> list[str]:
    return [data.decode() for data in events]


def _assert_order_per_key(payloads: list[str]) -> None:
    last: dict[str, int] = {}
    for payload in payloads:
        key, seq = payload.rsplit(":", 1)
        assert int(seq) > last.get(key, -1), f"event {payload} arrived after {key}:{last[key]}"
        last[key] = int(seq)


# ---- scenarios ----------------------------------------------------------------------------------


def _scopes_and_streams(cluster: PravegaCluster) -> None:
    import pravega_client

    manager = cluster.manager
    scope = unique_name("scope")
    assert manager.create_scope(scope) is True
    assert manager.create_scope(scope) is False
    assert scope in manager.list_scope()
    assert manager.create_stream(scope, "fixed3", 3) is True
    assert manager.create_stream(scope, "fixed3", 3) is False
    auto = pravega_client.StreamScalingPolicy.auto_scaling_policy_by_event_rate(100, 2, 1)
    retention = pravega_client.StreamRetentionPolicy.none()
    assert manager.create_stream_with_policy(scope, "auto", auto, retention, ["blue", "green"]) is True
    assert sorted(manager.get_stream_tags(scope, "auto")) == ["blue", "green"]
    fixed = pravega_client.StreamScalingPolicy.fixed_scaling_policy(3)
    assert manager.update_stream_with_policy(scope, "auto", fixed, retention, ["red"]) is True
    assert manager.get_stream_tags(scope, "auto") == ["red"]
    # Pravega also lists its internal watermark streams ``_MARK<stream>``; the emulator has none
    # (docs/pravega-emulator.md, differences).
    assert sorted(n for n in manager.list_stream(scope) if not n.startswith("_MARK")) == ["auto", "fixed3"]
    assert manager.seal_stream(scope, "fixed3") is True
    assert manager.delete_stream(scope, "fixed3") is True
    assert manager.seal_stream(scope, "auto") is True
    assert manager.delete_stream(scope, "auto") is True
    assert manager.delete_scope(scope) is True


def _two_writers_and_reader(cluster: PravegaCluster) -> dict:
    scope = cluster.create_scope()
    stream = cluster.create_stream(scope, segments=3)
    writers = [_official_writer(cluster, scope, stream), _official_writer(cluster, scope, stream)]
    for seq in range(40):
        for w, writer in enumerate(writers):
            writer.write_event(f"w{w}k{seq % 4}:{seq}", routing_key=f"w{w}k{seq % 4}")
    for writer in writers:
        writer.flush()
    group_name = unique_name("rg")
    group = cluster.manager.create_reader_group(group_name, scope, stream, False)
    reader = group.create_reader("r1")
    events = _read_all(reader, 80)
    payloads = _payloads(events)
    assert len(payloads) == 80, len(payloads)
    assert sorted(payloads) == sorted(f"w{w}k{s % 4}:{s}" for w in range(2) for s in range(40))
    _assert_order_per_key(payloads)
    reader.reader_offline()
    cluster.manager.delete_reader_group(group_name, scope)
    return {"scope": scope, "stream": stream, "bytes": sum(8 + len(p) for p in payloads)}


def _prepare_stream(cluster: PravegaCluster, segments: int, group: str) -> tuple[str, str]:
    scope = cluster.create_scope()
    stream = cluster.create_stream(scope, segments=segments)
    cluster.manager.create_reader_group(group, scope, stream, False)
    return scope, stream


READER_CAP_S = 120.0
"""A group reader stops after this long whatever happens (the test then fails on missing events)."""


def _timed_writer(
    cluster: PravegaCluster, scope: str, stream: str, rounds: int, per_round: int, done_marker: str = ""
) -> int:
    writer = _official_writer(cluster, scope, stream)
    for round_ in range(rounds):
        for i in range(per_round):
            seq = round_ * per_round + i
            writer.write_event(f"k{seq % 12}:{seq}", routing_key=f"k{seq % 12}")
        writer.flush()
        time.sleep(1.0)
    if done_marker:
        Path(done_marker).touch()
    return rounds * per_round


def _group_reader(
    cluster: PravegaCluster,
    scope: str,
    stream: str,
    group: str,
    name: str,
    run_for: float,
    hand_over_at: float,
    writer_done: str,
) -> list[str]:
    """One reader of a shared group, in its own process.

    A reader that already read events at ``hand_over_at`` seconds goes offline then (its segments
    return to the group with their positions); the others read for ``run_for`` s and until the
    writer is done (``writer_done`` exists), then until idle. On a loaded machine the writer can
    finish long after ``run_for``: waiting for its marker keeps the test about the client, not timing.
    """
    reader = cluster.manager.create_reader_group(group, scope, stream, False).create_reader(name)

    async def main() -> list[str]:
        payloads: list[str] = []
        started = last_event = time.monotonic()
        early = False  # read events before the hand-over time: this reader hands over

        def busy() -> bool:
            now = time.monotonic()
            return now - started < run_for or not Path(writer_done).exists() or now - last_event < 3.0

        while busy() and time.monotonic() - started < READER_CAP_S:
            if early and time.monotonic() - started > hand_over_at:
                break
            segment_slice = await reader.get_segment_slice_async()
            for event in segment_slice:
                payloads.append(bytes(event.data()).decode())
                last_event = time.monotonic()
                early = early or last_event - started < hand_over_at
            reader.release_segment(segment_slice)
        return payloads

    payloads = asyncio.run(main())
    reader.reader_offline()
    return payloads


def _stream_cut_start(cluster: PravegaCluster) -> dict:
    scope = cluster.create_scope()
    stream = cluster.create_stream(scope, segments=2)
    writer = _official_writer(cluster, scope, stream)
    for seq in range(20):
        writer.write_event(f"a{seq % 2}:{seq}", routing_key=f"a{seq % 2}")
    writer.flush()
    group = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)
    reader = group.create_reader("r1")
    assert len(_read_all(reader, 20)) == 20
    reader.reader_offline()
    cut = group.get_streamcut()
    offsets = cut.get_segment_offset_map()
    assert sum(offsets.values()) == sum(8 + len(f"a{s % 2}:{s}") for s in range(20)), offsets
    for seq in range(20, 30):
        writer.write_event(f"a{seq % 2}:{seq}", routing_key=f"a{seq % 2}")
    writer.flush()
    from_cut = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False, cut)
    payloads = _payloads(_read_all(from_cut.create_reader("r2"), 10))
    assert sorted(payloads) == sorted(f"a{s % 2}:{s}" for s in range(20, 30))
    return {str(k): v for k, v in offsets.items()}


def _scale_while_writing_and_reading(cluster: PravegaCluster) -> dict:
    admin = cluster.admin
    scope = cluster.create_scope()
    stream = cluster.create_stream(scope, segments=2)
    # Up to 1000 unacknowledged events: writes below are still in flight when segments get sealed.
    # (Synchronous write_event keeps the submission order; write_event_async calls do not.)
    writer = _official_writer(cluster, scope, stream, 1000)
    group = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)
    reader = group.create_reader("r1")
    keys = [f"key{i}" for i in range(8)]
    total = 5 * 80
    written = 0
    events: list[bytes] = []

    def produce(count: int) -> None:
        nonlocal written
        for seq in range(written, written + count):
            writer.write_event(f"{keys[seq % 8]}:{seq}", routing_key=keys[seq % 8])
        written += count

    def read(at_least: int) -> None:
        events.extend(asyncio.run(_read_async(reader, at_least, timeout=30, settle=0.0)))

    produce(80)
    read(40)
    produce(80)
    epochs = [[s["id"] for s in admin.active_segments(scope, stream)]]
    for segment in admin.active_segments(scope, stream):  # epoch 0 -> split into four
        admin.split(scope, stream, segment["id"], 2)
        epochs.append([s["id"] for s in admin.active_segments(scope, stream)])
    produce(80)
    read(100 - len(events))
    produce(80)
    active = admin.active_segments(scope, stream)
    assert len(active) == 4 and all(s["epoch"] in (1, 2) for s in active), active
    middle = active[1:3]  # merge the middle two (Pravega refuses to go below the stream's 2 segments)
    admin.scale(scope, stream, [s["id"] for s in middle], [(middle[0]["min_key"], middle[1]["max_key"])])
    epochs.append([s["id"] for s in admin.active_segments(scope, stream)])
    produce(80)
    writer.flush()
    read(total - len(events))
    payloads = _payloads(events)
    assert len(payloads) == total, f"read {len(payloads)} of {total}"
    assert sorted(payloads) == sorted(f"{keys[i % 8]}:{i}" for i in range(total))
    _assert_order_per_key(payloads)
    every = sorted({seg for epoch in epochs for seg in epoch})
    return {"lengths": admin.segment_lengths(scope, stream, every), "epochs": epochs}


def _seal(cluster: PravegaCluster) -> None:
    scope = cluster.create_scope()
    stream = cluster.create_stream(scope, segments=2)
    writer = _official_writer(cluster, scope, stream)
    for seq in range(10):
        writer.write_event(f"k{seq % 3}:{seq}", routing_key=f"k{seq % 3}")
    writer.flush()
    assert cluster.manager.seal_stream(scope, stream) is True
    group = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)
    assert len(_read_all(group.create_reader("r1"), 10)) == 10
    late = _official_writer(cluster, scope, stream)
    failed = False
    try:
        late.write_event("after-seal", routing_key="k0")
        late.flush()
    except Exception:
        failed = True
    assert failed, "a write to a sealed stream must fail"


def _truncate(cluster: PravegaCluster) -> dict:
    admin = cluster.admin
    scope = cluster.create_scope()
    stream = cluster.create_stream(scope, segments=2)
    writer = _official_writer(cluster, scope, stream)
    for seq in range(10):
        writer.write_event(f"k{seq % 2}:{seq}", routing_key=f"k{seq % 2}")
    writer.flush()
    group = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)
    reader = group.create_reader("r1")
    assert len(_read_all(reader, 10)) == 10
    reader.reader_offline()
    cut = {int(k): v for k, v in group.get_streamcut().get_segment_offset_map().items()}
    for seq in range(10, 20):
        writer.write_event(f"k{seq % 2}:{seq}", routing_key=f"k{seq % 2}")
    writer.flush()
    behind = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)  # positioned at 0
    admin.truncate(scope, stream, cut)
    assert admin.head(scope, stream) == cut, (admin.head(scope, stream), cut)
    fresh = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)
    payloads = _payloads(_read_all(fresh.create_reader("r2"), 10))
    assert sorted(payloads) == sorted(f"k{s % 2}:{s}" for s in range(10, 20)), payloads
    # A group positioned before the cut gets SegmentIsTruncated: the 0.3.7 client then treats the
    # segment as finished (it skips the rest of it too); it never returns truncated events.
    late = _payloads(_read_all(behind.create_reader("late"), 20, timeout=5))
    assert not set(late) & {f"k{s % 2}:{s}" for s in range(10)}, late
    return cut


def _transactions(cluster: PravegaCluster) -> None:
    import pravega_client

    scope = cluster.create_scope()
    stream = cluster.create_stream(scope, segments=2)
    txn_writer = cluster.manager.create_transaction_writer(scope, stream, 42)
    committed = txn_writer.begin_txn()
    for seq in range(6):
        committed.write_event(f"c{seq % 2}:{seq}", routing_key=f"c{seq % 2}")
    assert committed.is_open()
    committed.commit()
    assert not committed.is_open()
    aborted = txn_writer.begin_txn()
    for seq in range(6):
        aborted.write_event(f"x{seq % 2}:{seq}", routing_key=f"x{seq % 2}")
    aborted.abort()
    assert not aborted.is_open()
    try:
        aborted.write_event("late", routing_key="x0")
        raise AssertionError("writing to an aborted transaction must fail")
    except pravega_client.TxnFailedException:
        pass
    except Exception:
        pass
    group = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)
    payloads = _payloads(_read_all(group.create_reader("r1"), 6, settle=2.0))
    assert sorted(payloads) == sorted(f"c{s % 2}:{s}" for s in range(6)), payloads
    _assert_order_per_key(payloads)


def _byte_stream(cluster: PravegaCluster) -> None:
    scope = cluster.create_scope()
    stream = cluster.create_stream(scope, segments=1)
    byte_stream = cluster.manager.create_byte_stream(scope, stream)
    payload = bytes(range(256)) * 40  # 10240 bytes
    assert byte_stream.write(payload[:4000]) == 4000
    assert byte_stream.write(payload[4000:]) == len(payload) - 4000
    byte_stream.flush()
    assert byte_stream.current_head_offset() == 0
    assert byte_stream.current_tail_offset() == len(payload)
    assert byte_stream.seek(0, 0) == 0
    received = bytearray()
    while len(received) < len(payload):
        chunk = bytearray(len(payload) - len(received))
        count = byte_stream.readinto(chunk)
        assert count > 0
        received += chunk[:count]
    assert bytes(received) == payload
    assert byte_stream.seek(5000, 0) == 5000
    chunk = bytearray(100)
    assert byte_stream.readinto(chunk) == 100 and bytes(chunk) == payload[5000:5100]
    byte_stream.truncate(6000)
    assert byte_stream.current_head_offset() == 6000
    assert byte_stream.current_tail_offset() == len(payload)
    assert byte_stream.seek(6000, 0) == 6000
    chunk = bytearray(100)
    assert byte_stream.readinto(chunk) == 100 and bytes(chunk) == payload[6000:6100]
    assert byte_stream.seek(0, 2) == len(payload)


def _large_event(cluster: PravegaCluster) -> list[int]:
    scope = cluster.create_scope()
    stream = cluster.create_stream(scope, segments=1)
    writer = _official_writer(cluster, scope, stream)
    large = bytes(range(251)) * (9 * 1024 * 1024 // 251)  # above the 8 MiB append limit
    writer.write_event_bytes(b"before", routing_key="k")
    writer.write_event_bytes(large, routing_key="k")
    writer.write_event_bytes(b"after", routing_key="k")
    writer.flush()
    group = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)
    events = _read_all(group.create_reader("r1"), 3)
    assert events[0] == b"before" and events[1] == large and events[2] == b"after"
    return [len(e) for e in events]


def _write_for_restart(cluster: PravegaCluster, scope: str, stream: str, start: int, stop: int) -> None:
    if start == 0:
        cluster.create_scope(scope)
        cluster.create_stream(scope, stream, segments=2)
    writer = _official_writer(cluster, scope, stream)
    for seq in range(start, stop):
        writer.write_event(f"k{seq % 3}:{seq}", routing_key=f"k{seq % 3}")
    writer.flush()


def _read_for_restart(cluster: PravegaCluster, scope: str, stream: str, expected: int) -> list[str]:
    group = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)
    return _payloads(_read_all(group.create_reader("r1"), expected))


# ---- tests ----------------------------------------------------------------------------------------


@pytest.mark.timeout(90, method="signal")
def test_create_scope_and_streams(any_pravega_cluster: PravegaCluster) -> None:
    run_isolated(_scopes_and_streams, any_pravega_cluster, timeout=60)


@pytest.mark.timeout(90, method="signal")
def test_two_writers_with_routing_keys_and_flush(any_pravega_cluster: PravegaCluster) -> None:
    result = run_isolated(_two_writers_and_reader, any_pravega_cluster, timeout=70)
    admin = any_pravega_cluster.admin
    segments = [s["id"] for s in admin.active_segments(result["scope"], result["stream"])]
    lengths = admin.segment_lengths(result["scope"], result["stream"], segments)
    assert sum(lengths.values()) == result["bytes"]


@pytest.mark.timeout(300, method="signal")
def test_reader_group_of_three_reads_every_event_exactly_once(
    any_pravega_cluster: PravegaCluster, tmp_path: Path
) -> None:
    """Three readers of one group, each in its own process (as deployed), while a writer runs.

    The Rust client gives every segment to the first reader and moves segments to other readers
    only every 10 s or when a reader goes offline. So the first reader hands over after 6 s; the
    other two then split its segments, resuming at the positions it left.
    """
    group = unique_name("rg")
    scope, stream = run_isolated(_prepare_stream, any_pravega_cluster, 6, group, timeout=30)
    done = str(tmp_path / "writer-done")
    readers = [
        start_isolated(_group_reader, any_pravega_cluster, scope, stream, group, f"r{i}", 18.0, 6.0, done)
        for i in range(3)
    ]
    total = run_isolated(_timed_writer, any_pravega_cluster, scope, stream, 15, 40, done, timeout=90)
    per_reader = [reader.result(timeout=READER_CAP_S + 30) for reader in readers]
    everything = [payload for payloads in per_reader for payload in payloads]
    counts = [len(payloads) for payloads in per_reader]
    assert len(everything) == total, (
        f"read {len(everything)} of {total} ({len(set(everything))} distinct), {counts}"
    )
    assert sorted(everything) == sorted(f"k{s % 12}:{s}" for s in range(total))
    for payloads in per_reader:
        _assert_order_per_key(payloads)
    assert all(count > 0 for count in counts), f"events per reader: {counts}"


@pytest.mark.timeout(90, method="signal")
def test_stream_cut_and_reader_group_started_from_it(any_pravega_cluster: PravegaCluster) -> None:
    run_isolated(_stream_cut_start, any_pravega_cluster, timeout=70)


@pytest.mark.timeout(150, method="signal")
def test_scale_mid_stream_writers_and_readers_follow(any_pravega_cluster: PravegaCluster) -> None:
    result = run_isolated(_scale_while_writing_and_reading, any_pravega_cluster, timeout=120)
    assert len(result["epochs"]) == 4  # 0: two segments, 1 and 2: splits, 3: the middle two merged
    lengths = result["lengths"]
    expected_bytes = sum(8 + len(f"key{i % 8}:{i}") for i in range(400))
    assert sum(lengths.values()) == expected_bytes, lengths  # each event stored exactly once
    (merged,) = [seg for seg in result["epochs"][3] if seg >> 32 == 3]
    assert lengths[merged] > 0, lengths  # writers moved on to the last successor


@pytest.mark.timeout(90, method="signal")
def test_seal_stream(any_pravega_cluster: PravegaCluster) -> None:
    run_isolated(_seal, any_pravega_cluster, timeout=70)


@pytest.mark.timeout(90, method="signal")
def test_truncation_readers_start_after_the_cut(any_pravega_cluster: PravegaCluster) -> None:
    run_isolated(_truncate, any_pravega_cluster, timeout=70)


@pytest.mark.timeout(90, method="signal")
def test_transactions_commit_and_abort(any_pravega_cluster: PravegaCluster) -> None:
    run_isolated(_transactions, any_pravega_cluster, timeout=70)


@pytest.mark.timeout(90, method="signal")
def test_byte_stream_write_seek_read_truncate(any_pravega_cluster: PravegaCluster) -> None:
    run_isolated(_byte_stream, any_pravega_cluster, timeout=60)


@pytest.mark.timeout(90, method="signal")
def test_large_event_goes_through_a_transient_segment(any_pravega_cluster: PravegaCluster) -> None:
    lengths = run_isolated(_large_event, any_pravega_cluster, timeout=70)
    assert lengths[1] > 8 * 1024 * 1024


@pytest.mark.timeout(150, method="signal")
def test_emulator_only_restart_with_data_dir_keeps_data(tmp_path: Path) -> None:
    """Emulator only: its own data directory survives a restart (the standalone keeps data in memory)."""
    scope, stream = unique_name("scope"), unique_name("stream")
    with start_emulator(tmp_path / "data", tmp_path / "emulator.log") as emulator:
        run_isolated(_write_for_restart, emulator.cluster, scope, stream, 0, 15, timeout=40)
        before = emulator.cluster.control.segment_lengths(scope, stream)
        emulator.restart()
        assert emulator.cluster.control.segment_lengths(scope, stream) == before
        run_isolated(_write_for_restart, emulator.cluster, scope, stream, 15, 25, timeout=40)
        payloads = run_isolated(_read_for_restart, emulator.cluster, scope, stream, 25, timeout=60)
    assert sorted(payloads) == sorted(f"k{s % 3}:{s}" for s in range(25))
    _assert_order_per_key(payloads)
