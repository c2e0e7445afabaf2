"""``tooluse fixtures``: list the bundled cassettes (family, tool version, scenario, what each
shows, and which have streams, errors, pause_turn, client and server tools together)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

from conformance.cli import UsageError

#: ``--with`` features, as the listing's columns name them.
FEATURES = ("stream", "error", "pause_turn", "mixed")
#: Tool types run by the API (server tools); any other tool is run by the client.
SERVER_PREFIXES = ("code_execution_", "web_search_", "web_fetch_", "tool_search_", "memory_")


@dataclass(frozen=True)
class Entry:
    """One cassette as the listing shows it."""

    name: str
    family: str
    tool_type: str
    scenario: str
    title: str
    features: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "tool_type": self.tool_type,
                "scenario": self.scenario, "title": self.title, "features": list(self.features)}


def _is_server(tool: dict[str, Any]) -> bool:
    return str(tool.get("type") or "").startswith(SERVER_PREFIXES)


def entries() -> list[Entry]:
    """Every cassette of the corpus, its features read from the recorded traffic."""
    from simulator.cassette import default_fixtures_root, iter_corpus
    from simulator.lint import cassette_facts

    root = default_fixtures_root()
    out = []
    for c in iter_corpus(root):
        facts = cassette_facts(c)
        features = []
        if facts.streamed or any(e.is_stream for e in c.exchanges):
            features.append("stream")
        if (facts.error_codes or facts.client_errors or facts.api_errors or facts.rules
                or any(s >= 400 for s in facts.statuses)):
            features.append("error")
        if "pause_turn" in facts.stop_reasons:
            features.append("pause_turn")
        tools = [t for t in c.tools if isinstance(t, dict)]
        if any(_is_server(t) for t in tools) and any(not _is_server(t) for t in tools):
            features.append("mixed")
        name = c.path.relative_to(root).as_posix() if c.path is not None else c.id
        out.append(Entry(name, facts.family, facts.tool_type, facts.scenario,
                         " ".join(c.title.split()), tuple(features)))
    return out


def add_parser(subparsers: Any, name: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help="list the bundled cassettes and what each shows",
                              description=" ".join(__doc__.split()))
    p.add_argument("prefix", nargs="?", default=None, metavar="NAME",
                   help="only cassettes whose name starts with NAME (ptc, bash/bash_20250124)")
    p.add_argument("--family", default=None, metavar="F",
                   help="only this family (ptc, code_execution, bash, text_editor, ...)")
    p.add_argument("--with", dest="features", action="append", choices=FEATURES, default=[],
                   help="only cassettes with this feature (repeatable): stream, error, "
                        "pause_turn, mixed (client and server tools together)")
    p.add_argument("--json", action="store_true", help="the listing as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    rows = entries()
    families = sorted({e.family for e in rows})
    if args.family is not None:
        if args.family not in families:
            raise UsageError(f"--family {args.family}: no such family; use one of "
                             f"{', '.join(families)}")
        rows = [e for e in rows if e.family == args.family]
    if args.prefix:
        prefix = args.prefix.removeprefix("fixtures/")
        rows = [e for e in rows if e.name.startswith(prefix)]
        if not rows:
            raise UsageError(f"no cassette name starts with {args.prefix!r}; families: "
                             f"{', '.join(families)}")
    rows = [e for e in rows if all(f in e.features for f in args.features)]
    if args.json:
        json.dump([e.to_json() for e in rows], sys.stdout, indent=2, ensure_ascii=False)
        print()
        return 0
    for e in rows:
        marks = f"  [{', '.join(e.features)}]" if e.features else ""
        print(f"{e.name}{marks}")
        print(f"    {e.title}")
    print(f"{len(rows)} cassettes; use one by name: tooluse serve NAME, tooluse replay NAME, "
          "simulator.mock(NAME)")
    return 0
