"""Every docs page named anywhere exists, the wheel carries the ones the CLI names, and the counts
the docs state are the catalog's and the corpus's (issue 41: `--help` named a missing page,
`tooluse checks --family` listed two families of four, docs/subjects.md's bash table had 21 of 24
checks, the cassette count was stale).

Named: `--help` of every subcommand, the docs pages and the README (as `docs/NAME.md` and as
relative links), and the code's string literals (messages, help, docstrings)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest
from test_user_facing_text import help_texts

import conformance.checks  # noqa: F401  (registers every check)
from conformance.catalog import CATALOG
from conformance.shipped import doc_path, docs_dir
from simulator.cassette import iter_corpus

ROOT = Path(__file__).resolve().parent.parent
DOC = re.compile(r"\bdocs/[a-z0-9_./-]*[a-z0-9_-]\.(?:md|py|mjs)\b")  # docs/NAME.md: a placeholder
LINK = re.compile(r"\]\((?!https?://|#|mailto:)([^)#\s]+)(?:#[^)]*)?\)")


def _pages() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def _code_strings() -> dict[str, set[str]]:
    """docs paths in the string literals of the code, by module."""
    out: dict[str, set[str]] = {}
    for root in ("conformance", "simulator", "scripts"):
        for path in sorted((ROOT / root).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    for m in DOC.findall(node.value):
                        out.setdefault(m, set()).add(str(path.relative_to(ROOT)))
    return out


def named_by_the_cli() -> dict[str, set[str]]:
    """docs paths that `--help` or a message of the code names (what a wheel user is sent to)."""
    out = _code_strings()
    for name, text in help_texts().items():
        for m in DOC.findall(text):
            out.setdefault(m, set()).add(f"{name} --help")
    return out


def named_anywhere() -> dict[str, set[str]]:
    out = named_by_the_cli()
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        for m in DOC.findall(text):
            out.setdefault(m, set()).add(str(page.relative_to(ROOT)))
        for link in LINK.findall(text):
            target = (page.parent / link).resolve()
            if target.suffix == ".md" or "docs/" in link:
                out.setdefault(str(target.relative_to(ROOT)) if target.is_relative_to(ROOT)
                               else link, set()).add(f"{page.relative_to(ROOT)} (link)")
    return out


def test_the_scan_finds_the_pages_it_should() -> None:
    named = named_anywhere()
    assert {"docs/checks.md", "docs/loops.md", "docs/protocol-notes.md"} <= set(named)
    assert any("--help" in w for w in named["docs/loops.md"])  # `tooluse run --help` names it
    assert DOC.findall("see docs/loops.md.") == ["docs/loops.md"]


def test_every_named_doc_exists() -> None:
    missing = {path: sorted(where) for path, where in named_anywhere().items()
               if not (ROOT / path).is_file()}
    assert not missing, f"named but not in the repository: {missing}"


def test_the_wheel_carries_the_docs_the_cli_names() -> None:
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    shipped = build["targets"]["wheel"]["force-include"]
    assert shipped.get("docs") == "conformance/docs", "the wheel must map docs/ to conformance/docs"
    assert "/docs" in build["targets"]["sdist"]["include"]
    for path in named_by_the_cli():
        assert path.startswith("docs/"), path  # under the directory the wheel maps
        assert doc_path(path).is_file(), path
    assert docs_dir() == ROOT / "docs"  # a checkout reads its own docs/ (a wheel: conformance/docs)
    # tests/test_wheel.py's packaging test checks the built wheel's names


# --- the counts the docs state ---------------------------------------------------------------

def test_checks_help_lists_every_family() -> None:
    families = sorted({c.family for c in CATALOG.values()})
    assert families == ["bash", "editor", "loop", "worker"]
    text = " ".join(help_texts()["tooluse checks"].split())
    assert f"only this family ({', '.join(families)})" in text


def _broken_targets() -> dict[str, list[str]]:
    """Check id -> the broken bash subjects (tests/broken/bash_*.py) that target it."""
    out: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests" / "broken").glob("bash_*.py")):
        m = re.search(r'^TARGET = "([^"]+)"', path.read_text(encoding="utf-8"), re.M)
        assert m, f"{path.name}: no TARGET"
        out.setdefault(m.group(1), []).append(path.name)
    return out


def bash_table() -> str:
    """docs/subjects.md's table of the bash checks: every bash check of the catalog."""
    targets = _broken_targets()
    rows = ["| check | level | source | broken subject |", "| --- | --- | --- | --- |"]
    for c in sorted((c for c in CATALOG.values() if c.family == "bash"), key=lambda c: c.id):
        broken = ", ".join(f"`{n}`" for n in targets.get(c.id, [])) or "—"
        rows.append(f"| `{c.id}` | {c.severity} | {c.source.section_en} | {broken} |")
    return "\n".join(rows)


def test_the_bash_table_of_subjects_md_lists_every_bash_check() -> None:
    text = (ROOT / "docs" / "subjects.md").read_text(encoding="utf-8")
    assert bash_table() in text, (
        "docs/subjects.md's bash table is not the catalog's; replace it with:\n" + bash_table())
    stated = re.search(r"The (\d+) bash checks", text)
    assert stated and int(stated.group(1)) == sum(1 for c in CATALOG.values()
                                                  if c.family == "bash")


def _driven() -> tuple[int, int]:
    from conformance.loops.corpus import plan

    cassettes = list(iter_corpus())
    return len(plan(cassettes).runs), len(cassettes)


def test_the_cassette_counts_are_the_corpus() -> None:
    driven, total = _driven()
    serve = (ROOT / "docs" / "serve-and-record.md").read_text(encoding="utf-8")
    assert f"The corpus ships with the package ({total} cassettes)." in serve
    agents = " ".join((ROOT / "docs" / "managed-agents.md").read_text(encoding="utf-8").split())
    m = re.search(r"Today: (\d+) of (\d+) cassettes driven, (\d+) excluded", agents)
    assert m and (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (
        driven, total, total - driven)
    assert f"pass all {driven}" in agents
    frameworks = " ".join((ROOT / "docs" / "frameworks.md").read_text(encoding="utf-8").split())
    assert f"every recorded conversation: {driven} cassettes" in frameworks


def test_the_streamed_cassette_count_is_the_corpus() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_envelope_sdk import streamed_cassettes

    schemas = " ".join((ROOT / "docs" / "schemas.md").read_text(encoding="utf-8").split())
    assert f"(`tests/test_envelope_sdk.py`, {len(streamed_cassettes())} cassettes," in schemas


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_a_stated_check_count_is_the_catalogs(page: Path) -> None:
    """"N checks: a MUST, b SHOULD, c INFO" and "N checks in the catalog" agree with it."""
    text = " ".join(page.read_text(encoding="utf-8").split())
    total = len(CATALOG)
    for m in re.finditer(r"(\d+) checks: (\d+) MUST, (\d+) SHOULD, (\d+) INFO", text):
        levels = [sum(1 for c in CATALOG.values() if c.severity.value == s)
                  for s in ("MUST", "SHOULD", "INFO")]
        assert [int(x) for x in m.groups()] == [total, *levels], (page.name, m.group(0))
    for m in re.finditer(r"(\d+) checks in the catalog", text):
        assert int(m.group(1)) == total, (page.name, m.group(0))
