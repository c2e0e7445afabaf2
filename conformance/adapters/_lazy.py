"""Lazy imports for the adapters: the implementation is imported when a subject is made.

An adapter module imports without its implementation installed (the suite lists and documents
every adapter); making a subject without it raises :class:`ImplementationMissing`, which names the
pip requirement and the Python the implementation needs.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from conformance.errors import ToolUseError

__all__ = ["ImplementationMissing", "require"]


class ImplementationMissing(ToolUseError, ImportError):
    """The implementation an adapter wraps is not importable in this environment."""


def require(module: str, requirement: str, *, python: str = "") -> ModuleType:
    """Import ``module`` or raise :class:`ImplementationMissing` naming ``requirement``."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        needs = f" (it needs Python {python})" if python else ""
        raise ImplementationMissing(
            f"this adapter needs {module!r}, which is not importable here: "
            f"pip install {requirement!r}{needs}; the import failed with: {e}") from e
