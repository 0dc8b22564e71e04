//! Column-building helpers the compiled decoders and the reader's headers share (`avro_direct.rs`,
//! `protobuf_decode.rs`, `record_headers.rs`): appending short byte strings without a `memcpy`
//! call, validity kept lazily, and the payload column's values whatever its offset width.

use arrow_array::cast::AsArray;
use arrow_array::iterator::ArrayIter;
use arrow_array::{Array, BinaryArray, LargeBinaryArray};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

/// `out.extend_from_slice(value)`, with the short values most strings are (names, codes, tags)
/// copied by two overlapping word moves instead of a call to `memcpy` (which profiles showed at
/// ~10% of the decoding time: one call per string).
#[inline(always)]
pub(crate) fn append_bytes(out: &mut Vec<u8>, value: &[u8]) {
    let n = value.len();
    if n > 16 {
        out.extend_from_slice(value);
        return;
    }
    out.reserve(n);
    let len = out.len();
    // SAFETY: `reserve` left room for `n` bytes after `len`; every read is inside `value` and
    // every write inside `out[len..len + n]` (the two moves overlap when n < 16 or n < 8).
    unsafe {
        let src = value.as_ptr();
        let dst = out.as_mut_ptr().add(len);
        if n >= 8 {
            let head = std::ptr::read_unaligned(src as *const u64);
            let tail = std::ptr::read_unaligned(src.add(n - 8) as *const u64);
            std::ptr::write_unaligned(dst as *mut u64, head);
            std::ptr::write_unaligned(dst.add(n - 8) as *mut u64, tail);
        } else if n >= 4 {
            let head = std::ptr::read_unaligned(src as *const u32);
            let tail = std::ptr::read_unaligned(src.add(n - 4) as *const u32);
            std::ptr::write_unaligned(dst as *mut u32, head);
            std::ptr::write_unaligned(dst.add(n - 4) as *mut u32, tail);
        } else {
            for i in 0..n {
                *dst.add(i) = *src.add(i);
            }
        }
        out.set_len(len + n);
    }
}

/// Validity of a column: nothing kept until the first null (most columns have none), then a byte
/// per value; packed into Arrow's bitmap when finished. (arrow-buffer's `NullBufferBuilder` does
/// the same with a bitmap, but its append was not inlined here and showed in profiles.)
#[derive(Clone, Default)]
pub(crate) struct Validity {
    len: usize,
    bits: Option<Vec<bool>>,
}

impl Validity {
    #[inline(always)]
    pub(crate) fn valid(&mut self) {
        match &mut self.bits {
            None => self.len += 1,
            Some(bits) => bits.push(true),
        }
    }

    #[inline(always)]
    pub(crate) fn null(&mut self) {
        match &mut self.bits {
            None => {
                let mut bits = Vec::with_capacity(self.len.max(64) * 2);
                bits.resize(self.len, true);
                bits.push(false);
                self.bits = Some(bits);
            }
            Some(bits) => bits.push(false),
        }
    }

    /// Keeps the first `len` values (those appended since are dropped).
    pub(crate) fn truncate(&mut self, len: usize) {
        match &mut self.bits {
            None => self.len = self.len.min(len),
            Some(bits) => bits.truncate(len),
        }
    }

    pub(crate) fn finish(&mut self) -> Option<NullBuffer> {
        self.len = 0;
        self.bits.take().map(NullBuffer::from)
    }
}

/// The values of a payload column, Binary or LargeBinary alike (`None` for a null): the one place
/// the compiled decoders and the header scan take their input column apart.
pub(crate) enum BinaryValues<'a> {
    Binary(ArrayIter<&'a BinaryArray>),
    Large(ArrayIter<&'a LargeBinaryArray>),
}

impl<'a> BinaryValues<'a> {
    pub(crate) fn of(column: &'a dyn Array) -> Result<Self, String> {
        match column.data_type() {
            DataType::Binary => Ok(Self::Binary(column.as_binary::<i32>().iter())),
            DataType::LargeBinary => Ok(Self::Large(column.as_binary::<i64>().iter())),
            other => Err(format!("expected a binary column, got {other}")),
        }
    }

    /// The values with a null read as empty (for columns already checked to have none).
    pub(crate) fn or_empty(self) -> impl Iterator<Item = &'a [u8]> {
        self.map(|v| v.unwrap_or(&[]))
    }
}

impl<'a> Iterator for BinaryValues<'a> {
    type Item = Option<&'a [u8]>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::Binary(values) => values.next(),
            Self::Large(values) => values.next(),
        }
    }
}
