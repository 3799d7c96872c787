"""nn.Module's hook registrations, enumerated from the installed torch: each is accounted for in the object-surface
data, and each, called as model code calls it (``self._register_load_state_dict_pre_hook(fn)``, gpt-fast), converts
to a call the Cell takes, which returns a removable handle; none is left to fail with an AttributeError."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_source
from mindport.mappings.surface import load_surface

HOOK_MEMBERS = sorted(n for n in dir(torch.nn.Module)
                      if "hook" in n and (n.startswith("register") or n.startswith("_register")))


def test_the_enumeration_is_torch_s():
    assert {"register_forward_hook", "register_full_backward_hook", "_register_load_state_dict_pre_hook",
            "_register_state_dict_hook", "register_load_state_dict_post_hook"} <= set(HOOK_MEMBERS)


@pytest.mark.parametrize("name", HOOK_MEMBERS)
def test_each_hook_registration_is_in_the_surface_data(name):
    member = load_surface().member(f"torch.nn.Module.{name}")
    assert member is not None and member.ends in ("converted", "flagged") and member.how


@pytest.mark.parametrize("name", HOOK_MEMBERS)
def test_each_hook_registration_converts_to_a_call_the_cell_takes(name):
    source = textwrap.dedent(f"""
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, hook):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.handle = self.{name}(hook)

            def forward(self, x):
                return self.fc(x)
    """)
    result = convert_source(source, "hooks.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    namespace: dict = {}
    exec(compile(result.code, "hooks.py", "exec"), namespace)  # noqa: S102 - our own converted test program
    net = namespace["Net"](lambda *args: None)
    assert isinstance(net, ms.nn.Cell)
    out = net(ms.Tensor(np.ones((2, 4), np.float32)))
    assert out.shape == (2, 3)
    net.handle.remove()


def test_a_private_load_state_dict_pre_hook_is_called_as_torch_calls_it():
    """torch's private form passes no module unless with_module=True; the Cell's public hook always passes it."""
    source = textwrap.dedent("""
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.seen = []
                self._register_load_state_dict_pre_hook(self.remap)
                self._register_load_state_dict_pre_hook(self.remap_with_module, with_module=True)

            def remap(self, state_dict, prefix, *args):
                self.seen.append(("plain", prefix, sorted(state_dict)))

            def remap_with_module(self, module, state_dict, prefix, *args):
                self.seen.append(("module", module is self, sorted(state_dict)))

            def forward(self, x):
                return self.fc(x)
    """)
    result = convert_source(source, "hooks.py")
    namespace: dict = {}
    exec(compile(result.code, "hooks.py", "exec"), namespace)  # noqa: S102 - our own converted test program
    net = namespace["Net"]()
    net.load_state_dict(net.state_dict())  # the Cell's own load_state_dict runs the hooks
    assert [s[:2] for s in net.seen] == [("plain", ""), ("module", True)]
    assert net.seen[0][2] == net.seen[1][2] and net.seen[0][2]
