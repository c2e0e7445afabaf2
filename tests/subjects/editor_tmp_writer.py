"""A conformant text editor tool that keeps a lock file and a journal of every command in ``/tmp``
directly (``/tmp/editor-tool-<pid>.lock``, ``.log``), as some tools' libraries do whatever
``TMPDIR`` says; removed at close. Under the sandbox those writes are inside its case (its private
``/tmp``): ``editor.sandbox.stays_in_its_case`` must not report them (issue 36).

Run as a command: ``python editor_tmp_writer.py`` (JSON lines in and out)."""

from __future__ import annotations

import fcntl
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.reference.editor import text_editor_20250728  # noqa: E402


def main() -> None:
    tag = os.environ.get("TOOLUSE_TEST_TAG", "")
    stem = Path("/tmp") / f"editor-tool-{tag}{os.getpid()}"
    lock_path, log_path = stem.with_suffix(".lock"), stem.with_suffix(".log")
    editor = text_editor_20250728(Path.cwd())
    with open(lock_path, "w") as lock, open(log_path, "a", encoding="utf-8") as log:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            for line in sys.stdin:
                if line.strip():
                    tool_input = json.loads(line)
                    log.write(json.dumps(tool_input) + "\n")
                    log.flush()
                    print(json.dumps(editor(tool_input)), flush=True)
        finally:
            lock_path.unlink(missing_ok=True)
            log_path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
