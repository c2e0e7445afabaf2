#!/usr/bin/env python3
"""openhands-aci 0.3.3: view did not show the file's line "éb" (in order)

openhands-aci (openhands-aci 0.3.3), check editor.model.agrees_with_reference_model (MUST).
The docs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool): The text editor tool supports several commands for viewing and modifying files:
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

CHECK = 'editor.model.agrees_with_reference_model'
DOCS = 'The text editor tool supports several commands for viewing and modifying files:'
RULE = 'generated sequences of view, create, str_replace, insert (and undo_edit) give the results and file bytes of the documented semantics, step by step.'
URL = 'https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool'
EXPECTED = 'view shows every line of the file'
DOCUMENTED = 'the lines "", "éb", "x", "ééaéaé", "x", "ax", "aé", "ax", "", ""'
RECEIVED = '"Here\'s the result of running `cat -n` on $TOOLUSE_WORKDIR/aé.txt:\\n     1\\t\\n     2\\t챕b\\n     3\\tx\\n     4\\t챕챕a챕a챕\\n     5\\tx\\n     6\\tax\\n     7\\ta챕\\n     8\\tax\\n     9\\t\\n    10\\t\\n    11\\t\\n"'
TIMEOUT = 3.0
#: the counterexample: the tool inputs the check sent, in order
STEPS = json.loads('[{"command": "insert", "path": "$TOOLUSE_WORKDIR/aé.txt", "insert_line": 0, "new_str": "\\néb\\nx\\nééaéaé"}, {"command": "insert", "path": "$TOOLUSE_WORKDIR/aé.txt", "insert_line": 4, "new_str": "x\\nax\\naé\\nax\\n\\n"}, {"command": "view", "path": "$TOOLUSE_WORKDIR/aé.txt"}]')
#: what the check planted before them (files, directories, links)
SETUP = json.loads('[{"before_input": 1, "path": "$TOOLUSE_WORKDIR/aé.txt", "text": ""}]')


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


import ast


def judge(results):
    shown = text(results[-1])
    want = ast.literal_eval(DOCUMENTED.removeprefix("the lines "))
    at = 0
    for line in want:
        found = shown.find(line, at)
        if line and found < 0:
            return True, f"the answer does not show the line {line!r} (in order): {shown[:400]!r}"
        at = found + len(line) if line else at
    return False, "every line shown, in order"


def main():
    global W, BASE
    BASE = tempfile.mkdtemp(prefix='repro-')
    W = os.path.join(BASE, 'work')
    os.makedirs(W)
    pass
    globals().update(locals())  # the tool, for close_tool()
    os.environ['TOOLUSE_WORKDIR'] = W
    print(f'editor.model.agrees_with_reference_model: {len(STEPS)} input(s) in {W}')
    results = []
    # input 1: {"command": "insert", "path": "$TOOLUSE_WORKDIR/aé.txt", "insert_line": 0, "new_str": "\néb\nx\nééaéaé"}
    results.append(step(1, lambda: file_editor(command='insert', path=here('$TOOLUSE_WORKDIR/aé.txt'), insert_line=0, new_str='\néb\nx\nééaéaé'), 60.0))
    # input 2: {"command": "insert", "path": "$TOOLUSE_WORKDIR/aé.txt", "insert_line": 4, "new_str": "x\nax\naé\nax\n\n"}
    results.append(step(2, lambda: file_editor(command='insert', path=here('$TOOLUSE_WORKDIR/aé.txt'), insert_line=4, new_str='x\nax\naé\nax\n\n'), 60.0))
    # input 3: {"command": "view", "path": "$TOOLUSE_WORKDIR/aé.txt"}
    results.append(step(3, lambda: file_editor(command='view', path=here('$TOOLUSE_WORKDIR/aé.txt')), 60.0))
    plant(4)
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
