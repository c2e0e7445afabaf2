#!/usr/bin/env python3
"""swe-rex 1.4.0: all 100000 lines (588895 characters) were returned untruncated

swe-rex (swe-rex 1.4.0), check bash.output.large_output_truncated (SHOULD).
The docs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/bash-tool): To avoid token limit problems, truncate large outputs
Needs: pip install swe-rex==1.4.0 (this file installs nothing).
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
    import asyncio
    import shlex
    from swerex.exceptions import BashIncorrectSyntaxError, CommandTimeoutError
    from swerex.runtime.abstract import (BashAction, BashInterruptAction,
                                         CloseBashSessionRequest,
                                         CreateBashSessionRequest)
    from swerex.runtime.local import LocalRuntime

    LOOP = asyncio.new_event_loop()


    def run(coro):
        return LOOP.run_until_complete(coro)


    async def start_session(runtime, workdir, timeout):
        # as SWE-agent: a session, then cd into the repository
        await runtime.create_session(CreateBashSessionRequest(startup_timeout=max(timeout, 10.0)))
        await runtime.run_in_session(BashAction(command="cd " + shlex.quote(workdir),
                                                timeout=timeout, check="silent"))


    async def communicate(runtime, command, timeout):
        # SWE-agent's communicate: check="silent"; on a timeout it interrupts the session
        try:
            obs = await runtime.run_in_session(BashAction(command=command, timeout=timeout,
                                                          check="silent"))
        except CommandTimeoutError as e:
            interrupted = await runtime.run_in_session(BashInterruptAction())
            return {"content": str(e) + (f"\n{interrupted.output}" if interrupted.output else ""),
                    "is_error": True}
        except BashIncorrectSyntaxError as e:
            return {"content": str(e), "is_error": True}
        return {"content": obs.output, "is_error": obs.exit_code != 0}


    async def restart(runtime, workdir, timeout):
        await runtime.close_session(CloseBashSessionRequest())
        await start_session(runtime, workdir, timeout)
        return {"content": "tool has been restarted.", "is_error": False}


    def answer(raw):
        return raw


    def refused(exc):
        return None
except ImportError as exc:
    print(f'cannot run: {exc} (install the package this reproducer names)')
    sys.exit(2)

CHECK = 'bash.output.large_output_truncated'
DOCS = 'To avoid token limit problems, truncate large outputs'
RULE = 'Large outputs are truncated before they are returned (the API does not truncate); any part may be kept.'
URL = 'https://platform.claude.com/docs/en/agents-and-tools/tool-use/bash-tool'
EXPECTED = 'a truncated output that says so, not all 100,000 lines'
DOCUMENTED = '{first 100 lines}\n\n... Output truncated (100001 total lines) ...'
RECEIVED = '{\n  "content": "\\r\\n1\\n2\\n3\\n4\\n5\\n6\\n7\\n8\\n9\\n10\\n11\\n12\\n13\\n14\\n15\\n16\\n17\\n18\\n19\\n20\\n21\\n22\\n23\\n24\\n25\\n26\\n27\\n28\\n29\\n30\\n31\\n32\\n33\\n34\\n35\\n36\\n37\\n38\\n39\\n40\\n41\\n42\\n43\\n44\\n45\\n46\\n47\\n48\\n49\\n50\\n51\\n52\\n53\\n54\\n55\\n56\\n57\\n58\\n59\\n60\\n61\\n62\\n63\\n64\\n65\\n66\\n67\\n68\\n69\\n…[588901 characters]…88\\n99989\\n99990\\n99991\\n99992\\n99993\\n99994\\n99995\\n99996\\n99997\\n99998\\n99999\\n100000\\n\\r\\n\\r\\n",\n  "is_error": false,\n  "timed_out": false\n}'
TIMEOUT = 3.0
#: the counterexample: the tool inputs the check sent, in order
STEPS = json.loads('[{"command": "seq 1 100000"}]')
#: what the check planted before them (files, directories, links)
SETUP = json.loads('[]')


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
        run(runtime.close())
    except Exception as exc:
        print(f"(closing the tool raised {type(exc).__name__}: {exc})")


# answer() and refused() are above


def judge(results):
    shown = text(results[-1])
    lines = len(shown.splitlines())
    return lines >= 100000, f"{lines} lines ({len(shown)} characters) returned"


def main():
    global W, BASE
    BASE = tempfile.mkdtemp(prefix='repro-')
    W = os.path.join(BASE, 'work')
    os.makedirs(W)
    runtime = LocalRuntime()
    run(start_session(runtime, W, 3.0))
    globals().update(locals())  # the tool, for close_tool()
    os.environ['TOOLUSE_WORKDIR'] = W
    print(f'bash.output.large_output_truncated: {len(STEPS)} input(s) in {W}')
    results = []
    # input 1: {"command": "seq 1 100000"}
    results.append(step(1, lambda: run(communicate(runtime, 'seq 1 100000', 3.0)), 60.0))
    plant(2)
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
