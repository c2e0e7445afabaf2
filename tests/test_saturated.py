"""Verdicts that hold on a saturated machine (issue 21): with three busy processes per CPU
competing for every core, the conformant and reference subjects fail no MUST check and every
broken subject fails exactly its target, as on an idle machine. The subjects and expectations
are those of tests/test_conformant_bash.py, tests/test_bash_checks.py and
tests/test_editor_broken.py (which run them unloaded); here they run in one saturated run,
through the real runner (subject processes, deadlines, re-judging)."""

from __future__ import annotations

from pathlib import Path

import pytest
from broken.editor_kit import BROKEN as BROKEN_EDITORS
from saturation import saturated
from test_bash_checks import BROKEN_DIR, TARGETS
from test_conformant_bash import CONFORMANT_DIR, SUBJECTS
from test_editor_broken import MODEL_CHECK, UNDER_RUNNER

from conformance import runner
from conformance.catalog import CATALOG, Severity
from conformance.results import CheckResult, Outcome
from conformance.subjects import Subject, factory_subject

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent
EDITOR_TYPES = ("text_editor_20250124", "text_editor_20250728")


def _subjects() -> tuple[list[Subject], list[Subject], dict[str, str]]:
    """(conformant and reference subjects, broken subjects, broken subject -> its target)."""
    good: list[Subject] = [factory_subject(f"{CONFORMANT_DIR / n}.py:factory", family="bash",
                                          name=n) for n in SUBJECTS]
    good.append(factory_subject("conformance.reference.bash:factory", family="bash",
                                name="reference-bash"))
    good += [factory_subject(f"conformance.reference.editor:{t}", family="editor", tool_type=t,
                             name=f"reference-{t}") for t in EDITOR_TYPES]
    for path, cls in (("editor_split_lines", "SplitLinesInsert"),
                      ("editor_phantom_line", "PhantomLastLine"),
                      ("editor_own_error_texts", "OwnErrorTexts")):
        good.append(factory_subject(f"{HERE / 'conformant' / path}.py:{cls}.factory",
                                    family="editor", tool_type="text_editor_20250728",
                                    name=cls))
    bad: list[Subject] = [factory_subject(f"{BROKEN_DIR / n}.py:factory", family="bash", name=n)
                         for n in TARGETS]
    bad += [factory_subject(b.spec, family="editor", tool_type=b.tool_type, name=b.name,
                            options={"max_characters": 2000}
                            if b.tool_type == "text_editor_20250728" else None)
            for b in BROKEN_EDITORS if b.name in UNDER_RUNNER]
    targets = {**TARGETS, **{b.name: b.target for b in BROKEN_EDITORS if b.name in UNDER_RUNNER}}
    return good, bad, targets


def _failing(results: list[CheckResult], name: str, levels: set[Severity]) -> dict[str, str]:
    return {r.check_id: r.message[:300] for r in results if r.subject == name
            and r.outcome in (Outcome.FAIL, Outcome.ERROR)
            and CATALOG[r.check_id].severity in levels}


def test_verdicts_hold_on_a_saturated_machine() -> None:
    good, bad, targets = _subjects()
    checks = sorted(i for i in CATALOG if (i.startswith(("bash.", "editor.")))
                    and i != MODEL_CHECK)
    with saturated(per_cpu=3):
        summary = runner.run([*good, *bad], checks=checks, timeout=3.0)
    every = {Severity.MUST, Severity.SHOULD, Severity.INFO}
    false_musts = {s.name: f for s in good
                   if (f := _failing(summary.results, s.name, {Severity.MUST}))}
    assert false_musts == {}
    wrong = {s.name: f for s in bad
             if set(f := _failing(summary.results, s.name, every)) != {targets[s.name]}}
    assert wrong == {}
    # What re-judging did is visible (and each re-judged result says how it ended).
    for r in summary.results:
        if r.rejudged:
            assert r.rejudged["repeated"] is (r.outcome is Outcome.FAIL)
    print(f"{len(summary.results)} results in {summary.duration:.0f}s; re-judged: "
          + "; ".join(f"{r.check_id}[{r.subject}]: {r.rejudged}" for r in summary.results
                      if r.rejudged))
