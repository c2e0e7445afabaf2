"""Answering a scenario's tool calls: the bundled reference subjects and the recorded answers.

:class:`ToolDesk` holds one fresh working directory per scenario, seeded with the files the
scenario names. Bash calls go to the reference bash subject (its session starts in that
directory); text editor calls to the reference editor of the declared version, with absolute paths
mapped under the directory (``/repo/app.py`` is ``<dir>/repo/app.py``, and the directory is never
named back to the model). Every other client tool (custom tools) gets the scenario's recorded
``tool_result`` for that tool name, one after the other (the last one again when the model calls
it more often), or an error result saying there is no recorded answer.

The bash session runs in the working directory with ``HOME`` and ``TMPDIR`` inside it and the
subjects' environment allow-list (:func:`conformance.subjects.sandbox.subject_env`: credentials
such as ``ANTHROPIC_API_KEY`` never reach a command's output). Where the subject sandbox works
(:mod:`conformance.subjects.sandbox`, ``TOOLUSE_SANDBOX=auto|required|off``) it runs under it:
read-only root, only the working directory writable, no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from conformance.reference.bash import BashSession, BashTool
from conformance.reference.editor import TextEditor
from conformance.subjects.launch import Confinement, Folders, LaunchSpec, launch
from simulator.secrets import SECRET_ENV

from .scenarios import ProbeScenario, input_of

#: Seconds a bash command may take.
BASH_TIMEOUT = 30.0


class _ProbeBashSession(BashSession):
    #: The probe's sandbox mode and limits (``tooluse probe --sandbox ...``; set per desk).
    confinement = Confinement()

    def start(self) -> None:
        """The probe's bash, launched as a subject is: the allow-list of the environment (and no
        name that looks like a secret), HOME and TMPDIR in the working directory, the sandbox
        where it works and the limits (as ``tooluse probe --sandbox``, ``--memory-limit``, ...
        say)."""
        workdir = Path(self.workdir)
        home, tmp = workdir / ".home", workdir / ".tmp"
        home.mkdir(exist_ok=True)
        tmp.mkdir(exist_ok=True)
        self.process = launch(LaunchSpec(
            ("/bin/bash", "--noprofile", "--norc"), self.confinement, cwd=workdir,
            env={"HOME": str(home), "TMPDIR": str(tmp)},
            environ={k: v for k, v in os.environ.items() if not SECRET_ENV.search(k)},
            limits="shell", folders=Folders(writable=(workdir,)), label="the probe's bash",
            popen=dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT))).proc


class _ProbeBash(BashTool):
    session_class = _ProbeBashSession


class ToolDesk:
    """Runs one scenario's client tools; :meth:`close` removes the working directory."""

    def __init__(self, scenario: ProbeScenario, root: Path | None = None,
                 confinement: Confinement | None = None) -> None:
        self.scenario = scenario
        #: The bash's sandbox mode and limits (the probe's; none given: the documented defaults).
        self.confinement = confinement or Confinement()
        self.workdir = Path(tempfile.mkdtemp(prefix="tooluse-probe-", dir=root)).resolve()
        for rel, text in scenario.files.items():
            target = self.workdir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        self._bash: BashTool | None = None
        self._editors: dict[str, TextEditor] = {}
        self._used: dict[str, int] = {}

    def answer(self, use: dict[str, Any]) -> dict[str, Any]:
        """The tool_result block for one client ``tool_use`` block."""
        name = str(use.get("name"))
        tool_input = input_of(use)
        kind, tool_type = self.scenario.tool_kind(name)
        try:
            if kind == "bash":
                out = self._bash_tool()(tool_input)
            elif kind == "editor" and tool_type is not None:
                out = self._editor(tool_type, name)(self._mapped(tool_input))
                out = {**out, "content": self._unmapped(str(out.get("content", "")))}
            else:
                return self._recorded(name, use)
        except Exception as e:  # a tool that fails answers an error result; the probe goes on
            out = {"content": f"Error: {type(e).__name__}: {e}", "is_error": True}
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": use.get("id"),
                                  "content": str(out.get("content", ""))}
        if out.get("is_error"):
            result["is_error"] = True
        return result

    def _recorded(self, name: str, use: dict[str, Any]) -> dict[str, Any]:
        recorded = self.scenario.answers.get(name) or []
        if not recorded:
            return {"type": "tool_result", "tool_use_id": use.get("id"), "is_error": True,
                    "content": f"tooluse probe: no recorded answer for tool {name!r} in "
                               f"scenario {self.scenario.id}"}
        n = self._used.get(name, 0)
        self._used[name] = n + 1
        chosen = recorded[min(n, len(recorded) - 1)]
        result = {k: v for k, v in chosen.items() if k not in ("tool_use_id", "cache_control")}
        result["tool_use_id"] = use.get("id")
        return result

    def _bash_tool(self) -> BashTool:
        if self._bash is None:
            session = type("_ProbeBashSession", (_ProbeBashSession,),
                           {"confinement": self.confinement})
            self._bash = type("_ProbeBash", (_ProbeBash,), {"session_class": session})(
                self.workdir, BASH_TIMEOUT)
        return self._bash

    def _editor(self, tool_type: str, name: str) -> TextEditor:
        editor = self._editors.get(name)
        if editor is None:
            definition = next((t for t in self.scenario.params.get("tools") or []
                               if isinstance(t, dict) and t.get("name") == name), {})
            limit = definition.get("max_characters")
            editor = self._editors[name] = TextEditor(
                self.workdir, tool_type=tool_type,
                max_characters=limit if isinstance(limit, int) else None)
        return editor

    def _mapped(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        path = tool_input.get("path")
        if isinstance(path, str) and path.startswith("/") and \
                not path.startswith(str(self.workdir)):
            return {**tool_input, "path": str(self.workdir) + path}
        return tool_input

    def _unmapped(self, text: str) -> str:
        return text.replace(str(self.workdir) + "/", "/").replace(str(self.workdir), ".")

    def close(self) -> None:
        if self._bash is not None:
            self._bash.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
