//! `AvroDirectDecoder`: header-less Avro datums whose writer schema *is* the reader schema,
//! decoded straight into Spark's Arrow types (the ones `from_avro` gives) with the GIL released.
//!
//! Why not arrow-avro here (it stays for writer -> reader resolution, `avro_decode.rs`): its
//! decoder interprets every field through a general resolution machine and builds its own types
//! (dense unions, enum dictionaries, millisecond timestamps) that the caller then reshapes with
//! casts and `take`s; a `perf` profile of the 15-field benchmark schema put its per-field decode
//! and varint reader on top. When the two schemas are equal (the common case: a topic's records
//! written with the schema the query reads) there is nothing to resolve, so this module compiles
//! the schema once into a tree of typed column builders and appends each value where it is read:
//! enums as their symbol's UTF-8, millisecond timestamps multiplied to microseconds, decimals as
//! 128-bit integers, unions of several non-null branches as Spark's `member<i>` structs, unions of
//! int/long or float/double promoted, all in one pass and no second copy.
//!
//! Scope: what it cannot build exactly, it refuses at construction (a `ValueError`), and the
//! caller uses arrow-avro: decimals over 38 digits, recursive or malformed schemas. A datum it
//! cannot read (truncated, trailing bytes, an int out of range, an enum index or union branch out
//! of range, a bad boolean, invalid UTF-8, a millisecond timestamp beyond microseconds, a decimal
//! wider than its precision) fails the whole call with `AvroBatchError(row, message)`, as
//! `AvroBatchDecoder` does; the caller then decodes the group with its reference path (fastavro),
//! which isolates the bad record for the parse mode. The types follow
//! `connectors/formats/avro_types.py` (`avro_arrow_type`); the caller checks `arrow_type` equals
//! its own before using the decoder.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array,
    Float64Array, Int32Array, Int64Array, ListArray, MapArray, NullArray, StringArray, StructArray,
    Time64MicrosecondArray, TimestampMicrosecondArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, OffsetBuffer, ScalarBuffer};
use arrow_pyarrow::ToPyArrow;
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::{Map, Value};

use crate::avro_decode::{datums, AvroBatchError};
use crate::columns::{append_bytes, BinaryValues, Validity};

/// A datum that could not be read; the message is formatted only when it is raised.
#[derive(Debug)]
struct Bad(&'static str);

type R<T> = Result<T, Bad>;

/// The bytes of one datum and a read position.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    #[inline(always)]
    fn long(&mut self) -> R<i64> {
        let buf = self.buf;
        let mut pos = self.pos;
        let mut raw: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&byte) = buf.get(pos) else {
                return Err(Bad("the datum ends inside a number"));
            };
            pos += 1;
            raw |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                break;
            }
            shift += 7;
            if shift > 63 {
                return Err(Bad("a number longer than 10 bytes"));
            }
        }
        self.pos = pos;
        Ok((raw >> 1) as i64 ^ -((raw & 1) as i64))
    }

    #[inline(always)]
    fn int(&mut self) -> R<i32> {
        i32::try_from(self.long()?).map_err(|_| Bad("an int beyond 32 bits"))
    }

    #[inline(always)]
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(Bad("a length beyond the datum"))?;
        let out = self
            .buf
            .get(self.pos..end)
            .ok_or(Bad("the datum ends inside a value"))?;
        self.pos = end;
        Ok(out)
    }

    #[inline(always)]
    fn bytes(&mut self) -> R<&'a [u8]> {
        let n = self.long()?;
        if n < 0 {
            return Err(Bad("a negative length"));
        }
        self.take(n as usize)
    }

    /// A fixed's `n` bytes, or (None) bytes with their length.
    #[inline(always)]
    fn sized(&mut self, fixed: Option<usize>) -> R<&'a [u8]> {
        match fixed {
            Some(n) => self.take(n),
            None => self.bytes(),
        }
    }

    /// The item count of the next block of an array or map (0: the end).
    #[inline(always)]
    fn block(&mut self) -> R<usize> {
        let n = self.long()?;
        if n < 0 {
            self.long()?; // the block's size in bytes, which a reader may use to skip it
            return usize::try_from(n.unsigned_abs()).map_err(|_| Bad("a block count too large"));
        }
        Ok(n as usize)
    }
}

/// The vector's values, leaving an empty one with room for as many (the next batch's likely size:
/// no regrowth, no copies).
#[inline]
fn renew<T>(v: &mut Vec<T>) -> Vec<T> {
    let capacity = v.len();
    std::mem::replace(v, Vec::with_capacity(capacity))
}

/// `renew` for offsets, which start with a 0.
fn renew_offsets(v: &mut Vec<i32>) -> Vec<i32> {
    let mut next = Vec::with_capacity(v.len());
    next.push(0);
    std::mem::replace(v, next)
}

/// Variable-width values: offsets and data, validated (UTF-8, offsets) when finished.
#[derive(Clone, Default)]
struct VarData {
    offsets: Vec<i32>,
    data: Vec<u8>,
}

impl VarData {
    fn new() -> Self {
        Self {
            offsets: vec![0],
            data: Vec::new(),
        }
    }

    #[inline(always)]
    fn push(&mut self, value: &[u8]) -> R<()> {
        append_bytes(&mut self.data, value);
        let end =
            i32::try_from(self.data.len()).map_err(|_| Bad("over 2 GiB of values in a batch"))?;
        self.offsets.push(end);
        Ok(())
    }

    #[inline(always)]
    fn push_empty(&mut self) {
        let last = *self.offsets.last().unwrap();
        self.offsets.push(last);
    }

    fn take(&mut self) -> (OffsetBuffer<i32>, Buffer) {
        let offsets = renew_offsets(&mut self.offsets);
        let data = renew(&mut self.data);
        (
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(data),
        )
    }
}

#[derive(Clone, Copy)]
enum IntKind {
    Int,
    Date,
}

#[derive(Clone, Copy)]
enum LongKind {
    Long,
    TimeMicros,
    /// a timestamp in microseconds; `millis`: the datum holds milliseconds
    Timestamp {
        millis: bool,
        utc: bool,
    },
}

#[derive(Clone, Copy)]
enum Number {
    Int,
    Long,
    Float,
    Double,
}

/// What a union's branch index selects.
#[derive(Clone, Copy)]
enum Branch {
    Null,
    /// the one non-null branch (a nullable union), or member `i` of the members struct
    Value(usize),
    /// a branch promoted to the union's long or double column
    Promoted(Number),
}

/// A column builder compiled from a schema: reads its values from the datum and appends them.
#[derive(Clone)]
enum Col {
    Null(usize),
    Bool(Vec<bool>, Validity),
    Int(Vec<i32>, Validity, IntKind),
    Long(Vec<i64>, Validity, LongKind),
    Float(Vec<f32>, Validity),
    Double(Vec<f64>, Validity),
    /// bytes and string (`utf8`), fixed of a size
    Bytes {
        values: VarData,
        nulls: Validity,
        utf8: bool,
        fixed: Option<usize>,
    },
    Enum {
        symbols: Arc<Vec<String>>,
        values: VarData,
        nulls: Validity,
    },
    Decimal {
        values: Vec<i128>,
        nulls: Validity,
        precision: u8,
        scale: i8,
        fixed: Option<usize>,
        limit: i128,
    },
    Record {
        names: Arc<Vec<String>>,
        fields: Vec<Col>,
        nulls: Validity,
        len: usize,
    },
    Array {
        offsets: Vec<i32>,
        item: Box<Col>,
        nulls: Validity,
    },
    Map {
        offsets: Vec<i32>,
        keys: VarData,
        values: Box<Col>,
        nulls: Validity,
    },
    /// a union holding at most one non-null branch: the branch's column, nullable
    Nullable {
        branches: Arc<Vec<Branch>>,
        inner: Box<Col>,
    },
    /// a union of int/long (`double`: float/double) branches, promoted
    Promoted {
        branches: Arc<Vec<Branch>>,
        double: bool,
        longs: Vec<i64>,
        doubles: Vec<f64>,
        nulls: Validity,
    },
    /// any other union: Spark's struct of `member<i>`, one per non-null branch
    Members {
        branches: Arc<Vec<Branch>>,
        members: Vec<Col>,
        nulls: Validity,
        len: usize,
    },
}

/// The schema's named types, looked up as Avro's name resolution does.
struct Names {
    defined: HashMap<String, Value>,
    stack: Vec<String>,
}

fn full_name(schema: &Map<String, Value>, namespace: Option<&str>) -> Result<String, String> {
    let name = schema
        .get("name")
        .and_then(Value::as_str)
        .ok_or("a named type without a name")?;
    if name.contains('.') {
        return Ok(name.to_string());
    }
    let ns = match schema.get("namespace") {
        Some(Value::String(ns)) => Some(ns.as_str()),
        _ => namespace,
    };
    Ok(match ns {
        Some(ns) if !ns.is_empty() => format!("{ns}.{name}"),
        _ => name.to_string(),
    })
}

fn primitive(name: &str) -> Option<Col> {
    let nulls = Validity::default;
    Some(match name {
        "null" => Col::Null(0),
        "boolean" => Col::Bool(Vec::new(), nulls()),
        "int" => Col::Int(Vec::new(), nulls(), IntKind::Int),
        "long" => Col::Long(Vec::new(), nulls(), LongKind::Long),
        "float" => Col::Float(Vec::new(), nulls()),
        "double" => Col::Double(Vec::new(), nulls()),
        "bytes" => Col::Bytes {
            values: VarData::new(),
            nulls: nulls(),
            utf8: false,
            fixed: None,
        },
        "string" => Col::Bytes {
            values: VarData::new(),
            nulls: nulls(),
            utf8: true,
            fixed: None,
        },
        _ => return None,
    })
}

fn is_null_branch(schema: &Value) -> bool {
    match schema {
        Value::String(s) => s == "null",
        Value::Object(o) => o.get("type").and_then(Value::as_str) == Some("null"),
        _ => false,
    }
}

impl Names {
    fn compile(&mut self, schema: &Value, namespace: Option<&str>) -> Result<Col, String> {
        match schema {
            Value::String(name) => {
                if let Some(col) = primitive(name) {
                    return Ok(col);
                }
                let qualified = match namespace {
                    Some(ns) if !name.contains('.') && !ns.is_empty() => format!("{ns}.{name}"),
                    _ => name.clone(),
                };
                let named = self
                    .defined
                    .get(&qualified)
                    .or_else(|| self.defined.get(name))
                    .cloned()
                    .ok_or_else(|| {
                        format!("the schema names type {name:?}, which it does not define")
                    })?;
                let full = full_name(named.as_object().unwrap(), namespace)?;
                if self.stack.contains(&full) {
                    return Err(format!("record {full:?} is recursive"));
                }
                self.compile(&named, namespace)
            }
            Value::Array(branches) => self.union(branches, namespace),
            Value::Object(object) => self.object(object, namespace),
            other => Err(format!("not an Avro schema: {other}")),
        }
    }

    fn union(&mut self, branches: &[Value], namespace: Option<&str>) -> Result<Col, String> {
        let mut cols = Vec::new();
        let mut map = Vec::with_capacity(branches.len());
        for branch in branches {
            if is_null_branch(branch) {
                map.push(Branch::Null);
            } else {
                map.push(Branch::Value(cols.len()));
                cols.push(self.compile(branch, namespace)?);
            }
        }
        if cols.is_empty() {
            // only null branches: the branch index is still in the datum
            return Ok(Col::Nullable {
                branches: Arc::new(map),
                inner: Box::new(Col::Null(0)),
            });
        }
        if cols.len() == 1 {
            return Ok(Col::Nullable {
                branches: Arc::new(map),
                inner: Box::new(cols.pop().unwrap()),
            });
        }
        let types: Vec<DataType> = cols.iter().map(Col::data_type).collect();
        let within = |allowed: &[DataType]| types.iter().all(|t| allowed.contains(t));
        for (double, allowed) in [
            (false, [DataType::Int32, DataType::Int64]),
            (true, [DataType::Float32, DataType::Float64]),
        ] {
            if within(&allowed) {
                let numbers: Vec<Number> = cols
                    .iter()
                    .map(|c| match c {
                        Col::Int(..) => Number::Int,
                        Col::Long(..) => Number::Long,
                        Col::Float(..) => Number::Float,
                        _ => Number::Double,
                    })
                    .collect();
                let promoted = map
                    .iter()
                    .map(|b| match b {
                        Branch::Value(i) => Branch::Promoted(numbers[*i]),
                        other => *other,
                    })
                    .collect();
                return Ok(Col::Promoted {
                    branches: Arc::new(promoted),
                    double,
                    longs: Vec::new(),
                    doubles: Vec::new(),
                    nulls: Validity::default(),
                });
            }
        }
        Ok(Col::Members {
            branches: Arc::new(map),
            members: cols,
            nulls: Validity::default(),
            len: 0,
        })
    }

    fn object(
        &mut self,
        object: &Map<String, Value>,
        namespace: Option<&str>,
    ) -> Result<Col, String> {
        let kind = object.get("type").ok_or("a schema object without a type")?;
        let kind = match kind {
            Value::String(kind) => kind.as_str(),
            nested => return self.compile(nested, namespace),
        };
        let nulls = Validity::default;
        let logical = object.get("logicalType").and_then(Value::as_str);
        match (logical, kind) {
            (Some("decimal"), "bytes" | "fixed") => {
                let precision = object.get("precision").and_then(Value::as_i64).unwrap_or(0);
                let scale = object.get("scale").and_then(Value::as_i64).unwrap_or(0);
                if !(1..=38).contains(&precision) || !(0..=precision).contains(&scale) {
                    return Err(format!(
                        "decimal({precision}, {scale}) is not in this decoder's scope"
                    ));
                }
                let fixed = if kind == "fixed" {
                    Some(self.fixed_size(object, namespace)?)
                } else {
                    None
                };
                return Ok(Col::Decimal {
                    values: Vec::new(),
                    nulls: nulls(),
                    precision: precision as u8,
                    scale: scale as i8,
                    fixed,
                    limit: 10i128.pow(precision as u32),
                });
            }
            (Some("date"), "int") => return Ok(Col::Int(Vec::new(), nulls(), IntKind::Date)),
            (Some("time-micros"), "long") => {
                return Ok(Col::Long(Vec::new(), nulls(), LongKind::TimeMicros))
            }
            (
                Some(
                    ts @ ("timestamp-millis"
                    | "timestamp-micros"
                    | "local-timestamp-millis"
                    | "local-timestamp-micros"),
                ),
                "long",
            ) => {
                let kind = LongKind::Timestamp {
                    millis: ts.ends_with("-millis"),
                    utc: !ts.starts_with("local-"),
                };
                return Ok(Col::Long(Vec::new(), nulls(), kind));
            }
            _ => {}
        }
        match kind {
            "record" | "error" => {
                let full = full_name(object, namespace)?;
                if self.stack.contains(&full) {
                    return Err(format!("record {full:?} is recursive"));
                }
                self.defined
                    .insert(full.clone(), Value::Object(object.clone()));
                let inner_ns = full.rsplit_once('.').map(|(ns, _)| ns.to_string());
                self.stack.push(full);
                let mut names = Vec::new();
                let mut fields = Vec::new();
                for field in object
                    .get("fields")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or(&[])
                {
                    let name = field
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or("a field without a name")?;
                    let ty = field.get("type").ok_or("a field without a type")?;
                    names.push(name.to_string());
                    fields.push(self.compile(ty, inner_ns.as_deref())?);
                }
                self.stack.pop();
                Ok(Col::Record {
                    names: Arc::new(names),
                    fields,
                    nulls: nulls(),
                    len: 0,
                })
            }
            "enum" => {
                let full = full_name(object, namespace)?;
                self.defined.insert(full, Value::Object(object.clone()));
                let symbols = object
                    .get("symbols")
                    .and_then(Value::as_array)
                    .ok_or("an enum without symbols")?
                    .iter()
                    .map(|s| {
                        s.as_str()
                            .map(str::to_string)
                            .ok_or("an enum symbol that is not a string")
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Col::Enum {
                    symbols: Arc::new(symbols),
                    values: VarData::new(),
                    nulls: nulls(),
                })
            }
            "fixed" => {
                let size = self.fixed_size(object, namespace)?;
                Ok(Col::Bytes {
                    values: VarData::new(),
                    nulls: nulls(),
                    utf8: false,
                    fixed: Some(size),
                })
            }
            "array" => {
                let items = object.get("items").ok_or("an array without items")?;
                Ok(Col::Array {
                    offsets: vec![0],
                    item: Box::new(self.compile(items, namespace)?),
                    nulls: nulls(),
                })
            }
            "map" => {
                let values = object.get("values").ok_or("a map without values")?;
                Ok(Col::Map {
                    offsets: vec![0],
                    keys: VarData::new(),
                    values: Box::new(self.compile(values, namespace)?),
                    nulls: nulls(),
                })
            }
            other => match primitive(other) {
                Some(col) => Ok(col),
                None => self.compile(&Value::String(other.to_string()), namespace),
            },
        }
    }

    fn fixed_size(
        &mut self,
        object: &Map<String, Value>,
        namespace: Option<&str>,
    ) -> Result<usize, String> {
        let full = full_name(object, namespace)?;
        self.defined.insert(full, Value::Object(object.clone()));
        object
            .get("size")
            .and_then(Value::as_u64)
            .map(|s| s as usize)
            .ok_or_else(|| "a fixed without a size".to_string())
    }
}

fn list_field(item: DataType) -> Arc<Field> {
    Arc::new(Field::new("item", item, true))
}

fn map_entries(value: DataType) -> Arc<Field> {
    let entries = Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", value, true),
    ]);
    Arc::new(Field::new("entries", DataType::Struct(entries), false))
}

fn member_fields(members: &[Col]) -> Fields {
    members
        .iter()
        .enumerate()
        .map(|(i, c)| Field::new(format!("member{i}"), c.data_type(), true))
        .collect()
}

/// A two's-complement big-endian integer of at most 16 bytes.
#[inline(always)]
fn be_i128(bytes: &[u8]) -> R<i128> {
    if bytes.is_empty() {
        return Ok(0);
    }
    if bytes.len() > 16 {
        return Err(Bad("a decimal wider than 128 bits"));
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut full = [fill; 16];
    full[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(full))
}

impl Col {
    fn data_type(&self) -> DataType {
        match self {
            Col::Null(_) => DataType::Null,
            Col::Bool(..) => DataType::Boolean,
            Col::Int(_, _, IntKind::Int) => DataType::Int32,
            Col::Int(_, _, IntKind::Date) => DataType::Date32,
            Col::Long(_, _, LongKind::Long) => DataType::Int64,
            Col::Long(_, _, LongKind::TimeMicros) => DataType::Time64(TimeUnit::Microsecond),
            Col::Long(_, _, LongKind::Timestamp { utc, .. }) => {
                DataType::Timestamp(TimeUnit::Microsecond, utc.then(|| "UTC".into()))
            }
            Col::Float(..) => DataType::Float32,
            Col::Double(..) => DataType::Float64,
            Col::Bytes { utf8: true, .. } | Col::Enum { .. } => DataType::Utf8,
            Col::Bytes { .. } => DataType::Binary,
            Col::Decimal {
                precision, scale, ..
            } => DataType::Decimal128(*precision, *scale),
            Col::Record { names, fields, .. } => DataType::Struct(
                names
                    .iter()
                    .zip(fields)
                    .map(|(n, c)| Field::new(n.clone(), c.data_type(), true))
                    .collect(),
            ),
            Col::Array { item, .. } => DataType::List(list_field(item.data_type())),
            Col::Map { values, .. } => DataType::Map(map_entries(values.data_type()), false),
            Col::Nullable { inner, .. } => inner.data_type(),
            Col::Promoted { double: false, .. } => DataType::Int64,
            Col::Promoted { double: true, .. } => DataType::Float64,
            Col::Members { members, .. } => DataType::Struct(member_fields(members)),
        }
    }

    /// Reads one value of this column's schema from `c` and appends it: the scalar kinds inline
    /// (into the loops of records, arrays and maps), the nested ones through `read_nested`.
    #[inline(always)]
    fn read(&mut self, c: &mut Cursor<'_>) -> R<()> {
        if let Col::Nullable { branches, inner } = self {
            return match branch(c, branches)? {
                Branch::Null => {
                    inner.push_null();
                    Ok(())
                }
                _ if inner.read_scalar(c)? => Ok(()),
                _ => inner.read_nested(c),
            };
        }
        if self.read_scalar(c)? {
            return Ok(());
        }
        self.read_nested(c)
    }

    /// `read` of a scalar kind; `false`: not a scalar, nothing read.
    #[inline(always)]
    fn read_scalar(&mut self, c: &mut Cursor<'_>) -> R<bool> {
        match self {
            Col::Null(len) => *len += 1,
            Col::Bool(values, nulls) => {
                let b = c.take(1)?[0];
                if b > 1 {
                    return Err(Bad("a boolean that is neither 0 nor 1"));
                }
                values.push(b == 1);
                nulls.valid();
            }
            Col::Int(values, nulls, _) => {
                values.push(c.int()?);
                nulls.valid();
            }
            Col::Long(values, nulls, kind) => {
                let v = c.long()?;
                let v = match kind {
                    LongKind::Timestamp { millis: true, .. } => v
                        .checked_mul(1000)
                        .ok_or(Bad("a millisecond timestamp beyond microseconds"))?,
                    _ => v,
                };
                values.push(v);
                nulls.valid();
            }
            Col::Float(values, nulls) => {
                values.push(f32::from_le_bytes(c.take(4)?.try_into().unwrap()));
                nulls.valid();
            }
            Col::Double(values, nulls) => {
                values.push(f64::from_le_bytes(c.take(8)?.try_into().unwrap()));
                nulls.valid();
            }
            Col::Bytes {
                values,
                nulls,
                fixed,
                ..
            } => {
                values.push(c.sized(*fixed)?)?;
                nulls.valid();
            }
            Col::Enum {
                symbols,
                values,
                nulls,
            } => {
                let i = c.int()?;
                let symbol = usize::try_from(i)
                    .ok()
                    .and_then(|i| symbols.get(i))
                    .ok_or(Bad("an enum index beyond the symbols"))?;
                values.push(symbol.as_bytes())?;
                nulls.valid();
            }
            Col::Decimal {
                values,
                nulls,
                fixed,
                limit,
                ..
            } => {
                let v = be_i128(c.sized(*fixed)?)?;
                if v >= *limit || v <= -*limit {
                    return Err(Bad("a decimal with more digits than its precision"));
                }
                values.push(v);
                nulls.valid();
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `read` of records, arrays, maps and unions (not inlined: they recurse).
    #[inline(never)]
    fn read_nested(&mut self, c: &mut Cursor<'_>) -> R<()> {
        match self {
            Col::Record {
                fields, nulls, len, ..
            } => {
                for field in fields.iter_mut() {
                    field.read(c)?;
                }
                nulls.valid();
                *len += 1;
            }
            Col::Array {
                offsets,
                item,
                nulls,
            } => {
                read_blocks(c, offsets, |c| item.read(c))?;
                nulls.valid();
            }
            Col::Map {
                offsets,
                keys,
                values,
                nulls,
            } => {
                read_blocks(c, offsets, |c| {
                    keys.push(c.bytes()?)?;
                    values.read(c)
                })?;
                nulls.valid();
            }
            Col::Nullable { branches, inner } => match branch(c, branches)? {
                Branch::Null => inner.push_null(),
                _ => inner.read(c)?,
            },
            Col::Promoted {
                branches,
                double,
                longs,
                doubles,
                nulls,
            } => {
                let b = branch(c, branches)?;
                let (l, d) = match b {
                    Branch::Null => {
                        nulls.null();
                        (0, 0.0)
                    }
                    Branch::Promoted(n) => {
                        nulls.valid();
                        match n {
                            Number::Int => {
                                let v = c.int()?;
                                (i64::from(v), f64::from(v))
                            }
                            Number::Long => {
                                let v = c.long()?;
                                (v, v as f64)
                            }
                            Number::Float => {
                                let v = f32::from_le_bytes(c.take(4)?.try_into().unwrap());
                                (0, f64::from(v))
                            }
                            Number::Double => {
                                (0, f64::from_le_bytes(c.take(8)?.try_into().unwrap()))
                            }
                        }
                    }
                    Branch::Value(_) => unreachable!("promoted unions map every branch"),
                };
                if *double {
                    doubles.push(d);
                } else {
                    longs.push(l);
                }
            }
            Col::Members {
                branches,
                members,
                nulls,
                len,
            } => {
                match branch(c, branches)? {
                    Branch::Null => {
                        nulls.null();
                        for m in members.iter_mut() {
                            m.push_null();
                        }
                    }
                    Branch::Value(chosen) => {
                        nulls.valid();
                        for (i, m) in members.iter_mut().enumerate() {
                            if i == chosen {
                                m.read(c)?;
                            } else {
                                m.push_null();
                            }
                        }
                    }
                    Branch::Promoted(_) => unreachable!("member unions promote nothing"),
                }
                *len += 1;
            }
            _ => {
                self.read_scalar(c)?;
            }
        }
        Ok(())
    }

    /// Appends a null (children of structs get one too, so every child keeps the parent's length).
    fn push_null(&mut self) {
        match self {
            Col::Null(len) => *len += 1,
            Col::Bool(values, nulls) => {
                values.push(false);
                nulls.null();
            }
            Col::Int(values, nulls, _) => {
                values.push(0);
                nulls.null();
            }
            Col::Long(values, nulls, _) => {
                values.push(0);
                nulls.null();
            }
            Col::Float(values, nulls) => {
                values.push(0.0);
                nulls.null();
            }
            Col::Double(values, nulls) => {
                values.push(0.0);
                nulls.null();
            }
            Col::Bytes { values, nulls, .. } | Col::Enum { values, nulls, .. } => {
                values.push_empty();
                nulls.null();
            }
            Col::Decimal { values, nulls, .. } => {
                values.push(0);
                nulls.null();
            }
            Col::Record {
                fields, nulls, len, ..
            } => {
                for f in fields.iter_mut() {
                    f.push_null();
                }
                nulls.null();
                *len += 1;
            }
            Col::Array { offsets, nulls, .. } | Col::Map { offsets, nulls, .. } => {
                let last = *offsets.last().unwrap();
                offsets.push(last);
                nulls.null();
            }
            Col::Nullable { inner, .. } => inner.push_null(),
            Col::Promoted {
                double,
                longs,
                doubles,
                nulls,
                ..
            } => {
                if *double {
                    doubles.push(0.0);
                } else {
                    longs.push(0);
                }
                nulls.null();
            }
            Col::Members {
                members,
                nulls,
                len,
                ..
            } => {
                for m in members.iter_mut() {
                    m.push_null();
                }
                nulls.null();
                *len += 1;
            }
        }
    }

    /// The values appended so far as one Arrow array (the builder is left empty).
    fn finish(&mut self) -> Result<ArrayRef, String> {
        let e = |e: arrow_schema::ArrowError| e.to_string();
        Ok(match self {
            Col::Null(len) => Arc::new(NullArray::new(std::mem::take(len))),
            Col::Bool(values, nulls) => Arc::new(BooleanArray::new(
                BooleanBuffer::from(renew(values)),
                nulls.finish(),
            )),
            Col::Int(values, nulls, kind) => {
                let values = ScalarBuffer::from(renew(values));
                match kind {
                    IntKind::Int => Arc::new(Int32Array::new(values, nulls.finish())),
                    IntKind::Date => Arc::new(Date32Array::new(values, nulls.finish())),
                }
            }
            Col::Long(values, nulls, kind) => {
                let values = ScalarBuffer::from(renew(values));
                match kind {
                    LongKind::Long => Arc::new(Int64Array::new(values, nulls.finish())),
                    LongKind::TimeMicros => {
                        Arc::new(Time64MicrosecondArray::new(values, nulls.finish()))
                    }
                    LongKind::Timestamp { utc, .. } => Arc::new(
                        TimestampMicrosecondArray::new(values, nulls.finish())
                            .with_timezone_opt(utc.then_some("UTC")),
                    ),
                }
            }
            Col::Float(values, nulls) => Arc::new(Float32Array::new(
                ScalarBuffer::from(renew(values)),
                nulls.finish(),
            )),
            Col::Double(values, nulls) => Arc::new(Float64Array::new(
                ScalarBuffer::from(renew(values)),
                nulls.finish(),
            )),
            Col::Bytes {
                values,
                nulls,
                utf8: true,
                ..
            }
            | Col::Enum { values, nulls, .. } => {
                let (offsets, data) = values.take();
                Arc::new(StringArray::try_new(offsets, data, nulls.finish()).map_err(e)?)
            }
            Col::Bytes { values, nulls, .. } => {
                let (offsets, data) = values.take();
                Arc::new(BinaryArray::try_new(offsets, data, nulls.finish()).map_err(e)?)
            }
            Col::Decimal {
                values,
                nulls,
                precision,
                scale,
                ..
            } => Arc::new(
                Decimal128Array::new(ScalarBuffer::from(renew(values)), nulls.finish())
                    .with_precision_and_scale(*precision, *scale)
                    .map_err(e)?,
            ),
            Col::Record {
                names,
                fields,
                nulls,
                len,
            } => struct_of(names.iter().cloned(), fields, nulls, len)?,
            Col::Array {
                offsets,
                item,
                nulls,
            } => {
                let offsets = OffsetBuffer::new(ScalarBuffer::from(renew_offsets(offsets)));
                let values = item.finish()?;
                Arc::new(
                    ListArray::try_new(
                        list_field(values.data_type().clone()),
                        offsets,
                        values,
                        nulls.finish(),
                    )
                    .map_err(e)?,
                )
            }
            Col::Map {
                offsets,
                keys,
                values,
                nulls,
            } => {
                let offsets = OffsetBuffer::new(ScalarBuffer::from(renew_offsets(offsets)));
                let (key_offsets, key_data) = keys.take();
                let keys: ArrayRef =
                    Arc::new(StringArray::try_new(key_offsets, key_data, None).map_err(e)?);
                let values = values.finish()?;
                let field = map_entries(values.data_type().clone());
                let DataType::Struct(entry_fields) = field.data_type() else {
                    unreachable!()
                };
                let entries = StructArray::try_new(entry_fields.clone(), vec![keys, values], None)
                    .map_err(e)?;
                Arc::new(
                    MapArray::try_new(field, offsets, entries, nulls.finish(), false).map_err(e)?,
                )
            }
            Col::Nullable { inner, .. } => inner.finish()?,
            Col::Promoted {
                double,
                longs,
                doubles,
                nulls,
                ..
            } => {
                if *double {
                    Arc::new(Float64Array::new(
                        ScalarBuffer::from(renew(doubles)),
                        nulls.finish(),
                    ))
                } else {
                    Arc::new(Int64Array::new(
                        ScalarBuffer::from(renew(longs)),
                        nulls.finish(),
                    ))
                }
            }
            Col::Members {
                members,
                nulls,
                len,
                ..
            } => struct_of(
                (0..members.len()).map(|i| format!("member{i}")),
                members,
                nulls,
                len,
            )?,
        })
    }
}

/// The struct of the `children` columns (finished here) under `names`, all nullable.
fn struct_of(
    names: impl Iterator<Item = String>,
    children: &mut [Col],
    nulls: &mut Validity,
    len: &mut usize,
) -> Result<ArrayRef, String> {
    let arrays = children
        .iter_mut()
        .map(Col::finish)
        .collect::<Result<Vec<_>, _>>()?;
    let fields: Fields = names
        .zip(&arrays)
        .map(|(n, a)| Field::new(n, a.data_type().clone(), true))
        .collect();
    let n = std::mem::take(len);
    Ok(Arc::new(if fields.is_empty() {
        StructArray::new_empty_fields(n, nulls.finish())
    } else {
        StructArray::try_new(fields, arrays, nulls.finish()).map_err(|e| e.to_string())?
    }))
}

/// The blocks of an array or map: `item` reads each item (or entry); the end offset is appended.
#[inline(always)]
fn read_blocks(
    c: &mut Cursor<'_>,
    offsets: &mut Vec<i32>,
    mut item: impl FnMut(&mut Cursor<'_>) -> R<()>,
) -> R<()> {
    let mut count = *offsets.last().unwrap() as usize;
    loop {
        let n = c.block()?;
        if n == 0 {
            break;
        }
        for _ in 0..n {
            item(c)?;
        }
        count += n;
    }
    offsets.push(i32::try_from(count).map_err(|_| Bad("over 2^31 items in a batch"))?);
    Ok(())
}

#[inline(always)]
fn branch(c: &mut Cursor<'_>, branches: &[Branch]) -> R<Branch> {
    let i = c.long()?;
    usize::try_from(i)
        .ok()
        .and_then(|i| branches.get(i).copied())
        .ok_or(Bad("a union branch beyond the union"))
}

fn decode_rows<'a>(
    col: &mut Col,
    datums: impl Iterator<Item = &'a [u8]>,
    rows: usize,
    skip: usize,
) -> Result<ArrayRef, (i64, String)> {
    if let Col::Record { fields, .. } = col {
        for f in fields.iter_mut() {
            f.reserve(rows);
        }
    }
    for (row, datum) in datums.enumerate() {
        let Some(datum) = datum.get(skip..) else {
            return Err((row as i64, format!("shorter than its {skip}-byte header")));
        };
        let mut cursor = Cursor { buf: datum, pos: 0 };
        col.read(&mut cursor)
            .map_err(|Bad(m)| (row as i64, m.to_string()))?;
        if cursor.pos != datum.len() {
            return Err((
                row as i64,
                format!(
                    "{} trailing bytes after the datum",
                    datum.len() - cursor.pos
                ),
            ));
        }
    }
    col.finish().map_err(|m| (-1, m))
}

impl Col {
    /// Room for `n` more top-level values (the fields of the top record).
    fn reserve(&mut self, n: usize) {
        match self {
            Col::Int(v, ..) => v.reserve(n),
            Col::Long(v, ..) => v.reserve(n),
            Col::Float(v, _) => v.reserve(n),
            Col::Double(v, _) => v.reserve(n),
            Col::Bytes { values, .. } | Col::Enum { values, .. } => values.offsets.reserve(n),
            Col::Decimal { values, .. } => values.reserve(n),
            Col::Array { offsets, .. } | Col::Map { offsets, .. } => offsets.reserve(n),
            Col::Nullable { inner, .. } => inner.reserve(n),
            Col::Record { fields, .. } => fields.iter_mut().for_each(|f| f.reserve(n)),
            _ => {}
        }
    }
}

/// Decodes datums written with the schema they are read with, into Spark's Arrow types.
#[pyclass(module = "sparkflow_kafka_native")]
pub struct AvroDirectDecoder {
    template: Col,
    /// the builders, empty between calls, with the last batch's capacities (None after a failure)
    columns: Option<Col>,
}

#[pymethods]
impl AvroDirectDecoder {
    /// `schema`: the Avro schema (JSON) of the datums, a record; raises ValueError for a schema
    /// outside this decoder's scope (the caller uses `AvroBatchDecoder`).
    #[new]
    fn new(schema: &str) -> PyResult<Self> {
        let parsed: Value = serde_json::from_str(schema)
            .map_err(|e| PyValueError::new_err(format!("the schema is not JSON: {e}")))?;
        let mut names = Names {
            defined: HashMap::new(),
            stack: Vec::new(),
        };
        let template = names
            .compile(&parsed, None)
            .map_err(PyValueError::new_err)?;
        if !matches!(template, Col::Record { .. }) {
            return Err(PyValueError::new_err("the schema is not a record"));
        }
        Ok(Self {
            columns: Some(template.clone()),
            template,
        })
    }

    /// The Arrow type of the decoded column (a struct of the record's fields), as pyarrow's.
    #[getter]
    fn arrow_type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.template.data_type().to_pyarrow(py)
    }

    /// The datums of column 0 of `batch` (binary or large_binary, no nulls), each after its first
    /// `skip` bytes (a header the caller has read), decoded into one pyarrow struct array. Raises AvroBatchError `(row, message)` for the first datum refused.
    #[pyo3(signature = (batch, skip=0))]
    fn decode<'py>(
        &mut self,
        py: Python<'py>,
        batch: &Bound<'py, PyAny>,
        skip: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let column = datums(batch)?;
        let mut col = self.columns.take().unwrap_or_else(|| self.template.clone());
        let (col, result) = py.detach(move || {
            let rows = column.len();
            let result = match BinaryValues::of(&column) {
                Ok(values) => decode_rows(&mut col, values.or_empty(), rows, skip),
                Err(e) => Err((-1, e)),
            };
            (col, result)
        });
        match result {
            Ok(array) => {
                self.columns = Some(col);
                array.to_data().to_pyarrow(py)
            }
            // the builders may hold half a row: a fresh copy of the template next time
            Err((row, message)) => Err(AvroBatchError::new_err((row, message))),
        }
    }
}

/// Adds the class to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AvroDirectDecoder>()
}
