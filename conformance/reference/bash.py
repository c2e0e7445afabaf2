"""The reference bash tool (``bash_20250124`` / ``bash_20241022``): a conformant persistent session.

The pattern of seed 003 ("Bash 도구 구현하기 (Implement the bash tool)": one long-lived
``/bin/bash``, a unique sentinel printed after each command) with the parts the seed leaves out
done right:

- each command runs as ``eval '<command>' </dev/null``: a command that reads stdin sees end of
  file instead of swallowing the rest of the session's input, and an unclosed quote is a syntax
  error instead of a hung session;
- stdout and stderr share one pipe (in order); the sentinel is preceded by a newline and followed
  by the exit status, so output without a final newline is kept and failures are flagged
  (``is_error``);
- every command has a deadline; past it the whole process group is killed, the session restarted
  and an error result returned ("Error: command did not finish within N seconds");
- output is read in bounded memory and truncated with the documented helper text
  (PROTOCOL.md §4: ``{first 100 lines}\\n\\n... Output truncated ({n} total lines) ...``);
- ``restart`` kills the group (working directory, environment and running processes are gone);
- input with neither ``command`` nor ``restart`` is answered with an error; ``close`` kills the
  group so nothing is left running.
"""

from __future__ import annotations

import os
import secrets
import selectors
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

RESTARTED = "Bash session restarted"
INVALID_INPUT = ("Error: the bash tool needs `command` (a non-empty string) or `restart: true`; "
                 "got {got}")
TIMED_OUT = ("Error: command did not finish within {timeout:g} seconds (the bash session was "
             "restarted: working directory and environment are reset)")

#: Bytes of a command's output kept in memory; the rest is counted, not stored.
KEEP_BYTES = 512 * 1024


def truncate_output(output: str, max_lines: int = 100, total_lines: int | None = None) -> str:
    """The documented helper (seed 003 "큰 출력 처리하기 (Handle large outputs)")."""
    lines = output.split("\n")
    total = max(total_lines or 0, len(lines))
    if total > max_lines:
        truncated = "\n".join(lines[:max_lines])
        return f"{truncated}\n\n... Output truncated ({total} total lines) ..."
    return output


class BashSession:
    """One ``/bin/bash`` process, in its own process group, kept alive between commands."""

    def __init__(self, workdir: Path, timeout: float = 30.0, *, max_lines: int = 100,
                 max_chars: int = 30_000, keep_bytes: int = KEEP_BYTES) -> None:
        self.workdir = Path(workdir)
        self.timeout = timeout
        self.max_lines = max_lines
        self.max_chars = max_chars
        self.keep_bytes = keep_bytes
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["/bin/bash", "--noprofile", "--norc"], cwd=self.workdir,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Stop the shell and everything it started (the whole process group)."""
        proc, self.process = self.process, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    def restart(self) -> None:
        self.kill()
        self.start()

    def close(self) -> None:
        self.kill()

    def new_sentinel(self) -> str:
        """Unique per command, so no output can be mistaken for it."""
        return f"__TOOLUSE_BASH_DONE_{secrets.token_hex(16)}__"

    def script(self, command: str, sentinel: str) -> bytes:
        text = (f"eval {shlex.quote(command)} </dev/null\n"
                f"__tooluse_rc=$?; builtin printf '\\n%s %s\\n' '{sentinel}' \"$__tooluse_rc\"\n")
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # lone surrogates from JSON: send U+FFFD instead
            return text.encode("utf-8", "replace")

    def run(self, command: str) -> tuple[str, int | None]:
        """Run one command; returns (output, exit status), status ``None`` when it timed out."""
        if self.process is None or self.process.poll() is not None:
            self.restart()
        proc = self.process
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        sentinel = self.new_sentinel()
        marker = f"\n{sentinel} ".encode()
        try:
            proc.stdin.write(self.script(command, sentinel))
            proc.stdin.flush()
        except OSError:
            self.restart()
            return "Error: the bash session had ended; it was restarted, send the command again", 1
        reader = _BoundedReader(marker, self.keep_bytes)
        deadline = time.monotonic() + self.timeout
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while not reader.done:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.restart()
                    return TIMED_OUT.format(timeout=self.timeout), None
                chunk = os.read(fd, 65536)
                if not chunk:  # the shell exited (``exit``, ``exec``, killed)
                    status = proc.wait()
                    self.restart()
                    out = self.format(reader.output(), reader.total_lines, reader.dropped)
                    note = f"bash exited with status {status}; the session was restarted"
                    return (f"{out}\n{note}" if out else note), status or 1
                reader.feed(chunk)
        return self.format(reader.output(), reader.total_lines, reader.dropped), reader.status

    def format(self, data: bytes, total_lines: int, dropped: int) -> str:
        text = truncate_output(data.decode("utf-8", "replace"), self.max_lines, total_lines)
        if len(text) > self.max_chars:
            total = len(data) + dropped
            text = f"{text[:self.max_chars]}\n\n... Output truncated ({total} total bytes) ..."
        return text


class _BoundedReader:
    """Collects output up to the sentinel in bounded memory, counting what it does not keep."""

    def __init__(self, marker: bytes, keep_bytes: int = KEEP_BYTES) -> None:
        self.marker = marker
        self.keep_bytes = keep_bytes
        self.head = bytearray()
        self.tail = b""
        self.dropped = 0
        self.newlines = 0
        self.done = False
        self.status = 0
        self._body = b""

    def feed(self, chunk: bytes) -> None:
        self.tail += chunk
        idx = self.tail.find(self.marker)
        if idx >= 0:
            rest = self.tail[idx + len(self.marker):]
            if b"\n" in rest:
                digits = rest.split(b"\n", 1)[0].strip()
                self.status = int(digits) if digits.isdigit() else 1
                self._keep(self.tail[:idx])
                self.tail = b""
                self.done = True
            return
        window = len(self.marker) + 8
        if len(self.tail) > window:
            self._keep(self.tail[:-window])
            self.tail = self.tail[-window:]

    def _keep(self, data: bytes) -> None:
        self.newlines += data.count(b"\n")
        room = self.keep_bytes - len(self.head)
        self.head += data[:max(room, 0)]
        self.dropped += max(len(data) - max(room, 0), 0)

    @property
    def total_lines(self) -> int:
        return self.newlines + 1

    def output(self) -> bytes:
        if not self.done:
            self._keep(self.tail)
            self.tail = b""
        return bytes(self.head)


class BashTool:
    """The handler: takes a tool_use ``input`` dict, returns ``{"content", "is_error"}``."""

    session_class: type[BashSession] = BashSession

    def __init__(self, workdir: Path, timeout: float = 30.0, **options: Any) -> None:
        self.session = self.session_class(workdir, timeout, **options)

    def __call__(self, tool_input: Any) -> dict[str, Any]:
        if not isinstance(tool_input, dict):
            return {"content": INVALID_INPUT.format(got=type(tool_input).__name__),
                    "is_error": True}
        if tool_input.get("restart") is True:
            self.session.restart()
            return {"content": RESTARTED, "is_error": False}
        command = tool_input.get("command")
        if not isinstance(command, str) or not command.strip():
            return {"content": INVALID_INPUT.format(got=sorted(tool_input) or "{}"),
                    "is_error": True}
        if "\x00" in command:
            return {"content": "Error: the command contains a NUL character, which bash cannot "
                               "run", "is_error": True}
        output, status = self.session.run(command)
        if status is None:
            return {"content": output, "is_error": True}
        if status != 0:
            sep = "" if not output or output.endswith("\n") else "\n"
            return {"content": f"{output}{sep}[exit status {status}]", "is_error": True}
        return {"content": output, "is_error": False}

    def close(self) -> None:
        self.session.close()


def factory(workdir: Path, timeout: float = 30.0) -> BashTool:
    """``conformance.reference.bash:factory``: the reference subject for the bash checks."""
    return BashTool(workdir, timeout)
