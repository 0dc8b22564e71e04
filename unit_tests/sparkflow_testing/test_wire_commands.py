import struct

import pytest

from sparkflow_testing.pravega.emulator import wire_commands as wc


def test_hello_frame_is_type_minus_127_with_two_int32_versions() -> None:
    assert wc.encode(wc.Hello(15, 5)).hex() == "ffffff81000000080000000f00000005"


def test_setup_append_layout() -> None:
    frame = wc.encode(wc.SetupAppend(7, 0x0102, "s/t/0.#epoch.0", ""))
    type_code, length = wc.parse_header(frame[:8])
    body = frame[8:]
    assert (type_code, length) == (1, len(body))
    assert struct.unpack(">q", body[:8]) == (7,)
    assert int.from_bytes(body[8:24], "big") == 0x0102
    assert struct.unpack(">H", body[24:26]) == (len("s/t/0.#epoch.0"),)
    assert body[26:40] == b"s/t/0.#epoch.0"
    assert body[40:] == b"\x00\x00"  # empty delegation token


def test_append_block_end_carries_u32_length_prefixed_data() -> None:
    command = wc.AppendBlockEnd(5, 10, b"0123456789", 1, 3, 99)
    body = wc.encode(command)[8:]
    assert body[16:20] == struct.pack(">i", 10)
    assert body[20:24] == struct.pack(">I", 10) and body[24:34] == b"0123456789"
    assert wc.decode(4, body) == command


def test_conditional_append_embeds_an_event_with_its_type_code() -> None:
    command = wc.ConditionalAppend(1, 2, 30, b"abc", 4)
    body = wc.encode(command)[8:]
    assert body[32:36] == struct.pack(">i", 0) and body[36:40] == struct.pack(">I", 3)
    assert wc.decode(5, body) == command


@pytest.mark.parametrize(
    "command",
    [
        wc.SegmentRead("a/b/0.#epoch.0", 10, True, False, b"xyz", 3),
        wc.DataAppended(2**127 + 5, 9, -(2**63), 11, 400),
        wc.StreamSegmentInfo(1, "a/b/1.#epoch.2", True, True, False, 123, 456, 7),
        wc.TableEntriesUpdated(4, (0, 35, 70)),
        wc.ReadTable(5, "t", "", (wc.TableKey(b"k1"), wc.TableKey(b"k2", 17))),
        wc.TableEntriesDeltaRead(6, "t", ((wc.TableKey(b"k", 0), wc.TableValue(b"v")),), False, True, 20),
        wc.ReadTableKeys(7, "t", "", 10, b"\x00\x01"),
        wc.MergeSegments(8, "a/b/0.#epoch.0", "a/b/0.#epoch.0#transaction.00", ""),
        wc.SegmentIsTruncated(9, "a/b/0.#epoch.0", 100, "", 50),
        wc.KeepAlive(),
    ],
)
def test_round_trip(command: wc.WireCommand) -> None:
    frame = wc.encode(command)
    type_code, length = wc.parse_header(frame[:8])
    assert length == len(frame) - 8
    assert wc.decode(type_code, frame[8:]) == command


def test_table_key_payload_and_version_layout() -> None:
    body = wc.encode(wc.RemoveTableKeys(1, "t", "", (wc.TableKey(b"ab", wc.KEY_NOT_EXISTS),), wc.NO_OFFSET))[
        8:
    ]
    keys = body[8 + 2 + 1 + 2 :]
    assert keys[:4] == struct.pack(">I", 1)  # one key
    assert keys[4:8] == struct.pack(">i", 4 + 2 + 8)  # payload: length prefix + data + version
    assert keys[8:12] == struct.pack(">I", 2) and keys[12:14] == b"ab"
    assert keys[14:22] == struct.pack(">q", -1)


def test_event_framing_round_trip() -> None:
    data = wc.frame_event(b"one") + wc.frame_event(b"") + wc.frame_event(b"three")
    assert data[:8] == struct.pack(">ii", 0, 3)
    assert wc.split_events(data) == [b"one", b"", b"three"]


def test_bad_frames_are_rejected() -> None:
    with pytest.raises(wc.WireProtocolError):
        wc.parse_header(struct.pack(">ii", 1, wc.MAX_COMMAND_SIZE + 1))
    with pytest.raises(wc.WireProtocolError):
        wc.decode(1, b"\x00\x00")
    with pytest.raises(KeyError):
        wc.decode(12345, b"")
