"""The `mindport` command line: parse arguments, call the library, print.

``app.py`` holds the command group and what the commands share; the commands live in ``project.py`` (convert,
migrate, scaffold, export), ``checks.py`` (weights, validate, lint) and ``tables.py`` (mappings ...). Heavy imports
(libcst, torch, mindspore) happen inside the commands that need them, so `mindport lint` and `mindport --help` stay
fast: a command imports the library code it drives inside its body and keeps to parse/call/print.
"""
from mindport.cli import checks, project, tables  # noqa: F401  (the commands register on `main`)
from mindport.cli.app import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, main

__all__ = ["EXIT_FINDINGS", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "main"]
