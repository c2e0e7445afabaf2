"""A subject that never answers costs seconds, not minutes, and says why (issue 41).

The most common first mistake: a Python command subject writing its answers to a block-buffered
stdout. It reads the readiness call and waits for the next line, its answer in its own buffer.
The readiness call sees that at once (:mod:`conformance.subjects.silence`) and says "is stdout
buffered?"; once a subject's start has failed for good before it started anywhere, its other cases
are not started; and a CI log hears from the run at least every ten seconds."""

from __future__ import annotations

import io
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance import runner
from conformance.reports import progress
from conformance.results import Outcome, RunInfo
from conformance.subjects import command_subject, silence
from conformance.subjects.launch import Confinement

BUFFERED = """\
import json, pathlib, sys
with open(sys.argv[1], "a") as f:
    f.write("started\\n")
for line in sys.stdin:
    print(json.dumps({"content": "ok", "is_error": False}))  # never flushed: a pipe buffers it
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the silence is read from /proc (Linux)")


def test_waiting_on_input_holds_once_the_input_is_read_and_not_before() -> None:
    reader = subprocess.Popen([sys.executable, "-c", "import sys, time; time.sleep(0.5); "
                               "sys.stdin.readline(); sys.stdin.readline()"],
                              stdin=subprocess.PIPE)
    try:
        assert reader.stdin is not None
        reader.stdin.write(b"one line\n")
        reader.stdin.flush()
        assert silence.unread_bytes(reader.stdin.fileno()) == 9
        assert not silence.waiting_on_input([reader.pid], reader.stdin.fileno())  # not read yet
        deadline = time.monotonic() + 30
        while not silence.waiting_on_input([reader.pid], reader.stdin.fileno()):
            assert time.monotonic() < deadline, "the reader never waited for its second line"
            time.sleep(0.05)
        assert silence.unread_bytes(reader.stdin.fileno()) == 0
    finally:
        reader.kill()
        reader.wait()


def test_a_busy_subject_is_not_waiting_on_input() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                            stdin=subprocess.PIPE)
    try:
        assert busy.stdin is not None
        time.sleep(0.3)
        assert not silence.waiting_on_input([busy.pid], busy.stdin.fileno())  # asleep, not reading
    finally:
        busy.kill()
        busy.wait()


def test_a_buffered_subject_fails_its_start_with_the_hint_and_its_other_cases_never_start(
        tmp_path: Path) -> None:
    script, starts = tmp_path / "buffered.py", tmp_path / "starts.txt"
    script.write_text(BUFFERED, encoding="utf-8")
    subject = command_subject(f"{shlex.quote(sys.executable)} {script} {starts}", family="bash",
                              name="buffered")
    jobs = 2
    # no sandbox: the subject counts its starts in a file outside its case
    summary = runner.run([subject], checks=["bash.*"], timeout=5, jobs=jobs,
                         confinement=Confinement(mode="off"))
    assert summary.results and all(r.outcome is Outcome.NOT_RUN for r in summary.results)
    said = summary.never_started()["buffered"]
    assert silence.HINT in said and runner.NOT_STARTED_AGAIN not in said
    started = len(starts.read_text(encoding="utf-8").splitlines())
    # the cases running when the first start failed, and no more (each started once, or twice
    # with a preflight's own start): far fewer than the family's cases
    assert started <= 2 * jobs < len(summary.results), (started, len(summary.results))
    skipped = [r for r in summary.results if runner.NOT_STARTED_AGAIN in r.message]
    assert len(skipped) >= len(summary.results) - 2 * jobs


def test_a_ci_log_hears_from_a_silent_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "HEARTBEAT", 0.0)
    out = io.StringIO()
    p = progress.Progress(out, mode="counter")
    p.on_run_started(_info(24))
    time.sleep(1.6)
    p.on_run_finished(complete=True)
    assert "(running)" in out.getvalue() and "[0/24]" in out.getvalue()


def _info(planned: int) -> RunInfo:
    class Info:
        pass
    info = Info()
    info.planned = planned  # type: ignore[attr-defined]
    return info  # type: ignore[return-value]


def test_a_subject_reading_ahead_in_a_thread_while_it_works_is_not_silent() -> None:
    """An asyncio-style subject may read its next line in one thread while another still works
    on the last: not judged silent (the start-up timeout decides, as before)."""
    code = ("import sys, threading, time\n"
            "threading.Thread(target=lambda: time.sleep(30), daemon=True).start()\n"
            "sys.stdin.readline(); sys.stdin.readline()\n")
    two = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    try:
        assert two.stdin is not None
        two.stdin.write(b"x\n")
        two.stdin.flush()
        time.sleep(1.0)
        assert silence.unread_bytes(two.stdin.fileno()) == 0
        assert not silence.waiting_on_input([two.pid], two.stdin.fileno())
    finally:
        two.kill()
        two.wait()


@pytest.mark.parametrize(("program", "hinted"), [
    ("class Bash:\n    pass\n\ndef factory():\n    return Bash()\n", True),  # a factory module
    ("import sys\nsys.exit(3)\n", False),  # a crash says its status, no more
])
def test_a_subject_that_ends_instead_of_answering_is_told_what_a_command_subject_is(
        tmp_path: Path, program: str, hinted: bool) -> None:
    """The first thing a newcomer tries with ``tooluse init bash``'s factory file is to run it as
    a command: it defines its class and ends with status 0. The start-up error says what a
    command subject does and how a factory is judged (the newcomer walk-through of issue 41)."""
    from conformance.subjects.process import ENDED_CLEANLY_HINT

    script = tmp_path / "tool.py"
    script.write_text(program, encoding="utf-8")
    subject = command_subject(f"{shlex.quote(sys.executable)} {script}", family="bash",
                              name="ends")
    summary = runner.run([subject], checks=["bash.output.roundtrip"], timeout=5, jobs=1,
                         confinement=Confinement(mode="off"))
    said = summary.never_started()["ends"]
    assert "exited while answering" in said
    assert (ENDED_CLEANLY_HINT in said) is hinted, said
    assert ("--bash FILE:factory" in said) is hinted
