//! `JsonBatchDecoder`: header-less JSON payloads of one writer schema, validated against it and
//! decoded into one Arrow array of the reader schema's type, with the GIL released and no Python
//! object per record.
//!
//! The Python decoder (`connectors/formats/json_decoder.py`: orjson, jsonschema-rs, one
//! `pyarrow.array` call, record by record where that fails) stays the reference; this class is its
//! fast path and answers only where its answer is certainly the same, refusing the whole group
//! otherwise (`JsonBatchError(row, message)`, the first refused record), so that the Python decoder
//! decodes it and isolates the malformed records for the parse mode.
//!
//! Parsing is `serde_json`'s lexer into a flat tape reused from record to record (`json_tape.rs`:
//! no allocation per object, key or string; doubles correctly rounded, as orjson reads them; objects
//! in document order). Validation is the `jsonschema` crate's, the release the Python `jsonschema-rs`
//! wheel wraps, run on that same tape through the crate's instance-representation trait. The values
//! are then appended straight into Arrow buffers of the exact type the Python side asks for
//! (`json_schema_arrow_type`). `arrow-json` was weighed and not taken: it parses into its own tape,
//! so validation would need a second parse; it cannot write a non-string value as its JSON text (the
//! reader type's "anything else is a string" rule) the way Python's `json.dumps` does; and its
//! conversions of values of another type differ from pyarrow's. `serde_json::Value` was the first
//! version: correct, but its allocations and hashed object keys took most of a record's time.
//!
//! Refused (the Python decoder decides): a payload serde_json does not parse (what orjson refuses
//! and `json` reads: NaN, Infinity, a number beyond a double, lone surrogates, a BOM; and nesting
//! deeper than 128); an object with a key written twice (Python keeps its first place and last
//! value); -0.0 in a double column or a JSON text (serde_json reads `-0` so, orjson as the integer
//! 0); a record jsonschema refuses (the Python decoder asks jsonschema-rs, then `jsonschema`, which
//! has the last word and names the failing pointer and keyword); a value whose type does not fit its position (pyarrow or the
//! Python decoder refuse those, or change them: an object for a list, a fraction for an integer,
//! `true` for a double, an integer beyond 2^53 for a double, beyond i64 for an integer). Writer
//! schemas refused at construction (`ValueError`): those jsonschema cannot compile offline, and
//! those where the crate built without the Python wheel's `arbitrary-precision` and `idna` features
//! could accept what the wheel refuses: `multipleOf`, `idn-hostname` / `idn-email` formats, numbers
//! of 2^53 or more. (`pattern` / `patternProperties` are left to the Python validator by the caller.)
//!
//! Values kept as they are: integers, doubles (an integral double in an integer column becomes that
//! integer, as pyarrow makes it), strings, booleans; an integer in a double column; a missing
//! property or `null` is null; properties the reader type does not name are ignored; a value of any
//! other type in a string column becomes its JSON text exactly as `json.dumps` writes it (`", "` and
//! `": "` separators, ASCII with `\uXXXX` escapes, Python's float repr).

use crate::columns::BinaryValues;
use std::io::Write;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, MapArray, StringArray,
    StructArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use arrow_schema::{DataType, FieldRef, Fields};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use serde_json::Value;

use crate::json_tape::{Doc, Num, Ref, Tape, TapeJson};

create_exception!(
    sparkflow_kafka_native,
    JsonBatchError,
    PyException,
    "A payload the native JSON decoder refused: args are (row, message)."
);

type R<T> = Result<T, String>;

/// Why -0.0 is refused where its sign shows: serde_json reads `-0` so, orjson as the integer 0.
const NEGATIVE_ZERO: &str = "-0 or -0.0 (orjson reads -0 as the integer 0)";

/// 2^53: integers past it are not all doubles (pyarrow refuses them for a double column).
const EXACT_DOUBLE: u64 = 1 << 53;

// ---- Python's json.dumps (default separators, ensure_ascii) ----

const HEX: &[u8; 16] = b"0123456789abcdef";

fn push_u16_escape(out: &mut Vec<u8>, unit: u16) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[((unit >> shift) & 0xf) as usize]);
    }
}

/// A string as `json.dumps` writes it with `ensure_ascii=True`.
fn py_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{08}' => out.extend_from_slice(b"\\b"),
            '\u{0c}' => out.extend_from_slice(b"\\f"),
            ' '..='~' => out.push(c as u8),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    push_u16_escape(out, *unit);
                }
            }
        }
    }
    out.push(b'"');
}

/// A finite double as Python's `repr` writes it: the shortest digits that read back, positional
/// for decimal exponents -4 <= e < 16, else `d.ddde+XX`.
fn py_float(f: f64, out: &mut Vec<u8>) {
    if f == 0.0 {
        out.extend_from_slice(if f.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
        return;
    }
    let sci = format!("{f:e}"); // shortest round-trip digits: "-1.25e-7"
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e}'s exponent is an integer");
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: Vec<u8> = mantissa.bytes().filter(|b| *b != b'.').collect();
    let decpt = exp + 1; // value = 0.<digits> * 10^decpt
    if negative {
        out.push(b'-');
    }
    if !(-4 < decpt && decpt <= 16) {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else if decpt <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-decpt) as usize));
        out.extend_from_slice(&digits);
    } else if decpt as usize >= digits.len() {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', decpt as usize - digits.len()));
        out.extend_from_slice(b".0");
    } else {
        out.extend_from_slice(&digits[..decpt as usize]);
        out.push(b'.');
        out.extend_from_slice(&digits[decpt as usize..]);
    }
}

fn py_number(n: Num, out: &mut Vec<u8>) -> R<()> {
    match n {
        Num::U(u) => {
            let _ = write!(out, "{u}");
        }
        Num::I(i) => {
            let _ = write!(out, "{i}");
        }
        Num::F(f) if f == 0.0 && f.is_sign_negative() => return Err(NEGATIVE_ZERO.into()),
        Num::F(f) => py_float(f, out),
    }
    Ok(())
}

/// A value's JSON text as `json.dumps(value)` writes it.
fn py_json(v: Ref<'_>, out: &mut Vec<u8>) -> R<()> {
    match v.tape() {
        Tape::Null => out.extend_from_slice(b"null"),
        Tape::Bool(true) => out.extend_from_slice(b"true"),
        Tape::Bool(false) => out.extend_from_slice(b"false"),
        Tape::Num(n) => py_number(n, out)?,
        Tape::Str(..) => py_string(v.str().unwrap(), out),
        Tape::Arr { .. } => {
            out.push(b'[');
            for (k, item) in v.items().enumerate() {
                if k > 0 {
                    out.extend_from_slice(b", ");
                }
                py_json(item, out)?;
            }
            out.push(b']');
        }
        Tape::Obj { .. } => {
            out.push(b'{');
            for (k, (key, item)) in v.members().enumerate() {
                if k > 0 {
                    out.extend_from_slice(b", ");
                }
                py_string(key, out);
                out.extend_from_slice(b": ");
                py_json(item, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

// ---- Arrow columns built from values ----

fn kind(v: Ref<'_>) -> &'static str {
    match v.tape() {
        Tape::Null => "null",
        Tape::Bool(_) => "a boolean",
        Tape::Num(_) => "a number",
        Tape::Str(..) => "a string",
        Tape::Arr { .. } => "an array",
        Tape::Obj { .. } => "an object",
    }
}

fn offset(len: usize) -> R<i32> {
    i32::try_from(len).map_err(|_| "more than 2 GiB in one column of the group".to_string())
}

struct Strings {
    offsets: Vec<i32>,
    data: Vec<u8>,
    nulls: NullBufferBuilder,
}

impl Strings {
    fn new() -> Self {
        Self {
            offsets: vec![0],
            data: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }

    fn close(&mut self) -> R<()> {
        self.offsets.push(offset(self.data.len())?);
        self.nulls.append_non_null();
        Ok(())
    }

    fn push_str(&mut self, s: &str) -> R<()> {
        self.data.extend_from_slice(s.as_bytes());
        self.close()
    }

    fn push_null(&mut self) {
        self.offsets.push(*self.offsets.last().unwrap());
        self.nulls.append_null();
    }

    fn finish(mut self) -> StringArray {
        let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
        let nulls = self.nulls.finish();
        // SAFETY: offsets rise from 0 to data.len(), and data holds whole UTF-8 strings only
        // (serde_json's strings and JSON texts written here in ASCII).
        unsafe { StringArray::new_unchecked(offsets, Buffer::from_vec(self.data), nulls) }
    }
}

enum Col {
    Str(Strings),
    Int(Vec<i64>, NullBufferBuilder),
    Float(Vec<f64>, NullBufferBuilder),
    Bool(BooleanBufferBuilder, NullBufferBuilder),
    List {
        field: FieldRef,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
        child: Box<Col>,
    },
    Map {
        entries: FieldRef,
        ordered: bool,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
        keys: Strings,
        values: Box<Col>,
    },
    Struct {
        fields: Fields,
        nulls: NullBufferBuilder,
        children: Vec<Col>,
        seen: Vec<u64>, // per field: the last record (stamp) that had it
        stamp: u64,
    },
}

impl Col {
    fn new(dt: &DataType) -> R<Self> {
        Ok(match dt {
            DataType::Utf8 => Col::Str(Strings::new()),
            DataType::Int64 => Col::Int(Vec::new(), NullBufferBuilder::new(0)),
            DataType::Float64 => Col::Float(Vec::new(), NullBufferBuilder::new(0)),
            DataType::Boolean => Col::Bool(BooleanBufferBuilder::new(0), NullBufferBuilder::new(0)),
            DataType::List(field) => Col::List {
                field: field.clone(),
                offsets: vec![0],
                nulls: NullBufferBuilder::new(0),
                child: Box::new(Col::new(field.data_type())?),
            },
            DataType::Map(entries, ordered) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(format!("map entries of type {}", entries.data_type()));
                };
                if kv.len() != 2 || kv[0].data_type() != &DataType::Utf8 {
                    return Err(format!("a map whose entries are {:?}", kv));
                }
                Col::Map {
                    entries: entries.clone(),
                    ordered: *ordered,
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                    keys: Strings::new(),
                    values: Box::new(Col::new(kv[1].data_type())?),
                }
            }
            DataType::Struct(fields) => Col::Struct {
                fields: fields.clone(),
                nulls: NullBufferBuilder::new(0),
                children: fields
                    .iter()
                    .map(|f| Col::new(f.data_type()))
                    .collect::<R<_>>()?,
                seen: vec![0; fields.len()],
                stamp: 0,
            },
            other => {
                return Err(format!(
                    "the Arrow type {other} is not one of JSON Schema's"
                ))
            }
        })
    }

    fn push_null(&mut self) {
        match self {
            Col::Str(s) => s.push_null(),
            Col::Int(v, n) => {
                v.push(0);
                n.append_null();
            }
            Col::Float(v, n) => {
                v.push(0.0);
                n.append_null();
            }
            Col::Bool(v, n) => {
                v.append(false);
                n.append_null();
            }
            Col::List { offsets, nulls, .. } | Col::Map { offsets, nulls, .. } => {
                offsets.push(*offsets.last().unwrap());
                nulls.append_null();
            }
            Col::Struct {
                nulls, children, ..
            } => {
                nulls.append_null();
                for c in children {
                    c.push_null();
                }
            }
        }
    }

    /// Appends `v`, or says why the Python decoder must decide it.
    fn push(&mut self, v: Ref<'_>) -> R<()> {
        let tape = v.tape();
        if let Tape::Null = tape {
            self.push_null();
            return Ok(());
        }
        match self {
            Col::Str(s) => match v.str() {
                Some(text) => s.push_str(text)?,
                None => {
                    py_json(v, &mut s.data)?;
                    s.close()?;
                }
            },
            Col::Int(values, nulls) => {
                values.push(integer(v)?);
                nulls.append_non_null();
            }
            Col::Float(values, nulls) => {
                values.push(double(v)?);
                nulls.append_non_null();
            }
            Col::Bool(values, nulls) => match tape {
                Tape::Bool(b) => {
                    values.append(b);
                    nulls.append_non_null();
                }
                _ => return Err(format!("{} for a boolean", kind(v))),
            },
            Col::List {
                offsets,
                nulls,
                child,
                ..
            } => match tape {
                Tape::Arr { len, .. } => {
                    for item in v.items() {
                        child.push(item)?;
                    }
                    let end = offsets.last().unwrap() + offset(len as usize)?;
                    offsets.push(end);
                    nulls.append_non_null();
                }
                _ => return Err(format!("{} for an array", kind(v))),
            },
            Col::Map {
                offsets,
                nulls,
                keys,
                values,
                ..
            } => match tape {
                Tape::Obj { len, .. } => {
                    for (key, item) in v.members() {
                        keys.push_str(key)?;
                        values.push(item)?;
                    }
                    let end = offsets.last().unwrap() + offset(len as usize)?;
                    offsets.push(end);
                    nulls.append_non_null();
                }
                _ => return Err(format!("{} for a map", kind(v))),
            },
            Col::Struct {
                fields,
                nulls,
                children,
                seen,
                stamp,
            } => match tape {
                Tape::Obj { .. } => {
                    *stamp += 1;
                    for (k, (key, item)) in v.members().enumerate() {
                        // records mostly list their properties in the schema's order
                        let found = match fields.get(k) {
                            Some(f) if f.name() == key => Some(k),
                            _ => fields.iter().position(|f| f.name() == key),
                        };
                        if let Some(f) = found {
                            children[f]
                                .push(item)
                                .map_err(|e| format!("property {key:?}: {e}"))?;
                            seen[f] = *stamp;
                        }
                    }
                    for (f, child) in children.iter_mut().enumerate() {
                        if seen[f] != *stamp {
                            child.push_null();
                        }
                    }
                    nulls.append_non_null();
                }
                _ => return Err(format!("{} for an object", kind(v))),
            },
        }
        Ok(())
    }

    fn finish(self) -> R<ArrayRef> {
        Ok(match self {
            Col::Str(s) => Arc::new(s.finish()),
            Col::Int(v, mut n) => Arc::new(Int64Array::new(ScalarBuffer::from(v), n.finish())),
            Col::Float(v, mut n) => Arc::new(Float64Array::new(ScalarBuffer::from(v), n.finish())),
            Col::Bool(mut v, mut n) => Arc::new(BooleanArray::new(v.finish(), n.finish())),
            Col::List {
                field,
                offsets,
                mut nulls,
                child,
            } => Arc::new(
                ListArray::try_new(
                    field,
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    child.finish()?,
                    nulls.finish(),
                )
                .map_err(|e| e.to_string())?,
            ),
            Col::Map {
                entries,
                ordered,
                offsets,
                mut nulls,
                keys,
                values,
            } => {
                let DataType::Struct(kv) = entries.data_type() else {
                    unreachable!("checked in Col::new")
                };
                let pairs = StructArray::try_new(
                    kv.clone(),
                    vec![Arc::new(keys.finish()), values.finish()?],
                    None,
                )
                .map_err(|e| e.to_string())?;
                Arc::new(
                    MapArray::try_new(
                        entries,
                        OffsetBuffer::new(ScalarBuffer::from(offsets)),
                        pairs,
                        nulls.finish(),
                        ordered,
                    )
                    .map_err(|e| e.to_string())?,
                )
            }
            Col::Struct {
                fields,
                mut nulls,
                children,
                ..
            } => {
                let arrays = children
                    .into_iter()
                    .map(Col::finish)
                    .collect::<R<Vec<_>>>()?;
                Arc::new(
                    StructArray::try_new(fields, arrays, nulls.finish())
                        .map_err(|e| e.to_string())?,
                )
            }
        })
    }
}

/// A JSON number for an integer column, as pyarrow takes it: an integer within i64, or a double
/// with no fraction within i64 (the Python decoder refuses fractions; pyarrow, the rest).
fn integer(v: Ref<'_>) -> R<i64> {
    match v.tape() {
        Tape::Num(Num::I(i)) => Ok(i),
        Tape::Num(Num::U(u)) => {
            i64::try_from(u).map_err(|_| format!("{u} (beyond 64-bit signed) for an integer"))
        }
        Tape::Num(Num::F(f))
            if f.fract() == 0.0
                && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) =>
        {
            Ok(f as i64)
        }
        Tape::Num(Num::F(f)) => Err(format!("{f} for an integer")),
        _ => Err(format!("{} for an integer", kind(v))),
    }
}

/// A JSON number for a double column: a double, or an integer within +-2^53 (pyarrow refuses
/// the others; the Python decoder refuses a boolean, which pyarrow would read as 1.0).
fn double(v: Ref<'_>) -> R<f64> {
    match v.tape() {
        Tape::Num(Num::F(f)) if f == 0.0 && f.is_sign_negative() => Err(NEGATIVE_ZERO.into()),
        Tape::Num(Num::F(f)) => Ok(f),
        Tape::Num(Num::I(i)) if i.unsigned_abs() <= EXACT_DOUBLE => Ok(i as f64),
        Tape::Num(Num::U(u)) if u <= EXACT_DOUBLE => Ok(u as f64),
        Tape::Num(_) => Err("an integer beyond 2^53 for a double (not exactly a double)".into()),
        _ => Err(format!("{} for a number", kind(v))),
    }
}

/// Why the crate, built without the Python wheel's `arbitrary-precision` and `idna` features,
/// might accept a value the wheel refuses for this schema (None: it cannot).
fn schema_out_of_scope(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            (n.is_f64() && f.abs() >= EXACT_DOUBLE as f64
                || n.as_u64().is_some_and(|u| u >= EXACT_DOUBLE)
                || n.as_i64().is_some_and(|i| i.unsigned_abs() >= EXACT_DOUBLE))
            .then(|| format!("the number {n} (2^53 or beyond)"))
        }
        Value::String(s) if s == "idn-hostname" || s == "idn-email" => {
            Some(format!("the {s} format"))
        }
        Value::Array(items) => items.iter().find_map(schema_out_of_scope),
        Value::Object(map) => {
            if map.contains_key("multipleOf") {
                return Some("multipleOf".into());
            }
            map.values().find_map(schema_out_of_scope)
        }
        _ => None,
    }
}

fn decode_rows<'a>(
    arrow_type: &DataType,
    validator: Option<&jsonschema::Validator<TapeJson>>,
    rows: impl Iterator<Item = &'a [u8]>,
) -> Result<ArrayRef, (i64, String)> {
    let mut col = Col::new(arrow_type).map_err(|e| (-1, e))?;
    let mut doc = Doc::default();
    for (row, payload) in rows.enumerate() {
        let refuse = |e: String| (row as i64, e);
        doc.parse(payload).map_err(refuse)?;
        if let Some(v) = validator {
            if !v.is_valid(doc.root()) {
                return Err(refuse("does not validate against the writer schema".into()));
            }
        }
        col.push(doc.root()).map_err(refuse)?;
    }
    col.finish().map_err(|e| (-1, e))
}

/// Decodes JSON payloads of one writer schema into the reader schema's Arrow type.
#[pyclass(module = "sparkflow_kafka_native")]
pub struct JsonBatchDecoder {
    arrow_type: DataType,
    validator: Option<jsonschema::Validator<TapeJson>>,
}

#[pymethods]
impl JsonBatchDecoder {
    /// `arrow_type`: the reader schema's Arrow type (`json_schema_arrow_type`); `writer_schema`:
    /// the JSON Schema text to validate each record against (None: no validation). Raises
    /// ValueError for a type or schema out of this class's scope (the caller decodes in Python).
    #[new]
    #[pyo3(signature = (arrow_type, writer_schema=None))]
    fn new(arrow_type: &Bound<'_, PyAny>, writer_schema: Option<&str>) -> PyResult<Self> {
        let arrow_type = DataType::from_pyarrow_bound(arrow_type)?;
        Col::new(&arrow_type).map_err(PyValueError::new_err)?;
        let validator = match writer_schema {
            None => None,
            Some(text) => {
                let schema: Value = serde_json::from_str(text).map_err(|e| {
                    PyValueError::new_err(format!("the writer schema is not JSON: {e}"))
                })?;
                if let Some(why) = schema_out_of_scope(&schema) {
                    return Err(PyValueError::new_err(format!(
                        "the writer schema has {why}: validated in Python"
                    )));
                }
                Some(
                    jsonschema::options_for::<TapeJson>()
                        .build(&schema)
                        .map_err(|e| {
                            PyValueError::new_err(format!(
                                "jsonschema refuses the writer schema: {e}"
                            ))
                        })?,
                )
            }
        };
        Ok(Self {
            arrow_type,
            validator,
        })
    }

    /// The payloads of `payloads` (a pyarrow binary or large_binary array without nulls, each a
    /// JSON text without the Confluent header) decoded into one pyarrow array of `arrow_type`.
    /// Raises JsonBatchError `(row, message)` for the first payload refused.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let column: ArrayRef =
            arrow_array::make_array(arrow_data::ArrayData::from_pyarrow_bound(payloads)?);
        if column.null_count() > 0 {
            return Err(JsonBatchError::new_err((-1i64, "the payloads have nulls")));
        }
        let arrow_type = &self.arrow_type;
        let validator = self.validator.as_ref();
        let result = py.detach(|| match BinaryValues::of(&column) {
            Ok(values) => decode_rows(arrow_type, validator, values.or_empty()),
            Err(e) => Err((-1, e)),
        });
        match result {
            Ok(arr) => arr.to_data().to_pyarrow(py),
            Err((row, message)) => Err(JsonBatchError::new_err((row, message))),
        }
    }
}

/// Adds the class and its error to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<JsonBatchDecoder>()?;
    m.add("JsonBatchError", m.py().get_type::<JsonBatchError>())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(f: f64) -> String {
        let mut out = Vec::new();
        py_float(f, &mut out);
        String::from_utf8(out).unwrap()
    }

    fn dumps(text: &str) -> String {
        let mut doc = Doc::default();
        doc.parse(text.as_bytes()).unwrap();
        let mut out = Vec::new();
        py_json(doc.root(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_as_python_repr() {
        for (f, text) in [
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (100.0, "100.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e100, "1e+100"),
            (-2.5e-300, "-2.5e-300"),
            (1.2345678901234568e29, "1.2345678901234568e+29"),
            (123.456, "123.456"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(repr(f), text, "{f:e}");
        }
    }

    #[test]
    fn json_text_as_json_dumps() {
        assert_eq!(
            dumps(r#"{"b": [1, 2.5, null, true], "a": {}}"#),
            r#"{"b": [1, 2.5, null, true], "a": {}}"#
        );
        assert_eq!(
            dumps(r#""\u00e9\ud83d\ude00\u0000\u007f\"\\/\n""#),
            r#""\u00e9\ud83d\ude00\u0000\u007f\"\\/\n""#
        );
        assert_eq!(
            dumps("[18446744073709551615, -9223372036854775808, []]"),
            "[18446744073709551615, -9223372036854775808, []]"
        );
    }

    #[test]
    fn numbers_for_columns() {
        let int = |t: &str| {
            let mut doc = Doc::default();
            doc.parse(t.as_bytes()).unwrap();
            integer(doc.root())
        };
        let dbl = |t: &str| {
            let mut doc = Doc::default();
            doc.parse(t.as_bytes()).unwrap();
            double(doc.root())
        };
        assert_eq!(int("3.0").unwrap(), 3);
        assert_eq!(int("-9223372036854775808.0").unwrap(), i64::MIN);
        assert_eq!(int("-9223372036854775808").unwrap(), i64::MIN);
        assert!(int("9223372036854775808.0").is_err());
        assert!(int("9223372036854775808").is_err());
        assert!(int("1.5").is_err());
        assert!(int("true").is_err());
        assert_eq!(dbl("9007199254740992").unwrap(), 9007199254740992.0);
        assert!(dbl("9007199254740993").is_err());
        assert!(dbl("-9007199254740993").is_err());
        assert!(dbl("true").is_err());
        assert!(dbl("-0").is_err() && dbl("-0.0").is_err());
        assert_eq!(dbl("0.0").unwrap(), 0.0);
        assert_eq!(int("-0").unwrap(), 0);
    }

    #[test]
    fn schemas_out_of_scope() {
        let v = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        assert!(schema_out_of_scope(&v(r#"{"properties": {"a": {"multipleOf": 2}}}"#)).is_some());
        assert!(schema_out_of_scope(&v(r#"{"format": "idn-hostname"}"#)).is_some());
        assert!(schema_out_of_scope(&v(r#"{"maximum": 9007199254740992}"#)).is_some());
        assert!(schema_out_of_scope(&v(r#"{"maximum": 1e300}"#)).is_some());
        assert!(
            schema_out_of_scope(&v(r#"{"type": "integer", "maximum": 9007199254740991}"#))
                .is_none()
        );
    }
}
