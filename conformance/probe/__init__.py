"""``tooluse probe``: drive the corpus's scenarios live with a model, record every exchange,
judge every response for API drift; ``tooluse diff`` compares two probes (model upgrades).

Modules: :mod:`.scenarios` (what is driven), :mod:`.tools` (who answers tool calls),
:mod:`.transport` (recording under the SDK), :mod:`.drift` (what the registry does not know),
:mod:`.driver` (one conversation), :mod:`.run` (the run and its output), :mod:`.progress`,
:mod:`.compare` (two probes side by side). See docs/model-upgrade.md.
"""
