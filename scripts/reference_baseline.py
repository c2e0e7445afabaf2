"""The committed baseline report of the reference subjects (``reports/baseline/``).

``python -m scripts.reference_baseline [--out reports/baseline] [--check]`` runs
``tooluse run --all-reference`` into a temporary directory, normalises the volatile fields
(times, durations, versions, argv, seed, temporary paths) and writes ``results.json`` and
``report.md``. ``--check`` writes nothing and exits 1 when the committed files differ from a
fresh run (``nox -s baseline`` regenerates them).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.cli import main as cli_main
from conformance.reports.markdown import render_markdown
from conformance.reports.results_file import load_results, normalise

DEFAULT_OUT = Path("reports/baseline")
_TMP_PATHS = re.compile(re.escape(tempfile.gettempdir()) + r"/[^\s\"'/]+")


def scrub(doc: dict[str, Any]) -> dict[str, Any]:
    """:func:`normalise` plus temporary working directories inside messages and reproducers."""
    text = json.dumps(normalise(doc), ensure_ascii=False)
    scrubbed: dict[str, Any] = json.loads(_TMP_PATHS.sub("<tmp>", text))
    return scrubbed


def run_reference(out_dir: Path, run_args: Sequence[str] = ()) -> tuple[int, str]:
    """``tooluse run --all-reference --out OUT_DIR`` in-process: (exit code, what it printed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(["run", "--all-reference", "--out", str(out_dir), *run_args])
    return code, out.getvalue()


def fresh_run(run_args: Sequence[str] = ()) -> tuple[int, dict[str, Any]]:
    """Run the reference subjects in-process; (exit code, normalised results document)."""
    with tempfile.TemporaryDirectory(prefix="tooluse-baseline-") as tmp:
        code, _ = run_reference(Path(tmp), run_args)
        doc = load_results(Path(tmp) / "results.json").doc
    return code, scrub(doc)


def render(doc: dict[str, Any]) -> dict[str, str]:
    return {"results.json": json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
            "report.md": render_markdown(doc)}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scripts.reference_baseline",
                                description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR")
    p.add_argument("--check", action="store_true",
                   help="compare with the files in DIR instead of writing them")
    p.add_argument("--allow-failures", action="store_true",
                   help="write the baseline even when a reference subject fails a check")
    args = p.parse_args(argv)
    code, doc = fresh_run()
    if not doc["run"]["complete"]:
        print("the reference run did not complete; nothing written", file=sys.stderr)
        return 1
    if doc["summary"]["verdict"] != "pass" and not args.allow_failures:
        print("the reference subjects did not pass every check (see the report below); nothing "
              "written. Fix the cause, or pass --allow-failures to record it anyway.\n",
              file=sys.stderr)
        print(render_markdown(doc), file=sys.stderr)
        return 1
    files = render(doc)
    if args.check:
        stale = False
        for name, text in files.items():
            path = args.out / name
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            if old != text:
                stale = True
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), text.splitlines(True), str(path), "fresh run", n=2))
        if stale:
            print("\nthe committed baseline is stale: run `nox -s baseline` and commit it",
                  file=sys.stderr)
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
    verdict = doc["summary"]["verdict"]
    print(f"wrote {args.out}/results.json and report.md ({doc['summary']['total']} results, "
          f"verdict {verdict}; tooluse run exited {code})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
