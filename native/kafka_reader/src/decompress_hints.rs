//! Output-size hints for librdkafka's LZ4 and zstd decompression of fetched record batches.
//!
//! Why: librdkafka decompresses a whole record batch into one buffer sized from the compressed
//! frame's declared content size. Kafka's producers do not declare it: the Java producer streams its
//! LZ4 and zstd frames, and librdkafka's own LZ4 frames leave the field empty too. librdkafka then
//! guesses:
//! - LZ4 (`rd_kafka_lz4_decompress`): 4x the compressed size, grown by 1.75x with `realloc`. Below a
//!   block's size (64 KiB) of room, LZ4's frame decoder decodes each block into its own scratch
//!   buffer and copies it out. A batch of text-like records compresses ~20x, so nearly every block
//!   took that detour: measured on the read benchmark's compressible shape, these copies were 17% of
//!   librdkafka's fetch thread against 2.4% for LZ4's decoding itself.
//! - zstd (`rd_kafka_zstd_decompress`): 2x, and on a miss it frees the buffer and decompresses the
//!   whole batch again into one three times larger, so a batch compressed 20x is decoded about twice.
//!   (An open librdkafka pull request, #5596, moves this to streaming decompression.)
//!
//! Both frame formats let a reader bound the content size from the block headers alone, without
//! decoding: every compressed block holds at most the frame's block size, a stored block exactly its
//! own length. zstd's library computes that bound (`ZSTD_decompressBound`); LZ4's frame library has
//! no such call, so `lz4_content_bound` walks the block headers (the LZ4 frame format, v1.6.x,
//! sections "Frame descriptor" and "Data Blocks").
//!
//! How: the module is linked with `--wrap` for `LZ4F_getFrameInfo` and `ZSTD_getFrameContentSize`
//! (`build.rs`, Linux only), so librdkafka's calls to them reach the `__wrap_` functions here, which
//! call the real ones and, where the frame declares no size, return the bound as its size. Nothing
//! else changes: librdkafka still decodes, checks and grows its buffer as before if a hint were ever
//! short. A zstd bound above the smallest `receive.message.max.bytes` of this process's consumers is
//! not given (librdkafka would refuse the batch instead of trying smaller guesses).
//! `decompress_hint_counts()` reports how many frames were hinted, for the tests and the benchmarks.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;

static LZ4_HINTED: AtomicU64 = AtomicU64::new(0);
static ZSTD_HINTED: AtomicU64 = AtomicU64::new(0);
static SMALLEST_RECEIVE_MAX: AtomicU64 = AtomicU64::new(u64::MAX);

/// The smallest `receive.message.max.bytes` of this process's consumers bounds the zstd hints.
pub(crate) fn note_receive_max(bytes: u64) {
    SMALLEST_RECEIVE_MAX.fetch_min(bytes, Ordering::Relaxed);
}

/// (LZ4 frames, zstd frames) librdkafka was given a content-size hint for in this process.
#[pyfunction]
fn decompress_hint_counts() -> (u64, u64) {
    (
        LZ4_HINTED.load(Ordering::Relaxed),
        ZSTD_HINTED.load(Ordering::Relaxed),
    )
}

/// `lz4_content_bound` of an LZ4 frame (for the tests), `None` where no hint would be given.
#[pyfunction]
fn lz4_frame_bound(frame: &[u8]) -> Option<u64> {
    lz4_content_bound(frame)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decompress_hint_counts, m)?)?;
    m.add_function(wrap_pyfunction!(lz4_frame_bound, m)?)?;
    Ok(())
}

const LZ4_MAGIC: u32 = 0x184D_2204;

/// The most an LZ4 frame's blocks can decode to, from its header and block headers; `None` if the
/// frame is not a plain LZ4 frame that ends within `frame` (the caller then keeps librdkafka's guess).
pub(crate) fn lz4_content_bound(frame: &[u8]) -> Option<u64> {
    let u32_at = |at: usize| -> Option<u32> {
        frame
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if u32_at(0)? != LZ4_MAGIC {
        return None;
    }
    let flg = *frame.get(4)?;
    let bd = *frame.get(5)?;
    if flg >> 6 != 1 {
        return None; // only version 01 is defined
    }
    let block_checksum = flg & 0x10 != 0;
    let declared_size = flg & 0x08 != 0;
    let dict_id = flg & 0x01 != 0;
    let block_max: u64 = match (bd >> 4) & 0x7 {
        4 => 64 << 10,
        5 => 256 << 10,
        6 => 1 << 20,
        7 => 4 << 20,
        _ => return None,
    };
    // FLG, BD, the optional content size and dictionary id, then the header checksum byte
    let mut at = 4 + 2 + if declared_size { 8 } else { 0 } + if dict_id { 4 } else { 0 } + 1;
    let mut bound: u64 = 0;
    loop {
        let word = u32_at(at)?;
        at += 4;
        if word == 0 {
            return Some(bound); // the end mark (a content checksum may follow)
        }
        let stored = word & 0x8000_0000 != 0;
        let size = u64::from(word & 0x7FFF_FFFF);
        if size > block_max {
            return None;
        }
        bound += if stored { size } else { block_max };
        at = at.checked_add(size as usize + if block_checksum { 4 } else { 0 })?;
        if at > frame.len() {
            return None;
        }
    }
}

#[cfg(target_os = "linux")]
mod wraps {
    use super::*;

    /// LZ4's `LZ4F_frameInfo_t` (lz4frame.h, lz4 1.9): four enums, then the content size.
    #[repr(C)]
    pub struct Lz4fFrameInfo {
        block_size_id: i32,
        block_mode: i32,
        content_checksum_flag: i32,
        frame_type: i32,
        content_size: u64,
        dict_id: u32,
        block_checksum_flag: i32,
    }

    const ZSTD_CONTENTSIZE_UNKNOWN: u64 = u64::MAX;
    const ZSTD_CONTENTSIZE_ERROR: u64 = u64::MAX - 1;

    extern "C" {
        fn __real_LZ4F_getFrameInfo(
            dctx: *mut c_void,
            info: *mut Lz4fFrameInfo,
            src: *const c_void,
            src_size: *mut usize,
        ) -> usize;
        fn __real_ZSTD_getFrameContentSize(src: *const c_void, src_size: usize) -> u64;
        fn ZSTD_decompressBound(src: *const c_void, src_size: usize) -> u64;
    }

    /// librdkafka passes the whole compressed batch: `*src_size` is its length on the way in.
    ///
    /// # Safety
    /// The contract of `LZ4F_getFrameInfo`: `src` holds `*src_size` readable bytes.
    #[no_mangle]
    pub unsafe extern "C" fn __wrap_LZ4F_getFrameInfo(
        dctx: *mut c_void,
        info: *mut Lz4fFrameInfo,
        src: *const c_void,
        src_size: *mut usize,
    ) -> usize {
        let available = if src_size.is_null() { 0 } else { *src_size };
        let code = __real_LZ4F_getFrameInfo(dctx, info, src, src_size);
        // LZ4F's error codes are the top values of size_t (LZ4F_isError)
        let failed = code > usize::MAX - 64;
        if !failed
            && !info.is_null()
            && (*info).content_size == 0
            && !src.is_null()
            && available > 0
        {
            let frame = std::slice::from_raw_parts(src as *const u8, available);
            if let Some(bound) = lz4_content_bound(frame).filter(|b| *b > 0) {
                (*info).content_size = bound;
                LZ4_HINTED.fetch_add(1, Ordering::Relaxed);
            }
        }
        code
    }

    /// # Safety
    /// The contract of `ZSTD_getFrameContentSize`: `src` holds `src_size` readable bytes.
    #[no_mangle]
    pub unsafe extern "C" fn __wrap_ZSTD_getFrameContentSize(
        src: *const c_void,
        src_size: usize,
    ) -> u64 {
        let size = __real_ZSTD_getFrameContentSize(src, src_size);
        if size != ZSTD_CONTENTSIZE_UNKNOWN {
            return size;
        }
        let bound = ZSTD_decompressBound(src, src_size);
        if bound == ZSTD_CONTENTSIZE_ERROR
            || bound == 0
            || bound > SMALLEST_RECEIVE_MAX.load(Ordering::Relaxed)
        {
            return size;
        }
        ZSTD_HINTED.fetch_add(1, Ordering::Relaxed);
        bound
    }
}
