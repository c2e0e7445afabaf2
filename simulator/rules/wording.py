"""A schema violation worded as the API words it, not as the JSON Schema validator does.

The API validates a request as a tagged model and names the problem in the wording of its
validator (pydantic), prefixed by the dotted location; the location names a tagged item's tag
after its index (``tools.0.custom.input_schema``, ``messages.2.content.0.tool_result.content.0
.document.source``). Families and their evidence:

=========================  ===========================================================  ===========
what is wrong              the API's message                                            evidence
=========================  ===========================================================  ===========
a missing field            ``max_tokens: Field required``                               [1]
a wrong JSON type          ``container: Input should be a valid string`` (integer,      pydai__324
                           number, boolean, list, dictionary or object ...)
a value out of range       ``Input should be greater than or equal to 1``               [I]
a value not allowed        ``Input should be 'user' or 'assistant'``                    [I]
an unknown tag             ``Input tag 'file' found using 'type' does not match any of  pydai__531
                           the expected tags: ...``
a content block of no      ``messages.0: Input does not match the expected shape.``     [2]
known shape (no object,
no type)
=========================  ===========================================================  ===========

[1] tickernelz/opencode-mem#50 quoting the live body (``max_tokens: Field required``).
[2] issue 25: the held-out live captures (``messages.0: Input does not match the expected
shape.`` for a malformed content block, where the validator said ``'Invalid content' is not of
type 'object'``). A message's content is a union (a string, or a list of tagged blocks): when a
block's tag cannot be read, no member matches and the message is named.
Unlisted validator kinds fall back to the shape message at their location [I].
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

SHAPE = "Input does not match the expected shape."
_TYPES = {"string": "a valid string", "integer": "a valid integer", "number": "a valid number",
          "boolean": "a valid boolean", "array": "a valid list",
          "object": "a valid dictionary or object to extract fields from",
          "null": "None"}
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")
_NUMBER = re.compile(r"(-?\d+(?:\.\d+)?)\s*$")
#: Lists whose items are tagged by ``type`` (a tool without one is ``custom``).
_TAGGED = ("content", "tools")


def _items(parts: list[str], body: Any) -> list[Any]:
    """The value at each prefix of ``parts`` (None past what exists)."""
    out: list[Any] = []
    node = body
    for p in parts:
        if isinstance(node, Mapping):
            node = node.get(p)
        elif isinstance(node, list) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
        else:
            node = None
        out.append(node)
    return out


def api_location(parts: list[str], body: Any) -> tuple[str, bool]:
    """(the API's dotted location for the JSON pointer ``parts``, whether a tagged item on the
    way has no readable tag: the union naming its parent fails as a whole)."""
    values = _items(parts, body)
    out: list[str] = []
    for i, p in enumerate(parts):
        out.append(p)
        if i == 0 or parts[i - 1] not in _TAGGED or not p.isdigit():
            continue
        item = values[i]
        tag = item.get("type", "custom" if parts[i - 1] == "tools" else None) \
            if isinstance(item, Mapping) else None
        if not isinstance(tag, str):
            # No readable tag: the union fails where it sits (a message's content: the message).
            where = out[:-2] if parts[i - 1] == "content" and i >= 2 else out[:-1]
            return ".".join(where), True
        out.append(tag)
    return ".".join(out), False


def _choices(values: list[str]) -> str:
    q = [f"'{v}'" for v in values]
    return q[0] if len(q) == 1 else ", ".join(q[:-1]) + " or " + q[-1]


def problem(kind: str, message: str) -> tuple[str | None, str]:
    """(a field to append to the location, the API's phrase) for a validator ``kind`` and its
    message."""
    quoted = _QUOTED.findall(message)
    if kind == "required" and quoted:
        return quoted[0], "Field required"
    if kind == "additionalProperties" and quoted:
        return quoted[-1], "Extra inputs are not permitted"
    if kind == "type" and quoted and quoted[-1] in _TYPES:
        return None, f"Input should be {_TYPES[quoted[-1]]}"
    n = _NUMBER.search(message)
    if kind == "minimum" and n:
        return None, f"Input should be greater than or equal to {n.group(1)}"
    if kind == "exclusiveMinimum" and n:
        return None, f"Input should be greater than {n.group(1)}"
    if kind == "maximum" and n:
        return None, f"Input should be less than or equal to {n.group(1)}"
    if kind == "exclusiveMaximum" and n:
        return None, f"Input should be less than {n.group(1)}"
    if kind in ("enum", "const"):
        values = re.findall(r"'([^']*)'", message.split(" is not one of ", 1)[-1]) \
            if " is not one of " in message else quoted[-1:]
        if values:
            return None, f"Input should be {_choices(values)}"
    if kind == "minItems" and n is None:
        m = re.search(r"should be non-empty|is too short", message)
        if m:
            return None, "List should have at least 1 item after validation, not 0"
    if kind == "minLength":
        return None, "String should have at least 1 character"
    return None, SHAPE


def api_message(pointer: str, rule: str, message: str, body: Any) -> str:
    """The API's message for a schema violation at ``pointer`` (JSON pointer), found by the
    validator ``rule`` (``owner:kind``) with the validator's ``message``."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/") if p]
    where, untagged = api_location(parts, body)
    kind = rule.rsplit(":", 1)[-1]
    if untagged:
        return f"{where}: {SHAPE}" if where else SHAPE
    field, phrase = problem(kind, message)
    if field:
        where = f"{where}.{field}" if where else field
    return f"{where}: {phrase}" if where else phrase


__all__ = ["SHAPE", "api_location", "api_message", "problem"]
