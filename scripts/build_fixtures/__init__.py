"""Builds the fixture corpus: ``python -m scripts.build_fixtures`` regenerates ``fixtures/**.json``
and ``fixtures/COVERAGE.md`` from the scenario definitions in :mod:`.families`.

Fixtures are data only; this package is the code that writes them, deterministically (ids from a
seeded counter per cassette, timestamps from a simulated clock).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simulator.cassette import Cassette, parse_cassette

from . import families  # noqa: F401  (registers every family)
from .core import FAMILIES
from .coverage import coverage_markdown
from .rulecheck import apply_rules

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


def build_corpus() -> dict[str, dict[str, Any]]:
    """Every cassette, by id (``<family>/<tool_type>/<scenario>``); duplicate ids are refused."""
    out: dict[str, dict[str, Any]] = {}
    for name, builder in FAMILIES.items():
        for cb in builder():
            data = cb.build()
            apply_rules(data)
            if data["id"] in out:
                raise ValueError(f"family {name!r}: cassette id {data['id']!r} built twice")
            out[data["id"]] = data
    return dict(sorted(out.items()))


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_corpus(root: Path = FIXTURES) -> tuple[int, int]:
    """Write every cassette and COVERAGE.md; delete generated files no scenario produces.

    Returns (written, removed)."""
    corpus = build_corpus()
    wanted = {root / f"{cid}.json" for cid in corpus}
    removed = 0
    if root.exists():
        for p in root.rglob("*.json"):
            if p not in wanted and not p.name.startswith("_"):
                p.unlink()
                removed += 1
    cassettes: list[Cassette] = []
    for cid, data in corpus.items():
        path = root / f"{cid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = dump(data)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        cassettes.append(parse_cassette(data, path))
    (root / "COVERAGE.md").write_text(coverage_markdown(cassettes), encoding="utf-8")
    for d in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()
    return len(corpus), removed


def stale_files(root: Path = FIXTURES) -> list[str]:
    """Files under ``root`` that differ from what the builder writes (missing, extra or edited)."""
    corpus = build_corpus()
    out = []
    on_disk = {p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.json")
               if not p.name.startswith("_")} if root.exists() else set()
    out += [f"{cid}.json: extra (no scenario writes it)" for cid in sorted(on_disk - set(corpus))]
    cassettes: list[Cassette] = []
    for cid, data in corpus.items():
        path = root / f"{cid}.json"
        if not path.exists():
            out.append(f"{cid}.json: missing")
        elif path.read_text(encoding="utf-8") != dump(data):
            out.append(f"{cid}.json: differs from its scenario (hand-edited or stale)")
        cassettes.append(parse_cassette(data, path))
    cov = root / "COVERAGE.md"
    if not cov.exists() or cov.read_text(encoding="utf-8") != coverage_markdown(cassettes):
        out.append("COVERAGE.md: stale")
    return out

