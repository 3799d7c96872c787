"""The discovery tests' shared step: write a small repository, convert it, and prove its models as `migrate` does."""
from __future__ import annotations

import textwrap


def prove_files(tmp_path, files, pattern, edit=None):
    """{class name: result} for the models matching ``pattern`` in ``files`` ({relative path: source}). ``edit``:
    (relative path, old, new), a change made to the port after conversion (a wrong port written on purpose)."""
    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    convert_path(src, out, jobs=1, force=True)
    if edit is not None:
        rel, before, after = edit
        text = (out / rel).read_text(encoding="utf-8")
        assert before in text, text
        (out / rel).write_text(text.replace(before, after), encoding="utf-8")
    models, _ = prove_models(src, out, pattern=pattern, cache=False, settings=ProveSettings(stub_missing=True))
    return {m["class"]: m for m in models}
