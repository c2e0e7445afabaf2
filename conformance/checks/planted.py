"""What a check puts in place behind the subject's back, remembered so that a failure's
reproducer states it as setup steps ("before input 1, make the directory ..."), never disguised
as tool calls (:func:`conformance.reproducers.setup_step`). Used by the editor and bash checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from conformance.reproducers import setup_step
from conformance.session import ToolSession

#: What each session had planted: (history position, path, data | None for a directory,
#: symlink target | None).
_PLANTED: WeakKeyDictionary[Any, list[tuple[int, str, bytes | None, str | None]]] = (
    WeakKeyDictionary())


def _planted(s: ToolSession) -> list[tuple[int, str, bytes | None, str | None]] | None:
    """The session's record of what was planted (kept on the session where it can be, else in
    a weak mapping; None when neither is possible)."""
    found = getattr(s, "tooluse_planted", None)
    if isinstance(found, list):
        return found
    try:
        s.tooluse_planted = []  # type: ignore[attr-defined]
        return s.tooluse_planted  # type: ignore[attr-defined]
    except AttributeError:  # __slots__: a weak mapping (None if not weakly referable)
        try:
            return _PLANTED.setdefault(s, [])
        except TypeError:
            return None


def _remember(s: ToolSession, path: str, data: bytes | None, target: str | None) -> None:
    record = _planted(s)
    if record is not None:
        record.append((len(s.history), path, data, target))


def plant(s: ToolSession, name: str, data: bytes) -> str:
    """Put a file in the working directory (``name`` relative to it; an absolute path is taken
    as it is, e.g. a sibling of the working directory) behind the subject's back; returns its
    path. It is remembered: a failure's reproducer states it as a setup step ("before input 1,
    write ...")."""
    path = Path(s.workdir) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    _remember(s, str(path), data, None)
    return str(path)


def plant_directory(s: ToolSession, name: str) -> str:
    """Make a directory behind the subject's back (remembered like :func:`plant`)."""
    path = Path(s.workdir) / name
    path.mkdir(parents=True, exist_ok=True)
    _remember(s, str(path), None, None)
    return str(path)


def plant_symlink(s: ToolSession, name: str, target: str) -> str | None:
    """Make ``name`` a symbolic link to ``target`` (remembered like :func:`plant`); None when
    the file system refuses symlinks."""
    path = Path(s.workdir) / name
    try:
        path.symlink_to(target)
    except OSError:
        return None
    _remember(s, str(path), None, target)
    return str(path)


def reproducer(s: ToolSession) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The tool inputs sent so far, and what was planted before them as setup steps
    (:func:`conformance.reproducers.setup_step`), never disguised as tool calls."""
    planted = list(_planted(s) or [])
    setup = [setup_step(at + 1, path, data=data, directory=data is None and target is None,
                        symlink_to=target) for at, path, data, target in planted]
    return [dict(x) for x in s.history], setup


__all__ = ["plant", "plant_directory", "plant_symlink", "reproducer"]
