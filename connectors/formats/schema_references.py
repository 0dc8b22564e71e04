"""Avro and JSON Schema registry schemas with references, made self-contained.

A schema registered with references (Confluent's ``references``: name, subject, version) uses types
another subject defines: an Avro record naming ``shop.Address``, a JSON Schema with
``"$ref": "address.json"``. Confluent's deserializers resolve them by handing the referenced schemas
to the library beside the schema (fastavro's named schemas, a ``referencing`` registry). Here the
schema is rewritten once, when it is fetched, into one text that holds everything, so every
consumer of a schema text (the native Avro decoder, fastavro, the JSON Schema validator, the Spark
type mapping, the checkpoint's reader schema, Spark's own ``from_avro``) reads it unchanged:

- **Avro**: each referenced named type is defined where the schema first uses it, as Avro allows
  (a name may be used after its definition anywhere in the same schema), and named by its full
  name. Names resolve as Avro's parser resolves them: a short name in the enclosing namespace
  first, then as given. A named type defined twice (in the schema and in a reference) keeps the
  first definition.
- **JSON Schema**: each referenced document is placed under the root's ``$defs`` (key
  ``registry-reference-<i>``) and every ``$ref`` to it (``address.json``, ``address.json#/x``,
  also when a relative name is given against the root's ``$id``) becomes a local pointer; a
  referenced document's own local ``$ref`` s are re-rooted the same way, and its ``$id``/``$schema``
  dropped (they would open a new resolution scope inside the root).

Protobuf keeps its references as separate files (``protobuf_schema.py`` compiles them as imports).
No library does this rewrite: fastavro and ``referencing`` resolve references only in memory,
for their own parsers, and the native decoder and Spark's ``from_avro`` take one schema text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urljoin

from connectors.formats.avro_types import AvroSchemaError

__all__ = ["inline_avro_references", "inline_json_references", "self_contained"]

_AVRO_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_AVRO_NAMED = {"record", "error", "enum", "fixed"}
_AVRO_COMPLEX = {*_AVRO_NAMED, "array", "map"}


def self_contained(schema_type: str, text: str, references: Sequence[tuple[str, str]]) -> str:
    """``text`` with its ``references`` (``(name, text)``, dependencies first) inlined (Avro, JSON)."""
    if not references:
        return text
    kind = schema_type.upper()
    if kind == "AVRO":
        return inline_avro_references(text, references)
    if kind == "JSON":
        return inline_json_references(text, references)
    return text


def _fullname(node: dict[str, Any], namespace: str | None) -> tuple[str, str | None]:
    """A named type's full name and the namespace its nested names resolve in."""
    name = str(node["name"])
    if "." in name:
        return name, name.rsplit(".", 1)[0]
    ns = node.get("namespace", namespace)
    ns = ns or None
    return (f"{ns}.{name}" if ns else name), ns


def _named_types(node: Any, namespace: str | None, out: dict[str, tuple[dict[str, Any], str | None]]) -> None:
    """Every named type defined in ``node``: full name -> (definition, its enclosing namespace)."""
    if isinstance(node, list):
        for branch in node:
            _named_types(branch, namespace, out)
    elif isinstance(node, dict):
        kind = node.get("type")
        if kind in _AVRO_NAMED and "name" in node:
            full, inner = _fullname(node, namespace)
            out.setdefault(full, (node, namespace))
            for f in node.get("fields", ()):
                _named_types(f.get("type"), inner, out)
        elif kind == "array":
            _named_types(node.get("items"), namespace, out)
        elif kind == "map":
            _named_types(node.get("values"), namespace, out)
        elif isinstance(kind, (dict, list)):
            _named_types(kind, namespace, out)


class _AvroInliner:
    """Walks a schema in definition order, defining each referenced name at its first use."""

    def __init__(self, available: dict[str, tuple[dict[str, Any], str | None]]) -> None:
        self.available = available
        self.defined: set[str] = set()

    def _lookup(self, name: str, namespace: str | None) -> str | None:
        candidates = [f"{namespace}.{name}", name] if namespace and "." not in name else [name]
        for full in candidates:
            if full in self.defined or full in self.available:
                return full
        return None

    def walk(self, node: Any, namespace: str | None) -> Any:
        if isinstance(node, str):
            if node in _AVRO_PRIMITIVES:
                return node
            full = self._lookup(node, namespace)
            if full is None or full in self.defined:
                return full or node  # unknown names are left for the parser to report
            definition, outer = self.available[full]
            return self.walk(definition, outer)
        if isinstance(node, list):
            return [self.walk(branch, namespace) for branch in node]
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        if isinstance(kind, (dict, list)):
            return {**node, "type": self.walk(kind, namespace)}
        if isinstance(kind, str) and kind not in _AVRO_PRIMITIVES and kind not in _AVRO_COMPLEX:
            return self.walk(kind, namespace)  # {"type": "shop.Address"}: a name used in an object
        if kind in _AVRO_NAMED and "name" in node:
            full, inner = _fullname(node, namespace)
            if full in self.defined:
                return full
            self.defined.add(full)
            out = {k: v for k, v in node.items() if k != "namespace"}
            out["name"] = full
            if "fields" in node:
                out["fields"] = [{**f, "type": self.walk(f.get("type"), inner)} for f in node["fields"]]
            return out
        if kind == "array":
            return {**node, "items": self.walk(node.get("items"), namespace)}
        if kind == "map":
            return {**node, "values": self.walk(node.get("values"), namespace)}
        return node


def inline_avro_references(text: str, references: Sequence[tuple[str, str]]) -> str:
    """The Avro schema ``text`` with every referenced named type defined at its first use."""
    available: dict[str, tuple[dict[str, Any], str | None]] = {}
    try:
        for name, ref_text in references:
            try:
                _named_types(json.loads(ref_text), None, available)
            except json.JSONDecodeError as exc:
                raise AvroSchemaError(f"the referenced Avro schema {name!r} is not JSON: {exc}") from None
        root = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AvroSchemaError(f"the Avro schema is not JSON: {exc}") from None
    return json.dumps(_AvroInliner(available).walk(root, None))


_DATA_KEYWORDS = {"const", "enum", "default", "examples"}
"""JSON Schema keywords whose values are data, not schemas: a ``$ref`` key inside them is a value."""


def _ref_key(index: int) -> str:
    return f"registry-reference-{index}"


def _rewrite_refs(node: Any, own: str | None, targets: dict[str, str], base: str | None) -> Any:
    """``node`` with its ``$ref`` s pointing inside the root (``own``: this document's key, if embedded)."""
    if isinstance(node, list):
        return [_rewrite_refs(v, own, targets, base) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DATA_KEYWORDS:
            out[key] = value
        elif key == "$ref" and isinstance(value, str):
            out[key] = _rewritten(value, own, targets, base)
        else:
            out[key] = _rewrite_refs(value, own, targets, base)
    return out


def _rewritten(ref: str, own: str | None, targets: dict[str, str], base: str | None) -> str:
    location, _hash, fragment = ref.partition("#")
    pointer = fragment if fragment.startswith("/") else ""
    if not location:  # local to the document it is written in
        return f"#/$defs/{own}{pointer}" if own is not None else ref
    key = targets.get(location)
    if key is None and base:
        key = targets.get(urljoin(base, location))
    return f"#/$defs/{key}{pointer}" if key is not None else ref


def inline_json_references(text: str, references: Sequence[tuple[str, str]]) -> str:
    """The JSON Schema ``text`` with every referenced document under ``$defs``, ``$ref`` s made local."""
    try:
        root = json.loads(text)
        docs = [(name, json.loads(ref_text)) for name, ref_text in references]
    except json.JSONDecodeError as exc:
        raise AvroSchemaError(f"a JSON Schema or one it references is not JSON: {exc}") from None
    if not isinstance(root, dict):
        return text
    base = root.get("$id") if isinstance(root.get("$id"), str) else None
    defs = root.get("$defs") if isinstance(root.get("$defs"), dict) else {}
    targets: dict[str, str] = {}
    for i, (name, _doc) in enumerate(docs):
        key = _ref_key(i)
        if key in defs:
            raise AvroSchemaError(
                f"the JSON Schema already has $defs/{key}; cannot inline reference {name!r}"
            )
        targets[name] = key
        if base:
            targets.setdefault(urljoin(base, name), key)
    embedded: dict[str, Any] = {}
    for i, (_name, doc) in enumerate(docs):
        if isinstance(doc, dict):
            own_id = doc.get("$id", doc.get("id"))
            doc = {
                k: v
                for k, v in doc.items()
                if k not in ("$id", "$schema") and not (k == "id" and isinstance(v, str))
            }
            if isinstance(own_id, str):  # the name it is known by inside the registry's documents
                targets.setdefault(own_id, _ref_key(i))
        embedded[_ref_key(i)] = doc
    out = _rewrite_refs(root, None, targets, base)
    own_defs = out["$defs"] if isinstance(out.get("$defs"), dict) else {}
    out["$defs"] = {**own_defs, **{k: _rewrite_refs(d, k, targets, base) for k, d in embedded.items()}}
    return json.dumps(out)
