"""nn.init.calculate_gain with literal arguments is torch's number written in the port (no mindport.runtime.init
call, no mindport import: pytorch/examples' super_resolution imported mindport for three calculate_gain('relu')
alone); a nonlinearity given by a name at run time stays the runtime function. Values from real torch."""
from __future__ import annotations

import pytest

from mindport import convert_source

CALLS = ["nn.init.calculate_gain('relu')", "nn.init.calculate_gain('linear')", "nn.init.calculate_gain('conv2d')",
         "nn.init.calculate_gain('sigmoid')", "nn.init.calculate_gain('tanh')", "nn.init.calculate_gain('selu')",
         "nn.init.calculate_gain('leaky_relu')", "nn.init.calculate_gain('leaky_relu', 0.2)",
         "nn.init.calculate_gain('leaky_relu', None)", "init.calculate_gain(nonlinearity='leaky_relu', param=-1)",
         "init.calculate_gain(param=3, nonlinearity='leaky_relu')", "nn.init.calculate_gain('conv_transpose3d', 5)"]


@pytest.mark.parametrize("call", CALLS)
def test_literal_gain_is_torchs_number(call):
    source = f"import torch.nn as nn\nfrom torch.nn import init\n\ndef gain():\n    return {call}\n"
    code = convert_source(source, "gain.py").code
    assert "mindport" not in code and "calculate_gain" not in code, code
    torch_ns, ms_ns = {}, {}
    exec(compile(source, "torch_gain.py", "exec"), torch_ns)
    exec(compile(code, "ms_gain.py", "exec"), ms_ns)
    want, got = torch_ns["gain"](), ms_ns["gain"]()
    assert got == want and type(got) is type(want), (got, want, code)


def test_gain_by_name_at_run_time_stays_the_runtimes():
    source = ("import torch.nn as nn\n\ndef gains(names):\n    return [nn.init.calculate_gain(n) for n in names]\n\n"
              "def bad():\n    return nn.init.calculate_gain('leaky_relu', 'x')\n")
    code = convert_source(source, "gains.py").code
    assert code.count("mp_init.calculate_gain(") == 2, code
    torch_ns, ms_ns = {}, {}
    exec(compile(source, "torch_gains.py", "exec"), torch_ns)
    exec(compile(code, "ms_gains.py", "exec"), ms_ns)
    names = ("relu", "tanh", "selu", "leaky_relu", "conv1d")
    assert ms_ns["gains"](names) == torch_ns["gains"](names)
    for ns in (torch_ns, ms_ns):  # torch's error, at run time, for a slope that is not a number
        with pytest.raises(ValueError, match="not a valid number"):
            ns["bad"]()

