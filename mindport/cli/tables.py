"""`mindport mappings`: the mapping tables (list, show, prove, coverage, export-msprobe)."""
from __future__ import annotations

import sys

import click

from mindport.cli.app import (
    EXIT_FINDINGS,
    EXIT_OK,
    _console,
    _fail_input,
    _require_full,
    main,
)


@main.group(context_settings={"max_content_width": 100})
def mappings() -> None:
    """Inspect the mapping tables (the data behind convert, weights and the parity proofs).

    \b
    Examples:
      mindport mappings list --status unsupported
      mindport mappings show torch.nn.Conv2d
      mindport mappings coverage
      mindport mappings prove my_maps.toml

    coverage compares with the official r2.4 and master tables. Your own tables (the same schema,
    docs/mappings-schema.md) extend or override the bundled ones without editing the installed package:
    `mindport convert --mappings my_maps.toml`, or `[mappings] extra = ["my_maps.toml"]` in mindport.toml;
    `mappings prove` proves their entries.
    """


@mappings.command("list")
@click.option("--status", type=click.Choice(["proven", "mapped", "unsupported"]), default=None)
@click.option("--namespace", default=None, metavar="PREFIX", help="Only torch names starting with this.")
def mappings_list(status, namespace):
    """One line per torch API: name, MindSpore target, status."""
    from mindport.mappings import load_registry

    for entry in sorted({id(e): e for e in load_registry()}.values(), key=lambda e: e.torch):
        state = "unsupported" if not entry.supported else ("proven" if entry.example else "mapped")
        if (status and state != status) or (namespace and not entry.torch.startswith(namespace)):
            continue
        click.echo(f"{entry.torch:50} {entry.target('nn') or '-':45} {state}")


@mappings.command("show")
@click.argument("name")
def mappings_show(name):
    """Everything one entry says (NAME: the torch API, e.g. torch.nn.Conv2d)."""
    from mindport.mappings import load_registry

    entry = load_registry().lookup(name)
    if entry is None:
        _fail_input(f"no mapping entry for {name}; try `mindport mappings list --namespace {name.rsplit('.', 1)[0]}`")
    rows = {
        "torch": entry.torch, "kind": entry.kind, "nn target": entry.target("nn"), "mint target": entry.target("mint"),
        "signature": "(" + ", ".join(p.name + (f"={p.default}" if p.default else "") for p in entry.signature or ()) + ")",
        "renames": entry.rename, "value transforms": entry.values, "always written": list(entry.emit),
        "dropped": list(entry.drop), "unsupported arguments": entry.unsupported, "call transforms": list(entry.transforms),
        "weights": entry.weights, "weight transforms": entry.weight_transforms,
        "runs": {k: list(v) for k, v in entry.runs.items()}, "reason": entry.reason, "notes": entry.notes,
        "example": entry.example and {"args": entry.example.args, "inputs": entry.example.inputs},
        "defined in": entry.source,
    }
    for key, value in rows.items():
        if value not in (None, "", {}, [], "()"):
            click.echo(f"{key:22} {value}")


@mappings.command("prove")
@click.argument("tables", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="FILE.toml...")
def mappings_prove(tables):
    """Prove the entries of your own mapping tables, as the bundled ones are proven.

    \b
    Example:
      mindport mappings prove my_maps.toml

    Each entry's example is written as a torch snippet in every call style it allows, converted by the real
    converter with your tables on top of the bundled ones, run in torch and in MindSpore on the same inputs,
    and compared (values, shapes, dtypes; the entry's rtol/atol). The schema, examples included, is in
    docs/mappings-schema.md. Then use the tables with `mindport convert --mappings FILE.toml` or
    `[mappings] extra` in mindport.toml. Runs the snippets generated from your examples (not your project).
    Exit: 0 every supported entry proven, 1 a proof failed or an entry has no example, 2 a table does not load.
    """
    _require_full("mappings prove")
    from mindport.mappings import MappingError, overlay_entries, overlays

    console = _console()
    try:
        entries = {id(e): e for table in tables for e in overlay_entries(table)}
        with overlays(tables):
            proven, failures = _prove_entries(list(entries.values()), console)
    except MappingError as exc:
        _fail_input(exc)
    console.print(f"{proven} proof(s) passed, {failures} failed or missing, in {len(tables)} table(s)")
    sys.exit(EXIT_FINDINGS if failures else EXIT_OK)


def _prove_entries(entries, console) -> tuple[int, int]:
    """(proofs passed, proofs failed or entries not provable), one line each."""
    from rich.markup import escape

    from mindport.proofs.function import applicable_styles, prove

    failures = proven = 0
    for entry in entries:
        if not entry.supported:
            console.print(f"{entry.torch}: unsupported ({entry.reason}): nothing to prove", markup=False)
            continue
        if entry.example is None or entry.example.proof:
            why = "no example" if entry.example is None else \
                f"its proof {entry.example.proof!r} runs only in mindport's own test suite"
            console.print(f"[yellow]NOT PROVEN[/] {escape(entry.torch)}: {escape(why)}", markup=True)
            failures += 1
            continue
        profiles = ["nn"] + (["mint"] if "CPU" in entry.runs.get("mint", ()) else [])
        for profile in (p for p in profiles if entry.target(p)):
            for style in applicable_styles(entry):
                case = escape(f"{entry.torch} [{profile}-{style}]")
                try:
                    result = prove(entry, style, profile=profile)
                except Exception as exc:  # noqa: BLE001 - a failing proof is a finding, with its message
                    failures += 1
                    console.print(f"[red]FAIL[/] {case}", markup=True)
                    console.print("  " + "\n  ".join(str(exc).strip().splitlines()[:12]), markup=False)
                    continue
                proven += 1
                console.print(f"[green]PASS[/] {case}: max abs {result.max_abs:.3g}", markup=True)
    return proven, failures


@mappings.command("coverage")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def mappings_coverage(fmt):
    """Coverage against the official tables, by namespace and status (proven/mapped/unsupported/missing), and of
    torch's object surface (the members of every mapped layer class, enumerated from the installed torch)."""
    import json

    from mindport.mappings.coverage import STATUSES, coverage
    from mindport.validators.parity.report import wrapping_table

    result = coverage()
    result["object_surface"] = _surface_counts()
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
        return
    console = _console()
    for table_name, title in (("r2.4", "official r2.4 table (nn profile)"), ("master", "official master table")):
        table = wrapping_table(title=title)
        table.add_column("namespace")
        for status in STATUSES:
            table.add_column(status, justify="right")
        data = result[table_name]
        for ns, counts in data["by_namespace"].items():
            table.add_row(ns, *(str(counts.get(s, 0)) for s in STATUSES))
        total = data["total"]
        table.add_row("[bold]total[/]", *(f"[bold]{total.get(s, 0)}[/]" for s in STATUSES))
        console.print(table)
        rows = sum(total.values())
        console.print(f"{table_name}: {total.get('proven', 0)}/{rows} proven "
                      f"({100 * total.get('proven', 0) / rows:.1f} %), {total.get('unsupported', 0)} unsupported "
                      f"with a reason, {total.get('missing', 0)} missing")
        supported = total.get("proven", 0) + total.get("mapped", 0)
        if supported:
            unproven = data["supported_not_proven"]
            console.print(f"{table_name}: rows with a supported entry: {total.get('proven', 0)}/{supported} proven "
                          f"({100 * total.get('proven', 0) / supported:.1f} %)"
                          + (f"; not proven: {', '.join(unproven)}" if unproven else ""))
    console.print(f"mint profile (master rows): {result['mint_profile']}")
    console.print(f"all entries: {result['all_entries']}")
    surface = result["object_surface"]
    if surface is None:
        console.print("object surface: not counted (torch is not installed: its members are enumerated from it)")
    else:
        console.print(f"object surface: {surface['members']} members, {surface['proven']} proven, "
                      f"{surface['converted']} converted-unproven, "
                      f"{surface['flagged']} flagged, {surface['unsupported']} unsupported, "
                      f"{surface['unaccounted']} unaccounted")
    from mindport.mappings.surface import load_writes

    ends = [end for table in load_writes().values() for end, _ in table.values()]
    console.print(f"layer settings written after construction: {len(ends)} settings, {ends.count('same')} same, "
                  f"{ends.count('converted')} converted, {ends.count('flagged')} flagged (layer_writes.toml)")


def _surface_counts() -> dict | None:
    """torch's object surface (mindport/mappings/data/surface/): the members of every mapped layer class enumerated
    from the installed torch, and the Module/Parameter/Tensor members, by how each ends."""
    try:
        import torch  # noqa: F401 - the members are enumerated from it
    except ImportError:
        return None
    from mindport.proofs.surface import counts

    return counts()


@mappings.command("export-msprobe")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder for the YAML files.")
@click.option("--model", default=None, metavar="REF",
              help="The converted MindSpore model (FILE.py:Name, ...): adds its cell, data and layer mappings.")
@click.option("--ctor", default="", metavar="ARGS", help="Its constructor arguments as Python source.")
@click.option("--root", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder a dotted --model reference is found under (default: here).")
@click.option("--target", type=click.Choice(["nn", "mint"]), default="nn", show_default=True,
              help="Target profile whose API names api_mapping.yaml pairs.")
def mappings_export_msprobe(out_dir, model, ctor, root, target):
    """Write the mapping YAML files msprobe's PyTorch <-> MindSpore compare needs (msprobe otherwise needs them
    written by hand).

    \b
    Files: api_mapping.yaml (-am), and with --model: cell_mapping.yaml (-cm), data_mapping.yaml (-dm),
    layer_mapping.yaml (-lm). Example:
      mindport mappings export-msprobe -o msprobe_maps --model out/model.py:Net --ctor "num_classes=10"
      msprobe -f mindspore compare -i compare.json -o result -cm msprobe_maps/cell_mapping.yaml
    """
    from mindport.errors import InputError
    from mindport.validators.parity.msprobe import export_msprobe

    try:
        written = export_msprobe(out_dir, model=model, ctor=ctor, root=root, profile=target)
    except InputError as exc:
        _fail_input(exc)
    for name, count in written.items():
        click.echo(f"wrote {out_dir}/{name} ({count} entries)")
