"""The ``tooluse`` command: one module per subcommand.

Each module ``conformance.cli.<name>`` exposes ``add_parser(subparsers)`` and ``run(args) -> int``.
Exit codes: 0 all MUST checks pass / everything valid, 1 failures, 2 usage errors.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: subcommand -> module; each module registers its own parser.
COMMANDS = {
    "run": "conformance.cli.run",
    "checks": "conformance.cli.checks",
    "validate": "conformance.cli.validate",
    "serve": "conformance.cli.serve",
    "record": "conformance.cli.record",
    "replay": "conformance.cli.replay",
    "diff": "conformance.cli.diff",
    "probe": "conformance.cli.probe",
    "lint-fixtures": "conformance.cli.lint_fixtures",
    "lint-tools": "conformance.cli.lint_tools",
    "matrix": "conformance.cli.matrix",
}

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad options or input: printed as one line naming the problem and the fix; exit 2."""


def build_parser() -> argparse.ArgumentParser:
    from simulator import version

    parser = argparse.ArgumentParser(prog="tooluse", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, modname in COMMANDS.items():
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue  # not built yet
            raise
        p = mod.add_parser(sub, name)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args._argv = list(sys.argv[1:] if argv is None else argv)  # as typed (the rerun commands)
    try:
        return int(args._run(args))
    except UsageError as e:
        from simulator.secrets import SecretScanner  # a bad option may hold a credential

        print(f"tooluse {args.command}: error: {SecretScanner().redact_text(str(e))}",
              file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
