"""Pinned Maven artifacts for test servers: resolve them into a cached classpath, start JVMs on them.

``resolve_classpath(name, artifacts)`` writes a throw-away pom that depends on ``artifacts`` (each
``group:artifact:version``, exact versions only), runs ``mvn dependency:copy-dependencies`` with a
pinned plugin, and returns a directory of jars. The directory lives in a cache outside the work tree
(``$SPARKFLOW_MAVEN_CACHE``, else ``$XDG_CACHE_HOME/sparkflow-connectors/maven``, else
``~/.cache/sparkflow-connectors/maven``), keyed by the artifact list, so the download happens once per
machine; a missing or half-written cache entry is simply resolved again. Maven's own repository
(``~/.m2``) keeps the downloads themselves.

``java_command(classpath, main_class, ...)`` builds the command line of a child JVM;
``require_java_and_maven()`` fails with one clear message when ``java`` or ``mvn`` is missing.

Threading: none. Concurrent processes resolving the same entry are serialized by a file lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "DEPENDENCY_PLUGIN",
    "MavenError",
    "cache_root",
    "java_command",
    "java_and_maven_available",
    "require_java_and_maven",
    "resolve_classpath",
]

DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
"""The plugin that copies the jars, pinned so a new plugin release cannot change a run."""

RESOLVE_TIMEOUT_S = 1800.0
"""A first download on a new machine (Pravega pulls Hadoop) can take minutes; a hang cannot last."""

_COORDINATE = re.compile(r"^[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-]+:[0-9][A-Za-z0-9_.\-]*$")
_COMPLETE = ".complete"


class MavenError(RuntimeError):
    """``java`` or ``mvn`` is missing, or Maven could not resolve the artifacts."""


def java_and_maven_available() -> bool:
    """Whether both ``java`` and ``mvn`` are on the PATH."""
    return shutil.which("java") is not None and shutil.which("mvn") is not None


def require_java_and_maven() -> None:
    """Raise ``MavenError`` naming what is missing unless ``java`` and ``mvn`` are on the PATH."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        raise MavenError(
            f"{' and '.join(missing)} not found on PATH: the real Kafka and Pravega test servers run "
            "as JVMs from Maven artifacts and need Java 17 and Maven 3 (e.g. apt-get install "
            "openjdk-17-jdk-headless maven)"
        )


def cache_root() -> Path:
    """Where resolved classpaths are kept between runs (outside the work tree)."""
    explicit = os.environ.get("SPARKFLOW_MAVEN_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sparkflow-connectors" / "maven"


def _pom(artifacts: Sequence[str]) -> str:
    deps = []
    for coordinate in artifacts:
        group, artifact, version = coordinate.split(":")
        deps.append(
            f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version></dependency>"
        )
    body = "\n".join(deps)
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>local.sparkflow</groupId><artifactId>classpath</artifactId><version>1</version>\n"
        "  <packaging>pom</packaging>\n"
        f"  <dependencies>\n{body}\n  </dependencies>\n"
        "</project>\n"
    )


def resolve_classpath(name: str, artifacts: Sequence[str]) -> Path:
    """A directory holding ``artifacts`` and their runtime dependencies, resolved once and cached."""
    for coordinate in artifacts:
        if not _COORDINATE.match(coordinate):
            raise ValueError(f"artifact {coordinate!r}: expected group:artifact:exact-version")
    require_java_and_maven()
    key = hashlib.sha256("\n".join(sorted(artifacts)).encode()).hexdigest()[:12]
    entry = cache_root() / f"{name}-{key}"
    libs = entry / "libs"
    if (entry / _COMPLETE).exists():
        return libs
    entry.mkdir(parents=True, exist_ok=True)
    with open(entry / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (entry / _COMPLETE).exists():
            return libs
        shutil.rmtree(libs, ignore_errors=True)
        (entry / "pom.xml").write_text(_pom(artifacts))
        cmd = [
            "mvn",
            "-B",
            "-q",
            "-f",
            str(entry / "pom.xml"),
            f"{DEPENDENCY_PLUGIN}:copy-dependencies",
            f"-DoutputDirectory={libs}",
            "-DincludeScope=runtime",
        ]
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT_S, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired as exc:
            raise MavenError(f"resolving {name} ({', '.join(artifacts)}) took over {exc.timeout}s") from exc
        if done.returncode != 0:
            tail = (done.stdout + done.stderr)[-3000:]
            raise MavenError(f"mvn could not resolve {name} ({', '.join(artifacts)}):\n{tail}")
        (entry / _COMPLETE).write_text("\n".join(artifacts) + "\n")
    return libs


def java_command(
    classpath: Path | Sequence[Path],
    main_class: str,
    args: Sequence[str] = (),
    *,
    heap: str = "512m",
    jvm_args: Sequence[str] = (),
    java: str | None = None,
) -> list[str]:
    """The command line of a JVM running ``main_class`` on the jars in ``classpath``."""
    dirs = [classpath] if isinstance(classpath, Path) else list(classpath)
    cp = os.pathsep.join(str(d / "*") for d in dirs)
    return [java or "java", f"-Xmx{heap}", *jvm_args, "-cp", cp, main_class, *args]
