"""The Vercel AI SDK (``ai`` 6 with ``@ai-sdk/anthropic`` 3, Node) as an agent-loop subject:
``tooluse run --loop-cmd "python -m conformance.adapters.vercel_ai"``.

The loop itself is ``node/vercel_ai.mjs`` (shipped with the package; its header says what is
wired and why). This module starts it with ``node``, finding the npm packages in
``TOOLUSE_NODE_MODULES`` (the matrix builds them into its environment's ``node/`` folder from
``npm = [...]`` in frameworks.toml) or next to the script.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("node") / "vercel_ai.mjs"


def main() -> int:
    node = shutil.which("node")
    if node is None:
        print("the Vercel AI SDK adapter needs Node.js (`node` on PATH)", file=sys.stderr)
        return 2
    os.execv(node, [node, str(SCRIPT)])
    return 0  # pragma: no cover - execv does not return


if __name__ == "__main__":
    raise SystemExit(main())
