"""Write ``model_a/`` and ``model_b/`` here (``python tests/data/probe/generate.py``): the two
cassette sets of :mod:`conformance.probe.demo`, which ships them in the package."""

from __future__ import annotations

from pathlib import Path

from conformance.probe.demo import write

if __name__ == "__main__":
    write(Path(__file__).resolve().parent)
