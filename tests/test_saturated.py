"""Verdicts that hold on a saturated machine (issue 21): with three busy processes per CPU
competing for every core, the conformant and reference subjects fail no MUST check and every
broken subject fails exactly its target, as on an idle machine. The subjects and expectations
are those of tests/test_conformant_bash.py, tests/test_bash_checks.py and
tests/test_editor_broken.py (which run them unloaded); here they run saturated, through the real
runner (subject processes, deadlines, re-judging).

The default run (``nox -s tests``) takes bash subjects whose verdicts rest on time: a
conformant subject with a stdin deadline (0 MUST failures), a subject with no timeout and one
whose background job hangs the session (exactly their target), against every bash check but the
model check. It saturates ONE CPU (tests/saturation.py, pinned): the test process, the subjects
the runner starts and 3 busy loops share that CPU (the per-core contention of 3 loops per CPU),
and the other pytest-xdist workers keep the other CPUs, instead of 6 loops slowing the whole
suite for a minute. Every subject of tests/conformant/ and tests/broken/ (bash and editors) runs
saturated with ``TOOLUSE_SATURATED=all`` (``nox -s saturated``; minutes on two cores, run alone):
there both tests saturate the whole machine (3 unpinned loops per CPU), as the runner's parallel
cases then compete on every core."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from broken.editor_kit import BROKEN as BROKEN_EDITORS
from saturation import Saturation, affinity, saturated
from test_bash_checks import BROKEN_DIR, TARGETS
from test_conformant_bash import CONFORMANT_DIR, SUBJECTS
from test_editor_broken import MODEL_CHECK, UNDER_RUNNER

from conformance import runner
from conformance.catalog import CATALOG, Severity
from conformance.results import CheckResult, Outcome
from conformance.subjects import Subject, factory_subject, forkserver
from conformance.subjects.case import CaseSettings

HERE = Path(__file__).resolve().parent
EDITOR_TYPES = ("text_editor_20250124", "text_editor_20250728")
CONFORMANT_EDITORS = (("editor_split_lines", "SplitLinesInsert"),
                      ("editor_phantom_line", "PhantomLastLine"),
                      ("editor_own_error_texts", "OwnErrorTexts"),
                      ("editor_size_limit", "SizeLimited"))
#: The default run's subjects: bash subjects whose verdicts rest on time (a stdin deadline, a
#: missing timeout, a background job that hangs the session), against every bash check but the
#: model check (its examples are minutes saturated; the full sweep runs it). Small on purpose:
#: while it runs, the busy processes slow every other test of the suite as well.
TIMED_GOOD = ("bash_stdin_deadline",)
TIMED_BAD = ("bash_no_timeout", "bash_background_hangs")
BASH_MODEL_CHECK = "bash.model.agrees_with_session_model"
EVERY = {Severity.MUST, Severity.SHOULD, Severity.INFO}
FULL = os.environ.get("TOOLUSE_SATURATED") == "all"


def _good() -> list[Subject]:
    """The conformant subjects of tests/conformant/ and the references."""
    good = [factory_subject(f"{CONFORMANT_DIR / n}.py:factory", family="bash", name=n)
            for n in SUBJECTS]
    good.append(factory_subject("conformance.reference.bash:factory", family="bash",
                                name="reference-bash"))
    good += [factory_subject(f"conformance.reference.editor:{t}", family="editor", tool_type=t,
                             name="reference-editor" if t == EDITOR_TYPES[-1] else t)
             for t in EDITOR_TYPES]
    good += [factory_subject(f"{HERE / 'conformant' / path}.py:{cls}.factory", family="editor",
                             tool_type="text_editor_20250728", name=cls)
             for path, cls in CONFORMANT_EDITORS]
    return good


def _bad() -> tuple[list[Subject], dict[str, str]]:
    """The broken subjects of tests/broken/ (bash, and the editors test_editor_broken runs
    through the runner) and the one check each targets."""
    bad = [factory_subject(f"{BROKEN_DIR / n}.py:factory", family="bash", name=n)
           for n in TARGETS]
    bad += [factory_subject(b.spec, family="editor", tool_type=b.tool_type, name=b.name,
                            options={"max_characters": 2000}
                            if b.tool_type == "text_editor_20250728" else None)
            for b in BROKEN_EDITORS if b.name in UNDER_RUNNER]
    targets = {**TARGETS, **{b.name: b.target for b in BROKEN_EDITORS if b.name in UNDER_RUNNER}}
    return bad, targets


def _failing(results: list[CheckResult], name: str, levels: set[Severity]) -> dict[str, str]:
    return {r.check_id: r.message[:300] for r in results if r.subject == name
            and r.outcome in (Outcome.FAIL, Outcome.ERROR)
            and CATALOG[r.check_id].severity in levels}


def _judge(good: list[Subject], bad: list[Subject], targets: dict[str, str],
           load: Saturation, *, checks: list[str] | None = None) -> None:
    """Run both sets saturated and judge them as on an idle machine: the conformant ones against
    ``checks`` (default: every bash and editor check), the broken ones against the same but the
    editor model check (as test_editor_broken does)."""
    family = checks or sorted(i for i in CATALOG if i.startswith(("bash.", "editor.")))
    runs = [(good, family), (bad, [i for i in family if i != MODEL_CHECK])]
    if runs[0][1] == runs[1][1]:  # one run: the good subjects' work overlaps the bad ones' waits
        runs = [(good + bad, family)]
    results = []
    for subjects, ids in runs:
        if subjects:
            summary = runner.run(subjects, checks=ids, timeout=3.0)
            results += summary.results
            print(f"{len(summary.results)} results in {summary.duration:.0f}s")
    load.check()  # the machine really was saturated all along
    print(load.describe())
    false_musts = {s.name: f for s in good if (f := _failing(results, s.name, {Severity.MUST}))}
    assert false_musts == {}
    wrong = {s.name: f for s in bad
             if set(f := _failing(results, s.name, EVERY)) != {targets[s.name]}}
    assert wrong == {}
    # What re-judging did is visible (and each re-judged result says how it ended).
    for r in results:
        if r.rejudged and r.rejudged.get("by") != "threads":  # threads: whether the error came
            assert r.rejudged["repeated"] is (r.outcome is Outcome.FAIL)  # again (rejudge.rejudge)
    print("re-judged: " + "; ".join(f"{r.check_id}[{r.subject}]: {r.rejudged}"
                                    for r in results if r.rejudged))


def _subject_affinity(subject: Subject) -> set[int] | None:
    """The CPUs a freshly started ``subject`` process may run on (started as the runner starts
    one: through the fork server, in a ``tooluse-run-*`` directory)."""
    with tempfile.TemporaryDirectory(prefix="tooluse-run-") as root:
        work = Path(root).resolve() / "case-0"
        work.mkdir()
        session = subject.open(work, CaseSettings(timeout=3.0, startup_timeout=30.0))
        try:
            session.wait_ready(30.0)
            return affinity(session.proc.pid)
        finally:
            session.close()
            forkserver.shutdown()


@pytest.mark.slow(50)  # busy loops for most of a minute: scheduled first under -n N
def test_timed_verdicts_hold_on_a_saturated_machine() -> None:
    """The bash subjects whose verdicts rest on time, with 3 busy processes on their CPU."""
    good = [s for s in _good() if s.name in TIMED_GOOD]
    bad, targets = _bad()
    bad = [s for s in bad if s.name in TIMED_BAD]
    assert {s.name for s in good} == set(TIMED_GOOD) and {s.name for s in bad} == set(TIMED_BAD)
    checks = sorted(i for i in CATALOG if i.startswith("bash.") and i != BASH_MODEL_CHECK)
    before = affinity(0)
    with saturated(per_cpu=3, pin=not FULL) as load:
        # A subject started in the block runs where the busy loops do (pinned: on their CPU).
        assert _subject_affinity(good[0]) == (load.cpus or before)
        _judge(good, bad, targets, load, checks=checks)
    assert affinity(0) == before  # the test process has its CPUs back


@pytest.mark.skipif(not FULL, reason="every conformant and broken subject saturated: minutes; "
                                     "`nox -s saturated` (TOOLUSE_SATURATED=all) runs it")
def test_every_verdict_holds_on_a_saturated_machine() -> None:
    """Every conformant, reference and broken bash and editor subject, saturated."""
    bad, targets = _bad()
    with saturated(per_cpu=3, pin=False) as load:  # the whole machine (module docstring)
        _judge(_good(), bad, targets, load)
