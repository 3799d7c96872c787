"""`[tool.mindport.lint]` in pyproject.toml, found by walking up from a linted path (stdlib tomllib).

    [tool.mindport.lint]
    select = ["MS1", "MS2"]        # codes or prefixes; default: all
    ignore = ["MS104"]
    exclude = ["generated/*", "legacy_*.py"]   # globs, relative to this pyproject.toml
    device-target = "Ascend"        # turn on the Ascend-only rules (MS104, MS105) for every file
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

KNOWN_KEYS = {"select", "ignore", "exclude", "device-target"}


class ConfigError(ValueError):
    """Malformed configuration (exit code 2)."""


@dataclass(frozen=True)
class LintConfig:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    exclude: tuple[str, ...] = ()
    options: dict = field(default_factory=dict)
    root: Path | None = None  # directory of the pyproject.toml
    source: str | None = None  # the pyproject.toml path, for messages

    def with_exclude(self, patterns) -> "LintConfig":
        return replace(self, exclude=(*self.exclude, *patterns))


def _codes(value, key: str, where: Path) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: [tool.mindport.lint] {key} must be a list of strings")
    return [v.strip().upper() for v in value]


def _config_in_dir(directory: Path) -> LintConfig | None:
    candidate = directory / "pyproject.toml"
    try:
        st = candidate.stat()
    except OSError:
        return None
    return _parse(candidate, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def _parse(candidate: Path, mtime_ns: int, size: int) -> LintConfig | None:
    """Parse one pyproject.toml; cached on (path, mtime, size) so edits are seen in long-lived processes."""
    directory = candidate.parent
    try:
        raw = candidate.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{candidate}: cannot read: {exc}") from None
    if b"tool.mindport" not in raw and b"mindport.lint" not in raw:  # cheap pre-check: most pyproject.toml files have no section for us
        return None
    import tomllib  # stdlib; loaded only when a candidate section may exist

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{candidate}: cannot parse: {exc}") from None
    section = data.get("tool", {}).get("mindport", {}).get("lint")
    if section is None:
        return None
    unknown = set(section) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{candidate}: unknown [tool.mindport.lint] keys: {', '.join(sorted(unknown))}")
    select = _codes(section["select"], "select", candidate) if "select" in section else None
    ignore = _codes(section.get("ignore", []), "ignore", candidate)
    exclude = section.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(v, str) for v in exclude):
        raise ConfigError(f"{candidate}: [tool.mindport.lint] exclude must be a list of strings")
    options = {k: section[k] for k in ("device-target",) if k in section}
    return LintConfig(select, ignore, tuple(exclude), options, directory.resolve(), str(candidate))


def load_config(path: Path) -> LintConfig:
    """The nearest pyproject.toml with a [tool.mindport.lint] table, walking up from `path`."""
    start = path.resolve()
    if not start.is_dir():
        start = start.parent
    for directory in (start, *start.parents):
        found = _config_in_dir(directory)
        if found is not None:
            return found
    return LintConfig()
