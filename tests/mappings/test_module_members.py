"""torch.nn.Module's public members, enumerated from the installed torch (mindport/mappings/data/surface/
module_members.toml, session 49): each has one entry saying what a call and a value read convert to. A member read as
a value (a bound method stored, passed, tested for truth: RS-CNN's RandomDropout hands ``self.train`` on as a flag)
raised AttributeError on the Cell for 30 of the 34 members the runtime now binds (benchmarks/objsurf_sweep.py: 30
loud, 4 ok before; 34 ok after). Each bound one is run in torch and on MindSpore, values compared; a flagged one is
reported (MP101), never an AttributeError without a message. Real torch, real MindSpore."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from mindport.mappings.surface import member_values, module_members


def test_every_public_member_of_nn_module_has_one_entry():
    import mindspore as ms
    import torch

    from mindport.runtime import containers

    public = {n for n in dir(torch.nn.Module) if not n.startswith("_")}
    assert set(module_members()) == public
    assert set(containers._BOUND) == member_values("bound")  # noqa: SLF001 - the runtime binds exactly the table's
    for name, entry in module_members().items():
        assert ("use" in entry) == (entry["value"] == "bound"), name
        if entry["value"] == "same":  # the Cell's own member, which the call reaches too
            assert hasattr(ms.nn.Cell, name), name


@pytest.mark.parametrize("name", sorted(member_values("bound")))
def test_a_member_read_as_a_value_means_what_torchs_bound_method_does(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "objsurf_sweep", Path(__file__).resolve().parents[2] / "benchmarks" / "objsurf_sweep.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    from mindport.proofs.surface import member_value_program

    kind, detail = sweep.classify(name, member_value_program(name), (2, 4))
    assert kind == "ok", detail


@pytest.mark.parametrize("name", sorted(member_values("flag")))
def test_a_member_with_no_counterpart_read_as_a_value_is_flagged(name):
    from mindport import convert_source

    source = textwrap.dedent(f"""\
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.kept = self.{name}

            def forward(self, x):
                return self.fc(x)
        """)
    found = [d for d in convert_source(source).diagnostics if d.code == "MP101"]
    assert found and found[0].api == f"torch.nn.Module.{name}", found


RANDOM_SCALE = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def scaled(x, p, train):
        if train:
            return x * (1.0 - p)
        return x


    class RandomScale(nn.Module):
        # RS-CNN's RandomDropout: self.train (a bound method, truthy) handed on as the training flag
        def __init__(self, p=0.25):
            super().__init__()
            self.p = p
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return scaled(self.fc(x), self.p, self.train)
''')


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_self_train_handed_on_as_a_flag_in_forward(tmp_path, mode):
    import mindspore as ms
    import torch

    from mindport import convert_source, transfer_weights
    from tests.converter.port_check import load_module

    t_mod = load_module(RANDOM_SCALE, tmp_path / f"t_rs_{mode}.py", f"t_rs_{mode}")
    m_mod = load_module(convert_source(RANDOM_SCALE).code, tmp_path / f"m_rs_{mode}.py", f"m_rs_{mode}")
    torch.manual_seed(0)
    t_net, m_net = t_mod.RandomScale().eval(), m_mod.RandomScale()
    m_net.set_train(False)
    assert transfer_weights(t_net.state_dict(), m_net).ok
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    assert not np.allclose(want, t_net.fc(torch.from_numpy(x)).detach().numpy())  # the flag was truthy in torch
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = m_net(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_sub_modules_member_read_as_a_value_and_a_projects_own_member():
    """``self.encoder.eval`` stored in __init__ binds torch's meaning; a project's own ``train`` (a trainer object's,
    a class's own method) is its own."""
    from mindport import convert_source
    from tests.converter.port_check import load_module

    source = textwrap.dedent('''\
        import torch.nn as nn


        class Trainer:
            def train(self):
                return "own"


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
                self.trainer = Trainer()
                self.freeze = self.enc.eval
                self.run_trainer = self.trainer.train

            def forward(self, x):
                return self.enc(x)
    ''')
    code = convert_source(source).code
    assert "method_of(self.enc, 'eval')" in code, code
    net = load_module(code, Path("/tmp") / "m_sub_member49.py", "m_sub_member49").Net()
    net.enc.set_train(True)
    assert net.freeze() is net.enc and not net.enc.training
    assert net.run_trainer() == "own"
