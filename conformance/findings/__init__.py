"""``tooluse findings``: a matrix's failures as findings a maintainer can act on.

One folder per failing cell (column x check, FAIL at MUST or SHOULD) under
``<matrix>/findings/``: ``repro.py`` (standalone: the implementation's own API and the standard
library), ``ISSUE.md`` (an issue draft) and ``finding.json``; an index ``README.md``.

- :mod:`~conformance.findings.model`: the findings of a ``matrix.json`` (and its runs' results);
- :mod:`~conformance.findings.oracles`: each check's verdict, restated with the standard library;
- :mod:`~conformance.findings.repro`: the reproducer's source; the calls come from the adapter's
  ``repro_calls`` (:mod:`conformance.adapters._repro`) or, for the suite's own subjects, the
  JSON-lines contract (:mod:`~conformance.findings.contract`);
- :mod:`~conformance.findings.sources`: the upstream source lines docs/matrix.md and
  docs/frameworks.md cite;
- :mod:`~conformance.findings.write`: the folders, ISSUE.md and the index;
- :mod:`~conformance.findings.verify`: each reproducer run in its column's pinned environment.

See docs/matrix.md "Findings a maintainer can run".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.findings.model import Finding, collect

__all__ = ["Finding", "collect", "generate"]


def generate(matrix_dir: Path, out: Path | None = None, *, root: Path | None = None,
             ) -> tuple[Path, list[dict[str, Any]]]:
    """Write the findings of ``matrix_dir`` into ``out`` (default ``matrix_dir/findings``)."""
    from conformance.findings.write import write_findings

    out = out or matrix_dir / "findings"
    root = root or Path.cwd()
    doc = json.loads((matrix_dir / "matrix.json").read_text())
    title = f"{doc.get('config') or matrix_dir.name} ({matrix_dir.as_posix()})"
    return out, write_findings(collect(matrix_dir), out, root=root, title=title)
