"""Loses one answer's output, once per case: the first command that reads the session state back
(the model check's read-back, its ``@cwd=`` line) is run, but answered with only the notice
OpenHands' subprocess terminal printed under load (``[Previous command outputs are truncated.
...]``) and none of the output. The instance that does it leaves a mark file in the directory
above its working directory (the case's directory, for a model check's example) and in its own;
an instance that finds the mark in its directory or one above answers in full, so the model
check's shrinking and the replay of its reproducer on a fresh subject do not see it again (the
finding "did not reproduce"). What issue 21's rule makes of it: only a failure that repeats is a
FAIL (tests/test_bash_model.py). Not a ``bash_*`` subject: it does not fail the same way twice."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.reference.bash import BashTool

#: The mark an instance leaves once it has lost an answer.
MARK = ".once-lost-output"
#: What the answer holds instead of the output (OpenHands' notice, as the matrix saw it).
NOTICE = ("[Previous command outputs are truncated. Showing the last 2 lines of the output "
          "below.]\n")


def lost_before(workdir: Path) -> bool:
    return any((d / MARK).exists() for d in (workdir, *workdir.parents))


class LosesOnce(BashTool):
    def __init__(self, workdir: Path, timeout: float = 30.0) -> None:
        super().__init__(workdir, timeout)
        self.workdir = workdir

    def __call__(self, tool_input: Any) -> dict[str, Any]:
        answer = super().__call__(tool_input)
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        if isinstance(command, str) and "@cwd=" in command and not lost_before(self.workdir):
            for where in (self.workdir, self.workdir.parent):
                (where / MARK).write_text("1\n")
            return {"content": NOTICE, "is_error": False}
        return answer


def factory(workdir: Path, timeout: float = 30.0) -> BashTool:
    return LosesOnce(workdir, timeout)
