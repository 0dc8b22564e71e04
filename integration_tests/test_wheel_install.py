"""The wheel as users install it: fresh venvs with no extra, each extra alone, and all extras.

Spark imports every top-level ``pyspark_*`` module to register Python data sources, and one that
fails to import stops them all, so in each venv every format must either resolve or fail at
``load()`` naming the extra to install, and ``files-unified`` must read. The wheel is built once
from a copy of the tree. The core dependencies (pyspark, pyarrow, pandas, numpy and what they need)
are not reinstalled into each venv: a directory of links to exactly those distributions of the
project venv (found from pyproject's ``dependencies``, recursively) is put on each venv's path with
a ``.pth`` file, and so is one such directory per extra (its requirements from pyproject,
recursively, minus the core). ``pip install --no-index wheel[extras]`` then has to find every
requirement of the wheel's metadata already present: the venv holds exactly what a user with
those extras would have, without copying pyspark five times.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from collections.abc import Iterator
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

pytestmark = [pytest.mark.spark, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ["pyproject.toml", "README.md", "connector_base", "connectors"]
EXTRAS = ("kafka", "kinesis", "pravega")
ENVS = {"none": (), "kafka": ("kafka",), "kinesis": ("kinesis",), "pravega": ("pravega",), "all": EXTRAS}
FORMAT_EXTRA = {"kafka-unified": "kafka", "kinesis-unified": "kinesis", "pravega": "pravega"}
MODULES = sorted(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["py-modules"])
"""Every top-level module the wheel ships: the pyspark_* registrations and sparkflow_daemon."""
NOT_SHIPPED_MODULES = ["sparkflow_testing", "demos", "connectors.testing", "connectors.demo"]
"""The test infrastructure and the demos: none of them is importable from an installed wheel."""
JSONL_ROWS = 3
KAFKA_ROWS = 5
SEQUENCE_ROWS = 2 * 1000
STEP_TIMEOUT_S = 240


def _run(cmd: list[str], cwd: Path, timeout: float = STEP_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")
    }
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built once from a copy of the tree (the checkout gets no build/)."""
    src = tmp_path_factory.mktemp("wheel-src")
    for name in SHIPPED:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    for module in MODULES:
        shutil.copy2(ROOT / f"{module}.py", src / f"{module}.py")
    return _build_wheel(src, tmp_path_factory.mktemp("wheel"), "sparkflow_connectors")


def _build_wheel(src: Path, out: Path, name: str) -> Path:
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out)]
    proc = _run([*build, str(src)], cwd=src)
    assert proc.returncode == 0, proc.stderr
    (found,) = out.glob(f"{name}-*.whl")
    return found


def _link_closure(site: Path, requirements: list[str], skip: set[str]) -> set[str]:
    """Link into ``site`` the distributions of this venv that ``requirements`` need, recursively."""
    # a requirement's extras (confluent-kafka[schemaregistry]) bring the dependencies marked with them
    todo = [(req.name, req.extras) for req in map(Requirement, requirements)]
    seen, expanded = set(skip), set()
    while todo:
        wanted, extras = todo.pop()
        dist = distribution(wanted)
        name = dist.metadata["Name"].lower().replace("_", "-")
        if (name, frozenset(extras)) in expanded or (name in seen and not extras):
            continue
        seen.add(name)
        expanded.add((name, frozenset(extras)))
        for raw in dist.requires or []:
            req = Requirement(raw)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
                todo.append((req.name, req.extras))
        root = Path(str(dist.locate_file("")))
        for top in {f.parts[0] for f in dist.files or []}:
            target = root / top
            if top in ("..", "__pycache__") or top.endswith(".pth") or not target.exists():
                continue
            if not (site / top).exists():
                (site / top).symlink_to(target)
    return seen - skip


@pytest.fixture(scope="module")
def layers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Per layer (``core`` and each extra) a directory of links to exactly its distributions."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = tmp_path_factory.mktemp("core")
    core_dists = _link_closure(core, project["dependencies"], set())
    assert not {"grpcio", "protobuf", "confluent-kafka", "boto3", "botocore", "pravega"} & core_dists
    found = {"core": core}
    for extra in EXTRAS:
        found[extra] = tmp_path_factory.mktemp(extra)
        _link_closure(found[extra], project["optional-dependencies"][extra], core_dists)
    return found


@pytest.fixture(scope="module")
def kafka_topic() -> Iterator[tuple[str, str]]:
    """A broker with a topic of ``KAFKA_ROWS`` records, for the venvs that have the kafka extra."""
    from sparkflow_testing.kafka.stand_ins import start_noida_db

    broker = start_noida_db()
    try:
        topic = broker.create_topic(partitions=1)
        producer = broker.producer()
        for i in range(KAFKA_ROWS):
            producer.produce(topic, value=f"v{i}".encode())
        assert producer.flush(30) == 0
        yield broker.bootstrap, topic
    finally:
        broker.stop()


def _venv(base: Path, layers: dict[str, Path], wheel: Path, extras: tuple[str, ...]) -> Path:
    """A fresh venv with the core layer and the layers of ``extras`` on its path, then the wheel.

    ``pip install --no-index`` must find every requirement of ``wheel[extras]`` already there, so a
    wrong extra in the wheel's metadata fails here instead of being downloaded.
    """
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(base)], check=True)  # type: ignore[attr-defined]
    python = base / "bin" / "python"
    site = next((base / "lib").glob("python3*/site-packages"))
    (site / "layers.pth").write_text("".join(f"{layers[n]}\n" for n in ("core", *extras)))
    spec = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index"]
    proc = _run([*install, "--disable-pip-version-check", spec], cwd=base)
    assert proc.returncode == 0, proc.stderr
    return python


IMPORT_ALL = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as e:
        failed.append(f"{name}: {e!r}")
import connectors
print(connectors.__file__)
print("\\n".join(failed))
"""


@pytest.mark.parametrize("env_name", list(ENVS))
def test_installed_wheel_registers_every_format(
    env_name: str,
    wheel: Path,
    layers: dict[str, Path],
    kafka_topic: tuple[str, str],
    tmp_path: Path,
) -> None:
    extras = ENVS[env_name]
    started = time.monotonic()
    python = _venv(tmp_path / "venv", layers, wheel, extras)
    work = tmp_path / "work"
    work.mkdir()
    # every shipped pyspark_* module imports, whatever the extras: Spark imports them all
    imported = _run([str(python), "-c", IMPORT_ALL, *MODULES], cwd=work)
    location, *failures = imported.stdout.splitlines()
    assert imported.returncode == 0 and not any(failures), f"[{env_name}]: {imported.stdout}{imported.stderr}"
    assert location.startswith(str(tmp_path / "venv")), f"imported the checkout, not the wheel: {location}"

    data = work / "data"
    data.mkdir()
    rows = (json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in range(JSONL_ROWS))
    (data / "a.jsonl").write_text("".join(rows))
    script = work / "wheel_check.py"
    shutil.copy2(Path(__file__).with_name("wheel_check.py"), script)
    bootstrap, topic = kafka_topic if "kafka" in extras else ("", "")
    prepared = time.monotonic()
    proc = _run([str(python), str(script), str(data), bootstrap, topic], cwd=work)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    result = json.loads(lines[0].removeprefix("RESULT "))

    assert result["files-unified"] == {"ok": JSONL_ROWS}, result
    assert result["sequence-unified"] == {"ok": SEQUENCE_ROWS}, result
    for fmt, extra in FORMAT_EXTRA.items():
        outcome = result[fmt]
        hint = f"pip install 'sparkflow-connectors[{extra}]'"
        if extra not in extras:
            assert hint in outcome.get("error", ""), f"{fmt} in venv [{env_name}]: {outcome}"
        elif fmt == "kafka-unified":
            assert outcome == {"ok": KAFKA_ROWS}, f"{fmt} in venv [{env_name}]: {outcome}"
        else:  # resolved: no options given, so the connector's own option check answers
            error = outcome.get("error", "")
            assert "Invalid value" in error, f"{fmt} in venv [{env_name}]: {error}"
            assert "DATA_SOURCE_NOT_FOUND" not in error and hint not in error, error

    # the test infrastructure is not in the wheel: no launcher, no emulator, whatever the extras
    emulator = _run([str(python), "-m", "sparkflow_testing.pravega.emulator", "--help"], cwd=work)
    assert emulator.returncode != 0, emulator.stdout
    assert "No module named 'sparkflow_testing'" in emulator.stderr, emulator.stderr
    probe = "import importlib.util as u; print([n for n in NAMES if u.find_spec(n) is not None])"
    found = _run([str(python), "-c", probe.replace("NAMES", repr(NOT_SHIPPED_MODULES))], cwd=work)
    assert found.returncode == 0 and found.stdout.strip() == "[]", found.stdout + found.stderr
    spark_s = time.monotonic() - prepared
    print(f"venv [{env_name}]: {prepared - started:.1f}s to install, {spark_s:.1f}s in Spark")


def test_the_wheel_ships_no_broker_launcher_emulator_or_demo(wheel: Path) -> None:
    """The connectors' wheel holds the product only; the test infrastructure is ``sparkflow-testing``."""
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"connector_base", "connectors", *(f"{m}.py" for m in MODULES)}, tops
    infrastructure = [
        n
        for n in names
        if any(part in n for part in ("emulator", "apache_kafka", "kinesalite", "noida", "tansu", "demo"))
        or (n.startswith("connectors/") and "/testing/" in n)
    ]
    assert infrastructure == [], infrastructure
    assert "connector_base/testing/source_test_suite.py" in names  # the connector test kit stays
    assert "connectors/pravega/_proto/controller_pb2.py" in names


def test_the_testing_distribution_ships_the_launchers(tmp_path: Path) -> None:
    """``sparkflow-testing`` builds from ``testing/`` with every launcher, and needs the connectors."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "testing", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    archive = zipfile.ZipFile(_build_wheel(src, tmp_path, "sparkflow_testing"))
    names = set(archive.namelist())
    for module in (
        "kafka/apache_kafka.py",
        "kafka/stand_ins.py",
        "pravega/standalone.py",
        "pravega/emulator/server.py",
        "kinesis/endpoint.py",
        "registry/__init__.py",
        "spark/cluster.py",
        "network/fault_proxy.py",
        "services/redis_server.py",
        "maven.py",
        "processes.py",
    ):
        assert f"sparkflow_testing/{module}" in names, module
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    requires = [line for line in archive.read(metadata).decode().splitlines() if "Requires-Dist" in line]
    assert any("sparkflow-connectors[" in line for line in requires), requires


def test_every_registration_module_is_in_py_modules() -> None:
    """A ``pyspark_*.py`` left out of ``py-modules`` would be missing from the wheel, silently."""
    assert {p.stem for p in ROOT.glob("pyspark_*.py")} <= set(MODULES)


# --- the wheel on every Python pyspark supports ----------------------------------------------------
PYTHONS = ("3.11", "3.12", "3.13")
MATRIX_EXTRAS = "kafka-native,kinesis,pravega"
"""``kafka-native`` pulls in ``kafka``: one abi3 build of the compiled reader must serve every Python."""
NATIVE_WHEELS = ROOT / "native" / "kafka_reader" / "target" / "wheels"
"""Where ``native/install_native.sh`` (``make native``, which ``make test`` runs first) leaves the wheel."""
UNIT_TEST_TOOLS = ("pytest>=8,<10", "pytest-timeout>=2.3,<3", "hypothesis>=6.100,<7", "psutil>=5.9,<8")
"""What the unit tests need beyond the wheel and its extras."""
INSTALL_TIMEOUT_S = 1800
UNIT_TESTS_NOT_OF_THE_WHEEL = (
    "--ignore=unit_tests/sparkflow_testing",
    "--ignore=unit_tests/test_import_structure.py",
    "--ignore=unit_tests/mutants",
    "--ignore=unit_tests/tools",
    "--ignore=unit_tests/benchmarks",
)
"""Tests of the test infrastructure (another distribution), of the source tree's imports, of the
mutation list (the source tree's `mutants/`), of the test runner (`tools/`) and of the benchmarks'
helpers (`benchmarks/`)."""


SUITE_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
VERSION_PROBE = "import sys; print('%d.%d' % sys.version_info[:2])"


def _unit_tests(python: Path, version: str, work: Path) -> None:
    """The unit tests of what the wheel ships, against the installed wheel (not the checkout)."""
    shutil.copytree(ROOT / "unit_tests", work / "unit_tests", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conftest.py", "pyproject.toml"):  # the spark fixture; pytest's markers and timeouts
        shutil.copy2(ROOT / name, work / name)
    command = [str(python), "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "unit_tests"]
    tests = _run([*command, *UNIT_TESTS_NOT_OF_THE_WHEEL], cwd=work, timeout=INSTALL_TIMEOUT_S)
    assert tests.returncode == 0, (
        f"unit tests on Python {version}:\n{tests.stdout[-6000:]}{tests.stderr[-2000:]}"
    )


def find_python(version: str) -> Path | None:
    """A CPython ``version`` (``3.12``) that runs: ``python3.12`` on PATH (a pyenv shim without that
    version installed does not run), else the newest under pyenv's ``versions/``."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    installed = sorted(
        (p for p in root.glob(f"{version}.*") if p.name.removeprefix(f"{version}.").isdigit()),
        key=lambda p: int(p.name.rsplit(".", 1)[1]),
    )
    on_path = shutil.which(f"python{version}")
    candidates = [Path(on_path)] if on_path else []
    candidates += [p / "bin" / "python" for p in reversed(installed)]
    for python in candidates:
        try:
            probe = _run([str(python), "-c", VERSION_PROBE], cwd=Path.cwd(), timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return python
    return None


def _install_failure(stderr: str) -> str:
    """What made an install fail, first: its error lines (a build's ``error:``, uv's ``hint:``, a
    missing distribution), then the tail. A source build's setuptools warnings run to pages, and the
    tail alone once showed only them, with the error itself cut off."""
    errors = [
        line.strip()
        for line in stderr.splitlines()
        if line.lstrip().lower().startswith(("error", "hint:", "×", "caused by", "fatal"))
    ]
    return "\n".join([*errors[-20:], "--- the end of stderr:", stderr[-3000:]])


def _installer(venv_python: Path) -> list[str]:
    """The command that installs into ``venv_python``'s venv from the package index: uv (the test extra
    installs it) when it is there, as it installs pyspark into a fresh venv in seconds from its cache
    where pip takes minutes; else the venv's own pip. uv is told to compile the modules as pip does:
    where ``PYTHONDONTWRITEBYTECODE`` is set (as on the CI machines) nothing would cache them later,
    and every Spark worker of the unit tests would compile pyspark from source again."""
    uv = Path(sys.executable).with_name("uv")
    if uv.exists():
        return [str(uv), "pip", "install", "-q", "--compile-bytecode", "--python", str(venv_python)]
    return [str(venv_python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]


@pytest.fixture(scope="module")
def round_trip_brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Real Apache Kafka, real Pravega standalone (or the run's backend), a Kinesis endpoint (moto)."""
    import contextlib

    from sparkflow_testing.kafka.apache_kafka import start_apache_kafka
    from sparkflow_testing.kinesis.endpoint import start_moto
    from sparkflow_testing.pravega.cluster import default_backend, pravega_cluster

    with contextlib.ExitStack() as stack:
        kafka = start_apache_kafka()
        stack.callback(kafka.stop)
        kinesis = start_moto()
        stack.callback(kinesis.stop)
        log_dir = tmp_path_factory.mktemp("pravega-logs")
        pravega = stack.enter_context(pravega_cluster(log_dir=log_dir, backend=default_backend()))
        yield {"kafka": kafka, "kinesis": kinesis, "pravega": pravega}


@pytest.fixture
def venv(tmp_path: Path) -> Iterator[Path]:
    """Where a test makes its venv; removed after the test.

    A venv with pyspark and the rest is about 1 GB (uv copies from its cache), pytest keeps every
    test's ``tmp_path`` to the end of the session, and the disk is shared with the other lanes.
    """
    path = tmp_path / "venv"
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)
@pytest.mark.parametrize("version", PYTHONS)
def test_wheel_on_every_python(
    version: str, wheel: Path, round_trip_brokers: dict[str, Any], tmp_path: Path, venv: Path
) -> None:
    """A fresh venv of ``version`` installs ``wheel[kafka-native,kinesis,pravega]`` from the package
    index (pip's cache makes repeats cheap) with the one abi3 build of the compiled Kafka reader,
    passes the unit tests of what the wheel ships (on the other Pythons than the suite's own, where
    the suite runs them anyway), and round-trips rows through every format's sink and source on the
    real brokers, Kafka's through both writers and both readers."""
    python = find_python(version)
    if python is None:
        pytest.skip(f"no CPython {version}: neither python{version} on PATH nor one under pyenv's versions")
    began = time.monotonic()
    made = _run([str(python), "-m", "venv", str(venv)], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    venv_python = venv / "bin" / "python"
    native = sorted(NATIVE_WHEELS.glob("sparkflow_kafka_native-*-abi3-*.whl"))
    assert native, f"no kafka-native wheel in {NATIVE_WHEELS}: run make native first"
    proc = _run(
        [*_installer(venv_python), f"{wheel}[{MATRIX_EXTRAS}]", str(native[-1]), *UNIT_TEST_TOOLS],
        cwd=tmp_path,
        timeout=INSTALL_TIMEOUT_S,
    )
    assert proc.returncode == 0, f"Python {version}: {_install_failure(proc.stderr)}"
    installed = time.monotonic()

    work = tmp_path / "work"
    work.mkdir()
    if version != SUITE_PYTHON:  # the suite itself runs the unit tests on its own Python
        _unit_tests(venv_python, version, work)
    unit_s = time.monotonic() - installed

    brokers = round_trip_brokers
    kafka, kinesis, pravega = brokers["kafka"], brokers["kinesis"], brokers["pravega"]
    tag = version.replace(".", "")
    config = {
        "kafka_bootstrap": kafka.bootstrap,
        "kafka_topic": kafka.create_topic(partitions=2),
        "kafka_python_topic": kafka.create_topic(partitions=2),
        "kinesis_options": kinesis.options(streamName=kinesis.create_stream(2)),
        "pravega_controller": pravega.controller_uri,
        "pravega_scope": f"wheel{tag}{os.getpid()}",
        "pravega_stream": f"rt{int(time.time())}",
        "files_dir": str(work / "files"),
    }
    (work / "round_trip.json").write_text(json.dumps(config))
    shutil.copy2(Path(__file__).with_name("wheel_check.py"), work / "wheel_check.py")
    proc = _run([str(venv_python), "wheel_check.py", "--round-trip", "round_trip.json"], cwd=work)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    result = json.loads(lines[0].removeprefix("RESULT "))
    expected = [f"row-{i:03d}" for i in range(50)]
    for fmt in ("kafka", "kafka-python", "kinesis", "pravega", "files"):
        assert result[fmt] == {"ok": expected}, f"{fmt} on Python {version}: {str(result[fmt])[:3000]}"
    print(
        f"Python {version} ({python}): {installed - began:.1f}s to install, {unit_s:.1f}s unit tests, "
        f"{time.monotonic() - installed - unit_s:.1f}s round trips"
    )
