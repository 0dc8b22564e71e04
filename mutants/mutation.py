"""``Mutation``: one planted bug, an exact search/replace in one file, and the tests that guard it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Mutation", "MutationError"]


class MutationError(Exception):
    """A mutation no longer applies: its search text is not found exactly once in its file."""


@dataclass(frozen=True, slots=True)
class Mutation:
    """A planted bug.

    ``search`` must occur exactly once in ``path`` (relative to the repository root); it is
    replaced by ``replace``. ``tests`` are pytest node ids (files, or ``file::test``) that must fail
    on the mutated tree. ``env`` is added to the test run's environment (e.g. one Kafka broker kind).
    ``timeout_s`` bounds the whole guard run from outside; a guard still running then counts as
    survived (a hang is caught only when the suite's own pytest-timeout fails the test).
    """

    name: str
    guarantee: str
    path: str
    search: str
    replace: str
    tests: tuple[str, ...]
    why: str = ""
    env: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 900.0

    def __post_init__(self) -> None:
        if not self.tests:
            raise ValueError(f"mutation {self.name}: no guarding tests")
        if self.search == self.replace:
            raise ValueError(f"mutation {self.name}: search and replace are the same")

    def mutated_text(self, root: Path) -> str:
        """The file's text with the mutation applied; raises ``MutationError`` if it does not apply."""
        target = root / self.path
        try:
            text = target.read_text()
        except FileNotFoundError:
            raise MutationError(f"mutation {self.name}: {self.path} does not exist") from None
        found = text.count(self.search)
        if found != 1:
            raise MutationError(
                f"mutation {self.name}: the search text occurs {found} times in {self.path} "
                f"(expected once):\n{self.search}"
            )
        return text.replace(self.search, self.replace)

    def apply(self, root: Path) -> None:
        """Write the mutated file under ``root`` (a copy of the tree)."""
        text = self.mutated_text(root)
        (root / self.path).write_text(text)

    def test_files(self) -> list[str]:
        """The test modules named by ``tests``."""
        return sorted({t.split("::", 1)[0] for t in self.tests})
