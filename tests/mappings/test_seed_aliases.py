"""Issue 28: torch.random.manual_seed and torch.cuda.manual_seed(_all) were left unconverted (MP103); they are
aliases of the torch.manual_seed entry (mindport.runtime.seed.manual_seed: mindspore.set_seed, numpy's stream kept)."""
from __future__ import annotations

from mindport.migrator import convert_source

SOURCE = """import torch


def draw(seed):
    torch.random.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.cuda.manual_seed(seed)
    return torch.rand(3)
"""


def test_the_seed_functions_of_torch_random_and_torch_cuda_convert_and_seed_mindspore():
    result = convert_source(SOURCE, "seed.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert result.code.count("mp_seed.manual_seed(seed)") == 3 and "torch" not in result.code
    scope: dict = {}
    exec(compile(result.code, "seed.py", "exec"), scope)  # noqa: S102 - our own converted test program
    a, b, c = scope["draw"](7).asnumpy(), scope["draw"](7).asnumpy(), scope["draw"](8).asnumpy()
    assert (a == b).all() and not (a == c).all()
