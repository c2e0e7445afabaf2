"""Where in the implementation's own source a finding comes from, as docs/matrix.md and
docs/frameworks.md cite it (the prose is the one place the source lines are kept; this reads it).

- docs/matrix.md: the ``### <implementation> <version> (...)`` sections' tables, one row per
  check (`` | `check.id` | level | ... | cause | ``); a row with a "back-end" cell (``both``,
  ``tmux``, ``subprocess``) names which terminal columns it is about;
- docs/frameworks.md: the ``### ... (loop.x.y, ...)`` sections' bullets, ``- **Framework**
  (both columns): cause``.

:func:`source_lines` maps ``(column, check id)`` to the cause text (which holds the
``path:line`` references).
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

__all__ = ["source_lines"]

#: docs/matrix.md section headings (a word in them) -> the columns they are about.
MATRIX_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("openhands-aci", ("openhands-aci",)),
    ("FileEditorExecutor", ("openhands-tools-file-editor",)),
    ("TerminalExecutor", ("openhands-tools-terminal-tmux", "openhands-tools-terminal-subprocess")),
    ("swe-rex", ("swe-rex",)),
    ("agent toolset", ("anthropic-agent-toolset-bash",)),
    ("memory tool", ("anthropic-memory-tool", "anthropic-memory-tool-async")),
)

#: docs/frameworks.md bullet names -> (the default column, the second column "both" adds).
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "Vercel AI SDK": ("vercel-ai", "vercel-ai-container-helper"),
    "LangChain": ("langchain-anthropic", "langchain-anthropic-reuse-container"),
    "LiteLLM": ("litellm",),
    "llm-anthropic": ("llm-anthropic",),
    "pydantic-ai": ("pydantic-ai",),
}

_ROW = re.compile(r"^\| `(?P<check>[a-z_.]+)` \| (?P<rest>.*) \|\s*$")
_BULLET = re.compile(r"^- \*\*(?P<name>[^*]+)\*\*(?P<both> \(both columns\))?: (?P<cause>.*)")


def _cells(rest: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", rest)]


def _matrix(text: str) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    columns: tuple[str, ...] = ()
    for line in text.splitlines():
        if line.startswith("#"):
            columns = next((cols for word, cols in MATRIX_SECTIONS
                            if line.startswith("### ") and word in line), ())
            continue
        m = _ROW.match(line)
        if not m or not columns:
            continue
        cells = _cells(m.group("rest"))
        which = columns
        if len(cells) >= 5 and cells[1] in ("both", "tmux", "subprocess") or \
                (len(cells) >= 5 and cells[1].startswith(("tmux", "subprocess"))):
            back = cells[1].split()[0]
            which = columns if back == "both" else tuple(c for c in columns if c.endswith(back))
            if "not the committed one" in cells[1]:
                continue
        for col in which:
            out.setdefault((col, m.group("check")), cells[-1])
    return out


def _frameworks(text: str) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    patterns: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            patterns = re.findall(r"loop\.[a-z_.*]+", line) if line.startswith("### ") else []
            continue
        m = _BULLET.match(line)
        if not m or not patterns or m.group("name") not in FRAMEWORKS:
            continue
        cause = [m.group("cause")]
        for more in lines[i + 1:]:
            if not more.startswith("  "):
                break
            cause.append(more.strip())
        cols = FRAMEWORKS[m.group("name")]
        for col in cols if m.group("both") else cols[:1]:
            for pat in patterns:
                out.setdefault((col, pat), " ".join(cause))
    return out


def source_lines(root: Path) -> dict[tuple[str, str], str]:
    """``(column, check id or pattern)`` -> the docs' cause text (see the module docstring)."""
    out: dict[tuple[str, str], str] = {}
    for name, parse in (("matrix.md", _matrix), ("frameworks.md", _frameworks)):
        path = root / "docs" / name
        if path.exists():
            out.update(parse(path.read_text()))
    return out


def cause_of(table: dict[tuple[str, str], str], column: str, check_id: str) -> str | None:
    """The cited cause for a cell (an exact check id first, then a ``loop.ptc.*`` pattern)."""
    if (column, check_id) in table:
        return table[column, check_id]
    for (col, pat), cause in table.items():
        if col == column and "*" in pat and fnmatch.fnmatchcase(check_id, pat):
            return cause
    return None
