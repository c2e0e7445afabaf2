"""Forgets the working directory once per run, in the first instance started for a case, as a
race would: it leaves a mark in the run directory (``tooluse-run-*``; outside a run, in the
folder ``$TOOLUSE_ONCE_MARK`` names, else its own working directory), and any instance that finds
the mark there keeps the directory. Its
``bash.session.cwd_persists`` failure is real but intermittent: the reproducer replayed on a
fresh subject does not show it, and the check run again alone (in the same run directory)
passes: the result is ``flaky``, not FAIL (issue 36; tests/test_flaky.py). Compare
``once_bash_forgets_cwd.py``, which forgets in every case's first instance (a failure every
time the case runs), and ``bash_forgets_cwd.py`` (always). Not a ``bash_*`` subject."""
from __future__ import annotations

import os
import shlex
from pathlib import Path

from conformance.reference.bash import BashSession, BashTool


class Forgets(BashSession):
    """Every command starts back in the case's directory (as bash_forgets_cwd.py)."""

    def script(self, command: str, sentinel: str) -> bytes:
        return f"cd {shlex.quote(str(self.workdir))}\n".encode() + super().script(command, sentinel)


class Forgetful(BashTool):
    session_class = Forgets

#: The mark the first instance of a run leaves.
MARK = ".once-per-run-started"


def where(workdir: Path) -> Path:
    given = os.environ.get("TOOLUSE_ONCE_MARK")  # a test's own folder (pytest items: no run)
    fallback = Path(given) if given else workdir
    return next((p for p in workdir.parents if p.name.startswith("tooluse-run-")), fallback)


def factory(workdir: Path, timeout: float = 30.0) -> BashTool:
    mark = where(workdir) / MARK
    if mark.exists():
        return BashTool(workdir, timeout)
    mark.write_text("1\n")
    return Forgetful(workdir, timeout)
