//! `NativeProducer`: the compiled producing path of kafka-unified's sink (`kafka.writer=native`).
//!
//! `produce` takes a `pyarrow.RecordBatch` with the sink's columns (`value`, and optionally `key`,
//! `topic`, `partition`, `headers`, as `connectors/kafka/sink.py` validates them on the driver)
//! and hands every row to librdkafka with `rd_kafka_produceva`, the GIL released: no Python object
//! per record. Delivery reports are counted here (`dr_msg_cb`), the first failed one kept with its
//! topic, partition and row; client errors (`error_cb`) are kept for the Python side, which
//! decides, as for the confluent-kafka producer, which of them end the write (a wrong password, an
//! untrusted certificate). Flushing, the at-least-once rule (nothing reported written before every
//! delivery is acknowledged) and the error messages stay in `connectors/kafka/native_sink.py`, so
//! both writers have one set of semantics.
//!
//! Threading: one producer is used by one task's thread; callbacks run on the thread that polls or
//! flushes (ours), and the report state is atomics and mutexes all the same.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, Int32Array, OffsetSizeTrait, RecordBatch, StructArray};
use arrow_pyarrow::FromPyArrow;
use arrow_schema::DataType;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rdkafka_sys::bindings as rd;

use crate::{conf::new_conf, cstr, err2str, kafka_error};

const QUEUE_FULL: i32 = -184;
const FATAL: i32 = -150;
const PARTITION_UA: i32 = -1;
/// Delivery reports are served every this many rows while producing.
const POLL_EVERY: usize = 1000;
/// Client errors kept between two reads by the Python side (the first ones matter).
const MAX_CLIENT_ERRORS: usize = 64;

/// What the callbacks record.
struct Reports {
    delivered: AtomicU64,
    failed: AtomicBool,
    first_failure: Mutex<Option<String>>,
    client_errors: Mutex<Vec<(i32, String, bool)>>,
}

unsafe extern "C" fn on_delivery(
    _rk: *mut rd::rd_kafka_t,
    msg: *const rd::rd_kafka_message_t,
    opaque: *mut c_void,
) {
    let reports = &*(opaque as *const Reports);
    let m = &*msg;
    let code = m.err as i32;
    if code == 0 {
        reports.delivered.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let mut first = reports
        .first_failure
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if first.is_none() {
        let topic = if m.rkt.is_null() {
            String::new()
        } else {
            cstr(rd::rd_kafka_topic_name(m.rkt))
        };
        // the message opaque is the row's number within the task's rows
        *first = Some(format!(
            "{} (topic {}, partition {}, row {})",
            err2str(code),
            topic,
            m.partition,
            m._private as usize
        ));
    }
    reports.failed.store(true, Ordering::Release);
}

unsafe extern "C" fn on_error(
    rk: *mut rd::rd_kafka_t,
    err: c_int,
    reason: *const c_char,
    opaque: *mut c_void,
) {
    let reports = &*(opaque as *const Reports);
    let (code, message, fatal) = if err == FATAL {
        let mut buf = vec![0 as c_char; 512];
        let code = rd::rd_kafka_fatal_error(rk, buf.as_mut_ptr(), buf.len()) as i32;
        (code, cstr(buf.as_ptr()), true)
    } else {
        (err, cstr(reason), false)
    };
    let mut errors = reports
        .client_errors
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if errors.len() < MAX_CLIENT_ERRORS {
        errors.push((code, message, fatal));
    }
}

/// A binary or string column (either offset width), read as bytes.
enum Bytes<'a> {
    Absent,
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
}

impl<'a> Bytes<'a> {
    fn of(array: Option<&'a ArrayRef>, what: &str) -> PyResult<Self> {
        let Some(a) = array else {
            return Ok(Bytes::Absent);
        };
        Ok(match a.data_type() {
            DataType::Binary => Bytes::Binary(a.as_binary::<i32>()),
            DataType::LargeBinary => Bytes::LargeBinary(a.as_binary::<i64>()),
            DataType::Utf8 => Bytes::Utf8(a.as_string::<i32>()),
            DataType::LargeUtf8 => Bytes::LargeUtf8(a.as_string::<i64>()),
            other => {
                return Err(PyValueError::new_err(format!(
                    "{what} must be binary or string, not {other}"
                )))
            }
        })
    }

    fn get(&self, i: usize) -> Option<&'a [u8]> {
        match self {
            Bytes::Absent => None,
            Bytes::Binary(a) => (!a.is_null(i)).then(|| a.value(i)),
            Bytes::LargeBinary(a) => (!a.is_null(i)).then(|| a.value(i)),
            Bytes::Utf8(a) => (!a.is_null(i)).then(|| a.value(i).as_bytes()),
            Bytes::LargeUtf8(a) => (!a.is_null(i)).then(|| a.value(i).as_bytes()),
        }
    }
}

/// The `headers` column: per row, the range of its entries in the struct column.
struct Headers<'a> {
    list: &'a dyn Array,
    bounds: Vec<usize>,
    entries: &'a StructArray,
    keys: Bytes<'a>,
    values: Bytes<'a>,
}

fn list_parts<O: OffsetSizeTrait>(a: &ArrayRef) -> (Vec<usize>, &StructArray) {
    let list = a.as_list::<O>();
    let bounds = list.value_offsets().iter().map(|o| o.as_usize()).collect();
    (bounds, list.values().as_struct())
}

impl<'a> Headers<'a> {
    fn of(array: Option<&'a ArrayRef>) -> PyResult<Option<Self>> {
        let Some(a) = array else { return Ok(None) };
        let wrong = || {
            PyValueError::new_err(format!(
                "column 'headers' must be array<struct<key: string, value: binary>>, not {}",
                a.data_type()
            ))
        };
        let (bounds, entries) = match a.data_type() {
            DataType::List(f) if matches!(f.data_type(), DataType::Struct(s) if s.len() == 2) => {
                list_parts::<i32>(a)
            }
            DataType::LargeList(f) if matches!(f.data_type(), DataType::Struct(s) if s.len() == 2) => {
                list_parts::<i64>(a)
            }
            _ => return Err(wrong()),
        };
        Ok(Some(Headers {
            list: a.as_ref(),
            bounds,
            keys: Bytes::of(Some(entries.column(0)), "a header's key")?,
            values: Bytes::of(Some(entries.column(1)), "a header's value")?,
            entries,
        }))
    }

    /// The row's headers as a librdkafka list (null when it has none, as the Python writer).
    fn build(&self, i: usize, row: u64) -> Result<*mut rd::rd_kafka_headers_t, String> {
        if self.list.is_null(i) || self.bounds[i] == self.bounds[i + 1] {
            return Ok(ptr::null_mut());
        }
        let (start, end) = (self.bounds[i], self.bounds[i + 1]);
        let hdrs = unsafe { rd::rd_kafka_headers_new(end - start) };
        for j in start..end {
            let key = if self.entries.is_null(j) {
                None
            } else {
                self.keys.get(j)
            };
            let Some(key) = key else {
                unsafe { rd::rd_kafka_headers_destroy(hdrs) };
                return Err(format!(
                    "row {row} has a header without a key (headers are array<struct<key: string, value: binary>> with a key each)"
                ));
            };
            let value = self.values.get(j);
            let (vp, vs) = match value {
                Some(v) => (v.as_ptr() as *const c_void, v.len() as isize),
                None => (ptr::null(), 0),
            };
            unsafe {
                rd::rd_kafka_header_add(
                    hdrs,
                    key.as_ptr() as *const c_char,
                    key.len() as isize,
                    vp,
                    vs,
                )
            };
        }
        Ok(hdrs)
    }
}

fn vu(vtype: rd::rd_kafka_vtype_t, u: rd::rd_kafka_vu_s__bindgen_ty_1) -> rd::rd_kafka_vu_t {
    rd::rd_kafka_vu_t { vtype, u }
}

fn mem(bytes: Option<&[u8]>) -> rd::rd_kafka_vu_s__bindgen_ty_1 {
    let (ptr, size) = match bytes {
        Some(b) => (b.as_ptr() as *mut c_void, b.len()),
        None => (ptr::null_mut(), 0),
    };
    rd::rd_kafka_vu_s__bindgen_ty_1 {
        mem: rd::rd_kafka_vu_s__bindgen_ty_1__bindgen_ty_1 { ptr, size },
    }
}

/// Why `produce` stopped before the end of the batch with an error.
struct Stop {
    code: i32,
    message: String,
}

/// One librdkafka producer fed from Arrow record batches; see the module's documentation.
#[pyclass(module = "sparkflow_kafka_native")]
pub(crate) struct NativeProducer {
    rk: *mut rd::rd_kafka_t,
    topics: HashMap<Vec<u8>, usize>, // name -> rd_kafka_topic_t*
    reports: Box<Reports>,
}

unsafe impl Send for NativeProducer {}
unsafe impl Sync for NativeProducer {}

impl NativeProducer {
    fn handle(&self) -> PyResult<*mut rd::rd_kafka_t> {
        if self.rk.is_null() {
            return Err(kafka_error(-172, "the producer is closed".into(), false));
        }
        Ok(self.rk)
    }

    /// The handle and its topics, leaving this producer closed.
    fn take(&mut self) -> (usize, Vec<usize>) {
        let rk = std::mem::replace(&mut self.rk, ptr::null_mut()) as usize;
        (rk, self.topics.drain().map(|(_, rkt)| rkt).collect())
    }
}

/// Destroys a producer handle; what was not flushed is dropped, not waited for (the write has
/// failed already, or everything was delivered).
fn release(rk: usize, topics: Vec<usize>) {
    if rk == 0 {
        return;
    }
    unsafe {
        for rkt in topics {
            rd::rd_kafka_topic_destroy(rkt as *mut rd::rd_kafka_topic_t);
        }
        let rk = rk as *mut rd::rd_kafka_t;
        rd::rd_kafka_purge(
            rk,
            rd::RD_KAFKA_PURGE_F_QUEUE
                | rd::RD_KAFKA_PURGE_F_INFLIGHT
                | rd::RD_KAFKA_PURGE_F_NON_BLOCKING,
        );
        rd::rd_kafka_destroy(rk);
    }
}

impl Drop for NativeProducer {
    fn drop(&mut self) {
        let (rk, topics) = self.take();
        release(rk, topics);
    }
}

#[pymethods]
impl NativeProducer {
    /// A producer for librdkafka `config` (string pairs).
    #[new]
    fn new(config: Vec<(String, String)>) -> PyResult<Self> {
        let reports = Box::new(Reports {
            delivered: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            first_failure: Mutex::new(None),
            client_errors: Mutex::new(Vec::new()),
        });
        let conf = new_conf(&config)?;
        let mut errstr = vec![0 as c_char; 512];
        let rk = unsafe {
            rd::rd_kafka_conf_set_dr_msg_cb(conf, Some(on_delivery));
            rd::rd_kafka_conf_set_error_cb(conf, Some(on_error));
            rd::rd_kafka_conf_set_opaque(conf, &*reports as *const Reports as *mut c_void);
            rd::rd_kafka_new(
                rd::rd_kafka_type_t::RD_KAFKA_PRODUCER,
                conf,
                errstr.as_mut_ptr(),
                errstr.len(),
            )
        };
        if rk.is_null() {
            unsafe { rd::rd_kafka_conf_destroy(conf) };
            return Err(kafka_error(-186, cstr(errstr.as_ptr()), false));
        }
        Ok(NativeProducer {
            rk,
            topics: HashMap::new(),
            reports,
        })
    }

    /// Produces the rows of `batch` from row `start` on (GIL released) to `topic`, else to each
    /// row's `topic` column; `first_row` numbers the batch's first row within the task (error
    /// messages name rows by it). Returns the index of the first row not produced: the batch's
    /// length when all were, less when a delivery failed or a client error was reported while the
    /// queue was full (the caller looks at `failure()` / `client_errors()` and goes on or stops).
    /// Raises `ValueError` for a row that cannot be produced (no topic, a header without a key)
    /// and `NativeKafkaError` when librdkafka refuses a row; both name the row and the topic.
    #[pyo3(signature = (batch, topic, first_row, start=0))]
    fn produce(
        &mut self,
        py: Python<'_>,
        batch: &Bound<'_, PyAny>,
        topic: Option<String>,
        first_row: u64,
        start: usize,
    ) -> PyResult<usize> {
        let rk = self.handle()? as usize;
        let batch = RecordBatch::from_pyarrow_bound(batch)?;
        let values = Bytes::of(batch.column_by_name("value"), "column 'value'")?;
        let keys = Bytes::of(batch.column_by_name("key"), "column 'key'")?;
        let topic_column = Bytes::of(batch.column_by_name("topic"), "column 'topic'")?;
        let partitions: Option<&Int32Array> = match batch.column_by_name("partition") {
            None => None,
            Some(a) => Some(a.as_primitive_opt::<Int32Type>().ok_or_else(|| {
                PyValueError::new_err(format!(
                    "column 'partition' must be an int, not {}",
                    a.data_type()
                ))
            })?),
        };
        let headers = Headers::of(batch.column_by_name("headers"))?;
        let fixed_topic = topic.map(|t| t.into_bytes());
        let mut topics = std::mem::take(&mut self.topics);
        let reports: &Reports = &self.reports;
        let n = batch.num_rows();
        let (topics, result) = py.detach(|| {
            let rk = rk as *mut rd::rd_kafka_t;
            let mut last: Option<(&[u8], usize)> = None;
            let mut i = start;
            let result = 'rows: loop {
                if i >= n {
                    break Ok(n);
                }
                if reports.failed.load(Ordering::Acquire) {
                    break Ok(i);
                }
                let row = first_row + i as u64;
                let name: &[u8] = match fixed_topic.as_deref().or_else(|| topic_column.get(i)) {
                    Some(t) if !t.is_empty() => t,
                    _ => {
                        break Err(Stop {
                            code: -186,
                            message: format!(
                                "row {row} has a null topic and the 'topic' option is not set"
                            ),
                        })
                    }
                };
                let rkt = match last {
                    Some((prev, rkt)) if prev == name => rkt,
                    _ => {
                        let rkt = match topics.get(name) {
                            Some(&rkt) => rkt,
                            None => {
                                let Ok(cname) = CString::new(name) else {
                                    break Err(Stop { code: -186, message: format!("row {row}: the topic name contains a NUL byte") });
                                };
                                let rkt = unsafe { rd::rd_kafka_topic_new(rk, cname.as_ptr(), ptr::null_mut()) };
                                if rkt.is_null() {
                                    let code = unsafe { rd::rd_kafka_last_error() } as i32;
                                    break Err(Stop {
                                        code,
                                        message: format!(
                                            "producing row {row} to topic {} failed: {}",
                                            String::from_utf8_lossy(name),
                                            err2str(code)
                                        ),
                                    });
                                }
                                topics.insert(name.to_vec(), rkt as usize);
                                rkt as usize
                            }
                        };
                        last = Some((name, rkt));
                        rkt
                    }
                };
                let partition = partitions
                    .and_then(|p| (!p.is_null(i)).then(|| p.value(i)))
                    .unwrap_or(PARTITION_UA);
                let hdrs = match headers.as_ref().map(|h| h.build(i, row)) {
                    None => ptr::null_mut(),
                    Some(Ok(h)) => h,
                    Some(Err(message)) => break Err(Stop { code: -186, message }),
                };
                let mut vus = [
                    vu(rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_RKT, rd::rd_kafka_vu_s__bindgen_ty_1 { rkt: rkt as *mut rd::rd_kafka_topic_t }),
                    vu(rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_PARTITION, rd::rd_kafka_vu_s__bindgen_ty_1 { i32_: partition }),
                    vu(rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_MSGFLAGS, rd::rd_kafka_vu_s__bindgen_ty_1 { i: rd::RD_KAFKA_MSG_F_COPY }),
                    vu(rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_VALUE, mem(values.get(i))),
                    vu(rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_KEY, mem(keys.get(i))),
                    vu(rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_OPAQUE, rd::rd_kafka_vu_s__bindgen_ty_1 { ptr: row as usize as *mut c_void }),
                    vu(rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_HEADERS, rd::rd_kafka_vu_s__bindgen_ty_1 { headers: hdrs }),
                ];
                let count = if hdrs.is_null() { vus.len() - 1 } else { vus.len() };
                loop {
                    let error = unsafe { rd::rd_kafka_produceva(rk, vus.as_mut_ptr(), count) };
                    if error.is_null() {
                        break; // the headers belong to the message now
                    }
                    let code = unsafe { rd::rd_kafka_error_code(error) } as i32;
                    let message = cstr(unsafe { rd::rd_kafka_error_string(error) });
                    unsafe { rd::rd_kafka_error_destroy(error) };
                    if code == QUEUE_FULL {
                        unsafe { rd::rd_kafka_poll(rk, 100) };
                        let errors = !reports.client_errors.lock().unwrap_or_else(|e| e.into_inner()).is_empty();
                        if errors || reports.failed.load(Ordering::Acquire) {
                            if !hdrs.is_null() {
                                unsafe { rd::rd_kafka_headers_destroy(hdrs) };
                            }
                            break 'rows Ok(i);
                        }
                        continue;
                    }
                    if !hdrs.is_null() {
                        unsafe { rd::rd_kafka_headers_destroy(hdrs) };
                    }
                    break 'rows Err(Stop {
                        code,
                        message: format!(
                            "producing row {row} to topic {} (partition {partition}) failed: {message}",
                            String::from_utf8_lossy(name)
                        ),
                    });
                }
                i += 1;
                if i % POLL_EVERY == 0 {
                    unsafe { rd::rd_kafka_poll(rk, 0) };
                }
            };
            unsafe { rd::rd_kafka_poll(rk, 0) };
            (topics, result)
        });
        self.topics = topics;
        result.map_err(|stop| {
            if stop.code == -186 {
                PyValueError::new_err(stop.message)
            } else {
                kafka_error(stop.code, stop.message, false)
            }
        })
    }

    /// Waits up to `timeout_ms` for outstanding deliveries (GIL released, delivery reports
    /// served); returns how many messages and requests are still outstanding.
    fn flush(&self, py: Python<'_>, timeout_ms: i32) -> PyResult<i32> {
        let rk = self.handle()? as usize;
        Ok(py.detach(move || unsafe {
            let rk = rk as *mut rd::rd_kafka_t;
            rd::rd_kafka_flush(rk, timeout_ms);
            rd::rd_kafka_outq_len(rk)
        }))
    }

    /// Records acknowledged by the broker so far.
    fn delivered(&self) -> u64 {
        self.reports.delivered.load(Ordering::Relaxed)
    }

    /// The first failed delivery, with its topic, partition and row, or `None`.
    fn failure(&self) -> Option<String> {
        self.reports
            .first_failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The client errors reported since the last call, as `(code, message, fatal)`.
    fn client_errors(&self) -> Vec<(i32, String, bool)> {
        std::mem::take(
            &mut *self
                .reports
                .client_errors
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        )
    }

    /// Frees the producer (idempotent; GIL released); what is still queued is dropped.
    fn close(&mut self, py: Python<'_>) {
        let (rk, topics) = self.take();
        py.detach(move || release(rk, topics));
    }
}
