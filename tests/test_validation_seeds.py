"""Every JSON example of the five seed documents validates.

The extractor takes every JSON object in the seed text: fenced code blocks, request bodies inside
``curl -d '...'`` and inline objects in prose. Python/TypeScript literals that are not JSON are
not examples of the wire format and are not extracted.

Examples that pass lenient mode only (``LENIENT_ONLY``), and why:

========================  ================================================================
example                   why it is lenient-only
========================  ================================================================
responses in 001 and 003  abbreviated to ``id``/``model``/``stop_reason``/``role``/``content``;
                          a full ``Message`` also has ``type``, ``stop_sequence`` and ``usage``
000 line 1448             a ``content_block_start`` whose ``server_tool_use`` omits ``input``;
                          the live stream sends ``"input": {}`` (see the real-traffic captures)
========================  ================================================================
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simulator.validation import detect_kind, errors, validate

_ABBREVIATED = "abbreviated response: no type, stop_sequence or usage"
#: (seed prefix, line) -> why it passes lenient mode only.
LENIENT_ONLY: dict[tuple[str, int], str] = {
    ("000", 1448): "content_block_start of server_tool_use without input",
    **{("001", n): _ABBREVIATED for n in (311, 390, 462, 503, 580, 652)},
    ("003", 149): _ABBREVIATED,
}
_BASH = "tool_input:bash_20250124"
#: Fragments whose kind only the surrounding text tells: (seed, line) -> (kind, pointer inside).
CONTEXT_KINDS: dict[tuple[str, int], tuple[str, str]] = {
    ("000", 1479): ("usage", "/usage"),
    ("002", 38): ("caller", ""),
    **{("003", n): (_BASH, "") for n in (199, 205, 225, 228, 231, 834, 952)},
}
#: Also validated as another kind: the seed 004 declaration is a Managed Agents custom tool.
ALSO: dict[tuple[str, int], str] = {("004", 28): "ma_tool"}
#: JSON that is not a wire object the schemas describe: (seed, line) -> reason.
NOT_PROTOCOL: dict[tuple[str, int], str] = {
    ("001", 733): "the return value of a Python handler in a code sample",
    ("002", 21): "the argument of a Python call inside generated code (a custom tool input)",
    ("004", 149): "one property schema inside an input_schema written in Go code",
}


def extract_json_objects(text: str) -> list[tuple[int, dict[str, Any]]]:
    """Every maximal JSON object in ``text`` with the line it starts on."""
    decoder = json.JSONDecoder()
    out: list[tuple[int, dict[str, Any]]] = []
    i = 0
    while (j := text.find("{", i)) >= 0:
        try:
            obj, end = decoder.raw_decode(text, j)
        except json.JSONDecodeError:
            i = j + 1
            continue
        if isinstance(obj, dict) and obj:
            out.append((text.count("\n", 0, j) + 1, obj))
            i = end
        else:
            i = j + 1
    return out


def _examples(shared: Path) -> list[tuple[str, int, str, Any]]:
    """(seed prefix, line, kind, object) for every example to validate."""
    out = []
    for path in sorted((shared / "seeds").glob("0*.txt")):
        seed = path.name[:3]
        for line, obj in extract_json_objects(path.read_text(encoding="utf-8")):
            key = (seed, line)
            if key in NOT_PROTOCOL:
                continue
            if key in CONTEXT_KINDS:
                kind, pointer = CONTEXT_KINDS[key]
                for part in filter(None, pointer.split("/")):
                    obj = obj[part]
            else:
                kind = detect_kind(obj)
            out.append((seed, line, kind, obj))
            if key in ALSO:
                out.append((seed, line, ALSO[key], obj))
    return out


@pytest.fixture(scope="module")
def examples(shared_dir: Path) -> list[tuple[str, int, str, Any]]:
    return _examples(shared_dir)


def test_every_extracted_object_is_accounted_for(examples: list[tuple[str, int, str, Any]]) -> None:
    unknown = [(s, n) for s, n, kind, _ in examples if kind == "unknown"]
    assert not unknown, f"add these to CONTEXT_KINDS or NOT_PROTOCOL: {unknown}"
    by_kind: dict[str, int] = {}
    for _, _, kind, _ in examples:
        by_kind[kind] = by_kind.get(kind, 0) + 1
    assert len(examples) >= 75
    for kind in ("request", "response", "message", "block", "tool_definition", "sse_event",
                 "ma_tool", _BASH):
        assert by_kind.get(kind), kind


def test_every_example_validates_in_lenient_mode(examples: list[tuple[str, int, str, Any]]) -> None:
    failures = [f"{s}:{n} ({kind}) {v}" for s, n, kind, obj in examples
                for v in errors(validate(obj, kind))]
    assert not failures, "\n".join(failures)


def test_strict_mode_fails_exactly_the_lenient_only_examples(
        examples: list[tuple[str, int, str, Any]]) -> None:
    failing = {(s, n) for s, n, kind, obj in examples if errors(validate(obj, kind, strict=True))}
    assert failing == set(LENIENT_ONLY)


def test_the_tables_name_real_examples(examples: list[tuple[str, int, str, Any]],
                                       shared_dir: Path) -> None:
    seen = {(s, n) for s, n, _, _ in examples}
    extracted = {(p.name[:3], line) for p in (shared_dir / "seeds").glob("0*.txt")
                 for line, _ in extract_json_objects(p.read_text(encoding="utf-8"))}
    assert set(LENIENT_ONLY) | set(CONTEXT_KINDS) | set(ALSO) <= seen
    assert set(NOT_PROTOCOL) <= extracted - seen
