#!/usr/bin/env bash
# Builds the kafka-native wheel (native/kafka_reader, an abi3 wheel: one build for every CPython >= 3.11)
# and installs it into the given Python. Rust comes from the machine (cargo on PATH or in ~/.cargo/bin);
# where it is absent, rustup installs a minimal stable toolchain first. maturin comes from PyPI as the
# crate's build backend. native/kafka_reader/target/ caches the compiled crates between runs (never
# required: a cold build takes a few minutes).
set -euo pipefail
PY=${1:?usage: install_native.sh PYTHON}
HERE=$(cd "$(dirname "$0")" && pwd)
CRATE=$HERE/kafka_reader
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: installing a minimal Rust toolchain with rustup" >&2
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --no-modify-path
fi
WHEELS=$CRATE/target/wheels
rm -f "$WHEELS"/sparkflow_kafka_native-*.whl
start=$(date +%s)
"$PY" -m pip wheel --quiet --no-deps --wheel-dir "$WHEELS" "$CRATE"
echo "built the kafka-native wheel in $(( $(date +%s) - start )) s: $(ls "$WHEELS")"
"$PY" -m pip install --quiet --no-deps --force-reinstall "$WHEELS"/sparkflow_kafka_native-*.whl
