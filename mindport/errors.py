"""Errors as values: every problem mindport finds is a Diagnostic with a code, a place and a suggestion.

Codes are stable and documented (docs/diagnostics.md):
  MP1xx  conversion (MP101 unsupported API, MP102 unsupported argument/value, MP103 unknown torch API,
         MP104 torch idiom left as is, MP105 training-loop shape not recognised, MP106 a symbol of a torch-based package, or of one with no MindSpore backend,
         MP107 a site GRAPH_MODE runs otherwise than PyNative: a list/dict changed through a second name, a value kept
         on self whose meaning a static graph does not keep)
  MP2xx  input problems (MP201 syntax error, MP202 undecodable file, MP203 binary file, MP209 a notebook cell
         that is not Python)
  MP3xx  weights (MP301 unmatched parameter, MP302 shape mismatch, MP303 unsafe/unreadable checkpoint)
  MP4xx  parity (MP401 output mismatch, MP402 structure mismatch, MP403 graph-mode failure, MP404 constant
         reference re-checked on perturbed weights, MP405 gradient mismatch, MP406 training divergence)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    file: str = "<string>"
    line: int = 0
    column: int = 0
    suggestion: str = ""
    api: str = ""  # the torch API concerned, when there is one
    severity: str = "error"  # error | warning | info

    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def format(self) -> str:
        text = f"{self.location()}: {self.code} {self.message}"
        if self.suggestion:
            text += f" (fix: {self.suggestion})"
        return text

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class MigrationError(Exception):
    """Raised by the Python API when a step cannot complete; carries every diagnostic, not only the first."""

    message: str
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        if not self.diagnostics:
            return self.message
        return self.message + "\n" + "\n".join("  " + d.format() for d in self.diagnostics)


class InputError(MigrationError):
    """Bad input from the user (exit code 2): unreadable file, malformed option, missing class."""
