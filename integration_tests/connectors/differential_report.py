"""The assertion message of a differential harness: every finding, the first named on line one."""

from __future__ import annotations

__all__ = ["findings_message"]


def findings_message(title: str, findings: list[str], separator: str = "\n") -> str:
    """``title``, the count and the first finding's first line on one line (all a test summary, and
    so ``make test``'s closing summary, shows of a failure), then every finding."""
    first = findings[0].splitlines()[0][:200]
    return f"{title}: {len(findings)}, first {first}{separator}" + separator.join(findings)
