"""A conformant bash tool that takes 8 s to start (an interpreter importing a large SDK does).

A command subject (``--bash-cmd "python tests/conformant/slow_start_bash.py"``): it sleeps
``SLOW_START_SECONDS`` (default 8) before reading its first input, then serves the reference bash
tool over JSON lines. Start-up is not tool time: with the runner's readiness step it must pass every
MUST bash check at the default ``--timeout 3``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

time.sleep(float(os.environ.get("SLOW_START_SECONDS", "8")))

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when not installed

from conformance.reference.bash import factory  # noqa: E402
from conformance.subjects.host import normalise  # noqa: E402


def main() -> int:
    # The protocol's descriptors are private: children read /dev/null, prints go to stderr.
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    workdir = Path(os.environ.get("TOOLUSE_WORKDIR", os.getcwd()))
    tool = factory(workdir, timeout=float(os.environ.get("TOOLUSE_TIMEOUT", "30")))
    try:
        for line in proto_in:
            if not line.strip():
                continue
            try:
                result = normalise(tool(json.loads(line)))
            except Exception as e:  # an error result, as the reference host reports it
                result = {"content": f"{type(e).__name__}: {e}", "is_error": True}
            proto_out.write(json.dumps(result).encode("utf-8") + b"\n")
            proto_out.flush()
    finally:
        tool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
