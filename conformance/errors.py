"""The suite's errors, on the ground floor: every layer raises them, none has to import upward.

:class:`ToolUseError` is the base every error of ``conformance`` derives from (as Hypothesis's
``HypothesisException``): ``except ToolUseError`` catches what the suite raised and nothing a
subject or a library did. :class:`UsageError` is bad options or input, found before anything
runs: ``tooluse`` prints it as one line naming the problem and the fix and exits 2; the pytest
plugin turns it into ``pytest.UsageError``.

Only the standard library is imported here.
"""

from __future__ import annotations


class ToolUseError(Exception):
    """Base of every error the suite raises (not of the signals a check raises to give its
    verdict, nor of an interruption)."""


class UsageError(ToolUseError):
    """Bad options or input: printed as one line naming the problem and the fix; exit 2."""
