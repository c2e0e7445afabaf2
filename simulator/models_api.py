"""The Models API: ``GET /v1/models`` and ``GET /v1/models/{model_id}`` (PROTOCOL.md §8).

Capabilities come from the tool registry, the one source of truth: ``server_tools.code_execution``
says the model accepts at least one code execution tool version; the top-level ``code_execution``
says code run by that tool can call the request's other tools (programmatic tool calling and
dynamic filtering). Capabilities the registry does not model are reported as supported [I].
"""

from __future__ import annotations

from typing import Any

from . import registry
from .errors import api_error, not_found
from .files_api import paginate
from .http import SimRequest, SimResponse, json_headers
from .models import EFFORT_LEVELS, MODELS, Model, lookup
from .sources import Source

#: Where each registry-derived capability comes from.
CAPABILITY_SOURCES: dict[str, Source] = {
    "server_tools.code_execution": registry.TOOLS["code_execution_20250825"].source,
    "code_execution": registry.TOOLS["code_execution_20260120"].source,
}

#: Release dates are not modelled; the SDK documents an epoch value for an unknown date.
UNKNOWN_DATE = "1970-01-01T00:00:00Z"


def _supported(flag: bool) -> dict[str, bool]:
    return {"supported": flag}


def _accepts_any(family: registry.Family, model: Model) -> bool:
    return any(t.accepts_model(model.id) for t in registry.of_family(family))


def capabilities(model: Model) -> dict[str, Any]:
    code_execution_tool = _accepts_any("code_execution", model)
    web_search = _accepts_any("web_search", model)
    yes = _supported(True)
    return {
        "server_tools": {"supported": code_execution_tool or web_search,
                         "code_execution": _supported(code_execution_tool),
                         "web_search": _supported(web_search)},
        "code_execution": _supported(code_execution_tool and model.ptc),
        # Not modelled by the registry: reported as supported [I].
        "batch": yes, "citations": yes, "image_input": yes, "pdf_input": yes,
        "structured_outputs": yes,
        "context_management": {"supported": True},
        # Effort levels per model (simulator.models.Model.effort; docs build-with-claude/effort).
        "effort": {"supported": bool(model.effort),
                   **{level: _supported(level in model.effort) for level in EFFORT_LEVELS}},
        "thinking": {"supported": True, "types": {"enabled": yes, "disabled": yes,
                                                  "adaptive": yes, "between_tools": yes}},
    }


def model_info(model: Model) -> dict[str, Any]:
    return {"type": "model", "id": model.id, "display_name": model.display_name,
            "created_at": UNKNOWN_DATE, "lifecycle": model.lifecycle,
            "max_input_tokens": model.context_window, "capabilities": capabilities(model)}


class ModelsAPI:
    """The Models API over :data:`simulator.models.MODELS`; a :data:`~simulator.http.Handler`."""

    def __init__(self, models: tuple[Model, ...] = MODELS) -> None:
        self.models = models

    def __call__(self, request: SimRequest) -> SimResponse:
        path = request.path.rstrip("/")
        if request.method != "GET":
            return api_error(405, "invalid_request_error",
                             f"Method {request.method} is not allowed on {path}")
        if path == "/v1/models":
            page = paginate([model_info(m) for m in self.models], request.query)
            return SimResponse(200, headers=json_headers(), body=page)
        model_id = path.removeprefix("/v1/models/")
        model = lookup(model_id) if "/" not in model_id else None
        if model is None or model not in self.models:
            return not_found(f"model: {model_id}")
        return SimResponse(200, headers=json_headers(), body=model_info(model))
