"""torch's object surface on model code no corpus of ours held (issue 26's first-contact failures, issue 28's
``x.requires_grad``): each torch program converted by the real converter, run on MindSpore and compared with torch
(port_check: the same weights, the same input)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches, load_module


def _convert(source: str) -> str:
    result = convert_source(source, "model.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    return result.code


def _port(source, cls, shape, tmp_path, name, args=(), atol=1e-5):
    source = textwrap.dedent(source)
    code = _convert(source)
    assert_port_matches(source, code, cls, shape, tmp_path, name, atol, args=args)
    return code


def test_init_of_a_parameters_data_fills_the_parameter(tmp_path):
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn
        from torch.nn.init import xavier_uniform_


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.W = nn.Parameter(torch.zeros(4, 3))
                self.embedding = nn.Embedding(10, 4)
                nn.init.xavier_uniform_(self.W.data)
                xavier_uniform_(self.embedding.weight.data)
                nn.init.constant_(self.W.data, 0.5)

            def forward(self, x):
                return x @ self.W + self.embedding.weight.sum()
        """)
    code = _convert(source)
    assert ".data.set_data" not in code
    ms_net = load_module(code, tmp_path / "m_init.py", "m_init").Net()
    np.testing.assert_allclose(ms_net.W.asnumpy(), np.full((4, 3), 0.5, np.float32))
    table = ms_net.embedding.embedding_table.asnumpy()
    bound = np.sqrt(6 / (10 + 4))  # xavier_uniform_'s bound: drawn from it, not the Normal the layer started with
    assert np.abs(table).max() <= bound and np.abs(table).max() > bound / 2
    assert_port_matches(source, code, "Net", (2, 4), tmp_path, "init_data", 1e-5)


def test_layer_settings_and_weights_read_through_containers_and_subclasses(tmp_path):
    code = _port("""\
        import torch
        import torch.nn as nn


        class Scaled(nn.Embedding):
            def __init__(self, n, d):
                super().__init__(n, d)
                self.scale = self.embedding_dim ** 0.5

            def forward(self, x):
                return super().forward(x) * self.scale


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.point_embeddings = nn.ModuleList([nn.Embedding(1, 4) for i in range(3)])
                self.emb = Scaled(10, 4)
                self.pool = nn.AdaptiveAvgPool2d((1, 1))
                self.dim = self.emb.embedding_dim + self.point_embeddings[0].weight.shape[1]
                self.osz = self.pool.output_size

            def forward(self, x):
                w = sum(self.point_embeddings[i].weight for i in range(3))
                e = self.emb(torch.zeros(x.shape[0], dtype=torch.long))
                return x * w + e + self.dim + self.osz[0]
        """, "Net", (2, 4), tmp_path, "containers")
    assert "self.point_embeddings[i].embedding_table" in code and "self.embedding_size" in code


def test_lstm_flatten_parameters_and_a_module_cast_in_place(tmp_path):
    code = _port("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(4, 5, batch_first=True)
                self.double()

            def forward(self, x):
                self.lstm.flatten_parameters()
                y, _ = self.lstm(x.double())
                return y.float()
        """, "Net", (2, 3, 4), tmp_path, "lstm")
    assert "flatten_parameters" not in code and "astype(ms.float64)\n" not in code
    ms_net = load_module(code, tmp_path / "m_lstm_cast.py", "m_lstm_cast").Net()
    assert {str(p.dtype) for p in ms_net.get_parameters()} == {"Float64"}


@pytest.mark.parametrize("size", [(9, 9), (10, 10), (10, 9)])
def test_transposed_convolution_called_with_its_output_size(tmp_path, size):
    _port(f"""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)

            def forward(self, x):
                return self.up(x, output_size=[x.shape[0], 2, {size[0]}, {size[1]}])
        """, "Net", (1, 4, 5, 5), tmp_path, f"up_{size[0]}_{size[1]}")


def test_explicit_base_class_init_and_forward_in_layer_subclasses(tmp_path):
    code = _port("""\
        import torch.nn as nn


        class MyConv(nn.Conv2d):
            def __init__(self, cin, cout):
                nn.Conv2d.__init__(self, cin, cout, 3, padding=1)

            def forward(self, x):
                return nn.Conv2d.forward(self, x) * 2


        class MyLin(nn.Linear):
            def __init__(self, a, b):
                nn.Linear.__init__(self, a, b)


        class Net(nn.Module):
            def __init__(self):
                nn.Module.__init__(self)
                self.conv = MyConv(3, 4)
                self.bn = nn.BatchNorm2d(4)
                self.lin = MyLin(4, 2)
                for m in self.modules():
                    if isinstance(m, nn.BatchNorm2d):
                        nn.init.constant_(m.weight, 1)

            def forward(self, x):
                return self.lin(self.bn(self.conv(x)).mean((2, 3)))
        """, "Net", (2, 3, 6, 6), tmp_path, "base_init")
    assert "import torch" not in code and "MP1" not in code


@pytest.mark.parametrize("mask", [False, True])
def test_a_buffer_that_is_none_on_some_configurations(tmp_path, mask):
    _port("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, mask=False):
                super().__init__()
                self.fc = nn.Linear(4, 2)
                attn_mask = torch.ones(2) if mask else None
                self.register_buffer("attn_mask", attn_mask)

            def forward(self, x):
                y = self.fc(x)
                if self.attn_mask is not None:
                    y = y + self.attn_mask
                return y
        """, "Net", (3, 4), tmp_path, f"mask_{mask}", args=(mask,))


def test_device_contexts_requires_grad_and_child_dicts(tmp_path):
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        def run(x, model):
            with x.device:
                a = torch.ones(2)
            with torch.device("cpu"):
                b = torch.zeros(2) + a
            p = nn.Parameter(torch.ones(2))
            q = torch.ones(2)
            q.requires_grad_(True)
            flags = (x.requires_grad, p.requires_grad, q.requires_grad, model.weight.requires_grad)
            return b, flags, sorted(model._parameters), list(nn.Sequential(nn.ReLU())._modules)
        """)
    code = _convert(source)
    import mindspore as ms
    import torch

    t_out = load_module(source, tmp_path / "t_dev.py", "t_dev").run(torch.ones(3), torch.nn.Linear(2, 2))
    m_mod = load_module(code, tmp_path / "m_dev.py", "m_dev")
    m_out = m_mod.run(ms.Tensor(np.ones(3, np.float32)), ms.nn.Dense(2, 2))
    np.testing.assert_allclose(m_out[0].asnumpy(), t_out[0].numpy())
    assert m_out[1] == t_out[1] == (False, True, True, True)
    assert m_out[2] == t_out[2] and m_out[3] == t_out[3]


def test_repeat_on_tensors_taken_from_a_list_argument(tmp_path):
    source = textwrap.dedent("""\
        import torch


        def run(feats):
            tiled = [t.repeat(2, 1) for t in feats]
            for t in feats:
                last = t.repeat(1, 3)
            return torch.cat(tiled), last, feats[0].repeat(1, 2)
        """)
    code = _convert(source)
    assert ".repeat(" not in code  # MindSpore's Tensor.repeat has no CPU kernel: tile takes torch's sizes
    import mindspore as ms
    import torch

    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3) + i for i in range(2)]
    want = load_module(source, tmp_path / "t_rep.py", "t_rep").run([torch.tensor(a) for a in arrays])
    got = load_module(code, tmp_path / "m_rep.py", "m_rep").run([ms.Tensor(a) for a in arrays])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.numpy())


def test_a_sub_layer_built_from_a_class_passed_in_reads_its_settings_by_its_class(tmp_path):
    code = _port("""\
        import torch
        import torch.nn as nn


        class ConvLoRA(nn.Module):
            def __init__(self, conv_module, in_channels, out_channels, kernel_size, r=2, **kwargs):
                super().__init__()
                self.conv = conv_module(in_channels, out_channels, kernel_size, **kwargs)
                rows = out_channels // self.conv.groups * kernel_size
                self.lora_B = nn.Parameter(torch.ones((rows, r)) * 0.1)
                self.conv.weight.requires_grad = False

            def forward(self, x):
                return self.conv(x) + self.lora_B.sum()


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = ConvLoRA(nn.Conv2d, 3, 4, 3, padding=1, groups=1)

            def forward(self, x):
                return self.c(x)
        """, "Net", (2, 3, 5, 5), tmp_path, "conv_module")
    assert "mp_adapt.layer_attribute(self.conv, 'groups')" in code


def test_a_conv1d_weight_assigned_through_data_keeps_mindspores_layout(tmp_path):
    _port("""\
        import torch
        import torch.nn as nn


        class Invertible1x1Conv(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv = nn.Conv1d(c, c, 1, bias=False)
                W = torch.linalg.qr(torch.ones(c, c) + torch.eye(c))[0]
                self.conv.weight.data = W.view(c, c, 1)

            def forward(self, x):
                return self.conv(x) * self.conv.weight.squeeze().sum()
        """, "Invertible1x1Conv", (2, 4, 6), tmp_path, "inv_conv", args=(4,))


def test_a_max_unpool_called_with_torchs_keyword_names(tmp_path):
    _port("""\
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.pool = nn.MaxPool2d(2, 2, return_indices=True)
                self.unpool = nn.MaxUnpool2d(2, 2)

            def forward(self, x):
                y, indices = self.pool(x)
                return self.unpool(input=y, indices=indices, output_size=x.size())
        """, "Net", (1, 2, 4, 4), tmp_path, "unpool")


@pytest.mark.parametrize("ragged", [False, True])
def test_a_buffer_that_is_none_on_some_runs_given_as_a_conditional(tmp_path, ragged):
    """rtdl's PiecewiseLinearEmbeddings: ``register_buffer(name, x if cond else None)``; torch registers None (the
    attribute reads None, the state_dict leaves it out). Both branches, weights moved from torch's state_dict."""
    code = _port("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, ragged=False):
                super().__init__()
                n_bins = [2, 3, 1] if ragged else [2, 2, 2]
                self.fc = nn.Linear(3, 3)
                single = torch.tensor(n_bins) == 1
                self.register_buffer("single", single if single.any() else None)
                self.register_buffer("mask", None if len(set(n_bins)) == 1 else torch.tensor(n_bins).float())

            def forward(self, x):
                y = self.fc(x)
                if self.single is not None:
                    y = y + self.single.float()
                if self.mask is not None:
                    y = y * self.mask
                return y
        """, "Net", (2, 3), tmp_path, f"ragged_{ragged}", args=(ragged,))
    assert "ms.Parameter(None" not in code and "mp_containers.buffer(" in code
    net = load_module(code, tmp_path / f"m_ragged_{ragged}.py", f"m_ragged_{ragged}").Net(ragged)
    names = {p.name for p in net.get_parameters()}
    assert ("single" in names, "mask" in names) == (ragged, ragged)
    assert (net.single is None, net.mask is None) == (not ragged, not ragged)


def test_settings_mindspore_keeps_under_another_form_read_as_torch_holds_them(tmp_path):
    """esn/lednet: ``self.dropout.p`` of a Dropout2d (MindSpore keeps keep_prob = 1 - p), with other derived settings,
    read where the class is known (written in place) and on a layer passed to a function (the run-time accessor)."""
    code = _port("""\
        import torch
        import torch.nn as nn


        def settings(layer):
            return layer.p


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3, padding=1)
                self.dropout = nn.Dropout2d(0.25)
                self.rnn = nn.GRU(4, 5, bias=False)
                self.scale = settings(self.dropout) + self.conv.padding[0] + self.rnn.input_size + self.rnn.bias

            def forward(self, x):
                y = self.conv(x)
                if self.dropout.p != 0:
                    y = self.dropout(y)
                return y * (self.scale + self.dropout.p)
        """, "Net", (2, 3, 5, 5), tmp_path, "derived")
    assert "1 - self.dropout.keep_prob" in code and "mp_adapt.layer_attribute(layer, 'p')" in code


def test_members_torch_holds_as_none_read_none(tmp_path):
    """modnet: ``InstanceNorm2d(affine=False).weight`` is None in torch; so is a BatchNorm's running_mean with
    track_running_stats=False; read where the class is known and through the run-time accessor (in a loop over
    modules, the object's configuration decides)."""
    code = _port("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inorm = nn.InstanceNorm2d(3)
                self.inorm_affine = nn.InstanceNorm2d(3, affine=True)
                self.bn = nn.BatchNorm2d(3, track_running_stats=False)
                self.bn_tracked = nn.BatchNorm2d(3)
                nones = [self.inorm.weight is None, self.bn.running_mean is None, self.bn_tracked.running_var is None]
                nones += [self.bn.track_running_stats, self.bn_tracked.track_running_stats]
                for m in [self.inorm, self.inorm_affine, self.bn, self.bn_tracked]:
                    nones += [m.weight is None, m.running_mean is None]
                self.nones = float(sum(i * v for i, v in enumerate(nones)))

            def forward(self, x):
                return self.inorm_affine(self.inorm(x)) + self.nones
        """, "Net", (2, 3, 4, 4), tmp_path, "nones")
    assert "layer_attribute" in code or "is True else" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_parameter_data_as_a_value_updates_the_parameter_and_still_detaches_in_forward(tmp_path, mode):
    """``w = self.fc.weight.data; w.mul_(0.5)`` in a method forward does not call: the weight is halved, as in
    torch (MindSpore's Parameter.data took the update on a copy, silently). In a helper forward calls,
    ``.data`` stays: the forward output matches and the weight gets no gradient through it, as in torch."""
    import mindspore as ms
    import torch

    source = textwrap.dedent("""\
        import torch.nn as nn
        import torch.nn.functional as F


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.scale = nn.Linear(4, 3)
                self.reset_parameters()

            def reset_parameters(self):
                w = self.fc.weight.data
                w.mul_(0.0)
                w.add_(0.25)

            def _frozen(self, x):
                w = self.scale.weight.data
                return F.linear(x, w)

            def forward(self, x):
                return self.fc(x) + self._frozen(x)
        """)
    code = _convert(source)
    assert "w = self.scale.weight.data" in code  # the compiled helper keeps torch's detaching .data
    ms_net = load_module(code, tmp_path / f"m_data_{mode}.py", f"m_data_{mode}").Net()
    np.testing.assert_allclose(ms_net.fc.weight.asnumpy(), np.full((3, 4), 0.25, np.float32))
    torch_net = load_module(source, tmp_path / f"t_data_{mode}.py", f"t_data_{mode}").Net()
    ms_net.scale.weight.set_data(ms.Tensor(torch_net.scale.weight.detach().numpy()))
    ms_net.scale.bias.set_data(ms.Tensor(torch_net.scale.bias.detach().numpy()))
    ms_net.fc.bias.set_data(ms.Tensor(torch_net.fc.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    torch_net(torch.from_numpy(x)).sum().backward()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        out = ms_net(ms.Tensor(x))
        grads = ms.grad(ms_net, grad_position=None, weights=ms_net.trainable_params())(ms.Tensor(x))  # sens: ones
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(out.asnumpy(), torch_net(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    for param, grad in zip(ms_net.trainable_params(), grads):
        torch_param = dict(torch_net.named_parameters())[param.name]
        want = torch_param.grad.numpy() if torch_param.grad is not None else np.zeros(param.shape, np.float32)
        np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-5, atol=1e-6, err_msg=param.name)


def test_data_of_other_objects_taken_as_a_value_reads_as_written(tmp_path):
    """``.data`` of a sparse matrix, a packed sequence or any object that is not a tensor (vgae's, DGI's,
    graph-generation's): read as written, also through a function's untyped parameter (by the object at run time)."""
    import scipy.sparse as sp

    source = textwrap.dedent("""\
        import torch
        from torch.nn.utils.rnn import pack_padded_sequence


        def values(sparse_mx):
            sparse_mx = sparse_mx.tocoo()
            vals = sparse_mx.data
            return vals


        def raw(obj):
            d = obj.data
            return d


        def packed(y, lengths):
            flat = pack_padded_sequence(y, lengths, batch_first=True).data
            return flat
        """)
    code = _convert(source)
    torch_mod = load_module(source, tmp_path / "t_other_data.py", "t_other_data")
    ms_mod = load_module(code, tmp_path / "m_other_data.py", "m_other_data")
    matrix = sp.csr_matrix(np.array([[0, 2.0], [3.0, 0]]))
    np.testing.assert_array_equal(ms_mod.values(matrix), torch_mod.values(matrix))
    np.testing.assert_array_equal(ms_mod.raw(matrix), torch_mod.raw(matrix))
    import mindspore as ms
    import torch

    y = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    want = torch_mod.packed(torch.from_numpy(y), [3, 2]).numpy()
    np.testing.assert_allclose(ms_mod.packed(ms.Tensor(y), [3, 2]).asnumpy(), want)


def test_a_program_class_holding_its_own_parameters_dict_keeps_it(tmp_path):
    """``self._parameters = {}`` in a plain class of the program (fast-transformers' attention Registry): the
    attribute is the program's, not nn.Module's dict, and stays ``_parameters`` where it is read (it was renamed to
    MindSpore's ``_params`` in the reads only: AttributeError at import); nn.Module's own ``_modules`` in the same
    file is still the Cell's ``_cells``."""
    source = textwrap.dedent("""\
        import torch
        from torch import nn


        class Registry(object):
            def __init__(self):
                self._parameters = {}

            def register(self, key, spec):
                if key in self._parameters and self._parameters[key] != spec:
                    raise ValueError(key)
                self._parameters[key] = spec
                return sorted(self._parameters)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
                self.act = nn.ReLU()

            def children_count(self):
                return len(self._modules)


        def run():
            r = Registry()
            r.register("a", int)
            return r.register("b", float), Net().children_count()
        """)
    code = _convert(source)
    assert "self._parameters[key] = spec" in code and "_params" not in code and "len(self._cells)" in code
    want = load_module(source, tmp_path / "t_registry.py", "t_registry").run()
    assert load_module(code, tmp_path / "m_registry.py", "m_registry").run() == want == (["a", "b"], 2)


def test_a_member_of_a_model_of_another_file_is_read_by_its_class(tmp_path):
    """``self.net.level4[-1].module_act.num_parameters`` in ``__init__`` (ESPNetv2's segmentation head sizing itself
    from its backbone's PReLUs, batch17): ``self.net`` is a model built from another file's class, which no rule of
    this file knows, so the torch member (PReLU's ``num_parameters``, BatchNorm's ``num_features``) is read by the
    object's class at run time; it was left as written (AttributeError: MindSpore's PReLU holds ``w``)."""
    import sys

    import mindspore as ms
    import torch

    backbone = textwrap.dedent("""\
        import torch
        from torch import nn


        class Backbone(nn.Module):
            def __init__(self):
                super().__init__()
                self.level = nn.ModuleList([nn.Sequential(nn.Conv2d(3, 6, 1), nn.PReLU(6)),
                                            nn.Sequential(nn.Conv2d(6, 5, 1), nn.BatchNorm2d(5), nn.PReLU(5))])
                self.act = nn.PReLU(5)

            def forward(self, x):
                for m in self.level:
                    x = m(x)
                return self.act(x)
        """)
    head = textwrap.dedent("""\
        import torch
        from torch import nn
        from surface_backbone import Backbone


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = Backbone()
                width = self.net.level[-1][2].num_parameters + self.net.act.num_parameters
                self.sizes = (width, self.net.level[-1][1].num_features, self.net.level[0][0].out_channels)
                self.proj = nn.Conv2d(self.net.level[-1][2].num_parameters, width, 1)

            def forward(self, x):
                return self.proj(self.net(x))
        """)
    code = _convert(head)
    assert "mp_adapt.layer_attribute(self.net.act, 'num_parameters')" in code
    torch.manual_seed(0)
    load_module(backbone, tmp_path / "surface_backbone_t.py", "surface_backbone")
    torch_net = load_module(head, tmp_path / "t_surface_head.py", "t_surface_head").Net().eval()
    load_module(_convert(backbone), tmp_path / "surface_backbone_m.py", "surface_backbone")
    try:
        ms_net = load_module(code, tmp_path / "m_surface_head.py", "m_surface_head").Net()
    finally:
        sys.modules.pop("surface_backbone", None)
    assert ms_net.sizes == torch_net.sizes == (10, 5, 6)
    ms_net.set_train(False)
    from mindport import transfer_weights

    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_module_buffers_dict_lists_registered_buffers(tmp_path):
    """``m._buffers`` read (objsurf30): register_buffer became a non-trainable Parameter, which the Cell's own
    ``_buffers`` lacks (main read {}: silently no buffers); a write through it stays the Cell's dict."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.register_buffer("mean", torch.full((3,), 0.5))
                self.register_buffer("step", torch.zeros(1), persistent=False)
                self.inner = nn.Sequential(nn.ReLU())
                self.inner.register_buffer("gain", torch.ones(3))

            def forward(self, x):
                return self.inner(self.fc(x)) * self.inner.gain - self.mean


        def run(model):
            own = model._buffers
            return sorted(own), [own[k].shape[0] for k in sorted(own)], sorted(model.inner._buffers), \\
                float(model._buffers["mean"].sum())
        """)
    code = _convert(source)
    assert "named_buffers" in code
    import torch

    t_mod = load_module(source, tmp_path / "t_buf.py", "t_buf")
    m_mod = load_module(code, tmp_path / "m_buf.py", "m_buf")
    want = t_mod.run(t_mod.Net())
    got = m_mod.run(m_mod.Net())
    assert want == (["mean", "step"], [3, 1], ["gain"], 1.5)
    assert got == want
