"""Objects built by the ``anthropic`` SDK's own pydantic models, drawn from their field types.

``sdk_objects(Model)`` walks ``Model.model_fields`` (Literal, str, int, bool, Optional, Union,
List, Dict, datetime, nested models) and returns a strategy of ``Model`` instances made by
``Model.model_validate``; ``dumped(Model)`` gives their JSON (``exclude_unset``), i.e. the JSON the
SDK would send or receive for them.
"""

from __future__ import annotations

import datetime as dt
import types
import typing
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

_text = st.text(max_size=12)
_scalars = st.none() | st.booleans() | st.integers(-100, 100) | _text
_json = st.recursive(_scalars, lambda k: st.lists(k, max_size=2)
                     | st.dictionaries(st.text("abcxyz_", min_size=1, max_size=5), k, max_size=2),
                     max_leaves=4)
_MAX_DEPTH = 6


def _for(tp: Any, depth: int) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return _for(args[0], depth)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if depth >= _MAX_DEPTH:
            options = [a for a in options if not _is_model(a)] or options[:1]
        strat = st.one_of(*(_for(a, depth) for a in options))
        return st.none() | strat if type(None) in args else strat
    if origin in (list, typing.List):  # noqa: UP006
        return st.lists(_for(args[0], depth + 1), max_size=0 if depth >= _MAX_DEPTH else 2)
    if origin in (dict, typing.Dict):  # noqa: UP006
        return st.dictionaries(st.text("abcxyz_", min_size=1, max_size=5),
                               _for(args[1], depth + 1), max_size=2)
    if _is_model(tp):
        return _model_dict(tp, depth + 1)
    if tp is str:
        return _text
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(0, 10_000)
    if tp is float:
        return st.floats(0, 100, allow_nan=False)
    if tp is dt.datetime:
        return st.datetimes(min_value=dt.datetime(2025, 1, 1), max_value=dt.datetime(2027, 1, 1),
                            timezones=st.just(dt.UTC)).map(
            lambda d: d.replace(microsecond=0).isoformat().replace("+00:00", "Z"))
    if tp is object:
        return _json
    raise TypeError(f"no strategy for SDK field type {tp!r}")


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _model_dict(model: type[BaseModel], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    required, optional = {}, {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        strat = _for(field.annotation, depth)
        if field.is_required():
            required[key] = strat
        elif depth < _MAX_DEPTH:
            optional[key] = strat
    return st.fixed_dictionaries(required, optional=optional)


def sdk_objects(model: type[BaseModel]) -> st.SearchStrategy[BaseModel]:
    return _model_dict(model, 0).map(model.model_validate)


def dumped(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    return sdk_objects(model).map(lambda m: m.model_dump(mode="json", exclude_unset=True,
                                                         by_alias=True))
