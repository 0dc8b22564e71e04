"""A line belongs to the byte range in which it starts: random split sizes never lose or repeat a line."""

from __future__ import annotations

import json
import random

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from connectors.files import FilePlanner
from unit_tests.connectors.files.helpers_files import make_source, read, whole_files

TEXT_SCHEMA = StructType([StructField("value", StringType()), StructField("_offset", LongType())])


def _random_file(rnd: random.Random) -> tuple[bytes, list[tuple[str, int]]]:
    """A file and its (line, offset) pairs: CRLF, empty and very long lines, maybe no final newline."""
    out = bytearray()
    expected = []
    for i in range(rnd.randint(0, 60)):
        kind = rnd.random()
        if kind < 0.1:
            line = ""
        elif kind < 0.2:
            line = "L" * rnd.randint(200, 3000)  # longer than most split sizes below
        else:
            line = f"line-{i}-" + "x" * rnd.randint(0, 40) + "é"
        expected.append((line, len(out)))
        out += line.encode()
        out += b"\r\n" if rnd.random() < 0.3 else b"\n"
    if expected and expected[-1][0] and rnd.random() < 0.5:  # no trailing newline after a non-empty line
        out = out[:-2] if out.endswith(b"\r\n") else out[:-1]
    return bytes(out), expected


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(8))
def test_random_split_sizes_read_every_line_exactly_once(tmp_path, seed: int) -> None:
    rnd = random.Random(seed)
    expected = []
    for f in range(6):
        data, lines = _random_file(rnd)
        path = tmp_path / f"f{f}.txt"
        path.write_bytes(data)
        expected += [(line, off, str(path)) for line, off in lines]
    for _ in range(6):
        split_size = rnd.choice([1, 2, 3, 7, 16, 50, 100, 333, 1000, 4096, 10**6])
        opts = {
            "path": str(tmp_path),
            "format": "text",
            "splitSizeBytes": str(split_size),
            "includeMetadata": "true",
        }
        schema = StructType(TEXT_SCHEMA.fields + [StructField("_file", StringType())])
        source = make_source(opts, schema)
        planner = FilePlanner(source.options)
        ranges = [r for s in whole_files(source) for r in planner.range_splits(s, s.offset, s.end)]
        rnd.shuffle(ranges)
        table = read(source, ranges)
        got = sorted(
            zip(
                table["value"].to_pylist(),
                table["_offset"].to_pylist(),
                table["_file"].to_pylist(),
                strict=True,
            )
        )
        assert got == sorted(expected), f"split size {split_size}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(3))
def test_random_cuts_of_jsonl_read_every_record_once(tmp_path, seed: int) -> None:
    rnd = random.Random(100 + seed)
    ids = []
    with open(tmp_path / "a.jsonl", "w") as f:
        for i in range(500):
            pad = "p" * rnd.choice([0, 5, 80, 2000])
            f.write(json.dumps({"id": i, "pad": pad}) + ("\r\n" if i % 3 == 0 else "\n"))
            ids.append(i)
    size = (tmp_path / "a.jsonl").stat().st_size
    schema = StructType([StructField("id", LongType())])
    source = make_source({"path": str(tmp_path), "format": "jsonl"}, schema)
    (split,) = whole_files(source)
    cuts = sorted({0, size, *(rnd.randint(0, size) for _ in range(rnd.randint(1, 40)))})
    ranges = [split.with_range(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]
    assert sorted(read(source, ranges)["id"].to_pylist()) == ids


def test_range_starting_inside_a_long_line_skips_to_the_next(tmp_path) -> None:
    (tmp_path / "a.txt").write_bytes(b"short\n" + b"x" * 100 + b"\nlast")
    source = make_source(
        {"path": str(tmp_path), "format": "text"}, StructType([StructField("value", StringType())])
    )
    (split,) = whole_files(source)
    assert read(source, [split.with_range(0, 7)])["value"].to_pylist() == ["short", "x" * 100]
    assert read(source, [split.with_range(7, 50)])["value"].to_pylist() == []
    assert read(source, [split.with_range(50, split.end)])["value"].to_pylist() == ["last"]
