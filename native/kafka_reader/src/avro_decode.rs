//! `AvroBatchDecoder`: header-less Avro datums of one writer schema, decoded into one Arrow
//! `RecordBatch` (resolved to a reader schema when one is given), with the GIL released.
//!
//! The decoding is the `arrow-avro` crate's (arrow-rs, Apache-2.0, the same release as the
//! `arrow-*` crates this module already builds on): its `Decoder` in unframed-datum mode, one
//! call per datum, so every datum is checked to be consumed exactly (no trailing bytes).
//! Avro's resolution rules (defaults, aliases, promotion, enum defaults) are arrow-avro's.
//! A datum the decoder refuses fails the whole call with its row index (`AvroBatchError`, args
//! `(row, message)`): the Python caller then decodes that batch with its pure fallback, which
//! finds and isolates the bad record(s) for the parse mode. After a failure the decoder is
//! rebuilt (a half-decoded row must not leak into the next batch).
//!
//! The Spark types (enum as string, millisecond timestamps in microseconds, ...) are applied by
//! the caller with Arrow casts: this module returns arrow-avro's own types.

use crate::columns::BinaryValues;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_avro::reader::{Decoder, DecoderMode, ReaderBuilder};
use arrow_avro::schema::{AvroSchema, Fingerprint, FingerprintAlgorithm, SchemaStore};
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

create_exception!(
    sparkflow_kafka_native,
    AvroBatchError,
    PyException,
    "A datum arrow-avro refused: args are (row, message)."
);

const BATCH_ROWS: usize = 65_536;

fn build(writer: &str, reader: Option<&str>) -> Result<Decoder, String> {
    let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id);
    store
        .set(Fingerprint::Id(0), AvroSchema::new(writer.to_string()))
        .map_err(|e| e.to_string())?;
    let mut builder = ReaderBuilder::new()
        .with_writer_schema_store(store)
        .with_active_fingerprint(Fingerprint::Id(0))
        .with_decoder_mode(DecoderMode::UnframedDatum)
        .with_batch_size(BATCH_ROWS);
    if let Some(reader) = reader {
        builder = builder.with_reader_schema(AvroSchema::new(reader.to_string()));
    }
    builder.build_decoder().map_err(|e| e.to_string())
}

/// Decodes datums written with one writer schema (optionally resolved to a reader schema).
#[pyclass(module = "sparkflow_kafka_native")]
pub struct AvroBatchDecoder {
    writer: String,
    reader: Option<String>,
    decoder: Option<Decoder>,
}

enum Failure {
    Row(usize, String),
    Other(String),
}

fn decode_all<'a>(
    decoder: &mut Decoder,
    datums: impl Iterator<Item = &'a [u8]>,
) -> Result<Vec<RecordBatch>, Failure> {
    let mut out = Vec::new();
    for (row, datum) in datums.enumerate() {
        if decoder.batch_is_full() {
            match decoder.flush() {
                Ok(Some(b)) => out.push(b),
                Ok(None) => {}
                Err(e) => return Err(Failure::Other(e.to_string())),
            }
        }
        match decoder.decode(datum) {
            Ok(n) if n == datum.len() => {}
            Ok(n) => {
                return Err(Failure::Row(
                    row,
                    format!("{} trailing bytes after the datum", datum.len() - n),
                ))
            }
            Err(e) => return Err(Failure::Row(row, e.to_string())),
        }
    }
    match decoder.flush() {
        Ok(Some(b)) => out.push(b),
        Ok(None) => {}
        Err(e) => return Err(Failure::Other(e.to_string())),
    }
    Ok(out)
}

/// Column 0 of the pyarrow record batch `batch`: the datums (checked to have no nulls).
pub(crate) fn datums(batch: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    let input = RecordBatch::from_pyarrow_bound(batch)?;
    if input.num_columns() != 1 {
        return Err(PyValueError::new_err(
            "expected one binary column of datums",
        ));
    }
    let column: ArrayRef = input.column(0).clone();
    if column.null_count() > 0 {
        return Err(PyValueError::new_err("the datums column has nulls"));
    }
    Ok(column)
}

#[pymethods]
impl AvroBatchDecoder {
    /// `writer_schema`: the Avro schema (JSON) the datums were written with; `reader_schema`: the
    /// schema to resolve them to (None: read as written). Raises ValueError if arrow-avro
    /// cannot build a decoder for the pair (the caller falls back).
    #[new]
    #[pyo3(signature = (writer_schema, reader_schema=None))]
    fn new(writer_schema: String, reader_schema: Option<String>) -> PyResult<Self> {
        let decoder = build(&writer_schema, reader_schema.as_deref())
            .map_err(|e| PyValueError::new_err(format!("arrow-avro refuses the schemas: {e}")))?;
        Ok(Self {
            writer: writer_schema,
            reader: reader_schema,
            decoder: Some(decoder),
        })
    }

    /// The datums of column 0 of `batch` (binary or large_binary, no nulls) decoded, as a
    /// pyarrow.RecordBatch per up to 65,536 rows (arrow-avro's types). Raises AvroBatchError
    /// `(row, message)` for the first datum refused.
    fn decode<'py>(
        &mut self,
        py: Python<'py>,
        batch: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let column = datums(batch)?;
        let mut decoder = match self.decoder.take() {
            Some(d) => d,
            None => build(&self.writer, self.reader.as_deref()).map_err(PyValueError::new_err)?,
        };
        let (decoder, result) = py.detach(move || {
            let result = match BinaryValues::of(&column) {
                Ok(values) => decode_all(&mut decoder, values.or_empty()),
                Err(e) => Err(Failure::Other(e)),
            };
            (decoder, result)
        });
        match result {
            Ok(batches) => {
                self.decoder = Some(decoder);
                batches.iter().map(|b| b.to_pyarrow(py)).collect()
            }
            Err(failure) => {
                drop(decoder); // may hold half a row: rebuilt on the next call
                Err(match failure {
                    Failure::Row(row, message) => AvroBatchError::new_err((row, message)),
                    Failure::Other(message) => AvroBatchError::new_err((-1i64, message)),
                })
            }
        }
    }
}

/// Adds the class and its error to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AvroBatchDecoder>()?;
    m.add("AvroBatchError", m.py().get_type::<AvroBatchError>())?;
    Ok(())
}
