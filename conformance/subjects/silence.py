"""A subject that reads its input and answers nothing: told apart from a slow one at once.

The most common first mistake of a command subject is an answer that never leaves the process: a
Python program writing to a block-buffered stdout without a flush. Seen from the harness, it reads
the input line, writes its answer into its own buffer, and goes back to waiting for the next line.
A subject that is merely slow is still busy with the input (or has not read it yet). So the
harness can tell, without waiting out the start-up timeout: the input pipe is empty (the subject
read everything sent), a single-threaded process of the subject is blocked reading that same pipe
again (so it is done with what it read), and nothing came back. :func:`waiting_on_input` says whether that holds
now; the readiness call (``ProcessSession.wait_ready``) fails fast when it holds for
:data:`SETTLE` seconds in a row, with a hint about buffering.

Linux only (``/proc/<pid>/task/<tid>/syscall``, ``FIONREAD`` on a pipe); elsewhere it never
holds, and the start-up timeout decides as before.
"""

from __future__ import annotations

import array
import fcntl
import os
import platform
import termios
from collections.abc import Iterable

#: How long the subject must be seen waiting on its input, with nothing answered, before the
#: readiness call gives up on it (seconds).
SETTLE = 1.5
#: The ``read`` system call's number, by machine (``/proc/<pid>/syscall`` prints it first).
_READ = {"x86_64": 0, "aarch64": 63, "arm64": 63}

#: What to tell the author of a subject that read its input and answered nothing.
HINT = ("no output at all: the subject read its input and is waiting for the next line, but its "
        "answer never reached stdout. Is stdout buffered? Flush after every line (Python: "
        "print(..., flush=True) or run it with python -u; Node: process.stdout.write; C: "
        "fflush(stdout))")


def unread_bytes(fd: int) -> int | None:
    """Bytes written into the pipe ``fd`` (either end) and not read yet; None when unknown."""
    buf = array.array("i", [0])
    try:
        fcntl.ioctl(fd, termios.FIONREAD, buf, True)
    except OSError:
        return None
    return buf[0]


def _reading(pid: int, inode: int, call: int) -> bool:
    """Whether ``pid``, a process of one thread, is blocked in ``read`` on a descriptor of the
    pipe ``inode``. One thread only: a process of several may be reading its next input in one
    thread while another still works on the last (an asyncio loop with a reader thread), so
    only a single-threaded reader is surely done with what it read."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    if len(tids) != 1:
        return False
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall", encoding="ascii") as f:
                fields = f.read().split()
        except (OSError, UnicodeDecodeError):
            continue
        if len(fields) < 2 or not fields[0].isdigit() or int(fields[0]) != call:
            continue
        try:
            fd = int(fields[1], 16)
            if os.stat(f"/proc/{pid}/fd/{fd}").st_ino == inode:
                return True
        except (OSError, ValueError):
            continue
    return False


def waiting_on_input(pids: Iterable[int], stdin_fd: int) -> bool:
    """Whether the subject (the processes ``pids``) has read everything written to its input pipe
    (``stdin_fd``, the harness's end) and one of its threads waits for more. False whenever it
    cannot be known."""
    call = _READ.get(platform.machine())
    if call is None or unread_bytes(stdin_fd) != 0:
        return False
    try:
        inode = os.fstat(stdin_fd).st_ino
    except OSError:
        return False
    return any(_reading(pid, inode, call) for pid in pids)


__all__ = ["HINT", "SETTLE", "unread_bytes", "waiting_on_input"]
