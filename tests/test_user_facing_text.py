"""The word "seed" (the project's name for the five documentation pages it was built from) is not
in anything a user reads (issue 41): "seed 001" means nothing outside the project. Scanned: the
reports of a run in every format (one failure of every check, so every citation and every
"rests on" is rendered), `--help` of every subcommand, `tooluse checks`, the docs pages, the
README, the starters and the messages in the code (every string literal that is not a docstring).
A random seed (`--seed N`, "random seed", "a fixed seed") is another word and is allowed. Each
failure names where the word is."""

from __future__ import annotations

import argparse
import ast
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_reports_sample import SUBJECTS, _r, sample_doc

import conformance.checks  # noqa: F401  (registers every check)
from conformance.catalog import CATALOG
from conformance.cli import build_parser, main
from conformance.reports import render_junit, render_markdown
from conformance.reports.html import render_html
from conformance.reports.summary import print_summary
from conformance.results import Outcome, RunInfo
from conformance.run import Run

ROOT = Path(__file__).resolve().parent.parent
#: "seed" as the documents' name; a random seed (``--seed``, "random seed", "fixed seed") and the
#: helper ``simulator.sources.seed(...)`` named in the contributor docs are not.
SEED = re.compile(r"(?<!--)(?<!random )(?<!fixed )\bseeds?\b(?!\()", re.IGNORECASE)
#: Where the code may say "seed" in a string that is not a message: a results file's key.
KEYS = {"seed"}


def found(text: str) -> list[str]:
    """Each use of the word, with some context."""
    return [text[max(0, m.start() - 50):m.end() + 30].replace("\n", " ")
            for m in SEED.finditer(text)]


def test_the_pattern_tells_the_documents_from_a_random_seed() -> None:
    assert found("seed 001 says") and found("The seeds' prose") and found("a Seed section")
    assert not found("--seed N, a random seed, from a fixed seed; bash_seed003_session.py")


def _pages() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_no_docs_page_says_seed(page: Path) -> None:
    hits = found(page.read_text(encoding="utf-8"))
    assert not hits, f"{page.relative_to(ROOT)}: {hits}"


def help_texts() -> dict[str, str]:
    """``--help`` of tooluse and of every subcommand."""
    parser = build_parser()
    out = {"tooluse": parser.format_help()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[f"tooluse {name}"] = sub.format_help()
    return out


def test_no_help_says_seed() -> None:
    texts = help_texts()
    assert len(texts) > 10
    hits = {name: found(text) for name, text in texts.items() if found(text)}
    assert not hits, f"--help: {hits}"


def test_no_check_listing_says_seed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["checks"]) == 0
    hits = found(capsys.readouterr().out)
    assert not hits, f"tooluse checks: {hits}"


def test_no_report_of_a_run_says_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subject = {"bash": "reference-bash"}
    results = [_r(c.id, subject.get(c.family, "reference-editor"), Outcome.FAIL,
                  c.severity.value, message="failed")
               for c in sorted(CATALOG.values(), key=lambda c: c.id)]
    doc = sample_doc(tmp_path, results=results, monkeypatch=monkeypatch)
    junit = ET.fromstring(render_junit(doc))
    junit_text = " ".join([*(e.text or "" for e in junit.iter()),
                           *(e.get("message", "") for e in junit.iter())])
    summary = SimpleNamespace(
        results=results, blocking=lambda: results, ok=False, strict=False, duration=1.0,
        plan=SimpleNamespace(info=RunInfo(subjects=SUBJECTS[:2]), subjects=SUBJECTS[:2],
                             settings=Run()),
        counts=lambda: {"pass": 0, "fail": len(results), "skip": 0, "error": 0})
    terminal = io.StringIO()
    print_summary(summary, terminal)
    rendered = {"report.md": render_markdown(doc), "report.html": render_html(doc),
                "junit.xml": junit_text, "terminal": terminal.getvalue()}
    assert all(c.source.cite() in rendered["terminal"] for c in CATALOG.values())
    hits = {name: found(text) for name, text in rendered.items() if found(text)}
    assert not hits, f"reports: {hits}"


def _messages(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that are not docstrings nor a results file's keys."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                    ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docstrings and n.value not in KEYS]


def test_no_message_in_the_code_says_seed() -> None:
    hits = [f"{p.relative_to(ROOT)}:{line}: {found(text)}"
            for root in ("conformance", "simulator") for p in sorted((ROOT / root).rglob("*.py"))
            for line, text in _messages(p) if found(text)]
    assert not hits, "\n".join(hits)


def test_no_starter_says_seed() -> None:
    starters = sorted((ROOT / "conformance" / "starters").glob("*_tool.*"))
    assert starters
    hits = {p.name: found(p.read_text(encoding="utf-8")) for p in starters
            if found(p.read_text(encoding="utf-8"))}
    assert not hits, hits
