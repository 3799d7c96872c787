"""Coverage of the mapping tables against the official PyTorch->MindSpore tables, and the generated docs page.

The official tables ship in ``reference/`` (``ms_api_mapping_r2.4.tsv``: the last table targeting mindspore.nn/ops,
our ``nn`` profile; ``ms_api_mapping_master.tsv``: the mint table). Status of a torch API:
  proven       supported, with an example the generated suite runs (tests/mappings, tests/training)
  mapped       supported, no example yet (not proven)
  unsupported  an entry says why it cannot be converted
  missing      no entry at all
"""
from __future__ import annotations

import csv
from collections import Counter, defaultdict
from pathlib import Path

from mindport.mappings import Registry, load_registry

REFERENCE_DIR = Path(__file__).parent / "reference"
STATUSES = ("proven", "mapped", "unsupported", "missing")
# Typos in the official tables' torch column, normalised to the real torch names.
TORCH_TYPOS = {
    "torch.nn.LogSoftMax": "torch.nn.LogSoftmax", "torch.nn.SeLU": "torch.nn.SELU", "torch.nn.CeLU": "torch.nn.CELU",
    "torch.Tensor.log_normal": "torch.Tensor.log_normal_", "torch.optim.AdaMax": "torch.optim.Adamax",
    "torch.optim.RMSProp": "torch.optim.RMSprop",
}


def official_rows(table: str = "r2.4") -> list[dict]:
    """The table's rows that name a torch API (rows marked "-" list MindSpore-only APIs: nothing to map)."""
    path = REFERENCE_DIR / f"ms_api_mapping_{table}.tsv"
    with path.open(encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle, delimiter="\t") if row["torch_api"].strip() not in ("", "-")]


def status_of(registry: Registry, torch_name: str) -> str:
    entry = registry.lookup(TORCH_TYPOS.get(torch_name, torch_name))
    if entry is None:
        return "missing"
    if not entry.supported:
        return "unsupported"
    return "proven" if entry.example is not None else "mapped"


def namespace(torch_name: str) -> str:
    parts = torch_name.split(".")
    if parts[:2] == ["torch", "nn"] and len(parts) > 2:
        return "torch.nn.functional" if parts[2] == "functional" else (
            "torch.nn (layers)" if parts[2][:1].isupper() else f"torch.nn.{parts[2]}")
    if parts[0] == "torch" and len(parts) > 2:
        return ".".join(parts[:2])
    if parts[0] == "torch":
        return "torch (functions)"
    return ".".join(parts[:2])


def coverage(registry: Registry | None = None) -> dict:
    registry = registry or load_registry()
    result: dict = {}
    for table in ("r2.4", "master"):
        by_ns: dict[str, Counter] = defaultdict(Counter)
        unproven = []  # rows with a supported entry (they can run) and no proof yet
        for row in official_rows(table):
            status = status_of(registry, row["torch_api"])
            by_ns[namespace(row["torch_api"])][status] += 1
            if status == "mapped":
                unproven.append(row["torch_api"])
        total = Counter()
        for counts in by_ns.values():
            total.update(counts)
        result[table] = {"by_namespace": {ns: dict(c) for ns, c in sorted(by_ns.items())}, "total": dict(total),
                         "supported_not_proven": sorted(unproven)}
    # mint profile: master rows whose entry has a mint target proven on CPU
    mint = Counter()
    for row in official_rows("master"):
        entry = registry.lookup(TORCH_TYPOS.get(row["torch_api"], row["torch_api"]))
        if entry is None or entry.target("mint") is None:
            mint["no mint target"] += 1
        elif "CPU" in entry.runs.get("mint", ()):
            mint["runs on CPU (proven)"] += 1
        else:
            mint["mapped, not run on CPU"] += 1
    result["mint_profile"] = dict(mint)
    unique = {id(e): e for e in registry}
    result["all_entries"] = dict(Counter(
        "unsupported" if not e.supported else ("proven" if e.example else "mapped") for e in unique.values()))
    return result


def render_docs(registry: Registry | None = None) -> str:
    """docs/mappings.md: one row per entry, grouped by namespace."""
    registry = registry or load_registry()
    groups: dict[str, list] = defaultdict(list)
    for entry in {id(e): e for e in registry}.values():
        groups[namespace(entry.torch)].append(entry)
    cov = coverage(registry)
    lines = [
        "# Mapped torch APIs",
        "",
        "Generated from `mindport/mappings/data/*.toml` by `python -m mindport.mappings.coverage --write-docs`;",
        "a test fails when this page is stale. Status: **proven** = an example runs in both frameworks and matches",
        "(generated suite), **mapped** = converted but not proven, **unsupported** = the converter reports MP101 with",
        "the reason given. Targets under `mindport.runtime` are also proven compiled as a static graph (`ms.jit`, as",
        "under GRAPH_MODE), except those whose row says \"not in a static graph\".",
        "",
        "| table | proven | mapped | unsupported | missing |",
        "|---|---|---|---|---|",
    ]
    for table in ("r2.4", "master"):
        total = cov[table]["total"]
        lines.append(f"| official {table} | " + " | ".join(str(total.get(s, 0)) for s in STATUSES) + " |")
    entries = cov["all_entries"]
    lines.append(f"| all entries | {entries.get('proven', 0)} | {entries.get('mapped', 0)} | "
                 f"{entries.get('unsupported', 0)} | - |")
    for ns in sorted(groups):
        lines += ["", f"## {ns}", "", "| torch | MindSpore (nn) | mint | status | differences / reason |",
                  "|---|---|---|---|---|"]
        for entry in sorted(groups[ns], key=lambda e: e.torch):
            status = "unsupported" if not entry.supported else ("proven" if entry.example else "mapped")
            mint = entry.target("mint") or ""
            if mint and "CPU" in entry.runs.get("mint", ()):
                mint += " (CPU ✓)"
            diff = entry.reason or "; ".join(filter(None, [
                ", ".join(f"{a}→{b}" for a, b in entry.rename.items()),
                ("always writes " + ", ".join(entry.emit)) if entry.emit else "",
                ", ".join(entry.transforms), entry.notes, _known(entry),
                f"not in a static graph: {entry.graph}" if entry.graph else ""]))
            lines.append(f"| `{entry.torch}` | `{entry.target('nn') or '-'}` | {('`' + mint + '`') if mint else '-'} "
                         f"| {status} | {diff.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def _known(entry) -> str:
    """The input variants the differential sweep finds MindSpore differs on, as the entry documents them."""
    known = entry.example.sweep.get("known", {}) if entry.example else {}
    return ("known differences: " + "; ".join(f"{variant} input: {why}" for variant, why in known.items())) \
        if known else ""


DOCS_PATH = Path(__file__).resolve().parents[2] / "docs" / "mappings.md"

if __name__ == "__main__":
    import sys

    if "--write-docs" in sys.argv:
        DOCS_PATH.write_text(render_docs(), encoding="utf-8")
        print(f"wrote {DOCS_PATH}")
    else:
        import json

        print(json.dumps(coverage(), indent=2))
