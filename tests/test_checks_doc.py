"""docs/checks.md: the calibration rule's page carries the catalog as the code has it."""

from __future__ import annotations

from pathlib import Path

from conformance import checks_doc
from conformance.catalog import CATALOG


def test_the_catalog_section_of_docs_checks_md_is_current() -> None:
    text = checks_doc.DOC.read_text(encoding="utf-8")
    assert checks_doc.updated(text) == text, (
        "docs/checks.md is stale: run python -m conformance.checks_doc")


def test_every_check_is_listed_with_its_level() -> None:
    section = checks_doc.render()
    for c in CATALOG.values():
        assert f"| `{c.id}` | {c.severity} |" in section


def test_check_mode_reports_a_stale_page(tmp_path: Path) -> None:
    doc = tmp_path / "checks.md"
    doc.write_text("# Checks\n\nhand-written\n", encoding="utf-8")
    assert checks_doc.main(["--check", "--doc", str(doc)]) == 1
    assert checks_doc.main(["--doc", str(doc)]) == 0
    assert doc.read_text(encoding="utf-8").startswith("# Checks\n\nhand-written\n")
    assert checks_doc.main(["--check", "--doc", str(doc)]) == 0
