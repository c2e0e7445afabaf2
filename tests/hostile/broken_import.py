"""A subject module whose import fails (``tooluse run --bash tests/hostile/broken_import.py:factory``)."""

raise ImportError("No module named 'frobnicate' (planted by the test)")
