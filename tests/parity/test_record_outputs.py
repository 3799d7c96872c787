"""A ``@dataclass`` record in the torch model's output and the dict of its fields the port returns (the converter's
RecordDictTransform writes such records as dicts: a graph compiles no such object) are one structure for the
validator; any other difference between them stays one."""
import dataclasses

import mindspore as ms
import numpy as np
import torch

from mindport.validators.parity.metrics import compare_structures


@dataclasses.dataclass
class Extra:
    score: object
    inner: object


@dataclasses.dataclass
class Inner:
    value: object


def _ref():
    return {"logits": torch.ones(2, 3), "extra": Extra(torch.tensor(2.0), Inner(torch.arange(3.0)))}


def test_a_record_written_as_a_dict_of_its_fields_is_the_same_structure():
    port = {"logits": ms.Tensor(np.ones((2, 3), np.float32)),
            "extra": {"score": ms.Tensor(2.0), "inner": {"value": ms.Tensor(np.arange(3.0, dtype=np.float32))}}}
    results, structure = compare_structures(_ref(), port, 1e-5, 1e-6)
    assert structure["ok"], structure
    assert sorted(r.key for r in results) == ["output['extra'].inner.value", "output['extra'].score",
                                              "output['logits']"]
    assert all(r.allclose for r in results)


def test_a_dict_with_other_keys_or_values_still_differs():
    port = {"logits": ms.Tensor(np.ones((2, 3), np.float32)),
            "extra": {"score": ms.Tensor(2.0), "other": {"value": ms.Tensor(np.arange(3.0, dtype=np.float32))}}}
    _, structure = compare_structures(_ref(), port, 1e-5, 1e-6)
    assert not structure["ok"]
    port["extra"] = {"score": ms.Tensor(5.0), "inner": {"value": ms.Tensor(np.arange(3.0, dtype=np.float32))}}
    results, structure = compare_structures(_ref(), port, 1e-5, 1e-6)
    assert structure["ok"] and not all(r.allclose for r in results)
    # a list where the reference holds a record is another structure
    port["extra"] = [ms.Tensor(2.0), ms.Tensor(np.arange(3.0, dtype=np.float32))]
    _, structure = compare_structures(_ref(), port, 1e-5, 1e-6)
    assert not structure["ok"]
