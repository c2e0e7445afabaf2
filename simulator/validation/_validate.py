"""Compiled, cached validators; what they report is a :class:`~._violation.Violation`."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import referencing
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator

from ..schemas import (
    BLOCK_TYPES,
    DEFAULT_MAX_AGENT_TOOLS,
    KINDS,
    KNOWN,
    MESSAGE,
    RULE,
    Mode,
    build_documents,
    kind_uri,
)
from ._violation import Severity, Violation

try:  # the fast path: a compiled Rust validator answers "valid?" (about 1M blocks/s)
    import jsonschema_rs
except ImportError:  # pragma: no cover - the pure-Python path gives the same answers, slower
    jsonschema_rs = None  # type: ignore[assignment]

def _known(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    try:
        if instance in value["values"]:
            return
    except TypeError:
        pass
    notes = value.get("notes", {})
    text = notes.get(instance) if isinstance(instance, str) else None
    yield ValidationError(text or f"{value['note']}: {instance!r}")


#: ECMA-262's ``\\s``: its white space and line terminators (Python's also has ``\\x1c``-``\\x1f``,
#: and lacks ``\\ufeff``).
_ECMA_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"


@cache
def ecma_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled for Python with JSON Schema's (ECMA-262's) meaning: ``$`` is the end
    of the string (Python's also matches before a final newline, so ``^[a-z]+$`` took
    ``"name\\n"``), ``\\d`` and ``\\w`` are ASCII (Python's take any script's digits and
    letters) and ``\\s`` is ECMA's white space. The compiled fast path (Rust) has that meaning;
    the detailed path disagreed with it, and ``validate`` then answered no violation."""
    out: list[str] = []
    escaped = in_class = False
    for ch in pattern:
        if escaped:
            escaped = False
            if ch == "s":  # the backslash already out becomes ECMA's class
                out[-1] = _ECMA_SPACE if in_class else f"[{_ECMA_SPACE}]"
                continue
            if ch == "S" and not in_class:
                out[-1] = f"[^{_ECMA_SPACE}]"
                continue
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "$":
            out.append(r"\Z")
            continue
        out.append(ch)
    return re.compile("".join(out), re.ASCII)


def _pattern(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not ecma_pattern(value).search(instance):
        yield ValidationError(f"{instance!r} does not match {value!r}")


_Validator = validators.extend(Draft202012Validator, {KNOWN: _known, "pattern": _pattern})


@cache
def _registry(mode: Mode, max_agent_tools: int) -> referencing.Registry[Any]:
    docs = build_documents(mode, max_agent_tools)
    return referencing.Registry().with_resources(
        (d["$id"], referencing.Resource.from_contents(d)) for d in docs.values())


@cache
def _owners(mode: Mode, max_agent_tools: int) -> dict[int, str]:
    """id(subschema) -> ``document/def`` naming the ``$defs`` entry it belongs to."""
    out: dict[int, str] = {}

    def walk(node: Any, owner: str) -> None:
        if isinstance(node, dict):
            out.setdefault(id(node), owner)
            for v in node.values():
                walk(v, owner)
        elif isinstance(node, list):
            for v in node:
                walk(v, owner)

    for name, doc in build_documents(mode, max_agent_tools).items():
        for def_name, sub in doc["$defs"].items():
            walk(sub, f"{name}/{def_name}")
    return out


@cache
def validator_for(kind: str, mode: Mode = "lenient",
                  max_agent_tools: int = DEFAULT_MAX_AGENT_TOOLS) -> Validator:
    """The compiled validator of ``kind`` (see :data:`simulator.schemas.KINDS`), built once."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
    v: Validator = _Validator({"$ref": kind_uri(kind, mode)},
                              registry=_registry(mode, max_agent_tools))
    return v


def _close_known(node: Any) -> Any:
    """A copy where every lenient "known values" note becomes a closed ``enum``: an object valid
    against it has nothing to report, neither an error nor a note."""
    if isinstance(node, dict):
        out = {k: _close_known(v) for k, v in node.items()}
        if KNOWN in node:
            out["enum"] = list(node[KNOWN]["values"])
        return out
    if isinstance(node, list):
        return [_close_known(v) for v in node]
    return node


@cache
def _fast_registry(mode: Mode, max_agent_tools: int) -> Any:
    docs = build_documents(mode, max_agent_tools)
    return jsonschema_rs.Registry(
        [(d["$id"], _close_known(copy.deepcopy(d)) if mode == "lenient" else d)
         for d in docs.values()])


@cache
def _fast_validator(kind: str, mode: Mode, max_agent_tools: int) -> Any:
    """A compiled ``jsonschema_rs`` validator, or None when the package is absent."""
    if jsonschema_rs is None:
        return None
    return jsonschema_rs.validator_for({"$ref": kind_uri(kind, mode)},
                                       registry=_fast_registry(mode, max_agent_tools))


def pointer_of(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _short(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _branches(err: ValidationError) -> list[list[ValidationError]]:
    groups: dict[Any, list[ValidationError]] = {}
    for e in err.context or ():
        groups.setdefault(e.relative_schema_path[0] if e.relative_schema_path else 0, []).append(e)
    return list(groups.values())


def _only_type_mismatch(errs: list[ValidationError], depth: int) -> bool:
    return all(e.validator == "type" and len(e.absolute_path) == depth for e in errs)


def _convert(err: ValidationError, owners: dict[int, str]) -> list[Violation]:
    schema = err.schema if isinstance(err.schema, dict) else {}
    if err.validator in ("anyOf", "oneOf") and err.context:
        converted = [[v for e in branch for v in _convert(e, owners)] for branch in _branches(err)]
        for vs in converted:  # a branch failing only on lenient notes is a match, with notes
            if all(v.severity == "info" for v in vs):
                return vs
        if MESSAGE not in schema:
            depth = len(err.absolute_path)
            plausible = [vs for br, vs in zip(_branches(err), converted, strict=True)
                         if not _only_type_mismatch(br, depth)]
            if len(plausible) == 1:  # the one branch of the right JSON type says what is wrong
                return plausible[0]
    owner = owners.get(id(schema), "schema")
    rule = schema.get(RULE) or f"{owner}:{err.validator}"
    message = schema.get(MESSAGE) or _short(err.message)
    severity: Severity = "info" if err.validator == KNOWN else "error"
    return [Violation(pointer_of(err.absolute_path), message, str(rule), severity)]


def _refused_unexplained(fast: Any, obj: Any, kind: str) -> list[Violation]:
    """The compiled validator refused ``obj`` and the detailed one named nothing: the two read a
    keyword differently (a bug of this suite: ``ecma_pattern`` closed the one known). Never a
    silent accept: the compiled validator's own first reason, as an error."""
    first = next(iter(fast.iter_errors(obj)), None)
    if first is None:
        return []
    where = [str(p) for p in first.schema_path]
    return [Violation(pointer_of(first.instance_path), _short(first.message),
                      f"{kind}:{where[-1] if where else 'schema'}", "error")]


def is_valid(obj: Any, kind: str, *, strict: bool = False,
             max_agent_tools: int = DEFAULT_MAX_AGENT_TOOLS) -> bool:
    """Whether ``obj`` is valid against the schema of ``kind`` with nothing to report (False when
    unsure: the compiled validator is absent, or ``kind`` has checks JSON Schema cannot express).
    Answers what ``not validate(...)`` answers when True, much faster."""
    if kind not in KINDS or kind in ("sse_events", "ma_agent"):
        return False
    if kind == "block" and isinstance(obj, dict) and obj.get("type") in BLOCK_TYPES:
        kind = f"block:{obj['type']}"
    fast = _fast_validator(kind, "strict" if strict else "lenient", max_agent_tools)
    return fast is not None and bool(fast.is_valid(obj))


def validate(obj: Any, kind: str, *, strict: bool = False,
             max_agent_tools: int = DEFAULT_MAX_AGENT_TOOLS) -> list[Violation]:
    """Every violation of ``obj`` against the schema of ``kind`` (empty list: valid).

    ``strict`` selects the exact documented shapes; the default lenient mode tolerates unknown
    fields and block types as the SDK does, and reports unknown or legacy enum values as
    ``info``. ``kind`` is one of :data:`simulator.schemas.KINDS` (``detect_kind`` guesses it).
    """
    mode: Mode = "strict" if strict else "lenient"
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
    if kind == "block" and isinstance(obj, dict) and obj.get("type") in BLOCK_TYPES:
        kind = f"block:{obj['type']}"  # dispatch on type: one small validator per block type
    order: list[Violation] = []  # checks JSON Schema cannot express
    if kind == "sse_events" and isinstance(obj, list):
        from ._stream import stream_order  # the event order: errors in strict mode, notes else
        order = stream_order(obj, "error" if strict else "info")
    elif kind == "ma_agent":
        from ._agents import unique_tool_names
        order = unique_tool_names(obj)
    fast = _fast_validator(kind, mode, max_agent_tools)
    if fast is not None and fast.is_valid(obj):
        return order
    validator = validator_for(kind, mode, max_agent_tools)
    owners = _owners(mode, max_agent_tools)
    out = [v for e in validator.iter_errors(obj) for v in _convert(e, owners)] + order
    if fast is not None and not out:
        out = _refused_unexplained(fast, obj, kind)
    out.sort(key=lambda v: (v.severity != "error", v.pointer))
    return list(dict.fromkeys(out))
