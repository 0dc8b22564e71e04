"""Avro unions of several non-null branches, from arrow-avro's Arrow unions to Spark's types.

The native decoder (arrow-avro) gives such a union as an Arrow dense union with one child per
branch, ``null`` included. Spark's ``from_avro`` gives it as a struct ``member0..N`` (one field per
non-null branch, the one written set, the others null; the struct null when the null branch was
written), except for unions of ``int`` and ``long`` (a ``long``) or ``float`` and ``double`` (a
``double``). ``spark_unions`` rewrites every union in an array, at any depth (structs, lists,
maps), to the reader schema's wire type (``avro_types.avro_arrow_type(..., wire_units=True)``), in
vectorized Arrow calls: one ``take`` per branch, never a Python step per record. Leaf types (enum
dictionaries, time units) are left to the caller's cast.

Written here rather than taken from a library: pyarrow has no union-to-struct kernel, and the
branch order is Spark's, not Arrow's.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["has_union", "spark_unions"]


def has_union(t: pa.DataType) -> bool:
    """Whether ``t`` holds a union at any depth."""
    if pa.types.is_union(t):
        return True
    if pa.types.is_struct(t):
        return any(has_union(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return has_union(t.key_type) or has_union(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return has_union(t.value_type)
    return False


def spark_unions(array: pa.Array, target: pa.DataType) -> pa.Array:
    """``array`` with every union replaced by Spark's form of it, as ``target`` describes it."""
    if not has_union(array.type):
        return array
    if pa.types.is_union(array.type):
        return _union(array, target)
    mask = array.is_null() if array.null_count else None
    if pa.types.is_struct(array.type):
        children = [
            spark_unions(_struct_child(array, i), target.field(array.type.field(i).name).type)
            for i in range(array.type.num_fields)
        ]
        names = [array.type.field(i).name for i in range(array.type.num_fields)]
        return pa.StructArray.from_arrays(children, names=names, mask=mask)
    if pa.types.is_map(array.type):
        keys = spark_unions(array.keys, target.key_type)
        items = spark_unions(array.items, target.item_type)
        return pa.MapArray.from_arrays(_offsets(array), keys, items, mask=mask)
    values = spark_unions(array.values, target.value_type)
    return pa.ListArray.from_arrays(_offsets(array), values, mask=mask)


def _struct_child(array: pa.StructArray, i: int) -> pa.Array:
    """Child ``i`` aligned with ``array`` (a sliced struct's children are not sliced)."""
    child = array.field(i)
    return child.slice(array.offset, len(array)) if len(child) != len(array) or array.offset else child


def _offsets(array: pa.Array) -> pa.Array:
    """The offsets of a list or map array, rebased to its values as returned by ``.keys`` / ``.values``."""
    offsets = array.offsets
    first = offsets[0].as_py()
    return pc.subtract(offsets, first) if first else offsets


def _union(array: pa.UnionArray, target: pa.DataType) -> pa.Array:
    utype = array.type
    if utype.mode != "dense":
        raise TypeError(f"a {utype.mode} union (arrow-avro gives dense ones)")
    codes = array.type_codes
    offsets = array.offsets
    branches: list[tuple[int, pa.Array]] = []  # (type code, child) of each non-null branch, in order
    null_code: int | None = None
    for i in range(utype.num_fields):
        code = utype.type_codes[i]
        child = array.field(i)
        if pa.types.is_null(child.type):
            null_code = code
        else:
            branches.append((code, child))
    written_null = pc.equal(codes, null_code) if null_code is not None else None
    if len(branches) > 1 and pa.types.is_struct(target) and _is_members(target, len(branches)):
        members = [
            _branch_values(codes, offsets, code, spark_unions(child, target.field(k).type))
            for k, (code, child) in enumerate(branches)
        ]
        return pa.StructArray.from_arrays(
            members, names=[target.field(k).name for k in range(target.num_fields)], mask=written_null
        )
    # one column (a single non-null branch, or int/long and float/double promoted): the branch written
    picked = [
        _branch_values(codes, offsets, code, spark_unions(child, target).cast(target))
        for code, child in branches
    ]
    return picked[0] if len(picked) == 1 else pc.coalesce(*picked)


def _is_members(t: pa.StructType, count: int) -> bool:
    """Whether ``t`` is Spark's struct of ``count`` union members."""
    return t.num_fields == count and all(t.field(k).name == f"member{k}" for k in range(count))


def _branch_values(codes: pa.Array, offsets: pa.Array, code: int, child: pa.Array) -> pa.Array:
    """Per row, the branch's value where the row wrote that branch, else null."""
    indices = pc.if_else(pc.equal(codes, code), offsets, pa.scalar(None, offsets.type))
    return child.take(indices)
