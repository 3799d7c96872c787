"""Render a LintResult: text (default, `path:line:col: CODE message`), json, sarif (2.1.0), github
(workflow commands that annotate pull requests)."""
from __future__ import annotations

from pathlib import Path

from mindport import __version__
from mindport.validators.lint.findings import LintResult
from mindport.validators.lint.rules import REGISTRY

FORMATS = ("text", "json", "sarif", "github")
DOCS_URL = "docs/rules/{code}.md"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render(result: LintResult, fmt: str = "text") -> str:
    if fmt == "text":
        return render_text(result)
    if fmt == "json":
        return render_json(result)
    if fmt == "sarif":
        return render_sarif(result)
    if fmt == "github":
        return render_github(result)
    raise ValueError(f"unknown output format {fmt!r}; choose from {', '.join(FORMATS)}")


def render_text(result: LintResult) -> str:
    lines = [f.format() for f in result.findings]
    n = len(result.findings)
    fixable = sum(f.fixable for f in result.findings)
    if result.fixed:
        lines.append(f"Fixed {result.fixed} finding{'s' if result.fixed != 1 else ''}.")
    if n:
        summary = f"Found {n} finding{'s' if n != 1 else ''} in {result.files} file{'s' if result.files != 1 else ''}"
        if fixable:
            summary += f" ({fixable} fixable with --fix)"
        lines.append(summary + ".")
    elif not result.errors:
        lines.append(f"All checks passed ({result.files} file{'s' if result.files != 1 else ''}).")
    return "\n".join(lines)


def render_json(result: LintResult) -> str:
    import json

    items = []
    for f in result.findings:
        items.append({
            "code": f.code,
            "name": f.name,
            "message": f.message,
            "severity": f.severity,
            "filename": f.path,
            "location": {"row": f.line, "column": f.col},
            "end_location": {"row": f.end_line or f.line, "column": f.end_col or f.col},
            "fixable": f.fixable,
            "url": DOCS_URL.format(code=f.code),
        })
    errors = [{"filename": e.path, "message": e.message} for e in result.errors]
    return json.dumps({"findings": items, "errors": errors, "files": result.files, "fixed": result.fixed}, indent=2)


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render_github(result: LintResult) -> str:
    lines = []
    for f in result.findings:
        level = {"error": "error", "warning": "warning"}.get(f.severity, "notice")
        props = (f"file={_gh_escape(f.path, True)},line={f.line},col={f.col},"
                 f"endLine={f.end_line or f.line},endColumn={f.end_col or f.col},"
                 f"title={_gh_escape(f'{f.code} ({f.name})', True)}")
        lines.append(f"::{level} {props}::{_gh_escape(f.code + ' ' + f.message)}")
    for e in result.errors:
        lines.append(f"::error file={_gh_escape(e.path, True)}::{_gh_escape(e.message)}")
    return "\n".join(lines)


def render_sarif(result: LintResult) -> str:
    import json

    used = sorted({f.code for f in result.findings})
    rules = []
    index = {}
    for i, code in enumerate(used):
        cls = REGISTRY[code]
        index[code] = i
        doc = (cls.__doc__ or "").strip()
        rules.append({
            "id": code,
            "name": cls.name,
            "shortDescription": {"text": cls.message},
            "fullDescription": {"text": doc.split("\n\n", 1)[0].replace("\n", " ")},
            "helpUri": DOCS_URL.format(code=code),
            "defaultConfiguration": {"level": _SARIF_LEVEL.get(cls.severity, "warning")},
        })
    results = []
    for f in result.findings:
        region = {"startLine": f.line, "startColumn": f.col}
        if f.end_line:
            region.update(endLine=f.end_line, endColumn=f.end_col or f.col)
        results.append({
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _SARIF_LEVEL.get(f.severity, "warning"),
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": Path(f.path).as_posix()},
                "region": region,
            }}],
        })
    notifications = [
        {"level": "error", "message": {"text": f"{e.path}: {e.message}"}} for e in result.errors
    ]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "mindport-lint", "version": __version__,
                                "informationUri": "docs/rules/index.md", "rules": rules}},
            "results": results,
            "invocations": [{"executionSuccessful": not result.errors,
                             "toolExecutionNotifications": notifications}],
        }],
    }
    return json.dumps(doc, indent=2)
