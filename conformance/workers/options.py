"""``tooluse run`` options for the agent-side subjects: ``--worker``, ``--worker-cmd``, ``--loop``,
``--loop-cmd``.

Kept here so that ``conformance/cli/run.py`` only calls :func:`add_agent_options` and
:func:`agent_subjects`. ``--worker`` and ``--loop`` also take the name of a bundled reference
(:data:`AGENT_REFERENCES`).
"""

from __future__ import annotations

import argparse
from typing import Any

#: Bundled agent-side references: name -> (family, spec).
AGENT_REFERENCES: dict[str, tuple[str, str]] = {
    "reference-worker": ("worker", "conformance.reference.worker:serve"),
    "minimal-worker": ("worker", "conformance.workers.minimal:serve"),
    "reference-loop": ("loop", "conformance.reference.loop:loop"),
    "sdk-tool-runner": ("loop", "conformance.reference.loop:sdk_tool_runner"),
}

#: What ``--all-reference`` adds: the SDK's EnvironmentWorker and the documented loop.
ALL_REFERENCE = ("reference-worker", "reference-loop")


def add_agent_options(group: Any) -> None:
    group.add_argument("--worker", action="append", default=[], metavar="SPEC",
                       help="a Managed Agents custom-tool worker: module:attr naming "
                            "async serve(client, environment_id, environment_key, *, tools, "
                            "timeout), or reference-worker")
    group.add_argument("--worker-cmd", action="append", default=[], metavar="CMD",
                       help="a worker in any language; it gets ANTHROPIC_BASE_URL, "
                            "TOOLUSE_ENVIRONMENT_ID, TOOLUSE_ENVIRONMENT_KEY, TOOLUSE_TOOL_TIMEOUT")
    from conformance.cli.run import SubjectOption

    group.add_argument("--loop", action=SubjectOption, default=[], metavar="SPEC",
                       help="an agent loop: module:attr naming loop(client, params) (sync, or "
                            "async taking the async client), or reference-loop / sdk-tool-runner")
    group.add_argument("--loop-matching", choices=["exact", "tolerant"], default=None,
                       help="how the loops' requests are matched to the recordings: exact, or "
                            "tolerant (tool order, schema noise, whole history or a restart "
                            "alike: simulator.matchers.TOLERANT_MATCHERS); default: what the loop "
                            "declares (tooluse_matching), else exact")
    group.add_argument("--loop-cmd", action=SubjectOption, default=[], metavar="CMD",
                       help="an agent loop in any language, started per scenario with "
                            "ANTHROPIC_BASE_URL (the simulation) and TOOLUSE_LOOP_PARAMS (a JSON "
                            "file: the conversations to drive); see docs/loops.md")


def agent_subjects(args: argparse.Namespace) -> list[Any]:
    """The subjects named by ``--worker``, ``--worker-cmd`` and ``--loop``."""
    from conformance.workers.subject import worker_command_subject, worker_subject

    subjects: list[Any] = []
    matching = getattr(args, "loop_matching", None)
    if getattr(args, "all_reference", False):
        subjects += [_named(name, family, matching) for name, (family, _) in AGENT_REFERENCES.items()
                     if name in ALL_REFERENCE]
    for spec in getattr(args, "worker", None) or []:
        subjects.append(_named(spec, "worker") or worker_subject(spec))
    for cmd in getattr(args, "worker_cmd", None) or []:
        subjects.append(worker_command_subject(cmd))
    names = {(dest, value): name for dest, value, name, *_ in getattr(args, "_subjects", None) or []
             if name is not None}
    for spec in getattr(args, "loop", None) or []:
        from conformance.loops.subject import loop_subject

        name = names.get(("loop", spec))
        subjects.append(_named(spec, "loop", matching)
                        or loop_subject(spec, name=name, matching=matching))
    for cmd in getattr(args, "loop_cmd", None) or []:
        from conformance.loops.subject import loop_command_subject

        subjects.append(loop_command_subject(cmd, name=names.get(("loop_cmd", cmd)),
                                             matching=matching))
    return subjects


def _named(value: str, family: str, matching: str | None = None) -> Any:
    ref = AGENT_REFERENCES.get(value)
    if ref is None:
        return None
    from conformance.errors import UsageError

    if ref[0] != family:
        raise UsageError(f"{value!r} is a {ref[0]} reference, not a {family}")
    if family == "worker":
        from conformance.workers.subject import worker_subject

        return worker_subject(ref[1], name=value)
    from conformance.loops.subject import loop_subject

    return loop_subject(ref[1], name=value, matching=matching)
