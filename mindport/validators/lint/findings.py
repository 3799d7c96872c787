"""What linting produces: findings, the paths it could not read, and a run's result (its exit code)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # 1-based
    col: int  # 1-based, in characters
    code: str
    name: str
    message: str
    severity: str = "warning"
    fixable: bool = False
    end_line: int | None = None
    end_col: int | None = None

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class InputProblem:
    """A path that could not be linted (missing, undecodable, binary): exit code 2."""

    path: str
    message: str

    def format(self) -> str:
        return f"{self.path}: error: {self.message}"


@dataclass
class LintResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[InputProblem] = field(default_factory=list)
    files: int = 0
    lines: int = 0
    fixed: int = 0

    @property
    def exit_code(self) -> int:
        if self.errors:
            return 2
        return 1 if self.findings else 0
