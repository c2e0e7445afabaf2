"""A :class:`~conformance.session.ToolSession` over a child process speaking JSON lines.

Used for both kinds of subject: out-of-process commands (any language) and in-process
``module:attr`` factories hosted by :mod:`conformance.subjects.host`. Every call has a deadline;
when it passes, the whole process group is killed and the call returns an error result with
``timed_out=True``. What the subject did wrong on the harness's side (hung, exited, wrote something
that is not a JSON result) is collected in :attr:`ProcessSession.faults`; the runner fails a check
whose session has faults even when the check itself passed.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.isolation import (
    Deadline,
    ProcInfo,
    descendants,
    grace_for,
    group_members,
    kill_group,
    kill_pids,
    process_table,
    processes_supported,
    still_alive,
)
from conformance.session import ToolResult
from conformance.subjects.forkserver import ForkServer, ForkServerError

#: An answer line longer than this is a fault (the subject is stopped).
MAX_LINE = 64 * 1024 * 1024
_EOF = object()


class SubjectStartError(Exception):
    """The subject could not be started (its factory raised, or the command died at once)."""


class ProcessSession:
    """One subject process for one test case."""

    def __init__(self, argv: Sequence[str], *, workdir: Path, tool_type: str, timeout: float,
                 env: Mapping[str, str] | None = None, handshake: bool = False,
                 start_timeout: float = 20.0, label: str = "subject",
                 case_deadline: float | None = None,
                 options: Mapping[str, Any] | None = None,
                 fork_server: ForkServer | None = None) -> None:
        self.workdir = workdir
        self.tool_type = tool_type
        self.timeout = timeout
        self.history: list[dict[str, Any]] = []
        #: Subject faults seen by the harness (hang, exit, bad answer), in order.
        self.faults: list[str] = []
        #: Processes the subject left running after close (pid and command line).
        self.leaked: list[ProcInfo] | None = None
        self.label = label
        #: The subject's tool-definition options; each is also an attribute (``max_characters``).
        self.options = dict(options or {})
        for key, value in self.options.items():
            if key.isidentifier() and not hasattr(self, key):
                setattr(self, key, value)
        self._case = Deadline(case_deadline)
        self._closed = False
        self._stderr: deque[bytes] = deque(maxlen=64)
        case_env = dict(env or {})
        case_env["TOOLUSE_WORKDIR"] = str(workdir)
        case_env["TOOLUSE_TIMEOUT"] = f"{timeout:g}"
        self.proc: Any
        try:
            if fork_server is not None:
                self.proc = fork_server.spawn(str(workdir), {**os.environ, **case_env})
            else:
                self.proc = subprocess.Popen(
                    list(argv), cwd=workdir, env={**os.environ, **case_env},
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    start_new_session=True)
        except (OSError, ForkServerError) as e:
            raise SubjectStartError(f"cannot start {label}: {e}") from e
        self.pgid = self.proc.pid
        self._lines: queue.Queue[Any] = queue.Queue()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._read_stdout, args=(self.proc.stdout,), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(self.proc.stderr,), daemon=True).start()
        if handshake:
            self._handshake(start_timeout)

    # --- reading ---------------------------------------------------------------------------

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
        self._lines.put(_EOF)
        _close_quietly(pipe)

    def _read_stderr(self, pipe: Any) -> None:
        try:
            while chunk := pipe.read1(65536):
                self._stderr.append(chunk)
        except (OSError, ValueError):
            pass
        _close_quietly(pipe)

    @property
    def stderr_tail(self) -> str:
        return b"".join(self._stderr)[-2000:].decode("utf-8", "replace")

    def _next_line(self, wait: float | None) -> Any:
        try:
            return self._lines.get(timeout=wait)
        except queue.Empty:
            return None

    def _handshake(self, wait: float) -> None:
        line = self._next_line(wait)
        if line is None:
            self._kill()
            raise SubjectStartError(f"{self.label} did not start within {wait:g}s")
        if line is _EOF:
            self.proc.wait(timeout=5)
            raise SubjectStartError(f"{self.label} exited at start (status {self.proc.returncode})"
                                    f"{self._stderr_note()}")
        try:
            hello = json.loads(line)
        except ValueError:
            hello = {"ready": False, "error": f"unexpected first line {line[:200]!r}"}
        if not hello.get("ready"):
            self._kill()
            raise SubjectStartError(f"the subject factory failed: {hello.get('error')}")

    def _stderr_note(self) -> str:
        tail = self.stderr_tail.strip()
        return f"; stderr: {tail[-500:]}" if tail else ""

    # --- calls ------------------------------------------------------------------------------

    def _fault(self, message: str) -> ToolResult:
        self.faults.append(message)
        return ToolResult(content=f"harness: {message}", is_error=True)

    def call(self, tool_input: dict[str, Any], *, deadline: float | None = None) -> ToolResult:
        self.history.append(tool_input)
        start = time.monotonic()
        if self._closed or self.proc.poll() is not None:
            return self._fault(f"{self.label} is not running (status {self.proc.returncode})")
        wait = deadline if deadline is not None else self.timeout + grace_for(self.timeout)
        case_left = self._case.remaining()
        if case_left is not None:
            wait = min(wait, case_left)
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(tool_input).encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except OSError as e:
            return self._fault(f"{self.label} stopped reading its input ({e}){self._stderr_note()}")
        line = self._next_line(wait)
        elapsed = time.monotonic() - start
        if line is None:
            self._kill()
            r = self._fault(f"no answer within {wait:g}s; the subject was stopped")
            r.timed_out, r.elapsed = True, elapsed
            return r
        if line is _EOF:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._kill()
            r = self._fault(f"{self.label} exited while answering (status {self.proc.returncode})"
                            f"{self._stderr_note()}")
            r.elapsed = elapsed
            return r
        if len(line) > MAX_LINE:
            self._kill()
            return self._fault(f"answer longer than {MAX_LINE} bytes; the subject was stopped")
        result = self._parse(line)
        result.elapsed = elapsed
        return result

    def _parse(self, line: bytes) -> ToolResult:
        try:
            obj = json.loads(line)
        except ValueError:
            return self._fault(f"answer is not JSON: {line[:200]!r}; write one JSON object per "
                               "line: {\"content\": str | [blocks], \"is_error\": bool}")
        if not isinstance(obj, dict) or "content" not in obj:
            return self._fault(f"answer has no \"content\": {line[:200]!r}")
        content = obj["content"]
        if isinstance(content, list):
            if not all(isinstance(b, dict) for b in content):
                return self._fault("content blocks must be JSON objects")
        elif not isinstance(content, str):
            return self._fault(f"content is {type(content).__name__}; use a str or content blocks")
        is_error = obj.get("is_error", False)
        if not isinstance(is_error, bool):
            return self._fault(f"is_error is {is_error!r}; use true or false")
        if obj.get("fault"):
            self.faults.append(str(obj["fault"]))
        raised = obj.get("raised")
        return ToolResult(content=content, is_error=is_error,
                          raised=str(raised) if raised else None)

    # --- teardown ---------------------------------------------------------------------------

    def _kill(self) -> None:
        """Stop the subject now: its group and everything below it (in any group or session)."""
        below = descendants(self.proc.pid) if processes_supported() else []
        kill_group(self.pgid)
        kill_pids([p.pid for p in below])
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable
            pass

    def close(self, grace: float = 5.0) -> None:
        """Close stdin, let the subject shut down, then kill what is left and note the leaks."""
        if self._closed:
            return
        self._closed = True
        tracked: list[ProcInfo] = []
        if processes_supported():
            table = process_table()
            tracked = descendants(self.proc.pid, table) + group_members(self.pgid, table)
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.faults.append(f"{self.label} did not exit within {grace:g}s of closing "
                                   "its input; it was killed")
        kill_group(self.pgid)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        if processes_supported():
            # Everything below the subject or in its group before it closed, still running now.
            seen = {p.pid: p for p in tracked if p.pid != self.proc.pid}
            self.leaked = still_alive(list(seen.values()), wait=0.3)
            kill_pids([p.pid for p in self.leaked])
        _close_quietly(self.proc.stdin)

    def __enter__(self) -> ProcessSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close_quietly(pipe: Any) -> None:
    try:
        if pipe is not None:
            pipe.close()
    except OSError:
        pass
