"""Every mutation of ``make mutants`` still applies to this tree, so refactors keep the list alive.

No test runs here: each mutation's search text must occur exactly once in its file, the mutated file
must still compile, and every guarding node id must name a test module (and test) that exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mutants.mutation import Mutation, MutationError
from mutants.mutations import MUTATIONS

ROOT = Path(__file__).resolve().parents[2]


def test_names_are_unique_and_there_are_at_least_25() -> None:
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names))
    assert len(MUTATIONS) >= 25


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_mutation_applies_exactly_once_and_compiles(mutation: Mutation) -> None:
    text = mutation.mutated_text(ROOT)  # raises MutationError unless found exactly once
    compile(text, mutation.path, "exec")


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_guarding_tests_exist(mutation: Mutation) -> None:
    for node in mutation.tests:
        path, _, name = node.partition("::")
        assert (ROOT / path).exists(), f"{mutation.name}: guard {path} does not exist"
        if name:
            source = (ROOT / path).read_text()
            assert re.search(rf"^\s*def {re.escape(name.split('[')[0])}\(", source, re.M), (
                f"{mutation.name}: guard {node} names no test in {path}"
            )


def test_a_search_text_found_twice_or_not_at_all_fails_loudly(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\nx = 1\n")
    twice = Mutation("twice", "test", "m.py", "x = 1", "x = 2", ("t.py",))
    with pytest.raises(MutationError, match="occurs 2 times"):
        twice.mutated_text(tmp_path)
    gone = Mutation("gone", "test", "m.py", "y = 1", "y = 2", ("t.py",))
    with pytest.raises(MutationError, match="occurs 0 times"):
        gone.mutated_text(tmp_path)
