"""Subjects under test: ``module:attr`` factories and out-of-process commands.

See ``docs/subjects.md``. The public surface:

- :class:`Subject`, :func:`factory_subject`, :func:`command_subject` (a bundled reference by its
  name: :func:`conformance.run.subject_from_option`)
- :class:`ProcessSession` (the :class:`~conformance.session.ToolSession` every subject runs in)
- :class:`SubjectStartError` (and :class:`SubjectNotReady`: the first call failed at start-up)

This package's ``__init__`` stays import-light on purpose: ``python -m conformance.subjects.host``
imports it in every subject process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["DEFAULT_TOOL_TYPES", "ProcessSession", "Subject", "SubjectNotReady", "SubjectStartError",
           "check_tool_type", "command_subject", "factory_subject", "resolve_factory"]

if TYPE_CHECKING:
    from conformance.subjects.process import ProcessSession, SubjectNotReady, SubjectStartError
    from conformance.subjects.spec import (
        DEFAULT_TOOL_TYPES,
        Subject,
        check_tool_type,
        command_subject,
        factory_subject,
        resolve_factory,
    )


def __getattr__(name: str) -> Any:
    if name in ("ProcessSession", "SubjectNotReady", "SubjectStartError"):
        from conformance.subjects import process
        return getattr(process, name)
    if name in __all__:
        from conformance.subjects import spec
        return getattr(spec, name)
    raise AttributeError(name)
