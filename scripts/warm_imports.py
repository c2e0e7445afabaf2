"""Compile the modules every test process imports, once, before ``pytest -n 4`` starts.

On a fresh machine the bytecode cache (``PYTHONPYCACHEPREFIX``, noxfile.py's ``bytecode_env``) is
empty and the four xdist workers compiled the same modules at once: four cold imports of these
cost 38 CPU-s, one cold import and then four warm ones 23 CPU-s, 3 s sooner (issue 21). Run by
``nox -s tests`` and by the ``tests`` benchmark; a module that is not installed is skipped.
"""

from __future__ import annotations

import importlib

MODULES = ("anthropic", "hypothesis", "pydantic", "httpx", "pytest", "xdist",
           "conformance.runner", "conformance.checks", "conformance.cli", "simulator",
           "simulator.validation")


def main() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


if __name__ == "__main__":
    main()
