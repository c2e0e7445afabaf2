"""``tooluse matrix``: the suite run on several implementations, one comparison report.

- :mod:`~conformance.matrix.config`: the TOML config (subjects, their tool types, environments);
- :mod:`~conformance.matrix.envs`: environments of their own (another Python, other packages);
- :mod:`~conformance.matrix.execute`: one isolated ``tooluse run`` per column, in parallel;
- :mod:`~conformance.matrix.model`: ``matrix.json`` (cells, counts, the review flag, fingerprints);
- :mod:`~conformance.matrix.render_md`, :mod:`~conformance.matrix.render_html`: the reports;
- :mod:`~conformance.matrix.stale`: is a committed matrix stale against the catalog?

See docs/matrix.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FILES = ("matrix.json", "matrix.md", "matrix.html")


def write_matrix(doc: dict[str, Any], out: Path) -> list[Path]:
    """Write matrix.json, matrix.md and matrix.html into ``out`` (credentials redacted)."""
    from conformance.matrix.render_html import render_html
    from conformance.matrix.render_md import render_markdown
    from simulator.secrets import SecretScanner

    doc = SecretScanner().redact(doc)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in FILES]
    paths[0].write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    paths[1].write_text(render_markdown(doc))
    paths[2].write_text(render_html(doc))
    return paths
