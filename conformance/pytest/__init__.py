"""The pytest plugin (entry point ``pytest11``, name ``tooluse``): the suite inside a team's own
test run. :mod:`.plugin` declares the options and the ``tooluse_simulator`` fixture and imports
nothing else of the suite until a ``--tooluse-*`` option asks for it; :mod:`.items` makes one
item per (subject, check); :mod:`.report` writes ``--tooluse-out DIR``."""

from typing import Any

import pytest

#: The run's settings (:class:`conformance.run.Run`), built once from the ``--tooluse-*``
#: options when one names a subject; absent: no conformance item is collected.
RUN = pytest.StashKey[Any]()
