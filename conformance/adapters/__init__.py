"""Adapters that make existing tool implementations into subjects (``module:attr`` factories).

- :mod:`conformance.adapters.anthropic_sdk`: the ``anthropic`` SDK's agent toolset (``bash``; a
  text-editor profile over ``read``/``write``/``edit``) and its memory tool.
"""
