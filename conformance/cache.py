"""Where the suite keeps what it can reuse between runs: ``$XDG_CACHE_HOME/tooluse`` (default
``~/.cache/tooluse``): the matrix's column environments (``matrix/``) and hypothesis' Unicode
tables (``hypothesis/``, :func:`conformance.properties.exploration.private_storage`)."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir(*parts: str) -> Path:
    """``$XDG_CACHE_HOME/tooluse/<parts>`` (``~/.cache`` when the variable is unset or empty);
    not created here."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "tooluse", *parts)
