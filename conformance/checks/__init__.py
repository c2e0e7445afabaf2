"""The check modules: importing this package registers every check in the catalog.

One module per family; add yours to the import list below.
"""

from __future__ import annotations

from conformance.checks import (  # noqa: F401
    bash,
    bash_errors,
    bash_model,
    bash_output,
    editor,
    loop,
    loop_warnings,
    sandbox,
    worker,
)

__all__ = ["bash", "bash_errors", "bash_model", "bash_output", "editor", "loop", "loop_warnings", "sandbox", "worker"]
