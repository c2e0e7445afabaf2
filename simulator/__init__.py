"""The protocol simulator: registry, schemas, rules, state, replay engine and transports."""

__version__ = "0.1.0"
