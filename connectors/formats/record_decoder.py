"""``RecordDecoder``: a batch of raw records (``key``/``value`` binary columns) -> typed columns.

Shared by the Kafka and Pravega sources. ``output_schema(base)`` is the Arrow schema of the result
(the driver turns it into the DataFrame's schema); ``decode(batch, locate)`` returns the decoded
batch in it and, for ``DROPMALFORMED``, which input rows were kept. The Confluent header (magic 0,
4-byte big-endian schema id) is read for the whole column with numpy; payloads are grouped by
writer schema id and each group decoded in one call (``AvroDecoder``). ``locate(row)`` names the
record for messages (e.g. ``topic t, partition 0, offset 42``).

Threading: one decoder per reader thread; the registry client underneath is shared and thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector_base import ConnectorError, MalformedRecordError
from connectors.formats.avro_decoder import AvroDecoder, describe_error, is_resolution_error
from connectors.formats.format_options import (
    Layout,
    ParseMode,
    PayloadFormat,
    RecordFormatOptions,
)
from connectors.formats.json_decoder import JsonDecoder
from connectors.formats.native_module import compiled_class
from connectors.formats.protobuf_decoder import MessageMismatchError, ProtobufDecoder
from connectors.formats.reader_schemas import ReaderSchema
from connectors.formats.registry_client import RegistryClient, SchemaNotFoundError

__all__ = ["RecordDecoder", "confluent_header"]

MAGIC = 0
HEADER_BYTES = 5


def confluent_header(column: pa.Array, native: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(valid, well_formed, schema_ids)`` of a binary column: non-null, magic 0 and >= 5 bytes, ids
    (-1 where not well formed); in one native pass where the compiled module is installed (unless
    ``native`` is false), else with numpy."""
    arr = column.cast(pa.binary()) if column.type != pa.binary() else column
    n = len(arr)
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    scan = compiled_class("confluent_schema_ids", None) if native else None
    if scan is not None:
        ids = scan(pa.RecordBatch.from_arrays([arr], names=["payload"])).to_numpy()
        return valid, ids >= 0, ids
    bufs = arr.buffers()
    offsets = (
        np.frombuffer(bufs[1], dtype=np.int32)[arr.offset : arr.offset + n + 1]
        if bufs[1]
        else np.zeros(n + 1, np.int32)
    )
    data = (
        np.frombuffer(bufs[2], dtype=np.uint8)
        if bufs[2] is not None and bufs[2].size
        else np.zeros(0, np.uint8)
    )
    starts, lengths = offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64)
    long_enough = valid & (lengths >= HEADER_BYTES)
    safe = np.where(long_enough, starts, 0)
    if data.size < HEADER_BYTES:
        data = np.zeros(HEADER_BYTES, np.uint8)
    head = np.stack([data[np.minimum(safe + k, data.size - 1)] for k in range(HEADER_BYTES)], axis=1).astype(
        np.int64
    )
    well_formed = long_enough & (head[:, 0] == MAGIC)
    ids = (head[:, 1] << 24) | (head[:, 2] << 16) | (head[:, 3] << 8) | head[:, 4]
    return valid, well_formed, np.where(well_formed, ids, -1)


class _PayloadDecoder:
    """Decodes one column (key or value) with its reader schema."""

    def __init__(self, payload: PayloadFormat, reader: ReaderSchema, options: RecordFormatOptions) -> None:
        self.payload = payload
        self.reader = reader
        self._language = {"JSON": "JSON", "PROTOBUF": "Protobuf"}.get(payload.kind.schema_type, "Avro")
        self.codec: AvroDecoder | JsonDecoder | ProtobufDecoder
        if payload.kind.schema_type == "PROTOBUF":
            self.codec = ProtobufDecoder(reader.text, payload.record_name, reader.references)
        elif payload.kind.schema_type == "JSON":
            self.codec = JsonDecoder(reader.text, payload.validate)
        else:
            self.codec = AvroDecoder(reader.text)
        self._registry = RegistryClient.for_options(options.registry) if options.registry else None
        self._writer_texts: dict[int, str] = {}
        self._writer_references: dict[int, list[tuple[str, str]]] = {}
        self._fail_on_new_fields = options.fail_on_new_fields

    @property
    def arrow_type(self) -> pa.DataType:
        return self.codec.arrow_type

    def _writer_text(self, schema_id: int, where: str) -> str:
        text = self._writer_texts.get(schema_id)
        if text is None:
            assert self._registry is not None
            text, kind = self._registry.schema_by_id(schema_id, where)
            expected = self.payload.kind.schema_type
            if kind.upper() != expected:
                raise SchemaNotFoundError(
                    f"{where}: schema id {schema_id} is a {kind} schema, not {expected}"
                )
            if isinstance(self.codec, ProtobufDecoder):  # imports of other subjects, compiled with it
                self._writer_references[schema_id] = self._registry.references(schema_id, where)
            if self._fail_on_new_fields and schema_id != self.reader.schema_id:
                self._check_no_new_fields(schema_id, text, where)
            self._writer_texts[schema_id] = text
        return text

    def _check_no_new_fields(self, schema_id: int, text: str, where: str) -> None:
        if isinstance(self.codec, ProtobufDecoder):
            writer = self.codec.writer_schema(text, self._writer_references.get(schema_id, ()))
            new = self.codec.new_fields(writer)
        else:
            new = sorted(_top_fields(text) - _top_fields(self.reader.text))
        if new:
            raise ConnectorError(
                f"{where}: the {self.payload.role} is written with schema id {schema_id}, which has fields "
                f"{new} that the reader schema fixed at start (id {self.reader.schema_id}) lacks; "
                "schemaEvolutionMode=fail: restart the query to read them with the new latest version"
            )

    def decode(self, column: pa.Array, locate: Callable[[int], str]) -> tuple[pa.Array, dict[int, str]]:
        """The decoded array (null where the input is null or malformed) and the errors by row."""
        if isinstance(self.codec, JsonDecoder) or (
            isinstance(self.codec, AvroDecoder | ProtobufDecoder) and self.codec.native
        ):
            return self._decode_groups(column, locate)
        return self._decode_values(column, locate)

    def _groups(self, column: pa.Array, errors: dict[int, str]) -> tuple[dict[int, np.ndarray], int]:
        """Row indexes by writer schema id (-1: the inline schema) and the header's length (each
        payload follows it: ``_strip``)."""
        if not self.payload.kind.uses_registry:
            valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            return {-1: np.flatnonzero(valid)}, 0
        valid, well_formed, ids = confluent_header(column)
        for i in np.flatnonzero(valid & ~well_formed):
            v = column[int(i)].as_py()
            errors[int(i)] = (
                f"the {self.payload.role} is not in the Confluent wire format (magic byte 0, "
                f"4-byte schema id, payload): {len(v)} bytes starting {v[:5].hex() or 'empty'}"
            )
        rows = np.flatnonzero(well_formed)
        present = ids[rows]
        if len(present) and present.min() == present.max():  # one writer schema: the common case
            return {int(present[0]): rows}, HEADER_BYTES
        return {int(k): rows[present == k] for k in np.unique(present)}, HEADER_BYTES

    def _writer_for_group(
        self, schema_id: int, rows: np.ndarray, locate: Callable[[int], str], errors: dict[int, str]
    ) -> str | None:
        """The group's writer schema text, or ``None`` with every row's error recorded."""
        if schema_id == -1:
            return self.reader.text
        try:
            return self._writer_text(schema_id, locate(int(rows[0])))
        except SchemaNotFoundError as exc:
            for i in rows:
                errors[int(i)] = f"unknown {self.payload.role} schema id {schema_id}: {exc}"
            return None

    def _record_errors(self, schema_id: int, rows: Any, decoded: list[Any], errors: dict[int, str]) -> None:
        """Errors of the records ``decode_group`` refused (their values set to ``None``)."""
        role = self.payload.role
        label = f"schema id {schema_id}" if schema_id != -1 else "the inline schema"
        for k, (i, d) in enumerate(zip(rows, decoded, strict=True)):
            if isinstance(d, Exception):
                if is_resolution_error(d) or isinstance(d, MessageMismatchError):
                    errors[int(i)] = (
                        f"{role} {label} cannot be read with the reader schema: {describe_error(d)}"
                    )
                else:
                    errors[int(i)] = f"malformed {self._language} {role} ({label}): {describe_error(d)}"
                decoded[k] = None

    def _decode_group(self, group: list[bytes], writer: str, schema_id: int) -> list[Any]:
        """A group decoded record by record (the pure path): values or the exceptions refusing them."""
        if isinstance(self.codec, ProtobufDecoder):
            return self.codec.decode_group(group, writer, self._writer_references.get(schema_id, ()))
        return self.codec.decode_group(group, writer)

    def _decode_groups(
        self, column: pa.Array, locate: Callable[[int], str]
    ) -> tuple[pa.Array, dict[int, str]]:
        """Each writer schema's group decoded into Arrow in one piece (Avro and Protobuf natively, JSON
        in bulk), and record by record where that is refused."""
        assert isinstance(self.codec, AvroDecoder | ProtobufDecoder | JsonDecoder)
        n = len(column)
        errors: dict[int, str] = {}
        groups, skip = self._groups(column, errors)
        pieces: list[pa.Array] = []
        where = np.full(n, -1, dtype=np.int64)  # row -> index in the concatenated pieces
        done = 0
        for schema_id, rows in groups.items():
            writer = self._writer_for_group(schema_id, rows, locate, errors)
            if writer is None:
                continue
            whole = len(rows) == n
            framed = column if whole else column.take(pa.array(rows))
            group = None  # the payloads without their headers: the compiled decoders skip them
            if isinstance(self.codec, AvroDecoder):
                arr = self.codec.decode_arrow(framed, writer, skip)
            elif isinstance(self.codec, ProtobufDecoder):
                references = self._writer_references.get(schema_id, ())
                arr = self.codec.decode_arrow(framed, writer, references, skip)
            else:
                group = _strip(framed, skip)
                arr = self.codec.decode_arrow(group, writer)
            if arr is None:  # refused by the native decoder: the pure one, record by record
                group = _strip(framed, skip) if group is None else group
                try:
                    decoded = self._decode_group(group.to_pylist(), writer, schema_id)
                except Exception as exc:  # noqa: BLE001 - a writer schema the reader cannot resolve
                    for i in rows:
                        errors[int(i)] = (
                            f"{self.payload.role} schema id {schema_id} cannot be read with the reader "
                            f"schema: {describe_error(exc)}"
                        )
                    continue
                self._record_errors(schema_id, rows, decoded, errors)
                redone = (
                    self.codec.native_good_rows(group, decoded, writer)
                    if isinstance(self.codec, AvroDecoder)
                    else None
                )
                arr = redone if redone is not None else self._group_array(decoded, rows, errors)
            if whole and not errors:
                return arr, errors
            where[rows] = np.arange(done, done + len(rows))
            done += len(rows)
            pieces.append(arr)
        if not pieces:
            return pa.nulls(n, self.codec.arrow_type), errors
        merged = pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces)
        return merged.take(pa.array(where, mask=where < 0)), errors

    def _decode_values(
        self, column: pa.Array, locate: Callable[[int], str]
    ) -> tuple[pa.Array, dict[int, str]]:
        """JSON, and Avro without the native decoder: a value per record, then one Arrow array."""
        n = len(column)
        values: list[Any] = [None] * n
        errors: dict[int, str] = {}
        groups, skip = self._groups(column, errors)
        raw = _strip(column, skip).to_pylist()
        for schema_id, rows in groups.items():
            writer = self._writer_for_group(schema_id, rows, locate, errors)
            if writer is None:
                continue
            try:
                decoded = self._decode_group([raw[i] for i in rows], writer, schema_id)
            except Exception as exc:  # noqa: BLE001 - a writer schema the reader cannot resolve
                for i in rows:
                    errors[int(i)] = (
                        f"{self.payload.role} schema id {schema_id} cannot be read with the reader schema: "
                        f"{describe_error(exc)}"
                    )
                continue
            self._record_errors(schema_id, rows, decoded, errors)
            for i, d in zip(rows, decoded, strict=True):
                values[int(i)] = d
        return self._group_array(values, np.arange(n), errors), errors

    def _group_array(self, decoded: list[Any], rows: np.ndarray, errors: dict[int, str]) -> pa.Array:
        """The Arrow array of values decoded record by record; JSON values of the wrong type (found
        one by one when the whole fails) are errors of their rows and null."""
        try:
            return self.codec.to_arrow(decoded)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError, UnicodeEncodeError):
            if not isinstance(self.codec, JsonDecoder):
                raise
        for k, reason in self.codec.bad_values(decoded).items():
            errors[int(rows[k])] = f"{self.payload.role} does not fit the JSON Schema: {reason}"
            decoded[k] = None
        return self.codec.to_arrow(decoded)


class RecordDecoder:
    """Decodes the ``key``/``value`` columns of raw batches per ``RecordFormatOptions``."""

    def __init__(
        self,
        options: RecordFormatOptions,
        readers: dict[str, ReaderSchema],
        columns: dict[str, str] | None = None,
    ) -> None:
        self.options = options
        self._column = {"key": "key", "value": "value", **(columns or {})}  # role -> column decoded
        missing = [p.role for p in options.payloads if p.role not in readers]
        if missing:
            raise ConnectorError(f"no reader schema was fixed for the {', '.join(missing)} at planning")
        self._decoders = {
            self._column[p.role]: _PayloadDecoder(p, readers[p.role], options) for p in options.payloads
        }

    def _columns_of(self, column: str, decoder: _PayloadDecoder) -> list[pa.Field]:
        payload, typ = decoder.payload, decoder.arrow_type
        if payload.layout is Layout.COLUMNS and pa.types.is_struct(typ):
            prefix = self.options.key_prefix if payload.role == "key" else ""
            return [pa.field(prefix + f.name, f.type) for f in typ]
        return [pa.field(column, typ)]

    def output_schema(self, base: pa.Schema) -> pa.Schema:
        """The Arrow schema of decoded batches, given the raw batches' schema."""
        fields: list[pa.Field] = []
        for f in base:
            decoder = self._decoders.get(f.name)
            fields.extend(self._columns_of(f.name, decoder) if decoder else [f])
        if self.options.mode is ParseMode.PERMISSIVE:
            fields.append(pa.field(self.options.corrupt_column, pa.string()))
        names = [f.name for f in fields]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConnectorError(
                f"decoded columns collide: {', '.join(dupes)} appear twice in {names}; "
                "set valueLayout=struct "
                "(or keyLayout=struct), or keyFieldsPrefix, or columnNameOfCorruptRecord"
            )
        return pa.schema(fields)

    def decode(
        self, batch: pa.RecordBatch, locate: Callable[[int], str]
    ) -> tuple[pa.RecordBatch, np.ndarray | None]:
        """The decoded batch and, when rows were dropped (``DROPMALFORMED``), the kept rows' mask."""
        decoded: dict[str, pa.Array] = {}
        errors: dict[int, str] = {}
        for role, decoder in self._decoders.items():
            arr, errs = decoder.decode(batch.column(role), locate)
            decoded[role] = arr
            for i, e in errs.items():
                errors.setdefault(i, e)
        mode = self.options.mode
        if errors and mode is ParseMode.FAILFAST:
            first = min(errors)
            raise MalformedRecordError(
                f"{locate(first)}: {errors[first]} (parse mode FAILFAST; PERMISSIVE keeps such records with "
                f"the reason in column {self.options.corrupt_column!r}, DROPMALFORMED skips them)"
            )
        columns: list[pa.Array] = []
        for name in batch.schema.names:
            if name in decoded:
                arr = decoded[name]
                if errors:  # a row with any malformed payload has every decoded payload null
                    arr = _null_rows(arr, errors)
                payload = self._decoders[name].payload
                if payload.layout is Layout.COLUMNS and pa.types.is_struct(arr.type):
                    columns.extend(arr.flatten())
                else:
                    columns.append(arr)
            else:
                columns.append(batch.column(name))
        if mode is ParseMode.PERMISSIVE:
            columns.append(
                pa.array(
                    [errors.get(i) and f"{locate(i)}: {errors[i]}" for i in range(batch.num_rows)],
                    pa.string(),
                )
            )
        out = pa.RecordBatch.from_arrays(columns, schema=self.output_schema(batch.schema))
        if errors and mode is ParseMode.DROPMALFORMED:
            keep = np.ones(batch.num_rows, dtype=bool)
            keep[list(errors)] = False
            return out.filter(pa.array(keep)), keep
        return out, None


def _strip(payloads: pa.Array, skip: int) -> pa.Array:
    """``payloads`` without their first ``skip`` bytes (a header)."""
    # an explicit stop: pyarrow 26's binary_slice without one fails on values longer than a few bytes
    return pc.binary_slice(payloads, skip, 2**31 - 1) if skip else payloads


def _null_rows(arr: pa.Array, errors: dict[int, str]) -> pa.Array:
    mask = np.zeros(len(arr), dtype=bool)
    mask[list(errors)] = True
    return pc.if_else(pa.array(mask), pa.scalar(None, arr.type), arr)


def _top_fields(text: str) -> set[str]:
    """Names of a schema's top-level fields (Avro record fields or JSON Schema properties)."""
    import json

    schema = json.loads(text)
    if isinstance(schema, dict) and isinstance(schema.get("fields"), list):
        return {str(f.get("name")) for f in schema["fields"]}
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        return set(schema["properties"])
    return set()
