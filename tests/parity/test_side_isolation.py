"""Each side in a process of its own: projects whose converted files keep the torch files' module names, packages
whose main module has the package's name, names re-exported by __init__, dotted references under --root."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from parity_helpers import cli_env, run_cli
from mindport.errors import InputError
from mindport.migrate import check_model_ref
from mindport.validators.parity.compare import validate
from mindport.validators.parity.loading import resolve_model_ref

PROJECTS = Path(__file__).parent / "projects"


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    from mindport.migrator.repo import convert_path

    out = tmp_path_factory.mktemp("isolation")
    for name in ("siblings", "pkgdir"):
        report = convert_path(PROJECTS / name, out / name)
        assert report.ok, [d.format() for d in report.diagnostics]
    return out


def test_sibling_modules_with_the_same_names_on_both_sides(converted, tmp_path):
    """net.py does `from attend import Attend` and attend.py imports net back; the converted files have the same
    names. Sharing sys.modules, the MindSpore net would get torch's attend: each side has its own process."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    res = run_cli("--torch", f"{PROJECTS}/siblings/net.py:Net", "--ms", f"{converted}/siblings/net.py:Net",
                  "--input", "2x5x8:float32", "--report", cwd / "r.json", cwd=cwd)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS" in res.stdout
    data = json.loads((cwd / "r.json").read_text())
    assert data["ok"] and data["graph"]["status"] == "ok"
    assert [lr["path"] for lr in data["layers"]] == ["kv", "q", "attend", "out", ""]
    # the logs went beside the report; nothing else was written into the working directory
    assert sorted(p.name for p in cwd.iterdir()) == ["mindport-logs", "r.json"]
    assert (cwd / "mindport-logs" / "mindspore.log").is_file() and (cwd / "mindport-logs" / "torch.log").is_file()


def test_package_dir_layout_and_reexported_name(converted):
    """xt/xt.py inside the package xt (absolute `from xt.blocks import` and relative imports), the model named by
    the file on the torch side and by the package's re-export on the MindSpore side."""
    report = validate(f"{PROJECTS}/pkgdir/xt/xt.py:Net", f"{converted}/pkgdir/xt:Net", inputs=["2x4x8:float32"],
                      ctor="depth=3", graph_mode=False)
    assert report.ok, report.to_json()
    assert [lr.path for lr in report.layers][:4] == ["blocks.0.norm", "blocks.0.fc", "blocks.0.act", "blocks.0"]


def test_dotted_references_under_roots_and_a_neutral_parent(converted):
    """The process that compares imports neither framework: only numpy arrays and plain data reach it."""
    script = ("import sys\n"
              "from mindport.validators.parity.compare import validate\n"
              f"r = validate('xt.xt:Net', 'xt:Net', root={str(PROJECTS / 'pkgdir')!r}, "
              f"ms_root={str(converted / 'pkgdir')!r}, inputs=['3x8:float32'], grad=True, localize=False)\n"
              "print(r.ok, r.grad.ok, r.outputs[0].ref_shape, 'torch' in sys.modules, 'mindspore' in sys.modules)\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=cli_env(), timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["True", "True", "[3,", "3]", "False", "False"]


def test_reference_forms_resolve_without_importing(converted):
    ref = resolve_model_ref(f"{PROJECTS}/pkgdir/xt/xt.py:Net")
    assert (ref.module, ref.search_path) == ("xt.xt", PROJECTS / "pkgdir")
    ref = resolve_model_ref(f"{PROJECTS}/pkgdir/xt:Net")
    assert ref.module == "xt" and ref.file == PROJECTS / "pkgdir" / "xt" / "__init__.py"
    ref = resolve_model_ref(f"{PROJECTS}/siblings/net.py:Net")
    assert (ref.module, ref.search_path) == ("", PROJECTS / "siblings")
    assert resolve_model_ref("xt.blocks:Block", root=PROJECTS / "pkgdir").file == PROJECTS / "pkgdir/xt/blocks.py"
    with pytest.raises(InputError, match="no module xt.nope under .*pass --root"):
        resolve_model_ref("xt.nope:Net", root=PROJECTS / "pkgdir")
    with pytest.raises(InputError, match="expected FILE.py:Name, package/module.py:Name"):
        resolve_model_ref("net.py")


def test_migrate_accepts_reexported_and_dotted_names():
    src = PROJECTS / "pkgdir"
    check_model_ref(src, "xt/__init__.py:Net")  # re-exported: `from xt.xt import Net`
    check_model_ref(src, "xt.xt:Net")
    check_model_ref(src, "xt:Net")
    with pytest.raises(InputError, match="has no 'Nope'; it defines: .*Net"):
        check_model_ref(src, "xt/__init__.py:Nope")
