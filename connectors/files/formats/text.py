"""``text``: every line is a row ``value string`` (empty lines included), as Spark's text source."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from typing_extensions import override

from connectors.files.formats.base import CARRIAGE_RETURN, NEWLINE, LineFormat, bom_length, line_bounds


def lines_to_array(data: bytes | memoryview) -> tuple[pa.Array, np.ndarray]:
    """All lines of ``data`` as one string array (separators dropped, one copy), and their starts.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (see ``line_bounds``).

    Invalid UTF-8 is replaced by U+FFFD (then line by line).
    """
    buf = np.frombuffer(data, np.uint8)
    starts, ends = line_bounds(data)
    n = len(starts)
    if n == 0:
        return pa.array([], pa.string()), starts
    next_starts = np.empty_like(starts)
    next_starts[:-1] = starts[1:]
    next_starts[-1] = len(buf)
    if int((next_starts - ends).max()) <= 1 and not (buf == CARRIAGE_RETURN).any():  # only \n separators
        keep = buf != NEWLINE
    else:
        mark = np.zeros(len(buf) + 1, np.int8)
        mark[ends] += 1
        mark[next_starts] -= 1
        keep = np.cumsum(mark[:-1], dtype=np.int8) == 0
    values = buf[keep]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(ends - starts, out=offsets[1:])
    if offsets[-1] < 2**31:
        arr = pa.Array.from_buffers(
            pa.string(), n, [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(values)]
        )
    else:
        arr = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(values)])
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        raw = bytes(data)
        arr = pa.array(
            [
                raw[s:e].decode("utf-8", "replace")
                for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
            ],
            pa.string(),
        )
    return arr, starts


class TextFormat(LineFormat):
    """Lines become ``value`` without their ``\\n`` or ``\\r\\n`` (or ``lineSep``); no line is ever
    malformed."""

    name = "text"
    skips_blank_lines = False

    @override
    def parse_bulk(self, data: bytes | memoryview, whole: bool) -> pa.Table:
        arr, _starts = lines_to_array(data)
        return pa.Table.from_arrays([arr], schema=pa.schema([pa.field(self.schema.data[0].name, arr.type)]))

    @override
    def parse(self, data: bytes | memoryview, base_offset: int, path: str, at_file_start: bool) -> pa.Table:
        skip = bom_length(data) if at_file_start else 0
        if skip:
            data, base_offset = memoryview(data)[skip:], base_offset + skip
        if self.framing.custom:  # lineSep: a line may hold \n and \r
            lines = self.framing.lines(data)
            arr = pa.array([raw.decode("utf-8", "replace") for _s, raw in lines], pa.string())
            starts = np.asarray([s for s, _raw in lines], np.int64)
        else:
            arr, starts = lines_to_array(data)
        field = self.schema.data[0]
        table = pa.Table.from_arrays([arr], schema=pa.schema([pa.field(field.name, arr.type)]))
        return self.schema.assemble(table, path, starts + base_offset if self.schema.with_offset else None)
