"""Hostile subjects for issue 9: each misbehaves in one way the harness must survive."""

import sys

#: The ``tooluse`` command, run by this interpreter (no dependency on the script being on PATH).
TOOLUSE = [sys.executable, "-c", "import sys; from conformance.cli import main; sys.exit(main())"]
