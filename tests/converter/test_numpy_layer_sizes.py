"""Layer sizes that are numpy integers (disentangling-vae's ``nn.Linear(np.product(self.reshape), hidden_dim)``):
torch's layers take a numpy integer where they take an int; MindSpore's refuse it ("For 'Dense', the 'in_channels'
must be int, but got 'int64'"). An int-only size given a numpy value (a numpy call, its arithmetic, or a local bound
to one) is written ``int(...)``; other arguments and plain ints are left as they are."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn


    class Encoder(nn.Module):
        def __init__(self, img_size=(1, 4, 4), hidden=(4, 2, 2)):
            super().__init__()
            self.reshape = hidden
            latent = np.prod(hidden) // 2
            self.conv = nn.Conv2d(img_size[0], np.int64(hidden[0]), kernel_size=3, padding=1, stride=2)
            self.lin1 = nn.Linear(np.product(self.reshape), 8)
            self.lin2 = nn.Linear(8, latent)

        def forward(self, x):
            h = self.conv(x).reshape(x.size(0), -1)
            return self.lin2(torch.relu(self.lin1(h)))
""")


def test_numpy_integer_sizes_convert_and_match(tmp_path):
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    assert "in_channels=int(np.product(self.reshape))" in code, code
    assert "out_channels=int(latent)" in code and "out_channels=int(np.int64(hidden[0]))" in code, code
    assert "int(img_size[0])" not in code and "in_channels=8" in code, code  # not numpy: as written
    torch_net = load_module(SOURCE, tmp_path / "t_np_sizes.py", "t_np_sizes").Encoder().eval()
    ms_net = load_module(code, tmp_path / "m_np_sizes.py", "m_np_sizes").Encoder()
    ms_net.set_train(False)
    torch_params = dict(torch_net.named_parameters())
    names = {"conv.weight": "conv.weight", "conv.bias": "conv.bias", "lin1.weight": "lin1.weight",
             "lin1.bias": "lin1.bias", "lin2.weight": "lin2.weight", "lin2.bias": "lin2.bias"}
    ms_params = {p.name: p for p in ms_net.get_parameters()}
    for t_name, m_name in names.items():
        ms_params[m_name].set_data(ms.Tensor(torch_params[t_name].detach().numpy()))
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    got = ms_net(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape == (2, 8)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


HANDED = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn


    class EncoderMLP(nn.Module):
        def __init__(self, input_dim, hidden_dim, output_dim):
            super().__init__()
            self.input_dim = input_dim
            self.fc1 = nn.Linear(self.input_dim, hidden_dim)
            self.fc2 = nn.Linear(hidden_dim, output_dim)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x.reshape(x.size(0), -1))))


    def head(width, out):
        return nn.Linear(width, out)


    class Model(nn.Module):
        def __init__(self, shape=(1, 4, 4)):
            super().__init__()
            width_height = np.array(shape[1:]) // 2
            self.encoder = EncoderMLP(input_dim=np.prod(width_height), hidden_dim=8, output_dim=6)
            self.head = head(np.int64(6), 3)
            self.pool = nn.AvgPool2d(2)

        def forward(self, x):
            return self.head(self.encoder(self.pool(x)))
""")


def test_numpy_sizes_handed_to_a_class_of_the_file_match(tmp_path):
    """C-SWM's ``EncoderMLP(input_dim=np.prod(width_height), ...)``, whose ``__init__`` keeps ``self.input_dim =
    input_dim`` and builds ``nn.Linear(self.input_dim, hidden_dim)``: the parameter holds a numpy integer (some call
    of the file passes one), so the size is ``int(...)``; on main MindSpore refused it (batch 8b cswm/cswm_small)."""
    code = convert_source(HANDED).code
    assert "in_channels=int(self.input_dim)" in code and "in_channels=int(width)" in code, code
    assert "in_channels=hidden_dim" in code, code  # given plain ints only: as written
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    import torch

    torch.manual_seed(0)
    assert_port_matches_in_mode(HANDED, code, "Model", [x], tmp_path, "np_handed", "pynative", atol=1e-5)
