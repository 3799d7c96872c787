"""mindport.runtime.layers.embedding_from_pretrained (torch.nn.Embedding.from_pretrained): the table as given, rows
looked up like torch, frozen unless freeze=False, from a tensor, an array or a list."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("kind", ["tensor", "array", "list"])
@pytest.mark.parametrize("freeze", [True, False])
def test_table_lookup_and_freezing_match_torch(kind, freeze):
    import mindspore as ms
    import torch

    from mindport.runtime.layers import embedding_from_pretrained

    table = np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32)
    given = {"tensor": ms.Tensor(table), "array": table, "list": table.tolist()}[kind]
    cell = embedding_from_pretrained(given, freeze=freeze)
    reference = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=freeze)
    ids = np.array([[0, 5, 2], [3, 3, 1]], dtype=np.int64)
    np.testing.assert_allclose(cell(ms.Tensor(ids)).asnumpy(), reference(torch.tensor(ids)).detach().numpy(),
                               rtol=1e-6)
    assert [p.requires_grad for p in cell.get_parameters()] == [p.requires_grad for p in reference.parameters()]
    assert len(cell.trainable_params()) == (0 if freeze else 1)


def test_max_norm_is_refused():
    from mindport.runtime.layers import embedding_from_pretrained

    with pytest.raises(ValueError, match="max_norm"):
        embedding_from_pretrained(np.ones((2, 3), np.float32), max_norm=1.0)
