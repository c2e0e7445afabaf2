"""``python -m conformance.reports RESULTS [--out DIR] [--expected-failures FILE]``.

Re-render JUnit, Markdown and HTML from a ``results.json`` (for example a CI artifact, or with
a different baseline). Exit 0 when the run passes (or the baseline holds), 1 otherwise, 2 when
an input is unusable.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .baseline import BaselineError, load_baseline
from .bundle import exit_code, write_reports
from .results_file import ResultsFileError, load_results


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m conformance.reports",
                                description=__doc__.splitlines()[0].strip("`"))
    p.add_argument("results", type=Path, metavar="RESULTS", help="a results.json")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="where to write the reports (default: next to RESULTS)")
    p.add_argument("--expected-failures", type=Path, default=None, metavar="FILE")
    args = p.parse_args(argv)
    try:
        run = load_results(args.results)
        baseline = load_baseline(args.expected_failures) if args.expected_failures else None
    except (ResultsFileError, BaselineError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    paths, verdict = write_reports(run, args.out or args.results.parent, baseline=baseline)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    if verdict is not None:
        print("\n".join(verdict.lines()))
    return exit_code(run.doc, verdict)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
