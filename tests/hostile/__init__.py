"""Hostile subjects for issue 9 (``subjects.py``: each misbehaves in one way the harness must
survive) and helpers to run ``tooluse`` and look for what a run left running."""

from __future__ import annotations

import os
import signal
import sys
import time

from conformance.subjects.isolation import PROC

#: The ``tooluse`` command, run by this interpreter (no dependency on the script being on PATH).
TOOLUSE = [sys.executable, "-c", "import sys; from conformance.cli import main; sys.exit(main())"]


def sigint_as_at_a_terminal() -> None:
    """``preexec_fn`` for a child a test interrupts with SIGINT: it gets SIGINT's default action,
    as a command typed at a terminal does. pytest started in the background by a non-interactive
    shell (``pytest &``, a script's background job) ignores SIGINT, a child inherits that, and
    Python then installs no KeyboardInterrupt handler: the child rightly ignores Ctrl-C (its
    shell asked for that) and the test would wrongly blame it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def survivors(env_entry: str) -> list[tuple[int, str]]:
    """Running processes (not zombies, not us) whose environment holds ``env_entry``
    (``NAME=value``), as ``[(pid, command line)]``."""
    found = []
    needle = env_entry.encode()
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            stat = (entry / "stat").read_text()
            if stat[stat.rfind(")") + 2:].split()[0] in ("Z", "X"):
                continue
            found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ")
                          .decode(errors="replace")))
        except OSError:
            continue
    return found


def wait_no_survivors(env_entry: str, timeout: float = 5.0) -> list[tuple[int, str]]:
    """:func:`survivors`, after waiting up to ``timeout`` s for them to go."""
    end = time.monotonic() + timeout
    while (left := survivors(env_entry)) and time.monotonic() < end:
        time.sleep(0.05)
    return left
