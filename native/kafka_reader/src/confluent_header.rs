//! `confluent_schema_ids`: the schema id in the Confluent wire format's header of each payload,
//! for every registry format (`connectors/formats/record_decoder.py` groups a batch by it).

use crate::columns::BinaryValues;
use arrow_array::{Array, Int64Array, RecordBatch};
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The Confluent wire format's schema id of each payload of column 0 of `batch`: magic byte 0,
/// then the id in 4 big-endian bytes; -1 for a null payload, one shorter than 5 bytes or with
/// another magic byte. (The format-independent header scan of `connectors/formats/record_decoder.py`,
/// in one pass instead of numpy's five gathers.)
#[pyfunction]
pub fn confluent_schema_ids<'py>(
    py: Python<'py>,
    batch: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let input = RecordBatch::from_pyarrow_bound(batch)?;
    if input.num_columns() != 1 {
        return Err(PyValueError::new_err(
            "expected one binary column of payloads",
        ));
    }
    let column = input.column(0).clone();
    let id = |v: Option<&[u8]>| match v {
        Some([0, a, b, c, d, ..]) => i64::from(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => -1,
    };
    let ids: Int64Array = BinaryValues::of(&column)
        .map_err(PyValueError::new_err)?
        .map(|v| Some(id(v)))
        .collect();
    ids.to_data().to_pyarrow(py)
}

/// Adds the function to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(confluent_schema_ids, m)?)
}
