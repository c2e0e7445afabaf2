"""Scenario definitions, one module per family; importing this package registers them all."""

from . import (  # noqa: F401
    api_errors,
    bash,
    code_execution,
    code_execution_legacy,
    functions,
    live_fields,
    managed_agents,
    mixed,
    ptc,
    text_editor,
    web,
)
