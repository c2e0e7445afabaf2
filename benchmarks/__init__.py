"""Performance measurements, as ratios in one run (``nox -s bench`` / ``python -m benchmarks``)."""
