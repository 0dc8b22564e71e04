"""docs/kafka.md's table of allowed differences is the allow-list of the differential tests."""

from __future__ import annotations

from pathlib import Path

from integration_tests.connectors.kafka.differential.allowed import ALLOWANCES, BEGIN, END, table

DOC = Path(__file__).resolve().parents[4] / "docs" / "kafka.md"


def test_the_doc_holds_the_allow_list_table_as_printed() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, (
        "regenerate: python -m integration_tests.connectors.kafka.differential.allowed"
    )
    held = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert held == table(), (
        "docs/kafka.md's allowed differences differ from allowed.py; paste the output of "
        "python -m integration_tests.connectors.kafka.differential.allowed"
    )


def test_every_allowance_cites_one_row_that_says_different_on_purpose() -> None:
    text = DOC.read_text(encoding="utf-8")
    anchors = [a.anchor for a in ALLOWANCES]
    assert len(set(anchors)) == len(anchors)
    for anchor in anchors:
        rows = [ln for ln in text.splitlines() if f'<a id="{anchor}"></a>' in ln]
        assert len(rows) == 1 and "Different on purpose" in rows[0], anchor
