"""A subject process's I/O: its three pipes, spoken as JSON lines.

:class:`Pipes` frames each tool input as one JSON line on the subject's stdin, reads its answers
one line at a time (a reader thread; a line longer than :data:`MAX_LINE` ends the reading), keeps
the end of its stderr (:func:`gather_stderr`, paced) for the messages that quote it, and tells
when the subject sits waiting on its input with nothing answered (the readiness call's
``watch_silence``). :func:`decode_answer` reads one answer line into a
:class:`~conformance.session.ToolResult`, or says what is wrong with it.

What a missing or wrong answer means for the subject (a fault, a kill, a restart) is its life
cycle's: :class:`conformance.subjects.process.ProcessSession`.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from conformance.session import ToolResult
from conformance.subjects import silence
from conformance.subjects.isolation import descendants, processes_supported

#: An answer line longer than this is a fault (the subject is stopped).
MAX_LINE = 64 * 1024 * 1024
#: Characters of a subject's stderr quoted in a message (its end: where the exception is).
STDERR_NOTE = 1500
#: After reading less than this from a subject's stderr, its reader waits STDERR_PAUSE seconds
#: so that what comes next gathers in the pipe: a subject printing small lines without end was
#: read one line per wake-up, its reader thread taking a CPU of the harness (and the writer
#: another); now at most 1/STDERR_PAUSE reads a second, and a writer faster than that blocks on
#: the full pipe. A large write is read at once, without the pause.
STDERR_BATCH = 16 * 1024
STDERR_PAUSE = 0.01
#: The subject closed its stdout (it exited, or is exiting).
EOF = object()
#: The readiness call saw the subject wait on its input with nothing answered (silence.py).
SILENT = object()


class Pipes:
    """The stdin, stdout and stderr of one subject process (``proc``: a :class:`subprocess.Popen`
    or a fork server's child). ``stderr`` is the bounded deque its end is kept in; ``leftovers``
    the sandbox shim's tag for the lines of stderr that are its report, not the subject's."""

    def __init__(self, proc: Any, stderr: deque[bytes], leftovers: str | None = None) -> None:
        self.proc, self.stderr, self.leftovers = proc, stderr, leftovers
        self._lines: queue.Queue[Any] = queue.Queue()
        assert proc.stdout is not None and proc.stderr is not None
        threading.Thread(target=self._read_stdout, args=(proc.stdout,), daemon=True).start()
        self._stderr_reader = threading.Thread(target=gather_stderr,
                                               args=(proc.stderr, self.stderr), daemon=True)
        self._stderr_reader.start()

    # --- writing -----------------------------------------------------------------------------

    def write(self, tool_input: dict[str, Any]) -> None:
        """Send one input as one JSON line (:class:`OSError` when the subject stopped reading)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(tool_input).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    # --- reading -----------------------------------------------------------------------------

    def _read_stdout(self, pipe: Any) -> None:
        try:
            while True:
                line = pipe.readline(MAX_LINE + 1)
                if not line:
                    break
                self._lines.put(line)
                if len(line) > MAX_LINE:
                    break
        except (OSError, ValueError):
            pass
        self._lines.put(EOF)
        close_quietly(pipe)

    def next_line(self, wait: float | None) -> Any:
        """The next answer line, :data:`EOF`, or None when none came within ``wait`` s."""
        try:
            return self._lines.get(timeout=wait)
        except queue.Empty:
            return None

    def watching_silence(self) -> Callable[[float], Any]:
        """:meth:`next_line` for the readiness call, which also gives up (returning
        :data:`SILENT`) once the subject is seen waiting on its input, nothing answered, for
        :data:`silence.SETTLE` seconds in a row (:mod:`conformance.subjects.silence`)."""
        since: list[float] = []  # when it was first seen waiting (empty: it is not)

        def attempt(window: float) -> Any:
            end = time.monotonic() + window
            while (left := end - time.monotonic()) > 0:
                line = self.next_line(min(0.25, left))
                if line is not None:
                    return line
                assert self.proc.stdin is not None
                pids = [self.proc.pid] + ([p.pid for p in descendants(self.proc.pid)]
                                          if processes_supported() else [])
                if silence.waiting_on_input(pids, self.proc.stdin.fileno()):
                    since[:] = since or [time.monotonic()]
                    if time.monotonic() - since[0] >= silence.SETTLE:
                        return SILENT
                else:
                    since.clear()
            return None
        return attempt

    # --- stderr ------------------------------------------------------------------------------

    @property
    def stderr_tail(self) -> str:
        raw = b"".join(self.stderr)
        tag = self.leftovers
        if tag:  # the sandbox shim's report of leftovers is the harness's, not the subject's
            raw = b"\n".join(line for line in raw.split(b"\n")
                              if not line.startswith(tag.encode() + b" "))
        return raw[-STDERR_NOTE * 2:].decode("utf-8", "replace")

    def drain_stderr(self, wait: float = 2.0) -> None:
        """The subject has exited (or was killed): read what is left of its stderr, so that a
        message quotes the traceback to its last line. Bounded: a process it left behind may
        still hold the pipe."""
        self._stderr_reader.join(timeout=wait)

    def stderr_note(self) -> str:
        """The end of stderr for a message (whole lines: the last one, the exception, matters
        most); empty when it wrote nothing."""
        tail = self.stderr_tail.strip()
        if len(tail) > STDERR_NOTE:
            cut = tail[-STDERR_NOTE:]
            tail = "..." + (cut[cut.index("\n"):] if "\n" in cut[:-1] else cut)
        return f"; stderr: {tail}" if tail else ""

    def shim_report(self) -> list[bytes]:
        """The lines of stderr that are the sandbox shim's report (without its tag)."""
        if self.leftovers is None:
            return []
        tag = self.leftovers.encode() + b" "
        return [line[len(tag):] for line in b"".join(self.stderr).split(b"\n")
                if line.startswith(tag)]


def decode_answer(line: bytes) -> tuple[ToolResult | None, str | None]:
    """One answer line read: ``(result, None)``; ``(None, what is wrong with it)``; or
    ``(result, fault)`` when the answer reports a fault of its own (a ``"fault"`` field)."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None, (f"answer is not JSON: {line[:200]!r}; write one JSON object per "
                      "line: {\"content\": str | [blocks], \"is_error\": bool}")
    if not isinstance(obj, dict) or "content" not in obj:
        return None, (f"answer has no \"content\": {line[:200]!r}; answer each input "
                      "with one JSON line {\"content\": str | [blocks], "
                      "\"is_error\": bool}, e.g. {\"content\": \"ok\", "
                      "\"is_error\": false}")
    content = obj["content"]
    if isinstance(content, list):
        if not all(isinstance(b, dict) for b in content):
            return None, "content blocks must be JSON objects"
    elif not isinstance(content, str):
        return None, f"content is {type(content).__name__}; use a str or content blocks"
    is_error = obj.get("is_error", False)
    if not isinstance(is_error, bool):
        return None, f"is_error is {is_error!r}; use true or false"
    raised = obj.get("raised")
    return (ToolResult(content=content, is_error=is_error, raised=str(raised) if raised else None),
            str(obj["fault"]) if obj.get("fault") else None)


def gather_stderr(pipe: Any, chunks: deque[bytes]) -> None:
    """Read a subject's stderr into ``chunks`` (a bounded deque: its end is kept) until end of
    file, then close it. Small reads are paced (STDERR_BATCH, STDERR_PAUSE)."""
    try:
        while chunk := pipe.read1(65536):
            chunks.append(chunk)
            if len(chunk) < STDERR_BATCH:
                time.sleep(STDERR_PAUSE)
    except (OSError, ValueError):
        pass
    close_quietly(pipe)


def close_quietly(pipe: Any) -> None:
    try:
        if pipe is not None:
            pipe.close()
    except OSError:
        pass
