"""A conformant bash tool that writes to ``/tmp`` directly, whatever ``TMPDIR`` says.

The reference session (seed 003's pattern) plus what many tools' libraries do: a lock file and a
transcript of every command in the system temp directory (``/tmp/bash-tool-<pid>.lock``, held
with ``flock``, and ``/tmp/bash-tool-<pid>.log``), removed at close. Nothing in the docs forbids
it; the sandbox must give it a writable ``/tmp`` of its own, and ``--sandbox off`` and the default
sandbox must judge it alike (issue 36).

Run as a command: ``python bash_tmp_writer.py`` (JSON lines in and out), or as a factory.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.reference.bash import BashTool  # noqa: E402

SYSTEM_TMP = Path("/tmp")


class Tool(BashTool):
    def __init__(self, workdir: Path, timeout: float = 30.0, **options: Any) -> None:
        tag = os.environ.get("TOOLUSE_TEST_TAG", "")  # a test tells its runs' files apart
        stem = SYSTEM_TMP / f"bash-tool-{tag}{os.getpid()}-{id(self):x}"
        self.lock_path, self.log_path = stem.with_suffix(".lock"), stem.with_suffix(".log")
        self.lock = open(self.lock_path, "w")  # noqa: SIM115 - held until close
        fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.log = open(self.log_path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115
        super().__init__(workdir, timeout, **options)

    def __call__(self, tool_input: Any) -> dict[str, Any]:
        self.log.write(json.dumps(tool_input) + "\n")
        self.log.flush()
        return super().__call__(tool_input)

    def close(self) -> None:
        super().close()
        for f, p in ((self.log, self.log_path), (self.lock, self.lock_path)):
            f.close()
            p.unlink(missing_ok=True)


def factory(workdir: Path, timeout: float = 30.0) -> Tool:
    return Tool(workdir, timeout)


def main() -> None:
    tool = factory(Path.cwd(), float(os.environ.get("TOOLUSE_TIMEOUT", "30")))
    try:
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(tool(json.loads(line))), flush=True)
    finally:
        tool.close()


if __name__ == "__main__":
    main()
