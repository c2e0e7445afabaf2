"""The pytest plugin's former place: an install made before it moved to
:mod:`conformance.pytest.plugin` names this module in its ``pytest11`` entry point (``pip install
-e .`` again points it at the new one). Nothing else imports it."""

from conformance.pytest.plugin import *  # noqa: F403
