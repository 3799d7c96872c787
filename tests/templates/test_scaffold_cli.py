"""`mindport scaffold`: writes the scripts, refuses to overwrite without --force, exit 2 on bad input."""
from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from mindport.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def model_file(tmp_path: Path) -> Path:
    target = tmp_path / "convnet.py"
    shutil.copy(FIXTURES / "convnet.py", target)
    return target


def test_scaffold_happy_path_and_force(tmp_path):
    model = model_file(tmp_path)
    out = tmp_path / "out"
    args = ["scaffold", "--model", f"{model}:ConvNet", "--ctor", "num_classes=10", "--input", "4x3x32x32:float32",
            "-o", str(out), "--api", "model", "--optimizer", "sgd", "--num-classes", "10"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    for name in ("train.py", "eval.py", "data_pipeline.py"):
        assert (out / name).is_file() and f"wrote {out / name}" in result.output
    train = (out / "train.py").read_text()
    assert "DEFAULT_BATCH_SIZE = 4" in train and "NUM_CLASSES = 10" in train
    assert 'default=\'model\'' in train and "nn.SGD(" in train
    # the model lives outside the output folder: the script puts its folder on sys.path, relative to itself
    assert "sys.path.insert(0, os.path.normpath(os.path.join(HERE, os.pardir)))" in train and str(tmp_path) not in train

    again = CliRunner().invoke(main, args)
    assert again.exit_code == 2
    assert "refusing to overwrite" in again.output and "train.py" in again.output and "Traceback" not in again.output
    (out / "eval.py").write_text("# edited by hand\n")
    forced = CliRunner().invoke(main, [*args, "--force"])
    assert forced.exit_code == 0 and "net.set_train(False)" in (out / "eval.py").read_text()


def test_scaffold_missing_class_or_file_or_bad_spec_exit_2(tmp_path):
    model = model_file(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["scaffold", "--model", f"{model}:ResNet50", "-o", str(out)])
    assert result.exit_code == 2
    assert "'ResNet50' not found" in result.output and "ConvNet" in result.output  # names the class, suggests
    assert not out.exists()
    result = CliRunner().invoke(main, ["scaffold", "--model", f"{tmp_path / 'none.py'}:Net", "-o", str(out)])
    assert result.exit_code == 2 and "model file not found" in result.output
    result = CliRunner().invoke(main, ["scaffold", "--model", f"{model}:ConvNet", "--input", "2x3:cplx", "-o", str(out)])
    assert result.exit_code == 2 and "bad input spec" in result.output
    result = CliRunner().invoke(main, ["scaffold", "--model", str(model), "-o", str(out)])
    assert result.exit_code == 2 and "FILE.py:Name" in result.output


def test_scaffold_help_teaches_with_an_example():
    result = CliRunner().invoke(main, ["scaffold", "--help"])
    assert result.exit_code == 0
    assert "mindport scaffold --model converted/model.py:Net" in result.output
    assert "--force" in result.output
