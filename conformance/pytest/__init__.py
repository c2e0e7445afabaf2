"""The pytest plugin (entry point ``pytest11``, name ``tooluse``): the suite inside a team's own
test run. :mod:`.plugin` declares the options and the ``tooluse_simulator`` fixture and imports
nothing else of the suite until a ``--tooluse-*`` option asks for it; :mod:`.items` makes one
item per (subject, check); :mod:`.report` writes ``--tooluse-out DIR``."""

from typing import Any

import pytest

#: The run's sandbox mode and limits (:class:`conformance.subjects.launch.Confinement`) when
#: ``--tooluse-sandbox`` or ``--tooluse-pass-env`` give them; absent: as the environment says.
CONFINEMENT = pytest.StashKey[Any]()
