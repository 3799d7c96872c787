"""TripletMarginWithDistanceLoss without a distance_function on inputs of more than 2 dims: torch's default is
pairwise_distance over the last dim; MindSpore 2.10's own default takes the norm over axis 1, a silent other
number (0.859 against 1.066 on (3, 5, 5) inputs), which mindport.runtime.losses replaces with torch's."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("shape", [(3, 5), (3, 5, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("swap", [False, True])
def test_default_distance_is_torchs(shape, swap):
    import mindspore as ms
    import torch

    from mindport.runtime.losses import TripletMarginWithDistanceLoss

    rng = np.random.default_rng(0)
    a, p, n = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    want = torch.nn.TripletMarginWithDistanceLoss(swap=swap)(*map(torch.from_numpy, (a, p, n))).item()
    got = TripletMarginWithDistanceLoss(swap=swap)(*map(ms.Tensor, (a, p, n))).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
