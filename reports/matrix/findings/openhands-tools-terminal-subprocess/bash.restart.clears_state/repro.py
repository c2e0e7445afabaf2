#!/usr/bin/env python3
"""openhands-tools 1.58.2: restart did not clear the session: background process still running (3940)

openhands-tools-terminal-subprocess (openhands-tools 1.58.2), check bash.restart.clears_state (MUST).
The docs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/bash-tool): The restarted session starts clean. The working directory, environment variables and running processes are all gone.
Needs: pip install --use-deprecated=legacy-resolver openhands-tools==1.58.2 fastmcp==4.1.1 'fastmcp-slim[client,server]==4.1.1' (this file installs nothing).
Run: python repro.py  (exit 1 while the defect is there, 0 once fixed, 2 when it cannot run)
"""

import ast
import json
import os
import shutil
import signal
import sys
import tempfile
import threading

try:
    from openhands.tools.terminal.definition import TerminalAction
    from openhands.tools.terminal.impl import TerminalExecutor
except ImportError as exc:
    print(f'cannot run: {exc} (install the package this reproducer names)')
    sys.exit(2)

CHECK = 'bash.restart.clears_state'
DOCS = 'The restarted session starts clean. The working directory, environment variables and running processes are all gone.'
RULE = 'After `restart` the working directory, environment and running processes of the old session are gone.'
URL = 'https://platform.claude.com/docs/en/agents-and-tools/tool-use/bash-tool'
EXPECTED = 'running processes are gone after a restart'
DOCUMENTED = 'a clean session: working directory, environment variables and running processes are gone'
RECEIVED = '{\n  "content": "$TOOLUSE_WORKDIR\\nvar=[]\\n[The command completed with exit code 0.]\\n[Current working directory: $TOOLUSE_WORKDIR]\\n[Python interpreter: /root/.cache/tooluse/matrix/py3.12-c39d1760172cded1/bin/python]\\n[Command finished with exit code 0]",\n  "is_error": false\n}'
TIMEOUT = 3.0
#: the counterexample: the tool inputs the check sent, in order
STEPS = json.loads('[{"command": "cd $TOOLUSE_WORKDIR/before-restart"}, {"command": "export TOOLUSE_RESTART_VAR=still-here"}, {"command": "sleep 3600 >/dev/null 2>&1 & echo \\"bg-pid=$!\\""}, {"restart": true}, {"command": "pwd; echo \\"var=[$TOOLUSE_RESTART_VAR]\\""}]')
#: what the check planted before them (files, directories, links)
SETUP = json.loads('[{"before_input": 1, "path": "$TOOLUSE_WORKDIR/before-restart", "directory": true}]')


W = ""
BASE = ""
LEFT_RUNNING = []
_CLOSED = []


def here(value):
    """A step's string with the working directory put where it says $TOOLUSE_WORKDIR."""
    for form in ("\'\"$TOOLUSE_WORKDIR\"\'", "\'\"$TOOLUSE_WORKDIR\"$\'"):
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
        executor.close()
    except Exception as exc:
        print(f"(closing the tool raised {type(exc).__name__}: {exc})")


def answer(observation):
    # what the SDK's agent shows the model: observation.to_llm_content, and the tool's flag
    text = "".join(getattr(item, "text", "") for item in observation.to_llm_content)
    return {"content": text, "is_error": bool(observation.is_error)}


def refused(exc):
    # the agent answers arguments that do not validate with an error, without running the tool
    if type(exc).__name__ == "ValidationError":
        return {"content": f"Error validating tool arguments: {exc}", "is_error": True}
    return None


import re
import time


def background_pid(results):
    for r in results:
        m = re.search(r"bg-pid=(\d+)", text(r))
        if m:
            LEFT_RUNNING.append(int(m.group(1)))
            return int(m.group(1))
    return None


def judge(results):
    pid = background_pid(results)
    if pid is None:
        return False, "no background job was started"
    time.sleep(1.0)
    return alive(pid), f"the background job (pid {pid}) is {'still running' if alive(pid) else 'gone'} after the restart"


def main():
    global W, BASE
    BASE = tempfile.mkdtemp(prefix='repro-')
    W = os.path.join(BASE, 'work')
    os.makedirs(W)
    os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
    executor = TerminalExecutor(working_dir=W, terminal_type='subprocess')
    globals().update(locals())  # the tool, for close_tool()
    os.environ['TOOLUSE_WORKDIR'] = W
    print(f'bash.restart.clears_state: {len(STEPS)} input(s) in {W}')
    results = []
    # input 1: {"command": "cd $TOOLUSE_WORKDIR/before-restart"}
    results.append(step(1, lambda: executor(TerminalAction.model_validate({'command': here('cd $TOOLUSE_WORKDIR/before-restart'), 'timeout': 3.0})), 60.0))
    # input 2: {"command": "export TOOLUSE_RESTART_VAR=still-here"}
    results.append(step(2, lambda: executor(TerminalAction.model_validate({'command': 'export TOOLUSE_RESTART_VAR=still-here', 'timeout': 3.0})), 60.0))
    # input 3: {"command": "sleep 3600 >/dev/null 2>&1 & echo \"bg-pid=$!\""}
    results.append(step(3, lambda: executor(TerminalAction.model_validate({'command': 'sleep 3600 >/dev/null 2>&1 & echo "bg-pid=$!"', 'timeout': 3.0})), 60.0))
    # input 4: {"restart": true}
    results.append(step(4, lambda: executor(TerminalAction.model_validate({'command': '', 'reset': True})), 60.0))
    # input 5: {"command": "pwd; echo \"var=[$TOOLUSE_RESTART_VAR]\""}
    results.append(step(5, lambda: executor(TerminalAction.model_validate({'command': 'pwd; echo "var=[$TOOLUSE_RESTART_VAR]"', 'timeout': 3.0})), 60.0))
    plant(6)
    defect, happened = judge(results)
    close_tool()
    print()
    print(f'the docs ({URL}): {DOCS}')
    print(f'the rule: {RULE}')
    print(f'expected: {EXPECTED}')
    print(f'happened: {happened}')
    print('defect present: exit 1' if defect else 'not reproduced (fixed?): exit 0')
    return 1 if defect else 0


if __name__ == '__main__':
    try:
        code = main()
    except Exception as exc:  # the reproducer itself failed: no verdict
        import traceback
        traceback.print_exc()
        print(f'cannot run: {type(exc).__name__}: {exc}')
        code = 2
    sys.stdout.flush()
    cleanup()
    os._exit(code)
