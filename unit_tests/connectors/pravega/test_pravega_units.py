"""Unit tests of the Pravega connector: stream cut text form, options, split serializer, event decoding."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from connector_base import InvalidOptionError, MalformedRecordError
from connectors.pravega.enumerator import (
    ENUMERATOR_STATE_SERIALIZER,
    PravegaEnumeratorState,
    SegmentRecord,
)
from connectors.pravega.event_decoding import const_string_array, decode_events, event_boundaries
from connectors.pravega.options import PravegaSinkOptions, PravegaSourceOptions
from connectors.pravega.positions import CutKind, format_stream_cut, parse_stream_cut
from connectors.pravega.split import OPEN_END, PravegaSegmentSplit, PravegaSegmentSplitSerializer

GOLDEN = Path(__file__).parent / "golden"


def frame(payload: bytes) -> bytes:
    return struct.pack(">ii", 0, len(payload)) + payload


# --- stream cuts ----------------------------------------------------------------------------------
def test_stream_cut_text_form_round_trips() -> None:
    text = "shop/orders:0=1200,4294967297=0;shop/returns:1=5"
    spec = parse_stream_cut("start_stream_cut", text, ("earliest", "latest"))
    assert spec.kind is CutKind.EXPLICIT
    assert spec.cuts == {("shop", "orders"): {0: 1200, 4294967297: 0}, ("shop", "returns"): {1: 5}}
    assert format_stream_cut(spec.cuts) == text
    assert str(spec) == text
    assert parse_stream_cut("x", " LATEST ", ("earliest", "latest")).kind is CutKind.LATEST


@pytest.mark.parametrize(
    "text",
    ["", "shop:0=1", "shop/orders", "shop/orders:", "shop/orders:a=1", "shop/orders:0=-1",
     "shop/orders:0=1,0=2", "shop/orders:0=1;shop/orders:1=2", "unbounded"],
)  # fmt: skip
def test_stream_cut_text_form_rejects(text: str) -> None:
    with pytest.raises(InvalidOptionError, match="'start_stream_cut'"):
        parse_stream_cut("start_stream_cut", text, ("earliest", "latest"))


# --- options ----------------------------------------------------------------------------------------
BASE = {"controller": "tcp://127.0.0.1:9090", "scope": "sc", "stream": "a, other/b"}


def test_options_defaults_and_streams() -> None:
    batch = PravegaSourceOptions.parse(BASE, streaming=False)
    assert batch.streams == (("sc", "a"), ("other", "b"))
    assert batch.start.kind is CutKind.EARLIEST and batch.end.kind is CutKind.LATEST and batch.bounded
    stream = PravegaSourceOptions.parse(BASE, streaming=True)
    assert stream.end.kind is CutKind.UNBOUNDED and not stream.bounded
    limited = PravegaSourceOptions.parse(
        {**BASE, "maxEventsPerTrigger": "10", "maxBytesPerTrigger": "99"}, True
    )
    assert (limited.read_limits().max_records, limited.read_limits().max_bytes) == (10, 99)


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        ({"controller": "127.0.0.1:9090"}, "controller"),
        ({"stream": ""}, "stream"),
        ({"stream": "a,a"}, "stream"),
        ({"end_stream_cut": "unbounded"}, "end_stream_cut"),
        ({"start_stream_cut": "sc/a:0=5"}, "start_stream_cut"),  # the cut must cover both streams
        (
            {"start_stream_cut": "sc/a:0=5;other/b:0=0", "end_stream_cut": "sc/a:0=1;other/b:0=0"},
            "end_stream_cut",
        ),
        ({"failOnDataLoss": "yes"}, "failondataloss"),
        ({"maxBytesPerTrigger": "x"}, "maxBytesPerTrigger"),
        ({"auth_enabled": "true"}, "auth_enabled"),
        ({"mode": "fast"}, "mode"),
        ({"nonsense": "1"}, "nonsense"),
    ],
)
def test_options_reject(extra: dict[str, str], option: str) -> None:
    with pytest.raises(InvalidOptionError) as info:
        PravegaSourceOptions.parse({**BASE, **extra}, streaming=False)
    assert info.value.option.lower() == option.lower()


def test_secrets_are_never_shown() -> None:
    opts = PravegaSourceOptions.parse(
        {**BASE, "auth_enabled": "true", "username": "u", "password": "pw-secret-1"}, streaming=True
    )
    assert "pw-secret-1" not in repr(opts) and "pw-secret-1" not in str(opts)
    with pytest.raises(InvalidOptionError) as info:
        PravegaSourceOptions.parse({**BASE, "Password": "pw-secret-2", "colour": "x"}, streaming=True)
    assert "pw-secret-2" not in str(info.value)
    sink = PravegaSinkOptions.parse({**BASE, "stream": "a", "auth_token": "tok-secret-3"})
    assert "tok-secret-3" not in repr(sink)


# --- splits and enumerator state: golden files pin version 1 -------------------------------------
def test_split_serializer_golden_v1() -> None:
    split = PravegaSegmentSplit("sc", "st", (1 << 32) | 3, 120, OPEN_END, (1, 2))
    ser = PravegaSegmentSplitSerializer()
    golden = json.loads((GOLDEN / "segment_split_v1.json").read_text())
    assert ser.serialize(split) == golden
    assert ser.deserialize(golden) == split
    assert split.split_id == "sc/st/4294967299"
    assert split.segment_name == "sc/st/3.#epoch.1"
    assert split.predecessor_ids() == ["sc/st/1", "sc/st/2"]
    with pytest.raises(ValueError):
        PravegaSegmentSplit("sc", "st", 0, 10, 5)


def test_enumerator_state_golden_v1() -> None:
    state = PravegaEnumeratorState(
        {("sc", "st"): {0: SegmentRecord((), 7, True), 4294967296: SegmentRecord((0,), 7, False)}},
        {("sc", "st"): {4294967296: 300}},
        True,
    )
    golden = json.loads((GOLDEN / "enumerator_state_v1.json").read_text())
    assert ENUMERATOR_STATE_SERIALIZER.serialize(state) == golden
    assert ENUMERATOR_STATE_SERIALIZER.deserialize(golden) == state


# --- event decoding -----------------------------------------------------------------------------------
def test_decode_fixed_size_events_and_partial_tail() -> None:
    buf = b"".join(frame(b"%05d" % i) for i in range(1000)) + frame(b"abcdef")[:9]
    decoded = decode_events(buf, 500)
    assert decoded.payloads.to_pylist() == [b"%05d" % i for i in range(1000)]
    assert decoded.offsets[0] == 500 and decoded.offsets[-1] == 500 + 999 * 13
    assert decoded.consumed == 13_000


def test_decode_mixed_sizes_matches_boundaries() -> None:
    payloads = [bytes([i % 251]) * (i % 37) for i in range(500)]
    buf = b"".join(frame(p) for p in payloads)
    decoded = decode_events(buf, 0)
    assert decoded.payloads.to_pylist() == payloads
    assert list(decoded.offsets) + [len(buf)] == event_boundaries(buf, 0)
    # a fixed-size prefix followed by a different size is not mistaken for one stride
    buf2 = frame(b"aaaa") * 3 + frame(b"bb") + frame(b"cccc")
    assert decode_events(buf2, 0).payloads.to_pylist() == [b"aaaa"] * 3 + [b"bb", b"cccc"]


def test_decode_rejects_a_position_inside_an_event() -> None:
    buf = frame(b"hello world")
    with pytest.raises(MalformedRecordError, match="offset 3"):
        decode_events(buf[3:], 3, "sc/st/0.#epoch.0")


@pytest.mark.parametrize(
    "payloads",
    [[b"only"], [b"%05d" % i for i in range(300)], [bytes([i % 251]) * (i % 7) for i in range(300)]],
    ids=["one-event", "fixed-size", "mixed-sizes"],
)
def test_decoded_events_do_not_refer_to_the_buffer(payloads: list[bytes]) -> None:
    # the split reader reuses its read buffer for the next fetch
    buf = bytearray(b"".join(frame(p) for p in payloads) + frame(b"partial")[:10])
    decoded = decode_events(memoryview(buf), 0)
    buf[:] = b"\xff" * len(buf)
    assert decoded.payloads.to_pylist() == payloads
    assert decoded.consumed == len(buf) - 10


def test_decode_fixed_size_checks_every_header() -> None:
    buf = bytearray(frame(b"abcd") * 50)
    struct.pack_into(">i", buf, 12 * 30, 1)  # the 31st event's type
    with pytest.raises(MalformedRecordError, match=f"offset {1000 + 12 * 30} .type 1, length 4"):
        decode_events(bytes(buf), 1000)


def test_split_constant_columns_are_built_once_and_sliced() -> None:
    from connectors.pravega.split_reader import _Active

    active = _Active(PravegaSegmentSplit("sc", "st", 4294967297, 0, 100))
    first = active.constant_columns(8)
    assert [c.to_pylist() for c in first] == [["sc"] * 8, ["st"] * 8, [4294967297] * 8]
    built = active.constants
    assert [len(c) for c in active.constant_columns(10)] == [10, 10, 10]
    assert active.constants is built  # 8 rows built room for 10
    assert [c.to_pylist() for c in active.constant_columns(50)][1] == ["st"] * 50


def test_const_string_array() -> None:
    arr = const_string_array("scope", 4)
    assert arr.to_pylist() == ["scope"] * 4
    assert const_string_array("x", 0).to_pylist() == []
    assert np.asarray(decode_events(b"", 0).offsets).size == 0
