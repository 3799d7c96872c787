"""MindSpore layers that take only a batch where torch's take an unbatched input too: the one table read by
:mod:`mindport.runtime.unbatched` (which makes those classes take both, at run time) and by the converter (which
loads that module in a converted file that builds one of them without showing its input batched:
``native_facts.unbatched_handling``).

``BATCH_RANK``: the rank of a batch for each class (an unbatched input has one axis fewer). ``CELLS``: the recurrent
cells, whose ``hx`` MindSpore requires where torch defaults it to zeros (a call without it needs the handling
whatever the rank). ``BATCH_ONLY``: MindSpore classes whose torch layer refuses anything but a batch of that rank
(torch's BatchNorm2d/3d): a layer's input or output passed through one of them is a batch in every program torch
runs.

``FUNCTIONS``: MindSpore's functional ops (``mindspore.ops.NAME``) that take only a batch of that rank where torch's
function takes an unbatched input too (``F.max_pool2d`` of a (C, H, W) image: "MaxPoolWithArgmaxV2 ... rank must be
equal to 4, but got 3"). The mapping tables name ``mindport.runtime.unbatched.NAME`` for them: the same op, given the
batch axis for an input one axis short and returned without it (one rank comparison, a constant in GRAPH_MODE). The
ops of a pool MindSpore pools unbatched already (adaptive 2-D/3-D, lp_pool1d) or that mindport.runtime implements
(max_pool1d/3d, lp_pool3d) are not listed; tests/runtime/test_unbatched_functional.py enumerates them against torch,
and tests/mappings checks that no table entry names one of these ops directly.
"""
from __future__ import annotations

BATCH_RANK = {"Conv1d": 3, "Conv2d": 4, "Conv3d": 5, "Conv1dTranspose": 3, "Conv2dTranspose": 4,
              "Conv3dTranspose": 5, "LPPool2d": 4, "AdaptiveAvgPool1d": 3, "AdaptiveMaxPool1d": 3,
              "RNN": 3, "LSTM": 3, "GRU": 3, "RNNCell": 2, "GRUCell": 2, "LSTMCell": 2}
RECURRENT = ("RNN", "LSTM", "GRU")  # MindSpore's _RNNBase: they share one construct
CELLS = ("RNNCell", "GRUCell", "LSTMCell")
BATCH_ONLY = {"BatchNorm2d": 4, "BatchNorm3d": 5}
FUNCTIONS = {"max_pool2d": 4, "avg_pool1d": 3, "avg_pool2d": 4, "avg_pool3d": 5, "lp_pool2d": 4,
             "adaptive_avg_pool1d": 3, "adaptive_max_pool1d": 3}

# torch's class -> the MindSpore class BATCH_RANK names (a recorded run notes where each was built and the rank of each
# call's input: mindport.observed), and the rank of a batch / the cells, by torch's names
TORCH_CLASSES = {"Conv1d": "Conv1d", "Conv2d": "Conv2d", "Conv3d": "Conv3d", "ConvTranspose1d": "Conv1dTranspose",
                 "ConvTranspose2d": "Conv2dTranspose", "ConvTranspose3d": "Conv3dTranspose", "LPPool2d": "LPPool2d",
                 "AdaptiveAvgPool1d": "AdaptiveAvgPool1d", "AdaptiveMaxPool1d": "AdaptiveMaxPool1d", "RNN": "RNN",
                 "LSTM": "LSTM", "GRU": "GRU", "RNNCell": "RNNCell", "GRUCell": "GRUCell", "LSTMCell": "LSTMCell"}
TORCH_RANK = {torch: BATCH_RANK[ms] for torch, ms in TORCH_CLASSES.items()}
TORCH_CELLS = tuple(torch for torch, ms in TORCH_CLASSES.items() if ms in CELLS)
