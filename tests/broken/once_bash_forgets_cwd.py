"""Forgets the working directory in the first instance started for a case, and only there: it
leaves a mark file in its working directory, and an instance that finds the mark there or in a
directory above (a replay runs inside the case's directory) keeps the directory. Its
``bash.session.cwd_persists`` failure is real, but its reproducer does not reproduce, and the
report must say so (tests/test_bash_reproducers.py). Not a ``bash_*`` subject: it does not fail
the same way twice, so it is not in tests/test_bash_checks.py's set."""
from __future__ import annotations

import shlex
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool


class Forgets(BashSession):
    """Every command starts back in the case's directory (as bash_forgets_cwd.py)."""

    def script(self, command: str, sentinel: str) -> bytes:
        return f"cd {shlex.quote(str(self.workdir))}\n".encode() + super().script(command, sentinel)


class Forgetful(BashTool):
    session_class = Forgets


#: The mark the first instance leaves (a counter: its presence means "started before").
MARK = ".once-started"


def started_before(workdir: Path) -> bool:
    return any((d / MARK).exists() for d in (workdir, *workdir.parents))


def factory(workdir: Path, timeout: float = 30.0) -> BashTool:
    if started_before(workdir):
        return BashTool(workdir, timeout)
    (workdir / MARK).write_text("1\n")
    return Forgetful(workdir, timeout)
