import pytest

from sparkflow_testing.pravega.emulator.tables import (
    BadKeyVersionError,
    BadOffsetError,
    KeyNotFoundError,
    TableSegment,
)
from sparkflow_testing.pravega.emulator.wire_commands import KEY_NO_VERSION, KEY_NOT_EXISTS


def test_versions_are_log_offsets_and_grow() -> None:
    table = TableSegment("t")
    (v1,) = table.update([(b"a", KEY_NOT_EXISTS, b"1")])
    (v2,) = table.update([(b"a", v1, b"2")])
    assert v1 == 0 and v2 > v1
    assert table.get(b"a") == (b"2", v2)
    assert table.length > v2


def test_must_not_exist_and_exact_version_conditions() -> None:
    table = TableSegment("t")
    (v1,) = table.update([(b"a", KEY_NOT_EXISTS, b"1")])
    with pytest.raises(BadKeyVersionError):
        table.update([(b"a", KEY_NOT_EXISTS, b"again")])
    with pytest.raises(BadKeyVersionError):
        table.update([(b"a", v1 + 1, b"stale")])
    with pytest.raises(KeyNotFoundError):
        table.update([(b"missing", 5, b"x")])
    table.update([(b"a", KEY_NO_VERSION, b"unconditional")])
    assert table.get(b"a")[0] == b"unconditional"


def test_a_failed_batch_changes_nothing() -> None:
    table = TableSegment("t")
    table.update([(b"a", KEY_NOT_EXISTS, b"1")])
    length = table.length
    with pytest.raises(BadKeyVersionError):
        table.update([(b"b", KEY_NOT_EXISTS, b"2"), (b"a", KEY_NOT_EXISTS, b"3")])
    assert table.get(b"b") is None and table.length == length


def test_a_key_named_twice_in_a_batch_is_checked_against_the_state_before_it() -> None:
    table = TableSegment("t")
    versions = table.update(
        [(b"m", KEY_NOT_EXISTS, b"1"), (b"x", KEY_NOT_EXISTS, b"v"), (b"m", KEY_NOT_EXISTS, b"2")]
    )
    assert table.get(b"m") == (b"2", versions[2])


def test_remove_conditions() -> None:
    table = TableSegment("t")
    (v1,) = table.update([(b"a", KEY_NOT_EXISTS, b"1")])
    with pytest.raises(BadKeyVersionError):
        table.remove([(b"a", v1 + 100)])
    with pytest.raises(KeyNotFoundError):
        table.remove([(b"zzz", 3)])
    table.remove([(b"zzz", KEY_NO_VERSION)])  # absent and unconditional: ignored
    table.remove([(b"a", v1)])
    assert table.get(b"a") is None and len(table) == 0


def test_table_offset_condition() -> None:
    table = TableSegment("t")
    table.update([(b"a", KEY_NO_VERSION, b"1")], expected_length=0)
    with pytest.raises(BadOffsetError):
        table.update([(b"b", KEY_NO_VERSION, b"1")], expected_length=0)


def test_delta_returns_latest_live_entries_from_a_position() -> None:
    table = TableSegment("t")
    (va,) = table.update([(b"a", KEY_NO_VERSION, b"1")])
    (vb,) = table.update([(b"b", KEY_NO_VERSION, b"1")])
    middle = table.length
    (va2,) = table.update([(b"a", va, b"2")])
    table.update([(b"c", KEY_NO_VERSION, b"1")])
    table.remove([(b"c", KEY_NO_VERSION)])

    entries, reached_end, position = table.delta(0, 100)
    assert sorted(entries) == [(b"a", b"2", va2), (b"b", b"1", vb)]
    assert reached_end and position == table.length

    entries, reached_end, position = table.delta(middle, 100)
    assert entries == [(b"a", b"2", va2)] and reached_end

    assert table.delta(table.length, 10) == ([], True, table.length)


def test_delta_pages_by_count() -> None:
    table = TableSegment("t")
    for i in range(5):
        table.update([(f"k{i}".encode(), KEY_NO_VERSION, b"v")])
    first, end, position = table.delta(0, 2)
    assert len(first) == 2 and not end
    rest, end, _ = table.delta(position, 10)
    assert len(rest) == 3 and end


def test_key_and_entry_pages_with_continuation_tokens() -> None:
    table = TableSegment("t")
    for i in range(5):
        table.update([(f"k{i}".encode(), KEY_NO_VERSION, f"v{i}".encode())])
    keys, token = table.keys_page(b"", 3)
    assert [k for k, _ in keys] == [b"k0", b"k1", b"k2"]
    entries, token = table.entries_page(token, 3)
    assert [(k, v) for k, v, _ in entries] == [(b"k3", b"v3"), (b"k4", b"v4")]
    assert table.entries_page(token, 3)[0] == []


def test_json_round_trip_keeps_versions() -> None:
    table = TableSegment("t")
    table.update([(b"a", KEY_NO_VERSION, b"1"), (b"b", KEY_NO_VERSION, b"\x00\xff")])
    table.remove([(b"a", KEY_NO_VERSION)])
    copy = TableSegment.from_json(table.to_json())
    assert copy.get(b"b") == table.get(b"b") and copy.get(b"a") is None
    assert copy.length == table.length and copy.delta(0, 10) == table.delta(0, 10)
