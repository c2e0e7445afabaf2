"""``request.schema``: the request body validates against the JSON Schemas.

Delegates to ``simulator.validation.validate(body, "request", strict=False)`` (built in another
part of the project). Imported lazily: until that module exists the rule passes every request
and says so in the context notes.
"""

from __future__ import annotations

from typing import Any

from ..sources import protocol
from .base import RuleContext, rule

#: An empty ``messages`` list, in the API's words (live bodies quoted in langgenius/dify#25953,
#: 2025-09, and devoxx/DevoxxGenieIDEAPlugin#567, 2025-03); the schemas leave the length open.
NO_MESSAGES = "messages: at least one message is required"


def _first_error(result: Any, body: Any = None) -> str | None:
    """The first error-level violation that no other (more precise) rule answers, worded as the
    API words it (:mod:`simulator.rules.wording`)."""
    from .base import RULES
    from .wording import api_message
    for v in result or []:
        if getattr(v, "severity", "error") != "error":
            continue
        if getattr(v, "rule", None) in RULES and v.rule != "request.schema":
            continue  # that rule gives the API's own message
        return api_message(str(getattr(v, "pointer", "")), str(getattr(v, "rule", "")),
                           str(getattr(v, "message", v)), body)
    return None


@rule("request.schema", source=protocol("5. Error responses: Status to type", "I"),
      statement="The request body is a valid Messages API request (the problem worded as the "
                "API words it: simulator.rules.wording).",
      message="{location}: {problem}")
def request_schema(ctx: RuleContext) -> str | None:
    if ctx.body.get("messages") == []:
        return NO_MESSAGES
    from ..validation import is_valid, validate
    h = ctx.history
    if h is not None:
        # Message items validate independently: those known valid need not be validated again.
        unknown = [(m, f) for m, f in zip(h.messages, h.facts, strict=True) if not f.valid]
        if is_valid({**ctx.body, "messages": [m for m, _ in unknown]}, "request"):
            for _, f in unknown:
                f.valid = True
            return None
    return _first_error(validate(dict(ctx.body), "request", strict=False), ctx.body)
