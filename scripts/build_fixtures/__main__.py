"""``python -m scripts.build_fixtures``: regenerate the fixture corpus and its coverage table."""

from __future__ import annotations

import sys

from . import FIXTURES, write_corpus


def main() -> int:
    written, removed = write_corpus(FIXTURES)
    print(f"wrote {written} cassettes and COVERAGE.md under {FIXTURES}"
          + (f"; removed {removed} stale files" if removed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
