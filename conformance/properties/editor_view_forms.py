"""How a ``view`` may present a file's lines: the forms the docs leave open, judged by meaning.

Seed 001 "view" says only that the command returns the file's content ("Baca dan kembalikan
konten file": read and return the file's content), and "Nomor baris" (Line numbers) that line
numbers "are not required" and shows one form (``1: def is_prime(n):``). Nothing fixes how a tab
is shown nor how a line number is written, so every reasonable form is accepted, and the one the
subject follows is reported (``observed``). Bytes on disk are judged strictly elsewhere
(``editor.bytes.*``); this module judges only what ``view`` *shows*.

- **A tab** may be shown raw, expanded to tab stops of any width 1..:data:`MAX_TAB_WIDTH`
  (``str.expandtabs(n)``), or as a fixed number of spaces, 1..:data:`MAX_TAB_WIDTH` each.
- **A line number** may be absent, or come before the line in any of the common forms:
  ``cat -n`` (``     1\\t``), ``1: ``, ``1 | ``, ``L1: ``, ``1→``, ``[1] ``, ``(1) ``, ``1. ``,
  ``1│``, ``1> `` (:data:`LINE_NUMBER_PREFIX`).
- **A result** may be plain text, or a JSON document (an MCP server's structured content, a
  wrapper's ``{"output": ...}``): its strings are read decoded, not as escaped JSON
  (:func:`readable_texts`).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

#: The widest tab rendering accepted (tab stops or fixed spaces).
MAX_TAB_WIDTH = 16

#: The topic the model check reports the tab rendering under.
TAB_TOPIC = "view of a tab"
RAW = "shown raw"

#: A line-number prefix: optional blanks, an optional ``L`` / ``line`` / bracket, the number,
#: an optional closing bracket, then 1..4 separator characters (blank, tab, ``:``, ``|``,
#: ``.``, ``-``, ``>``, ``→``, ``│``) and any blanks (a tab after the number expanded).
LINE_NUMBER_PREFIX = (r"[ \t]*(?:[\[(]\s*)?(?:L|[Ll]ine\s?)?(?P<number>\d+)(?:\s*[\])])?"
                      r"[\t :|.\->\u2192\u2502]{1,4}[ \t]*")
_PREFIX = "(?:" + LINE_NUMBER_PREFIX.replace("(?P<number>", "(?:") + ")?"


def tab_renderings(body: str, column: int = 0) -> dict[str, tuple[str, ...]]:
    """Every accepted way to show ``body`` (one line, no terminator) when it starts at
    ``column`` of the output line (tab stops count from the line's start, a line-number prefix
    included): rendering → the labels of the conventions that give it."""
    if "\t" not in body:
        return {body: (RAW,)}
    out: dict[str, list[str]] = {body: [RAW]}
    for n in range(1, MAX_TAB_WIDTH + 1):
        stops = f"expanded to tab stops of {n}"
        out.setdefault(body.expandtabs(n), []).append(stops)
        if column:  # the whole output line expanded, the prefix included
            out.setdefault((" " * column + body).expandtabs(n)[column:], []).append(stops)
        out.setdefault(body.replace("\t", " " * n), []).append(f"{n} spaces each")
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


_PREFIX_ONLY = re.compile(LINE_NUMBER_PREFIX)
#: The longest line-number prefix looked for.
MAX_PREFIX = 40


@lru_cache(maxsize=4096)
def _plain(body: str) -> re.Pattern[str]:
    return re.compile(_PREFIX + re.escape(body.rstrip()) + r"\s*")


@lru_cache(maxsize=4096)
def prefix_ends(line: str) -> tuple[int, ...]:
    """Where the body of output ``line`` may start: 0 (no number), or after a line-number
    prefix (:data:`LINE_NUMBER_PREFIX`)."""
    head = line[:MAX_PREFIX + 1]
    return (0, *(k for k in range(1, len(head) + 1) if _PREFIX_ONLY.fullmatch(head[:k])))


def shown_as(line: str, body: str) -> tuple[str, ...] | None:
    """The tab conventions under which output ``line`` shows ``body`` (after an optional
    line-number prefix, trailing blanks free); None when it does not show it."""
    if "\t" not in body:
        return (RAW,) if _plain(body).fullmatch(line) else None
    labels: dict[str, None] = {}
    for k in prefix_ends(line):
        rest = line[k:].rstrip()
        for rendering, names in tab_renderings(body, k).items():
            if rendering.rstrip() == rest:
                labels.update(dict.fromkeys(names))
    return tuple(labels) if labels else None


def readable_texts(text: str) -> list[str]:
    """``text``, and when it is a JSON document, the strings inside it decoded (what an MCP
    editor's structured result or a wrapper's ``{"output": "..."}`` means)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[\"":
        return [text]
    try:
        doc = json.loads(stripped)
    except ValueError:
        return [text]
    strings: list[str] = []
    _strings(doc, strings)
    return [text, *strings]


def _strings(doc: Any, into: list[str]) -> None:
    if isinstance(doc, str):
        into.append(doc)
    elif isinstance(doc, dict):
        for v in doc.values():
            _strings(v, into)
    elif isinstance(doc, list):
        for v in doc:
            _strings(v, into)


def tab_convention(labels: set[str] | None) -> str:
    """How the run's views showed tabs, from the labels every tab-holding line agreed on."""
    if labels is None:
        return ""
    if not labels:
        return "varies from view to view (each view showed the lines)"
    if RAW in labels:
        return RAW
    stops = sorted(int(x.split()[-1]) for x in labels if x.startswith("expanded"))
    fixed = sorted(int(x.split()[0]) for x in labels if x.endswith("spaces each"))
    parts = []
    if stops:
        parts.append(f"expanded to tab stops of {_widths(stops)}")
    if fixed:
        parts.append(f"{_widths(fixed)} spaces each")
    return " or ".join(parts)


def _widths(ns: list[int]) -> str:
    return str(ns[0]) if len(ns) == 1 else f"{ns[0]}..{ns[-1]}" if ns == list(
        range(ns[0], ns[-1] + 1)) else "/".join(map(str, ns))
