"""Reproducers that outlive their case: paths relative to the case's working directory.

Every case runs in a fresh temporary directory that is removed when the case ends, so an absolute
path such as ``/tmp/tooluse-run-x/tooluse-editor.view.x-abc/notes.txt`` in a reproducer or a
message names nothing by the time anyone reads the report. :func:`relativize` rewrites such paths
with placeholders:

- ``$TOOLUSE_WORKDIR``: the case's working directory (the subject's cwd; command subjects get the
  same name as an environment variable);
- ``$HOME`` and ``$TMPDIR``: the throwaway home and temporary directories the subject was given.

The placeholders stay in absolute form (``$TOOLUSE_WORKDIR/notes.txt``, not ``./notes.txt``) on
purpose: the suite sends absolute paths, and the text editor tool accepts nothing else. To replay
a reproducer, make an empty directory and substitute it for the placeholder in every string
(:func:`materialize` does that), then send the inputs in order; files a check planted are part
of the reproducer as ``create`` inputs (see ``conformance.checks.editor_support.reproducer``).
In a bash reproducer ``$TOOLUSE_WORKDIR`` also works unsubstituted when the tool exports it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.results import CheckResult

#: The placeholder for the case's working directory.
WORKDIR = "$TOOLUSE_WORKDIR"
HOME = "$HOME"
TMPDIR = "$TMPDIR"

#: A path ends where no path-name character follows (``/``, quotes, spaces, ``.`` at the end of a
#: sentence and punctuation all end it).
_END = r"(?![A-Za-z0-9_\-])"


def _patterns(workdir: Path) -> list[tuple[re.Pattern[str], str]]:
    forms = {str(workdir)}
    try:
        forms.add(str(workdir.resolve()))
    except OSError:  # pragma: no cover - resolve() of a removed directory does not fail on POSIX
        pass
    out: list[tuple[re.Pattern[str], str]] = []
    for form in sorted(forms, key=len, reverse=True):
        parent = re.escape(str(Path(form).parent).rstrip("/"))
        # The subject's HOME and TMPDIR live next to the working directory (process.py).
        out.append((re.compile(parent + r"/tooluse-home-[A-Za-z0-9_]+/home" + _END), HOME))
        out.append((re.compile(parent + r"/tooluse-home-[A-Za-z0-9_]+/tmp" + _END), TMPDIR))
        out.append((re.compile(re.escape(form.rstrip("/")) + _END), WORKDIR))
    return out


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    if isinstance(value, tuple):
        return tuple(_map_strings(v, fn) for v in value)
    if isinstance(value, dict):
        return {(fn(k) if isinstance(k, str) else k): _map_strings(v, fn) for k, v in value.items()}
    return value


def relativize_value(value: Any, workdir: Path) -> Any:
    """``value`` (any JSON-like value) with the case's directories replaced by placeholders."""
    pats = _patterns(Path(workdir))

    def fn(text: str) -> str:
        if "/" not in text:
            return text
        for pat, repl in pats:
            text = pat.sub(repl, text)  # placeholders hold no backslash: used literally
        return text

    return _map_strings(value, fn)


def relativize(result: CheckResult, workdir: Path) -> CheckResult:
    """A copy of ``result`` whose message, received and documented values, reproducer and
    observed text name the case's directory as ``$TOOLUSE_WORKDIR`` (and the subject's throwaway
    home and temporary directories as ``$HOME`` and ``$TMPDIR``)."""
    def rel(v: Any) -> Any:
        return relativize_value(v, workdir)

    return dataclasses.replace(
        result, message=rel(result.message), received=rel(result.received),
        documented=rel(result.documented), reproducer=rel(list(result.reproducer)),
        observed=rel(result.observed))


def materialize(value: Any, workdir: str | Path) -> Any:
    """The inverse, to replay a reproducer: every ``$TOOLUSE_WORKDIR`` in ``value``'s strings
    replaced by ``workdir`` (an absolute path to a directory of your own)::

        inputs = materialize(result["reproducer"], Path("/tmp/replay").resolve())
    """
    target = str(workdir).rstrip("/") or "/"
    return _map_strings(value, lambda s: s.replace(WORKDIR, target))
