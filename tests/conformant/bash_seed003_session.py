"""Seed 003's own ``BashSession``: the Python example of "Bash 도구 구현하기 (Implement the bash
tool)", completed only with what the seed's prose asks. The documented design is the floor of
MUST (docs/checks.md, the calibration rule): this subject must pass every MUST check.

The implementation is the package's bash starter, ``conformance/starters/bash_tool.py`` (what
``tooluse init bash`` writes out for a user to edit), so the starter is held to this floor. Its
docstring keeps what the example is given as written, each addition with the sentence (Korean
and English) it comes from, and the example's own bugs that were fixed (a last line without a
newline dropped with the sentinel, strict UTF-8 decoding, a reader joined at a timeout).
"""

from conformance.starters.bash_tool import Tool, factory

__all__ = ["Tool", "factory"]
