"""``JsonDecoder``: JSON payloads -> one Arrow array of the type a JSON Schema describes.

Spark has no JSON Schema mapping of its own (``from_json`` takes a Spark schema), so this follows
the JSON Schema types the way Confluent's and Flink's JSON formats read them:

| JSON Schema | Spark |
|---|---|
| ``object`` with ``properties`` | struct (properties in declaration order) |
| ``object`` with only ``additionalProperties: <schema>`` | map<string, V> |
| ``array`` with ``items`` | array |
| ``string`` (any ``format``) | string |
| ``integer`` | bigint |
| ``number`` | double |
| ``boolean`` | boolean |
| ``["T", "null"]``, ``oneOf``/``anyOf`` of T and ``null`` | T, nullable |
| ``$ref`` to ``#/definitions/X`` or ``#/$defs/X`` | X |
| anything else (``oneOf`` of several types, no ``type``) | string (the value's JSON text) |

Properties missing from a record are null; properties the reader schema does not name are
ignored (the JSON reading of "reader schema"); the registry's writer schema is not used to decode
(JSON carries its names).

Parsing is orjson's (about 3x the standard library's ``json`` on the benchmark's records); what
orjson refuses and ``json`` reads (``NaN``, ``Infinity``, a lone surrogate, a number beyond a
double, UTF-16/32 text) is read by ``json``, so orjson only adds speed. One difference remains: an
integer beyond 64 bits is a double to orjson (as Jackson, Spark's JSON parser, reads it for a double
column), an int to ``json``; both paths use orjson first, so every batch reads it the same way.
``pyarrow.json`` was weighed and refused: it cannot produce map columns, and a record that is
``null`` crashes its reader (pyarrow 26). A group decodes in bulk first (``decode_arrow``: parse,
validate, one ``pyarrow.array`` call of the parsed values, with Python's garbage collector paused
as the values hold no cycles); when any record fails, record by record (``decode_group``) to find
and name the malformed ones.

Native decoding: ``decode_arrow`` first hands the group to the compiled module's
``JsonBatchDecoder`` (``native/kafka_reader/src/json_decode.rs``: serde_json, the ``jsonschema``
crate that jsonschema-rs wraps, the values appended straight into Arrow buffers of ``arrow_type``,
the GIL released, no Python object per record). It answers only where its answer is this module's
and refuses the whole group otherwise (a record that does not parse or validate there, a value whose
type does not fit, what orjson and serde_json read differently: its docstring lists them); the bulk
and record paths here then decide. It is not used for writer schemas whose validation ``jsonschema``
decides alone (regex keywords) nor for those it declines (``multipleOf``, the ``idn-*`` formats,
numbers of 2^53 or more: the Python wheel is built with arbitrary precision and IDNA, the crate here
without). ``SPARKFLOW_JSON_DECODER=python`` forces the Python paths (tests, benchmarks).

Validation (``<p>Validate``, default ``true`` as in Confluent's ``JSONDeserializer``): each record
is validated against its *writer* schema (the schema its id names; the inline schema for plain
``json``); a record that does not validate is malformed, its reason naming the JSON pointer of the
failing value and the schema keyword. The validator is the ``jsonschema`` package, the library
confluent-kafka's own JSON serializer and deserializer validate with (so "valid" means here what
it means to the producer), every draft by the schema's ``$schema``, errors with their locations.
``fastjsonschema`` (faster, code generated with ``exec``) was weighed: it is not installed with
confluent-kafka, supports drafts 04/06/07 only (Confluent registers 2020-12 too) and reports a
path string, not the failing keyword; one validator is compiled per writer schema and reused.

Threading: one decoder per reader thread.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import pyarrow as pa

from connectors.formats.avro_types import AvroSchemaError
from connectors.formats.native_module import compiled_class

__all__ = [
    "JsonDecoder",
    "JsonSchemaValidationError",
    "json_schema_arrow_type",
    "json_validator",
    "native_json_decoder",
]

_NATIVE_ENV = "SPARKFLOW_JSON_DECODER"

_SIMPLE = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(), "boolean": pa.bool_()}


def _resolve_ref(ref: str, root: dict[str, Any]) -> Any:
    if not ref.startswith("#/"):
        raise AvroSchemaError(
            f"JSON Schema $ref {ref!r}: only local references (#/definitions/..., #/$defs/...)"
        )
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            raise AvroSchemaError(f"JSON Schema $ref {ref!r} points nowhere")
    return node


def json_schema_arrow_type(
    schema: Any, root: dict[str, Any] | None = None, _refs: tuple[str, ...] = ()
) -> pa.DataType:
    """The Arrow type of values that ``schema`` describes."""
    root = schema if root is None else root
    if schema is True or schema == {}:
        return pa.string()
    if not isinstance(schema, dict):
        raise AvroSchemaError(f"not a JSON Schema: {schema!r}")
    if "$ref" in schema:
        ref = str(schema["$ref"])
        if ref in _refs:
            raise AvroSchemaError(f"JSON Schema {ref!r} is recursive; Spark types cannot hold it")
        return json_schema_arrow_type(_resolve_ref(ref, root), root, (*_refs, ref))
    for key in ("oneOf", "anyOf"):
        if key in schema:
            branches = [b for b in schema[key] if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(branches) == 1:
                return json_schema_arrow_type(branches[0], root, _refs)
            return pa.string()
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) != 1:
            return pa.string()
        kind = kinds[0]
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == "array":
        return pa.list_(json_schema_arrow_type(schema.get("items", {}), root, _refs))
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        if not props and isinstance(extra, dict):
            return pa.map_(pa.string(), json_schema_arrow_type(extra, root, _refs))
        return pa.struct(
            [pa.field(name, json_schema_arrow_type(s, root, _refs)) for name, s in props.items()]
        )
    return pa.string()


class JsonSchemaValidationError(ValueError):
    """A JSON value that does not validate against its JSON Schema."""


def json_pointer(path: Sequence[Any]) -> str:
    """The RFC 6901 pointer of a value's location (``""``: the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


_PYTHON_ONLY = re.compile(r'"(pattern|patternProperties)"\s*:')
"""Keywords whose meaning depends on the regex dialect: with them the Python validator alone decides."""


def _fast_check(schema: Any, schema_text: str) -> Callable[[Any], bool] | None:
    """jsonschema-rs's ``is_valid`` for ``schema`` (offline: no ``$ref`` is fetched), or ``None`` where
    the Python validator alone decides (regex keywords, a schema jsonschema-rs refuses, no package)."""
    if _PYTHON_ONLY.search(schema_text):
        return None
    try:
        import jsonschema_rs

        return jsonschema_rs.validator_for(schema, offline=True).is_valid
    except Exception:  # noqa: BLE001 - any refusal: the Python validator decides alone
        return None


class JsonSchemaChecks(NamedTuple):
    """A JSON Schema's two checks: ``validate`` (raises ``JsonSchemaValidationError`` with the reason)
    and ``accepts``, jsonschema-rs's quick yes (``None`` where ``jsonschema`` alone decides)."""

    validate: Callable[[Any], None]
    accepts: Callable[[Any], bool] | None


def json_validator(schema_text: str) -> Callable[[Any], None]:
    """A function raising ``JsonSchemaValidationError`` for values that ``schema_text`` refuses (see
    ``json_checks``)."""
    return json_checks(schema_text).validate


def json_checks(schema_text: str) -> JsonSchemaChecks:
    """The checks of ``schema_text``; raises ``AvroSchemaError`` when it is no valid JSON Schema.

    The verdict is the ``jsonschema`` package's (confluent-kafka's validator). ``jsonschema-rs`` (the
    Rust implementation, about 90x faster on the benchmark's records: 2.8 against 259 us) answers
    first: a value it accepts is accepted, a value it refuses is judged again by ``jsonschema``, whose
    verdict and error stand. Both pass the JSON Schema test suite; where they could still differ in
    the accepting direction (``pattern``, ``patternProperties``: Rust's regex dialect against Python's
    ``re``), ``jsonschema`` alone decides. jsonschema-rs validates ``format`` where its draft asks
    (stricter), which only sends more values to ``jsonschema``."""
    import jsonschema
    from jsonschema.exceptions import SchemaError, best_match

    try:
        schema = json.loads(schema_text)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except (json.JSONDecodeError, SchemaError) as exc:
        raise AvroSchemaError(f"not a valid JSON Schema: {str(exc).splitlines()[0][:300]}") from None
    validator = cls(schema)
    fast = _fast_check(schema, schema_text)

    def validate(value: Any) -> None:
        if fast is not None:
            try:
                if fast(value):
                    return
            except (ValueError, TypeError, OverflowError):  # a value it cannot take (a huge integer)
                pass
        if validator.is_valid(value):
            return
        error = best_match(validator.iter_errors(value))
        assert error is not None
        where = json_pointer(list(error.absolute_path)) or "(the root)"
        raise JsonSchemaValidationError(
            f"does not validate against its JSON Schema at {where} "
            f"(keyword {error.validator!r}): {error.message[:200]}"
        )

    return JsonSchemaChecks(validate, fast)


def _json_loads() -> Callable[[bytes], Any]:
    """orjson's ``loads``, and ``json``'s for what orjson refuses (see the module's docstring)."""
    try:
        import orjson
    except ImportError:  # an install without the kafka extra's orjson
        return json.loads
    fast, refused = orjson.loads, orjson.JSONDecodeError

    def loads(payload: bytes) -> Any:
        try:
            return fast(payload)
        except refused:
            return json.loads(payload)

    return loads


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a batch of parsed values (acyclic dicts and lists)
    is built: its passes over the young objects cost more than the parsing itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _coerced(typ: pa.DataType) -> Callable[[Any], bool] | None:
    """A test for a value that ``pyarrow.array`` would take for ``typ`` by changing it (a string's
    characters as a list's items, a fraction cut from an integer, a boolean as 1.0), where the reader
    must refuse it instead; ``None`` when ``typ`` holds no position where that can happen."""
    if pa.types.is_integer(typ):
        return lambda v: isinstance(v, float) and not v.is_integer()
    if pa.types.is_floating(typ):
        return lambda v: isinstance(v, bool)
    if pa.types.is_list(typ):
        inner = _coerced(typ.value_type)
        if inner is None:
            return lambda v: isinstance(v, str)
        return lambda v: isinstance(v, str) or (isinstance(v, list) and any(map(inner, v)))
    if pa.types.is_struct(typ):
        return _struct_coerced(typ)
    if pa.types.is_map(typ):
        item = _coerced(typ.item_type)
        return None if item is None else (lambda v: isinstance(v, dict) and any(map(item, v.values())))
    return None


def _struct_coerced(typ: pa.StructType) -> Callable[[Any], bool] | None:
    """``_coerced`` of a struct, its integer and floating fields tested inline (it runs per record)."""
    ints = tuple(f.name for f in typ if pa.types.is_integer(f.type))
    floats = tuple(f.name for f in typ if pa.types.is_floating(f.type))
    others = tuple(
        (f.name, g)
        for f in typ
        if not (pa.types.is_integer(f.type) or pa.types.is_floating(f.type))
        and (g := _coerced(f.type)) is not None
    )
    if not (ints or floats or others):
        return None

    def check(v: Any) -> bool:
        if v.__class__ is not dict:
            return False
        get = v.get
        for name in ints:
            x = get(name)
            if x.__class__ is float and not x.is_integer():
                return True
        for name in floats:
            if get(name).__class__ is bool:
                return True
        for name, g in others:
            if g(get(name)):
                return True
        return False

    return check


def _integer(v: Any) -> Any:
    if isinstance(v, float) and not v.is_integer():
        raise TypeError(f"expected an integer, got {v!r}")
    return v


def _number(v: Any) -> Any:
    if isinstance(v, bool):
        raise TypeError(f"expected a number, got {json.dumps(v)}")
    return v


def _shaper(typ: pa.DataType) -> Callable[[Any], Any] | None:
    """A per-value function that fits parsed JSON to ``typ`` (None: identity)."""
    if pa.types.is_string(typ):
        return lambda v: v if v is None or isinstance(v, str) else json.dumps(v)
    if pa.types.is_integer(typ):  # pyarrow would cut a fraction off
        return _integer
    if pa.types.is_floating(typ):  # pyarrow would read true as 1.0
        return _number
    if pa.types.is_struct(typ):
        fields = [(f.name, _shaper(f.type)) for f in typ]

        def struct(v: Any) -> Any:
            if not isinstance(v, dict):
                if v is None:
                    return None
                raise TypeError(f"expected a JSON object, got {type(v).__name__}")
            return {n: (s(v.get(n)) if s else v.get(n)) for n, s in fields}

        return struct
    if pa.types.is_list(typ):
        item = _shaper(typ.value_type)
        if item is None:
            return None  # a list of booleans: pyarrow refuses a string or an object for it

        def items(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, str | dict):  # iterating them would give characters or keys
                raise TypeError(f"expected a JSON array, got {type(v).__name__}")
            return [item(x) for x in v]

        return items
    if pa.types.is_map(typ):
        item = _shaper(typ.item_type)
        return (
            (lambda v: v)
            if item is None
            else (lambda v: None if v is None else {k: item(x) for k, x in v.items()})
        )
    return None


def native_json_decoder() -> Any:
    """The compiled ``JsonBatchDecoder`` class, or ``None`` (module absent or older, or forced off)."""
    return compiled_class("JsonBatchDecoder", _NATIVE_ENV)


class JsonDecoder:
    """Decodes header-less JSON payloads to the reader schema's Arrow type."""

    def __init__(self, reader_schema: str, validate: bool = True) -> None:
        self._validate = validate
        self._checks: dict[str, JsonSchemaChecks] = {}
        try:
            schema = json.loads(reader_schema)
        except json.JSONDecodeError as exc:
            raise AvroSchemaError(f"the JSON Schema is not JSON: {exc}") from None
        self.arrow_type = json_schema_arrow_type(schema)
        self._shape = _shaper(self.arrow_type)
        self._coerced = _coerced(self.arrow_type)
        self._loads = _json_loads()
        self._native_class = native_json_decoder()
        self._native: dict[str, Any] = {}  # writer schema text -> JsonBatchDecoder, or None: declined

    @property
    def native(self) -> bool:
        """Whether groups are offered to the compiled decoder first (module present, not forced off)."""
        return self._native_class is not None

    def _native_for(self, writer_schema: str) -> Any:
        """The compiled decoder of ``writer_schema`` (built once), or ``None`` where it is not used."""
        if writer_schema not in self._native:
            decoder = None
            if self._native_class is not None and self._native_trusted(writer_schema):
                try:
                    decoder = self._native_class(self.arrow_type, writer_schema if self._validate else None)
                except ValueError:  # a schema the crate declines or cannot compile: Python decides
                    decoder = None
            self._native[writer_schema] = decoder
        return self._native[writer_schema]

    def _native_trusted(self, writer_schema: str) -> bool:
        """Whether the jsonschema crate's yes is the verdict (as jsonschema-rs's is in ``json_checks``)."""
        if not self._validate:
            return True
        try:
            return self._checks_for(writer_schema).accepts is not None
        except AvroSchemaError:  # decode_group raises it for the group
            return False

    def decode_arrow(self, group: pa.Array, writer_schema: str) -> pa.Array | None:
        """The group's values in one Arrow array when every record parses, validates (jsonschema-rs
        accepting it) and fits the reader type as parsed; else ``None``, and ``decode_group`` decides
        record by record (as it does for schemas whose validation ``jsonschema`` alone decides). The
        compiled decoder answers first where it can; a group it refuses is decoded here."""
        native = self._native_for(writer_schema) if self._native_class is not None else None
        if native is not None:
            from sparkflow_kafka_native import JsonBatchError

            try:
                return native.decode(group)
            except JsonBatchError:
                pass
        accepts = None
        if self._validate:
            try:
                accepts = self._checks_for(writer_schema).accepts
            except AvroSchemaError:  # decode_group raises it for the group
                return None
            if accepts is None:
                return None
        loads, coerced = self._loads, self._coerced
        with _gc_paused():
            try:
                values = [loads(p) for p in group.to_pylist()]
                if accepts is not None and not all(map(accepts, values)):
                    return None
                if coerced is not None and any(map(coerced, values)):
                    return None
                return pa.array(values, self.arrow_type)
            except (ValueError, TypeError, OverflowError, RecursionError):  # Arrow's errors included
                return None

    def _checks_for(self, writer_schema: str) -> JsonSchemaChecks:
        """``writer_schema``'s checks, compiled once per decoder."""
        checks = self._checks.get(writer_schema)
        if checks is None:
            checks = self._checks[writer_schema] = json_checks(writer_schema)
        return checks

    def decode_group(self, payloads: Sequence[bytes], writer_schema: str) -> list[Any | Exception]:
        """Each payload parsed, validated against ``writer_schema`` (when on) and shaped, or the
        exception that refused it (an invalid writer schema raises: the whole group is unreadable)."""
        out: list[Any | Exception] = []
        loads, shape = self._loads, self._shape
        check = self._checks_for(writer_schema).validate if self._validate else None
        with _gc_paused():
            for payload in payloads:
                try:
                    value = loads(payload)
                    if check is not None:
                        check(value)
                    out.append(shape(value) if shape else value)
                except Exception as exc:  # noqa: BLE001 - the caller applies the parse mode
                    out.append(exc)
        return out

    def to_arrow(self, values: list[Any]) -> pa.Array:
        """The Arrow array of decoded values."""
        return pa.array(values, self.arrow_type)

    def bad_values(self, values: list[Any]) -> dict[int, str]:
        """Rows whose values do not fit the Arrow type (checked one by one after a batch failed)."""
        bad = {}
        for i, v in enumerate(values):
            try:
                pa.array([v], self.arrow_type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError, UnicodeEncodeError) as exc:
                bad[i] = f"{type(exc).__name__}: {str(exc)[:200]}"  # a lone surrogate ``json`` read: no UTF-8
        return bad
