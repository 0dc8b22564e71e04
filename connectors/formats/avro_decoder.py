"""``AvroDecoder``: Avro payloads of many writer schemas -> one Arrow array of the reader schema's type.

Decoding is fastavro's (Cython; MIT licence; a dependency of confluent-kafka's own ``avro``
extra): payloads that share a writer schema are read with ``schemaless_reader`` and the reader
schema, so Avro's resolution rules (fields added with defaults, removed, reordered, aliases,
numeric promotion, enum defaults) are fastavro's; when writer and reader schema are equal the
resolution pass is skipped. (Wrapping a group as one container block for ``fastavro.reader`` was
measured slower: 39k records/s with a reader schema against 106k per record, one core, the
benchmark's 15-field schema.) If any record of a group fails, the group is decoded again one
record at a time to find which are malformed. Records come back as dicts, handed to
``pyarrow.array`` in one call (no Python code per field); millisecond timestamps and dates arrive
as raw numbers (their logical types are stripped before decoding, which resolution ignores) and are
cast to Spark's units in one vectorized pass. Unions of several non-null branches (Spark's
``member0..N`` structs) are the one case that runs Python code per record; a union of several
records is read with each record's name, so its branch is known rather than guessed.

The fast path (``decode_arrow``) is native: the compiled module's ``AvroBatchDecoder``
(``native/kafka_reader/src/avro_decode.rs``, the ``arrow-avro`` crate of arrow-rs, Apache-2.0,
the same release as the Arrow crates the module already links) decodes a whole group of payloads
straight into an Arrow record batch with the GIL released, resolving the writer schema to the
reader schema by Avro's rules; its unions of several non-null branches (Arrow dense unions) become
Spark's ``member<i>`` structs (``avro_unions``) and its types are then cast to Spark's in one
vectorized pass. It takes every record reader schema; a non-record reader schema, and any group it
refuses (a malformed record, trailing bytes, a schema pair it cannot resolve), goes through the
fastavro path, which finds the bad records one by one for the parse mode. Chosen over
polars-avro / jetliner (PyPI): no polars in the dependency tree, writer->reader resolution
included, and the module is already built for the Kafka reader. ``SPARKFLOW_AVRO_DECODER=python``
forces the fastavro path (tests, benchmarks).

Threading: a decoder is used by one thread at a time (the emitter's).
"""

from __future__ import annotations

import functools
import io
import json
import os
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connectors.formats.avro_types import AvroSchemaError, avro_arrow_type, union_branches
from connectors.formats.avro_unions import spark_unions
from connectors.formats.native_module import compiled_class

__all__ = ["AvroDecoder", "native_avro_decoder", "strip_time_logical_types"]

_NATIVE_ENV = "SPARKFLOW_AVRO_DECODER"

_STRIPPED = {
    "date",
    "time-millis",
    "time-micros",
    "timestamp-millis",
    "timestamp-micros",
    "local-timestamp-millis",
    "local-timestamp-micros",
    "uuid",
}


def strip_time_logical_types(schema: Any) -> Any:
    """A copy of ``schema`` without date/time/uuid logical types (decimals kept)."""
    if isinstance(schema, list):
        return [strip_time_logical_types(s) for s in schema]
    if isinstance(schema, dict):
        out = {k: strip_time_logical_types(v) for k, v in schema.items() if k != "logicalType"}
        if "logicalType" in schema and schema["logicalType"] not in _STRIPPED:
            out["logicalType"] = schema["logicalType"]
        return out
    return schema


def native_avro_decoder() -> Any:
    """The compiled ``AvroBatchDecoder`` class, or ``None`` (module absent, or forced off)."""
    return compiled_class("AvroBatchDecoder", _NATIVE_ENV)


def _branch_kind(schema: Any, names: dict[str, Any]) -> str:
    if isinstance(schema, str) and schema not in (
        "null",
        "boolean",
        "int",
        "long",
        "float",
        "double",
        "bytes",
        "string",
    ):
        schema = names.get(schema, schema)
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), (dict, list)):
            return _branch_kind(schema["type"], names)
        if schema.get("logicalType") == "decimal":
            return "decimal"
        return str(schema.get("type"))
    return str(schema)


_PY_KIND: dict[type, tuple[str, ...]] = {
    bool: ("boolean",),
    int: ("int", "long"),
    float: ("float", "double"),
    str: ("string", "enum"),
    bytes: ("bytes", "fixed"),
    Decimal: ("decimal",),
    dict: ("record", "error", "map"),
    list: ("array",),
}


def _converter(schema: Any, names: dict[str, Any]) -> Callable[[Any], Any] | None:
    """A per-value function turning multi-branch union values into ``member<i>`` dicts (None: identity)."""
    if isinstance(schema, str):
        return None  # named references are not expanded again (records are not recursive)
    if isinstance(schema, list):
        branches = union_branches(schema)
        kinds = [_branch_kind(b, names) for b in branches]
        if len(branches) <= 1 or set(kinds) <= {"int", "long"} or set(kinds) <= {"float", "double"}:
            inner = _converter(branches[0], names) if branches else None
            return inner
        subs = [_converter(b, names) for b in branches]
        named = {
            (b.get("name") if isinstance(b, dict) else b): i
            for i, b in enumerate(branches)
            if isinstance(b, str) or (isinstance(b, dict) and "name" in b)
        }
        members = [f"member{i}" for i in range(len(branches))]

        def convert(value: Any) -> Any:
            if value is None:
                return None
            index = None
            if isinstance(value, tuple):  # (name, value) where several named types share the union
                name, value = value
                index = named.get(name)
                if index is None:  # one side's name is qualified by a namespace, the other's not
                    index = next(
                        (
                            i
                            for n, i in named.items()
                            if str(n).endswith("." + str(name)) or str(name).endswith("." + str(n))
                        ),
                        None,
                    )
            if index is None:
                wanted = _PY_KIND.get(type(value), ())
                index = next((i for i, k in enumerate(kinds) if k in wanted), 0)
            out = dict.fromkeys(members)
            sub = subs[index]
            out[members[index]] = sub(value) if sub is not None else value
            return out

        return convert
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, (dict, list)):
        return _converter(kind, names)
    if kind in ("record", "error"):
        field_convs = [(str(f["name"]), _converter(f["type"], names)) for f in schema.get("fields", [])]
        active = [(n, c) for n, c in field_convs if c is not None]
        if not active:
            return None

        def convert_record(value: Any) -> Any:
            if value is None:
                return None
            for name, conv in active:
                value[name] = conv(value.get(name))
            return value

        return convert_record
    if kind == "array":
        item = _converter(schema["items"], names)
        if item is None:
            return None
        return lambda value: None if value is None else [item(v) for v in value]
    if kind == "map":
        val = _converter(schema["values"], names)
        if val is None:
            return None
        return lambda value: None if value is None else {k: val(v) for k, v in value.items()}
    return None


class AvroDecoder:
    """Decodes header-less Avro payloads to the reader schema's Arrow type (Spark's ``from_avro`` types)."""

    def __init__(self, reader_schema: str) -> None:
        import fastavro

        try:
            reader = json.loads(reader_schema)
        except json.JSONDecodeError as exc:
            raise AvroSchemaError(f"the reader schema is not JSON: {exc}") from None
        names: dict[str, Any] = {}
        self.arrow_type = avro_arrow_type(reader, names)
        self._wire_type = avro_arrow_type(reader, {}, wire_units=True)
        self._convert = _converter(reader, names)
        try:
            self._reader = fastavro.parse_schema(strip_time_logical_types(reader))
        except Exception as exc:  # fastavro's SchemaParseException and friends
            raise AvroSchemaError(f"the reader schema is not a valid Avro schema: {exc}") from None
        self._reader_canonical = json.dumps(strip_time_logical_types(reader), sort_keys=True)
        self._writers: dict[str, tuple[Any, bool]] = {}
        native = native_avro_decoder()
        sound = isinstance(reader, dict) and reader.get("type") in ("record", "error")
        self._native_class = native if sound else None
        self._native: dict[str, Any] = {}  # writer schema text -> AvroBatchDecoder, or None: refused
        self._direct = self._direct_decoder(reader_schema) if self._native_class is not None else None

    @property
    def native(self) -> bool:
        """Whether groups are decoded natively (module present, reader schema in its scope)."""
        return self._native_class is not None

    def _direct_decoder(self, reader_schema: str) -> Any:
        """The compiled ``AvroDirectDecoder`` of the reader schema, or ``None``.

        ``None``: the module lacks it, ``$SPARKFLOW_AVRO_DECODER`` is ``arrow-avro`` (benchmarks and
        tests comparing the two), it refuses the schema, or its type is not ``arrow_type``.
        """
        direct_class = compiled_class("AvroDirectDecoder", _NATIVE_ENV)
        if direct_class is None or os.environ.get(_NATIVE_ENV, "").lower() == "arrow-avro":
            return None
        try:
            direct = direct_class(reader_schema)
        except ValueError:
            return None
        return direct if direct.arrow_type == self.arrow_type else None

    def _native_for(self, writer_schema: str) -> Any:
        if writer_schema not in self._native:
            stripped = strip_time_logical_types(json.loads(writer_schema))
            same = json.dumps(stripped, sort_keys=True) == self._reader_canonical
            if same and self._direct is not None:  # nothing to resolve: the direct decoder
                self._native[writer_schema] = self._direct
                return self._direct
            try:
                self._native[writer_schema] = self._native_class(
                    json.dumps(stripped), None if same else self._reader_canonical
                )
            except ValueError:  # arrow-avro cannot resolve this pair: fastavro reads it
                self._native[writer_schema] = None
        return self._native[writer_schema]

    def decode_arrow(self, payloads: pa.Array, writer_schema: str, skip: int = 0) -> pa.Array | None:
        """The group's payloads (a binary array without nulls), each after its first ``skip`` bytes
        (a header the caller has read), decoded natively, or ``None``.

        ``None``: the native decoder is absent or refused the group (the caller uses
        ``decode_group``, which isolates bad records). The result is in ``arrow_type``.
        """
        if self._native_class is None:
            return None
        native = self._native_for(writer_schema)
        if native is None:
            return None
        from sparkflow_kafka_native import AvroBatchError

        if native is self._direct:
            try:  # already in arrow_type
                return native.decode(pa.RecordBatch.from_arrays([payloads], names=["datum"]), skip)
            except AvroBatchError:
                return None
        if skip:
            payloads = pc.binary_slice(payloads, skip, 2**31 - 1)  # an explicit stop: see record_decoder
        datums = pa.RecordBatch.from_arrays([payloads], names=["datum"])
        try:
            batches = native.decode(datums)
        except AvroBatchError:
            return None
        arrays = [b.to_struct_array() for b in batches]
        if not arrays:
            return pa.array([], self.arrow_type)
        try:
            merged = arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays)
            merged = spark_unions(merged, self._wire_type)  # arrow-avro's unions as Spark's members
            return merged.cast(self._wire_type).cast(self.arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError, KeyError):
            self._native[writer_schema] = None  # a type arrow-avro gives differently: fastavro
            return None

    def native_good_rows(self, payloads: pa.Array, decoded: list[Any], writer_schema: str) -> pa.Array | None:
        """The group's records fastavro read (``decoded``: their values, ``None`` where a record was
        refused) decoded again natively, null where refused; ``None`` if nothing native takes them.

        fastavro returns a value of a union that holds a string and an enum (or bytes and a fixed,
        an int and a long beside other branches) without its branch, so its member would be
        guessed; the native decoders read the branch index, so a group with a malformed record
        gives its good records the members every other group gives them.
        """
        good = np.fromiter((d is not None for d in decoded), dtype=bool, count=len(decoded))
        if self._native_class is None or not good.any():
            return None
        arr = self.decode_arrow(payloads.filter(pa.array(good)), writer_schema)
        if arr is None:
            return None
        where = np.cumsum(good) - 1
        where[~good] = len(arr)  # the null appended below
        return pa.concat_arrays([arr, pa.nulls(1, arr.type)]).take(pa.array(where))

    def _writer(self, writer_schema: str) -> tuple[Any, bool]:
        """The parsed writer schema and whether it equals the reader schema."""
        import fastavro

        cached = self._writers.get(writer_schema)
        if cached is None:
            stripped = strip_time_logical_types(json.loads(writer_schema))
            same = json.dumps(stripped, sort_keys=True) == self._reader_canonical
            cached = self._writers[writer_schema] = (fastavro.parse_schema(stripped), same)
        return cached

    def decode_group(self, payloads: Sequence[bytes], writer_schema: str) -> list[Any | Exception]:
        """Each payload decoded (a dict or value) or the exception that refused it; same order.

        A record the reader schema cannot resolve (a missing default, an enum symbol or union
        branch the reader lacks) comes back as ``fastavro``'s ``SchemaResolutionError``.
        """
        import fastavro

        parsed, same = self._writer(writer_schema)
        reader = None if same else self._reader  # no resolution pass when the schemas are equal
        # a union of several named types (records included) gives (name, value): its branch by name
        read = functools.partial(
            fastavro.schemaless_reader,
            return_named_type_override=True,
            return_record_name=True,
            return_record_name_override=True,
        )
        bytes_io = io.BytesIO
        try:  # the common case: every record well formed, one comprehension
            return [read(bytes_io(p), parsed, reader) for p in payloads]
        except Exception:  # noqa: BLE001 - find the failing records one by one below
            pass
        out: list[Any | Exception] = []
        for payload in payloads:
            try:
                out.append(read(bytes_io(payload), parsed, reader))
            except Exception as exc:  # noqa: BLE001 - the caller applies the parse mode
                out.append(exc)
        return out

    def to_arrow(self, values: list[Any]) -> pa.Array:
        """The Arrow array of decoded values (``None`` for null rows)."""
        if self._convert is not None:
            values = [self._convert(v) for v in values]
        return pa.array(values, self._wire_type).cast(self.arrow_type)


def describe_error(exc: Exception) -> str:
    """A short, secret-free description of a decoding failure."""
    text = str(exc).split(os.linesep)[0][:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def is_resolution_error(exc: Exception) -> bool:
    """Whether ``exc`` says the reader schema cannot resolve the writer's data (not malformed bytes)."""
    from fastavro.read import SchemaResolutionError

    return isinstance(exc, SchemaResolutionError)
