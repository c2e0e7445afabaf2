"""The floors of ``conformance/`` hold (docs/architecture.md): nothing imports upward, no file
imports another in a circle, nothing below the CLI imports it. Measured by scripts/layers.py from
the source, function-level imports included."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts import layers  # noqa: E402


@pytest.fixture(scope="module")
def floors() -> layers.Floors:
    """Measured once, by the worker that runs these tests (not at collection: every pytest-xdist
    worker collects this module, and the measure is ~1.3 CPU-s; issue 21)."""
    return layers.measure(ROOT / "conformance")


def _where(imports: object) -> str:
    return "; ".join(f"{i.path.relative_to(ROOT)}:{i.line} imports {i.target}"
                     for i in imports)  # type: ignore[attr-defined]


def test_every_unit_stands_on_a_floor(floors: layers.Floors) -> None:
    assert floors.unplaced == (), (
        f"{floors.unplaced}: give each a floor in scripts/layers.py FLOORS and docs/architecture.md")


def test_no_import_runs_upward(floors: layers.Floors) -> None:
    assert len(floors.upward) == 0, f"upward imports: {_where(floors.upward)}"


def test_no_import_cycles(floors: layers.Floors) -> None:
    assert floors.cycles == (), f"files importing each other in a circle: {floors.cycles}"
    assert floors.knots == (), f"units importing each other in a circle: {floors.knots}"


def test_only_the_cli_imports_the_cli(floors: layers.Floors) -> None:
    bad = [i for i in floors.imports if layers.unit_of(i.target) == "cli"
           and layers.unit_of(i.source) != "cli"]
    assert not bad, _where(bad)


@pytest.mark.parametrize("unit", ["errors", "catalog", "results", "session", "subjects",
                                  "properties"])
def test_the_lower_floors_import_nothing_above_them(unit: str, floors: layers.Floors) -> None:
    floor = layers.FLOOR_OF[unit]
    bad = [i for i in floors.imports if layers.unit_of(i.source) == unit
           and (t := layers.unit_of(i.target)) and t != unit and layers.FLOOR_OF[t] > floor]
    assert not bad, _where(bad)


def test_every_floor_is_in_the_architecture_page() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [u for units in layers.FLOORS for u in units if f"`{u}" not in page]
    assert not missing, f"docs/architecture.md does not name {missing}"


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "conformance"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_the_measure_finds_an_upward_import_even_inside_a_function(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "results.py": "",
        "cli/__init__.py": "from conformance import results\n",
        "subjects/__init__.py": "def late():\n    from conformance.cli import main\n",
    })
    found = layers.measure(root)
    assert [(i.source, i.target, i.in_function) for i in found.upward] == [
        ("conformance.subjects", "conformance.cli", True)]
    assert found.cycles == () and found.unplaced == ()


def test_the_measure_finds_a_cycle_and_an_unplaced_unit(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "reports/__init__.py": "from conformance.reports import html\n",
        "reports/html.py": "from . import rerun\n",
        "reports/rerun.py": "from conformance.reports import html\n",
        "gadgets.py": "",
    })
    found = layers.measure(root)
    assert found.cycles == (("conformance.reports.html", "conformance.reports.rerun"),)
    assert found.unplaced == ("gadgets",)
