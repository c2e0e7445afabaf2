"""Results of a conformance run: the records the runner produces and the writers consume.

The engine emits :class:`CheckResult` records; ``results.json`` (versioned schema), JUnit, Markdown
and HTML writers read them. Harness faults (``error``) are kept apart from subject faults (``fail``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    #: The harness itself broke (not the subject's fault).
    ERROR = "error"
    #: The check could not finish its fixed amount of work within its hard time cap (a
    #: property or model check on a very slow subject or machine): neither a failure nor a pass,
    #: never blocking; the message says how far it got.
    INCOMPLETE = "incomplete"
    #: The case never ran: its subject did not start in any case of the run (the command is
    #: wrong, or the subject cannot start where it runs). No verdict on the check, never a
    #: failure; the run has no verdict either (``tooluse run`` exits 2).
    NOT_RUN = "not-run"
    #: An intermittent failure: the check failed, its reproducer replayed on a fresh subject did
    #: not show it again, and the check run again alone passed. ``rejudged`` keeps both
    #: observations. A verdict of its own, shown in every report; it does not fail the run
    #: unless the run says ``--fail-on-flaky``.
    FLAKY = "flaky"


def blocks(outcome: str, severity: str, *, strict: bool = False,
           fail_on_flaky: bool = False) -> bool:
    """Does a result fail the run? A gating check (MUST; SHOULD too under ``strict``) that
    failed or hit a harness error, or (``fail_on_flaky``) came out flaky. A case that never
    ran (``not-run``) is no failure: the run then has no verdict (see :func:`run_verdict`)."""
    if severity != "MUST" and not (strict and severity == "SHOULD"):
        return False
    return outcome in (Outcome.FAIL.value, Outcome.ERROR.value) or (
        fail_on_flaky and outcome == Outcome.FLAKY.value)


def run_verdict(outcomes: list[str], blocking: int, *, complete: bool) -> str:
    """``fail`` when a result blocks; else ``incomplete`` when the run stopped early or a case
    never ran (no verdict on it); else ``pass``."""
    if blocking:
        return "fail"
    if not complete or Outcome.NOT_RUN.value in outcomes:
        return "incomplete"
    return "pass"


#: :attr:`CheckResult.reproduced` values: the reproducer was replayed, exactly as printed, on a
#: fresh subject in a fresh directory before it was reported (a loop or worker check, whose
#: reproducer is what the subject sent: the check was run again on a fresh loop or worker,
#: :mod:`conformance.rechecks`), and showed the failure again...
VERIFIED = "verified"
#: ... or did not (the failure may depend on timing or on state the reproducer does not set up).
NOT_REPRODUCED = "did not reproduce"


@dataclass
class CheckResult:
    check_id: str
    subject: str
    tool_type: str
    family: str
    severity: str
    outcome: Outcome
    duration: float = 0.0
    message: str = ""
    received: Any = None
    documented: Any = None
    #: Replayable list of tool inputs (or requests) that shows the failure.
    reproducer: list[Any] = field(default_factory=list)
    #: What the reproducer plants behind the subject's back, each before the input it names:
    #: ``{"before_input": 1, "path": ..., "text" | "bytes" | "directory" | "symlink_to": ...}``
    #: (see :mod:`conformance.reproducers`). Paths use the same placeholders as the inputs.
    setup: list[dict[str, Any]] = field(default_factory=list)
    #: :data:`VERIFIED`, :data:`NOT_REPRODUCED`, or empty (the reproducer was not replayed: no
    #: fresh subject could be started, or its replay broke; the message says why).
    reproduced: str = ""
    #: What the check saw the subject do where the docs leave a choice (the convention it
    #: follows, e.g. "new_str ending in \\n inserts the lines as written"); a check states it by
    #: returning a string. Empty when the check has nothing to report.
    observed: str = ""
    #: Set when the result rested on a deadline and was re-judged: the case was run again,
    #: alone, after the run (see :func:`rejudged_note`); or (``by: "replay"``) when a model
    #: check's every finding, replayed on a fresh subject, did not repeat
    #: (:class:`conformance.catalog.Rejudged`; ``alone``: the check then run again alone);
    #: or (``by: "rerun"``) when a failure's reproducer did not reproduce and the case was run
    #: again alone (flaky when it passed). Absent from the JSON when None.
    rejudged: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["outcome"] = self.outcome.value
        if self.rejudged is None:
            del d["rejudged"]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CheckResult:
        """The inverse of :meth:`to_json` (extra keys, e.g. a check's statement, are ignored)."""
        return cls(
            check_id=str(d["check_id"]), subject=str(d["subject"]),
            tool_type=str(d.get("tool_type", "")), family=str(d.get("family", "")),
            severity=str(d.get("severity", "")), outcome=Outcome(d["outcome"]),
            duration=float(d.get("duration") or 0.0), message=str(d.get("message") or ""),
            received=d.get("received"), documented=d.get("documented"),
            reproducer=list(d.get("reproducer") or []),
            setup=list(d.get("setup") or []), reproduced=str(d.get("reproduced") or ""),
            observed=str(d.get("observed") or ""),
            rejudged=d.get("rejudged") if isinstance(d.get("rejudged"), dict) else None,
        )


def rejudged_note(j: dict[str, Any] | None) -> str:
    """One line for the reports: how a result that rested on a deadline was re-judged (both
    timings), how a model check's findings were re-judged by replay (``by: "replay"``), or how a
    harness error of the run's threads was (``by: "threads"``), from its ``rejudged`` record;
    ``""`` for a result that was not."""
    if not j:
        return ""
    first, rerun = j.get("first") or {}, j.get("rerun") or {}
    alone = j.get("alone")
    if j.get("by") == "replay":  # a model check's findings, each replayed on a fresh subject
        head = (f"re-judged by replay: {first.get('outcome', 'fail')} in the run "
                f"({first.get('message') or 'disagreements'}); each reproducer, replayed "
                f"exactly as printed on a fresh subject, did not show it again")
        if not isinstance(alone, dict):
            return (f"{head} — the failure did not repeat: not counted as a failure (it may "
                    "rest on timing or load)")
        if j.get("repeated"):
            return (f"{head}; re-run alone after the run: {alone.get('outcome', 'fail')} "
                    f"({float(alone.get('duration') or 0):.1f}s), a disagreement verified on a "
                    "fresh subject — the failure repeats")
        return (f"{head}; re-run alone after the run: {alone.get('outcome', '?')} "
                f"({float(alone.get('duration') or 0):.1f}s) — flaky: an intermittent failure "
                "(not blocking unless --fail-on-flaky)")
    if j.get("by") == "rerun":  # a fixed check's failure whose reproducer did not reproduce
        head = (f"{first.get('outcome', 'fail')} in the run "
                f"({float(first.get('duration') or 0):.1f}s: "
                f"{str(first.get('message') or '')[:300]}); its reproducer, replayed exactly as "
                "printed on a fresh subject, did not show it")
        if j.get("repeated"):
            return (f"re-run alone: {head}; re-run alone after the run: "
                    f"{rerun.get('outcome', 'fail')} ({float(rerun.get('duration') or 0):.1f}s)"
                    " — the failure repeats")
        return (f"flaky: {head}; re-run alone after the run: {rerun.get('outcome', '?')} "
                f"({float(rerun.get('duration') or 0):.1f}s) — an intermittent failure (not "
                "blocking unless --fail-on-flaky)")
    if j.get("by") == "threads":  # a harness error of running cases concurrently
        return (f"re-judged alone: {first.get('outcome', 'error')} in the run "
                f"({str(first.get('message') or '')[:200]}), an error CPython 3.11 can raise when "
                f"cases run in threads; re-run alone after the run: {rerun.get('outcome', '?')}"
                + (" — the error repeats" if j.get("repeated") else ""))
    misses = "; ".join(str(m) for m in first.get("misses") or [])
    head = (f"re-judged on time: {first.get('outcome', 'fail')} in the run "
            f"({float(first.get('duration') or 0):.1f}s{'; ' + misses if misses else ''})")
    if j.get("repeated"):
        return (f"{head}; re-run alone after the run: {rerun.get('outcome', 'fail')} again "
                f"({float(rerun.get('duration') or 0):.1f}s) — the failure repeats")
    return (f"{head}; re-run alone after the run: {rerun.get('outcome', '?')} "
            f"({float(rerun.get('duration') or 0):.1f}s) — the failure did not repeat: the "
            "machine was too busy, not counted as a failure")


@dataclass
class SubjectInfo:
    name: str
    family: str
    tool_type: str
    spec: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SubjectInfo:
        return cls(str(d["name"]), str(d.get("family", "")), str(d.get("tool_type", "")),
                   str(d.get("spec", "")))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class RunInfo:
    """Metadata of one run, handed to listeners when it starts (written into ``results.json``)."""

    subjects: list[SubjectInfo] = field(default_factory=list)
    #: The hypothesis seed the run used (None: hypothesis chose).
    seed: int | None = None
    started_at: str = field(default_factory=_now)
    #: SHOULD checks count like MUST ones (``--strict``).
    strict: bool = False
    #: The fixture corpus (directory) the run replayed, if any.
    fixtures: str | None = None
    argv: list[str] = field(default_factory=list)
    #: How many (check, subject) cases the run plans, for progress (None: unknown).
    planned: int | None = None
    #: Flaky results fail the run like failures (``--fail-on-flaky``).
    fail_on_flaky: bool = False
    #: ``--shard K/N``: which shard, and the whole plan it is a part of (``ShardPlan.to_json``).
    shard: dict[str, Any] | None = None


class RunListener(Protocol):
    """What the runner calls while a run goes; report writers and progress implement it.

    ``on_check_started`` is optional for the runner to call (progress shows the current check).
    ``on_run_finished(complete=False)`` means the run was interrupted.
    """

    def on_run_started(self, run: RunInfo) -> None: ...

    def on_check_started(self, check_id: str, subject: str) -> None: ...

    def on_check_finished(self, result: CheckResult) -> None: ...

    # Optional too: ``on_run_startup(stats)``, just before ``on_run_finished``, with what starting
    # the subjects cost (:class:`~conformance.subjects.pool.StartStats`).

    def on_run_finished(self, *, complete: bool) -> None: ...
