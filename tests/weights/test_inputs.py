"""Bad input, strictness, name maps, wrappers and atomic output: one clear error each, no partial file."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from mindport.errors import InputError, MigrationError
from mindport.migrator.weights import (
    convert_checkpoint, load_state_dict, read_name_map, save_weights, transfer_weights,
)
from zoo import CASES, assert_close, build_pair, make_inputs, run_ms, run_torch


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return build_pair(CASES["conv_bn_linear"], tmp_path_factory.mktemp("pair"))


def test_truncated_torch_file(tmp_path, pair):
    path = tmp_path / "m.pt"
    torch.save(pair[0].state_dict(), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="truncated or corrupt torch checkpoint"):
        load_state_dict(path)


def test_corrupt_zip(tmp_path):
    path = tmp_path / "m.pth"
    path.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 8)
    with pytest.raises(InputError, match="truncated or corrupt"):
        load_state_dict(path)


def test_truncated_safetensors(tmp_path):
    path = tmp_path / "m.safetensors"
    save_weights({"w": np.ones((64, 64), np.float32)}, path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(InputError, match="truncated safetensors"):
        load_state_dict(path)


class Evil:
    """Unpickling this would create a marker file: proof that nothing beyond tensors is unpickled."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return open, (self.marker, "w")


def test_pickled_objects_refused_without_executing(tmp_path, pair):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    torch.save({"w": torch.ones(2), "x": Evil(str(marker))}, path)
    with pytest.raises(InputError, match=r"model\.state_dict\(\)"):
        load_state_dict(path)
    assert not marker.exists()
    whole = tmp_path / "whole.pt"
    torch.save(pair[0], whole)
    with pytest.raises(InputError, match="never unpickles"):
        load_state_dict(whole)


def test_wrong_format(tmp_path):
    path = tmp_path / "notes.pt"
    path.write_text("these are not weights\n")
    with pytest.raises(InputError, match="not a torch checkpoint"):
        load_state_dict(path)
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        load_state_dict(tmp_path / "empty.pt")
    with pytest.raises(InputError, match="does not exist"):
        load_state_dict(tmp_path / "nope.pt")


def test_wrappers_and_dataparallel_prefix(tmp_path, pair):
    t_model, new_ms, _ = pair
    wrapped = {"epoch": 3, "state_dict": {f"module.{k}": v for k, v in t_model.state_dict().items()},
               "optimizer": {"lr": 0.1}}
    path = tmp_path / "wrapped.pt"
    torch.save(wrapped, path)
    cell = new_ms()
    report = transfer_weights(path, cell)
    assert report.ok
    assert any("unwrapped state_dict" in d.message for d in report.notices)
    assert any("prefixes" in d.message for d in report.notices)
    inputs = make_inputs(CASES["conv_bn_linear"])
    assert_close(run_ms(cell, inputs), run_torch(t_model, inputs))


def test_shape_mismatch(pair):
    t_model, new_ms, _ = pair
    state = dict(t_model.state_dict())
    state["fc.weight"] = torch.randn(5, 100)
    with pytest.raises(MigrationError) as info:
        transfer_weights(state, new_ms())
    assert "MP302" in str(info.value) and "fc.weight: shape (5, 100) does not fit fc.weight (5, 288)" in str(info.value)


def test_missing_and_unexpected_keys_name_closest_candidates(pair):
    t_model, new_ms, _ = pair
    state = dict(t_model.state_dict())
    state["fc.wieght"] = state.pop("fc.weight")
    del state["features.1.running_mean"]
    with pytest.raises(MigrationError) as info:
        transfer_weights(state, new_ms())
    text = str(info.value)
    assert "torch key fc.wieght (5, 288) matches no MindSpore parameter" in text
    assert "closest MindSpore parameters: fc.weight (5, 288)" in text
    assert "MindSpore parameter features.1.moving_mean (8,) got no torch value" in text


def test_allow_missing_reports_and_fills_the_rest(pair):
    t_model, new_ms, _ = pair
    state = dict(t_model.state_dict())
    del state["fc.bias"]
    cell = new_ms()
    report = transfer_weights(state, cell, strict=False)
    assert not report.ok and report.missing == ["fc.bias"]
    np.testing.assert_array_equal(cell.fc.weight.asnumpy(), state["fc.weight"].numpy())


def test_user_name_map_for_a_restructured_model(tmp_path, pair):
    t_model, _, m_path = pair
    from mindport.validators.parity.loading import build_model

    renamed = tmp_path / "ms_renamed.py"
    renamed.write_text(m_path.read_text().replace("self.fc", "self.classifier"))
    cell = build_model(f"{renamed}:Net")
    cell.set_train(False)
    with pytest.raises(MigrationError, match="closest MindSpore parameters: classifier.weight"):
        transfer_weights(t_model.state_dict(), cell)
    map_file = tmp_path / "map.toml"
    map_file.write_text('"fc." = "classifier."\n')
    report = transfer_weights(t_model.state_dict(), cell, name_map=read_name_map(map_file))
    assert report.mapping["fc.weight"] == "classifier.weight"
    inputs = make_inputs(CASES["conv_bn_linear"])
    assert_close(run_ms(cell, inputs), run_torch(t_model, inputs))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        read_name_map(bad)


@pytest.mark.parametrize("fmt", ["ckpt", "safetensors"])
def test_no_partial_output_on_failure(tmp_path, fmt):
    out = tmp_path / f"out.{fmt}"
    with pytest.raises(InputError, match="complex64"):
        save_weights({"a": np.ones((1000, 100), np.float32), "b": np.ones(3, np.complex64)}, out)
    assert list(tmp_path.iterdir()) == []
    save_weights({"a": np.ones(3, np.float32)}, out)
    with pytest.raises(InputError, match="exists"):
        save_weights({"a": np.ones(3, np.float32)}, out, overwrite=False)
    with pytest.raises(InputError, match=r"\.ckpt or \.safetensors"):
        save_weights({"a": np.ones(3, np.float32)}, tmp_path / "out.bin")


def test_convert_checkpoint_streams_with_renames_and_dtypes(tmp_path):
    import mindspore as ms
    from safetensors.torch import save_file

    state = {"enc.w": torch.randn(4, 3), "enc.h": torch.randn(5).to(torch.bfloat16),
             "enc.i": torch.arange(6), "skip": torch.ones(1), "s": torch.tensor(2.5, dtype=torch.float64)}
    src = tmp_path / "src.safetensors"
    save_file(state, str(src))
    for fmt in ("ckpt", "safetensors"):
        plan = convert_checkpoint(src, tmp_path / f"o.{fmt}", {"enc.": "backbone.", "skip": ""})
        assert plan.dropped == ["skip"]
        loaded = ms.load_checkpoint(str(tmp_path / f"o.{fmt}"), format=fmt)
        assert sorted(loaded) == ["backbone.h", "backbone.i", "backbone.w", "s"]
        np.testing.assert_array_equal(loaded["backbone.w"].asnumpy(), state["enc.w"].numpy())
        assert loaded["backbone.h"].dtype == ms.bfloat16 and loaded["s"].dtype == ms.float64
        np.testing.assert_array_equal(loaded["backbone.h"].float().asnumpy(), state["enc.h"].float().numpy())
        np.testing.assert_array_equal(loaded["backbone.i"].asnumpy(), np.arange(6))


def test_emitted_map_is_json_and_reusable(tmp_path, pair):
    from mindport.migrator.weights import WeightMap, plan_transfer

    t_model, new_ms, _ = pair
    plan, _ = plan_transfer(t_model.state_dict(), new_ms())
    data = json.loads(json.dumps(plan.to_json()))
    again = WeightMap.from_json(data)
    assert [i.name for i in again.items] == [i.name for i in plan.items]
    assert data["map"]["features.1.weight"] == "features.1.gamma"


def test_a_model_whose_own_child_is_named_module(tmp_path):
    """deepspeech's ``SequenceWise(module)`` holds its layer as ``self.module``: every key starts with ``module.``
    and is no DataParallel's. The prefix comes off only when every key has it, and goes back on when the model's own
    names start with it (the MindSpore side: ``module.anchor`` was left unfilled). A ``module`` child beside others
    keeps its keys; a DataParallel checkpoint still loads into the bare model."""
    import mindspore as ms
    from mindspore import nn as msnn

    from mindport.migrator.weights.loading import for_model

    class SequenceWise(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.module = torch.nn.Linear(3, 4)

        def forward(self, x):
            return self.module(x.view(-1, 3)).view(x.shape[0], x.shape[1], -1)

    class MsSequenceWise(msnn.Cell):
        def __init__(self):
            super().__init__()
            self.module = msnn.Dense(3, 4)

        def construct(self, x):
            return self.module(x.view(-1, 3)).view(x.shape[0], x.shape[1], -1)

    torch.manual_seed(0)
    t_model = SequenceWise()
    path = tmp_path / "seqwise.pt"
    torch.save(t_model.state_dict(), path)
    cell = MsSequenceWise()
    report = transfer_weights(path, cell)
    assert report.ok, report.errors
    assert not any("prefixes" in d.message for d in report.notices)
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(cell(ms.Tensor(x)).asnumpy(), t_model(torch.tensor(x)).detach().numpy(), rtol=1e-6)

    # the torch side of a parity run loads the same file into the torch model
    assert sorted(for_model(load_state_dict(path), t_model.state_dict().keys())) == ["module.bias", "module.weight"]

    # a DataParallel checkpoint of it: 'module.module.*', one wrapper prefix off
    wrapped = tmp_path / "wrapped.pt"
    torch.save(torch.nn.DataParallel(t_model).state_dict(), wrapped)
    assert sorted(load_state_dict(wrapped)) == ["module.bias", "module.weight"]
    assert transfer_weights(wrapped, MsSequenceWise()).ok

    # a child named module beside others: nothing stripped
    mixed = {"module.weight": np.ones((2, 2), np.float32), "head.weight": np.ones((2, 2), np.float32)}
    assert sorted(load_state_dict(mixed)) == ["head.weight", "module.weight"]
