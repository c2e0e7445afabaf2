"""Unusual but conformant editors (``tests/conformant/editor_*.py``) pass every MUST editor check.

Each is the reference editor with one convention the docs leave open (issue 13, point 1): a
split-lines ``insert``, a phantom empty last line, error texts of its own. A MUST failure here is
a false failure of the suite. The model-based check runs on them here too, as the runner runs it
(its owner, tests/test_stateful_editor.py, makes it accept these conventions).
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from broken.editor_harness import run_checks

import conformance.checks.editor  # noqa: F401
from conformance.catalog import CATALOG, Severity
from conformance.reference.editor import TextEditor

HERE = Path(__file__).resolve().parent / "conformant"
MODEL_CHECK = "editor.model.agrees_with_reference_model"
TOOL_TYPES = ("text_editor_20250124", "text_editor_20250728")


@dataclass(frozen=True)
class Conformant:
    name: str
    cls: type[TextEditor]

    def factory(self, tool_type: str) -> Callable[..., TextEditor]:
        cls = self.cls
        if tool_type == "text_editor_20250728":
            def make(workdir: Path, timeout: float | None = None,
                     max_characters: int | None = None) -> TextEditor:
                return cls(workdir, tool_type=tool_type, max_characters=max_characters)
            return make

        def make_old(workdir: Path, timeout: float | None = None) -> TextEditor:
            return cls(workdir, tool_type=tool_type)
        return make_old


def _scan() -> list[Conformant]:
    found = []
    for path in sorted(HERE.glob("editor_*.py")):
        spec = importlib.util.spec_from_file_location(f"conformant_{path.stem}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, TextEditor) and "CONVENTION" in vars(obj):
                found.append(Conformant(name, obj))
    return found


CONFORMANT = _scan()
#: A subject built from a seed's example runs on the versions that seed documents.
CASES = [(c, t) for c in CONFORMANT for t in getattr(c.cls, "TOOL_TYPES", TOOL_TYPES)]
DOCS = Path(__file__).resolve().parent.parent / "docs" / "checks.md"


def _breaks(c: Conformant) -> dict[str, str]:
    """MUST checks a seed's own example breaks by its own code, with the seed sentence it breaks
    (docs/checks.md names each); every other MUST check must pass."""
    return dict(getattr(c.cls, "BREAKS", {}))


def _ids(case: Any) -> str:
    c, t = case
    return f"{c.name}-{t}"


def _failures(c: Conformant, tool_type: str, ids: set[str] | None = None,
              exclude: set[str] | frozenset[str] = frozenset()) -> dict[str, str]:
    results = run_checks(c.factory(tool_type), tool_type, ids=ids, exclude=exclude)
    return {k: v.failure.message[:300] for k, v in results.items() if v.failure}


def test_there_are_conformant_editors() -> None:
    assert {c.name for c in CONFORMANT} >= {"SplitLinesInsert", "PhantomLastLine",
                                            "OwnErrorTexts", "VendorInsert"}


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_conformant_editor_passes_every_must_check(case: tuple[Conformant, str]) -> None:
    c, tool_type = case
    failed = _failures(c, tool_type, exclude={MODEL_CHECK})
    must = {k: v for k, v in failed.items() if CATALOG[k].severity is Severity.MUST
            and k not in _breaks(c)}
    assert must == {}, f"{c.cls.CONVENTION}: false MUST failures"  # type: ignore[attr-defined]


def test_what_a_seed_example_breaks_is_named_with_its_sentence() -> None:
    """A MUST check a seed's own example fails is named in docs/checks.md with the seed
    sentence the example breaks, and the example does fail it (the seed's own bug)."""
    docs = DOCS.read_text(encoding="utf-8")
    named = [(c, check, sentence) for c in CONFORMANT for check, sentence in _breaks(c).items()]
    assert named, "the seed 001 sample names what it breaks"
    for c, check, sentence in named:
        assert check in CATALOG and CATALOG[check].severity is Severity.MUST, check
        assert f"`{c.name}`" in docs and sentence in docs, (c.name, check)
        tool_type = next(t for t in getattr(c.cls, "TOOL_TYPES", TOOL_TYPES)
                         if CATALOG[check].applies(t))
        assert check in _failures(c, tool_type, ids={check}), (c.name, check)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_conformant_editor_passes_every_should_check(case: tuple[Conformant, str]) -> None:
    c, tool_type = case
    failed = _failures(c, tool_type, exclude={MODEL_CHECK})
    should = {k: v for k, v in failed.items() if CATALOG[k].severity is Severity.SHOULD
              and k not in getattr(c.cls, "SHOULD_NOT", {})}
    assert should == {}, f"{c.cls.CONVENTION}: false SHOULD failures"  # type: ignore[attr-defined]


#: What the model check says it saw, for the editors whose convention it names.
MODEL_OBSERVED = {"SplitLinesInsert": "split on \\n",
                  "TabStopsOfFour": "view of a tab: expanded to tab stops of 4",
                  "TabsAsTwoSpaces": "2 spaces each"}


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_conformant_editor_passes_the_model_check(case: tuple[Conformant, str]) -> None:
    """The check as the runner runs it (its fixed number of examples). This is also where the
    unusual conformant editors' model runs live: tests/test_stateful_editor.py ran them a second
    time with more examples (60 against 40; ~10 CPU-s of the suite's, issue 21)."""
    c, tool_type = case
    out = run_checks(c.factory(tool_type), tool_type, ids={MODEL_CHECK})[MODEL_CHECK]
    if MODEL_CHECK in _breaks(c) and c.cls.TOOL_TYPES[0] == tool_type:  # type: ignore[attr-defined]
        return  # the seed example's own bug (test_what_a_seed_example_breaks_is_named_...)
    assert out.failure is None, out.failure.message[:300]
    if c.name in MODEL_OBSERVED:
        assert MODEL_OBSERVED[c.name] in out.observed, out.observed


@pytest.mark.parametrize(("name", "check_id", "observed"), [
    ("SplitLinesInsert", "editor.insert.newline_convention", "split on \\n: an extra empty line"),
    ("PhantomLastLine", "editor.insert.rejects_past_end", "appends (a phantom empty last line)"),
    ("OwnErrorTexts", "editor.errors.documented_texts", "its own texts for view of a missing file"),
])
def test_the_convention_is_reported(name: str, check_id: str, observed: str) -> None:
    c = next(c for c in CONFORMANT if c.name == name)
    out = run_checks(c.factory("text_editor_20250728"), "text_editor_20250728",
                     ids={check_id})[check_id]
    assert out.status == "pass" and observed in out.observed, out


def test_the_reference_convention_is_reported() -> None:
    from conformance.reference.editor import EDITOR_FACTORIES

    ids = {"editor.insert.newline_convention", "editor.insert.rejects_past_end",
           "editor.errors.documented_texts", "editor.view.binary_file_answered",
           "editor.paths.relative_paths"}
    out = run_checks(EDITOR_FACTORIES["text_editor_20250728"], "text_editor_20250728", ids=ids)
    assert {k: v.observed for k, v in out.items()} == {
        "editor.insert.newline_convention": "insert: new_str inserted as written",
        "editor.insert.rejects_past_end": "insert_line = line count + 1 refused",
        "editor.errors.documented_texts": "errors: documented texts for view of a missing file, "
                                          "str_replace with no match, str_replace with 3 matches",
        "editor.view.binary_file_answered": "binary files: shown",
        "editor.paths.relative_paths": "relative paths: resolved against the working directory",
    }


class _AbsoluteOnly(TextEditor):
    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        path = tool_input.get("path")
        if isinstance(path, str) and not path.startswith("/"):
            return {"content": f"Error: {path} is not an absolute path", "is_error": True}
        return super().__call__(tool_input)


def test_relative_paths_are_a_reported_convention_either_way() -> None:
    """Seed 001's examples use relative paths ("primes.py"); a tool taking absolute paths only
    is conformant too: INFO, each reported (docs/checks.md, issue 36)."""
    check = "editor.paths.relative_paths"
    assert CATALOG[check].severity is Severity.INFO
    out = run_checks(Conformant("AbsoluteOnly", _AbsoluteOnly).factory("text_editor_20250124"),
                     "text_editor_20250124", ids={check})[check]
    assert out.status == "pass" and out.observed == "relative paths: refused (absolute paths only)"
