"""In-place updates through torch views and through ``.data`` (issue 26, the object surface): torch's views share
their base's storage, so ``x.narrow(1, 0, 2).copy_(y)``, ``w.data.diagonal().fill_(4)``, ``x.select(1, 2).mul_(5)``,
``x.unsqueeze(0).add_(1)``, ``nn.init.ones_(w.narrow(1, 0, 2))`` update ``x``/``w``; MindSpore's narrow, select, diagonal ... are copies, and the converted
update filled the copy, silently (11 of these 24 forms on main: values wrong, no diagnostic). The converter writes
such a statement back into its base (``mp_inplace.view_update``, mindport/mappings/views.py); ``p.data[...] = v``
outside forward is ``p[...] = v`` (MindSpore's ``Tensor.data`` item assignment of the whole reaches no Parameter);
``d = x.data`` of a local tensor is decided by the object (``mp_adapt.tensor_data``: a MindSpore Tensor itself, as
its ``.data`` is another Tensor an update does not reach). What can't be written back is flagged: an update through
``.data`` in forward, an update through a view used as a value, a Parameter's ``.data`` stored on an attribute. Each
form run in torch and, converted, on MindSpore."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def base():
        m = nn.Linear(4, 3)
        nn.init.constant_(m.weight, 0.5)
        nn.init.constant_(m.bias, 0.25)
        return m


    def f_data_sub_write():
        m = base()
        m.weight.data[:, :2] = 1.0
        return m.weight


    def f_data_ellipsis_write():
        m = base()
        m.bias.data[...] = torch.arange(3, dtype=torch.float32)
        return m.bias


    def f_local_data_sub_write():
        m = base()
        w = m.weight
        w.data[0] = 2.0
        return m.weight


    def f_index_zero():
        m = base()
        m.weight.data[0].zero_()
        return m.weight


    def f_slice_fill():
        m = base()
        m.weight.data[:, 1:].fill_(3.0)
        return m.weight


    def f_narrow_copy():
        m = base()
        m.weight.data.narrow(1, 0, 2).copy_(torch.ones(3, 2) * 7)
        return m.weight


    def f_select_add():
        m = base()
        m.weight.data.select(0, 1).add_(1.0)
        return m.weight


    def f_view_index():
        m = base()
        m.weight.data.view(-1)[3] = 9.0
        return m.weight


    def f_diagonal_fill():
        m = base()
        m.weight.data.diagonal().fill_(4.0)
        return m.weight


    def f_t_inplace():
        x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        x.t_()
        return x


    def f_T_write():
        x = torch.zeros(2, 3)
        x.T[0] = 5.0
        return x


    def f_tensor_index_zero():
        x = torch.ones(3, 4)
        x[0].zero_()
        return x


    def f_tensor_slice_fill():
        x = torch.ones(3, 4)
        x[:, 1:].fill_(2.0)
        return x


    def f_tensor_narrow_copy():
        x = torch.ones(3, 4)
        x.narrow(1, 1, 2).copy_(torch.zeros(3, 2))
        return x


    def f_tensor_select_mul():
        x = torch.ones(3, 4)
        x.select(1, 2).mul_(5.0)
        return x


    def f_tensor_view_set():
        x = torch.zeros(2, 3)
        x.view(-1)[4] = 1.0
        return x


    def f_tensor_diag_fill():
        x = torch.zeros(3, 3)
        x.diagonal().fill_(1.0)
        return x


    def f_unsqueeze_view_add():
        x = torch.zeros(2, 3)
        x.unsqueeze(0).add_(1.0)
        return x


    def f_reshape_view_mul():
        x = torch.ones(2, 3)
        x.reshape(3, 2).mul_(3.0)
        return x


    def f_local_data_alias():
        x = torch.ones(2, 3)
        d = x.data
        d.mul_(4.0)
        return x


    def f_data_setter_tensor():
        x = torch.ones(2, 3)
        x.data = torch.zeros(2, 3)
        return x


    def f_param_loop_data_mul():
        m = base()
        for p in m.parameters():
            p.data.mul_(2.0)
        return m.weight


    def f_init_through_views():
        m = base()
        nn.init.ones_(m.weight.narrow(1, 0, 2))
        nn.init.constant_(m.weight.data.diagonal(), 5.0)
        return m.weight


    def f_param_data_setter_loop():
        m = base()
        for p in m.parameters():
            p.data = p.data.clamp(max=0.3)
        return m.bias
""")
FORMS = sorted(line[4:line.index("(")] for line in SOURCE.splitlines() if line.startswith("def f_"))


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("view_updates")
    code = convert_source(SOURCE).code
    return load_module(SOURCE, tmp / "t_views.py", "t_views"), load_module(code, tmp / "m_views.py", "m_views"), code


@pytest.mark.parametrize("form", FORMS)
def test_an_update_through_a_view_or_data_matches_torch(modules, form):
    torch_mod, ms_mod, code = modules
    want = getattr(torch_mod, form)().detach().numpy()
    got = getattr(ms_mod, form)()
    assert tuple(got.shape) == want.shape
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_the_updates_are_written_back_into_the_base(modules):
    code = modules[2]
    assert "mp_inplace.view_update(x, (('narrow', (1, 1, 2), {}),), mp_inplace.copy_(" in code, code
    assert "(('data', (), {}), ('diagonal', (), {}),)" in code
    assert "mp_adapt.layer_attribute(m, 'bias')[...] = " in code  # p.data[...] = v: on p itself
    assert "d = mp_adapt.tensor_data(x)" in code


def test_a_parameter_keeps_its_identity_through_a_view_update(tmp_path):
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                nn.init.zeros_(self.fc.weight)
                self.fc.weight.data.diagonal().fill_(1.0)
                self.fc.weight.data.narrow(1, 0, 1).add_(2.0)

            def forward(self, x):
                return self.fc(x)
        """)
    code = convert_source(source).code
    torch_net = load_module(source, tmp_path / "t_pid.py", "t_pid").Net()
    ms_net = load_module(code, tmp_path / "m_pid.py", "m_pid").Net()
    assert [p.name for p in ms_net.get_parameters()] == ["fc.weight", "fc.bias"]
    np.testing.assert_array_equal(ms_net.fc.weight.asnumpy(), torch_net.fc.weight.detach().numpy())


def test_what_cannot_be_written_back_is_flagged():
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.keep = self.fc.weight.data

            def forward(self, x):
                h = self.fc(x)
                d = h.data
                d.clamp_(min=0.0)
                h.data.mul_(2.0)
                y = h.narrow(1, 0, 2).add_(1.0)
                return h, y
        """)
    result = convert_source(source)
    flagged = sorted((d.code, d.line) for d in result.diagnostics)
    # line 15, h.data.mul_(2.0) as a statement on a local: written with its values and a passed-through gradient
    # (tests/converter/test_data_update_in_forward.py); through the alias d (line 14) it stays flagged
    assert flagged == [("MP102", 14), ("MP102", 16), ("MP104", 9)], (flagged, result.code)
    assert "h = mp_inplace.data_update(h, mp_inplace.mul_(ops.stop_gradient(h)" in result.code
    assert "self.keep = self.fc.weight.data  # mindport: MP104" in result.code
