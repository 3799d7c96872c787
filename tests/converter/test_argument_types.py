"""Arguments torch accepts in a looser type than MindSpore checks (failure class 2 of real code): each converts to
what MindSpore wants and the port matches torch."""
from __future__ import annotations

import textwrap

from mindport import convert_source
from port_check import assert_port_matches


def test_an_int_bias_switch_is_a_bool(tmp_path):
    """``nn.Linear(a, b, 1)`` / ``bias=0`` / ``bias=None``: torch takes any truthy value, Dense/Conv2d check has_bias as a bool."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, d=4):
                super().__init__()
                self.conv = nn.Conv2d(3, d, 3, 1, 1, 1, 1, 0)
                self.fc = nn.Linear(d, d * 2, 1)
                self.out = nn.Linear(d * 2, 3, bias=0)
                self.none = nn.Linear(3, 3, bias=None)

            def forward(self, x):
                x = self.conv(x).mean(dim=(2, 3))
                return self.none(self.out(torch.relu(self.fc(x))))
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "has_bias=True" in result.code and "has_bias=False" in result.code
    report = assert_port_matches(source, result.code, "Net", (2, 3, 5, 5), tmp_path, "intbias", atol=1e-5)
    assert not report.missing and not report.unexpected, report


def test_a_pad_value_with_a_non_constant_mode_is_dropped(tmp_path):
    """``F.pad(x, paddings, mode, value)`` with mode 'reflect' and value 0 (EnCodec's pad1d passes both whatever the
    mode): torch ignores the value, ops.pad refused it; a constant mode keeps it."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        def pad1d(x, paddings, mode='constant', value=0.):
            return F.pad(x, paddings, mode, value)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(2, 3, 3)

            def forward(self, x):
                y = pad1d(x, (2, 1), 'reflect') + F.pad(x, (2, 1), 'replicate', 0.0)
                return self.conv(y) + pad1d(x, (1, 0), 'constant', 0.5)[..., :6].sum()
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    report = assert_port_matches(source, result.code, "Net", (2, 2, 6), tmp_path, "padval", atol=1e-5)
    assert not report.missing and not report.unexpected, report


def test_a_zero_dim_ones_or_zeros(tmp_path):
    """``nn.Parameter(torch.ones([]) * np.log(1 / 0.07))`` (CLIP's logit scale): MindSpore 2.10's Ones/Zeros CPU
    kernels refuse a 0-d shape; the 0-d tensor is made by mindport.runtime.math.scalar_tensor, dtype kept."""
    source = textwrap.dedent("""\
        import numpy as np
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))

            def forward(self, x):
                offset = torch.zeros((), dtype=torch.float64) + torch.ones(()) * 2
                return self.fc(x) * self.logit_scale.exp() + offset.float()
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "ops.ones([])" not in result.code and "mp_math.scalar_tensor(s=1)" in result.code
    report = assert_port_matches(source, result.code, "Net", (2, 4), tmp_path, "zerodim", atol=1e-4)
    assert not report.missing and not report.unexpected, report


def test_an_expression_argument_keeps_its_meaning_inside_a_written_out_decision(tmp_path):
    """A transform that decides at run time writes the argument into a larger expression; a conditional argument
    (GwcNet's ``padding=dilation if dilation > 1 else pad``) must stay one operand there: bare, it did not parse inside
    ``for v in ...`` (the file failed to convert) or was read as part of a neighbouring ``in``/``is not``."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, dilation=1, pad=1, stride=None, track=False):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3, 1, padding=dilation if dilation > 1 else pad, dilation=dilation)
                self.conv3 = nn.Conv3d(1, 2, 3, 1, padding=dilation if dilation > 1 else pad, dilation=dilation)
                self.pool = nn.MaxPool2d(2, stride=stride if stride else None)
                self.norm = nn.BatchNorm1d(4, track_running_stats=track if track else False)

            def forward(self, x):
                y = self.pool(self.conv(x))
                z = self.conv3(x[:, :1].unsqueeze(1)).mean(dim=(1, 2))
                return torch.cat([self.norm(y.mean(dim=(2, 3))), z.flatten(1)], dim=1)
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "for v in (dilation if dilation > 1 else pad)" in result.code
    report = assert_port_matches(source, result.code, "Net", (2, 3, 7, 7), tmp_path, "exprargs", atol=1e-5)
    assert not report.missing and not report.unexpected, report


def test_a_padding_that_can_only_be_a_number_is_written_as_one(tmp_path):
    """``padding=(kernel_size - 1) // 2`` is a number whatever kernel_size is: pad_mode='pad' with the expression,
    not the run-time decision between a string, a tuple and an int that a bare name needs."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, kernel_size=3, k1=1):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, kernel_size, padding=(kernel_size - 1) // 2)
                self.point = nn.Conv1d(4, 4, k1, padding=(k1 - 1) // 2)
                self.wide = nn.Conv2d(4, 2, 5, padding=2 * (5 - 1) // 2, dilation=2)
                # a sum with a number written in it (SKNet's branches: kernel 3 + 2i, padding 1 + i)
                self.branches = nn.ModuleList([nn.Conv2d(2, 2, 3 + i * 2, padding=1 + i) for i in range(2)])
                self.shifted = nn.Conv2d(2, 2, kernel_size, padding=kernel_size // 2 + 0)

            def forward(self, x):
                y = self.conv(x)
                b, c, h, w = y.shape
                z = self.point(y.reshape(b, c, h * w)).reshape(b, c, h, w)
                w = self.wide(z)
                return self.shifted(sum(branch(w) for branch in self.branches))
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "isinstance" not in result.code and result.code.count("pad_mode='pad'") == 5, result.code
    report = assert_port_matches(source, result.code, "Net", (2, 3, 9, 9), tmp_path, "numpad", atol=1e-5)
    assert not report.missing and not report.unexpected, report


def test_layer_sizes_computed_with_numpy_are_ints(tmp_path):
    """``nn.Conv1d(c, c, np.prod(ks))`` (ParallelWaveGAN's MelGAN discriminator), ``nn.Linear(np.prod(shape), n)``:
    torch takes numpy integers as sizes, MindSpore's layer checks refuse them; the port reads them as ints."""
    source = textwrap.dedent("""\
        import numpy as np
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, ks=(3, 1), shape=(4, 5), scales=(1, 2)):
                super().__init__()
                self.conv = nn.Conv1d(4, int(np.cumprod(scales)[-1]) * 3, np.prod(ks), padding=1)
                self.fc = nn.Linear(np.prod(shape), np.max(shape))
                self.emb = nn.Embedding(np.sum(shape), 5)

            def forward(self, x):
                y = self.conv(x)
                return self.fc(y.flatten(1)[:, :20]) + self.emb.weight[:1, :].sum()
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "int(np.prod(ks))" in result.code and "int(np.prod(shape))" in result.code, result.code
    report = assert_port_matches(source, result.code, "Net", (2, 4, 5), tmp_path, "npints", atol=1e-5)
    assert not report.missing and not report.unexpected, report
