//! `HeaderColumns`: each record's headers appended to the Arrow columns of Spark's `headers`
//! (`array<struct<key: string, value: binary>>`), read from the record's own bytes.
//!
//! librdkafka's `rd_kafka_message_headers` parses a record's headers on first use into structures
//! it allocates (a parse buffer, the list, one allocation per header) and frees with the message.
//! Measured here on 300k records with one 3-byte header each, a consumer reading them with headers
//! did 0.74-0.89M records per CPU-second against 1.37-1.47M without; in a Spark read, malloc and free
//! were 30% of the Python workers' CPU. The unparsed header bytes are in the message already
//! (`rkm_u.consumer.binhdrs` of librdkafka's private `rd_kafka_msg_t`, which begins with the public
//! `rd_kafka_message_t`): `MsgMirror` mirrors that struct for the librdkafka this crate pins
//! (2.12.1, through rdkafka-sys =4.10.0; `rdkafka_msg.h`), and `parse` reads the v2 record format's
//! header section (zig-zag varints: a count, then per header the key's length, the key, the value's
//! length, -1 for null, and the value) straight into the builders. No crate parses that section
//! apart from a whole record batch, hence the few lines below.
//!
//! The mirror is trusted for a record only where it agrees with what is known without it: the
//! message was not parsed by librdkafka already, its header bytes begin right after its value
//! (`payload + len`, where a v2 record puts them; compared before anything is read through the
//! mirror's pointer), and they parse to exactly their length. A record failing any check (a null or
//! empty value, which leave no payload pointer to compare, a malformed header section, or another
//! layout after an upgrade) goes through
//! `rd_kafka_message_headers` as before, which answers the same for valid records:
//! `NativeConsumer(raw_headers=False)` takes that path for every record, and
//! `integration_tests/connectors/kafka/test_native_headers.py` compares the two on real Kafka.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, ListArray, StringArray, StructArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;
use rdkafka_sys::bindings as rd;

use crate::columns::{append_bytes, Validity};

/// The leading fields of librdkafka 2.12.1's `rd_kafka_msg_t` (`rdkafka_msg.h`), up to
/// `rkm_u.consumer.binhdrs` (`rd_kafkap_bytes_t`: an `int32_t` length, then the data pointer).
#[repr(C)]
struct MsgMirror {
    message: rd::rd_kafka_message_t,
    link_next: *mut c_void,
    link_prev: *mut *mut c_void,
    flags: c_int,
    tstype: c_int,
    timestamp: i64,
    headers: *mut rd::rd_kafka_headers_t,
    status: c_int,
    broker_id: i32,
    binhdrs_len: i32,
    binhdrs_data: *const u8,
}

/// Librdkafka refuses a header section claiming more headers than this (`BAD_MSG`: no headers).
const MAX_HEADERS: i64 = 100_000;

/// The unparsed header section of `m`, where the mirror's checks hold (see the module docs).
fn raw_section<'a>(m: *mut rd::rd_kafka_message_t) -> Option<&'a [u8]> {
    let msg = unsafe { &*(m as *const MsgMirror) };
    if msg.message.payload.is_null() || !msg.headers.is_null() || msg.binhdrs_len < 0 {
        return None;
    }
    let after_value = unsafe { (msg.message.payload as *const u8).add(msg.message.len) };
    if msg.binhdrs_data != after_value {
        return None;
    }
    Some(unsafe { std::slice::from_raw_parts(msg.binhdrs_data, msg.binhdrs_len as usize) })
}

/// A zig-zag varint of at most 64 bits (Kafka's record format).
fn varlong(buf: &[u8], pos: &mut usize) -> Option<i64> {
    let mut raw: u64 = 0;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        raw |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Some(((raw >> 1) as i64) ^ -((raw & 1) as i64));
        }
    }
    None
}

/// `len` bytes at `pos` (a negative length is none).
fn bytes<'a>(buf: &'a [u8], pos: &mut usize, len: i64) -> Option<&'a [u8]> {
    let len = usize::try_from(len).ok()?;
    let out = buf.get(*pos..pos.checked_add(len)?)?;
    *pos += len;
    Some(out)
}

/// The columns under construction.
pub struct HeaderColumns {
    raw: bool,
    raw_read: u64,
    list_offsets: Vec<i32>,
    list_valid: Validity,
    key_offsets: Vec<i32>,
    key_data: Vec<u8>,
    value_offsets: Vec<i32>,
    value_data: Vec<u8>,
    value_valid: Validity,
}

impl HeaderColumns {
    /// Columns for `records` records; `raw`: read the header bytes through the mirror where it holds.
    pub fn with_capacity(records: usize, raw: bool) -> Self {
        let mut list_offsets = Vec::with_capacity(records + 1);
        list_offsets.push(0);
        HeaderColumns {
            raw,
            raw_read: 0,
            list_offsets,
            list_valid: Validity::default(),
            key_offsets: vec![0],
            key_data: Vec::new(),
            value_offsets: vec![0],
            value_data: Vec::new(),
            value_valid: Validity::default(),
        }
    }

    /// The headers of `m` in order (duplicates kept); null when it has none, as the Python reader.
    pub fn append(&mut self, m: *mut rd::rd_kafka_message_t) {
        if self.raw {
            if let Some(section) = raw_section(m) {
                if self.parse(section) {
                    self.raw_read += 1;
                    return;
                }
            }
        }
        self.append_parsed_by_librdkafka(m);
    }

    /// Appends the headers of one v2 header section; false (nothing appended) if it is malformed.
    fn parse(&mut self, section: &[u8]) -> bool {
        let mut pos = 0;
        let Some(count) = varlong(section, &mut pos) else {
            return false;
        };
        if count > MAX_HEADERS {
            return false;
        }
        let marks = (
            self.key_data.len(),
            self.value_data.len(),
            self.key_offsets.len(),
        );
        for _ in 0..count.max(0) {
            let ok = (|| {
                let key_len = varlong(section, &mut pos)?;
                let key = bytes(section, &mut pos, key_len)?;
                let value_len = varlong(section, &mut pos)?;
                let value = if value_len == -1 {
                    None
                } else {
                    Some(bytes(section, &mut pos, value_len)?)
                };
                self.push_header(key, value);
                Some(())
            })();
            if ok.is_none() {
                self.truncate(marks);
                return false;
            }
        }
        if pos != section.len() {
            self.truncate(marks);
            return false;
        }
        self.end_record(count > 0);
        true
    }

    /// Drops the headers pushed since `marks` (a section found malformed part way).
    fn truncate(&mut self, (keys, values, entries): (usize, usize, usize)) {
        self.key_data.truncate(keys);
        self.value_data.truncate(values);
        self.key_offsets.truncate(entries);
        self.value_offsets.truncate(entries);
        self.value_valid.truncate(entries - 1);
    }

    fn push_header(&mut self, key: &[u8], value: Option<&[u8]>) {
        match std::str::from_utf8(key) {
            Ok(_) => append_bytes(&mut self.key_data, key),
            Err(_) => append_bytes(&mut self.key_data, String::from_utf8_lossy(key).as_bytes()),
        }
        self.key_offsets.push(self.key_data.len() as i32);
        append_bytes(&mut self.value_data, value.unwrap_or_default());
        self.value_offsets.push(self.value_data.len() as i32);
        if value.is_some() {
            self.value_valid.valid();
        } else {
            self.value_valid.null();
        }
    }

    fn end_record(&mut self, any: bool) {
        self.list_offsets.push((self.key_offsets.len() - 1) as i32);
        if any {
            self.list_valid.valid();
        } else {
            self.list_valid.null();
        }
    }

    fn append_parsed_by_librdkafka(&mut self, m: *mut rd::rd_kafka_message_t) {
        let mut hdrs: *mut rd::rd_kafka_headers_t = ptr::null_mut();
        let found = unsafe { rd::rd_kafka_message_headers(m, &mut hdrs) } as i32 == 0;
        let count = if found {
            unsafe { rd::rd_kafka_header_cnt(hdrs) }
        } else {
            0
        };
        for idx in 0..count {
            let mut name: *const c_char = ptr::null();
            let mut value: *const c_void = ptr::null();
            let mut size: usize = 0;
            unsafe { rd::rd_kafka_header_get_all(hdrs, idx, &mut name, &mut value, &mut size) };
            let key = unsafe { CStr::from_ptr(name) }.to_bytes();
            let value = (!value.is_null())
                .then(|| unsafe { std::slice::from_raw_parts(value as *const u8, size) });
            self.push_header(key, value);
        }
        self.end_record(count > 0);
    }

    /// How many records' headers were read from the record's bytes.
    pub fn raw_read(&self) -> u64 {
        self.raw_read
    }

    /// The `headers` column, of `list_type` (the schema's: a list of key-value structs).
    pub fn finish(mut self, list_type: &DataType) -> ArrayRef {
        let DataType::List(item) = list_type else {
            unreachable!("the headers column is a list")
        };
        let DataType::Struct(fields) = item.data_type() else {
            unreachable!("a header is a struct")
        };
        let keys = StringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(self.key_offsets)),
            Buffer::from_vec(self.key_data),
            None,
        )
        .expect("header keys are UTF-8");
        let values = BinaryArray::new(
            OffsetBuffer::new(ScalarBuffer::from(self.value_offsets)),
            Buffer::from_vec(self.value_data),
            self.value_valid.finish(),
        );
        let entries =
            StructArray::new(fields.clone(), vec![Arc::new(keys), Arc::new(values)], None);
        Arc::new(ListArray::new(
            item.clone(),
            OffsetBuffer::new(ScalarBuffer::from(self.list_offsets)),
            Arc::new(entries),
            self.list_valid.finish(),
        ))
    }
}
