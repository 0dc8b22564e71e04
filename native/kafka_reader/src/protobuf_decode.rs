//! `ProtobufBatchDecoder`: Confluent-framed Protobuf payloads (message indexes, then the message)
//! decoded in one call straight into one Arrow `StructArray` of Spark's `from_protobuf` types, with
//! the GIL released.
//!
//! The decoder walks the wire format itself against a *plan*: the reader message's fields as the
//! Python side computes them from the descriptors protoc compiled (`protobuf_decoder.native_plan`:
//! field numbers, kinds, presence, oneofs, proto2 defaults, enum names, nested plans), together
//! with the Spark Arrow type (`protobuf_types`). The Spark mapping is therefore decided in one place
//! (Python) and this module only reads bytes into Arrow buffers: no descriptor is interpreted
//! twice, and no per-record message object or map of values is allocated (what a reflection
//! library's `DynamicMessage` would do before a second pass into Arrow). Why no crate for the wire
//! format: the few primitives (varints, zig-zag, fixed widths, length-delimited) are ~60 lines
//! below and are exactly those of the Protobuf encoding spec; see native/kafka_reader/README.md.
//!
//! Semantics (those of the `protobuf` runtime's parse + the Python converter, which stay the
//! reference): last value wins for singular fields, a oneof keeps its last member, packed and
//! unpacked repeated scalars are both accepted, unknown fields are skipped, a proto3 implicit-
//! presence field whose (last) value is zero is null, an unset field takes its proto2 default or
//! null, repeated fields and maps are empty when absent, unknown open-enum numbers are named
//! `UNKNOWN_ENUM_VALUE_<Enum>_<n>`, unsigned integers wrap to signed, Timestamp/Duration become
//! microseconds (nanos truncated toward zero).
//!
//! Anything else is *refused* rather than guessed: a record that is not well formed, invalid UTF-8,
//! a singular message written twice (Protobuf merges those) or replaced within its oneof, a replaced
//! string that is not UTF-8, a field with an unexpected wire type,
//! a group, an unknown number of a closed (proto2) enum, a map entry without key or value, a map key
//! written twice, message indexes other than the expected ones, a
//! Timestamp/Duration out of range. The first refusal fails the whole call with its row
//! (`ProtobufBatchError`, args `(row, message)`); the Python caller then decodes the batch with the
//! `protobuf` runtime, which gives the reference answer for every record and isolates bad ones for
//! the parse mode.

use std::collections::HashMap;
use std::sync::Arc;

use crate::columns::{append_bytes, BinaryValues, Validity};
use arrow_array::types::{DurationMicrosecondType, TimestampMicrosecondType};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Float32Array, Float64Array, Int32Array, Int64Array,
    ListArray, MapArray, PrimitiveArray, StringArray, StructArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, OffsetBuffer, ScalarBuffer};
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use arrow_schema::DataType;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

create_exception!(
    sparkflow_kafka_native,
    ProtobufBatchError,
    PyException,
    "A payload the native Protobuf decoder refused: args are (row, message)."
);

type R<T> = Result<T, String>;

// ---- wire primitives (https://protobuf.dev/programming-guides/encoding/) ----

#[inline(always)]
fn varint(buf: &[u8], pos: &mut usize) -> R<u64> {
    let mut out: u64 = 0;
    for i in 0..10 {
        let b = *buf.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        out |= ((b & 0x7f) as u64) << (7 * i);
        if b < 0x80 {
            if i == 9 && b > 1 {
                return Err("varint longer than 64 bits".into());
            }
            return Ok(out);
        }
    }
    Err("varint longer than 10 bytes".into())
}

#[inline(always)]
fn fixed32(buf: &[u8], pos: &mut usize) -> R<u32> {
    let b = buf.get(*pos..*pos + 4).ok_or("truncated fixed32")?;
    *pos += 4;
    Ok(u32::from_le_bytes(b.try_into().unwrap()))
}

#[inline(always)]
fn fixed64(buf: &[u8], pos: &mut usize) -> R<u64> {
    let b = buf.get(*pos..*pos + 8).ok_or("truncated fixed64")?;
    *pos += 8;
    Ok(u64::from_le_bytes(b.try_into().unwrap()))
}

#[inline(always)]
fn length(buf: &[u8], pos: &mut usize) -> R<(usize, usize)> {
    let n = varint(buf, pos)?;
    let start = *pos;
    let end = start
        .checked_add(usize::try_from(n).map_err(|_| "length out of range")?)
        .filter(|e| *e <= buf.len())
        .ok_or("truncated length-delimited field")?;
    *pos = end;
    Ok((start, end))
}

/// Moves `pos` past a value of wire type `wt` that is not read (an unknown field's).
#[inline(always)]
fn skip(buf: &[u8], pos: &mut usize, wt: u8) -> R<()> {
    match wt {
        0 => drop(varint(buf, pos)?),
        1 => drop(fixed64(buf, pos)?),
        2 => drop(length(buf, pos)?),
        5 => drop(fixed32(buf, pos)?),
        3 | 4 => return Err("a group (wire type 3/4)".into()),
        other => return Err(format!("invalid wire type {other}")),
    }
    Ok(())
}

#[inline]
fn zigzag32(v: u64) -> i32 {
    let n = v as u32;
    ((n >> 1) as i32) ^ -((n & 1) as i32)
}

#[inline]
fn zigzag64(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

// ---- the plan, from Python ----

/// A set of field indexes (a word per 64 fields: most messages need one).
struct Bits {
    words: Vec<u64>,
}

impl Bits {
    fn new(n: usize) -> Self {
        Bits {
            words: vec![0; n.div_ceil(64).max(1)],
        }
    }

    #[inline(always)]
    fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    #[inline(always)]
    fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    #[inline(always)]
    fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    #[inline(always)]
    fn unset(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Enc {
    Varint,
    Zigzag,
    Fixed,
}

struct EnumInfo {
    dense: Vec<Option<String>>, // number -> name, for numbers 0..1024 (the common case)
    names: HashMap<i32, String>, // the others
    unknown_prefix: String,
    closed: bool,
}

impl EnumInfo {
    #[inline]
    fn name(&self, number: i32) -> Option<&String> {
        if number >= 0 && (number as usize) < self.dense.len() {
            return self.dense[number as usize].as_ref();
        }
        self.names.get(&number)
    }
}

/// A default for an unset singular field (proto2 `[default = ...]`, enum already named).
#[derive(Clone)]
enum Default {
    Int(i64),
    Float(f64),
    Bool(bool),
    Bytes(Vec<u8>),
}

/// One column of single values (a singular field, a list's elements, a map's keys or values).
enum Leaf {
    I32(Enc, Vec<i32>),
    I64(Enc, Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bool(BooleanBufferBuilder),
    Bytes {
        utf8: bool,
        offsets: Vec<i32>,
        data: Vec<u8>,
    },
    Enum {
        info: Arc<EnumInfo>,
        offsets: Vec<i32>,
        data: Vec<u8>,
    },
    Msg(Box<Msg>),
    Time {
        duration: bool,
        v: Vec<i64>,
    },
}

struct Col {
    leaf: Leaf,
    /// The wire type the leaf is written with (fixed by the leaf, read per value).
    wt: u8,
    nulls: Validity,
    dt: DataType,
}

struct ListCol {
    offsets: Vec<i32>,
    child: Col,
    dt: DataType,
}

struct MapCol {
    offsets: Vec<i32>,
    keys: Col,
    values: Col,
    dt: DataType,
}

enum Body {
    Single(Col),
    List(ListCol),
    Map(MapCol),
}

struct FieldPlan {
    number: u32,
    name: String,
    presence: bool,
    oneof: i32,
    default: Option<Default>,
    body: Body,
}

struct Msg {
    full_name: String,
    fields: Vec<FieldPlan>,
    by_number: HashMap<u32, usize>,
    dense: Vec<i32>, // field number -> index (-1: unknown), for numbers below its length
    seen: Bits,      // per field: a value of this row is in its column
    singles: Bits,   // the singular fields
    repeated: Vec<usize>, // the list and map fields
    oneof_last: Vec<i32>,
    nulls: Validity,
    len: usize,
    dt: DataType,
}

fn item<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<T> {
    d.get_item(key)?
        .ok_or_else(|| PyValueError::new_err(format!("plan entry without {key:?}")))?
        .extract::<T>()
        .map_err(Into::into)
}

/// How an integer kind is written: zig-zag varint (sint*), fixed width (*fixed*), else varint.
fn encoding(kind: &str) -> Enc {
    if kind.starts_with("sint") {
        Enc::Zigzag
    } else if kind.contains("fixed") {
        Enc::Fixed
    } else {
        Enc::Varint
    }
}

fn new_leaf(plan: &Bound<'_, PyDict>, dt: &DataType) -> PyResult<Leaf> {
    let kind: String = item(plan, "kind")?;
    let bad = || PyValueError::new_err(format!("plan kind {kind} does not fit Arrow type {dt}"));
    let leaf = match kind.as_str() {
        "int32" | "uint32" | "sint32" | "sfixed32" | "fixed32" if dt == &DataType::Int32 => {
            Leaf::I32(encoding(&kind), Vec::new())
        }
        "int64" | "uint64" | "sint64" | "sfixed64" | "fixed64" if dt == &DataType::Int64 => {
            Leaf::I64(encoding(&kind), Vec::new())
        }
        "float" if dt == &DataType::Float32 => Leaf::F32(Vec::new()),
        "double" if dt == &DataType::Float64 => Leaf::F64(Vec::new()),
        "bool" if dt == &DataType::Boolean => Leaf::Bool(BooleanBufferBuilder::new(0)),
        "string" if dt == &DataType::Utf8 => Leaf::Bytes {
            utf8: true,
            offsets: vec![0],
            data: Vec::new(),
        },
        "bytes" if dt == &DataType::Binary => Leaf::Bytes {
            utf8: false,
            offsets: vec![0],
            data: Vec::new(),
        },
        "enum" if dt == &DataType::Utf8 => {
            let e: Bound<'_, PyDict> = item(plan, "enum")?;
            let values: Vec<(i32, String)> = item(&e, "values")?;
            let name: String = item(&e, "name")?;
            let mut dense: Vec<Option<String>> = Vec::new();
            let mut names = HashMap::new();
            for (number, value) in values {
                if (0..1024).contains(&number) {
                    if dense.len() <= number as usize {
                        dense.resize(number as usize + 1, None);
                    }
                    dense[number as usize] = Some(value); // an alias: the last name, as in Python
                } else {
                    names.insert(number, value);
                }
            }
            Leaf::Enum {
                info: Arc::new(EnumInfo {
                    dense,
                    names,
                    unknown_prefix: format!("UNKNOWN_ENUM_VALUE_{name}_"),
                    closed: item(&e, "closed")?,
                }),
                offsets: vec![0],
                data: Vec::new(),
            }
        }
        "timestamp" if matches!(dt, DataType::Timestamp(_, _)) => Leaf::Time {
            duration: false,
            v: Vec::new(),
        },
        "duration" if matches!(dt, DataType::Duration(_)) => Leaf::Time {
            duration: true,
            v: Vec::new(),
        },
        "message" => {
            let fields: Bound<'_, PyList> = item(plan, "fields")?;
            Leaf::Msg(Box::new(Msg::new(item(plan, "message")?, &fields, dt)?))
        }
        _ => return Err(bad()),
    };
    Ok(leaf)
}

fn new_col(plan: &Bound<'_, PyDict>, dt: &DataType) -> PyResult<Col> {
    let leaf = new_leaf(plan, dt)?;
    Ok(Col {
        wt: leaf.wire_type(),
        leaf,
        nulls: Validity::default(),
        dt: dt.clone(),
    })
}

fn default_of(plan: &Bound<'_, PyDict>) -> PyResult<Option<Default>> {
    let Some(v) = plan.get_item("default")? else {
        return Ok(None);
    };
    if v.is_none() {
        return Ok(None);
    }
    let kind: String = item(plan, "kind")?;
    Ok(Some(match kind.as_str() {
        "float" | "double" => Default::Float(v.extract::<f64>()?),
        "bool" => Default::Bool(v.extract::<bool>()?),
        "string" | "enum" => Default::Bytes(v.extract::<String>()?.into_bytes()),
        "bytes" => Default::Bytes(v.extract::<Vec<u8>>()?),
        _ => Default::Int(match v.extract::<i64>() {
            Ok(i) => i,
            Err(_) => v.extract::<u64>()? as i64, // uint64 defaults above 2^63-1 wrap, as in Java
        }),
    }))
}

impl Msg {
    fn new(full_name: String, plans: &Bound<'_, PyList>, dt: &DataType) -> PyResult<Msg> {
        let DataType::Struct(arrow_fields) = dt else {
            return Err(PyValueError::new_err(format!(
                "message {full_name}: Arrow type {dt} is not a struct"
            )));
        };
        if arrow_fields.len() != plans.len() {
            return Err(PyValueError::new_err(format!(
                "message {full_name}: {} planned fields for {} Arrow fields",
                plans.len(),
                arrow_fields.len()
            )));
        }
        let mut fields = Vec::new();
        let mut oneofs = 0;
        for (plan, af) in plans.iter().zip(arrow_fields.iter()) {
            let plan = plan.cast_into::<PyDict>()?;
            let name: String = item(&plan, "name")?;
            if &name != af.name() {
                return Err(PyValueError::new_err(format!(
                    "plan field {name} against Arrow field {}",
                    af.name()
                )));
            }
            let body = if item::<bool>(&plan, "map")? {
                let DataType::Map(entries, _) = af.data_type() else {
                    return Err(PyValueError::new_err(format!(
                        "field {name}: not an Arrow map"
                    )));
                };
                let DataType::Struct(kv) = entries.data_type() else {
                    unreachable!()
                };
                let key: Bound<'_, PyDict> = item(&plan, "key")?;
                let value: Bound<'_, PyDict> = item(&plan, "value")?;
                Body::Map(MapCol {
                    offsets: vec![0],
                    keys: new_col(&key, kv[0].data_type())?,
                    values: new_col(&value, kv[1].data_type())?,
                    dt: af.data_type().clone(),
                })
            } else if item::<bool>(&plan, "repeated")? {
                let DataType::List(element) = af.data_type() else {
                    return Err(PyValueError::new_err(format!(
                        "field {name}: not an Arrow list"
                    )));
                };
                Body::List(ListCol {
                    offsets: vec![0],
                    child: new_col(&plan, element.data_type())?,
                    dt: af.data_type().clone(),
                })
            } else {
                Body::Single(new_col(&plan, af.data_type())?)
            };
            let oneof: i32 = item(&plan, "oneof")?;
            oneofs = oneofs.max(oneof + 1);
            fields.push(FieldPlan {
                number: item(&plan, "number")?,
                name,
                presence: item(&plan, "presence")?,
                oneof,
                default: default_of(&plan)?,
                body,
            });
        }
        let mut by_number = HashMap::new();
        let max = fields
            .iter()
            .map(|f| f.number)
            .filter(|n| *n < 4096)
            .max()
            .unwrap_or(0);
        let mut dense = vec![-1i32; max as usize + 1];
        for (i, f) in fields.iter().enumerate() {
            by_number.insert(f.number, i);
            if (f.number as usize) < dense.len() {
                dense[f.number as usize] = i as i32;
            }
        }
        let n = fields.len();
        let mut singles = Bits::new(n);
        let mut repeated = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            match f.body {
                Body::Single(_) => singles.set(i),
                Body::List(_) | Body::Map(_) => repeated.push(i),
            }
        }
        Ok(Msg {
            full_name,
            fields,
            by_number,
            dense,
            seen: Bits::new(n),
            singles,
            repeated,
            oneof_last: vec![-1; oneofs.max(0) as usize],
            nulls: Validity::default(),
            len: 0,
            dt: dt.clone(),
        })
    }

    #[inline]
    fn lookup(&self, number: u32) -> Option<usize> {
        if (number as usize) < self.dense.len() {
            let i = self.dense[number as usize];
            return if i < 0 { None } else { Some(i as usize) };
        }
        self.by_number.get(&number).copied()
    }

    /// One message (`buf` is its whole encoding) appended as a valid row.
    ///
    /// Each singular value is appended to its column where it is read; the few cases where a later
    /// value replaces it (the field written again: the last wins; another member of its oneof) take
    /// the earlier value back out of its column (`Col::pop`) after the checks the runtime's parse
    /// makes of it (`dropped`). Fields not written (or displaced) get their default or a null once
    /// the message ends.
    fn decode(&mut self, buf: &[u8]) -> R<()> {
        self.seen.clear();
        self.oneof_last.iter_mut().for_each(|o| *o = -1);
        let mut pos = 0;
        while pos < buf.len() {
            let key = varint(buf, &mut pos)?;
            let number = u32::try_from(key >> 3).map_err(|_| "field number out of range")?;
            let wt = (key & 7) as u8;
            if number == 0 {
                return Err("field number 0".into());
            }
            let Some(i) = self.lookup(number) else {
                skip(buf, &mut pos, wt)?; // an unknown field
                continue;
            };
            let f = &mut self.fields[i];
            match &mut f.body {
                Body::Single(col) => {
                    if self.seen.get(i) {
                        col.take_back()
                            .map_err(|e| format!("field {}: {e}", f.name))?;
                    }
                    col.read_single(buf, &mut pos, wt, !f.presence)
                        .map_err(|e| format!("field {}: {e}", f.name))?;
                    self.seen.set(i);
                    if f.oneof >= 0 {
                        let o = f.oneof as usize;
                        let last = std::mem::replace(&mut self.oneof_last[o], i as i32);
                        if last >= 0 && last as usize != i && self.seen.get(last as usize) {
                            let prev = &mut self.fields[last as usize];
                            if let Body::Single(col) = &mut prev.body {
                                col.take_back()
                                    .map_err(|e| format!("field {}: {e}", prev.name))?;
                            }
                            self.seen.unset(last as usize);
                        }
                    }
                }
                Body::List(list) => {
                    let expected = list.child.wt;
                    if wt == expected {
                        list.child
                            .read_single(buf, &mut pos, wt, false)
                            .map_err(|e| format!("field {}: {e}", f.name))?;
                    } else if wt == 2 && expected != 2 {
                        let (s, e) = length(buf, &mut pos)?;
                        let packed = &buf[s..e];
                        let mut p = 0;
                        while p < packed.len() {
                            list.child
                                .read_single(packed, &mut p, expected, false)
                                .map_err(|e| format!("field {}: {e}", f.name))?;
                        }
                    } else {
                        return Err(format!(
                            "field {} has wire type {wt}, expected {expected}",
                            f.name
                        ));
                    }
                }
                Body::Map(map) => {
                    if wt != 2 {
                        return Err(format!("map field {} has wire type {wt}", f.name));
                    }
                    let (s, e) = length(buf, &mut pos)?;
                    map.entry(&buf[s..e])
                        .map_err(|e| format!("map field {}: {e}", f.name))?;
                }
            }
        }
        for &i in &self.repeated {
            match &mut self.fields[i].body {
                Body::List(list) => list.offsets.push(list.child.len() as i32),
                Body::Map(map) => map.offsets.push(map.keys.len() as i32),
                Body::Single(_) => unreachable!("a singular field among the repeated ones"),
            }
        }
        for (w, (&single, &seen)) in self.singles.words.iter().zip(&self.seen.words).enumerate() {
            let mut missing = single & !seen; // not written, or displaced within its oneof
            while missing != 0 {
                let i = w * 64 + missing.trailing_zeros() as usize;
                missing &= missing - 1;
                let f = &mut self.fields[i];
                if let Body::Single(col) = &mut f.body {
                    match &f.default {
                        Some(d) => col.append_default(d),
                        None => col.append_null(),
                    }
                }
            }
        }
        self.nulls.valid();
        self.len += 1;
        Ok(())
    }

    /// A null row (a message field that is not set): children get placeholders.
    fn append_null(&mut self) {
        for f in self.fields.iter_mut() {
            match &mut f.body {
                Body::Single(col) => col.append_null(),
                Body::List(list) => list.offsets.push(list.child.len() as i32),
                Body::Map(map) => map.offsets.push(map.keys.len() as i32),
            }
        }
        self.nulls.null();
        self.len += 1;
    }

    fn finish(&mut self) -> R<ArrayRef> {
        let DataType::Struct(fields) = &self.dt else {
            unreachable!()
        };
        // every child finished (and so reset) before any error is returned
        let results: Vec<R<ArrayRef>> = self
            .fields
            .iter_mut()
            .map(|f| match &mut f.body {
                Body::Single(col) => col.finish(),
                Body::List(list) => list.finish(),
                Body::Map(map) => map.finish(),
            })
            .collect();
        let children = results.into_iter().collect::<R<Vec<_>>>()?;
        let nulls = self.nulls.finish();
        let len = std::mem::take(&mut self.len);
        let arr = if fields.is_empty() {
            StructArray::new_empty_fields(len, nulls)
        } else {
            StructArray::try_new(fields.clone(), children, nulls).map_err(|e| e.to_string())?
        };
        Ok(Arc::new(arr))
    }
}

/// The vector's contents, leaving an empty one with the same capacity: the next batch (of about
/// the same size) then grows no vector, copying nothing.
fn taken<T>(v: &mut Vec<T>) -> Vec<T> {
    let capacity = v.len();
    std::mem::replace(v, Vec::with_capacity(capacity))
}

fn offsets(v: &mut Vec<i32>) -> OffsetBuffer<i32> {
    let out = taken(v);
    v.push(0);
    OffsetBuffer::new(ScalarBuffer::from(out))
}

impl ListCol {
    fn finish(&mut self) -> R<ArrayRef> {
        let DataType::List(field) = &self.dt else {
            unreachable!()
        };
        let offs = offsets(&mut self.offsets);
        let child = self.child.finish()?;
        let arr =
            ListArray::try_new(field.clone(), offs, child, None).map_err(|e| e.to_string())?;
        Ok(Arc::new(arr))
    }
}

impl MapCol {
    /// One map entry (key = 1, value = 2) appended to the keys and values.
    fn entry(&mut self, buf: &[u8]) -> R<()> {
        let (mut has_key, mut has_value) = (false, false);
        let mut pos = 0;
        while pos < buf.len() {
            let tag = varint(buf, &mut pos)?;
            let wt = (tag & 7) as u8;
            let (col, seen) = match tag >> 3 {
                1 => (&mut self.keys, &mut has_key),
                2 => (&mut self.values, &mut has_value),
                0 => return Err("field number 0".into()),
                _ => {
                    skip(buf, &mut pos, wt)?;
                    continue;
                }
            };
            if *seen {
                col.take_back()?; // written twice in one entry: the last wins, as for fields
            }
            col.read_single(buf, &mut pos, wt, false)
                .map_err(|e| format!("entry field {}: {e}", tag >> 3))?;
            *seen = true;
        }
        if !(has_key && has_value) {
            return Err("an entry without its key or value".into());
        }
        let last = self.keys.len() - 1;
        let first = *self.offsets.last().unwrap() as usize;
        if (first..last).any(|j| self.keys.same(j, last)) {
            return Err("a key written twice (the last entry wins in Protobuf)".into());
        }
        Ok(())
    }

    fn finish(&mut self) -> R<ArrayRef> {
        let DataType::Map(entries, sorted) = &self.dt else {
            unreachable!()
        };
        let DataType::Struct(kv) = entries.data_type() else {
            unreachable!()
        };
        let offs = offsets(&mut self.offsets);
        let (keys, values) = (self.keys.finish(), self.values.finish());
        let (keys, values) = (keys?, values?);
        let entries_arr = StructArray::try_new(kv.clone(), vec![keys, values], None)
            .map_err(|e| e.to_string())?;
        let arr = MapArray::try_new(entries.clone(), offs, entries_arr, None, *sorted)
            .map_err(|e| e.to_string())?;
        Ok(Arc::new(arr))
    }
}

impl Leaf {
    fn wire_type(&self) -> u8 {
        match self {
            Leaf::I32(Enc::Fixed, _) | Leaf::F32(_) => 5,
            Leaf::I64(Enc::Fixed, _) | Leaf::F64(_) => 1,
            Leaf::I32(..) | Leaf::I64(..) | Leaf::Bool(_) | Leaf::Enum { .. } => 0,
            Leaf::Bytes { .. } | Leaf::Msg(_) | Leaf::Time { .. } => 2,
        }
    }
}

impl Col {
    /// Whether values `i` and `j` are equal (map keys: integers, booleans, strings).
    fn same(&self, i: usize, j: usize) -> bool {
        match &self.leaf {
            Leaf::I32(_, v) => v[i] == v[j],
            Leaf::I64(_, v) => v[i] == v[j],
            Leaf::Bool(b) => b.get_bit(i) == b.get_bit(j),
            Leaf::Bytes {
                offsets: o, data, ..
            } => data[o[i] as usize..o[i + 1] as usize] == data[o[j] as usize..o[j + 1] as usize],
            _ => false,
        }
    }

    /// A value (a singular field, a list element, a map key or value) read from the wire and
    /// appended where it is read: a null where it is its type's zero and `zero_is_null` (proto3's
    /// implicit presence: such a field reads as unset).
    #[inline(always)]
    fn read_single(&mut self, buf: &[u8], pos: &mut usize, wt: u8, zero_is_null: bool) -> R<()> {
        if wt != self.wt {
            return Err(format!("wire type {wt}, expected {}", self.wt));
        }
        let zero = match &mut self.leaf {
            Leaf::I32(enc, out) => {
                let v = match enc {
                    Enc::Varint => varint(buf, pos)? as i32,
                    Enc::Zigzag => zigzag32(varint(buf, pos)?),
                    Enc::Fixed => fixed32(buf, pos)? as i32,
                };
                out.push(v);
                v == 0
            }
            Leaf::I64(enc, out) => {
                let v = match enc {
                    Enc::Varint => varint(buf, pos)? as i64,
                    Enc::Zigzag => zigzag64(varint(buf, pos)?),
                    Enc::Fixed => fixed64(buf, pos)? as i64,
                };
                out.push(v);
                v == 0
            }
            Leaf::F32(out) => {
                let bits = fixed32(buf, pos)?;
                out.push(f32::from_bits(bits));
                bits == 0
            }
            Leaf::F64(out) => {
                let bits = fixed64(buf, pos)?;
                out.push(f64::from_bits(bits));
                bits == 0
            }
            Leaf::Bool(out) => {
                let v = varint(buf, pos)?;
                out.append(v != 0);
                v == 0
            }
            Leaf::Bytes { offsets, data, .. } => {
                // UTF-8 (for strings) is checked once for the whole column in `finish`
                let (s, e) = length(buf, pos)?;
                append_bytes(data, &buf[s..e]);
                offsets.push(i32::try_from(data.len()).map_err(|_| "more than 2 GiB of strings")?);
                s == e
            }
            Leaf::Enum {
                info,
                offsets,
                data,
            } => {
                let number = varint(buf, pos)? as i32;
                if number == 0 && zero_is_null {
                    offsets.push(*offsets.last().unwrap()); // no name for the null
                } else {
                    push_enum_name(info, offsets, data, number)?;
                }
                number == 0
            }
            Leaf::Msg(m) => {
                let (s, e) = length(buf, pos)?;
                m.decode(&buf[s..e])
                    .map_err(|e| format!("{}: {e}", m.full_name))?;
                false
            }
            Leaf::Time { v: out, .. } => {
                let (s, e) = length(buf, pos)?;
                out.push(micros(&buf[s..e])?);
                false
            }
        };
        if zero && zero_is_null {
            self.nulls.null(); // the values pushed for a zero are the null placeholders
        } else {
            self.nulls.valid();
        }
        Ok(())
    }

    /// This row's value taken back out of the column, as a later value replaces it (the field
    /// written again, or another member of its oneof), after the checks the runtime's parse made
    /// of it: a string must still be valid UTF-8; a message would be merged (or parsed and
    /// cleared), which this decoder does not do: refused.
    fn take_back(&mut self) -> R<()> {
        match &mut self.leaf {
            Leaf::I32(_, v) => drop(v.pop()),
            Leaf::I64(_, v) => drop(v.pop()),
            Leaf::F32(v) => drop(v.pop()),
            Leaf::F64(v) => drop(v.pop()),
            Leaf::Bool(b) => b.truncate(b.len() - 1),
            Leaf::Bytes {
                utf8,
                offsets,
                data,
            } => {
                offsets.pop();
                let start = *offsets.last().unwrap() as usize;
                if *utf8 && std::str::from_utf8(&data[start..]).is_err() {
                    return Err("a replaced string that is not valid UTF-8".into());
                }
                data.truncate(start);
            }
            Leaf::Enum { offsets, data, .. } => {
                offsets.pop();
                data.truncate(*offsets.last().unwrap() as usize);
            }
            Leaf::Msg(_) | Leaf::Time { .. } => {
                return Err("a message value written twice (merged by Protobuf)".into());
            }
        }
        let len = self.len();
        self.nulls.truncate(len);
        Ok(())
    }

    fn len(&self) -> usize {
        match &self.leaf {
            Leaf::I32(_, v) => v.len(),
            Leaf::I64(_, v) | Leaf::Time { v, .. } => v.len(),
            Leaf::F32(v) => v.len(),
            Leaf::F64(v) => v.len(),
            Leaf::Bool(b) => b.len(),
            Leaf::Bytes { offsets, .. } | Leaf::Enum { offsets, .. } => offsets.len() - 1,
            Leaf::Msg(m) => m.len,
        }
    }

    fn append_null(&mut self) {
        match &mut self.leaf {
            Leaf::I32(_, v) => v.push(0),
            Leaf::I64(_, v) | Leaf::Time { v, .. } => v.push(0),
            Leaf::F32(v) => v.push(0.0),
            Leaf::F64(v) => v.push(0.0),
            Leaf::Bool(b) => b.append(false),
            Leaf::Bytes { offsets, .. } | Leaf::Enum { offsets, .. } => {
                offsets.push(*offsets.last().unwrap())
            }
            Leaf::Msg(m) => {
                m.append_null();
                self.nulls.null();
                return;
            }
        }
        self.nulls.null();
    }

    fn append_default(&mut self, d: &Default) {
        match (&mut self.leaf, d) {
            (Leaf::I32(_, v), Default::Int(i)) => v.push(*i as i32),
            (Leaf::I64(_, v), Default::Int(i)) => v.push(*i),
            (Leaf::F32(v), Default::Float(x)) => v.push(*x as f32),
            (Leaf::F64(v), Default::Float(x)) => v.push(*x),
            (Leaf::Bool(b), Default::Bool(x)) => b.append(*x),
            (
                Leaf::Bytes { offsets, data, .. } | Leaf::Enum { offsets, data, .. },
                Default::Bytes(x),
            ) => {
                data.extend_from_slice(x);
                offsets.push(data.len() as i32);
            }
            _ => return self.append_null(), // the plan gives no default of another kind
        }
        self.nulls.valid();
    }

    fn finish(&mut self) -> R<ArrayRef> {
        let nulls = self.nulls.finish();
        let arr: ArrayRef = match &mut self.leaf {
            Leaf::I32(_, v) => Arc::new(Int32Array::new(taken(v).into(), nulls)),
            Leaf::I64(_, v) => Arc::new(Int64Array::new(taken(v).into(), nulls)),
            Leaf::F32(v) => Arc::new(Float32Array::new(taken(v).into(), nulls)),
            Leaf::F64(v) => Arc::new(Float64Array::new(taken(v).into(), nulls)),
            Leaf::Bool(b) => Arc::new(BooleanArray::new(b.finish(), nulls)),
            Leaf::Bytes {
                utf8,
                offsets: o,
                data,
            } => {
                let offs = offsets(o);
                let values = Buffer::from_vec(taken(data));
                if *utf8 {
                    // One check of the whole column (the values buffer is UTF-8 and every offset a
                    // character boundary) is the check of every value, at a fraction of the cost
                    // of one call per short value; a failure refuses the batch, as a per-value one did.
                    Arc::new(
                        StringArray::try_new(offs, values, nulls)
                            .map_err(|_| "a string that is not valid UTF-8".to_string())?,
                    )
                } else {
                    Arc::new(BinaryArray::try_new(offs, values, nulls).map_err(|e| e.to_string())?)
                }
            }
            Leaf::Enum {
                offsets: o, data, ..
            } => {
                let offs = offsets(o);
                Arc::new(
                    StringArray::try_new(offs, Buffer::from_vec(taken(data)), nulls)
                        .map_err(|e| e.to_string())?,
                )
            }
            Leaf::Time { duration: false, v } => Arc::new(
                PrimitiveArray::<TimestampMicrosecondType>::new(taken(v).into(), nulls)
                    .with_data_type(self.dt.clone()),
            ),
            Leaf::Time { duration: true, v } => Arc::new(
                PrimitiveArray::<DurationMicrosecondType>::new(taken(v).into(), nulls),
            ),
            Leaf::Msg(m) => {
                drop(nulls); // the struct's own validity is the message's
                m.finish()?
            }
        };
        Ok(arr)
    }
}

/// The name of enum value `number` appended (`UNKNOWN_ENUM_VALUE_<Enum>_<n>` for an unknown number
/// of an open enum; refused for a closed one).
#[inline(always)]
fn push_enum_name(
    info: &EnumInfo,
    offsets: &mut Vec<i32>,
    data: &mut Vec<u8>,
    number: i32,
) -> R<()> {
    match info.name(number) {
        Some(name) => append_bytes(data, name.as_bytes()),
        None if info.closed => {
            return Err(format!("number {number} is not a value of the closed enum"));
        }
        None => {
            data.extend_from_slice(info.unknown_prefix.as_bytes());
            data.extend_from_slice(number.to_string().as_bytes());
        }
    }
    offsets.push(i32::try_from(data.len()).map_err(|_| "more than 2 GiB of strings")?);
    Ok(())
}

/// `google.protobuf.Timestamp` / `Duration` (seconds = 1, nanos = 2) as microseconds.
fn micros(buf: &[u8]) -> R<i64> {
    let (mut seconds, mut nanos) = (0i64, 0i32);
    let mut pos = 0;
    while pos < buf.len() {
        let tag = varint(buf, &mut pos)?;
        let wt = (tag & 7) as u8;
        match (tag >> 3, wt) {
            (1, 0) => seconds = varint(buf, &mut pos)? as i64,
            (2, 0) => nanos = varint(buf, &mut pos)? as i32,
            (1 | 2, _) => return Err("seconds/nanos with an unexpected wire type".into()),
            (0, _) => return Err("field number 0".into()),
            _ => {
                skip(buf, &mut pos, wt)?;
            }
        }
    }
    seconds
        .checked_mul(1_000_000)
        .and_then(|m| m.checked_add((nanos / 1000) as i64))
        .ok_or_else(|| "a time out of the microsecond range".into())
}

/// The count that starts Confluent's message indexes (see `message_indexes`), read past and checked
/// against the payload's length; 0 is the one-byte shorthand for `[0]`.
#[inline]
fn index_count(buf: &[u8], pos: &mut usize) -> R<usize> {
    let count = zigzag64(varint(buf, pos)?);
    if count < 0 || count as usize > buf.len() {
        return Err(format!("message index count {count}"));
    }
    Ok(count as usize)
}

/// Whether the payload's message indexes (read past, see `message_indexes`) are `expected`, without
/// allocating: this runs once per record.
#[inline]
fn indexes_match(buf: &[u8], pos: &mut usize, expected: &[i64]) -> R<bool> {
    let count = index_count(buf, pos)?;
    if count == 0 {
        return Ok(expected == [0]);
    }
    let mut same = count == expected.len();
    for i in 0..count {
        let index = zigzag64(varint(buf, pos)?);
        same = same && expected[i] == index;
    }
    Ok(same)
}

/// Confluent's message indexes: a zig-zag count then zig-zag indexes; a single 0 byte means `[0]`.
fn message_indexes(buf: &[u8], pos: &mut usize) -> R<Vec<i64>> {
    let count = index_count(buf, pos)?;
    if count == 0 {
        return Ok(vec![0]);
    }
    (0..count)
        .map(|_| Ok(zigzag64(varint(buf, pos)?)))
        .collect()
}

/// The reader message's decoder: `plan` from `protobuf_decoder.native_plan`, `arrow_type` the
/// message's Spark Arrow type.
#[pyclass(module = "sparkflow_kafka_native")]
pub struct ProtobufBatchDecoder {
    root: Option<Msg>,
}

fn decode_rows<'a>(
    root: &mut Msg,
    rows: impl Iterator<Item = &'a [u8]>,
    expected: &[i64],
    skip: usize,
) -> Result<ArrayRef, (i64, String)> {
    for (row, p) in rows.enumerate() {
        let Some(p) = p.get(skip..) else {
            return Err((row as i64, format!("shorter than its {skip}-byte header")));
        };
        let mut pos = 0;
        let matches = indexes_match(p, &mut pos, expected).map_err(|e| (row as i64, e))?;
        if !matches {
            let mut again = 0;
            let indexes = message_indexes(p, &mut again).map_err(|e| (row as i64, e))?;
            return Err((
                row as i64,
                format!("message indexes {indexes:?}, expected {expected:?}"),
            ));
        }
        root.decode(&p[pos..])
            .map_err(|e| (row as i64, format!("{}: {e}", root.full_name)))?;
    }
    root.finish().map_err(|e| (-1, e))
}

#[pymethods]
impl ProtobufBatchDecoder {
    #[new]
    fn new(
        message: String,
        plan: &Bound<'_, PyList>,
        arrow_type: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let dt = DataType::from_pyarrow_bound(arrow_type)?;
        Ok(Self {
            root: Some(Msg::new(message, plan, &dt)?),
        })
    }

    /// The payloads of column 0 of `batch` (binary, no nulls; each `message indexes + message`
    /// after its first `skip` bytes, a header the caller has read) decoded into one pyarrow
    /// StructArray of the plan's Arrow type. `indexes`: the reader message's index path in the
    /// writer schema; a payload with other indexes is refused. Raises ProtobufBatchError
    /// `(row, message)` for the first payload refused.
    #[pyo3(signature = (batch, indexes, skip=0))]
    fn decode<'py>(
        &mut self,
        py: Python<'py>,
        batch: &Bound<'py, PyAny>,
        indexes: Vec<i64>,
        skip: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let input = arrow_array::RecordBatch::from_pyarrow_bound(batch)?;
        if input.num_columns() != 1 || input.column(0).null_count() > 0 {
            return Err(PyValueError::new_err(
                "expected one binary column of payloads without nulls",
            ));
        }
        let column: ArrayRef = input.column(0).clone();
        let mut root = self
            .root
            .take()
            .ok_or_else(|| PyValueError::new_err("decoder in use"))?;
        let (root, result) = py.detach(move || {
            let out = match BinaryValues::of(&column) {
                Ok(values) => decode_rows(&mut root, values.or_empty(), &indexes, skip),
                Err(e) => Err((-1, e)),
            };
            if out.is_err() {
                let _ = root.finish(); // drop the half-built columns: the next call starts clean
            }
            (root, out)
        });
        self.root = Some(root);
        match result {
            Ok(arr) => arr.to_data().to_pyarrow(py),
            Err((row, message)) => Err(ProtobufBatchError::new_err((row, message))),
        }
    }
}

/// Adds the class and its error to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ProtobufBatchDecoder>()?;
    m.add(
        "ProtobufBatchError",
        m.py().get_type::<ProtobufBatchError>(),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_zigzag_and_indexes() {
        let mut p = 0;
        assert_eq!(varint(&[0xac, 0x02], &mut p).unwrap(), 300);
        assert_eq!(p, 2);
        let neg = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        p = 0;
        assert_eq!(varint(&neg, &mut p).unwrap() as i64, -1);
        p = 0;
        assert!(varint(&[0x80, 0x80], &mut p).is_err());
        assert_eq!((zigzag32(1), zigzag32(2), zigzag32(3)), (-1, 1, -2));
        assert_eq!(zigzag64(u64::MAX), i64::MIN);
        p = 0;
        assert_eq!(message_indexes(&[0x00, 0x08], &mut p).unwrap(), vec![0]);
        assert_eq!(p, 1);
        p = 0;
        assert_eq!(
            message_indexes(&[0x04, 0x02, 0x00], &mut p).unwrap(),
            vec![1, 0]
        );
        p = 0;
        assert!(message_indexes(&[0x04, 0x02], &mut p).is_err());
        for (buf, expected, same, read) in [
            (&[0x00, 0x08][..], &[0i64][..], true, 1),
            (&[0x00][..], &[1i64][..], false, 1),
            (&[0x04, 0x02, 0x00][..], &[1i64, 0][..], true, 3),
            (&[0x04, 0x02, 0x00][..], &[1i64][..], false, 3),
            (&[0x02, 0x02][..], &[1i64, 0][..], false, 2),
        ] {
            p = 0;
            assert_eq!(indexes_match(buf, &mut p, expected).unwrap(), same);
            assert_eq!(p, read);
        }
        p = 0;
        assert!(indexes_match(&[0x04, 0x02], &mut p, &[1, 0]).is_err());
    }

    #[test]
    fn times_truncate_nanos_toward_zero_and_refuse_overflow() {
        // seconds = -2 (varint of -2 as int64), nanos = -500_000_000 + ... -> -2_500_000 us
        let mut buf = vec![0x08];
        buf.extend_from_slice(&[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        buf.push(0x10);
        let nanos: i64 = -500_000_999;
        let mut n = nanos as u64;
        while n >= 0x80 {
            buf.push((n as u8) | 0x80);
            n >>= 7;
        }
        buf.push(n as u8);
        assert_eq!(micros(&buf).unwrap(), -2_500_000);
        let huge = [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert!(micros(&huge).is_err());
    }
}
