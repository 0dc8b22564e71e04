//! A librdkafka configuration from string pairs, shared by the consumer and the producer.

use std::ffi::c_char;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rdkafka_sys::bindings as rd;

use crate::{cstr, cstring};

/// A new `rd_kafka_conf_t` with every `(name, value)` set; the caller owns it. A rejected setting
/// raises `ValueError` naming it, with its value redacted from librdkafka's message (it may be a
/// secret).
pub(crate) fn new_conf(config: &[(String, String)]) -> PyResult<*mut rd::rd_kafka_conf_t> {
    let mut errstr = vec![0 as c_char; 512];
    unsafe {
        let conf = rd::rd_kafka_conf_new();
        for (key, value) in config {
            let k = cstring(key, "a setting name");
            let v = cstring(value, "a setting value");
            let (k, v) = match (k, v) {
                (Ok(k), Ok(v)) => (k, v),
                (Err(e), _) | (_, Err(e)) => {
                    rd::rd_kafka_conf_destroy(conf);
                    return Err(e);
                }
            };
            let res = rd::rd_kafka_conf_set(
                conf,
                k.as_ptr(),
                v.as_ptr(),
                errstr.as_mut_ptr(),
                errstr.len(),
            );
            if res != rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK {
                rd::rd_kafka_conf_destroy(conf);
                let mut why = cstr(errstr.as_ptr());
                if !value.is_empty() {
                    why = why.replace(value.as_str(), "<redacted>");
                }
                return Err(PyValueError::new_err(format!(
                    "librdkafka setting {key}: {why}"
                )));
            }
        }
        Ok(conf)
    }
}

/// The value of setting `name` in `conf` (librdkafka's default where unset); `None` if unknown.
pub(crate) fn get(conf: *mut rd::rd_kafka_conf_t, name: &str) -> Option<String> {
    let name = cstring(name, "a setting name").ok()?;
    let mut buf = vec![0 as c_char; 64];
    let mut size = buf.len();
    let res = unsafe { rd::rd_kafka_conf_get(conf, name.as_ptr(), buf.as_mut_ptr(), &mut size) };
    (res == rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK).then(|| cstr(buf.as_ptr()))
}
