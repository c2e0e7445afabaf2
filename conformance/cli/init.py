"""``tooluse init TOOL [--lang python|node] [--out FILE]``: write a starter subject that passes.

A starter is a complete, conformant implementation of one client tool, in one file that imports
only its language's standard library (``conformance/starters/``, shipped in the wheel): the
docs' own design, completed as their prose asks: for bash, the bash tool docs' ``BashSession``;
for the text editor (``text_editor_20250728``), the text editor docs' sample handler, on bytes.
Each is in Python and Node and held to every MUST check in the project's tests
(tests/test_starters.py). Edit it into your tool, and run the suite on it with the command this
prints. An existing file is never overwritten.
"""

from __future__ import annotations

import argparse
import shlex
from importlib import resources
from pathlib import Path
from typing import Any

from . import EXIT_OK, UsageError

#: The starters: (tool, language) -> its file in conformance/starters (also the default --out).
STARTERS: dict[tuple[str, str], str] = {
    ("bash", "python"): "bash_tool.py",
    ("bash", "node"): "bash_tool.mjs",
    ("editor", "python"): "editor_tool.py",
    ("editor", "node"): "editor_tool.mjs",
}
TOOLS = sorted({tool for tool, _ in STARTERS})
LANGS = sorted({lang for _, lang in STARTERS})
#: The tool type each starter implements (what ``tooluse run`` is told).
TOOL_TYPES = {"bash": "bash_20250124", "editor": "text_editor_20250728"}
#: What each starter is, as the message names it.
NAMES = {"bash": "bash tool (bash_20250124)", "editor": "text editor tool (text_editor_20250728)"}


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help="write a starter subject (a conformant bash or text editor tool) to edit",
        description=__doc__.split("\n\n")[0])
    p.add_argument("tool", choices=TOOLS, help="the tool the starter implements")
    p.add_argument("--lang", choices=LANGS, default="python",
                   help="python (a factory module) or node (a command reading JSON lines)")
    p.add_argument("--out", metavar="FILE", help="where to write it (default: ./bash_tool.py, "
                   "./editor_tool.py, or .mjs); never overwritten")
    return p


def starter_text(tool: str, lang: str) -> str:
    """The starter's source."""
    name = STARTERS[(tool, lang)]
    return resources.files("conformance.starters").joinpath(name).read_text(encoding="utf-8")


def run_command(tool: str, lang: str, path: Path) -> str:
    """The ``tooluse run`` line that judges the starter written at ``path``."""
    where = shlex.quote(str(path))
    if lang == "node":
        option = "--bash-cmd" if tool == "bash" else "--editor-cmd"
        line = f"tooluse run {option} {shlex.quote('node ' + where)}"
    else:
        option = "--bash" if tool == "bash" else "--editor"
        line = f"tooluse run {option} {shlex.quote(str(path) + ':factory')}"
    if tool == "editor":
        line += f" --editor-type {TOOL_TYPES[tool]}"
    return line


def run(args: argparse.Namespace) -> int:
    if (args.tool, args.lang) not in STARTERS:
        raise UsageError(f"no {args.lang} starter for {args.tool}; there are: "
                         + ", ".join(f"{t} ({lang})" for t, lang in STARTERS))
    path = Path(args.out or STARTERS[(args.tool, args.lang)])
    if path.exists():
        raise UsageError(f"{path} exists: tooluse init never overwrites a file; choose another "
                         "--out, or move yours away first")
    if not path.parent.is_dir():
        raise UsageError(f"{path.parent} is not a directory; create it or choose another --out")
    path.write_text(starter_text(args.tool, args.lang), encoding="utf-8")
    print(f"wrote {path}: a {NAMES[args.tool]} ({args.lang}) that passes every MUST check")
    print(f"judge it (and your changes to it) with:\n  {run_command(args.tool, args.lang, path)}")
    return EXIT_OK
