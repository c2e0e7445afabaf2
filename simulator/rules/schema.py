"""``request.schema``: the request body validates against the JSON Schemas.

Delegates to ``simulator.validation.validate(body, "request", strict=False)`` (built in another
part of the project). Imported lazily: until that module exists the rule passes every request
and says so in the context notes.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..sources import protocol
from .base import RuleContext, rule

SKIPPED_NOTE = "request.schema skipped: simulator.validation is not available yet"


def _validator() -> Any:
    try:
        mod = importlib.import_module("simulator.validation")
    except ImportError:
        return None
    return getattr(mod, "validate", None)


def _first_error(result: Any) -> str | None:
    if result is None or result is True:
        return None
    if isinstance(result, str):
        return result or None
    if isinstance(result, list | tuple):
        return str(result[0]) if result else None
    errors = getattr(result, "errors", None)
    if errors is not None:
        return _first_error(list(errors))
    if getattr(result, "ok", True) is False or getattr(result, "valid", True) is False:
        return str(result)
    return None


@rule("request.schema", source=protocol("5. Error responses: Status to type", "I"),
      statement="The request body is a valid Messages API request.",
      message="{pointer}: {problem}")
def request_schema(ctx: RuleContext) -> str | None:
    validate = _validator()
    if validate is None:
        ctx.notes.append(SKIPPED_NOTE)
        return None
    try:
        result = validate(dict(ctx.body), "request", strict=False)
    except ValueError as e:  # a validator that raises (e.g. jsonschema.ValidationError)
        return str(getattr(e, "message", None) or e)
    return _first_error(result)
