"""The first difference between two JSON values, as one line a person reads at a glance.

A matcher that refuses a request says *where* the request differs from the recording, not only
which matcher refused it: :class:`Difference` holds the path of the first differing value (in
the request's own words: ``tools[get_weather].input_schema.properties.location.type``), the
recorded value and the received one, and renders as one line::

    tools[get_weather].input_schema.properties.location.type: recorded "string", received "number"

:func:`first_difference` walks two JSON values in order (an object's keys in the recorded
order, then the received-only ones; a list's items by position; a list of plain values is one
value, as ``required: ["a", "b"]`` reads best whole). Values are shown whole when short; a long
one is cut around where it differs (the path is never cut).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

#: A key shown after a dot (``a.b``); any other is quoted (``a["b c"]``).
_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
#: Longest value shown whole in a line (characters of its JSON).
VALUE_LIMIT = 160


@dataclass(frozen=True)
class Difference:
    """Where two values first differ: ``path``, the ``recorded`` and the ``received`` value.

    ``absent`` names the side that lacks ``path`` altogether (``"recorded"`` or ``"received"``;
    ``""``: both have it), its value then being ``None``."""

    path: str
    recorded: Any = None
    received: Any = None
    absent: str = ""

    @property
    def line(self) -> str:
        """``path: recorded <value>, received <value>`` (``absent`` for a missing side)."""
        rec, got = shown(self.recorded, self.received, self.absent)
        return f"{self.path}: recorded {rec}, received {got}"

    def __str__(self) -> str:
        return self.line


def join(path: str, key: Any) -> str:
    """``path`` extended by an object key (``.key``, or ``["odd key"]``)."""
    k = str(key)
    if _PLAIN_KEY.fullmatch(k):
        return f"{path}.{k}" if path else k
    return f"{path}[{json.dumps(k, ensure_ascii=False)}]"


def label(name: Any) -> str:
    """A name inside brackets (``tools[get_weather]``): bare when plain, else quoted."""
    k = str(name)
    return k if _PLAIN_KEY.fullmatch(k) else json.dumps(k, ensure_ascii=False)


def _scalar(v: Any) -> bool:
    return not isinstance(v, dict | list)


def first_difference(recorded: Any, received: Any, path: str = "") -> Difference | None:
    """The first place ``received`` differs from ``recorded`` (None: they are equal, with
    Python's ``==``, as the matchers compare their keys)."""
    if isinstance(recorded, dict) and isinstance(received, dict):
        for k, v in recorded.items():
            if k not in received:
                return Difference(join(path, k), v, None, "received")
            d = first_difference(v, received[k], join(path, k))
            if d is not None:
                return d
        for k, v in received.items():
            if k not in recorded:
                return Difference(join(path, k), None, v, "recorded")
        return None
    if isinstance(recorded, list) and isinstance(received, list):
        if recorded == received:
            return None
        if all(_scalar(v) for v in (*recorded, *received)):
            return Difference(path, recorded, received)
        for i, (a, b) in enumerate(zip(recorded, received, strict=False)):
            d = first_difference(a, b, f"{path}[{i}]")
            if d is not None:
                return d
        n = min(len(recorded), len(received))
        if len(recorded) > n:
            return Difference(f"{path}[{n}]", recorded[n], None, "received")
        return Difference(f"{path}[{n}]", None, received[n], "recorded")
    if recorded == received:  # Python's equality, as the matchers compare keys
        return None
    return Difference(path, recorded, received)


def _json(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)


def shown(recorded: Any, received: Any, absent: str = "") -> tuple[str, str]:
    """Both values as JSON for a line (``absent`` for the side named by ``absent``), a long
    one cut around where the two first differ."""
    rec = "absent" if absent == "recorded" else _json(recorded)
    got = "absent" if absent == "received" else _json(received)
    if len(rec) <= VALUE_LIMIT and len(got) <= VALUE_LIMIT:
        return rec, got
    # Cut around where the two texts first differ: what differs stays in view.
    at = next((i for i, (x, y) in enumerate(zip(rec, got, strict=False)) if x != y),
              min(len(rec), len(got)))
    return _window(rec, at), _window(got, at)


def _window(text: str, at: int) -> str:
    if len(text) <= VALUE_LIMIT:
        return text
    start = max(0, min(at - VALUE_LIMIT // 4, len(text) - VALUE_LIMIT))
    end = start + VALUE_LIMIT
    head = "…" if start > 0 else ""
    tail = "…" if end < len(text) else ""
    return f"{head}{text[start:end]}{tail} ({len(text)} characters)"
