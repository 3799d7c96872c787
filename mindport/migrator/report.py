"""What converting a file or a tree reports: one ``FileReport`` per file, gathered in a ``ConversionReport`` (its
JSON is what ``mindport convert --json`` prints)."""
from __future__ import annotations

from dataclasses import dataclass, field

from mindport import __version__
from mindport.errors import Diagnostic


@dataclass
class FileReport:
    path: str  # relative to SRC
    # converted | unchanged (copied byte for byte: nothing to convert) | copied (not Python) | cached | linked (an
    # in-tree symlink, mirrored as a link) | failed (copied unchanged, see the diagnostic) | skipped (not mirrored)
    status: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    lines: int = 0
    sites: int = 0
    diff: str = ""

    def to_json(self) -> dict:
        return {"path": self.path, "status": self.status, "lines": self.lines, "converted_sites": self.sites,
                "diagnostics": [d.to_json() for d in self.diagnostics]}


@dataclass
class ConversionReport:
    src: str
    dst: str
    files: list[FileReport] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.diagnostics]

    @property
    def unconverted(self) -> list[Diagnostic]:
        """Every site left as it was, file not converted or not mirrored (errors and warnings; info is not)."""
        return [d for d in self.diagnostics if d.severity in ("error", "warning")]

    @property
    def ok(self) -> bool:
        return not self.unconverted

    def totals(self) -> dict:
        counts: dict[str, int] = {}
        for f in self.files:
            counts[f.status] = counts.get(f.status, 0) + 1
        unsupported: dict[str, int] = {}
        for d in self.diagnostics:
            if d.api:
                unsupported[d.api] = unsupported.get(d.api, 0) + 1
        return {
            "files": len(self.files), "by_status": counts,
            "python_lines": sum(f.lines for f in self.files),
            "sites_converted": sum(f.sites for f in self.files),
            "sites_unconverted": len(self.unconverted),
            "top_unsupported": sorted(unsupported.items(), key=lambda kv: (-kv[1], kv[0]))[:10],
        }

    def to_json(self) -> dict:
        return {"tool": "mindport", "version": __version__, "src": self.src, "dst": self.dst,
                "ok": self.ok, "totals": self.totals(), "files": [f.to_json() for f in self.files]}
