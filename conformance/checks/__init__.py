"""The check modules: importing this package registers every check in the catalog.

One module per family; add yours to the import list below.
"""

from __future__ import annotations

from conformance.checks import bash, bash_errors, bash_output, editor, loop, worker  # noqa: F401

__all__ = ["bash", "bash_errors", "bash_output", "editor", "loop", "worker"]
