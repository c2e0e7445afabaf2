"""The committed matrix (reports/matrix/) matches the catalog: a check whose level, statement or
source changed, a check gone, or a new check without a row means it must be regenerated."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conformance.matrix.model import catalog, validate_matrix
from conformance.matrix.stale import stale_checks

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "reports" / "matrix" / "matrix.json"
FIX = "regenerate it: nox -s matrix (or tooluse matrix matrix.toml --out reports/matrix)"


@pytest.fixture(scope="module")
def committed() -> dict:
    assert COMMITTED.is_file(), f"{COMMITTED} is missing; {FIX}"
    doc: dict = json.loads(COMMITTED.read_text())
    return doc


def test_committed_matrix_is_valid(committed: dict) -> None:
    validate_matrix(committed)
    assert committed["implementations"] and committed["checks"]
    assert not committed["check_patterns"], "the committed matrix must run every check"
    names = {i["name"] for i in committed["implementations"]}
    for row in committed["checks"]:
        assert set(row["cells"]) == names


def test_committed_matrix_matches_the_catalog(committed: dict) -> None:
    stale = stale_checks(committed)
    assert not stale, (f"reports/matrix/matrix.json is stale ({len(stale)} checks); {FIX}:\n"
                       + "\n".join(stale))


def test_a_changed_level_or_statement_is_caught(committed: dict) -> None:
    doc = copy.deepcopy(committed)
    first, second = doc["checks"][0], doc["checks"][1]
    first["severity"] = "INFO" if first["severity"] != "INFO" else "MUST"
    first["fingerprint"] = "0" * 16  # as the matrix of an older catalog would have it
    second["fingerprint"] = "f" * 16
    second["statement"] += " (old wording)"
    stale = stale_checks(doc)
    assert any(line.startswith(f"{first['id']}: severity changed") for line in stale), stale
    assert any(line.startswith(f"{second['id']}: statement changed") for line in stale), stale


def test_a_missing_or_removed_check_is_caught(committed: dict) -> None:
    doc = copy.deepcopy(committed)
    dropped = doc["checks"].pop(0)
    doc["checks"].append({**copy.deepcopy(doc["checks"][0]), "id": "bash.no_such.check"})
    stale = stale_checks(doc)
    assert f"{dropped['id']}: a {dropped['severity']} check the matrix has no row for" in stale
    assert "bash.no_such.check: no longer in the catalog" in stale
    assert dropped["id"] in catalog()
