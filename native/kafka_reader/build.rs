//! Links librdkafka's calls to `LZ4F_getFrameInfo` and `ZSTD_getFrameContentSize` to the size hints
//! of `src/decompress_hints.rs`, and to `rd_gz_decompress` to the one-pass inflate of
//! `src/gzip_inflate.rs` (GNU ld / lld `--wrap`; Linux only, where the wheels are built).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        for symbol in [
            "LZ4F_getFrameInfo",
            "ZSTD_getFrameContentSize",
            "rd_gz_decompress",
        ] {
            println!("cargo:rustc-link-arg=-Wl,--wrap={symbol}");
        }
    }
}
