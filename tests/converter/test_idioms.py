"""Converter idioms (mindport/migrator/rules/), each checked on the converted text and, where it runs, by
running the MindSpore output against torch."""
from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from mindport import convert_source
from tests.source_module import load_source


AUTOGRAD_SRC = textwrap.dedent('''\
    import torch
    from torch.autograd import Function


    class ScaledSquare(Function):
        """y = k * x * x * w, with a hand-written backward."""

        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            ctx.k = 3.0
            return ctx.k * x * x * w

        @staticmethod
        def backward(ctx, grad_output):
            x, w = ctx.saved_tensors
            return grad_output * 2 * ctx.k * x * w, grad_output * ctx.k * x * x


    class ClampGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x > 0) * 0.5


    class FirstOnly(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g, None


    def f(x, w):
        return ScaledSquare.apply(x, w).sum() + ClampGrad.apply(x).sum() + FirstOnly.apply(x, w).sum()
''')


def test_autograd_function_becomes_cell_with_bprop(tmp_path):
    result = convert_source(AUTOGRAD_SRC)
    assert result.diagnostics == []
    code = result.code
    assert "class ScaledSquare(nn.Cell):" in code and "class ClampGrad(nn.Cell):" in code
    assert "def construct(self, x, w):" in code and "def bprop(self, x, w, out, grad_output):" in code
    assert "self.saved_tensors = (x, w)" in code and "@staticmethod" not in code
    assert "ScaledSquare()(x, w)" in code and ".apply(" not in code
    assert "ops.zeros_like(y)" in code
    assert "torch" not in code.replace("mindspore", "")


def test_autograd_function_gradients_match_torch(tmp_path):
    import mindspore as ms
    import torch

    module = load_source(convert_source(AUTOGRAD_SRC).code, tmp_path, "autograd_fn")
    torch_ns: dict = {}
    exec(compile(AUTOGRAD_SRC, "torch_autograd_src", "exec"), torch_ns)  # the original, on torch
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    torch_ns["f"](tx, tw).backward()
    value, (gx, gw) = ms.value_and_grad(module.f, grad_position=(0, 1))(ms.Tensor(x), ms.Tensor(w))
    np.testing.assert_allclose(value.asnumpy(), torch_ns["f"](tx, tw).detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(gx.asnumpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    # the custom backward is what ran (it differs from autodiff of forward for ClampGrad)
    auto = 2 * 3.0 * x * w + 1.0 + 1.0
    assert not np.allclose(gx.asnumpy(), auto)


# ------------------------------------------------------------------------------------------ einops

EINOPS_SRC = textwrap.dedent('''\
    import torch
    import torch.nn as nn
    from einops import rearrange, reduce, repeat
    from einops.layers.torch import Rearrange, Reduce


    class PatchNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.to_patches = Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2)
            self.pool = Reduce("b n d -> b d", "mean")
            self.proj = nn.Linear(12, 5)

        def forward(self, x):
            tokens = self.proj(self.to_patches(x))
            pooled = self.pool(tokens)
            wide = repeat(pooled, "b d -> b d r", r=2)
            flat = rearrange(wide, "b d r -> b (d r)")
            return flat + repeat(reduce(tokens, "b n d -> b d", "max"), "b d -> b (r d)", r=2)
''')


def test_einops_calls_and_layers_run_on_mindspore(tmp_path):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    result = convert_source(EINOPS_SRC)
    assert result.diagnostics == []
    # literal patterns are written out as MindSpore operations (EinopsPatternTransform), the layers as Cells of the
    # file; no einops call, layer or import is left, nor the einops backend
    assert "class Rearrange1(nn.Cell)" in result.code and "class Reduce1(nn.Cell)" in result.code
    assert "einops import" not in result.code and "mindport" not in result.code
    assert "rearrange(" not in result.code and "repeat(" not in result.code and "reduce(" not in result.code
    ms_mod = load_source(result.code, tmp_path, "einops_ms")
    torch_ns: dict = {}
    exec(compile(EINOPS_SRC, "einops_torch", "exec"), torch_ns)
    tnet = torch_ns["PatchNet"]().eval()
    mnet = ms_mod.PatchNet()
    transfer_weights(tnet.state_dict(), mnet)
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 4)).astype(np.float32)
    with torch.no_grad():
        expected = tnet(torch.from_numpy(x)).numpy()
    got = mnet(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    ms.set_context(mode=ms.GRAPH_MODE)  # the written-out operations and layers compile
    try:
        compiled = mnet(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(compiled, expected, rtol=1e-5, atol=1e-6)
    # converting again changes nothing (the runtime import is not repeated)
    assert convert_source(result.code).code == result.code


@pytest.mark.parametrize("pattern, kwargs, op", [
    ("b c h w -> b (h w) c", {}, "rearrange"),
    ("b c (h p) w -> b (c p) h w", {"p": 2}, "rearrange"),
    ("b c h w -> b c", {}, ("reduce", "mean")),
    ("b c h w -> c", {}, ("reduce", "max")),
    ("b c h w -> b c", {}, ("reduce", "sum")),
    ("b c h w -> b c h w r", {"r": 3}, "repeat"),
    ("b c h w -> (b r) c h w", {"r": 2}, "repeat"),
])
def test_einops_functions_on_mindspore_tensors_match_torch(pattern, kwargs, op):
    import einops
    import mindspore as ms
    import torch

    import mindport.runtime.einops_backend  # noqa: F401

    x = np.random.default_rng(2).standard_normal((2, 3, 4, 6)).astype(np.float32)
    if isinstance(op, tuple):
        fn = lambda t: einops.reduce(t, pattern, op[1], **kwargs)  # noqa: E731
    else:
        fn = lambda t: getattr(einops, op)(t, pattern, **kwargs)  # noqa: E731
    np.testing.assert_allclose(fn(ms.Tensor(x)).asnumpy(), fn(torch.from_numpy(x)).numpy(), rtol=1e-6)


# ------------------------------------------------------------------------------------------ device code

DEVICE_SRC = textwrap.dedent('''\
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    gpu1 = torch.device("cuda:1")
    cpu = torch.device("cpu")
    model = build().to(device)
    x = batch.cuda()
    y = x.cpu()
    model = torch.nn.DataParallel(model)
''')


def test_device_code_becomes_set_device_on_new_versions():
    result = convert_source(DEVICE_SRC, ms_version=(2, 10))
    code = result.code
    assert result.diagnostics == []
    assert 'device = "cuda" if mp_framework.cuda_available() else "cpu"' in code
    # the runtime takes an accelerator only where ms.hal finds one (test_hard_coded_accelerator_imports_where_torch_does)
    assert "mp_framework.select_device(device)" in code
    assert 'mp_framework.select_device("GPU", 1)' in code
    assert 'mp_framework.select_device("CPU")' in code
    assert "model = build()\n" in code and "x = batch\n" in code and "y = x\n" in code
    assert "model = model\n" in code
    assert "torch" not in code.replace("mindspore", "")
    assert convert_source(code).code == code  # idempotent: no second set_device


def test_hard_coded_accelerator_imports_where_torch_does(tmp_path):
    """DropEdge's models.py: ``device = torch.device("cuda:0")`` at module level of a library file, used only on
    paths a CPU run never takes. torch imports it on a CPU machine; the port must too (it set the GPU, which
    raised "Unsupported device target GPU"), and then computes on the CPU. Run in a fresh process: MindSpore
    takes a device only before its first kernel."""
    import subprocess
    import sys

    source = textwrap.dedent('''\
        import torch

        device = torch.device("cuda:0")
        spec = "cuda"
        chosen = torch.device(spec)


        def double(x):
            return x * 2
    ''')
    (tmp_path / "models.py").write_text(convert_source(source, ms_version=(2, 10)).code)
    check = textwrap.dedent("""\
        import mindspore as ms
        import numpy as np

        import models

        assert ms.get_context("device_target") == "CPU"
        print(models.double(ms.Tensor(np.array([1.5, -2.0], np.float32))).asnumpy().tolist())
    """)
    run = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "[3.0, -4.0]"


def test_device_code_uses_set_context_on_old_versions():
    code = convert_source(DEVICE_SRC, ms_version=(2, 2)).code
    assert 'ms.set_context(device_target="GPU", device_id=1)' in code
    assert 'ms.set_context(device_target="CPU")' in code
    assert "set_device" not in code
    assert 'mp_framework.cuda_available()' in code  # (the run-time function reads ms.get_context before ms.hal)


# ------------------------------------------------------------------------------------------ module containers & methods

MODULE_SRC = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
            self.scales = nn.ParameterList([nn.Parameter(torch.ones(4)) for _ in range(2)])
            self.extra = nn.ParameterDict({"shift": nn.Parameter(torch.zeros(4))})
            self.register_parameter("bias", nn.Parameter(torch.zeros(4)))
            self.frozen = nn.Linear(4, 4)
            self.frozen.requires_grad_(False)
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    nn.init.xavier_uniform_(m.weight)
                    nn.init.zeros_(m.bias)
            for name, child in self.named_children():
                pass
            self.n_children = len(list(self.children()))

        def forward(self, x):
            for block, scale in zip(self.blocks, self.scales):
                x = block(x) * scale
            return self.frozen(x) + self.bias + self.extra["shift"]
''')


def test_module_containers_and_methods(tmp_path):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    result = convert_source(MODULE_SRC)
    if any(d.code == "MP103" and d.api in ("torch.nn.Parameter", "torch.ones", "torch.zeros")
           for d in result.diagnostics):
        pytest.fail(f"mapping entries missing: {result.diagnostics}")
    assert result.diagnostics == []
    code = result.code
    assert "self.blocks = nn.CellList([" in code  # a list of Cells never added to: MindSpore's own container
    assert "mp_containers.ParameterList(" in code and "mp_containers.ParameterDict(" in code
    assert "from mindport.runtime import containers as mp_containers" in code
    assert 'mp_nn.register_parameter(self, "bias"' in code
    assert "for _p in self.frozen.get_parameters():\n            _p.requires_grad = False" in code
    assert "self.cells_and_names()" in code and "self.name_cells().items()" in code and "self.cells()" in code
    assert "XavierUniform(gain=1.0)" in code
    module = load_source(code, tmp_path, "containers_ms")
    net = module.Net()
    names = {n for n, _ in net.parameters_and_names()}
    assert {"scales.0", "scales.1", "extra.shift", "bias", "blocks.0.weight", "frozen.weight"} <= names
    assert not net.frozen.weight.requires_grad and net.blocks[0].weight.requires_grad
    assert net.n_children == 4
    torch_ns: dict = {}
    exec(compile(MODULE_SRC, "containers_torch", "exec"), torch_ns)
    tnet = torch_ns["Net"]()
    with torch.no_grad():
        for p in tnet.parameters():
            p.copy_(torch.randn(p.shape))
    report = transfer_weights(tnet.state_dict(), net)
    assert report.ok
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        expected = tnet(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(net(ms.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_isinstance_narrowing_uses_mindspore_parameter_names():
    src = textwrap.dedent('''\
        import torch.nn as nn
        def init(model):
            for m in model.modules():
                if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d)):
                    nn.init.constant_(m.weight, 1)
                    m.running_mean.zero_()
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, std=0.01)
            return m.weight
    ''')
    result = convert_source(src)
    code = result.code
    assert "isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d))" in code
    assert "m.gamma.set_data(" in code and "m.moving_mean" in code
    assert "Normal(mean=0.0, sigma=0.01)" in code and "m.weight.set_data(" in code
    # outside the isinstance branches m's class is not known: read by its class when the code runs
    assert code.rstrip().endswith("return mp_adapt.layer_attribute(m, 'weight')"), code



def test_isinstance_narrowing_to_a_layer_with_nested_parameters():
    """``isinstance(m, nn.BatchNorm3d)`` (3D-ResNets' init loop): MindSpore's BatchNorm3d keeps its parameters in a
    wrapped 2d layer, so ``m.weight`` is ``m.bn2d.gamma``. The converter crashed on the dotted name (the file was
    copied unconverted, MP299); the port now builds and initialises as torch does."""
    import mindspore as ms

    src = textwrap.dedent('''\
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm3d(4)
                for m in self.modules():
                    if isinstance(m, nn.BatchNorm3d):
                        nn.init.constant_(m.weight, 2)
                        nn.init.constant_(m.bias, 0.5)
    ''')
    result = convert_source(src)
    assert "m.bn2d.gamma.set_data(" in result.code, result.code
    namespace: dict = {}
    exec(compile(result.code, "converted", "exec"), namespace)
    bn = namespace["Net"]().bn
    assert isinstance(bn, ms.nn.BatchNorm3d)
    np.testing.assert_array_equal(bn.bn2d.gamma.asnumpy(), np.full(4, 2, np.float32))
    np.testing.assert_array_equal(bn.bn2d.beta.asnumpy(), np.full(4, 0.5, np.float32))



def test_narrowing_to_layers_that_disagree_reads_at_run_time():
    """``isinstance(m, nn.BatchNorm3d) or isinstance(m, nn.BatchNorm2d)`` (3D-ResNets' DenseNet) and ``isinstance(m,
    (nn.Embedding, nn.Linear))``: the layers keep torch's ``weight`` under different names (``bn2d.gamma``,
    ``gamma``, ``embedding_table``, ``weight``), so the read is resolved by the object's class when it happens; an
    ``or`` of isinstance tests narrows like a tuple."""
    import mindspore as ms

    src = textwrap.dedent('''\
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn3 = nn.BatchNorm3d(4)
                self.bn2 = nn.BatchNorm2d(3)
                self.bn1 = nn.BatchNorm1d(2)
                self.emb = nn.Embedding(5, 3)
                self.fc = nn.Linear(3, 2)
                for m in self.modules():
                    if isinstance(m, nn.BatchNorm3d) or isinstance(m, nn.BatchNorm2d):
                        m.weight.data.fill_(2)
                        nn.init.constant_(m.bias, 0.5)
                    elif isinstance(m, nn.BatchNorm1d) or isinstance(m, nn.BatchNorm2d):
                        m.weight.data.fill_(3)
                    elif isinstance(m, (nn.Embedding, nn.Linear)):
                        m.weight.data.fill_(4)
    ''')
    result = convert_source(src)
    assert "mp_adapt.layer_attribute(m, 'weight')" in result.code and "m.gamma" in result.code, result.code
    namespace: dict = {}
    exec(compile(result.code, "converted", "exec"), namespace)
    net = namespace["Net"]()
    assert isinstance(net.bn3, ms.nn.BatchNorm3d)
    for got, want in ((net.bn3.bn2d.gamma, 2), (net.bn3.bn2d.beta, 0.5), (net.bn2.gamma, 2), (net.bn2.beta, 0.5),
                      (net.bn1.gamma, 3), (net.emb.embedding_table, 4), (net.fc.weight, 4)):
        np.testing.assert_array_equal(got.asnumpy(), np.full(got.shape, want, np.float32))

def test_inits_of_fresh_tensors_fill_and_return_them():
    """``nn.init.orthogonal_(torch.randn(d, d))`` (normalizing flows' 1x1 convolution) and ``nn.init.xavier_uniform_``
    of a local ``torch.empty``: in MindSpore these are plain Tensors, with no ``set_data``, and the inline form ran
    the argument three times. They go to mindport.runtime.init, which fills the tensor and returns it; a Parameter
    (``self.v``) keeps the inline form."""
    import mindspore as ms

    src = textwrap.dedent('''\
        import torch
        import torch.nn as nn


        class Flow(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.P = nn.Parameter(torch.nn.init.orthogonal_(torch.randn(dim, dim)))
                w = torch.empty(dim, 2)
                nn.init.constant_(w, 0.25)
                self.w = nn.Parameter(w)
                self.v = nn.Parameter(torch.ones(2))
                nn.init.zeros_(self.v)
    ''')
    result = convert_source(src)
    assert "mp_init.orthogonal_(" in result.code and "mp_init.constant_(" in result.code, result.code
    assert "self.v.set_data(" in result.code, result.code
    namespace: dict = {}
    exec(compile(result.code, "converted", "exec"), namespace)
    flow = namespace["Flow"](4)
    assert isinstance(flow.P, ms.Parameter)
    np.testing.assert_allclose(flow.P.asnumpy() @ flow.P.asnumpy().T, np.eye(4), atol=1e-5)
    np.testing.assert_array_equal(flow.w.asnumpy(), np.full((4, 2), 0.25, np.float32))
    np.testing.assert_array_equal(flow.v.asnumpy(), np.zeros(2, np.float32))

def test_inits_mindspore_cannot_express_go_through_the_runtime():
    # the function's own arguments may be Parameters or plain tensors (set_data is a Parameter's only), and MindSpore's
    # gain table has no "selu": mindport.runtime.init takes those
    import mindspore as ms

    source = ("import torch.nn as nn\n\n\ndef init(w, v, u):\n    nn.init.uniform_(w, 0.5, 1.5)\n"
              "    nn.init.uniform_(v, -0.1, 0.1)\n    nn.init.kaiming_uniform_(u, nonlinearity='selu')\n")
    result = convert_source(source)
    assert not result.diagnostics
    assert "mp_init.uniform_(tensor=w" in result.code and "mp_init.uniform_(tensor=v" in result.code
    assert "mp_init.kaiming_uniform_(" in result.code
    namespace: dict = {}
    exec(compile(result.code, "converted", "exec"), namespace)
    w, v, u = (ms.Parameter(ms.Tensor(np.zeros((64, 32), np.float32)), name=n) for n in "wvu")
    namespace["init"](w, v, u)
    assert 0.5 <= w.asnumpy().min() and w.asnumpy().max() <= 1.5 and w.asnumpy().std() > 0.2
    assert abs(v.asnumpy()).max() <= 0.1 and v.asnumpy().std() > 0.04
    bound = (3 / 32) ** 0.5 * 0.75  # torch's gain for selu is 3/4; fan_in 32
    assert abs(u.asnumpy()).max() <= bound and abs(u.asnumpy()).max() > bound * 0.9


# ------------------------------------------------------------------------------------------ preservation

COMMENTED_SRC = '''\
#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""Module docstring, with 'single' and "double" quotes."""

# A comment block before the imports.
import torch  # trailing comment on an import
import torch.nn as nn


# Two blank lines above, a comment here.
class Net(nn.Module):  # the class
    """Docstring kept."""

    # comment before __init__
    def __init__(self):
        super().__init__()
        # comment before a layer
        self.fc = nn.Linear(
            4,  # in features
            2,  # out features
        )
        self.name = 'single-quoted'  # kept as written
        self.other = "double-quoted"


    def forward(self, x):  # forward comment
        # inside forward
        y = self.fc(x)  # call comment

        # after a blank line
        return torch.relu(y)  # final
# trailing module comment
'''


def test_comments_blank_lines_and_quotes_survive():
    result = convert_source(COMMENTED_SRC)
    assert result.diagnostics == []
    out = result.code
    edited = ("import torch", "import torch.nn", "class Net", "def forward", "return torch.relu", "self.fc = nn.Linear",
              "4,", "2,")
    for line in COMMENTED_SRC.splitlines():
        if not any(line.strip().startswith(e) for e in edited):
            assert line in out.splitlines(), f"lost or changed: {line!r}"
    assert "class Net(nn.Cell):  # the class" in out
    assert "def construct(self, x):  # forward comment" in out
    assert "return ops.relu(y)  # final" in out
    assert "            in_channels=4,  # in features\n" in out and "            out_channels=2,  # out features\n" in out
    assert out.count("\n\n\n") == COMMENTED_SRC.count("\n\n\n")
    assert out.startswith("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n")


def test_syntax_error_gives_mp201_and_the_code_back():
    src = "import torch\ndef f(:\n    return torch.zeros(1)\n"
    result = convert_source(src, "bad.py")
    assert result.code == src and not result.changed
    assert [d.code for d in result.diagnostics] == ["MP201"]
    diag = result.diagnostics[0]
    assert diag.file == "bad.py" and diag.line in (2, 3) and diag.column >= 1
    assert not result.ok


def test_custom_optimizer_step_becomes_construct_with_gradients():
    """The step of a hand-written optimizer reads p.grad; MindSpore calls optimizer(grads). (Its training run is
    compared with torch's in tests/training/loop_custom_optimizer.py.)"""
    src = (
        "import torch\n\n\nclass Plain(torch.optim.Optimizer):\n    def step(self, closure=None):\n"
        "        for group in self.param_groups:\n            for p in group['params']:\n"
        "                state = self.state[p]\n                state['buf'] = p.grad\n"
        "                state['buf'].mul_(0.5)\n                p.sub_(p.grad)\n\n\n"
        "class Odd(torch.optim.Optimizer):\n    def step(self, scale):\n        pass\n"
    )
    result = convert_source(src)
    assert "def construct(self, gradients, closure=None):" in result.code
    assert "_grads = {id(param): grad for param, grad in zip(self.parameters, gradients)}" in result.code
    assert "state['buf'] = _grads[id(p)]" in result.code
    assert "mp_inplace.mul_(state['buf']" in result.code  # a string key is a mapping's item, not a tensor view
    assert [(d.code, d.line) for d in result.diagnostics] == [("MP105", 15)]  # Odd.step(self, scale)


def test_an_einops_result_is_a_tensor_for_the_methods_called_on_it():
    """k = rearrange(...); k.softmax(dim=-1): einops gives back a tensor, so the method is converted (axis=)."""
    import mindspore as ms
    import torch

    source = textwrap.dedent('''\
        from einops import rearrange


        def f(x):
            k = rearrange(x, "b c h w -> b c (h w)")
            return k.softmax(dim=-1)
    ''')
    result = convert_source(source)
    assert result.diagnostics == [] and "softmax(dim" not in result.code, result.code
    torch_ns: dict = {}
    exec(compile(source, "t_einops_kind", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(result.code, "m_einops_kind", "exec"), ms_ns)
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(ms_ns["f"](ms.Tensor(x)).asnumpy(), torch_ns["f"](torch.from_numpy(x)).numpy(),
                               rtol=1e-5, atol=1e-6)


GRAPH_DEVICE = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def neighbours(x, k=2):
        device = torch.device("cuda")
        base = torch.arange(0, x.size(0), device=device).view(-1, 1) * x.size(1)
        return x.view(-1)[(base + torch.arange(k, device=device)).view(-1)].view(x.size(0), k)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 3)

        def forward(self, x):
            return self.fc(neighbours(x))
''')


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_device_line_in_a_function_forward_calls(tmp_path, mode):
    # Brent-Murray/point-dl's DGCNN (after WangYueFt/dgcnn): get_graph_feature's ``device = torch.device("cuda")``,
    # called from forward; its select_device line evaluated ms.hal.is_available in the graph ("'builtin_function_or_
    # method' object has no attribute '__code__'"): GRAPH_MODE failed. It does nothing in a graph now
    from port_check import assert_port_matches_in_mode

    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    on_cpu = GRAPH_DEVICE.replace('torch.device("cuda")', 'torch.device("cpu")')  # this torch has no CUDA
    run_time = GRAPH_DEVICE.replace('torch.device("cuda")', 'torch.device("cuda" if torch.cuda.is_available() else '
                                                             '"cpu")')
    for source, line in ((GRAPH_DEVICE, 'mp_framework.select_device("GPU")'),
                         (run_time, "mp_framework.select_device(device)")):
        code = convert_source(source).code
        assert line in code, code
        assert_port_matches_in_mode(on_cpu, code, "Net", [x], tmp_path, "graph_device", mode, atol=1e-6)
