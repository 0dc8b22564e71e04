//! One inflate per gzip-compressed record batch, in place of librdkafka's two.
//!
//! Why: librdkafka's `rd_gz_decompress` (rdgz.c) inflates a batch once into a 512-byte scratch buffer
//! only to learn its size, allocates that, and inflates it again. The first pass is the slower one
//! (zlib copies its window out 512 bytes at a time). Read in-process, 600,000 text-like records of
//! 200 B gzip-compressed by librdkafka's producer took 0.57 CPU-s against 0.34 for the same records
//! lz4-compressed. (A librdkafka pull request, #5584, proposed a one-pass version and was closed.)
//!
//! How: `build.rs` links librdkafka's calls to `rd_gz_decompress` to `__wrap_rd_gz_decompress` here
//! (the linker's `--wrap`, Linux only), which inflates once with the same zlib (`libz-sys`, the
//! crate librdkafka's build links) into a buffer sized by the gzip trailer's ISIZE field (the
//! member's uncompressed length modulo 2^32) where it is plausible, grown by doubling where it falls
//! short (several members, a corrupt trailer). The contract is the original's: a `malloc`ed buffer
//! that librdkafka frees, NUL-terminated one byte past `*decompressed_lenp`, `NULL` on zlib's stream,
//! data, dictionary and memory errors, and what was inflated when the input ends before the stream
//! does. A caller that passes a known size keeps the original function.
//! `gzip_one_pass_count()` reports how many batches went through here, for the tests.

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;

static ONE_PASS: AtomicU64 = AtomicU64::new(0);

/// gzip batches inflated once in this process.
#[pyfunction]
fn gzip_one_pass_count() -> u64 {
    ONE_PASS.load(Ordering::Relaxed)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gzip_one_pass_count, m)?)?;
    Ok(())
}

#[cfg(target_os = "linux")]
mod wraps {
    use std::ffi::{c_int, c_uint, c_void};
    use std::mem::{size_of, MaybeUninit};
    use std::ptr;
    use std::sync::atomic::Ordering;

    use libz_sys as z;

    use super::ONE_PASS;

    extern "C" {
        fn malloc(size: usize) -> *mut c_void;
        fn realloc(p: *mut c_void, size: usize) -> *mut c_void;
        fn free(p: *mut c_void);
    }

    /// Deflate's best ratio is about 1032:1; a trailer claiming more is not believed.
    const MAX_RATIO: usize = 1032;
    const MIN_CAPACITY: usize = 64 << 10;

    /// The first buffer size: the gzip trailer's ISIZE where it is plausible, else 4x the input.
    fn first_capacity(input: &[u8]) -> usize {
        let n = input.len();
        if n >= 18 && input[0] == 0x1f && input[1] == 0x8b {
            let t = &input[n - 4..];
            let isize = u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize;
            if isize > 0 && isize <= n.saturating_mul(MAX_RATIO) {
                // a little room past the data, so that zlib reads the trailer before the output fills
                return isize + 16;
            }
        }
        n.saturating_mul(4).max(MIN_CAPACITY)
    }

    /// Inflates `input` (gzip or zlib, detected as librdkafka does) into a `malloc`ed buffer with one
    /// spare byte; `None` on an error.
    unsafe fn inflate_once(input: &[u8]) -> Option<(*mut u8, usize)> {
        let mut stream = MaybeUninit::<z::z_stream>::zeroed();
        let s = stream.as_mut_ptr();
        // 15 + 32: a 32 KiB window, gzip or zlib header detected (rd_gz_decompress's setting)
        if z::inflateInit2_(
            s,
            15 + 32,
            z::zlibVersion(),
            size_of::<z::z_stream>() as c_int,
        ) != z::Z_OK
        {
            return None;
        }
        (*s).next_in = input.as_ptr() as *mut u8;
        (*s).avail_in = input.len() as c_uint;
        let mut capacity = first_capacity(input);
        let mut buf = malloc(capacity + 1) as *mut u8;
        let mut used = 0usize;
        let ok = loop {
            if buf.is_null() {
                break false;
            }
            let room = (capacity - used).min(c_uint::MAX as usize);
            (*s).next_out = buf.add(used);
            (*s).avail_out = room as c_uint;
            let code = z::inflate(s, z::Z_NO_FLUSH);
            used += room - (*s).avail_out as usize;
            match code {
                z::Z_STREAM_END => break true,
                z::Z_OK | z::Z_BUF_ERROR if (*s).avail_out == 0 => {
                    capacity = capacity.saturating_mul(2);
                    let grown = realloc(buf as *mut c_void, capacity + 1) as *mut u8;
                    if grown.is_null() {
                        free(buf as *mut c_void);
                        buf = ptr::null_mut();
                    } else {
                        buf = grown;
                    }
                }
                // the input ended before the stream did: what was inflated, as rd_gz_decompress returns
                z::Z_OK | z::Z_BUF_ERROR => break true,
                _ => break false,
            }
        };
        z::inflateEnd(s);
        if !ok {
            if !buf.is_null() {
                free(buf as *mut c_void);
            }
            return None;
        }
        if capacity - used > MIN_CAPACITY {
            // give back what the guess over-allocated (shrinking stays in place in glibc)
            let shrunk = realloc(buf as *mut c_void, used + 1) as *mut u8;
            if !shrunk.is_null() {
                buf = shrunk;
            }
        }
        *buf.add(used) = 0;
        Some((buf, used))
    }

    extern "C" {
        fn __real_rd_gz_decompress(
            compressed: *const c_void,
            compressed_len: c_int,
            decompressed_lenp: *mut u64,
        ) -> *mut c_void;
    }

    /// # Safety
    /// The contract of librdkafka's `rd_gz_decompress`: `compressed` holds `compressed_len` bytes.
    #[no_mangle]
    pub unsafe extern "C" fn __wrap_rd_gz_decompress(
        compressed: *const c_void,
        compressed_len: c_int,
        decompressed_lenp: *mut u64,
    ) -> *mut c_void {
        if compressed.is_null()
            || compressed_len < 0
            || decompressed_lenp.is_null()
            || *decompressed_lenp != 0
        {
            return __real_rd_gz_decompress(compressed, compressed_len, decompressed_lenp);
        }
        let input = std::slice::from_raw_parts(compressed as *const u8, compressed_len as usize);
        match inflate_once(input) {
            Some((buf, len)) => {
                *decompressed_lenp = len as u64;
                ONE_PASS.fetch_add(1, Ordering::Relaxed);
                buf as *mut c_void
            }
            None => ptr::null_mut(),
        }
    }
}
