"""The zoo's converted models through the other validators: lint finds nothing (a finding would be a converter
gap or a rule bug), and the parity validator (`mindport.compare`, with per-layer localisation and graph mode)
reports parity for every model."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from zoo_harness import build_pair, convert_model, load_manifest  # noqa: E402

from mindport.validators.lint import lint_paths  # noqa: E402
from mindport.validators.loading import make_inputs, parse_input_spec  # noqa: E402

ZOO = load_manifest()


def test_converted_zoo_is_lint_clean(tmp_path):
    for model in ZOO:
        convert_model(model, tmp_path)
    result = lint_paths([tmp_path], use_config=False)
    assert result.files == len(ZOO)
    assert not result.errors and not result.findings, [f"{f}" for f in result.findings]


@pytest.mark.parametrize("model", ZOO, ids=[m.name for m in ZOO])
def test_parity_validator_passes_on_the_zoo(tmp_path, model):
    from mindport import compare

    converted, _ = convert_model(model, tmp_path)
    tmodel, msmodel, _ = build_pair(model, converted)
    arrays = make_inputs([parse_input_spec(s) for s in model.inputs], seed=3)
    report = compare(tmodel, msmodel, arrays, rtol=model.tolerance, atol=1e-5, transfer=False)
    assert report.ok, (report.first_divergent, [(o.key, o.max_abs) for o in report.outputs], report.config_findings)
    assert report.layers and all(np.isfinite(o.max_abs) for o in report.outputs)
