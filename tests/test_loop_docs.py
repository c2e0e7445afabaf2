"""docs/loops.md cannot rot: its two examples are the files under docs/examples/ (checked here
byte for byte) and both pass the loop checks through ``--loop-cmd`` (the Node one every check but
the corpus one; the Python one, whose every start imports the SDK, one scenario per step of the
contract); every doc path the CLI's help, the code and the docs name exists."""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from conformance import runner
from conformance.cli import build_parser
from conformance.loops.subject import loop_command_subject
from conformance.results import Outcome

pytest.importorskip("uvicorn", reason="--loop-cmd serves the simulation over HTTP (the serve extra)")

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "loops.md"
EXAMPLE = re.compile(r"<!-- example: (\S+) -->\n```\w+\n(.*?)```", re.S)
#: Every loop check but the corpus one (a program started per cassette: minutes).
CHECKS = ["loop.client_tools.*", "loop.pause_turn.*", "loop.mixed.*", "loop.ptc.*",
          "loop.container.*", "loop.errors.*"]
#: A repository path naming a doc (``docs/x.md``, ``docs/examples/``), not a URL's ``/docs/``.
DOC_PATH = re.compile(r"(?<![\w/.\-~$])docs/[\w./\-]*[\w/]")
#: A relative Markdown link in a page (``[text](other.md#part)``).
LINK = re.compile(r"\]\((?!\w+:)([\w./\-]+)(?:#[\w\-]*)?\)")


def test_the_page_shows_the_example_files_as_they_are() -> None:
    shown = dict(EXAMPLE.findall(PAGE.read_text(encoding="utf-8")))
    assert set(shown) == {"docs/examples/loop_cmd.py", "docs/examples/loop_cmd.mjs"}
    for path, text in shown.items():
        assert text == (ROOT / path).read_text(encoding="utf-8"), (
            f"docs/loops.md shows an old {path}: paste the file into the page again")


#: One scenario per step of the contract: tools answered, a streamed pause resent, programmatic
#: calls with the container, retries, an expired container.
STEPS = ["loop.client_tools.several_per_turn", "loop.pause_turn.streamed", "loop.ptc.several_pauses",
         "loop.errors.transient_retried", "loop.container.expired"]


def _all_pass(command: str, checks: list[str]) -> None:
    summary = runner.run([loop_command_subject(command)], checks=checks, jobs=2)
    results = {r.check_id: (r.outcome, r.message or "") for r in summary.results}
    assert len(results) == (16 if checks == CHECKS else len(checks))
    assert {o for o, _ in results.values()} == {Outcome.PASS}, {
        c: m[:400] for c, (o, m) in results.items() if o is not Outcome.PASS}


def test_the_python_example_passes_a_check_of_each_step() -> None:
    _all_pass(f"{shlex.quote(sys.executable)} "
              f"{shlex.quote(str(ROOT / 'docs' / 'examples' / 'loop_cmd.py'))}", STEPS)


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_the_node_example_passes_every_loop_check() -> None:
    _all_pass(f"node {shlex.quote(str(ROOT / 'docs' / 'examples' / 'loop_cmd.mjs'))}", CHECKS)


def _help_texts(parser: argparse.ArgumentParser) -> list[str]:
    texts = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                texts += _help_texts(sub)
    return texts


def test_every_doc_path_named_exists() -> None:
    sources = {"tooluse --help (every command)": "\n".join(_help_texts(build_parser()))}
    for pattern in ("conformance/**/*.py", "simulator/**/*.py", "scripts/**/*.py", "*.md",
                    "docs/**/*.md", "*.toml", "noxfile.py"):
        for path in ROOT.glob(pattern):
            sources[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    missing = sorted({(name, m.group(0).rstrip("."))
                      for name, text in sources.items() for m in DOC_PATH.finditer(text)
                      if not (ROOT / m.group(0).rstrip(".")).exists()})
    for page in [*ROOT.glob("*.md"), *ROOT.glob("docs/**/*.md")]:
        for m in LINK.finditer(page.read_text(encoding="utf-8")):
            if not (page.parent / m.group(1)).exists():
                missing.append((str(page.relative_to(ROOT)), m.group(1)))
    assert not missing, missing


def test_the_run_help_points_to_the_loop_contract() -> None:
    assert "docs/loops.md" in "\n".join(_help_texts(build_parser()))
