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
(JSON carries its names). Parsing is the standard library's C ``json`` module; values become Arrow
in one ``pyarrow.array`` call per batch, and a batch that fails is converted record by record to
find the malformed ones.

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

import json
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from connectors.formats.avro_types import AvroSchemaError

__all__ = ["JsonDecoder", "JsonSchemaValidationError", "json_schema_arrow_type", "json_validator"]

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


def json_validator(schema_text: str) -> Callable[[Any], None]:
    """A function raising ``JsonSchemaValidationError`` for values that ``schema_text`` refuses."""
    import jsonschema
    from jsonschema.exceptions import SchemaError, best_match

    try:
        schema = json.loads(schema_text)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except (json.JSONDecodeError, SchemaError) as exc:
        raise AvroSchemaError(f"not a valid JSON Schema: {str(exc).splitlines()[0][:300]}") from None
    validator = cls(schema)

    def validate(value: Any) -> None:
        if validator.is_valid(value):
            return
        error = best_match(validator.iter_errors(value))
        assert error is not None
        where = json_pointer(list(error.absolute_path)) or "(the root)"
        raise JsonSchemaValidationError(
            f"does not validate against its JSON Schema at {where} "
            f"(keyword {error.validator!r}): {error.message[:200]}"
        )

    return validate


def _shaper(typ: pa.DataType) -> Callable[[Any], Any] | None:
    """A per-value function that fits parsed JSON to ``typ`` (None: identity)."""
    if pa.types.is_string(typ):
        return lambda v: v if v is None or isinstance(v, str) else json.dumps(v)
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
        return None if item is None else (lambda v: None if v is None else [item(x) for x in v])
    if pa.types.is_map(typ):
        item = _shaper(typ.item_type)
        return (
            (lambda v: v)
            if item is None
            else (lambda v: None if v is None else {k: item(x) for k, x in v.items()})
        )
    return None


class JsonDecoder:
    """Decodes header-less JSON payloads to the reader schema's Arrow type."""

    def __init__(self, reader_schema: str, validate: bool = True) -> None:
        self._validate = validate
        self._validators: dict[str, Callable[[Any], None]] = {}
        try:
            schema = json.loads(reader_schema)
        except json.JSONDecodeError as exc:
            raise AvroSchemaError(f"the JSON Schema is not JSON: {exc}") from None
        self.arrow_type = json_schema_arrow_type(schema)
        self._shape = _shaper(self.arrow_type)

    def decode_group(self, payloads: Sequence[bytes], writer_schema: str) -> list[Any | Exception]:
        """Each payload parsed, validated against ``writer_schema`` (when on) and shaped, or the
        exception that refused it (an invalid writer schema raises: the whole group is unreadable)."""
        out: list[Any | Exception] = []
        loads, shape = json.loads, self._shape
        check = None
        if self._validate:
            check = self._validators.get(writer_schema)
            if check is None:
                check = self._validators[writer_schema] = json_validator(writer_schema)
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
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
                bad[i] = f"{type(exc).__name__}: {str(exc)[:200]}"
        return bad
