"""The suite's own subjects' "own API": the JSON-lines command contract (docs/subjects.md).

A column that is a command (``command = "node tool.js"``) or one of this repository's factories
(the bundled references, ``tests/broken/``) has no upstream package: its reproducer starts the
subject as ``tooluse run`` does (a command as it is; a factory through
``python -m conformance.subjects.host``, which answers ``{"ready": true}`` first) and speaks JSON
lines with the standard library. ``python repro.py SPEC`` runs the same steps against another
subject (the reference), which is how the tests prove a reproducer exits 0 once fixed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.adapters._repro import UpstreamCalls, lit

_SUBJECT = '''\
class Subject:
    """One subject process speaking JSON lines: a tool input per line in, a result per line out."""

    def __init__(self, spec, workdir, timeout):
        env = dict(os.environ, TOOLUSE_WORKDIR=workdir, TOOLUSE_TIMEOUT=str(timeout))
        if IS_FACTORY:
            argv, env["TOOLUSE_SPEC"] = [sys.executable, "-m", "conformance.subjects.host"], spec
        else:
            argv = ["/bin/sh", "-c", spec]
        self.proc = subprocess.Popen(argv, cwd=workdir, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, start_new_session=True)
        if IS_FACTORY:
            ready = json.loads(self.proc.stdout.readline() or b"{}")
            if not ready.get("ready"):
                raise RuntimeError(f"the subject did not start: {ready.get('error')}")

    def call(self, tool_input):
        self.proc.stdin.write(json.dumps(tool_input).encode() + b"\\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the subject exited without answering")
        return json.loads(line)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()


def answer(raw):
    if raw.get("raised"):  # the host's note: the handler raised
        raise RuntimeError(raw["raised"])
    return raw


def refused(exc):
    return None
'''


def contract_calls(spec: str, *, is_factory: bool, timeout: float) -> UpstreamCalls:
    """The calls of a JSON-lines subject (see the module docstring)."""
    if is_factory:
        path, sep, attr = spec.rpartition(":")
        if path.endswith(".py") and Path(path).exists():  # a file: by its absolute path
            spec = f"{Path(path).resolve()}{sep}{attr}"
    return UpstreamCalls(
        install="(this suite's own subject: the suite's environment)",
        imports=("import json\nimport signal\nimport subprocess\n\n"
                 f"#: the subject: python repro.py OTHER_SPEC runs the same steps on another\n"
                 f"SUBJECT = sys.argv[1] if len(sys.argv) > 1 else {spec!r}\n"
                 f"IS_FACTORY = {is_factory!r}\n\n\n" + _SUBJECT),
        make=f"tool = Subject(SUBJECT, W, {timeout!r})",
        call=lambda tool_input: f"tool.call({lit(tool_input)})",
        answer="", close="tool.close()")


def entry_calls(impl: dict[str, Any], timeout: float) -> UpstreamCalls | None:
    """The calls for a matrix column of the suite's own (None when it is an upstream adapter)."""
    spec = str(impl.get("spec") or "")
    if impl.get("kind") == "command":
        return contract_calls(spec.removeprefix("cmd:"), is_factory=False, timeout=timeout)
    if spec.startswith("conformance.adapters."):
        return None
    return contract_calls(spec, is_factory=True, timeout=timeout)
