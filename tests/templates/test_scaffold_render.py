"""Rendering without running: the emitted code parses, keeps the MindSpore idioms, and bad input is refused."""
from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest

from mindport.errors import InputError
from mindport.templates import ScaffoldExistsError, TEMPLATE_DIR, render_scripts
from mindport.templates.inputs import InputSpec, parse_input_spec, parse_input_specs

FIXTURES = Path(__file__).parent / "fixtures"


def render(tmp_path: Path, **kwargs) -> dict[str, str]:
    out = tmp_path / "proj"
    out.mkdir(exist_ok=True)
    shutil.copy(FIXTURES / "convnet.py", out / "convnet.py")
    kwargs.setdefault("ctor", "num_classes=10")
    paths = render_scripts(out, "convnet.py", "ConvNet", **kwargs)
    texts = {p.name: p.read_text() for p in paths}
    for name, text in texts.items():
        ast.parse(text, filename=name)  # valid Python whatever the options
    return texts


def functions_calling(source: str, needle: str) -> set[str]:
    """Names of the top-level functions whose body contains `needle`."""
    tree = ast.parse(source)
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and needle in ast.get_source_segment(source, node)
    }


def test_emits_three_files_with_training_and_eval_idioms(tmp_path):
    texts = render(tmp_path)
    assert set(texts) == {"train.py", "eval.py", "data_pipeline.py"}
    train, evaluate, data = texts["train.py"], texts["eval.py"], texts["data_pipeline.py"]
    assert "ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)" in train
    assert "optim.AdamW(net.trainable_params()" in train and "from mindspore.experimental import optim" in train
    assert "ms.set_seed(args.seed)" in train and "ms.save_checkpoint(net, path)" in train
    assert "ModelCheckpoint(prefix=args.ckpt_prefix, directory=args.ckpt_dir, config=config)" in train
    assert "callbacks=callbacks" in train and "LossMonitor(" in train and "TimeMonitor(" in train
    for flag in ("--steps", "--epochs", "--batch-size", "--lr", "--data", "--ckpt-dir", "--amp", "--api"):
        assert f'"{flag}"' in train
    assert "net.set_train(False)" in evaluate
    for metric in ("Accuracy(", "Precision(", "Recall(", "ConfusionMatrix(", "class ErrorRate(Metric)"):
        assert metric in evaluate
    for method in ("def clear(self)", "def update(self, *inputs)", "def eval(self)"):
        assert method in evaluate
    assert 'default=1, help="evaluation batch' in evaluate
    assert "drop_remainder=training" in data and "astype(np.int32)" in data
    assert "from convnet import ConvNet" in train  # the model sits next to the scripts
    assert "DEFAULT_BATCH_SIZE = 2" in train


def test_data_pipeline_uses_no_mindspore_ops(tmp_path):
    data = render(tmp_path)["data_pipeline.py"]
    imports = {
        alias.name
        for node in ast.walk(ast.parse(data))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    } | {node.module for node in ast.walk(ast.parse(data)) if isinstance(node, ast.ImportFrom)}
    assert not any(name and ("ops" in name or "nn" in name.split(".") or name == "mindspore") for name in imports)
    assert "ms.Tensor" not in data and "mindspore.ops" not in data
    assert "RandomHorizontalFlip" in data  # image-like input: numpy augmentation, training only
    assert "if training:" in data


def test_templates_never_use_adamweightdecay():
    for template in TEMPLATE_DIR.glob("*.j2"):
        assert "AdamWeightDecay(" not in template.read_text(), template.name


def model_calls(source: str) -> list[ast.Call]:
    return [
        node for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Model"
    ]


@pytest.mark.parametrize("optimizer", ["adamw", "adam", "sgd"])
def test_one_mixed_precision_mechanism_per_training_path(tmp_path, optimizer):
    train = render(tmp_path, optimizer=optimizer)["train.py"]
    # amp.auto_mixed_precision is called in one wrapper (which says MindSpore's O1 rewrite failure plainly)
    assert functions_calling(train, "amp.auto_mixed_precision(") == {"mixed_precision"}
    auto_users = functions_calling(train, "mixed_precision(") - {"mixed_precision"}
    (model_call,) = model_calls(train)
    model_kwargs = {kw.arg for kw in model_call.keywords}
    assert "train_functional" in auto_users
    if optimizer == "adamw":
        # Model rejects experimental optimizers: it gets a finished train step and never an amp_level.
        assert "amp_level" not in model_kwargs and ast.unparse(model_call) == "Model(train_net)"
        assert "train_with_model" in auto_users
    else:
        assert {"loss_fn", "optimizer", "amp_level"} <= model_kwargs
        assert "train_with_model" not in auto_users
        assert "experimental" not in train


def test_import_forms_for_model_outside_or_unimportable(tmp_path):
    elsewhere = tmp_path / "src"
    elsewhere.mkdir()
    shutil.copy(FIXTURES / "convnet.py", elsewhere / "my-model.py")
    shutil.copy(FIXTURES / "convnet.py", elsewhere / "convnet.py")
    out = tmp_path / "out"
    out.mkdir()
    paths = render_scripts(out, elsewhere / "convnet.py", "ConvNet")
    train = paths[0].read_text()
    # relative to the script's own folder: the project may be moved (issue 28)
    assert "sys.path.insert(0, os.path.normpath(os.path.join(HERE, os.pardir, 'src')))" in train
    assert "from convnet import ConvNet" in train and str(tmp_path) not in train
    paths = render_scripts(out, elsewhere / "my-model.py", "ConvNet", overwrite=True)
    train = paths[0].read_text()
    assert "importlib.util.spec_from_file_location" in train and "import importlib.util" in train
    ast.parse(train)


def test_multi_input_dataset_and_checkpoint_options(tmp_path):
    out = tmp_path / "proj"
    (out / "pkg").mkdir(parents=True)
    shutil.copy(FIXTURES / "twoinput.py", out / "pkg" / "twoinput.py")
    shutil.copy(FIXTURES / "blobs.py", out / "pkg" / "blobs.py")
    (out / "weights.ckpt").write_bytes(b"")
    paths = render_scripts(
        out, "pkg/twoinput.py", "TwoInputNet", input_spec=["4x1x8x8:float32", "4x5:float32"],
        checkpoint="weights.ckpt", dataset="pkg/blobs.py:Blobs", dataset_ctor="split",
    )
    train, evaluate, data = (p.read_text() for p in paths)
    assert "from pkg.twoinput import TwoInputNet" in train
    assert "def forward_fn(x0, x1, labels):" in train and "class NetWithLoss(nn.Cell):" in train
    assert "INITIAL_CHECKPOINT = os.path.join(HERE, 'weights.ckpt')" in evaluate
    assert "from pkg.blobs import Blobs" in data and "return Blobs(split)" in data
    assert "('x0', (1, 8, 8), 'float32', None)" in data and "('x1', (5,), 'float32', None)" in data


def test_refuses_bad_input(tmp_path):
    render(tmp_path)
    with pytest.raises(ScaffoldExistsError, match="train.py"):
        render(tmp_path)
    with pytest.raises(InputError, match="'Missing' not found"):
        render_scripts(tmp_path / "proj", "convnet.py", "Missing", overwrite=True)
    with pytest.raises(InputError, match="not found"):
        render_scripts(tmp_path / "proj", "nope.py", "ConvNet", overwrite=True)
    with pytest.raises(InputError, match="argument list"):
        render_scripts(tmp_path / "proj", "convnet.py", "ConvNet", ctor="num_classes=", overwrite=True)
    with pytest.raises(InputError, match="optimizer"):
        render_scripts(tmp_path / "proj", "convnet.py", "ConvNet", optimizer="lamb", overwrite=True)
    with pytest.raises(InputError, match="checkpoint not found"):
        render_scripts(tmp_path / "proj", "convnet.py", "ConvNet", checkpoint="x.ckpt", overwrite=True)


def test_input_spec_parser():
    assert parse_input_spec("2x3x32x32:float32") == InputSpec((2, 3, 32, 32), "float32")
    spec = parse_input_spec("8x128:int64")
    assert (spec.batch_size, spec.sample_shape, spec.is_float) == (8, (128,), False)
    assert parse_input_spec("4x10").dtype == "float32"
    ranged = parse_input_spec("2x16:int64:0:1000")  # the validators' syntax for a value range
    assert (ranged.value_range, str(ranged)) == ((0.0, 1000.0), "2x16:int64:0:1000")
    assert [s.sample_shape for s in parse_input_specs(["2x3x4:float32", "2x7:int32"])] == [(3, 4), (7,)]
    for bad in ("2x3:complex", "axb:float32", "16:float32", "2x0x3:float32", "2x3:int32:5:1", "2x3:int32:a:b"):
        with pytest.raises(InputError, match="bad input spec"):
            parse_input_spec(bad)
    with pytest.raises(InputError, match="batch dimension"):
        parse_input_specs(["2x3:float32", "4x3:float32"])


def test_distributed_adds_data_parallel_training_and_the_launch_script(tmp_path):
    """Only --distributed makes train.py join an msrun job; the 2-worker run is tests/distributed/."""
    plain = render_scripts(tmp_path / "plain", FIXTURES / "convnet.py", "ConvNet")
    assert [p.name for p in plain] == ["train.py", "eval.py", "data_pipeline.py"]
    assert "communication" not in (tmp_path / "plain" / "train.py").read_text()
    paths = render_scripts(tmp_path / "dp", FIXTURES / "convnet.py", "ConvNet", distributed=True)
    assert [p.name for p in paths] == ["train.py", "eval.py", "data_pipeline.py", "launch_train.sh"]
    train_py = (tmp_path / "dp" / "train.py").read_text()
    for piece in ("init()", "nn.DistributedGradReducer(", "num_shards=get_group_size(), shard_id=get_rank()",
                  "parallel_mode=ms.ParallelMode.DATA_PARALLEL"):
        assert piece in train_py
    compile(train_py, "train.py", "exec")
    assert "exec msrun" in paths[-1].read_text() and os.access(paths[-1], os.X_OK)
    with pytest.raises(ScaffoldExistsError, match="launch_train.sh"):
        (tmp_path / "dp" / "train.py").unlink()
        render_scripts(tmp_path / "dp", FIXTURES / "convnet.py", "ConvNet", distributed=True)
