# Two commands do everything on a fresh machine with Python 3.11, Java 17, Maven and Rust (cargo):
#   make demo   - the main job: a kafka-unified streaming query on an embedded broker (SYSTEM=files|kafka|...)
#   make test   - every test (unit and integration, brokers started by fixtures; the Kafka ones on both readers)
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml testing/pyproject.toml | cksum | cut -d' ' -f1)
SYSTEM ?= kafka
PYTEST_ARGS ?=

.PHONY: demo test venv native lint bench clean mutants

$(STAMP): pyproject.toml testing/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[pravega,kafka,kinesis,test]' --config-settings editable_mode=compat
	# the brokers and services the tests start: the second distribution of this repository (testing/)
	$(PY) -m pip install --quiet -e './testing[docker]' --config-settings editable_mode=compat
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

venv: $(STAMP)

# the compiled Kafka reader (kafka.reader=native), rebuilt when its sources change
NATIVE_SRC := $(sort $(wildcard native/kafka_reader/src/*.rs)) native/kafka_reader/Cargo.toml \
	native/kafka_reader/Cargo.lock native/kafka_reader/pyproject.toml native/kafka_reader/build.rs \
	native/install_native.sh
NATIVE_STAMP := $(VENV)/.native-$(shell cat $(NATIVE_SRC) | cksum | cut -d' ' -f1)
$(NATIVE_STAMP): $(STAMP) $(NATIVE_SRC)
	bash native/install_native.sh $(PY)
	@rm -f $(VENV)/.native-*
	@touch $@

native: $(NATIVE_STAMP)

# kinesalite (npm) is the second Kinesis implementation for the tests; skipped where npm is absent
KINESALITE := .kinesalite/node_modules/.bin/kinesalite
$(KINESALITE):
	@if command -v npm >/dev/null 2>&1; then \
		npm install --silent --no-audit --no-fund --prefix .kinesalite kinesalite@3.3.3; \
	else echo "npm not found: Kinesis tests run on moto only"; fi

demo: $(STAMP) $(NATIVE_STAMP)
	$(PY) -m demos --system $(SYSTEM)

# every test: four lanes side by side (the Kafka integration tests once per Kafka reader and writer,
# native and python; the unit tests with Pravega's; the rest), each a pytest process of its own
# (tools/run_tests.py; --serial runs the lanes in turn)
test: $(STAMP) $(KINESALITE) $(NATIVE_STAMP)
	$(PY) tools/run_tests.py $(PYTEST_ARGS)

LINTED = connector_base connectors testing demos tools mutants benchmarks unit_tests integration_tests
lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/mypy

# planted bugs, one at a time, each against the tests that guard it (not part of make test; long)
#   MUTANTS_ARGS='--name NAME' runs one, '--list' lists them (python -m mutants.run --help)
MUTANTS_ARGS ?=
mutants: $(STAMP) $(KINESALITE) $(NATIVE_STAMP)
	$(PY) -m mutants.run $(MUTANTS_ARGS)

bench: $(STAMP) $(NATIVE_STAMP)
	$(PY) -m benchmarks.run_all

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache *.egg-info testing/*.egg-info
