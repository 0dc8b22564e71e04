"""``csv``: Spark's CSV options (``header``, ``sep``, ``quote``, ``escape``, ``nullValue``, ...).

Three paths, chosen per chunk of lines, all giving what Spark's parser gives:

* no quote character: pyarrow in bulk without quoting or escapes (an escape outside quotes is kept
  as written, as Spark keeps it);
* quotes only around whole fields (each line's quotes pair up, every opening quote starts a field,
  every closing one ends it, no escape character and no empty quoted field unless ``emptyValue``
  equals ``nullValue``): pyarrow in bulk with quoting, where RFC 4180 and Spark's parser agree;
* anything else: ``csv_tokens.Tokenizer`` (Spark's parser's rules, which pyarrow cannot be
  configured to) splits the lines, and pyarrow converts the fields from RFC 4180 text of them, so
  every column type is converted the same way on every path.

With ``multiLine=true`` a file is read whole and cut into records first (``csv_records``: a quoted
value may span lines), then parsed by the same paths, a record holding a line break alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pc
from typing_extensions import override

from connector_base import MalformedRecordError
from connectors.files.formats.base import (
    UTF8_BOM,
    Line,
    LineFormat,
    check_utf8,
    fits,
    in_zone,
    line_bounds,
)
from connectors.files.formats.csv_tokens import (
    NUL,
    Dialect,
    Tokenizer,
    UnescapedQuoteError,
    UnescapedQuotes,
    first_record,
)

BLOCK_BYTES = 4 * 1024 * 1024
_BLANK_BYTES = b" \t\r\n\x0b\x0c"  # a line of these is blank (bytes.strip), as Spark skips it
_LINE_BREAK_BYTES = b"\r\n"
TRUE_VALUES = ["true", "True", "TRUE"]
FALSE_VALUES = ["false", "False", "FALSE"]


def _parse_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(t) and t.tz is not None:
        return pa.timestamp(t.unit)  # naive text, then read in the time zone (``_cast``)
    return t


def dialect_of(csv: Any) -> Dialect:
    """The tokenizer's settings for ``CsvOptions`` (an empty ``quote``/``escape`` is none, as in Spark)."""
    return Dialect(
        sep=csv.sep,
        quote=csv.quote or NUL,
        escape=csv.escape or NUL,
        escape_escape=csv.escape_escape,
        null_value=csv.null_value,
        empty_value=csv.empty_value,
        ignore_leading=csv.ignore_leading_white_space,
        ignore_trailing=csv.ignore_trailing_white_space,
        unescaped=UnescapedQuotes(csv.unescaped_quote_handling),
    )


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def csv_records(text: str, line_sep: str | None, tokenizer: Tokenizer) -> list[str]:
    """``multiLine``: the records of a file's text, as Spark's parser reads them. A record ends at a
    line break outside a quoted value; without ``lineSep`` the line break is the first one in the
    file (``\\n``, ``\\r\\n`` or ``\\r``, univocity's detection), read as ``\\n`` inside values, and a
    ``\\n`` ends a record too; with ``lineSep`` that string, kept as written inside values. Empty lines
    between records are skipped; a quoted value left open runs to the end of the file."""
    if line_sep is None:
        at = min((i for i in (text.find("\r"), text.find("\n")) if i >= 0), default=-1)
        if at < 0 or text[at] == "\n" or at + 1 == len(text):  # a last \r tells nothing: \n
            detected = "\n"
        else:
            detected = "\r\n" if text[at + 1] == "\n" else "\r"
        if detected != "\n":
            text = text.replace(detected, "\n")
        line_sep = "\n"
    lines = text.split(line_sep)
    ends_with_break = bool(lines) and lines[-1] == ""
    if ends_with_break:
        lines.pop()
    records: list[str] = []
    current: str | None = None
    for line in lines:
        if current is None:
            if not line:
                continue
            current = line
        else:
            current += line_sep + line
        if not tokenizer.ends_open(current):
            records.append(current)
            current = None
    if current is not None:  # open to the end of the file, the last line break included
        records.append(current + line_sep if ends_with_break else current)
    return records


class CsvFormat(LineFormat):
    """Columns are taken by position (Spark's ``enforceSchema``); another column count is malformed."""

    name = "csv"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        csv = self.options.csv
        data = self.schema.data
        self._names = data.names
        self._types = {f.name: _parse_type(f.type) for f in data}
        self._needs_cast = any(self._types[f.name] != f.type for f in data)
        self._tokenizer = Tokenizer(dialect_of(csv))
        self.whole_file = self.options.multi_line
        self.corrupt_text_undecoded = self.whole_file  # multiLine records: shown as Line.raw
        self._null = csv.null_value
        self._quote_byte = ord(csv.quote) if csv.quote and ord(csv.quote) < 128 else None
        self._sep_byte = ord(csv.sep) if ord(csv.sep) < 128 else None
        escapes = {csv.escape, csv.escape_escape} - {None, "", NUL}
        self._escape_bytes = [ord(e) for e in escapes if ord(e) < 128]
        # with no escape, Spark's parser reads a quote after an opening quote as escaped (``""`` at
        # the end of a line is ``"``): only the tokenizer has that
        self._quoted_fast = (
            self._sep_byte is not None and bool(csv.escape) and len(self._escape_bytes) == len(escapes)
        )
        # pyarrow splits a line exactly as Spark's parser only when it holds no quote character and
        # whitespace is kept; other lines (or every line, for options pyarrow has not) are tokenized
        self._always_tokenize = (
            csv.ignore_leading_white_space
            or csv.ignore_trailing_white_space
            or (csv.quote is not None and self._quote_byte is None)
        )
        self._bulk_parse = pc.ParseOptions(
            delimiter=csv.sep,
            quote_char=False,
            escape_char=False,
            newlines_in_values=False,
            ignore_empty_lines=True,
        )
        # an empty field is nullValue to Spark's parser, and so is a quoted nullValue
        self._bulk_convert = self._convert(sorted({csv.null_value, ""}), quoted_null=True)
        self._quoted_parse = pc.ParseOptions(
            delimiter=csv.sep,
            quote_char=csv.quote or False,
            double_quote=False,
            escape_char=False,
            newlines_in_values=False,
            ignore_empty_lines=True,
        )
        self._quoted_convert = self._bulk_convert
        self._plain_parse = pc.ParseOptions(
            delimiter=",", quote_char='"', double_quote=True, escape_char=False, newlines_in_values=True
        )
        self._plain_convert = self._convert([""], quoted_null=False)  # tokens quoted, nulls empty

    def _convert(self, null_values: list[str], quoted_null: bool) -> pc.ConvertOptions:
        return pc.ConvertOptions(
            column_types=self._types,
            null_values=null_values,
            strings_can_be_null=True,
            quoted_strings_can_be_null=quoted_null,
            true_values=TRUE_VALUES,
            false_values=FALSE_VALUES,
        )

    @override
    def drop_header(self, data: bytes | memoryview, at_file_start: bool) -> int:
        if not (at_file_start and self.options.csv.header):
            return 0
        starts, ends = self.framing.bounds(data)
        for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            if bytes(data[s:e]).strip():  # the header is the first line that is not blank, as Spark's
                return int(starts[i + 1]) if i + 1 < len(starts) else len(data)
        return len(data)

    @override
    def file_start(self, data: bytes | memoryview, base_offset: int) -> tuple[bytes | memoryview, int]:
        data, base_offset = super().file_start(data, base_offset)
        if self.framing.custom:
            return data, base_offset
        # then Spark's parser takes the first line that is not blank as its input's start (see first_record)
        line = i = 0
        while i < len(data) and data[i] in _BLANK_BYTES:
            i += 1
            if data[i - 1] in _LINE_BREAK_BYTES:
                line = i
        if i != line or bytes(data[line : line + 3]) != UTF8_BOM:
            return data, base_offset
        rest = memoryview(data)[line + 3 :]
        if len(rest) == 0 or rest[0] in _LINE_BREAK_BYTES:
            return NUL.encode() + bytes(rest), base_offset + line + 2
        return rest, base_offset + line + 3

    @override
    def parse(self, data: bytes | memoryview, base_offset: int, path: str, at_file_start: bool) -> pa.Table:
        try:
            if self.whole_file:
                return self._parse_records(bytes(data), path)
            return super().parse(data, base_offset, path, at_file_start)
        except UnescapedQuoteError as e:  # Spark fails the read whatever the mode
            raise MalformedRecordError(
                f"malformed csv record in file {path}: {e}; set option unescapedQuoteHandling to one of "
                f"{', '.join(u.value for u in UnescapedQuotes if u is not UnescapedQuotes.RAISE_ERROR)} "
                "to read it"
            ) from None

    def _parse_records(self, data: bytes, path: str) -> pa.Table:
        """``multiLine``: a whole file's records (a quoted value may span lines), each parsed alone
        where it holds a line break; rows have offset 0, as a multiLine JSON document's."""
        text = first_record((self.framing.to_utf8(data, strict=False) or b"").decode("utf-8", "replace"))
        records = csv_records(text, self.options.line_sep, self._tokenizer)
        if self.options.csv.header:
            records = records[1:]
        # the corrupt-record text is the record without a last \r, as Spark's parser reports it
        lines = [Line(0, _utf8(r), _utf8(r.removesuffix("\r"))) for r in records]
        if not lines:
            return self.schema.output.empty_table()
        return self._parse_lines(lines, 0, path)

    def _quotes(self, data: bytes | memoryview) -> np.ndarray:
        if self._quote_byte is None:
            return np.zeros(0, np.int64)
        return np.flatnonzero(np.frombuffer(data, np.uint8) == self._quote_byte)

    def _whole_fields_quoted(self, data: bytes | memoryview, quotes: np.ndarray) -> bool:
        """Whether every quote in ``data`` opens or closes a whole field with nothing to escape
        inside (then RFC 4180 and Spark's parser split the lines alike)."""
        if not self._quoted_fast:
            return False
        buf = np.frombuffer(data, np.uint8)
        starts, ends = line_bounds(data)
        line = np.searchsorted(starts, quotes, side="right") - 1
        if (np.bincount(line, minlength=len(starts)) % 2).any():
            return False
        opens, closes = quotes[0::2], quotes[1::2]
        at_start = opens == starts[line[0::2]]
        after_sep = buf[np.maximum(opens - 1, 0)] == self._sep_byte
        at_end = closes + 1 == ends[line[1::2]]
        before_sep = buf[np.minimum(closes + 1, len(buf) - 1)] == self._sep_byte
        if not ((at_start | after_sep).all() and (at_end | before_sep).all()):
            return False
        csv = self.options.csv
        if csv.empty_value != csv.null_value and (closes - opens == 1).any():
            return False  # an empty quoted field is emptyValue, which pyarrow cannot tell
        for e in self._escape_bytes:
            at = np.flatnonzero(buf == e)
            pair = np.searchsorted(opens, at, side="right") - 1
            if ((pair >= 0) & (at < closes[np.maximum(pair, 0)])).any():
                return False
        return True

    @override
    def parse_bulk(self, data: bytes | memoryview, whole: bool) -> pa.Table:
        try:
            check_utf8(data)
        except ValueError:  # Spark decodes csv lines with U+FFFD for invalid bytes; so does this source
            data = bytes(data).decode("utf-8", "replace").encode("utf-8")
        if (
            self._always_tokenize or bytes(data[:3]) == UTF8_BOM
        ):  # pyarrow would drop the mark, Spark keeps it
            return self._tokenized(data)
        quotes = self._quotes(data)
        if not len(quotes):
            return self._read(data, whole, self._bulk_parse, self._bulk_convert)
        if self._whole_fields_quoted(data, quotes):
            return self._read(data, whole, self._quoted_parse, self._quoted_convert)
        return self._tokenized(data)

    def _read(
        self, data: bytes | memoryview, whole: bool, parse: pc.ParseOptions, convert: pc.ConvertOptions
    ) -> pa.Table:
        block = max(BLOCK_BYTES, len(data) + 1) if whole else BLOCK_BYTES
        table = pc.read_csv(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pc.ReadOptions(
                column_names=self._names, autogenerate_column_names=False, use_threads=True, block_size=block
            ),
            parse_options=parse,
            convert_options=convert,
        )
        return self._cast(table)

    def _cast(self, table: pa.Table) -> pa.Table:
        """The parsed table in the read schema; naive timestamps read in the read's time zone."""
        if not self._needs_cast:
            return table
        columns = []
        for f in self.schema.data:
            col = table.column(f.name)
            if pa.types.is_timestamp(f.type) and f.type.tz is not None and col.type.tz is None:
                col = in_zone(col, self.zone)
            columns.append(col.cast(f.type))
        return pa.Table.from_arrays(
            columns, schema=pa.schema([pa.field(f.name, f.type, True) for f in self.schema.data])
        )

    def _tokenized(self, data: bytes | memoryview) -> pa.Table:
        """Lines split by Spark's rules, converted by pyarrow from RFC 4180 text of their fields."""
        raw = bytes(data)
        starts, ends = line_bounds(raw)
        width = len(self._names)
        out: list[str] = []
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            line = raw[s:e]
            if not line.strip():
                continue  # a blank line holds no record, as in Spark
            tokens = self._tokens(line)
            if len(tokens) != width:
                raise ValueError(f"{len(tokens)} fields where the schema has {width}")
            out.append(",".join("" if t is None else '"' + t.replace('"', '""') + '"' for t in tokens))
        if not out:
            return self.schema.data.empty_table()
        text = ("\n".join(out) + "\n").encode("utf-8")
        return self._read(text, True, self._plain_parse, self._plain_convert)

    def _tokens(self, line: bytes) -> list[str | None]:
        """The fields of one line as Spark's parser splits it, a field equal to ``nullValue`` as ``None``."""
        fields = self._tokenizer.fields(line.decode("utf-8", "replace"))
        return [None if t == self._null else t for t in fields]

    @override
    def recover_line(self, line: bytes) -> pa.Table | None:
        """A line whose every field converts the way Spark's CSV parser converts it, where pyarrow's
        does not (a decimal as ``1e2`` or with more fraction digits than the scale, rounded half up)."""
        tokens = self._tokens(line)
        data = self.schema.data
        if len(tokens) != len(data):
            return None
        values = [fits(tok, f.type, zone=self.zone) for tok, f in zip(tokens, data, strict=True)]
        if any(v is None and tok is not None for v, tok in zip(values, tokens, strict=True)):
            return None
        return pa.Table.from_arrays(
            [pa.array([v], f.type) for v, f in zip(values, data, strict=True)], schema=data
        )

    @override
    def partial_row(self, line: bytes) -> dict[str, Any] | None:
        return dict(zip(self._names, self._tokens(line), strict=False))
