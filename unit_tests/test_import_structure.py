"""The project's import structure, read statically from the source (nothing is imported).

Two rules of the house (issue 21): no import circle among the project's modules, and the product
(``connector_base``, ``connectors`` and the top-level ``pyspark_*`` registration modules) never
imports the test infrastructure (``sparkflow_testing``), the demos or the tests.

What counts as an import: every ``import`` / ``from ... import`` statement anywhere in a file, at
module level, inside ``if TYPE_CHECKING:`` and inside functions alike (a deferred import is still a
dependency). ``from a.b import c`` is an edge to the module ``a.b.c`` when that is a module of the
project, else to ``a.b``; relative imports are resolved against the file's package. A package's
``__init__`` is not implied by importing one of its modules (that is how Python runs it, but it is
not a dependency the importing module chose).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_ROOTS = {
    "connector_base": ROOT,
    "connectors": ROOT,
    "demos": ROOT,
    "sparkflow_testing": ROOT / "testing",
}
PRODUCT = ("connector_base", "connectors")
NOT_FOR_THE_PRODUCT = ("sparkflow_testing", "demos", "unit_tests", "integration_tests", "benchmarks")


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package, root in PACKAGE_ROOTS.items():
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    for path in sorted(ROOT.glob("*.py")):
        if path.name != "conftest.py":
            modules[path.stem] = path
    return modules


def _imported_names(module: str, path: Path) -> Iterator[tuple[str, str, int]]:
    """``(name, from-module, line)`` of every name ``path`` imports, relative imports resolved.

    For ``import a.b`` both names are ``a.b``; for ``from a import b`` they are ``a.b`` and ``a``.
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                yield f"{base}.{alias.name}", base, node.lineno


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for name, from_module, _line in _imported_names(module, path):
            target = name if name in modules else _resolve(from_module, modules)
            if target is not None and target != module:
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_detector_finds_a_circle_and_accepts_a_chain() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_relative_and_deferred_imports_are_edges(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text("def f():\n    from .two import g\n    return g\n")
    two = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import one\n"
    (package / "two.py").write_text(two)
    modules = {"pkg": package / "__init__.py", "pkg.one": package / "one.py", "pkg.two": package / "two.py"}
    graph = _graph(modules)
    assert graph["pkg.one"] == {"pkg.two"}
    assert graph["pkg.two"] == {"pkg.one"}
    assert _cycles(graph) == [["pkg.one", "pkg.two"]]


def test_no_import_circle_among_the_project_modules() -> None:
    modules = _modules()
    expected = {"connector_base.spark.planner", "sparkflow_testing.kafka.broker", "demos.progress"}
    assert expected <= set(modules)
    cycles = _cycles(_graph(modules))
    assert cycles == [], "import circles (move what both sides need to where it belongs):\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_product_never_imports_the_test_infrastructure_or_the_demos() -> None:
    modules = _modules()
    offending = []
    product = {
        m: p
        for m, p in modules.items()
        if m.split(".")[0] in PRODUCT
        or m.startswith("pyspark_")
        or m in ("sparkflow_daemon", "sparkflow_lookup", "sparkflow_python")
    }
    assert "connector_base.testing.source_test_suite" in product and "pyspark_kafka_unified" in product
    for module, path in product.items():
        for _name, from_module, line in _imported_names(module, path):
            if from_module.split(".")[0] in NOT_FOR_THE_PRODUCT:
                offending.append(f"{path.relative_to(ROOT)}:{line} imports {from_module}")
    assert offending == []
