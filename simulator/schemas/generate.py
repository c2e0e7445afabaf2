"""Write (or ``--check``) the committed JSON Schema files: ``python -m simulator.schemas.generate``."""

from __future__ import annotations

import argparse
import sys

from . import expected_files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m simulator.schemas.generate", description=__doc__)
    ap.add_argument("--check", action="store_true", help="exit 1 when a file is out of date")
    args = ap.parse_args(argv)
    stale = []
    for path, text in expected_files().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(path.name)
        if not args.check:
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)}; run python -m simulator.schemas.generate",
              file=sys.stderr)
        return 1
    print(f"{'stale' if args.check else 'written'}: {len(stale)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
