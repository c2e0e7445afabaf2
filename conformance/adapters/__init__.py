"""Adapters that make existing tool implementations into subjects (``module:attr`` factories).

Each imports its implementation when a subject is made; without it, making one raises
:class:`~conformance.adapters._lazy.ImplementationMissing` naming the pip requirement. Each
module's docstring says what it maps onto the suite's contract and why. The project's
``matrix.toml`` runs them all (``tooluse matrix``; findings in ``docs/matrix.md``).

- :mod:`conformance.adapters.anthropic_sdk`: the ``anthropic`` SDK's agent toolset (``bash``; a
  text-editor profile over ``read``/``write``/``edit``) and its memory tool (sync and async).
- :mod:`conformance.adapters.openhands_aci`: openhands-aci's ``file_editor``
  (``text_editor_20250124``; Python 3.12).
- :mod:`conformance.adapters.openhands_tools`: openhands-tools' ``FileEditorExecutor``
  (``text_editor_20250124``) and ``TerminalExecutor`` with its tmux and subprocess back-ends
  (``bash_20250124``; Python 3.12).
- :mod:`conformance.adapters.swe_rex`: SWE-ReX's ``LocalRuntime`` bash session, driven as
  SWE-agent drives it (``bash_20250124``).

Agent frameworks (agent-loop subjects; ``frameworks.toml``, findings in ``docs/frameworks.md``):

- :mod:`conformance.adapters.pydantic_ai`: a pydantic-ai ``Agent`` (``--loop``).
- :mod:`conformance.adapters.langchain_agent`: LangChain ``create_agent`` on langchain-anthropic
  (``--loop-cmd``).
- :mod:`conformance.adapters.litellm_loop`: LiteLLM under an OpenAI-style loop (``--loop-cmd``).
- :mod:`conformance.adapters.llm_anthropic`: llm with llm-anthropic (``--loop-cmd``, a venv of its own:
  it pins ``anthropic<2``).
- :mod:`conformance.adapters.vercel_ai`: the Vercel AI SDK, ``node/vercel_ai.mjs`` (``--loop-cmd``).
"""
