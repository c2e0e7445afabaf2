"""What a probe drives: each scenario's opening request, the files it names, its recorded answers.

A :class:`ProbeScenario` is read from a cassette: the first Messages request a client sends
(``expect_rule`` exchanges, broken on purpose, are skipped) gives the opening parameters (system,
tools, tool_choice, container, every other body field, the messages of the first user turn) and
the ``anthropic-beta`` header; the recorded conversation gives the files to seed the working
directory with (the text editor's paths: the content its ``view`` showed, else the text its
``str_replace`` expected) and the recorded ``tool_result`` of every custom tool, by tool name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import ToolUseError
from conformance.loops.corpus import plan
from simulator.cassette import Cassette, CassetteError
from simulator.matchers import blocks_of
from simulator.registry import TOOLS

MESSAGES_PATH = "/v1/messages"
#: Fields of the opening body the probe sets itself.
DRIVER_FIELDS = ("model", "messages", "stream", "container")
_VIEW_LINE = re.compile(r"^\s*\d+(?::\s?|\t)", re.M)


class ScenarioError(ToolUseError, ValueError):
    """A scenario argument that names nothing drivable; the message names it and the fix."""


@dataclass(frozen=True)
class ProbeScenario:
    id: str
    path: str
    #: Opening request body without the fields in :data:`DRIVER_FIELDS`.
    params: dict[str, Any]
    messages: list[Any]
    stream: bool
    container: Any = None
    #: Request headers worth sending again (``anthropic-beta``).
    headers: dict[str, str] = field(default_factory=dict)
    #: Relative path -> text, written into the working directory first.
    files: dict[str, str] = field(default_factory=dict)
    #: Tool name -> recorded tool_result blocks, in the order the recording answered them.
    answers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def tool_kind(self, name: str) -> tuple[str, str | None]:
        """``("bash"|"editor"|"recorded", tool type)`` of a client tool by name."""
        for t in self.params.get("tools") or []:
            if isinstance(t, dict) and t.get("name") == name:
                kind = str(t.get("type") or "custom")
                version = TOOLS.get(kind)
                family = version.family if version is not None else "custom"
                if family == "bash":
                    return "bash", kind
                if family == "text_editor":
                    return "editor", kind
                return "recorded", kind
        return "recorded", None


def input_of(block: dict[str, Any]) -> dict[str, Any]:
    """A tool call's ``input`` (an empty dict when it is not an object)."""
    value = block.get("input")
    return value if isinstance(value, dict) else {}


def opening_exchange(cassette: Cassette) -> Any:
    """The first Messages request a client sends (None when there is none)."""
    for ex in cassette.exchanges:
        if ex.expect_rule:
            continue
        req = ex.request
        body = req.get("body")
        if str(req.get("method", "")).upper() == "POST" and \
                str(req.get("path", "")).rstrip("/") == MESSAGES_PATH and \
                isinstance(body, dict) and isinstance(body.get("messages"), list):
            return ex
    return None


def _requests(cassette: Cassette) -> Iterable[dict[str, Any]]:
    for ex in cassette.exchanges:
        body = ex.request.get("body")
        if not ex.expect_rule and isinstance(body, dict):
            yield body


def _calls_and_results(cassette: Cassette) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Tool calls by id and tool results in first-seen order, from the recorded requests (the
    longest history holds them all) and responses."""
    calls: dict[str, dict[str, Any]] = {}
    results: dict[str, dict[str, Any]] = {}
    for body in _requests(cassette):
        for m in body.get("messages") or []:
            if not isinstance(m, dict):
                continue
            for b in blocks_of(m.get("content")):
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    calls.setdefault(b["id"], b)
                elif b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                    results.setdefault(b["tool_use_id"], b)
    for ex in cassette.exchanges:
        rb = ex.response.get("body")
        for b in blocks_of(rb.get("content")) if isinstance(rb, dict) else []:
            if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                calls.setdefault(b["id"], b)
    return calls, list(results.values())


def _result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in blocks_of(content) if b.get("type") == "text")


def _relative(path: str) -> str | None:
    rel = path.lstrip("/")
    parts = Path(rel).parts
    if not rel or ".." in parts:
        return None
    return rel


def seed_files(cassette: Cassette) -> dict[str, str]:
    """Files the scenario's editor calls name: what ``view`` showed (line numbers removed), else
    what ``str_replace`` expected to find; never a file the conversation creates first."""
    calls, results = _calls_and_results(cassette)
    by_id = {r["tool_use_id"]: r for r in results}
    files: dict[str, str] = {}
    created: set[str] = set()
    for cid, call in calls.items():
        tool_input = input_of(call)
        raw = tool_input.get("path")
        command = tool_input.get("command")
        rel = _relative(raw) if isinstance(raw, str) else None
        if rel is None or command not in ("view", "str_replace", "insert", "create"):
            continue
        if command == "create":
            created.add(rel)
            continue
        if rel in created or rel in files and command != "view":
            continue
        result = by_id.get(cid)
        if command == "view" and result is not None and not result.get("is_error"):
            text = _result_text(result)
            if _VIEW_LINE.match(text):
                files[rel] = _VIEW_LINE.sub("", text) + "\n"
        elif command == "str_replace" and isinstance(tool_input.get("old_str"), str):
            files.setdefault(rel, tool_input["old_str"] + "\n")
        elif command == "insert":
            files.setdefault(rel, "\n")
    return files


def recorded_answers(cassette: Cassette) -> dict[str, list[dict[str, Any]]]:
    """The recorded ``tool_result`` blocks, by the name of the tool they answered."""
    calls, results = _calls_and_results(cassette)
    out: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        call = calls.get(r["tool_use_id"])
        if call is not None and isinstance(call.get("name"), str):
            out.setdefault(call["name"], []).append(r)
    return out


def from_cassette(cassette: Cassette) -> ProbeScenario | None:
    """The scenario of a cassette, or None when it holds no Messages request."""
    ex = opening_exchange(cassette)
    if ex is None:
        return None
    body = dict(ex.request["body"])
    headers = {k.lower(): str(v) for k, v in (ex.request.get("headers") or {}).items()}
    return ProbeScenario(
        id=cassette.id, path=str(cassette.path or cassette.id),
        params={k: v for k, v in body.items() if k not in DRIVER_FIELDS},
        messages=list(body["messages"]), stream=body.get("stream") is True,
        container=body.get("container"),
        headers={k: v for k, v in headers.items() if k == "anthropic-beta"},
        files=seed_files(cassette), answers=recorded_answers(cassette))


@dataclass(frozen=True)
class Skipped:
    id: str
    reason: str


def load_scenarios(sources: Sequence[str] = ()) -> tuple[list[ProbeScenario], list[Skipped]]:
    """Scenarios from cassette files or directories (by path or corpus name); with none, the
    drivable corpus (:func:`conformance.loops.corpus.plan`)."""
    from simulator.routes import load_cassettes

    skipped: list[Skipped] = []
    cassettes: list[Cassette] = []
    if not sources:
        p = plan()
        cassettes = [run.scenario.load() for run in p.runs]
        skipped += [Skipped(e.cassette, e.reason) for e in p.excluded]
    for source in sources:
        try:
            found = load_cassettes(source)
        except FileNotFoundError:
            raise ScenarioError(f"{source}: no such cassette file or directory (give a cassette, "
                                "a directory of them, or a corpus name such as text_editor)") from None
        except CassetteError as e:
            fix = "give a cassette file, a directory of them or a corpus name" \
                if "no such file" in e.message else "fix the cassette or leave it out"
            raise ScenarioError(f"{e}; {fix}") from None
        if not found:
            raise ScenarioError(f"{source}: no cassettes (*.json) found there")
        cassettes += found
    scenarios: list[ProbeScenario] = []
    seen: set[str] = set()
    for c in cassettes:
        if c.id in seen:
            skipped.append(Skipped(c.id, "the same scenario id was given twice"))
            continue
        seen.add(c.id)
        s = from_cassette(c)
        if s is None:
            skipped.append(Skipped(c.id, "no Messages request a client sends"))
        else:
            scenarios.append(s)
    return scenarios, skipped
