"""Parquet ``mergeSchema``: the files' schemas merged as Spark's ``StructType.merge`` merges them.

The files are taken in path order (as Spark lists them). The first schema's fields keep their
order, each new field of a later schema follows them; a field present in both (names compared
without case, as under Spark's default ``spark.sql.caseSensitive=false``) takes the merge of both
types: structs field by field (recursively), arrays and maps by their element types, anything else
only when both are the same type (a decimal: the same precision and scale; no widening: ``int``
and ``bigint``, ``float`` and ``double`` do not merge). Other types do not merge: the read fails at
``load()`` naming the field and both types, as Spark's (``CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE``).
"""

from __future__ import annotations

from pyspark.sql.types import ArrayType, DataType, MapType, StructField, StructType


class SchemaMergeError(ValueError):
    """Two schemas with a field of types that do not merge."""


def merge_types(left: DataType, right: DataType, path: str) -> DataType:
    """The merge of two types of the field at ``path``; raises ``SchemaMergeError`` when none."""
    if isinstance(left, StructType) and isinstance(right, StructType):
        return merge_structs(left, right, path + ".")
    if isinstance(left, ArrayType) and isinstance(right, ArrayType):
        element = merge_types(left.elementType, right.elementType, path + ".element")
        return ArrayType(element, left.containsNull or right.containsNull)
    if isinstance(left, MapType) and isinstance(right, MapType):
        key = merge_types(left.keyType, right.keyType, path + ".key")
        value = merge_types(left.valueType, right.valueType, path + ".value")
        return MapType(key, value, left.valueContainsNull or right.valueContainsNull)
    if left == right:
        return left
    raise SchemaMergeError(
        f"field {path!r} is {left.simpleString()} in one file and {right.simpleString()} in another"
    )


def merge_structs(left: StructType, right: StructType, prefix: str = "") -> StructType:
    """``left``'s fields (merged with ``right``'s of the same name), then ``right``'s new ones; names
    match without case and keep ``left``'s spelling (Spark's default ``spark.sql.caseSensitive=false``)."""
    others = {f.name.lower(): f for f in right.fields}
    fields = []
    for f in left.fields:
        other = others.get(f.name.lower())
        if other is None:
            fields.append(f)
        else:
            merged = merge_types(f.dataType, other.dataType, prefix + f.name)
            fields.append(StructField(f.name, merged, f.nullable or other.nullable))
    names = {f.name.lower() for f in left.fields}
    fields += [f for f in right.fields if f.name.lower() not in names]
    return StructType(fields)
