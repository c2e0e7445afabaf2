"""The committed mutation report (reports/mutation/, written by `nox -s mutation`) is well-formed
and agrees with itself. The mutation tool is not run here."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scripts.mutation import TARGETS, render_markdown, score

REPORTS = Path(__file__).resolve().parent.parent / "reports" / "mutation"
#: The current report, and the one measured before the checks were sharpened (issue 36).
DIRS = [REPORTS, REPORTS / "before"]
STATUSES = {"killed", "survived", "equivalent", "sampled_out"}


def load(folder: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((folder / "mutants.json").read_text(encoding="utf-8"))
    return doc


@pytest.fixture(params=DIRS, ids=["current", "before"])
def folder(request: pytest.FixtureRequest) -> Path:
    path: Path = request.param
    return path


@pytest.fixture
def doc(folder: Path) -> dict[str, Any]:
    return load(folder)


def test_every_mutant_is_well_formed(doc: dict[str, Any]) -> None:
    keys = [m["key"] for m in doc["mutants"]]
    assert len(keys) == len(set(keys)), "mutant keys are unique"
    for m in doc["mutants"]:
        assert m["file"] in TARGETS and m["key"].startswith(f"{m['file']}:")
        assert m["status"] in STATUSES, m["key"]
        assert m["diff"].startswith(f"--- a/{m['file']}"), m["key"]
        if m["status"] == "killed":
            assert m["killed_by"] and m["commands"], m["key"]
        if m["status"] == "survived":
            assert not m["killed_by"] and m["commands"], m["key"]
        if m["status"] in ("equivalent", "sampled_out"):
            assert m["reason"] and not m["killed_by"] and not m["commands"], m["key"]


def test_counts_agree_with_the_listed_mutants(doc: dict[str, Any]) -> None:
    from scripts.mutation import Mutant

    mutants = [Mutant(**m) for m in doc["mutants"]]
    assert doc["score"] == score(mutants)
    total = doc["score"]["all"]
    assert total["total"] == len(doc["mutants"])
    assert total["killed"] + total["survived"] == total["non_equivalent"]
    assert (total["non_equivalent"] + total["equivalent"] + total["sampled_out"]
            == total["total"])
    assert sum(doc["score"][f]["total"] for f in TARGETS) == total["total"]


def test_the_markdown_is_the_json_rendered(folder: Path, doc: dict[str, Any]) -> None:
    text = (folder / "report.md").read_text(encoding="utf-8")
    assert text == render_markdown(doc)
    survivors = [m for m in doc["mutants"] if m["status"] == "survived"]
    assert f"## Surviving mutants ({len(survivors)})" in text
    for m in survivors:
        assert f"### `{m['key']}`" in text


def test_listed_equivalents_have_reasons_and_are_used() -> None:
    doc = tomllib.loads((REPORTS / "equivalents.toml").read_text(encoding="utf-8"))
    entries = doc.get("equivalent", [])
    keys = [e["key"] for e in entries]
    assert len(keys) == len(set(keys))
    for e in entries:
        assert set(e) == {"key", "reason"} and e["reason"].strip(), e
    current = {m["key"]: m for m in load(REPORTS)["mutants"]}
    for e in entries:  # every listed equivalent names a mutant of the current report, as such
        m = current.get(e["key"])
        assert m is not None, f"equivalents.toml names no current mutant: {e['key']}"
        assert m["status"] in ("equivalent", "sampled_out"), e["key"]
        if m["status"] == "equivalent":
            assert m["reason"] == e["reason"]


def test_the_score_meets_the_target() -> None:
    """Issue 36: at least 95 % of the non-equivalent mutants killed, per file."""
    doc = load(REPORTS)
    for file in TARGETS:
        s = doc["score"][file]
        assert s["score"] is not None and s["score"] >= 95, (file, s)


def test_killers_are_checks_or_named_harness_outcomes() -> None:
    doc = load(REPORTS)
    kinds: Counter[str] = Counter()
    for m in doc["mutants"]:
        for k in m["killed_by"]:
            first = k.split(" ")[0]
            kinds[first.split(".")[0] if "." in first else first] += 1
    assert set(kinds) <= {"bash", "editor", "timeout:", "subject"}, kinds
