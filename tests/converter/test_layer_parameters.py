"""A layer's parameter read under torch's name outside ``self.X`` (failure class 3 of real code): a local name bound
to a layer (``bn = nn.BatchNorm2d(d)`` then ``nn.init.zeros_(bn.weight)``) and a literal index of a Sequential built
in place (``net[-1].weight = net[0].weight``: tied embedding and output weights) read MindSpore's names
(``gamma``, ``embedding_table``), and the port matches torch."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source, transfer_weights
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Pool(nn.Module):
        def forward(self, x):
            return x.mean(dim=1)


    class Scaled(nn.Module):
        def __init__(self, d):
            super().__init__()
            norm = nn.BatchNorm1d(d)
            nn.init.constant_(norm.weight, 0.5)
            nn.init.constant_(norm.bias, 0.25)
            self.proj = nn.Sequential(nn.Linear(d, d), norm)

        def forward(self, x):
            return self.proj(x)


    def tied_lm(vocab=11, d=6, depth=2):
        net = nn.Sequential(
            nn.Embedding(vocab, d),
            Pool(),
            *[Scaled(d) for _ in range(depth)],
            nn.Linear(d, vocab, bias=False),
        )
        net[-1].weight = net[0].weight
        return net
""")


def test_layer_parameters_of_local_layers_and_sequential_indices(tmp_path):
    result = convert_source(SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "net[-1].weight = net[0].embedding_table" in result.code
    assert "norm.gamma" in result.code and "norm.beta" in result.code
    import mindspore as ms
    import torch

    torch_net = load_module(SOURCE, tmp_path / "t_lp.py", "t_lp").tied_lm().eval()
    ms_net = load_module(result.code, tmp_path / "m_lp.py", "m_lp").tied_lm()
    ms_net.set_train(False)
    assert ms_net[-1].weight is ms_net[0].embedding_table  # tied, as in torch
    gamma = ms_net[2].proj[1].gamma.asnumpy()  # the init reached the BatchNorm's scale
    np.testing.assert_array_equal(gamma, np.full_like(gamma, 0.5))
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).integers(0, 11, (2, 5))
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x, ms.int32)).asnumpy(), want, rtol=1e-5, atol=1e-5)


INIT_BY_CLASS_NAME = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find('Conv') != -1:
            nn.init.normal_(m.weight, 0.0, 0.02)
        elif classname.find('BatchNorm') != -1:
            nn.init.constant_(m.weight, 1.5)
            nn.init.constant_(m.bias, 0.25)
        elif 'LayerNorm' in type(m).__name__:
            m.bias.data.fill_(-0.5)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
            self.norm = nn.LayerNorm(4)

        def forward(self, x):
            return self.norm(self.body(x).mean(dim=(2, 3)))


    def build():
        return Net().apply(weights_init)
""")


def test_an_init_narrowed_by_class_name_reads_mindspore_names(tmp_path):
    """``classname.find('BatchNorm') != -1`` (DCGAN's weights_init given to model.apply) narrows ``m`` like an
    isinstance test: ``m.weight`` of a LayerNorm is ``m.gamma``; the BatchNorms the name matches keep it under
    different names (BatchNorm3d's is ``bn2d.gamma``), so the object's class decides when the init runs."""
    import mindspore as ms
    import torch

    result = convert_source(INIT_BY_CLASS_NAME)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "mp_adapt.layer_attribute(m, 'weight')" in result.code and "m.beta" in result.code
    ms_net = load_module(result.code, tmp_path / "m_cn.py", "m_cn").build()
    bn, ln = ms_net.body[1], ms_net.norm
    np.testing.assert_array_equal(bn.gamma.asnumpy(), np.full(4, 1.5, np.float32))  # the init ran, by name
    np.testing.assert_array_equal(ln.beta.asnumpy(), np.full(4, -0.5, np.float32))
    torch_net = load_module(INIT_BY_CLASS_NAME, tmp_path / "t_cn.py", "t_cn").build().eval()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)


TIED_DICT = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class LM(nn.Module):
        def __init__(self, vocab=11, d=6):
            super().__init__()
            self.body = nn.ModuleDict(dict(wte=nn.Embedding(vocab, d), h=nn.ModuleList([nn.Linear(d, d)])))
            self.parts = nn.ModuleDict({'norm': nn.LayerNorm(d)})
            self.head = nn.Linear(d, vocab, bias=False)
            self.body.wte.weight = self.head.weight
            nn.init.constant_(self.parts['norm'].weight, 2.0)

        def forward(self, idx):
            x = self.body.wte(idx)
            for layer in self.body.h:
                x = torch.relu(layer(x))
            return self.head(self.parts['norm'](x))
""")


def test_layer_parameters_of_module_dict_keys(tmp_path):
    """``self.transformer.wte.weight = self.lm_head.weight`` (GPT-style tied weights through a ModuleDict)."""

    result = convert_source(TIED_DICT)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "self.body.wte.embedding_table = self.head.weight" in result.code
    assert "self.parts['norm'].gamma" in result.code
    ms_net = _assert_lm_matches(TIED_DICT, result.code, tmp_path, "td")
    assert ms_net.body.wte.embedding_table is ms_net.head.weight


WRAPPED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class TokenEmbedding(nn.Module):
        def __init__(self, dim, num_tokens):
            super().__init__()
            self.emb = nn.Embedding(num_tokens, dim)

        def forward(self, x):
            return self.emb(x)


    class LM(nn.Module):
        def __init__(self, num_tokens=11, dim=6):
            super().__init__()
            self.token_emb = TokenEmbedding(dim, num_tokens)
            nn.init.normal_(self.token_emb.emb.weight, std=0.5)
            self.to_logits = lambda t: t @ self.token_emb.emb.weight.t()

        def forward(self, idx):
            return self.to_logits(torch.tanh(self.token_emb(idx)))
""")


def test_a_layer_held_by_a_class_of_the_same_file(tmp_path):
    """``self.token_emb.emb.weight`` (x-transformers' tied logits) where TokenEmbedding holds ``self.emb =
    nn.Embedding(...)``: the Embedding's embedding_table."""

    result = convert_source(WRAPPED)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "self.token_emb.emb.embedding_table.t()" in result.code
    _assert_lm_matches(WRAPPED, result.code, tmp_path, "wr")


BRANCHES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Pool(nn.Module):
        def __init__(self, dim, out):
            super().__init__()
            self.proj = nn.Linear(dim, out)

        def forward(self, x):
            return self.proj(x.mean(dim=1))


    class Flat(nn.Module):
        def __init__(self, dim, out):
            super().__init__()
            self.head = nn.Linear(dim, out)

        def forward(self, x):
            return self.head(x[:, 0])


    class Embed(nn.Module):
        def __init__(self, vocab, dim):
            super().__init__()
            self.table = nn.Embedding(vocab, dim)

        def forward(self, idx):
            return self.table(idx)


    class Fixed(nn.Module):
        def __init__(self, value):
            super().__init__()
            self.value = value

        def forward(self, idx):
            return self.value


    class LM(nn.Module):
        def __init__(self, vocab=11, dim=6, pooled=True, embed=None, absolute=True):
            super().__init__()
            if embed is None:
                embed = Embed(vocab, dim)
            self.embed = embed
            if pooled:
                self.reduce = Pool(dim, dim)
            else:
                self.reduce = Flat(dim, dim)
            self.pos = Embed(8, dim) if absolute else None
            if absolute:
                self.pos = Embed(8, dim)
            else:
                self.pos = Fixed(0.0)
            self.to_logits = lambda t: t @ self.embed.table.weight.t()
            nn.init.normal_(self.pos.table.weight, std=0.02)
            std = self.reduce.proj.in_features ** -0.5
            nn.init.normal_(self.reduce.proj.weight, std=std)

        def forward(self, idx):
            h = self.embed(idx) + self.pos(torch.arange(idx.shape[1]))
            return self.to_logits(self.reduce(torch.tanh(h)))
""")


def test_attributes_bound_on_branches_and_through_a_local_name(tmp_path):
    """``self.reduce`` is a Pool on one branch and a Flat on the other (only Pool has ``proj``: CLIP's
    ``self.visual.attnpool.c_proj.in_features``); ``self.pos`` an Embed or a Fixed; ``self.embed`` a local name bound to
    an Embed when no module is passed (x-transformers' TokenEmbedding). Each read takes the candidates that can hold
    it, and the port matches torch."""

    result = convert_source(BRANCHES)
    code = result.code
    assert "self.embed.table.embedding_table.t()" in code
    assert "self.pos.table.embedding_table" in code and "self.reduce.proj.in_channels" in code
    _assert_lm_matches(BRANCHES, code, tmp_path, "br")


def test_candidates_that_disagree_are_decided_at_run_time():
    """An attribute that is an Embedding on one branch and a Linear on the other: ``.weight`` means different
    parameters (``embedding_table``, ``weight``), so the read outside ``forward`` goes through
    ``mp_adapt.layer_attribute``, by the object's class (before: left alone, and the Embedding branch raised
    AttributeError when built; parity in test_branch_layer_reads.py); a read in ``forward`` is left alone."""
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, tokens):
                super().__init__()
                if tokens:
                    self.inp = nn.Embedding(10, 4)
                else:
                    self.inp = nn.Linear(4, 4)
                nn.init.zeros_(self.inp.weight)

            def forward(self, x):
                return self.inp(x) * self.inp.weight.shape[0]
    """)
    code = convert_source(source).code
    assert "mp_init.zeros_(tensor=mp_adapt.layer_attribute(self.inp, 'weight'))" in code, code
    assert "self.inp(x) * self.inp.weight.shape[0]" in code, code


def _assert_lm_matches(source, code, tmp_path, name):
    """The ``LM()`` of ``source`` and of its conversion, torch's weights moved over, give the same logits on a batch
    of token ids; the MindSpore model is returned."""
    import mindspore as ms
    import torch

    torch_net = load_module(source, tmp_path / f"t_{name}.py", f"t_{name}").LM().eval()
    ms_net = load_module(code, tmp_path / f"m_{name}.py", f"m_{name}").LM()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).integers(0, 11, (2, 5))
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x, ms.int32)).asnumpy(), want, rtol=1e-5, atol=1e-5)
    return ms_net


ALIASED = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(11, 8)
            self.norms = nn.ModuleList([nn.LayerNorm(8) for _ in range(2)])
            self.bias = nn.Parameter(torch.zeros(11))
            nn.init.normal_(self.norms[1].weight, 1.0, 0.5)
            nn.init.normal_(self.norms[1].bias, 0.0, 0.5)

        def forward(self, x):
            lookup_table = self.embedding
            h = lookup_table(x)
            norm = self.norms[1]
            h = norm(h) * norm.weight + norm.bias
            return torch.einsum('ibd,nd->ibn', h, lookup_table.weight) + self.bias
''')


def test_a_local_name_bound_to_a_layer_attribute_reads_mindspore_names(tmp_path):
    """XLNet's ``lookup_table = self.embedding`` then ``lookup_table.weight`` (tied output projection): the local
    holds what ``self.embedding`` holds, so ``.weight`` is ``embedding_table``; an item of a ModuleList too
    (``norm = self.norms[1]``: gamma/beta). It raised "The 'Embedding' object has no attribute 'weight'"."""
    import mindspore as ms
    import torch

    code = convert_source(ALIASED, "aliased.py").code
    assert "lookup_table.embedding_table" in code and "norm.gamma + norm.beta" in code, code
    torch.manual_seed(0)
    t_net = load_module(ALIASED, tmp_path / "t_aliased.py", "t_aliased").M().eval()
    m_net = load_module(code, tmp_path / "m_aliased.py", "m_aliased").M()
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).integers(0, 11, (3, 2)).astype(np.int64)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
