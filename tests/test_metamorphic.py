"""Metamorphic calibration of the whole suite (issue 36): a convention the docs leave open never
changes a verdict.

``conformance/properties/conventions.py`` draws presentation variants of the plain reference
subjects (a status footer, CRLF, tail truncation, text blocks, a dead shell that asks for a
restart, tabs shown as spaces, another line-number format, absolute paths only, a split-lines
insert...: docs/checks.md "Open conventions"), composed at random. For every MUST and SHOULD
check of the family, the verdict on a drawn variant must be the verdict on the plain subject
(fail, error, skip, or not blocking: a pass, a flaky or an incomplete outcome).

A fixed number of examples from a fixed seed (every check of the family runs on each, in one
``runner.run``); on a failure, each convention of the variant is run alone against the checks
that moved, and the message names those that move them by themselves. Conventions that still
move a check, each with the check and why, are :data:`KNOWN` (strict xfails: fixed, they fail).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conformance import runner
from conformance.catalog import CATALOG, Severity
from conformance.properties.conventions import AXES, Convention, Variant, variants
from conformance.reference import REFERENCE_SUBJECTS
from conformance.results import Outcome
from conformance.subjects import factory_subject

SPEC = "conformance.properties.conventions:variant_subject"
TIMEOUT = 3.0
#: Examples per family in CI (each runs every check of the family on one variant).
BASH_EXAMPLES = 6
EDITOR_EXAMPLES = 8
#: The plain bash reference, wrapped: ``BashTool`` takes the options a truncation keeps all with.
BASH_INNER = "conformance.reference.bash:BashTool"
EDITORS = {s.tool_type: s for s in REFERENCE_SUBJECTS.values() if s.family == "editor"}
#: Every editor version the reference implements (undo_edit up to 20250124, max_characters on
#: 20250728).
EDITOR_TYPES = tuple(sorted(EDITORS))

@dataclass(frozen=True)
class Known:
    """A convention that still moves a check: ``example`` (run alone, a strict xfail below),
    ``covers`` (which drawn conventions the property does not judge on ``check_id``), why."""

    example: Convention
    check_id: str
    why: str
    covers: Callable[[Convention], bool]


def _same_choice(example: Convention) -> Callable[[Convention], bool]:
    return lambda c: (c.family, c.axis, c.choice) == (example.family, example.axis,
                                                       example.choice)


#: Conventions that still move a check, each with the check and why (empty: none). Each is a
#: strict xfail (test_a_known_exception_still_moves_its_check): when its check is recalibrated,
#: the entry must go. History: a tab shown as spaces or expanded to other stops
#: (`editor.model.agrees_with_reference_model`), `1→` and `1|` line numbers
#: (`editor.view.line_numbers`), and a shell that a syntax error ends and the tool restarts
#: (`bash.model.agrees_with_session_model`) moved their checks until issue 36's recalibrations
#: (3bf6ca7, a89fc3b).
KNOWN: tuple[Known, ...] = ()


def _judged(check_id: str) -> bool:
    return CATALOG[check_id].severity in (Severity.MUST, Severity.SHOULD)


def subject(variant: Variant, tool_type: str | None = None) -> runner.SubjectLike:
    if variant.family == "bash":
        inner, options, tt = BASH_INNER, {}, "bash_20250124"
    else:
        ref = EDITORS[tool_type or "text_editor_20250728"]
        inner, options, tt = ref.spec, dict(ref.options), ref.tool_type
    return factory_subject(SPEC, family=variant.family, tool_type=tt,
                           name=f"variant-{abs(hash(variant.to_json())) % 10**8}",
                           options={"inner": inner, "variant": variant.to_json(),
                                    "family": variant.family, **options})


#: Outcomes that do not block a run count as one verdict: a pass, an intermittent failure that
#: passed when run again alone (flaky), a model check cut short by its time cap on a loaded
#: machine (incomplete). A FAIL, an ERROR and a SKIP are verdicts of their own.
NOT_BLOCKING = {Outcome.PASS, Outcome.FLAKY, Outcome.INCOMPLETE}


def verdict(outcome: Outcome) -> str:
    return "pass" if outcome in NOT_BLOCKING else outcome.value


def verdicts(variant: Variant, tool_type: str | None = None,
             checks: list[str] | None = None) -> dict[str, tuple[str, str]]:
    """check id -> (verdict, message) for the family's MUST and SHOULD checks."""
    summary = runner.run([subject(variant, tool_type)],
                         checks=checks or [f"{variant.family}.*"], timeout=TIMEOUT, jobs=4)
    return {r.check_id: (verdict(r.outcome), r.message) for r in summary.results
            if _judged(r.check_id)}


@functools.cache
def plain(family: str, tool_type: str | None = None) -> dict[str, str]:
    return {k: v[0] for k, v in verdicts(Variant(family), tool_type).items()}


def _known(variant: Variant, check_id: str) -> bool:
    return any(k.check_id == check_id and k.covers(c) for k in KNOWN
               for c in variant.conventions)


def assert_same_verdicts(variant: Variant, tool_type: str | None = None) -> None:
    want = plain(variant.family, tool_type)
    got = verdicts(variant, tool_type)
    moved = {k: (want.get(k), got.get(k, ("absent", ""))) for k in set(want) | set(got)
             if want.get(k) != got.get(k, ("absent", ""))[0] and not _known(variant, k)}
    if not moved:
        return
    # Which conventions move those checks by themselves (a bounded shrink: one run each).
    alone: dict[str, list[str]] = {}
    for c in variant.conventions:
        one = verdicts(Variant(variant.family, (c,)), tool_type, checks=sorted(moved))
        for k in moved:
            if one.get(k, ("absent",))[0] != want.get(k):
                alone.setdefault(k, []).append(c.describe())
    lines = [f"{variant.describe()} [{tool_type or variant.family}]"]
    for k, (w, (g, msg)) in sorted(moved.items()):
        lines.append(f"  {k}: plain {w}, variant {g}; alone: {alone.get(k, ['none (a mix)'])}"
                     f"\n    {msg[:400]}")
    pytest.fail("a convention changed a verdict:\n" + "\n".join(lines))


FIXED = settings(max_examples=BASH_EXAMPLES, derandomize=True, deadline=None, database=None,
                 phases=(Phase.explicit, Phase.generate), print_blob=False,
                 suppress_health_check=list(HealthCheck))


@pytest.mark.slow(60)
@FIXED
@given(variant=variants("bash", min_size=3))
def test_a_bash_variant_gets_the_plain_verdicts(variant: Variant) -> None:
    assert_same_verdicts(variant)


@pytest.mark.slow(40)
@settings(FIXED, max_examples=EDITOR_EXAMPLES)
@given(variant=variants("editor", min_size=3), tool_type=st.sampled_from(EDITOR_TYPES))
def test_an_editor_variant_gets_the_plain_verdicts(variant: Variant, tool_type: str) -> None:
    assert_same_verdicts(variant, tool_type)


def test_every_axis_is_drawn_and_described() -> None:
    """The strategy reaches every axis; a variant survives its JSON form (the subject process
    rebuilds it from there) and describes itself in one line."""
    seen: set[tuple[str, str]] = set()

    @settings(max_examples=60, derandomize=True, database=None)
    @given(st.sampled_from(["bash", "editor"]).flatmap(variants))
    def collect(v: Variant) -> None:
        assert Variant.from_json(v.family, v.to_json()) == v
        assert "\n" not in v.describe() and v.describe().startswith(f"{v.family}: ")
        seen.update((v.family, a) for a in v.axes())

    collect()
    assert seen == {(a.family, a.name) for a in AXES}


def test_a_variant_is_plain_without_conventions() -> None:
    assert Variant("bash").describe() == "bash: plain"
    with pytest.raises(ValueError, match="unknown conventions"):
        Variant("bash", (Convention("bash", "no such axis", "x"),))
    assert json.loads(Variant("editor").to_json()) == []


@pytest.mark.parametrize("known", [
    pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=k.why),
                 id=f"{k.example.axis}={k.example.choice}-{k.check_id}") for k in KNOWN]
    or [pytest.param(None, id="none")])
def test_a_known_exception_still_moves_its_check(known: Known | None) -> None:
    """Each :data:`KNOWN` convention, alone, on its check: a strict xfail (when the check is
    recalibrated, this passes, fails as XPASS, and the entry must leave the list)."""
    if known is None:
        assert KNOWN == ()
        return
    variant = Variant(known.example.family, (known.example,))
    tool_type = None if variant.family == "bash" else "text_editor_20250728"
    got = verdicts(variant, tool_type, checks=[known.check_id])
    assert got.get(known.check_id, ("absent",))[0] == plain(variant.family, tool_type)[
        known.check_id]


def test_a_variant_wraps_any_factory(tmp_path: Path) -> None:
    """``Variant.wrap`` takes any subject factory; the conventions that need the reference's
    bash session are no-ops on a handler without one, the others apply."""
    calls: list[object] = []

    def factory(workdir: object, timeout: float = 30.0) -> object:
        def handler(tool_input: object) -> dict[str, object]:
            calls.append(tool_input)
            return {"content": "a\nb\n", "is_error": False}
        return handler

    variant = Variant("bash", (Convention("bash", "shell exit", "asks for a restart"),
                               Convention("bash", "frame", "tags"),
                               Convention("bash", "line ends", "CRLF")))
    handler = variant.wrap(factory)(tmp_path, timeout=3.0)
    out = handler({"command": "echo a; echo b"})
    assert out == {"content": "<returncode>0</returncode>\r\n<output>\r\na\r\nb\r\n\r\n</output>",
                   "is_error": False}
    assert calls == [{"command": "echo a; echo b"}]
    handler.close()


@pytest.mark.parametrize("where", ["head", "tail", "middle"])
def test_truncation_keeps_whole_lines_from_its_end_and_says_so(where: str) -> None:
    from conformance.properties.conventions import truncated

    text = "\n".join(str(i) for i in range(1, 1001))
    out = truncated(text, where, 100, 10**6, "bracketed").split("\n")
    numbers = [int(x) for x in out if x.isdigit()]
    assert len(numbers) == 100 and any("truncated" in x for x in out)
    assert {"head": numbers[0] == 1, "tail": numbers[-1] == 1000,
            "middle": numbers[0] == 1 and numbers[-1] == 1000}[where]
