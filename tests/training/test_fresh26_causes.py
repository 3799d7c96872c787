"""Session trainfresh26 (issue 27): causes found at first contact with the fresh26 entries
(/work/notes/trainfresh26.md). One test each, on real torch and real MindSpore, each failing without its fix; the
expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from _harness import load_module
from test_fresh_causes import _convert

# A training step written with ``;`` lines (zeroling147/mini-transformer: ``optimizer.zero_grad(set_to_none=True);
# loss.backward()`` and ``clip_grad_norm_(...); optimizer.step()``): the training rules read a step one statement
# per line, and the ``loss.backward()`` sharing a line with zero_grad stayed in the port (AttributeError: a
# MindSpore Tensor has no backward). Three shapes of the class on one model: the native loop with its forward and
# loss on one line, zero_grad + backward on one line, clip + step on one line; a step with a print between the
# forward and backward (the general backward region) written the same way; two layers made on one ``__init__`` line.
# Losses and the trained weights against torch's.
SEMICOLONS = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8); self.fc2 = nn.Linear(8, 3)

    def forward(self, x, y):
        logits = self.fc2(torch.tanh(self.fc1(x)))
        return logits, nn.functional.cross_entropy(logits, y)


def native(model, batches):
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for x, y in batches:
        _, loss = model(x, y); losses.append(float(loss))
        opt.zero_grad(set_to_none=True); loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5); opt.step()
    return losses


def region(model, batches):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for x, y in batches:
        opt.zero_grad(); _, loss = model(x, y)
        print("loss", float(loss)); losses.append(float(loss)); loss.backward(); opt.step()
    return losses
'''


def _data(seed):
    rng = np.random.RandomState(seed)
    return [(rng.normal(0, 1, (6, 4)).astype(np.float32), rng.randint(0, 3, 6)) for _ in range(4)]


def test_a_training_step_on_semicolon_lines_is_converted_statement_by_statement():
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = _convert(SEMICOLONS)
    assert ".backward()" not in code, code
    t_mod, m_mod = load_module(SEMICOLONS, "torch_semicolons"), load_module(code, "ms_semicolons")
    for train, seed in (("native", 0), ("region", 1)):
        torch.manual_seed(seed)
        t_model, m_model = t_mod.Net(), m_mod.Net()
        transfer_weights({k: v.detach().clone() for k, v in t_model.state_dict().items()}, m_model)
        data = _data(seed)
        t_losses = getattr(t_mod, train)(t_model, [(torch.tensor(x), torch.tensor(y)) for x, y in data])
        m_losses = getattr(m_mod, train)(m_model, [(ms.Tensor(x), ms.Tensor(y.astype(np.int32))) for x, y in data])
        np.testing.assert_allclose(m_losses, t_losses, rtol=1e-5)
        assert abs(t_losses[-1] - t_losses[0]) > 1e-3  # the weights moved
        for t, m in zip([p.detach().numpy() for p in t_model.parameters()],
                        [p.asnumpy() for p in m_model.trainable_params()]):
            np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)


# ``nn.Embedding(padding_idx=...)``: torch's padding row receives no gradient (it stays as it is, zeros when built);
# MindSpore's nn.Embedding zeroes it when it builds the table and then trains it like any row (2xic's
# TransformerEncoder with padding_idx=-1: the first loss equal, the second 3e-4 off, silently). Three tables with a
# padding row (0, -1 counted from the end, and Embedding.from_pretrained(freeze=False, padding_idx=1)) beside one
# with padding_idx=None written out (MindSpore's own layer), trained four Adam steps on batches that hold the padding
# ids: losses and every table against torch's, the padding rows unchanged.
PADDING = '''
import torch
import torch.nn as nn


class Tables(nn.Module):
    def __init__(self, pretrained):
        super().__init__()
        self.first = nn.Embedding(6, 3, padding_idx=0)
        self.last = nn.Embedding(6, 3, padding_idx=-1)
        self.loaded = nn.Embedding.from_pretrained(pretrained, freeze=False, padding_idx=1)
        self.plain = nn.Embedding(6, 3, padding_idx=None)

    def forward(self, ids):
        mixed = self.first(ids) * 1.5 + self.last(ids) - self.loaded(ids) * self.plain(ids)
        return (mixed.sum(-1) ** 2).mean()


def train(model, batches):
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    losses = []
    for ids in batches:
        loss = model(ids)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses
'''


def test_an_embedding_padding_row_receives_no_gradient():
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = _convert(PADDING)
    assert code.count("PaddedEmbedding(") == 2 and "nn.Embedding(vocab_size=6, embedding_size=3, padding_idx=None" \
        in code, code
    t_mod, m_mod = load_module(PADDING, "torch_padding"), load_module(code, "ms_padding")
    pretrained = np.random.RandomState(3).normal(0, 1, (6, 3)).astype(np.float32)
    torch.manual_seed(0)
    t_model, m_model = t_mod.Tables(torch.tensor(pretrained)), m_mod.Tables(ms.Tensor(pretrained))
    transfer_weights({k: v.detach().clone() for k, v in t_model.state_dict().items()}, m_model)
    rng = np.random.RandomState(1)
    batches = [rng.randint(0, 6, (4, 5)) for _ in range(4)]
    t_losses = t_mod.train(t_model, [torch.tensor(b) for b in batches])
    m_losses = m_mod.train(m_model, [ms.Tensor(b.astype(np.int32)) for b in batches])
    np.testing.assert_allclose(m_losses, t_losses, rtol=1e-5)
    tables = {n: p.detach().numpy() for n, p in t_model.named_parameters()}
    np.testing.assert_array_equal(tables["first.weight"][0], 0)
    np.testing.assert_array_equal(tables["loaded.weight"][1], pretrained[1])
    for (name, t), m in zip(tables.items(), [p.asnumpy() for p in m_model.trainable_params()]):
        np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6, err_msg=name)


# ``hasattr(torch.backends, "mps") and torch.backends.mps.is_available()`` (zeroling147/mini-transformer's device
# chooser): the probe's read of ``torch.backends`` was MP104 and kept the port's ``import torch``. The probe is now
# torch's answer, for every submodule of torch.backends (pkgutil over its path, the private ones included) and a name
# it lacks, through ``import torch``, ``import torch as th`` and ``from torch import backends``; the guarded
# ``mps.is_available()`` is False (no MPS backend in MindSpore).
def test_a_torch_backends_probe_is_torchs_answer_and_reads_no_torch():
    import pkgutil

    import torch
    import torch.backends

    names = sorted(m.name for m in pkgutil.iter_modules(torch.backends.__path__)) + ["nope"]
    for header, owner in (("import torch", "torch.backends"), ("import torch as th", "th.backends"),
                          ("from torch import backends", "backends")):
        source = header + "\n\n\ndef probes():\n    return [" + ", ".join(
            f"hasattr({owner}, {n!r})" for n in names) + "]\n\n\ndef choose():\n    if hasattr(" + owner + \
            ", 'mps') and " + owner + ".mps.is_available():\n        return 'mps'\n    return 'cpu'\n"
        code = _convert(source)
        assert "torch" not in code and "mindport: MP" not in code, code
        module = load_module(code, "ms_probes")
        assert module.probes() == [hasattr(torch.backends, n) for n in names], (header, names)
        assert module.choose() == "cpu"


# 2xic's adversarial cryptography: inside one outer loop, an inner loop steps Eve (a project helper clips Eve's .grad
# between backward and step) and a second steps Alice and Bob from ONE backward with two optimizers. The native
# rewrite took both inner loops: it hoisted two forward_fn/grad_fn pairs of the same names before the outer loop (the
# second replaced the first: Eve's step got Alice's gradients, a shape error), stepped Bob with Alice's gradients,
# and the helper's clip of .grad never reached the tuple of gradients the step used. Now a loop whose backward several
# optimizers step, or that calls a project helper between backward and step, is the general region's (.grad kept),
# and hoisted names are never reused in the scope. Also two plain sibling loops (both native) in one outer loop, each
# with its own model: their hoisted functions must not replace each other. Losses and weights against torch's.
PLAYERS = '''
import torch
import torch.nn as nn


def clip_all(model, value):
    nn.utils.clip_grad_value_(model.parameters(), value)


def players(alice, bob, eve, batches):
    opt_e = torch.optim.Adam(eve.parameters(), lr=0.05)
    opt_a = torch.optim.Adam(alice.parameters(), lr=0.05)
    opt_b = torch.optim.Adam(bob.parameters(), lr=0.05)
    losses = []
    for x in batches:
        for _ in range(2):
            opt_e.zero_grad()
            eve_loss = ((eve(alice(x)) - x) ** 2).mean() * 40.0
            eve_loss.backward()
            clip_all(eve, 0.05)
            opt_e.step()
        for _ in range(1):
            opt_a.zero_grad()
            opt_b.zero_grad()
            code = alice(x)
            ab_loss = ((bob(code) - x) ** 2).mean() - 0.5 * ((eve(code) - x) ** 2).mean()
            ab_loss.backward()
            opt_a.step()
            opt_b.step()
        losses += [float(eve_loss), float(ab_loss)]
    return losses


def siblings(first, second, batches):
    opt_1 = torch.optim.SGD(first.parameters(), lr=0.1)
    opt_2 = torch.optim.SGD(second.parameters(), lr=0.1)
    losses = []
    for x in batches:
        for _ in range(2):
            opt_1.zero_grad()
            loss_1 = (first(x) ** 2).mean()
            loss_1.backward()
            opt_1.step()
        for _ in range(2):
            opt_2.zero_grad()
            loss_2 = ((second(x) - 1.0) ** 2).mean()
            loss_2.backward()
            opt_2.step()
        losses += [float(loss_1), float(loss_2)]
    return losses
'''


def test_one_backward_for_several_optimizers_and_helpers_between_backward_and_step():
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = _convert(PLAYERS)
    t_mod, m_mod = load_module(PLAYERS, "torch_players"), load_module(code, "ms_players")
    batches = [np.random.RandomState(s).normal(0, 1, (8, 4)).astype(np.float32) for s in range(3)]
    for train, count in (("players", 3), ("siblings", 2)):
        torch.manual_seed(0)
        t_nets = [torch.nn.Linear(4, 4) for _ in range(count)]
        m_nets = [ms.nn.Dense(4, 4) for _ in range(count)]
        for t, m in zip(t_nets, m_nets):
            transfer_weights({k: v.detach().clone() for k, v in t.state_dict().items()}, m)
        t_losses = getattr(t_mod, train)(*t_nets, [torch.tensor(b) for b in batches])
        m_losses = getattr(m_mod, train)(*m_nets, [ms.Tensor(b) for b in batches])
        np.testing.assert_allclose(m_losses, t_losses, rtol=1e-5, err_msg=train)
        for t, m in zip(t_nets, m_nets):
            np.testing.assert_allclose(m.weight.asnumpy(), t.weight.detach().numpy(), rtol=1e-4, atol=1e-6)
