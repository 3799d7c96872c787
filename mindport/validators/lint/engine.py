"""The lint engine: find files, read them, parse once with `ast`, run the selected rules, apply `# noqa`.

Small on purpose: the knowledge lives in the rule classes. Stdlib only; libcst is loaded by fix.py alone.
"""
from __future__ import annotations

import ast
import fnmatch
import io
import os
import re
from pathlib import Path
from typing import Iterable, Sequence

from mindport.validators.lint.config import LintConfig, load_config
from mindport.validators.lint.context import FileContext
from mindport.validators.lint.findings import Finding, InputProblem, LintResult
from mindport.validators.lint.rules import REGISTRY, Rule, all_rules

DEFAULT_EXCLUDES = (".git", ".hg", ".venv", "venv", "__pycache__", ".tox", ".eggs", "build", "dist",
                    "node_modules", ".mypy_cache", ".pytest_cache")
SYNTAX_CODE = "MS001"


class UsageError(ValueError):
    """Bad selection or option (exit code 2)."""


# ---- selection ------------------------------------------------------------------------------------


def _split_codes(values: Iterable[str] | str | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for v in values:
        out.extend(p.strip().upper() for p in str(v).split(",") if p.strip())
    return out


def validate_codes(prefixes: Sequence[str]) -> None:
    for p in prefixes:
        if p == "ALL":
            continue
        if not any(code.startswith(p) for code in REGISTRY):
            raise UsageError(f"unknown rule code or prefix {p!r} (see `mindport lint --help` or docs/rules/index.md)")


def select_rules(select: Sequence[str] | None, ignore: Sequence[str] | None) -> list[type[Rule]]:
    """Rules whose code matches a `select` prefix (default: all) and no `ignore` prefix. MS001 always runs."""
    select = list(select) if select else ["ALL"]
    ignore = list(ignore or [])
    validate_codes(select)
    validate_codes(ignore)
    chosen = []
    for rule in all_rules():
        picked = "ALL" in select or any(rule.code.startswith(p) for p in select)
        dropped = any(rule.code.startswith(p) for p in ignore if p != "ALL") or "ALL" in ignore
        if (picked and not dropped) or rule.code == SYNTAX_CODE:
            chosen.append(rule)
    return chosen


# ---- noqa -----------------------------------------------------------------------------------------

_NOQA = re.compile(r"#\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.I)
ALL_CODES = frozenset({"*"})
_NOQA_WORD = re.compile("noqa", re.I)


def noqa_codes(line_text: str) -> frozenset[str] | None:
    """Codes silenced by a `# noqa` comment on this physical line (`ALL_CODES` for a bare one), else None.

    Only lines that carry a finding are checked, and only when they mention noqa, so the cost is nil for
    most files. The line is tokenized on its own so that `# noqa` inside a string literal does not count.
    """
    lowered = line_text.lower()
    if "noqa" not in lowered:
        return None
    import tokenize  # only for lines that mention noqa

    codes: frozenset[str] | None = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line_text + "\n").readline):
            if tok.type != tokenize.COMMENT:
                continue
            m = _NOQA.search(tok.string)
            if not m:
                continue
            if m.group("codes"):
                found = frozenset(c.upper() for c in re.split(r"[\s,]+", m.group("codes")) if c)
            else:
                found = ALL_CODES
            codes = found if codes is None else codes | found
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the line opens a multi-line string or bracket: trust the comment tokens seen so far
    return codes


def noqa_lines(source: str) -> dict[int, frozenset[str]]:
    """line -> codes silenced there, for every line of `source` (a convenience for tools and tests)."""
    out = {}
    for i, text in enumerate(source.splitlines(), 1):
        codes = noqa_codes(text)
        if codes:
            out[i] = codes
    return out


def _silenced(noqa: dict[int, frozenset[str] | None], all_lines: list[str], line: int, code: str) -> bool:
    if line not in noqa:
        noqa[line] = noqa_codes(all_lines[line - 1]) if 0 < line <= len(all_lines) else None
    codes = noqa[line]
    if not codes:
        return False
    return codes is ALL_CODES or "*" in codes or any(code.startswith(c) for c in codes)


# ---- one source -----------------------------------------------------------------------------------


def _char_col(lines: list[str] | None, line: int, byte_col: int) -> int:
    """ast columns are UTF-8 byte offsets; report characters (1-based). `lines` is None for ASCII files."""
    if lines is not None and 0 < line <= len(lines):
        text = lines[line - 1]
        if not text.isascii():
            return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1
    return byte_col + 1


def lint_source(
    source: str,
    path: str = "<string>",
    rules: Sequence[type[Rule]] | None = None,
    options: dict | None = None,
) -> list[Finding]:
    """Lint one source text with the given rule classes (default: all). Syntax errors become MS001."""
    rules = all_rules() if rules is None else rules
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = exc.offset or 1
        msg = exc.msg or "invalid syntax"
        return [Finding(path, line, max(col, 1), SYNTAX_CODE, "syntax-error", f"syntax error: {msg}", "error")]
    ctx = FileContext(path, source, tree, options or {})
    lines = None if source.isascii() else source.splitlines()
    has_noqa = _NOQA_WORD.search(source) is not None
    all_lines = (lines or source.splitlines()) if has_noqa else []
    noqa: dict[int, frozenset[str] | None] = {}
    findings: dict[tuple, Finding] = {}
    for rule_cls in rules:
        if rule_cls.code == SYNTAX_CODE:
            continue
        rule = rule_cls()
        for item in rule.run(ctx):
            node, message = item[0], item[1]
            fixable = rule_cls.fixable and (len(item) < 3 or bool(item[2]))
            line = getattr(node, "lineno", 1)
            if has_noqa and _silenced(noqa, all_lines, line, rule_cls.code):
                continue
            col = _char_col(lines, line, getattr(node, "col_offset", 0))
            end_line = getattr(node, "end_lineno", None)
            end_col = getattr(node, "end_col_offset", None)
            if end_line is not None and end_col is not None:
                end_col = _char_col(lines, end_line, end_col)
            f = Finding(path, line, col, rule_cls.code, rule_cls.name, message, rule_cls.severity,
                        fixable, end_line, end_col)
            findings.setdefault((line, col, rule_cls.code), f)
    return sorted(findings.values(), key=lambda f: (f.line, f.col, f.code))


# ---- files ----------------------------------------------------------------------------------------


def read_source(path: Path) -> str:
    """Decode a Python file: UTF-8 (with or without BOM) or its PEP 263 coding cookie. Raises ValueError."""
    data = path.read_bytes()
    if b"\x00" in data:
        raise ValueError("binary file (contains NUL bytes), not Python source")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        import tokenize

        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:
            encoding = "utf-8"
        if encoding.lower().replace("_", "-") not in ("utf-8", "utf-8-sig"):
            try:
                return data.decode(encoding)
            except (UnicodeDecodeError, LookupError):
                pass
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at line {line}); "
            "save the file as UTF-8 or declare its encoding with a `# -*- coding: ... -*-` line"
        ) from None


def _excluded(path: Path, config: LintConfig) -> bool:
    if not config.exclude:
        return False
    rel = path.as_posix()
    if config.root:
        candidate = os.path.relpath(os.path.abspath(path), config.root)
        if not candidate.startswith(".."):
            rel = Path(candidate).as_posix()
    for pattern in config.exclude:
        pat = pattern.rstrip("/")
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(path.name, pat):
            return True
        if any(fnmatch.fnmatch(part, pat) for part in Path(rel).parts[:-1]):
            return True
        if fnmatch.fnmatch(rel, pat + "/*"):
            return True
    return False


def iter_python_files(root: Path, config: LintConfig) -> Iterable[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in DEFAULT_EXCLUDES and not d.endswith(".egg-info") and not _excluded(Path(dirpath, d), config)
        )
        for name in sorted(filenames):
            if name.endswith((".py", ".pyi")):
                p = Path(dirpath, name)
                if not _excluded(p, config):
                    yield p


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else str(path)
    except ValueError:
        return str(path)


def lint_paths(
    paths: Sequence[str | os.PathLike],
    select: Sequence[str] | str | None = None,
    ignore: Sequence[str] | str | None = None,
    fix: bool = False,
    exclude: Sequence[str] | None = None,
    use_config: bool = True,
) -> LintResult:
    """Lint files and directories. `select`/`ignore` are codes or prefixes (`MS1`, `MS201`, `ALL`);
    they override/extend `[tool.mindport.lint]` found in the nearest pyproject.toml. With `fix`, safe
    autofixes are written back (libcst is imported only then) and the remaining findings reported."""
    result = LintResult()
    cli_select = _split_codes(select)
    cli_ignore = _split_codes(ignore) or []
    if cli_select:
        validate_codes(cli_select)
    validate_codes(cli_ignore)
    seen: set[str] = set()
    rule_cache: dict[tuple, list[type[Rule]]] = {}
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            result.errors.append(InputProblem(str(raw), "no such file or directory"))
            continue
        config = load_config(p) if use_config else LintConfig()
        if exclude:
            config = config.with_exclude(exclude)
        key = (tuple(cli_select or config.select or ["ALL"]), tuple(config.ignore + cli_ignore))
        if key not in rule_cache:
            try:
                rule_cache[key] = select_rules(list(key[0]), list(key[1]))
            except UsageError as exc:
                raise UsageError(f"{exc} (in {config.source})" if config.source else str(exc)) from None
        rules = rule_cache[key]
        files = iter_python_files(p, config) if p.is_dir() else ([] if _excluded(p, config) else [p])
        for f in files:
            resolved = os.path.normcase(os.path.abspath(f))
            if resolved in seen:
                continue
            seen.add(resolved)
            shown = _display(f)
            try:
                source = read_source(f)
            except (OSError, ValueError) as exc:
                result.errors.append(InputProblem(shown, str(exc)))
                continue
            result.files += 1
            result.lines += source.count("\n") + 1
            findings = lint_source(source, shown, rules, config.options)
            if fix and any(x.fixable for x in findings):
                from mindport.validators.lint.fix import fix_source  # the only libcst import

                new_source, fixed = fix_source(source, findings, shown)
                if fixed and new_source != source:
                    f.write_text(new_source, encoding="utf-8")
                    result.fixed += fixed
                    findings = lint_source(new_source, shown, rules, config.options)
            result.findings.extend(findings)
    return result
