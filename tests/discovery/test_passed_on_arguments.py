"""A factory that hands its own ``*args``/``**kwargs`` on (``return ResNet(8, [16, 32], **kwargs)``) still tells the
class's constructor: called without arguments, it is the literal part of the call. Without that, a class whose
required argument is a key of a table (``configs[net_size]``) only met guessed sizes and was "not built"."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from mindport.discovery.build import ctor_attempts
from mindport.discovery.scan import discover

NET = '''
    import torch
    import torch.nn as nn

    configs = {0.5: {"width": 8}, 1: {"width": 12}}


    class Net(nn.Module):
        def __init__(self, net_size, num_classes=10):
            super().__init__()
            width = configs[net_size]["width"]
            self.conv = nn.Conv2d(3, width, 3, padding=1)
            self.fc = nn.Linear(width, num_classes)

        def forward(self, x):
            return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


    class Deep(nn.Module):
        def __init__(self, depth, widths, kind, num_classes=10):
            super().__init__()
            assert kind == "basic" and len(widths) == depth
            self.fc = nn.Linear(widths[-1], num_classes)

        def forward(self, x):
            return self.fc(x)


    class Plain(nn.Module):  # no factory, no call: the table's keys are its values
        def __init__(self, net_size):
            super().__init__()
            self.fc = nn.Linear(3, configs[net_size]["width"])

        def forward(self, x):
            return self.fc(x)


    def net_v2(**kwargs):
        model = Net(net_size=1, **kwargs)
        return model


    def deep4(*args, **kw):
        return Deep(4, [8, 8, 16, 16], "basic", *args, **kw)


    def other(**kwargs):
        cfg = dict(kwargs)
        return Net(**cfg)  # not the factory's own kwargs handed on: no literal call
'''


def test_a_factorys_passed_on_arguments_leave_the_literal_call(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "net.py").write_text(textwrap.dedent(NET).lstrip(), encoding="utf-8")
    found = {c.key: c for c in discover(tmp_path)}
    assert found["models/net.py:Net"].ctors == ["net_size=1"]
    assert found["models/net.py:Deep"].ctors == ["4, [8, 8, 16, 16], 'basic'"]
    # the constructor text found builds the class in torch (the guessed sizes 16/8/32 are KeyErrors)
    probe = textwrap.dedent(NET) + textwrap.dedent('''
        for make in ("Net(net_size=1)", "Deep(4, [8, 8, 16, 16], 'basic')"):
            model = eval(make)
            print(type(model).__name__, tuple(model(torch.randn(2, 3, 8, 8) if make.startswith("Net")
                                                   else torch.randn(2, 16)).shape))
        for size in (16, 8, 32):
            try:
                Net(net_size=size)
            except KeyError:
                print("KeyError", size)
    ''')
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:5] == ["Net (2, 10)", "Deep (2, 10)", "KeyError 16", "KeyError 8", "KeyError 32"]


def test_a_parameter_used_as_a_key_of_a_module_table_takes_its_keys(tmp_path):
    (tmp_path / "net.py").write_text(textwrap.dedent(NET).lstrip(), encoding="utf-8")
    found = {c.key: c for c in discover(tmp_path)}
    plain = found["net.py:Plain"]
    assert plain.ctors == []
    attempts = ctor_attempts(plain.to_json(), None)
    assert attempts[0] == ("small values", "net_size=0.5"), attempts
    probe = textwrap.dedent(NET) + "\nprint(tuple(Plain(net_size=0.5)(torch.randn(2, 3)).shape))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "(2, 8)", out.stderr
