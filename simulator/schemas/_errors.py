"""Schemas of API error bodies (PROTOCOL.md §5)."""

from __future__ import annotations

from .. import registry
from ._core import STR, Ctx, Schema, cite, const, document, enum, nullable, obj

NAME = "errors"


def error_type(ctx: Ctx) -> Schema:
    statuses = ", ".join(f"{s} {t}" for s, t in registry.API_ERROR_TYPES.items())
    src = (f"{registry.API_ERROR_TYPES_SOURCE.cite()} ({statuses}); SDK-only: "
           f"{', '.join(registry.SDK_API_ERROR_TYPES)}")
    return enum(ctx, (*registry.API_ERROR_TYPES.values(), *registry.SDK_API_ERROR_TYPES), src,
                what="error type")


def error_body(ctx: Ctx) -> Schema:
    details = {"type": ["object", "null"], "properties": {"error_code": nullable(STR)}}
    inner = obj(ctx, {"type": error_type(ctx), "message": STR, "details": details},
                ["type", "message"], lenient_required=["type"])
    return obj(ctx, {"type": const("error"), "error": inner, "request_id": nullable(STR)},
               ["type", "error"], comment=cite(registry.API_ERROR_TYPES_SOURCE))


def build(ctx: Ctx) -> Schema:
    return document(ctx, NAME, {"error_body": error_body(ctx), "error_type": error_type(ctx)},
                    title="API error bodies")
