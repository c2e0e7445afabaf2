"""tooluse-conformance: the conformance suite for Claude's tool-use protocol."""

__version__ = "0.1.0"
