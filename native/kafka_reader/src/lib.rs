//! `sparkflow_kafka_native`: kafka-unified's compiled fetch.
//!
//! One `NativeConsumer` wraps one librdkafka consumer (assign-only, never subscribed). Its
//! `consume` takes a batch from the consumer queue with `rd_kafka_consume_batch_queue` and, with
//! the GIL released, appends each record straight into Arrow builders: one `RecordBatch` per run
//! of records of one partition (Spark's Kafka schema: key, value, topic, partition, offset,
//! timestamp in microseconds UTC, timestampType, and the headers in order, duplicates kept).
//! Partition-EOF and error events are returned beside the batches, in order, so that the Python
//! split reader keeps every decision (stop offsets, data-loss checks, fault handling) and both
//! readers share one set of semantics. Why these crates: README.md.
//!
//! Threading: a consumer is used by one thread at a time (the fetcher thread that borrowed it
//! from the pool); librdkafka handles may be used from any thread, so the class is `Send + Sync`.

use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr;
use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::{
    ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_pyarrow::ToPyArrow;
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use rdkafka_sys::bindings as rd;
use record_headers::HeaderColumns;

mod avro_decode;
mod avro_direct;
mod columns;
mod conf;
mod confluent_header;
mod decompress_hints;
mod gzip_inflate;
mod json_decode;
mod json_tape;
mod producer;
mod protobuf_decode;
mod record_headers;

create_exception!(
    sparkflow_kafka_native,
    NativeKafkaError,
    PyException,
    "A librdkafka error: args are (code, message, fatal), code as in confluent_kafka.KafkaError."
);

const PARTITION_EOF: i32 = -191;
const FATAL: i32 = -150;

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn err2str(code: i32) -> String {
    // the enum is the full list of librdkafka's codes, which is all librdkafka hands out
    cstr(unsafe { rd::rd_kafka_err2str(std::mem::transmute::<i32, rd::rd_kafka_resp_err_t>(code)) })
}

fn kafka_error(code: i32, message: String, fatal: bool) -> PyErr {
    NativeKafkaError::new_err((code, message, fatal))
}

fn cstring(s: &str, what: &str) -> PyResult<CString> {
    CString::new(s).map_err(|_| PyValueError::new_err(format!("{what} contains a NUL byte")))
}

/// A `rd_kafka_topic_partition_list_t` destroyed on drop.
struct PartitionList(*mut rd::rd_kafka_topic_partition_list_t);

impl PartitionList {
    fn new(parts: &[(String, i32, i64)]) -> PyResult<Self> {
        let list =
            PartitionList(unsafe { rd::rd_kafka_topic_partition_list_new(parts.len() as c_int) });
        for (topic, partition, offset) in parts {
            let t = cstring(topic, "a topic name")?;
            unsafe {
                let tp = rd::rd_kafka_topic_partition_list_add(list.0, t.as_ptr(), *partition);
                (*tp).offset = *offset;
            }
        }
        Ok(list)
    }
}

impl Drop for PartitionList {
    fn drop(&mut self) {
        unsafe { rd::rd_kafka_topic_partition_list_destroy(self.0) }
    }
}

fn check_error(error: *mut rd::rd_kafka_error_t) -> PyResult<()> {
    if error.is_null() {
        return Ok(());
    }
    let (code, message, fatal) = unsafe {
        (
            rd::rd_kafka_error_code(error) as i32,
            cstr(rd::rd_kafka_error_string(error)),
            rd::rd_kafka_error_is_fatal(error) != 0,
        )
    };
    unsafe { rd::rd_kafka_error_destroy(error) };
    Err(kafka_error(code, message, fatal))
}

/// What one `consume` hands back, in the order librdkafka delivered it.
enum Event {
    Records {
        topic: String,
        partition: i32,
        first: i64,
        last: i64,
        batch: RecordBatch,
    },
    Eof {
        topic: String,
        partition: i32,
        offset: i64,
    },
    Error {
        topic: Option<String>,
        partition: i32,
        offset: i64,
        code: i32,
        message: String,
        fatal: bool,
    },
}

struct Handle {
    rk: *mut rd::rd_kafka_t,
    queue: *mut rd::rd_kafka_queue_t,
}

// librdkafka's handles are thread-safe; see the module's "Threading" paragraph
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        unsafe {
            rd::rd_kafka_queue_destroy(self.queue);
            rd::rd_kafka_consumer_close(self.rk);
            rd::rd_kafka_destroy(self.rk);
        }
    }
}

fn headers_type() -> DataType {
    let fields = Fields::from(vec![
        Field::new("key", DataType::Utf8, true),
        Field::new("value", DataType::Binary, true),
    ]);
    DataType::List(Arc::new(Field::new("item", DataType::Struct(fields), true)))
}

fn schema(include_headers: bool) -> SchemaRef {
    let mut fields = vec![
        Field::new("key", DataType::Binary, true),
        Field::new("value", DataType::Binary, true),
        Field::new("topic", DataType::Utf8, true),
        Field::new("partition", DataType::Int32, true),
        Field::new("offset", DataType::Int64, true),
        Field::new(
            "timestamp",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("timestampType", DataType::Int32, true),
    ];
    if include_headers {
        fields.push(Field::new("headers", headers_type(), true));
    }
    Arc::new(Schema::new(fields))
}

/// The Arrow batch of `msgs` (all of one partition, none an error, holding `key_bytes` and
/// `payload_bytes` in all), destroying each message once it is appended: one pass over the
/// messages, each a separate librdkafka allocation, instead of one to size the builders, one to
/// fill them and one to free them.
fn build_batch(
    msgs: &[*mut rd::rd_kafka_message_t],
    (key_bytes, payload_bytes): (usize, usize),
    topic: &str,
    schema: &SchemaRef,
    raw_headers: bool,
) -> (RecordBatch, u64) {
    let n = msgs.len();
    let mut keys = BinaryBuilder::with_capacity(n, key_bytes);
    let mut values = BinaryBuilder::with_capacity(n, payload_bytes);
    let mut offsets = Vec::with_capacity(n);
    let mut stamps = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    let include_headers = schema.fields().len() > 7;
    let mut headers = include_headers.then(|| HeaderColumns::with_capacity(n, raw_headers));
    let mut partition = 0;
    for &m in msgs {
        let msg = unsafe { &*m };
        partition = msg.partition;
        if msg.key.is_null() {
            keys.append_null();
        } else {
            keys.append_value(unsafe {
                std::slice::from_raw_parts(msg.key as *const u8, msg.key_len)
            });
        }
        if msg.payload.is_null() {
            values.append_null();
        } else {
            values.append_value(unsafe {
                std::slice::from_raw_parts(msg.payload as *const u8, msg.len)
            });
        }
        offsets.push(msg.offset);
        let mut tstype = rd::rd_kafka_timestamp_type_t::RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
        let ms = unsafe { rd::rd_kafka_message_timestamp(m, &mut tstype) };
        stamps.push(ms * 1000);
        types.push(tstype as i32 - 1); // the Java client's numbering: librdkafka's minus one
        if let Some(columns) = headers.as_mut() {
            columns.append(m);
        }
        unsafe { rd::rd_kafka_message_destroy(m) };
    }
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(keys.finish()),
        Arc::new(values.finish()),
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(topic, n))),
        Arc::new(Int32Array::from(vec![partition; n])),
        Arc::new(Int64Array::from(offsets)),
        Arc::new(TimestampMicrosecondArray::from(stamps).with_timezone("UTC")),
        Arc::new(Int32Array::from(types)),
    ];
    let mut raw_read = 0;
    if let Some(built) = headers {
        raw_read = built.raw_read();
        columns.push(built.finish(schema.field(7).data_type()));
    }
    let batch = RecordBatch::try_new(schema.clone(), columns).expect("columns match the schema");
    (batch, raw_read)
}

fn topic_of(m: &rd::rd_kafka_message_t) -> Option<String> {
    (!m.rkt.is_null()).then(|| cstr(unsafe { rd::rd_kafka_topic_name(m.rkt) }))
}

/// One assign-only librdkafka consumer whose fetches come back as Arrow record batches.
#[pyclass(module = "sparkflow_kafka_native")]
struct NativeConsumer {
    handle: Option<Handle>,
    schemas: [SchemaRef; 2], // without and with the headers column
    buffer: Vec<usize>,      // room for one batch's message pointers, reused
    raw_headers: bool,       // headers read from the record's bytes where they can (record_headers)
    raw_read: u64,           // records whose headers were read so
}

unsafe impl Send for NativeConsumer {}
unsafe impl Sync for NativeConsumer {}

impl NativeConsumer {
    fn rk(&self) -> PyResult<*mut rd::rd_kafka_t> {
        self.handle
            .as_ref()
            .map(|h| h.rk)
            .ok_or_else(|| kafka_error(-172, "the consumer is closed".into(), false))
    }
}

fn message_error(rk: *mut rd::rd_kafka_t, m: &rd::rd_kafka_message_t) -> Event {
    let mut code = m.err as i32;
    let mut message = if m.payload.is_null() {
        err2str(code)
    } else {
        let bytes = unsafe { std::slice::from_raw_parts(m.payload as *const u8, m.len) };
        String::from_utf8_lossy(bytes).into_owned()
    };
    let mut fatal = false;
    if code == FATAL {
        let mut buf = vec![0 as c_char; 512];
        code = unsafe { rd::rd_kafka_fatal_error(rk, buf.as_mut_ptr(), buf.len()) } as i32;
        message = cstr(buf.as_ptr());
        fatal = true;
    }
    Event::Error {
        topic: topic_of(m),
        partition: m.partition,
        offset: m.offset,
        code,
        message,
        fatal,
    }
}

/// Bytes of keys and values one Arrow batch holds at most unless a single record is larger
/// (`consume`'s `max_bytes`): a binary column's offsets are 32-bit (2 GiB of values at most).
const DEFAULT_MAX_BATCH_BYTES: usize = 64 * 1024 * 1024;

/// Turns a consumed batch into events, destroying its messages; also how many records' headers
/// were read from their bytes (`record_headers`). A run of one partition becomes several batches
/// where its keys and values pass `max_bytes`.
fn events(
    rk: *mut rd::rd_kafka_t,
    msgs: &[*mut rd::rd_kafka_message_t],
    schema: &SchemaRef,
    raw_headers: bool,
    max_bytes: usize,
) -> (Vec<Event>, u64) {
    let mut raw_read = 0;
    let n = msgs.len();
    let mut out = Vec::new();
    let mut start = 0;
    while start < n {
        let first = unsafe { &*msgs[start] };
        if first.err as i32 != 0 {
            out.push(if first.err as i32 == PARTITION_EOF {
                Event::Eof {
                    topic: topic_of(first).unwrap_or_default(),
                    partition: first.partition,
                    offset: first.offset,
                }
            } else {
                message_error(rk, first)
            });
            unsafe { rd::rd_kafka_message_destroy(msgs[start]) };
            start += 1;
            continue;
        }
        let mut end = start + 1;
        let (mut key_bytes, mut payload_bytes) = (first.key_len, first.len);
        while end < n {
            let m = unsafe { &*msgs[end] };
            if m.err as i32 != 0 || m.rkt != first.rkt || m.partition != first.partition {
                break;
            }
            if key_bytes + payload_bytes + m.key_len + m.len > max_bytes {
                break;
            }
            key_bytes += m.key_len;
            payload_bytes += m.len;
            end += 1;
        }
        let topic = topic_of(first).unwrap_or_default();
        let (partition, first_offset) = (first.partition, first.offset);
        let last = unsafe { (*msgs[end - 1]).offset };
        // destroys msgs[start..end]: `first` is not read after this
        let (batch, raw) = build_batch(
            &msgs[start..end],
            (key_bytes, payload_bytes),
            &topic,
            schema,
            raw_headers,
        );
        raw_read += raw;
        out.push(Event::Records {
            topic,
            partition,
            first: first_offset,
            last,
            batch,
        });
        start = end;
    }
    (out, raw_read)
}

#[pymethods]
impl NativeConsumer {
    /// A consumer for librdkafka `config` (string pairs); `raw_headers=False` has librdkafka parse
    /// every record's headers (`record_headers`: the reference for the fast path).
    #[new]
    #[pyo3(signature = (config, raw_headers = true))]
    fn new(config: Vec<(String, String)>, raw_headers: bool) -> PyResult<Self> {
        let mut errstr = vec![0 as c_char; 512];
        let conf = conf::new_conf(&config)?;
        if let Some(bytes) = conf::get(conf, "receive.message.max.bytes") {
            decompress_hints::note_receive_max(bytes.parse().unwrap_or(0));
        }
        unsafe {
            let rk = rd::rd_kafka_new(
                rd::rd_kafka_type_t::RD_KAFKA_CONSUMER,
                conf,
                errstr.as_mut_ptr(),
                errstr.len(),
            );
            if rk.is_null() {
                rd::rd_kafka_conf_destroy(conf);
                return Err(kafka_error(-186, cstr(errstr.as_ptr()), false));
            }
            rd::rd_kafka_poll_set_consumer(rk);
            let queue = rd::rd_kafka_queue_get_consumer(rk);
            if queue.is_null() {
                // librdkafka has no consumer queue without a group.id
                rd::rd_kafka_destroy(rk);
                return Err(PyValueError::new_err(
                    "librdkafka setting group.id: required (the consumer is assign-only but needs a group)",
                ));
            }
            Ok(NativeConsumer {
                handle: Some(Handle { rk, queue }),
                schemas: [schema(false), schema(true)],
                buffer: Vec::new(),
                raw_headers,
                raw_read: 0,
            })
        }
    }

    /// How many records' headers this consumer read from the record's bytes (the rest, librdkafka).
    #[getter]
    fn headers_read_raw(&self) -> u64 {
        self.raw_read
    }

    /// Messages librdkafka has fetched and parsed that no `consume` has taken yet (every assigned
    /// partition's; right after a fetch lands, what it brought beyond the records taken).
    fn queued(&self) -> PyResult<usize> {
        let queue = self
            .handle
            .as_ref()
            .map(|h| h.queue)
            .ok_or_else(|| kafka_error(-172, "the consumer is closed".into(), false))?;
        Ok(unsafe { rd::rd_kafka_queue_length(queue) })
    }

    /// Adds `(topic, partition, offset)` to the assignment.
    fn incremental_assign(&self, parts: Vec<(String, i32, i64)>) -> PyResult<()> {
        let list = PartitionList::new(&parts)?;
        check_error(unsafe { rd::rd_kafka_incremental_assign(self.rk()?, list.0) })
    }

    /// Removes `(topic, partition)` from the assignment.
    fn incremental_unassign(&self, parts: Vec<(String, i32)>) -> PyResult<()> {
        let parts: Vec<(String, i32, i64)> =
            parts.into_iter().map(|(t, p)| (t, p, -1001)).collect();
        let list = PartitionList::new(&parts)?;
        check_error(unsafe { rd::rd_kafka_incremental_unassign(self.rk()?, list.0) })
    }

    /// Drops the whole assignment.
    fn unassign(&self) -> PyResult<()> {
        let code = unsafe { rd::rd_kafka_assign(self.rk()?, ptr::null()) } as i32;
        if code != 0 {
            return Err(kafka_error(code, err2str(code), false));
        }
        Ok(())
    }

    /// `(low, high)` asked of the partition's leader (GIL released), or the last ones librdkafka
    /// saw when `cached` (-1001 for what it has not seen).
    #[pyo3(signature = (topic, partition, timeout_ms, cached=false))]
    fn watermarks(
        &self,
        py: Python<'_>,
        topic: &str,
        partition: i32,
        timeout_ms: i32,
        cached: bool,
    ) -> PyResult<(i64, i64)> {
        let rk = self.rk()? as usize;
        let t = cstring(topic, "a topic name")?;
        let (code, low, high) = py.detach(move || {
            let (mut low, mut high) = (-1001i64, -1001i64);
            let rk = rk as *mut rd::rd_kafka_t;
            let code = unsafe {
                if cached {
                    rd::rd_kafka_get_watermark_offsets(
                        rk,
                        t.as_ptr(),
                        partition,
                        &mut low,
                        &mut high,
                    )
                } else {
                    rd::rd_kafka_query_watermark_offsets(
                        rk,
                        t.as_ptr(),
                        partition,
                        &mut low,
                        &mut high,
                        timeout_ms,
                    )
                }
            } as i32;
            (code, low, high)
        });
        if code != 0 {
            return Err(kafka_error(code, err2str(code), false));
        }
        Ok((low, high))
    }

    /// The partition ids of `topic` per the cluster's metadata, or `None` when the cluster reports
    /// the topic in error (unknown); raises when the cluster does not answer.
    fn partitions(
        &self,
        py: Python<'_>,
        topic: &str,
        timeout_ms: i32,
    ) -> PyResult<Option<Vec<i32>>> {
        let rk = self.rk()? as usize;
        let t = cstring(topic, "a topic name")?;
        let result = py.detach(move || unsafe {
            let rk = rk as *mut rd::rd_kafka_t;
            let rkt = rd::rd_kafka_topic_new(rk, t.as_ptr(), ptr::null_mut());
            let mut md: *const rd::rd_kafka_metadata = ptr::null();
            let code = rd::rd_kafka_metadata(rk, 0, rkt, &mut md, timeout_ms) as i32;
            rd::rd_kafka_topic_destroy(rkt);
            if code != 0 {
                return Err(code);
            }
            let mut found: Option<Vec<i32>> = None;
            let meta = &*md;
            for i in 0..meta.topic_cnt as isize {
                let mt = &*meta.topics.offset(i);
                if cstr(mt.topic) == cstr(t.as_ptr()) && mt.err as i32 == 0 {
                    found = Some(
                        (0..mt.partition_cnt as isize)
                            .map(|j| (*mt.partitions.offset(j)).id)
                            .collect(),
                    );
                }
            }
            rd::rd_kafka_metadata_destroy(md);
            Ok(found)
        });
        result.map_err(|code| kafka_error(code, err2str(code), false))
    }

    /// Up to `max_messages` records within `timeout_ms` (GIL released), as a list of
    /// `("records", topic, partition, first_offset, last_offset, pyarrow.RecordBatch)`,
    /// `("eof", topic, partition, offset)` and
    /// `("error", topic or None, partition, offset, code, message, fatal)`, in delivery order;
    /// `include_headers` adds the headers column; a partition's run is cut into batches of at most
    /// `max_bytes` of keys and values (a single larger record makes a batch of its own).
    #[pyo3(signature = (max_messages, timeout_ms, include_headers, max_bytes = DEFAULT_MAX_BATCH_BYTES))]
    fn consume<'py>(
        &mut self,
        py: Python<'py>,
        max_messages: usize,
        timeout_ms: i32,
        include_headers: bool,
        max_bytes: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let (rk, queue) = match self.handle.as_ref() {
            Some(h) => (h.rk as usize, h.queue as usize),
            None => return Err(kafka_error(-172, "the consumer is closed".into(), false)),
        };
        let mut buffer = std::mem::take(&mut self.buffer);
        if buffer.len() < max_messages {
            buffer.resize(max_messages, 0usize);
        }
        let schema = self.schemas[include_headers as usize].clone();
        let raw_headers = self.raw_headers;
        let (buffer, events) = py.detach(move || {
            let buf = buffer.as_ptr() as *mut *mut rd::rd_kafka_message_t;
            let n = unsafe {
                rd::rd_kafka_consume_batch_queue(
                    queue as *mut rd::rd_kafka_queue_t,
                    timeout_ms,
                    buf,
                    max_messages,
                )
            };
            if n < 0 {
                return (buffer, Err(unsafe { rd::rd_kafka_last_error() } as i32));
            }
            let msgs = unsafe { std::slice::from_raw_parts(buf, n as usize) };
            let events = events(rk as *mut rd::rd_kafka_t, msgs, &schema, raw_headers, max_bytes);
            (buffer, Ok(events))
        });
        self.buffer = buffer;
        let (events, raw_read) = events.map_err(|code| kafka_error(code, err2str(code), false))?;
        self.raw_read += raw_read;
        let out = PyList::empty(py);
        for event in events {
            match event {
                Event::Records {
                    topic,
                    partition,
                    first,
                    last,
                    batch,
                } => out.append((
                    "records",
                    topic,
                    partition,
                    first,
                    last,
                    batch.to_pyarrow(py)?,
                ))?,
                Event::Eof {
                    topic,
                    partition,
                    offset,
                } => out.append(("eof", topic, partition, offset))?,
                Event::Error {
                    topic,
                    partition,
                    offset,
                    code,
                    message,
                    fatal,
                } => out.append(("error", topic, partition, offset, code, message, fatal))?,
            }
        }
        Ok(out)
    }

    /// Leaves the cluster and frees the handle (idempotent).
    fn close(&mut self, py: Python<'_>) {
        if let Some(handle) = self.handle.take() {
            py.detach(move || drop(handle));
        }
    }
}

/// The librdkafka version this module was built with, e.g. "2.12.1".
#[pyfunction]
fn librdkafka_version() -> String {
    cstr(unsafe { rd::rd_kafka_version_str() })
}

#[pymodule]
fn sparkflow_kafka_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeConsumer>()?;
    m.add_class::<producer::NativeProducer>()?;
    m.add_function(wrap_pyfunction!(librdkafka_version, m)?)?;
    m.add("NativeKafkaError", m.py().get_type::<NativeKafkaError>())?;
    avro_decode::register(m)?;
    avro_direct::register(m)?;
    confluent_header::register(m)?;
    decompress_hints::register(m)?;
    gzip_inflate::register(m)?;
    protobuf_decode::register(m)?;
    json_decode::register(m)?;
    Ok(())
}
