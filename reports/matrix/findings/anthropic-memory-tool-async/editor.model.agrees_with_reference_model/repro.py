#!/usr/bin/env python3
"""anthropic 2.17.0: insert left the wrong file content: line 4 is "a\n" where the documented result has "\n" (4 lines vs 6)

anthropic-memory-tool-async (anthropic 2.17.0), check editor.model.agrees_with_reference_model (MUST).
The docs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool): The text editor tool supports several commands for viewing and modifying files:
Needs: pip install anthropic==2.17.0 (this file installs nothing).
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
    import os
    import tempfile
    from anthropic.lib.tools import ToolError
    from anthropic.lib.tools._beta_builtin_memory_tool import BetaAsyncLocalFilesystemMemoryTool

    LOOP = asyncio.new_event_loop()


    def run(coro):
        return LOOP.run_until_complete(coro)
except ImportError as exc:
    print(f'cannot run: {exc} (install the package this reproducer names)')
    sys.exit(2)

CHECK = 'editor.model.agrees_with_reference_model'
DOCS = 'The text editor tool supports several commands for viewing and modifying files:'
RULE = 'generated sequences of view, create, str_replace, insert (and undo_edit) give the results and file bytes of the documented semantics, step by step.'
URL = 'https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool'
EXPECTED = 'the file holds what the documented insert makes'
DOCUMENTED = 'one of: success, file "\\n\\n\\n\\n\\na"; success, file "\\n\\n\\n\\n\\r\\na"; success, file "\\n\\n\\n\\na"'
RECEIVED = 'success "The file /memories/minimize-123/a.txt has been edited."; file now "\\n\\n\\na\\n"'
TIMEOUT = 3.0
#: the counterexample: the tool inputs the check sent, in order
STEPS = json.loads('[{"command": "insert", "path": "$TOOLUSE_WORKDIR/a.txt", "insert_line": 2, "insert_text": "\\n\\n"}]')
#: what the check planted before them (files, directories, links)
SETUP = json.loads('[{"before_input": 1, "path": "$TOOLUSE_WORKDIR/a.txt", "text": "\\n\\na"}]')


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
    # a tool's return value is the tool_result content
    return raw if isinstance(raw, dict) else {"content": raw, "is_error": False}


def refused(exc):
    # the SDK's tool runner answers a ToolError with an error result
    if isinstance(exc, ToolError):
        return {"content": exc.content, "is_error": True}
    return None


#: the file's documented contents (any of them)
ALLOWED = [b'\n\n\n\n\na', b'\n\n\n\n\r\na', b'\n\n\n\na']


def judge(results):
    path = here(next(s["path"] for s in reversed(STEPS) if "path" in s))
    allowed = ALLOWED
    got = read(path)
    return got not in allowed, f"the file holds {got!r}; documented: one of {allowed!r}"


def main():
    global W, BASE
    BASE = tempfile.mkdtemp(prefix='repro-')
    tool = BetaAsyncLocalFilesystemMemoryTool(base_path=BASE)
    W = os.path.join(BASE, 'memories')  # the tool's /memories
    os.makedirs(W, exist_ok=True)
    globals().update(locals())  # the tool, for close_tool()
    os.environ['TOOLUSE_WORKDIR'] = W
    print(f'editor.model.agrees_with_reference_model: {len(STEPS)} input(s) in {W}')
    results = []
    # input 1: {"command": "insert", "path": "$TOOLUSE_WORKDIR/a.txt", "insert_line": 2, "insert_text": "\n\n"}
    results.append(step(1, lambda: run(tool.call({'command': 'insert', 'path': '/memories/a.txt', 'insert_line': 2, 'insert_text': '\n\n'})), 60.0))
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
