"""``--loop-cmd CMD``: an agent loop in any language, run as a program against a simulation on
loopback, judged exactly as ``--loop`` is (:class:`~conformance.loops.run.Harness`).

For each scenario the harness starts the simulation's HTTP server (``tooluse serve``'s, in this
process, on a free loopback port), writes the scenario's parameters to a JSON file in the case's
working directory, and runs ``CMD`` under ``/bin/sh -c`` (in the sandbox when it is on, sharing
the host's network like ``--worker-cmd``) with this environment:

``ANTHROPIC_BASE_URL``
    the simulation (``http://127.0.0.1:PORT``); ``ANTHROPIC_API_KEY`` is a placeholder key.
``TOOLUSE_LOOP_PARAMS``
    the path of the JSON file (below).
``TOOLUSE_SCENARIO``
    the scenario's id (``loop.functions.one_call``, or a corpus cassette's id).
``TOOLUSE_CONVERSATIONS``
    how many conversations the program must hold, one after the other.
``TOOLUSE_DEADLINE``
    the seconds the run may take in all (:func:`~conformance.loops.run.scenario_deadline`).
``TOOLUSE_MODEL``, ``TOOLUSE_PROMPT``
    the first conversation's model and its first user message as text (for programs that take
    a prompt, not a message list).

The JSON file::

    {"scenario": "...", "statement": "...",
     "conversations": [{"model": ..., "max_tokens": ..., "tools": [...], "messages": [...],
                        "stream": true, "container": "...", "extra_headers": {...}}, ...],
     "tool_results": {"toolu_...": <content>},
     "tool_results_by_call": [{"name": "get_weather", "input": {...}, "content": <content>}]}

``conversations`` are the Messages create parameters of each conversation's first request, in
order (``extra_headers`` carries a recorded ``anthropic-beta`` header); the program drives each
one to its end: it answers client tools (with the recorded content, found by tool_use id or by
name and input, or with its own), resends after ``pause_turn``, retries 429/529. Then it exits
0. A non-zero exit is reported as the loop raising (with the end of its stderr); running past
the deadline as a timeout (the program's process group is killed).

**What a program cannot express.** Run with ``TOOLUSE_LOOP_DESCRIBE=1`` (no server, no params
file), a program may print one JSON object and exit 0::

    {"unsupported": {"<check id>": "why", ...},
     "variants": {"client_tool": "custom", "code_execution": "code_execution_20250825"},
     "matching": "tolerant"}

``unsupported`` checks are *not applicable* to it (skipped with the reason), as a ``--loop``
callable's ``tooluse_unsupported``; ``variants`` pick the recording of each scenario made with
the client tool and code execution version the program can express
(:meth:`~conformance.loops.scenarios.LoopScenario.for_variants`), as ``tooluse_variants``. A
program that prints nothing there declares nothing. ``matching`` picks the matcher set, as a
callable's ``tooluse_matching`` (``--loop-matching`` wins).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.subjects.launch import Confinement, SubjectStartError, launch_networked
from simulator.matchers import Matcher

from .run import API_KEY, Harness, LoopOutcome, scenario_deadline
from .scenarios import LoopScenario

#: Seconds a describe query (``TOOLUSE_LOOP_DESCRIBE=1``) may take.
DESCRIBE_DEADLINE = 60.0


def first_prompt(params: dict[str, Any]) -> str:
    """The first user message's text (its text blocks joined), for ``TOOLUSE_PROMPT``."""
    messages = params.get("messages") or []
    content = messages[0].get("content") if messages and isinstance(messages[0], dict) else ""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or []
                     if isinstance(b, dict) and b.get("type") == "text")


def params_document(harness: Harness) -> dict[str, Any]:
    """What ``TOOLUSE_LOOP_PARAMS`` names: the conversations and the recorded tool results."""
    by_call = []
    for ex in harness.cassette.exchanges:
        for block in _response_blocks(ex.response):
            if block.get("type") == "tool_use" and str(block.get("id")) in harness.results:
                by_call.append({"name": block.get("name"), "input": block.get("input"),
                                "content": harness.results[str(block.get("id"))]})
    return {"scenario": harness.scenario.id, "statement": harness.scenario.statement,
            "conversations": harness.conversations, "tool_results": harness.results,
            "tool_results_by_call": by_call}


def _response_blocks(response: dict[str, Any]) -> list[dict[str, Any]]:
    body = response.get("body")
    if isinstance(body, dict) and isinstance(body.get("content"), list):
        return [b for b in body["content"] if isinstance(b, dict)]
    blocks = []
    for event in response.get("events") or []:
        data = event.get("data") if isinstance(event, dict) else None
        if isinstance(data, dict) and data.get("type") == "content_block_start":
            block = data.get("content_block")
            if isinstance(block, dict) and block.get("type") == "tool_use":
                # the streamed input comes in deltas: join them
                blocks.append({**block, "input": _streamed_input(response, data.get("index"))})
    return blocks


def _streamed_input(response: dict[str, Any], index: Any) -> Any:
    parts = []
    for event in response.get("events") or []:
        data = event.get("data") if isinstance(event, dict) else None
        if (isinstance(data, dict) and data.get("type") == "content_block_delta"
                and data.get("index") == index):
            delta = data.get("delta") or {}
            if delta.get("type") == "input_json_delta":
                parts.append(str(delta.get("partial_json", "")))
    try:
        return json.loads("".join(parts)) if parts else {}
    except ValueError:
        return {}


def run_loop_command(command: str, scenario: LoopScenario, workdir: Path, *,
                     deadline: float | None = None, max_requests: int = 40,
                     matching: str | Sequence[Matcher] = "exact",
                     confinement: Confinement) -> LoopOutcome:
    """Run ``command`` through ``scenario`` against the simulation served on loopback,
    confined as ``confinement`` (the run's) says."""
    from simulator.server import start_server

    harness = Harness(scenario, max_requests=max_requests, matching=matching)
    outcome = harness.outcome
    limit = deadline if deadline is not None else scenario_deadline(
        scenario, len(harness.conversations))
    workdir.mkdir(parents=True, exist_ok=True)
    params_path = workdir / "tooluse-loop-params.json"
    params_path.write_text(json.dumps(params_document(harness), ensure_ascii=False, indent=1))
    base, stop_server = start_server(harness, threaded=True)
    first = harness.conversations[0] if harness.conversations else {}
    extra = {"TOOLUSE_LOOP_PARAMS": str(params_path), "TOOLUSE_SCENARIO": scenario.id,
             "TOOLUSE_CONVERSATIONS": str(len(harness.conversations)),
             "TOOLUSE_DEADLINE": f"{limit:g}", "TOOLUSE_MODEL": str(first.get("model", "")),
             "TOOLUSE_PROMPT": first_prompt(first)}
    home: Path | None = None
    try:
        with tempfile.TemporaryFile() as err:
            started, home = launch_networked(
                command, workdir, extra, granted={"ANTHROPIC_BASE_URL": base,
                                                  "ANTHROPIC_API_KEY": API_KEY},
                prefix="tooluse-loop-home-", label="the loop command", confinement=confinement,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
            proc = started.proc
            try:
                proc.wait(limit)
            except subprocess.TimeoutExpired:
                outcome.timed_out = True
                _kill_group(proc)
            if not outcome.timed_out and proc.returncode != 0:
                err.seek(0)
                text = err.read().decode("utf-8", "replace").strip()
                outcome.raised = (f"the loop command exited with status {proc.returncode}"
                                  + (f": {text[-600:]}" if text else ""))
    finally:
        stop_server()
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)
    return harness.finish()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(3)
            return
        except subprocess.TimeoutExpired:
            continue


def describe(command: str, workdir: Path, confinement: Confinement
             ) -> tuple[dict[str, str], dict[str, str], str | None]:
    """What ``command`` declares (``TOOLUSE_LOOP_DESCRIBE=1``): the checks not applicable to
    it, its variants (both empty when it declares nothing) and its matcher set (``matching``,
    as a callable's ``tooluse_matching``; None when not declared)."""
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        started, home = launch_networked(
            command, workdir, {"TOOLUSE_LOOP_DESCRIBE": "1"}, prefix="tooluse-loop-home-",
            label="the loop command", confinement=confinement, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except SubjectStartError:
        return {}, {}, None
    proc = started.proc
    try:
        stdout, _ = proc.communicate(timeout=DESCRIBE_DEADLINE)
    except subprocess.TimeoutExpired:  # as subprocess.run does
        proc.kill()
        proc.communicate()
        return {}, {}, None
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0:
        return {}, {}, None
    for line in reversed(stdout.decode("utf-8", "replace").splitlines()):
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            matching = doc.get("matching")
            return (_strings(doc.get("unsupported")), _strings(doc.get("variants")),
                    matching if isinstance(matching, str) else None)
    return {}, {}, None


def _strings(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items() if v} if isinstance(value, dict) else {}
