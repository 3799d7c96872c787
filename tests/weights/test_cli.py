"""`mindport weights`: exit codes 0 / 1 / 2, summaries, --force, --emit-map, --allow-missing, no traceback."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from mindport.cli import main
from zoo import CASES, build_pair


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    t_model, _, m_path = build_pair(CASES["conv_bn_linear"], folder)
    src = folder / "model.pt"
    torch.save(t_model.state_dict(), src)
    partial = dict(t_model.state_dict())
    del partial["fc.bias"]
    torch.save(partial, folder / "partial.pt")
    return folder, src, f"{m_path}:Net", t_model


def run(*args):
    return CliRunner().invoke(main, ["weights", *map(str, args)])


def test_converts_checks_and_emits_map(files, tmp_path):
    import mindspore as ms

    _, src, model, t_model = files
    out, map_file = tmp_path / "m.ckpt", tmp_path / "map.json"
    result = run(src, "-o", out, "--model", model, "--emit-map", map_file)
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "1 dropped" in result.output
    params = ms.load_checkpoint(str(out))
    np.testing.assert_array_equal(params["features.1.moving_mean"].asnumpy(),
                                  t_model.state_dict()["features.1.running_mean"].numpy())
    assert json.loads(map_file.read_text())["map"]["features.1.running_var"] == "features.1.moving_variance"
    again = run(src, "-o", out, "--model", model)
    assert again.exit_code == 2 and "--force" in again.output
    assert run(src, "-o", out, "--model", model, "--force").exit_code == 0
    reused = run(src, "-o", tmp_path / "m2.safetensors", "--name-map", map_file)  # no --model: the emitted map
    assert reused.exit_code == 0, reused.output
    assert "features.1.gamma" in ms.load_checkpoint(str(tmp_path / "m2.safetensors"), format="safetensors")


def test_missing_keys_exit_1_and_allow_missing(files, tmp_path):
    folder, _, model, _ = files
    out = tmp_path / "p.safetensors"
    result = run(folder / "partial.pt", "-o", out, "--model", model)
    assert result.exit_code == 1 and "fc.bias" in result.output and not out.exists()
    result = run(folder / "partial.pt", "-o", out, "--model", model, "--allow-missing")
    assert result.exit_code == 0 and "1 missing" in result.output and out.exists()


def test_bad_input_exit_2_without_traceback(files, tmp_path):
    _, _, model, _ = files
    text = tmp_path / "x.pt"
    text.write_text("hello")
    for args in ([text, "-o", tmp_path / "o.ckpt", "--model", model],
                 [tmp_path / "none.pt", "-o", tmp_path / "o.ckpt"],
                 [files[1], "-o", tmp_path / "o.npz"]):
        result = run(*args)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output and "error:" in result.output
    assert not (tmp_path / "o.ckpt").exists()


def test_help_has_an_example():
    result = CliRunner().invoke(main, ["weights", "--help"])
    assert result.exit_code == 0 and "mindport weights net.pt -o net.ckpt --model" in result.output


def test_an_output_folder_that_does_not_exist_is_said_before_the_model_is_imported(files, tmp_path):
    """Issue 28: `weights -o missing_dir/x.ckpt --model ...` read the checkpoint and imported the model first."""
    _, src, _, _ = files
    marker = tmp_path / "imported"
    (tmp_path / "model.py").write_text(f"open({str(marker)!r}, 'w').close()\n\n\nclass Net:\n    pass\n")
    result = run(src, "-o", tmp_path / "missing_dir" / "x.ckpt", "--model", f"{tmp_path / 'model.py'}:Net")
    assert result.exit_code == 2 and "the folder" in result.output and "does not exist" in result.output
    assert not marker.exists()
