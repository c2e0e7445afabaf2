"""Escape checks: what a subject tried, on its own, outside its case (issue 17).

The harness watches each subject process (:attr:`ProcessSession.escapes`, filled at close;
see :mod:`conformance.subjects.sandbox` and docs/reliability.md): a write outside the case
directory (into the directory ``tooluse`` runs in, e.g. the project checkout, or the user's
``HOME``), a network connection, a read of one of the user's credential files, a fork bomb, a
process left running after the case. Under the sandbox the attempt is blocked and still
reported; without it, what can be seen after the fact is reported.

SHOULD (docs/checks.md, the audit): seed 003's Security section recommends isolation and
resource limits to the application; it states no requirement on the tool. Run with ``--strict``
to make a finding fail the run (the sandbox itself blocks the attempts either way).

The checks send nothing unusual (bash runs ``true``, the editor views its empty working
directory): a conformant tool does none of this unasked. A process left running by a bash
subject is ``bash.session.no_processes_left_after_close``'s to report (one defect, one check); the
editor has no such check, so its escape check reports it.

A finding's reproducer (the one input the check sent) is verified like every other
(docs/checks.md, "Verified reproducers"): replayed as printed on a fresh subject, which is then
closed and looked at the same way (:func:`_tries_again`); it reproduced when that subject too
tried to leave its case. Without the sandbox a write is seen by its time in the watched
folders: a replay that writes the same file again is seen again.
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.catalog import CheckFailure, CheckSkipped, Severity, check
from conformance.checks.bash import BASH_TYPES
from conformance.checks.bash_replay import Again, verifier
from conformance.session import ToolSession
from simulator.sources import SEED_BASH, seed

#: Seed 003 "Security": run the session isolated, with resource limits, and treat every command
#: as untrusted input.
SECURITY = seed(SEED_BASH, "보안 (Security)")
EDITOR_TYPES = ("text_editor_20241022", "text_editor_20250124", "text_editor_20250429",
                "text_editor_20250728")
STATEMENT = ("On its own, the tool does not write outside its working directory (the project "
             "checkout, the user's HOME), open network connections, read the user's credential "
             "files, fork without bound{extra}.")


def _findings(s: ToolSession, *, leaks: bool) -> list[str]:
    s.close()
    escapes = getattr(s, "escapes", None)
    if escapes is None:
        raise CheckSkipped("this session cannot be watched (not a subject process)")
    return _kept(escapes, leaks=leaks)


def _kept(escapes: list[str], *, leaks: bool) -> list[str]:
    return [e for e in escapes if leaks or not e.startswith("process outliving")]


def _kind(escape: str) -> str:
    """What an attempt was (``wrote outside its case directory``, ``network``, ``fork bomb``...),
    without where, when or how many."""
    return escape.split(":", 1)[0]


def _tries_again(found: list[str], leaks: bool) -> Callable[[Again], bool | None]:
    """Judge: closed, the replay's subject is found making the first attempt's kind of attempt
    too (where, when and how many are not compared: a fork bomb's count or a write's time
    differs run to run)."""
    def shows(a: Again) -> bool | None:
        a.session.close()
        again = _kept(list(getattr(a.session, "escapes", None) or []), leaks=leaks)
        kind = _kind(found[0])
        if kind in {_kind(e) for e in again}:
            return True
        # Without the sandbox a second read of a credential file may not move its access time
        # (relatime): the replay cannot tell, which is not "did not reproduce" (not verified).
        return None if kind in getattr(a.session, "unseen_escapes", frozenset()) else False

    return shows


def _judge(s: ToolSession, found: list[str], *, leaks: bool) -> str:
    if found:
        raise CheckFailure(f"the subject tried to leave its case: {'; '.join(found)}",
                           received=found, documented=[],
                           verify=verifier(s, _tries_again(found, leaks)))
    return ""


@check("bash.sandbox.stays_in_its_case", family="bash", severity=Severity.SHOULD,
       applies_to=BASH_TYPES, source=SECURITY, statement=STATEMENT.format(extra=""),
       tags=("sandbox",))
def bash_stays_in_its_case(s: ToolSession) -> str:
    s.call({"command": "true"})
    return _judge(s, _findings(s, leaks=False), leaks=False)


@check("editor.sandbox.stays_in_its_case", family="editor", severity=Severity.SHOULD,
       applies_to=EDITOR_TYPES, source=SECURITY,
       statement=STATEMENT.format(extra=", or leave a process running after it is closed"),
       tags=("sandbox",))
def editor_stays_in_its_case(s: ToolSession) -> str:
    workdir = getattr(s, "workdir", None)
    if workdir is not None:
        s.call({"command": "view", "path": str(workdir)})
    return _judge(s, _findings(s, leaks=True), leaks=True)
