"""Model-based exploration: state machines, the models they compare subjects with, strategies."""
