"""Hypothesis strategies used by the project's own tests (protocol strategies for users live in
:mod:`simulator.strategies`)."""
