"""The fixture linter: every cassette loads, validates, holds no secret, replays, and parses with
the ``anthropic`` SDK's own types without losing a field.

Each problem is a :class:`Problem` naming the file, a JSON pointer into it and what is wrong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cassette import (
    Cassette,
    CassetteError,
    default_fixtures_root,
    iter_cassette_paths,
    load_cassette,
    resolve_fixture,
)
from .lint_replay import check_replay
from .lint_sdk import check_sdk
from .registry import TOOLS
from .sources import Source

STEPS = ("load", "identity", "schema", "secrets", "replay", "sdk")


@dataclass(frozen=True)
class Problem:
    path: str
    pointer: str
    message: str
    step: str = "load"

    def __str__(self) -> str:
        return f"{self.path}:{self.pointer or '/'}: {self.message}"


@dataclass
class LintReport:
    checked: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


# --- facts read from the recorded traffic (shared with the coverage table) -------------------


@dataclass(frozen=True)
class CassetteFacts:
    id: str
    family: str
    tool_type: str
    scenario: str
    streamed: bool
    error_codes: frozenset[str]
    stop_reasons: frozenset[str]
    rules: frozenset[str]
    statuses: frozenset[int]
    #: Client tool results sent with ``is_error: true``, named by ``tags.client_errors`` (the
    #: traffic cannot say what kind of failure a free-text result is); ``is_error`` otherwise.
    client_errors: frozenset[str] = frozenset()
    #: ``(result block type, error_code)`` pairs: which sub-tool's result carried each code.
    error_results: frozenset[tuple[str, str]] = frozenset()
    #: API error types answered (error bodies and ``error`` stream events).
    api_errors: frozenset[str] = frozenset()


def _rule_status(rule_id: str) -> int:
    """The status a rule answers with (400 for most; model.known: 404)."""
    from .rules import RULES
    rule = RULES.get(rule_id)
    return int(getattr(rule, "status", 400)) if rule is not None else 400


def _walk(obj: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k, v
            yield from _walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v)


def _payloads(cassette: Cassette) -> Iterator[Any]:
    for ex in cassette.exchanges:
        if "events" in ex.response:
            for ev in ex.response["events"]:
                yield ev.get("data") if isinstance(ev, dict) else None
        else:
            yield ex.response.get("body")


def cassette_facts(cassette: Cassette) -> CassetteFacts:
    """Error codes, stop reasons, rejected rules and statuses as the responses show them."""
    codes: set[str] = set()
    stops: set[str] = set()
    results: set[tuple[str, str]] = set()
    api_errors: set[str] = set()
    for payload in _payloads(cassette):
        results.update(_error_results(payload))
        if isinstance(payload, dict) and payload.get("type") == "error" and \
                isinstance(payload.get("error"), dict) and isinstance(payload["error"].get("type"), str):
            api_errors.add(payload["error"]["type"])
        for key, val in _walk(payload):
            if key == "error_code" and isinstance(val, str):
                codes.add(val)
            elif key == "stop_reason" and isinstance(val, str):
                stops.add(val)
            elif key == "stop_reason" and isinstance(val, dict) and isinstance(val.get("type"), str):
                stops.add(val["type"])  # Managed Agents: session.status_idle stop_reason
    rules = {ex.expect_rule for ex in cassette.exchanges if ex.expect_rule}
    sent_errors = any(key == "is_error" and val is True
                      for ex in cassette.exchanges for key, val in _walk(ex.request.get("body")))
    client_errors: set[str] = set()
    if sent_errors:
        client_errors = {str(k) for k in cassette.tags.get("client_errors") or []} or {"is_error"}
    statuses = {int(ex.response["status"]) for ex in cassette.exchanges}
    parts = cassette.id.split("/")
    return CassetteFacts(
        id=cassette.id, family=cassette.family,
        tool_type=str(cassette.tags.get("tool_type") or (parts[1] if len(parts) > 1 else "")),
        scenario=str(cassette.tags.get("scenario") or parts[-1]), streamed=cassette.streamed,
        error_codes=frozenset(codes), stop_reasons=frozenset(stops), rules=frozenset(rules),
        statuses=frozenset(statuses), client_errors=frozenset(client_errors),
        error_results=frozenset(results), api_errors=frozenset(api_errors))


def _error_results(obj: Any) -> Iterator[tuple[str, str]]:
    if isinstance(obj, dict):
        inner = obj.get("content")
        if (str(obj.get("type", "")).endswith("_tool_result") and isinstance(inner, dict)
                and isinstance(inner.get("error_code"), str)):
            yield str(obj["type"]), inner["error_code"]
        for v in obj.values():
            yield from _error_results(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _error_results(v)


# --- steps ----------------------------------------------------------------------------------

_KNOWN_TOOL_DIRS = {"messages", "sessions"}


def check_identity(c: Cassette, root: Path | None) -> Iterator[tuple[str, str]]:
    """The id matches the file path; tags agree with the traffic; sources cite real documents."""
    if c.path is not None:
        parts = [p for p in c.path.with_suffix("").parts if p not in (c.path.anchor, "")]
        rel: str | None = "/".join(parts[-3:]) if len(parts) >= 3 else None  # a file linted alone
        if root is not None:
            try:
                rel = c.path.resolve().relative_to(root.resolve()).with_suffix("").as_posix()
            except ValueError:
                rel = None
        if rel is not None and rel != c.id:
            yield "/id", f"id {c.id!r} does not match the file path {rel!r}; rename one of them"
    parts = c.id.split("/")
    if len(parts) != 3:
        yield "/id", f"id {c.id!r} must be <family>/<tool_type>/<scenario>"
    else:
        if parts[1] not in TOOLS and parts[1] not in _KNOWN_TOOL_DIRS:
            yield "/id", f"tool type {parts[1]!r} is not in simulator.registry.TOOLS"
        scenario = parts[2].removesuffix("_streamed") if c.streamed else parts[2]
        for key, want in (("family", parts[0]), ("tool_type", parts[1]), ("scenario", scenario)):
            if key in c.tags and c.tags[key] != want:
                yield f"/tags/{key}", f"tags say {c.tags[key]!r} but the id says {want!r}"
        if parts[2].endswith("_streamed") and not c.streamed:
            yield "/streamed", "a *_streamed cassette must say streamed: true"
    for i, s in enumerate(c.source):
        try:
            Source(s["document"], s["section"], s.get("tag", "D"))
        except (ValueError, TypeError) as e:
            yield f"/source/{i}", str(e)
        if s.get("tag", "D") not in ("D", "S", "I", "3P", "?"):
            yield f"/source/{i}/tag", f"unknown tag {s.get('tag')!r}; use D, S, I, 3P or ?"
    facts = cassette_facts(c)
    for key, seen in (("error_codes", facts.error_codes), ("stop_reasons", facts.stop_reasons),
                      ("rules", facts.rules)):
        if key in c.tags and set(c.tags[key]) != set(seen):
            yield f"/tags/{key}", (f"tags say {sorted(c.tags[key])} but the exchanges show "
                                   f"{sorted(seen)}")
    if c.tags.get("client_errors") and not facts.client_errors:
        yield "/tags/client_errors", "tags name client error results but no request sends a " \
                                     "tool_result with is_error: true"
    for i, ex in enumerate(c.exchanges):
        want_status = _rule_status(ex.expect_rule) if ex.expect_rule else None
        if want_status is not None and ex.response.get("status") != want_status:
            yield (f"/exchanges/{i}/response/status",
                   f"an expect_rule exchange must record the rule's {want_status}")
        wants_stream = isinstance(ex.request.get("body"), dict) and ex.request["body"].get("stream")
        if wants_stream and ex.response.get("status") == 200 and "events" not in ex.response:
            yield f"/exchanges/{i}/response", "the request asks for stream: true but no events are recorded"


def _as_problems(found: Any, default_ptr: str = "/") -> Iterator[tuple[str, str]]:
    """Normalise what a validator/scanner returns: None, an iterable of errors or strings."""
    if not found:
        return
    items = found if isinstance(found, list | tuple | set) or hasattr(found, "__next__") else [found]
    for item in items:
        if isinstance(item, tuple) and len(item) == 2:  # find_secrets: (pointer, kind)
            yield str(item[0] or default_ptr), str(item[1])
            continue
        if getattr(item, "severity", "error") != "error":
            continue  # notes (lenient tolerances) are not problems
        ptr = getattr(item, "pointer", None) or (item.get("pointer") if isinstance(item, dict) else None)
        msg = getattr(item, "message", None) or (item.get("message") if isinstance(item, dict) else None)
        kind = getattr(item, "kind", None) or (item.get("kind") if isinstance(item, dict) else None)
        if msg is None:
            msg = str(item)
        if kind and str(kind) not in str(msg):
            msg = f"{kind}: {msg}"
        yield str(ptr or default_ptr), str(msg)


def _meant_to_break(c: Cassette, ptr: str) -> bool:
    """A violation inside a request recorded *because* it breaks a rule (``expect_rule``), or in a
    tool definition only such requests use, is the point of the cassette, not a problem."""
    parts = ptr.split("/")
    if len(parts) > 3 and parts[1] == "exchanges" and parts[3] == "request" and parts[2].isdigit():
        i = int(parts[2])
        return i < len(c.exchanges) and bool(c.exchanges[i].expect_rule)
    if len(parts) > 2 and parts[1] == "tools" and parts[2].isdigit() and int(parts[2]) < len(c.tools):
        tool = c.tools[int(parts[2])]
        used = [ex for ex in c.exchanges if isinstance(ex.request.get("body"), dict)
                and tool in (ex.request["body"].get("tools") or [])]
        return bool(used) and all(ex.expect_rule for ex in used)
    return False


def check_schema(c: Cassette, validate_cassette: Callable[..., Any]) -> Iterator[tuple[str, str]]:
    try:
        found = validate_cassette(c, strict=True)
    except Exception as e:  # a validator that raises: keep its pointer when it has one
        yield str(getattr(e, "pointer", "/")), str(getattr(e, "message", e))
        return
    for ptr, msg in _as_problems(found):
        if not _meant_to_break(c, ptr):
            yield ptr, msg


def check_secrets(c: Cassette, find_secrets: Callable[..., Any]) -> Iterator[tuple[str, str]]:
    for ptr, msg in _as_problems(find_secrets(c.raw)):
        yield ptr, f"secret in fixture: {msg}"



def lint_cassette(c: Cassette, root: Path | None, report: LintReport,
                  steps: Iterable[str] = STEPS) -> list[Problem]:
    path = str(c.path)
    out: list[Problem] = []
    steps = set(steps)
    runners: list[tuple[str, Callable[[], Iterable[tuple[str, str]]]]] = []
    if "identity" in steps:
        runners.append(("identity", lambda: check_identity(c, root)))
    if "schema" in steps:
        from .validation import validate_cassette  # jsonschema: only when the step runs
        runners.append(("schema", functools.partial(check_schema, c, validate_cassette)))
    if "secrets" in steps:
        from .secrets import find_secrets
        runners.append(("secrets", functools.partial(check_secrets, c, find_secrets)))
    if "replay" in steps:
        runners.append(("replay", lambda: check_replay(c)))
    if "sdk" in steps:
        runners.append(("sdk", lambda: check_sdk(c)))
    for step, run in runners:
        out.extend(Problem(path, ptr, msg, step) for ptr, msg in run())
    return out


def lint_paths(target: str | Path | None = None, steps: Iterable[str] = STEPS) -> LintReport:
    """Lint one cassette file or every cassette under a directory (default: the bundled corpus)."""
    report = LintReport()
    paths = list(iter_cassette_paths(target))
    root: Path | None = None
    if target is None:
        root = default_fixtures_root() if paths else None
    else:
        where = resolve_fixture(target)
        corpus = default_fixtures_root().resolve()
        if corpus == where.resolve() or corpus in where.resolve().parents:
            root = corpus  # part of the corpus: ids are paths from the corpus root
        elif where.is_dir():
            root = where
    steps = tuple(steps)
    for p in paths:
        report.checked += 1
        try:
            c = load_cassette(p)
        except CassetteError as e:
            report.problems.append(Problem(e.path, e.pointer, e.message, "load"))
            continue
        report.problems.extend(lint_cassette(c, root, report, steps))
    return report
