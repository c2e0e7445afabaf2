"""``repro.py``: a failing cell's counterexample as a standalone script.

The script imports the standard library and the implementation (through its own API: the
adapter's :func:`repro_calls`, or the JSON-lines contract for the suite's own subjects,
:mod:`conformance.findings.contract`), makes a fresh working directory, plants the cell's setup
files, sends the counterexample's tool inputs one by one as the implementation's agent loop would,
and asks the check's oracle (:mod:`conformance.findings.oracles`) whether the defect showed.

Exit codes: 1 the defect is there; 0 it is not (fixed); 2 the reproducer could not run (the
package is not importable, or the script itself failed): never a verdict.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from conformance.adapters._repro import UpstreamCalls
from conformance.findings.oracles import Oracle

#: Seconds a step may take, unless the check is about the command timeout.
STEP_DEADLINE = 60.0

_HARNESS = '''\
W = ""
BASE = ""
LEFT_RUNNING = []
_CLOSED = []


def here(value):
    """A step's string with the working directory put where it says $TOOLUSE_WORKDIR."""
    for form in ("\\'\\"$TOOLUSE_WORKDIR\\"\\'", "\\'\\"$TOOLUSE_WORKDIR\\"$\\'"):
        value = value.replace(form, W)
    return value.replace("$TOOLUSE_WORKDIR", W)


def text(result):
    content = result.get("content", "")
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content if isinstance(content, str) else repr(content)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


def plant(before_input):
    """The files the check planted before this input (setup steps, not tool calls)."""
    for s in SETUP:
        if s["before_input"] != before_input:
            continue
        path = here(s["path"])
        if s.get("directory"):
            os.makedirs(path, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if "symlink_to" in s:
            os.symlink(here(s["symlink_to"]), path)
            continue
        data = s["text"].encode() if "text" in s else ast.literal_eval(s["bytes"])
        with open(path, "wb") as f:
            f.write(data)


def cleanup():
    for pid in LEFT_RUNNING:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if BASE:
        shutil.rmtree(BASE, ignore_errors=True)


def give_up(what):
    print(f"happened: {what}")
    print("defect present: exit 1")
    sys.stdout.flush()
    cleanup()
    os._exit(1)


def step(n, call, deadline):
    plant(n)
    timer = threading.Timer(deadline, give_up,
                            [f"input {n} did not come back within {deadline:.0f} s (a hang)"])
    timer.daemon = True
    timer.start()
    try:
        try:
            result = answer(call())
        except Exception as exc:  # what the agent loop answers, or what escapes it
            result = refused(exc) or {"raised": f"{type(exc).__name__}: {exc}"}
    finally:
        timer.cancel()
    shown = result.get("raised") or text(result)
    print(f"input {n}: is_error={result.get('is_error')!r} {shown[:160]!r}")
    return result


def close_tool():
    if _CLOSED:
        return
    _CLOSED.append(True)
    try:
CLOSE
    except Exception as exc:
        print(f"(closing the tool raised {type(exc).__name__}: {exc})")
'''


def _block(source: str, indent: str) -> str:
    return textwrap.indent(source.strip("\n"), indent) if source.strip() else indent + "pass"


def render_repro(*, title: str, header: str, calls: UpstreamCalls, oracle: Oracle,
                 steps: list[dict[str, Any]], setup: list[dict[str, Any]], documented: str,
                 received: str, timeout: float, check_id: str, statement: str, url: str,
                 sentence: str = "") -> str:
    """The reproducer's source (see the module docstring)."""
    deadline = timeout + 10.0 if oracle.deadline == "timeout" else STEP_DEADLINE
    harness = _HARNESS.replace("CLOSE\n", _block(calls.close, " " * 8) + "\n")
    lines = [
        "#!/usr/bin/env python3",
        '"""' + title.replace('"""', "'''") + "\n\n" + header.replace('"""', "'''").rstrip() + '\n"""',
        "",
        "import ast",
        "import json",
        "import os",
        "import shutil",
        "import signal",
        "import sys",
        "import tempfile",
        "import threading",
        "",
        "try:",
        _block(calls.imports, "    "),
        "except ImportError as exc:",
        "    print(f'cannot run: {exc} (install the package this reproducer names)')",
        "    sys.exit(2)",
        "",
        f"CHECK = {check_id!r}",
        f"DOCS = {(sentence or statement)!r}",
        f"RULE = {statement!r}",
        f"URL = {url!r}",
        f"EXPECTED = {oracle.expected!r}",
        f"DOCUMENTED = {documented!r}",
        f"RECEIVED = {received!r}",
        f"TIMEOUT = {timeout!r}",
        "#: the counterexample: the tool inputs the check sent, in order",
        f"STEPS = json.loads({json.dumps(steps, ensure_ascii=False)!r})",
        "#: what the check planted before them (files, directories, links)",
        f"SETUP = json.loads({json.dumps(setup, ensure_ascii=False)!r})",
        "",
        "",
        harness.rstrip(),
        "",
        "",
        calls.answer.rstrip() if calls.answer.strip() else "# answer() and refused() are above",
        "",
        "",
        oracle.source.rstrip(),
        "",
        "",
        "def main():",
        "    global W, BASE",
        "    BASE = tempfile.mkdtemp(prefix='repro-')",
    ]
    if not calls.tool_makes_workdir:
        lines += ["    W = os.path.join(BASE, 'work')", "    os.makedirs(W)"]
    for name, value in calls.env:
        lines.append(f"    os.environ.setdefault({name!r}, {value!r})")
    lines += [_block(calls.make, "    ") if calls.make.strip() else "    pass",
              "    globals().update(locals())  # the tool, for close_tool()",
              "    os.environ['TOOLUSE_WORKDIR'] = W",
              f"    print(f'{check_id}: {{len(STEPS)}} input(s) in {{W}}')",
              "    results = []"]
    for n, tool_input in enumerate(steps, 1):
        shown = json.dumps(tool_input, ensure_ascii=False)
        if len(shown) > 200:
            shown = shown[:200] + "…"
        lines.append(f"    # input {n}: {shown}")
        lines.append(f"    results.append(step({n}, lambda: {calls.call(tool_input)}, "
                     f"{deadline!r}))")
    lines += [
        f"    plant({len(steps) + 1})",
        "    defect, happened = judge(results)",
        "    close_tool()",
        "    print()",
        "    print(f'the docs ({URL}): {DOCS}')",
        "    print(f'the rule: {RULE}')",
        "    print(f'expected: {EXPECTED}')",
        "    print(f'happened: {happened}')",
        "    print('defect present: exit 1' if defect else 'not reproduced (fixed?): exit 0')",
        "    return 1 if defect else 0",
        "",
        "",
        "if __name__ == '__main__':",
        "    try:",
        "        code = main()",
        "    except Exception as exc:  # the reproducer itself failed: no verdict",
        "        import traceback",
        "        traceback.print_exc()",
        "        print(f'cannot run: {type(exc).__name__}: {exc}')",
        "        code = 2",
        "    sys.stdout.flush()",
        "    cleanup()",
        "    os._exit(code)",
        "",
    ]
    return "\n".join(lines)
