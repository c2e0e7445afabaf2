"""Starter subjects: one complete, conformant client tool per file, each importing only its
language's standard library, written out by ``tooluse init`` for a user to edit. Each passes every
MUST check (``tests/test_starters.py``). Data to copy, not modules to import."""
