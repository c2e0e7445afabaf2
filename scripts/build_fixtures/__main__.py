"""``python -m scripts.build_fixtures``: regenerate the fixture corpus and its coverage table."""

from __future__ import annotations

import argparse
import sys

from . import FIXTURES, stale_files, write_corpus


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.build_fixtures", description=__doc__)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when fixtures/ differs from the scenarios")
    args = parser.parse_args()
    if args.check:
        stale = stale_files(FIXTURES)
        for line in stale:
            print(f"fixtures/{line}")
        print("fixtures/ is " + (f"stale ({len(stale)} file(s)); run python -m scripts.build_fixtures"
                                 if stale else "up to date"), file=sys.stderr)
        return 1 if stale else 0
    written, removed = write_corpus(FIXTURES)
    print(f"wrote {written} cassettes and COVERAGE.md under {FIXTURES}"
          + (f"; removed {removed} stale files" if removed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
