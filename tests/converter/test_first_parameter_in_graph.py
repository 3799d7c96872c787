"""``next(self.parameters())`` in a model's methods compiles in GRAPH_MODE (batch 7: bottom-up-attention VQA's
QuestionEmbedding reads it for the initial state's type, ``weight.new(*shape).zero_()``). MindSpore 2.10 compiles no
generator there (``next(self.get_parameters())``, ``self.trainable_params()[0]``, ``list(self.get_parameters())[0]``
all fail), so it becomes ``self._mp_first_parameter``, a class attribute (``mindport.runtime.layers.FirstParameter``)
that the graph compiler resolves by Python's attribute lookup to the Cell's live first Parameter. Expected values are
torch's."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

# the VQA shape (a recurrent layer chosen by name, its first weight's type for the zero initial state), and the
# first parameter's dtype and value read in forward itself
QUESTION = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable


    class QuestionEmbedding(nn.Module):
        \"\"\"A question encoder.\"\"\"
        def __init__(self, in_dim, num_hid, nlayers, bidirect, rnn_type='GRU'):
            super().__init__()
            rnn_cls = nn.LSTM if rnn_type == 'LSTM' else nn.GRU
            self.rnn = rnn_cls(in_dim, num_hid, nlayers, bidirectional=bidirect, batch_first=True)
            self.num_hid = num_hid
            self.nlayers = nlayers
            self.rnn_type = rnn_type
            self.ndirections = 1 + int(bidirect)
            self.scale = nn.Parameter(torch.tensor(0.5))

        def init_hidden(self, batch):
            weight = next(self.parameters()).data
            hid_shape = (self.nlayers * self.ndirections, batch, self.num_hid)
            if self.rnn_type == 'LSTM':
                return (Variable(weight.new(*hid_shape).zero_()),
                        Variable(weight.new(*hid_shape).zero_()))
            return Variable(weight.new(*hid_shape).zero_())

        def forward(self, x):
            hidden = self.init_hidden(x.size(0))
            output, hidden = self.rnn(x, hidden)
            first = next(self.parameters())
            bias = torch.ones(output.size(0), 1, dtype=first.dtype) * first.sum()
            return output[:, -1] + bias


    class GruQuestion(QuestionEmbedding):
        def __init__(self):
            super().__init__(4, 6, 2, False, 'GRU')


    class LstmQuestion(QuestionEmbedding):
        def __init__(self):
            super().__init__(4, 6, 2, True, 'LSTM')
""")


def test_the_first_parameter_is_a_class_attribute():
    code = convert_source(QUESTION).code
    assert "_mp_first_parameter = mp_nn.FirstParameter()" in code
    assert "weight = self._mp_first_parameter.data" in code and "get_parameters" not in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls", ["GruQuestion", "LstmQuestion"])
def test_first_parameter_in_forward_matches(tmp_path, mode, cls):
    code = convert_source(QUESTION).code
    x = np.random.default_rng(1).standard_normal((3, 5, 4)).astype(np.float32)
    assert_port_matches_in_mode(QUESTION, code, cls, [x], tmp_path, f"first_{cls}", mode, atol=1e-5)
