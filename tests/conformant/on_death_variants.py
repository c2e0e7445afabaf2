"""The presentation subjects of ``tests/conformant/`` (a status footer, tail truncation, a
``(no output)`` placeholder, ``<returncode>/<output>`` tags, text blocks, a history file), each
with a shell that restarts on death (``bash_restart_on_death.variant``): ``NAME:factory`` is
``on_death_variants.py:NAME``. Not a ``bash_*.py`` file: tests/test_conformant_bash.py runs them
on their own."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
PRESENTATIONS = ("bash_status_footer", "bash_tail_truncation", "bash_no_output_placeholder",
                 "bash_returncode_tags", "bash_text_blocks", "bash_history_file")


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"conformant_{name}", HERE / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, mod)
    spec.loader.exec_module(mod)
    return mod


_death = _load("bash_restart_on_death")
_variants: dict[str, Any] = {n: _death.variant(_load(n).factory) for n in PRESENTATIONS}

bash_status_footer = _variants["bash_status_footer"]
bash_tail_truncation = _variants["bash_tail_truncation"]
bash_no_output_placeholder = _variants["bash_no_output_placeholder"]
bash_returncode_tags = _variants["bash_returncode_tags"]
bash_text_blocks = _variants["bash_text_blocks"]
bash_history_file = _variants["bash_history_file"]
