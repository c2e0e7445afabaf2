"""Building blocks for the generated JSON Schemas (2020-12).

Every schema is built twice, once per :data:`Mode`:

* ``strict``: the exact documented shapes: ``additionalProperties: false``, closed enums, unknown
  block types rejected.
* ``lenient``: what the SDK tolerates: unknown fields and unknown values of open enums are
  accepted; an unknown or legacy enum value is reported as an INFO note through the custom keyword
  :data:`KNOWN` (other validators ignore it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..sources import Source

Mode = Literal["strict", "lenient"]
MODES: tuple[Mode, ...] = ("strict", "lenient")
DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE_URI = "https://tooluse-conformance.local/schemas/"

#: Custom keyword: ``{"values": [...], "notes": {value: text}, "note": text}``. An instance not
#: in ``values`` yields an INFO note (lenient mode only; strict mode uses a closed ``enum``).
KNOWN = "x-tooluse-known"
#: Custom annotations: the project rule id a subschema encodes, and the message to show.
RULE = "x-tooluse-rule"
MESSAGE = "x-tooluse-message"

Schema = dict[str, Any]

#: Managed Agents: the agent's ``tools`` array may hold at most this many entries (seed 004;
#: the English page says 128, PROTOCOL.md "Known discrepancies").
DEFAULT_MAX_AGENT_TOOLS = 256


@dataclass(frozen=True)
class Ctx:
    """What a schema build depends on."""

    mode: Mode
    max_agent_tools: int = DEFAULT_MAX_AGENT_TOOLS

    @property
    def strict(self) -> bool:
        return self.mode == "strict"


def uri(ctx: Ctx, name: str) -> str:
    return f"{BASE_URI}{ctx.mode}/{name}.json"


def ref(name: str, doc: str | None = None) -> Schema:
    """A reference to ``$defs/name`` in this document, or in document ``doc`` (same mode)."""
    prefix = f"{doc}.json" if doc else ""
    return {"$ref": f"{prefix}#/$defs/{name}"}


def obj(ctx: Ctx, props: Mapping[str, Schema], required: Iterable[str] = (), *,
        lenient_required: Iterable[str] | None = None, title: str | None = None,
        comment: str | None = None) -> Schema:
    """An object schema: closed in strict mode; ``lenient_required`` relaxes ``required``."""
    s: Schema = {}
    if title:
        s["title"] = title
    if comment:
        s["$comment"] = comment
    s["type"] = "object"
    req = list(required) if ctx.strict or lenient_required is None else list(lenient_required)
    if req:
        s["required"] = req
    s["properties"] = dict(props)
    if ctx.strict:
        s["additionalProperties"] = False
    return s


def const(value: Any) -> Schema:
    return {"const": value}


def nullable(s: Schema) -> Schema:
    return {"anyOf": [s, {"type": "null"}]}


STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
NONNEG: Schema = {"type": "integer", "minimum": 0}
BOOL: Schema = {"type": "boolean"}
ANY_OBJ: Schema = {"type": "object"}


def str_array(item: Schema | None = None) -> Schema:
    return {"type": "array", "items": item or STR}


def cite(*sources: Source) -> str:
    return "; ".join(s.cite() for s in sources)


def enum(ctx: Ctx, values: Iterable[str], source: str, *, legacy: Iterable[str] = (),
         legacy_note: str = "", what: str = "value", extra: Iterable[Any] = ()) -> Schema:
    """A documented enumeration: closed in strict mode; in lenient mode any string is accepted and
    values outside the list (legacy ones with their own text) are INFO notes."""
    vals = list(dict.fromkeys(values))
    legacy = list(legacy)
    comment = f"{what}: {', '.join(vals)} (source: {source})"
    if legacy:
        comment += f"; legacy, lenient mode only: {', '.join(legacy)} ({legacy_note})"
    extras = list(extra)
    if ctx.strict:
        return {"$comment": comment, "enum": vals + extras}
    known: Schema = {"values": vals + extras,
                     "note": f"unknown {what} (accepted in lenient mode; documented: "
                             f"{', '.join(vals)})"}
    if legacy:
        known["notes"] = {v: f"legacy {what} {v!r}: {legacy_note}" for v in legacy}
    types = ["string"] + (["null"] if None in extras else [])
    return {"$comment": comment, "type": types if len(types) > 1 else "string", KNOWN: known}


def by_type(ctx: Ctx, variants: Mapping[str, Schema], *, what: str, source: str,
            title: str | None = None) -> Schema:
    """A union discriminated by ``type``: one ``if``/``then`` per variant (no ``oneOf``, so an error
    names the one variant that applies). Strict mode rejects unknown types; lenient notes them."""
    s: Schema = {}
    if title:
        s["title"] = title
    s["type"] = "object"
    s["required"] = ["type"]
    s["properties"] = {"type": enum(ctx, variants, source, what=what)}
    s["allOf"] = [
        {"if": {"properties": {"type": const(t)}, "required": ["type"]}, "then": v}
        for t, v in variants.items()
    ]
    return s


def document(ctx: Ctx, name: str, defs: Mapping[str, Schema], *, title: str,
             comment: str = "") -> Schema:
    """A schema document holding named ``$defs``; each def gets its name as ``title``."""
    out: dict[str, Schema] = {}
    for k, v in defs.items():
        if "$ref" in v or "title" in v:
            out[k] = v
        else:
            out[k] = {"title": k, **v}
    doc: Schema = {"$schema": DIALECT, "$id": uri(ctx, name), "title": f"{title} ({ctx.mode})"}
    if comment:
        doc["$comment"] = comment
    doc["$defs"] = out
    return doc
