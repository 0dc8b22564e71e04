"""The LZ4 content bound the compiled reader hands librdkafka (``src/decompress_hints.rs`` of the crate).

Frames are built here from the LZ4 frame format (magic, FLG, BD, header checksum, blocks, end mark);
that real producers' and brokers' frames decode with the bound is the integration test's part
(``test_batches_that_declare_no_size_decompress_with_a_bound_and_read_identically``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pytest

from connectors.kafka.reader_choice import NATIVE_MODULE

Bound = Callable[[bytes], int | None]

MAGIC = bytes.fromhex("04224d18")
END = (0).to_bytes(4, "little")
STORED = 0x8000_0000


def _frame(blocks: list[tuple[int, int]], flg: int = 0x60, bd: int = 0x40, checksum: bool = False) -> bytes:
    out = MAGIC + bytes([flg, bd, 0x00])
    for word, length in blocks:
        out += word.to_bytes(4, "little") + b"\x07" * length + (b"\x00" * 4 if checksum else b"")
    return out + END


@pytest.fixture(scope="module")
def bound() -> Bound:
    fn: Bound = importlib.import_module(NATIVE_MODULE).lz4_frame_bound
    return fn


def test_a_compressed_block_counts_a_whole_block_a_stored_one_its_length(bound: Bound) -> None:
    assert bound(_frame([(100, 100), (STORED | 50, 50), (30, 30)])) == 2 * 65_536 + 50
    assert bound(_frame([])) == 0  # an empty frame: no hint (librdkafka keeps its guess)


def test_block_checksums_and_larger_blocks_are_read(bound: Bound) -> None:
    # FLG 0x70: block checksums follow each block; BD 0x70: blocks of up to 4 MiB
    assert bound(_frame([(10, 10), (20, 20)], flg=0x70, bd=0x70, checksum=True)) == 2 * (4 << 20)
    # FLG 0x68: the header carries an 8-byte content size before its checksum byte
    declared = MAGIC + bytes([0x68, 0x40]) + (1234).to_bytes(8, "little") + b"\x00"
    assert bound(declared + (5).to_bytes(4, "little") + b"\x07" * 5 + END) == 65_536


def test_frames_that_are_not_whole_plain_lz4_get_no_bound(bound: Bound) -> None:
    frame = _frame([(100, 100)])
    assert bound(frame[:-4]) is None  # no end mark
    assert bound(frame[:50]) is None  # a block runs past the end
    assert bound(b"\x00" + frame[1:]) is None  # not the LZ4 magic
    assert bound(_frame([(70_000, 70_000)])) is None  # a block larger than the frame's block size
    assert bound(_frame([(100, 100)], flg=0xA0)) is None  # frame version 10
    assert bound(_frame([(100, 100)], bd=0x30)) is None  # block size id 3 is not defined
