#!/usr/bin/env python3
"""openhands-aci 0.3.3: an empty input raised an exception instead of returning an error result

openhands-aci (openhands-aci 0.3.3), check editor.errors.returned_not_raised (SHOULD).
The docs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool): If Claude tries to view or modify a file that does not exist, return an appropriate error message in the tool_result:
Needs: pip install openhands-aci==0.3.3 (this file installs nothing).
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
    import json
    import re
    from openhands_aci.editor import file_editor
except ImportError as exc:
    print(f'cannot run: {exc} (install the package this reproducer names)')
    sys.exit(2)

CHECK = 'editor.errors.returned_not_raised'
DOCS = 'If Claude tries to view or modify a file that does not exist, return an appropriate error message in the tool_result:'
RULE = 'errors are returned as tool results, not raised as exceptions (no tracebacks).'
URL = 'https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool'
EXPECTED = "an error result ({'content': 'Error: ...', 'is_error': true}), not an exception"
DOCUMENTED = '{\n  "content": "Error: ...",\n  "is_error": true\n}'
RECEIVED = "TypeError: file_editor() missing 2 required positional arguments: 'command' and 'path' (at /work/main/conformance/adapters/openhands_aci.py:62)"
TIMEOUT = 3.0
#: the counterexample: the tool inputs the check sent, in order
STEPS = json.loads('[{}]')
#: what the check planted before them (files, directories, links)
SETUP = json.loads('[{"before_input": 1, "path": "$TOOLUSE_WORKDIR/f.txt", "text": "alpha\\nbeta\\ngamma\\n"}, {"before_input": 1, "path": "$TOOLUSE_WORKDIR/f.txt", "text": "alpha\\nbeta\\ngamma\\n"}, {"before_input": 1, "path": "$TOOLUSE_WORKDIR/dup.txt", "text": "x\\nx\\n"}]')


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
        pass
    except Exception as exc:
        print(f"(closing the tool raised {type(exc).__name__}: {exc})")


def answer(raw):
    # file_editor returns JSON between <oh_aci_output_ID> lines; OpenHands shows the
    # model formatted_output_and_error, an error when 'error' is set
    body = re.search(r'<oh_aci_output_[0-9a-f]+>\n(.*)\n</oh_aci_output_', raw,
                     re.DOTALL).group(1)
    data = json.loads(body)
    return {'content': data['formatted_output_and_error'],
            'is_error': bool(data.get('error'))}


def refused(exc):
    return None


def judge(results):
    raised = [(i + 1, r["raised"]) for i, r in enumerate(results) if "raised" in r]
    if raised:
        return True, f"input {raised[0][0]} raised {raised[0][1]}"
    return False, f"every input was answered: {[r.get('is_error') for r in results]}"


def main():
    global W, BASE
    BASE = tempfile.mkdtemp(prefix='repro-')
    W = os.path.join(BASE, 'work')
    os.makedirs(W)
    pass
    globals().update(locals())  # the tool, for close_tool()
    os.environ['TOOLUSE_WORKDIR'] = W
    print(f'editor.errors.returned_not_raised: {len(STEPS)} input(s) in {W}')
    results = []
    # input 1: {}
    results.append(step(1, lambda: file_editor(), 60.0))
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
