"""`# noqa` handling and `[tool.mindport.lint]` configuration (in-process, through lint_paths)."""
from __future__ import annotations

import pytest

from mindport.validators.lint import UsageError, lint_paths, lint_source
from mindport.validators.lint.config import ConfigError, load_config

SRC = "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3){comment}\n"


def _codes(source: str) -> set[str]:
    return {f.code for f in lint_source(source)}


def test_noqa_specific_codes():
    assert _codes(SRC.format(comment="")) == {"MS201", "MS202"}
    assert _codes(SRC.format(comment="  # noqa: MS201")) == {"MS202"}
    assert _codes(SRC.format(comment="  # noqa: MS201, MS202")) == set()
    assert _codes(SRC.format(comment="  # NOQA:MS202")) == {"MS201"}
    assert _codes(SRC.format(comment="  # noqa: MS301")) == {"MS201", "MS202"}


def test_bare_noqa_and_strings():
    assert _codes(SRC.format(comment="  # noqa")) == set()
    assert _codes(SRC.format(comment="  # type: ignore  # noqa")) == set()
    # `# noqa` inside a string literal is not a comment
    assert _codes("from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, pad_mode='# noqa')\n") == {"MS202"}


def test_noqa_applies_to_its_line_only():
    src = "from mindspore import nn\na = nn.GELU()  # noqa: MS206\nb = nn.GELU()\n"
    assert [(f.code, f.line) for f in lint_source(src)] == [("MS206", 3)]


def _project(tmp_path, toml: str):
    (tmp_path / "pyproject.toml").write_text(toml)
    pkg = tmp_path / "pkg" / "sub"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "model.py").write_text(SRC.format(comment="") + "act = nn.GELU()\n")
    (tmp_path / "pkg" / "generated").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "generated" / "gen.py").write_text("from mindspore import nn\nact = nn.GELU()\n")
    return pkg / "model.py"


def test_config_found_by_walking_up(tmp_path):
    model = _project(tmp_path, '[tool.mindport.lint]\nselect = ["MS2"]\nignore = ["MS201"]\n'
                                'exclude = ["pkg/generated"]\n')
    cfg = load_config(model)
    assert cfg.select == ["MS2"] and cfg.ignore == ["MS201"] and cfg.root == tmp_path.resolve()
    result = lint_paths([tmp_path / "pkg"])
    assert {f.code for f in result.findings} == {"MS202", "MS206"}
    assert result.files == 1  # generated/ excluded
    # the command line overrides select and adds to ignore
    result = lint_paths([model], select=["MS206", "MS201"], ignore=["MS206"])
    assert {f.code for f in result.findings} == set()
    result = lint_paths([model], select="MS201")
    assert {f.code for f in result.findings} == set()  # still ignored by the config
    assert {f.code for f in lint_paths([model], select="MS201", use_config=False).findings} == {"MS201"}


def test_pyproject_without_section_is_skipped(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    inner = tmp_path / "inner"
    inner.mkdir()
    cfg = load_config(inner)
    assert cfg.source is None or "pyproject.toml" in cfg.source and cfg.root != inner


def test_bad_config_is_an_error(tmp_path):
    model = _project(tmp_path, '[tool.mindport.lint]\nselekt = ["MS2"]\n')
    with pytest.raises(ConfigError, match="selekt"):
        lint_paths([model])
    model = _project(tmp_path, '[tool.mindport.lint]\nselect = ["MS977"]\n')
    with pytest.raises(UsageError, match="MS977"):
        lint_paths([model])


def test_device_target_option_enables_ascend_rules(tmp_path):
    src = "from mindspore import nn\npool = nn.MaxPool2d(kernel_size=64, stride=64)\n"
    (tmp_path / "m.py").write_text(src)
    assert "MS105" not in {f.code for f in lint_paths([tmp_path / "m.py"]).findings}
    (tmp_path / "pyproject.toml").write_text('[tool.mindport.lint]\ndevice-target = "Ascend"\n')
    assert "MS105" in {f.code for f in lint_paths([tmp_path / "m.py"]).findings}


def test_lint_paths_fix_in_process(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from mindspore import nn\ndrop = nn.Dropout(keep_prob=0.8)\nsm = nn.Softmax(dim=-1)\n")
    result = lint_paths([f], fix=True)
    assert f.read_text() == "from mindspore import nn\ndrop = nn.Dropout(p=0.2)\nsm = nn.Softmax(axis=-1)\n"
    assert result.fixed == 2 and result.findings == [] and result.exit_code == 0
