"""A model whose first eval forward writes its own state (a data-aware initialisation drawing with numpy) is compared
from the state that forward left: each side initialising with its own draws is no difference of the port."""
from __future__ import annotations

from parity_helpers import MODELS, convert_model
from mindport.validators.parity.compare import validate


def test_a_model_initialised_by_its_first_forward_is_compared_from_the_state_it_left(tmp_path):
    ms_file = convert_model("datainit", tmp_path)
    report = validate(f"{MODELS}/datainit.py:ThresholdLayer", f"{ms_file}:ThresholdLayer", ctor="in_features=6, num_trees=5",
                      inputs=["16x6:float32"], graph_mode=False)
    assert report.settings.get("state_from_first_forward") is True
    assert report.ok, report.outputs
    assert report.outputs[0].max_abs < 1e-5
