"""The run's summary on the terminal: what did not pass (with reproducers and the command that
reruns each), then counts per subject and the verdict (``tooluse run`` prints it)."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from functools import partial
from typing import Any, TextIO

from conformance.basis import basis_lines
from conformance.catalog import CATALOG
from conformance.reports.render_common import reproducer_setup, reproducer_verification
from conformance.reports.rerun import rerun_line
from conformance.results import Outcome, rejudged_note
from conformance.wording import plural

MARK = {Outcome.PASS: "PASS", Outcome.FAIL: "FAIL", Outcome.SKIP: "skip", Outcome.ERROR: "ERROR",
        Outcome.INCOMPLETE: "INCOMPLETE", Outcome.FLAKY: "FLAKY", Outcome.NOT_RUN: "NOT RUN"}


def readable(value: Any, limit: int = 400) -> str:
    """JSON, readable: non-ASCII text kept, invisible characters escaped, long values cut. A
    text that reads as itself (one line, every character printable, no space at either end: a
    model check's ``success "..."; file now empty``) is shown as it is, not as a JSON string."""
    if (isinstance(value, str) and value and value == value.strip()
            and all(c.isprintable() for c in value)):
        return value if len(value) <= limit else value[:limit] + f"… [{len(value)} chars]"
    text = "".join(
        c if c.isprintable() or c == " " else json.dumps(c)[1:-1] if ord(c) < 0x10000
        else c for c in json.dumps(value, ensure_ascii=False, default=repr))
    return text if len(text) <= limit else text[:limit] + f"… [{len(text)} chars]"


#: Where a failure's lines start, under its ``FAIL  MUST  check-id`` line.
INDENT = " " * 6


def indented(text: str, indent: str = INDENT) -> str:
    """``text`` with every line under the failure's heading: a message of several lines (a
    model check's, the disagreements after the first) keeps the block's indentation."""
    return "\n".join(indent + line if line.strip() else "" for line in text.splitlines() or [""])


def print_summary(summary: Any, out: TextIO, *, skip: Collection[str] = ()) -> None:
    """A readable summary: what did not pass (with reproducers), then counts and the verdict.
    Subjects in ``skip`` (they never started) get their counts line only."""
    blocking = {id(r) for r in summary.blocking()}
    rerun = _rerun_commands(summary.plan)
    for r in summary.results:
        if r.subject in skip:
            continue
        if r.outcome is Outcome.PASS:
            if r.rejudged:  # a failure on time that did not repeat: said, never a silent pass
                print(f"PASS  {r.severity:6} {r.check_id}  [{r.subject}] (re-judged)", file=out)
                print(f"      {rejudged_note(r.rejudged)}", file=out)
            continue
        tag = ("" if r.outcome in (Outcome.SKIP, Outcome.INCOMPLETE, Outcome.NOT_RUN)
               or id(r) in blocking else " (not blocking)")
        print(f"{MARK[r.outcome]:5} {r.severity:6} {r.check_id}  [{r.subject}]{tag}", file=out)
        print(indented(r.message), file=out)
        if r.rejudged:
            print(f"      {rejudged_note(r.rejudged)}", file=out)
        if r.outcome in (Outcome.FAIL, Outcome.ERROR, Outcome.FLAKY):
            chk = CATALOG.get(r.check_id)
            if chk is not None:
                print(f"      source:     {chk.source.cite()}", file=out)
                for line in basis_lines(chk.basis_json()):
                    print(f"      {line}", file=out)
            if r.received is not None:
                print(f"      received:   {readable(r.received)}", file=out)
            if r.documented is not None:
                print(f"      documented: {readable(r.documented)}", file=out)
            if r.reproducer:
                note = ("; $TOOLUSE_WORKDIR is the case's directory"
                        if "$TOOLUSE_WORKDIR" in json.dumps(r.reproducer) else "")
                what = {"loop": "the requests the loop sent",
                        "worker": "the requests the worker sent"}.get(r.family, "tool inputs")
                for line in reproducer_setup(r.to_json()):
                    print(f"      {line}", file=out)
                print(f"      reproducer ({what}, in order{note}):", file=out)
                for inp in r.reproducer[:12]:
                    print(f"        {readable(inp, 200)}", file=out)
                for line in reproducer_verification(r.to_json()):
                    print(f"      {line}", file=out)
            again = rerun.get(r.subject)
            if again is not None:
                print(f"      rerun: {again(r.check_id)}", file=out)
    print(file=out)
    for s in summary.plan.subjects:
        mine = [r for r in summary.results if r.subject == s.name]
        if s.name in skip:
            print(f"{s.name} ({s.tool_type}): {plural(len(mine), 'check')}: none ran, it did "
                  "not start "
                  "(below)", file=out)
            continue
        counts = {o: sum(r.outcome is o for r in mine) for o in Outcome}
        text = ", ".join(f"{counts[o]} {o.value}" for o in Outcome if counts[o])
        print(f"{s.name} ({s.tool_type}): {plural(len(mine), 'check')}: {text or 'none apply'}",
              file=out)
    c = summary.counts()
    blocked = summary.blocking()
    verdict = "FAIL" if blocked else "PASS" if summary.ok else "INCOMPLETE"
    rule = "every MUST and SHOULD" if summary.strict else "every MUST"
    if getattr(summary, "fail_on_flaky", False):
        rule += ", not flaky,"
    rare = "".join(f"{c[k]} {word}, " for k, word in (
        ("incomplete", "incomplete"), ("flaky", "flaky (intermittent)"), ("not-run", "not run"))
        if c.get(k))
    print(f"{verdict}: {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped, {rare}"
          f"{plural(c['error'], 'harness error')} in {summary.duration:.1f}s ({rule} check must "
          f"pass; {len(blocked)} {'does' if len(blocked) == 1 else 'do'} not)", file=out)
    startup = getattr(summary, "startup", None)
    said = startup.text() if startup is not None else ""
    if said:
        print(said, file=out)


def _rerun_commands(plan: Any) -> dict[str, Callable[[str], str]]:
    """subject name -> check id -> the one-line command that reruns that check alone."""
    out: dict[str, Callable[[str], str]] = {}
    for s in plan.info.subjects:
        if rerun_line(plan.settings, s.to_json(), "x.y"):
            out[s.name] = partial(rerun_line, plan.settings, s.to_json())
    return out
