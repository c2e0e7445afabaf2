"""``tooluse diff A B``: detect what A and B are, diff them, render Markdown or JSON.

A and B are each either a results file (``results.json``, or a run directory holding one) or
recorded traffic (a fixture directory, a recording directory or one cassette file, or a
directory of captured artifacts as in ``../shared/real_traffic``). Both must be the same kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from conformance.errors import ToolUseError
from simulator.cassette import CassetteError, iter_corpus

from .captures import is_capture_dir, load_capture_dir
from .diff_results import diff_results
from .diff_traffic import collect_side, diff_traffic
from .results_file import ResultsFileError, load_results

Kind = Literal["results", "traffic"]


class DiffInputError(ToolUseError, ValueError):
    """An input `tooluse diff` cannot use; the message names the path and the fix."""


def detect_kind(path: Path) -> tuple[Kind, Path]:
    """What ``path`` holds, and the file or directory to read for it."""
    if not path.exists():
        raise DiffInputError(f"{path}: no such file or directory")
    if path.is_dir():
        if (path / "results.json").is_file():
            return "results", path / "results.json"
        return "traffic", path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DiffInputError(f"{path}: not a JSON file ({e}); give a results.json, a cassette "
                             "or a directory of cassettes") from None
    if isinstance(data, dict) and "format_version" in data and "results" in data:
        return "results", path
    if isinstance(data, dict) and "exchanges" in data:
        return "traffic", path
    raise DiffInputError(f"{path}: neither a results.json (format_version + results) nor a "
                         "cassette (exchanges)")


def diff_paths(a: str | Path, b: str | Path, *, refusals: bool = True) -> dict[str, Any]:
    pa, pb = Path(a), Path(b)
    (ka, fa), (kb, fb) = detect_kind(pa), detect_kind(pb)
    if ka != kb:
        raise DiffInputError(f"cannot compare {ka} ({pa}) with {kb} ({pb}): give two results "
                             "files or two fixture/recording directories")
    if ka == "results":
        try:
            return diff_results(load_results(fa), load_results(fb))
        except ResultsFileError as e:
            raise DiffInputError(str(e)) from None
    sides = []
    for p in (fa, fb):
        try:
            cassettes = load_capture_dir(p) if p.is_dir() and is_capture_dir(p) else list(
                iter_corpus(p))
        except CassetteError as e:
            raise DiffInputError(f"{e} (fix the cassette, or run `tooluse lint-fixtures`)"
                                 ) from None
        if not cassettes:
            raise DiffInputError(f"{p}: no cassettes found (*.json files with exchanges)")
        sides.append(collect_side(cassettes, refusals=refusals))
    return diff_traffic(sides[0], sides[1], a_label=str(pa), b_label=str(pb))


def render_json(diff: dict[str, Any]) -> str:
    return json.dumps(diff, indent=2, ensure_ascii=False) + "\n"


def render_markdown(diff: dict[str, Any]) -> str:
    from .diff_render import render_results_md, render_traffic_md

    return render_results_md(diff) if diff["kind"] == "results" else render_traffic_md(diff)


def has_regressions(diff: dict[str, Any]) -> bool:
    """For ``--fail-on-regression``: a check got worse, or B has requests the simulator refuses."""
    if diff["kind"] == "results":
        return bool(diff["counts"]["regressions"])
    rb = diff["refusals"]["b"]
    return bool(diff["refusals"]["newly_refused_rules"]) or bool(
        rb.get("available") and rb.get("accepted_when_recorded"))
