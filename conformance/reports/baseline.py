"""Expected-failure baselines (``--expected-failures FILE``).

A baseline lists known failures, one per line: ``check-id`` (any subject) or
``subject:check-id`` (split on the last ``:``, so subject names may contain colons); ``#`` starts a
comment. Known failures do not fail the run; new failures do; an entry whose checks now pass is
*stale* and fails the run too, so the baseline shrinks as the implementation gets fixed.

A flaky result (an intermittent failure) counts as a failure only under ``--fail-on-flaky``:
then an entry lists it like a failure. Without the flag it fails nothing, and an entry for it
is not stale either (the defect is still there, only intermittent).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import ToolUseError
from conformance.results import CheckResult, Outcome
from conformance.wording import plural

from .results_file import gating


class BaselineError(ToolUseError, ValueError):
    """A baseline file that cannot be read: which file, which line, what is wrong."""


@dataclass(frozen=True)
class BaselineEntry:
    check_id: str
    subject: str | None = None
    line: int = 0

    def matches(self, result: CheckResult) -> bool:
        return result.check_id == self.check_id and self.subject in (None, result.subject)

    def __str__(self) -> str:
        return f"{self.subject}:{self.check_id}" if self.subject else self.check_id


@dataclass
class Baseline:
    entries: list[BaselineEntry] = field(default_factory=list)
    path: Path | None = None


def parse_baseline(text: str, path: str | Path = "<baseline>") -> Baseline:
    entries: list[BaselineEntry] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if any(ch.isspace() for ch in line):
            raise BaselineError(f"{path}:{n}: {line!r}: one entry per line, `check-id` or "
                                "`subject:check-id` (put explanations after a `#`)")
        subject, _, check_id = line.rpartition(":")
        if not check_id or (":" in line and not subject):
            raise BaselineError(f"{path}:{n}: {line!r}: empty subject or check id; write "
                                "`check-id` or `subject:check-id`")
        if "." not in check_id:
            raise BaselineError(f"{path}:{n}: {check_id!r} is not a check id (ids look like "
                                "`editor.str_replace.multiple_matches`; `tooluse checks` lists them)")
        entry = BaselineEntry(check_id, subject or None, n)
        if str(entry) in seen:
            raise BaselineError(f"{path}:{n}: {entry} is listed twice (first on line "
                                f"{seen[str(entry)]}); remove one")
        seen[str(entry)] = n
        entries.append(entry)
    return Baseline(entries, Path(path) if path != "<baseline>" else None)


def load_baseline(path: str | Path) -> Baseline:
    p = Path(path)
    try:
        return parse_baseline(p.read_text(encoding="utf-8"), p)
    except FileNotFoundError:
        raise BaselineError(f"{p}: expected-failures file not found") from None
    except UnicodeDecodeError:
        raise BaselineError(f"{p}: not UTF-8 text") from None


def _failing(r: CheckResult, fail_on_flaky: bool = False) -> bool:
    return r.outcome in (Outcome.FAIL, Outcome.ERROR) or (fail_on_flaky
                                                          and r.outcome is Outcome.FLAKY)


@dataclass
class BaselineVerdict:
    #: Failures the baseline lists.
    known: list[CheckResult] = field(default_factory=list)
    #: Failures that fail the run and the baseline does not list.
    new: list[CheckResult] = field(default_factory=list)
    #: Entries that no longer fail (and passed at least once): remove them from the file.
    stale: list[BaselineEntry] = field(default_factory=list)
    #: Entries that matched nothing in this run (subject or check not run): a warning only.
    unmatched: list[BaselineEntry] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.new and not self.stale

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def is_known(self, subject: str, check_id: str) -> bool:
        return any(r.subject == subject and r.check_id == check_id for r in self.known)

    def to_json(self) -> dict[str, Any]:
        def key(r: CheckResult) -> str:
            return f"{r.subject}:{r.check_id}"

        return {"ok": self.ok, "known": [key(r) for r in self.known],
                "new": [key(r) for r in self.new], "stale": [str(e) for e in self.stale],
                "unmatched": [str(e) for e in self.unmatched]}

    def lines(self) -> list[str]:
        """Human-readable verdict lines for the terminal and the reports."""
        out = [f"baseline: {plural(len(self.known), 'known failure')}, {len(self.new)} new, "
               f"{plural(len(self.stale), 'stale entry', 'stale entries')}"]
        out += [f"  NEW   {r.subject}:{r.check_id} ({r.severity} {r.outcome})" for r in self.new]
        out += [f"  STALE {e} (line {e.line}) now passes: remove it from the baseline"
                for e in self.stale]
        out += [f"  note: {e} (line {e.line}) matched nothing in this run" for e in self.unmatched]
        return out


def apply_baseline(results: Iterable[CheckResult], baseline: Baseline, *,
                   strict: bool = False, fail_on_flaky: bool = False) -> BaselineVerdict:
    """Split a run's failures into known and new, and find stale baseline entries.

    A failure (or harness error) is *new* when it would fail the run (a MUST check, a SHOULD one
    under ``strict``) and no entry lists it. Listed SHOULD/INFO failures count as known too.
    A flaky result is a failure here under ``fail_on_flaky`` only; an entry whose results are
    flaky is never stale.
    """
    results = list(results)
    verdict = BaselineVerdict()
    for r in results:
        if not _failing(r, fail_on_flaky):
            continue
        if any(e.matches(r) for e in baseline.entries):
            verdict.known.append(r)
        elif gating(r.severity, strict=strict):
            verdict.new.append(r)
    for e in baseline.entries:
        matched = [r for r in results if e.matches(r)]
        if not matched:
            verdict.unmatched.append(e)
        elif not any(_failing(r) or r.outcome is Outcome.FLAKY for r in matched) and any(
                r.outcome is Outcome.PASS for r in matched):
            verdict.stale.append(e)
    return verdict
