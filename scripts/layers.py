"""The floors of ``conformance/`` and the imports that break them (docs/architecture.md).

usage: python -m scripts.layers [--verbose]   (from the project root; exit 1 when an import runs
upward, two files import each other in a circle, or a unit has no floor)

Every unit of ``conformance/`` (a top-level module or sub-package) stands on one floor; an import
may go down or sideways, never up. Module-level and function-level imports both count: an import
moved into a function to dodge a cycle is still the cycle. ``tests/test_layers.py`` runs this.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "conformance"

# Top down; a unit imports only units on its own floor or below (and `simulator`, below all).
FLOORS: tuple[tuple[str, ...], ...] = (
    ("cli",),
    ("matrix", "probe", "pytest", "plugin"),
    ("reports", "checks_doc"),
    ("runner", "options"),
    ("checks", "reference", "lint_tools"),
    ("loops", "workers"),
    ("properties", "subjects", "reproducers", "rechecks", "adapters"),
    ("errors", "catalog", "basis", "results", "session", "cache"),
)
FLOOR_OF: dict[str, int] = {
    unit: len(FLOORS) - i for i, units in enumerate(FLOORS) for unit in units}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module, dotted
    path: Path
    line: int
    in_function: bool


@dataclass(frozen=True)
class Floors:
    imports: tuple[Import, ...]
    upward: tuple[Import, ...]
    cycles: tuple[tuple[str, ...], ...]  # files importing each other in a circle
    knots: tuple[tuple[str, ...], ...]  # units importing each other in a circle
    unplaced: tuple[str, ...]  # units on no floor


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(rel[:-1] if rel[-1] == "__init__" else rel)


def unit_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == PACKAGE and len(parts) > 1 else None


def _walk(tree: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(tree):
        yield child, in_function
        inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        yield from _walk(child, inner)


def _imports(root: Path, path: Path, modules: set[str]) -> Iterator[Import]:
    here = module_name(root, path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]

    def resolve(name: str) -> str | None:
        # the longest prefix of `name` that is a module of the package
        parts = name.split(".")
        for n in range(len(parts), 1, -1):
            candidate = ".".join(parts[:n])
            if candidate in modules:
                return candidate
        return None

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node, in_function in _walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # `from pkg import module` imports the module; `from module import name` the module
            names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
        for name in dict.fromkeys(names):
            target = resolve(name)
            if target and target != here:
                yield Import(here, target, path, node.lineno, in_function)


def _components(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[tuple[str, ...]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(tuple(sorted(comp)))
    return sorted(found)


def measure(root: Path = Path(PACKAGE)) -> Floors:
    files = sorted(root.rglob("*.py"))
    modules = {module_name(root, f) for f in files}
    imports = tuple(i for f in files for i in _imports(root, f, modules))
    units = {u for m in modules if (u := unit_of(m))}
    upward = tuple(
        i for i in imports
        if (s := unit_of(i.source)) and (t := unit_of(i.target)) and s != t
        and FLOOR_OF.get(t, 0) > FLOOR_OF.get(s, len(FLOORS) + 1))
    files_graph: dict[str, set[str]] = defaultdict(set)
    units_graph: dict[str, set[str]] = defaultdict(set)
    for i in imports:
        files_graph[i.source].add(i.target)
        s, t = unit_of(i.source), unit_of(i.target)
        if s and t and s != t:
            units_graph[s].add(t)
    return Floors(imports, upward, tuple(_components(files_graph)),
                  tuple(_components(units_graph)), tuple(sorted(units - set(FLOOR_OF))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.layers", description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="list every offending import")
    args = parser.parse_args(argv)
    floors = measure()
    in_function = sum(1 for i in floors.imports if i.in_function)
    print(f"{PACKAGE}/: {len(floors.imports)} imports inside the package ({in_function} in functions), "
          f"{len(floors.upward)} upward, {len(floors.cycles)} file cycle(s), "
          f"{len(floors.knots)} unit knot(s), {len(floors.unplaced)} unit(s) on no floor")
    for u in floors.unplaced:
        print(f"  no floor: {u}")
    for i in floors.upward if args.verbose else floors.upward[:20]:
        print(f"  upward: {i.path}:{i.line} {i.source} -> {i.target}")
    for c in floors.cycles:
        print(f"  file cycle: {' '.join(c)}")
    for k in floors.knots:
        print(f"  unit knot: {' '.join(k)}")
    return 1 if floors.upward or floors.cycles or floors.knots or floors.unplaced else 0


if __name__ == "__main__":
    sys.exit(main())
