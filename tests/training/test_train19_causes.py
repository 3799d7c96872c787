"""Session train19 (issue 27): causes found in the training corpus and a known wrong rewrite. One test each, on
real torch and real MindSpore, each failing without the fix; expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# A scalar autograd engine of the file's own (micrograd's shape, written here): a class with arithmetic dunders
# that records its parents and a `backward(self)` walking them in reverse topological order. The script trains a
# tiny tanh neuron with it (plain Python floats), next to a torch Linear trained as usual, so the file is a torch
# file the converter rewrites; the engine's `.backward()` calls (on a value made by the class, by arithmetic on its
# values, by a method of the class, and by a function returning one) are not torch's.
ENGINE_CLASS = '''
import math


class Num:
    def __init__(self, data, parents=()):
        self.data = float(data)
        self.grad = 0.0
        self._parents = parents
        self._back = lambda: None

    def __add__(self, other):
        other = other if isinstance(other, Num) else Num(other)
        out = Num(self.data + other.data, (self, other))

        def back():
            self.grad += out.grad
            other.grad += out.grad
        out._back = back
        return out

    def __radd__(self, other):
        return self + other

    def __mul__(self, other):
        other = other if isinstance(other, Num) else Num(other)
        out = Num(self.data * other.data, (self, other))

        def back():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._back = back
        return out

    def __rmul__(self, other):
        return self * other

    def __sub__(self, other):
        return self + other * -1.0

    def tanh(self):
        t = math.tanh(self.data)
        out = Num(t, (self,))

        def back():
            self.grad += (1.0 - t * t) * out.grad
        out._back = back
        return out

    def backward(self):
        order, seen = [], set()

        def visit(v):
            if id(v) not in seen:
                seen.add(id(v))
                for p in v._parents:
                    visit(p)
                order.append(v)
        visit(self)
        self.grad = 1.0
        for v in reversed(order):
            v._back()
'''

ENGINE_SCRIPT = '''
import torch
{engine_import}

ws = [Num(0.3), Num(-0.2), Num(0.1)]
b = Num(0.05)
params = ws + [b]
xs = [[1.0, 2.0, -1.0], [2.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
ys = [0.5, -0.5, -0.25, 0.75]


def neuron(x):
    s = b
    for w, xi in zip(ws, x):
        s = s + w * xi
    return s.tanh()


def squared_error(preds, targets):
    total = Num(0.0)
    for p, t in zip(preds, targets):
        d = p - t
        total = total + d * d
    return total


u = Num(2.0)
v = u * Num(-3.0) + u
v.backward()
print("step", v.data, u.grad)

net = torch.nn.Linear(3, 1)
with torch.no_grad():
    net.weight.copy_(torch.tensor([[0.2, -0.1, 0.4]]))
    net.bias.fill_(0.0)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
X = torch.tensor(xs)
Y = torch.tensor(ys).unsqueeze(1)
for step in range(6):
    for p in params:
        p.grad = 0.0
    loss = squared_error([neuron(x) for x in xs], ys)
    loss.backward()
    for p in params:
        p.data -= 0.1 * p.grad
    opt.zero_grad()
    tl = ((net(X) - Y) ** 2).mean()
    tl.backward()
    opt.step()
    print("step", loss.data, ws[0].data, tl.item())
'''


def _engine_checks(t, m, code):
    assert len(t) == len(m) == 7, (t, m, code)
    # the engine's own first backward: v = u * -3 + u, dv/du = -2 (Python floats: exact)
    assert t[0] == [-4.0, -2.0] and m[0] == t[0], (m[0], code)
    np.testing.assert_allclose(np.array(m[1:]), np.array(t[1:]), rtol=1e-5)
    assert t[-1][0] < t[1][0] and t[-1][2] < t[1][2]  # both learn


def test_a_scalar_autograd_engine_of_the_files_own_keeps_its_backward():
    """`.backward()` on an object of a class the file defines with its own `backward(self)` (micrograd's Value shape)
    was rewritten into value_and_grad (before the fix: NameError/refusal at run time, the engine's gradients never
    computed): its receiver, made by the class, by arithmetic on its values, by its method `tanh()`, or returned by a
    function building one, is now of kind "engine" and left exactly as written, with `s.tanh()`, the class's own
    `self.grad += ...` and the update `p.data -= lr * p.grad` over a list of its values; the torch model beside it
    is converted as usual."""
    source = ENGINE_SCRIPT.format(engine_import=ENGINE_CLASS)
    code = _convert(source)
    assert "v.backward()" in code and "loss.backward()" in code and "s.tanh()" in code, code
    assert "p.data -= 0.1 * p.grad" in code and "self.grad += out.grad" in code, code
    assert "tl.backward()" not in code, code  # torch's own backward is still converted
    _engine_checks(_losses(source, "torch_engine"), _losses(code, "ms_engine"), code)


def test_a_scalar_autograd_engine_in_a_module_next_to_the_script(tmp_path):
    """The same engine class in its own module of the project (`from engine import Num`), converted as a tree: the
    constructor call and the helpers returning its values are known from the project's classes."""
    from mindport import convert_path
    from test_fresh18_causes import _run_in_folder

    src, out = tmp_path / "src", tmp_path / "out"
    (src / "mg").mkdir(parents=True)
    (src / "mg" / "engine.py").write_text(ENGINE_CLASS)
    (src / "mg" / "main.py").write_text(ENGINE_SCRIPT.format(engine_import="from engine import Num"))
    convert_path(src, out, jobs=1)
    code = (out / "mg" / "main.py").read_text()
    assert "v.backward()" in code and "loss.backward()" in code and "tl.backward()" not in code, code
    assert (out / "mg" / "engine.py").read_text() == ENGINE_CLASS
    _engine_checks(_run_in_folder(src / "mg"), _run_in_folder(out / "mg"), code)


def test_only_classes_with_their_own_backward_and_no_torch_base_are_engines():
    """Neither a layer with a `backward` method, nor an `autograd.Function`, nor a class whose `backward` needs an
    argument (a flow's inverse `backward(self, z)`) is an engine; a project class based on an engine class is one."""
    from mindport.migrator.project import engine_classes
    import ast

    tree = ast.parse('''
import torch
class Flow(torch.nn.Module):
    def backward(self):
        return 0
class Sq(torch.autograd.Function):
    @staticmethod
    def backward(ctx, g):
        return g
class Inverse:
    def backward(self, z):
        return z
class Value:
    def backward(self, retain=False):
        pass
class Leaf(Value):
    pass
''')
    assert engine_classes([tree]) == frozenset({"Value", "Leaf"})


def test_only_a_script_that_records_has_its_dropout_keep_masks(tmp_path):
    """mindport.runtime.training patched MindSpore's nn.Dropout for every script that imported it (every converted
    training loop): each Dropout built in PyNative ran a Python construct and held up to 64 masks per layer, in
    scripts that never record a value. Now a plain training script (no recorded values) trains with MindSpore's own
    Dropout and holds no mask, with the losses of torch (its one Dropout in the model has p=0: the draws do
    not matter); a converted file that records calls keep_dropout_masks() after its imports (the REINFORCE shapes of
    test_train17_causes/test_fresh7_causes still run with their masks)."""
    import subprocess
    import sys

    from _harness import child_env

    plain = '''
import torch
import torch.nn as nn

x = torch.linspace(-1.0, 1.0, 24).reshape(8, 3)
y = x.sum(1, keepdim=True) * 0.5
model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.0), nn.Linear(4, 1))
drop = nn.Dropout(0.5)
with torch.no_grad():
    model[0].weight.copy_(torch.linspace(-0.5, 0.5, 12).reshape(4, 3))
    model[0].bias.zero_()
    model[2].weight.copy_(torch.linspace(0.3, -0.3, 4).reshape(1, 4))
    model[2].bias.zero_()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", loss.item())
_ = drop(x)
'''
    code = _convert(plain)
    assert "mp_train." in code and "keep_dropout_masks" not in code, code
    probe = code + '''
import mindspore as _ms
from mindport.runtime import training as _train
print("own construct", type(drop).construct is _ms.nn.Dropout.construct and "construct" not in vars(drop))
print("masks held", len(_train._DRAWN))
'''
    script = tmp_path / "plain.py"
    script.write_text(probe)
    env = child_env(OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "own construct True" in lines and "masks held 0" in lines, done.stdout
    m = [float(line.split()[-1]) for line in lines if line.startswith("step")]
    t = [v[0] for v in _losses(plain, "torch_plain_dropout")]
    np.testing.assert_allclose(m, t, rtol=1e-5)
    assert t[-1] < t[0]

    recording = _convert('''
import torch
import torch.nn as nn
from torch.distributions import Categorical

policy = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2), nn.Softmax(dim=-1))
opt = torch.optim.SGD(policy.parameters(), lr=0.1)


def act(state, saved):
    m = Categorical(policy(state))
    action = m.sample()
    saved.append(m.log_prob(action))


def finish(saved):
    loss = -torch.stack(saved).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
''')
    head, _, rest = recording.partition("mp_train.keep_dropout_masks()\n")
    assert rest and "nn.Dropout" in rest and "mp_train.record(" in rest and "import" not in rest, recording
