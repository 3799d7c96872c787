"""More root causes the peer-snippet benchmark (benchmarks/peer_snippets.py) found silent or failing: each a small
torch program of our own, converted by the real converter and run in both frameworks (see test_snippet_fixes)."""
from __future__ import annotations

import itertools

import numpy as np

import pytest

from tests.mappings.test_snippet_fixes import run_both

_FLAGS = (None, True, False)
_LOSSES = [
    ("torch.nn.MSELoss({})", "x = torch.linspace(-1, 2, 12).reshape(3, 4)\nt = torch.linspace(0, 1, 12).reshape(3, 4)",
     "x, t"),
    ("torch.nn.functional.nll_loss(x, t, {})", "x = torch.log_softmax(torch.linspace(-1, 2, 12).reshape(4, 3), 1)\n"
     "t = torch.tensor([0, 2, 1, 1])", None),
    ("torch.nn.MarginRankingLoss(0.2, {})", "x = torch.linspace(-1, 2, 5)\ny = torch.linspace(2, -1, 5)\n"
     "t = torch.tensor([1., -1., 1., 1., -1.])", "x, y, t"),
    ("torch.nn.TripletMarginLoss({})", "x = torch.linspace(-1, 2, 12).reshape(3, 4)\ny = x.flip(0)\nt = x * 0.5",
     "x, y, t"),
]


@pytest.mark.parametrize(("size_average", "reduce"), list(itertools.product(_FLAGS, _FLAGS)))
@pytest.mark.parametrize(("call", "setup", "operands"), _LOSSES)
def test_legacy_size_average_and_reduce_choose_the_reduction(call, setup, operands, size_average, reduce):
    """torch: either flag given overrides ``reduction``: mean when both hold (None holds), sum when only reduce does,
    none when reduce is false."""
    args = ", ".join(f"{name}={value}" for name, value in (("size_average", size_average), ("reduce", reduce))
                     if value is not None or size_average is reduce is None)
    expr = call.format(args + ", reduction='sum'")
    body = f"{setup}\nr = {expr}({operands})" if operands else f"{setup}\nr = {expr}"
    run_both("import torch\n" + body + "\n", ["r"])


@pytest.mark.parametrize("values", ["a, b = False, None", "a, b = True, False", "a, b = None, None"])
def test_legacy_flags_known_only_at_run_time(values):
    body = (f"{values}\nx = torch.linspace(-1, 2, 12).reshape(3, 4)\nt = torch.linspace(0, 1, 12).reshape(3, 4)\n"
            "r = torch.nn.functional.l1_loss(x, t, size_average=a, reduce=b, reduction='sum')\n"
            "r2 = torch.nn.L1Loss(reduce=b)(x, t)\n")
    run_both("import torch\n" + body, ["r", "r2"])


@pytest.mark.parametrize("body", [
    "x = torch.tensor([1, 2, -7], dtype=torch.int32)\nr = ~x\nr2 = torch.bitwise_not(x)",
    "x = torch.tensor([[0, 255], [3, 9]], dtype=torch.uint8)\nr = ~x\nr2 = ~x[0]",
    "x = torch.tensor([5, -1])\nr = ~(x * 2)\nr2 = x.bitwise_not()",
    "x = torch.tensor([True, False])\nr = ~x\nr2 = torch.bitwise_not(x)",
    "x = torch.tensor([1., 2.])\nr = ~(x > 1)\nr2 = ~torch.isnan(x)",
])
def test_invert_is_bitwise_for_integers_and_logical_for_bool(body):
    run_both("import torch\n" + body + "\n", ["r", "r2"])


def test_invert_on_a_tensor_in_forward():
    body = ("class M(torch.nn.Module):\n    def forward(self, x):\n        return ~x\n"
            "r = M()(torch.tensor([3, -4, 0]))\n")
    run_both("import torch\n" + body, ["r"])


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "int64"])
def test_bool_of_complex_is_nonzero(dtype):
    body = (f"x = torch.tensor([0.+3.5j, 0j, -1+0j, 2.-1j], dtype=torch.complex128).to(torch.{dtype}) "
            if dtype.startswith("complex") else f"x = torch.tensor([0., 3.5, -1., 0.]).to(torch.{dtype})")
    run_both("import torch\n" + body + "\nr = x.bool()\nr2 = x.to(torch.bool)\nr3 = x.type(torch.bool)\n",
             ["r", "r2", "r3"])


@pytest.mark.parametrize("attr", ["real", "imag"])
def test_real_and_imag_of_a_transpose(attr):
    body = (f"x = torch.tensor([[1+2j, 3-1j], [0.5j, 4]], dtype=torch.complex64)\nr = x.T.{attr}\n"
            f"r2 = x.mT.{attr} * 2\n")
    run_both("import torch\n" + body, ["r", "r2"])


def test_tensor_device_reads_as_torch_writes_it():
    import torch

    from mindport import convert_source

    program = ("import torch\nx = torch.ones(2).to('cpu')\nr = x.device\ns = str(x.device)\n"
               "same = x.device == torch.device('cpu')\nkind = x.device == torch.device('cuda')\n")
    code = convert_source(program).code
    t_space, m_space = {}, {}
    exec(program, t_space)  # noqa: S102 - the test's own program
    exec(code, m_space)  # noqa: S102
    assert str(t_space["r"]) == m_space["r"] == "cpu"
    assert t_space["s"] == m_space["s"]
    assert t_space["same"] is m_space["same"] is True and t_space["kind"] is m_space["kind"] is False
    assert isinstance(torch.device("cpu"), torch.device)


def test_tensor_dataset_items_are_tensors_and_feed_a_loader():
    body = ("from torch.utils.data import DataLoader, TensorDataset\n"
            "x = torch.arange(12, dtype=torch.float32).reshape(6, 2)\ny = torch.arange(6)\n"
            "data = TensorDataset(x, y)\nfirst = data[0]\nlast = data[-1]\nn = len(data)\nrows = [a for a, b in data]\n"
            "batches = [b for _, b in DataLoader(data, batch_size=4)]\n")
    t_space, m_space, _ = run_both("import torch\n" + body, ["first", "last", "rows", "batches"])
    assert t_space["n"] == m_space["n"] == 6


_LOOP = ("for epoch in range(3):\n    out = conv(inp)\n    loss = torch.mean(out ** 2)\n{zero}    loss.backward()\n"
         "    sgd.step()\n")


@pytest.mark.parametrize("zero_first", [False, True])
def test_gradients_summed_across_loops_without_zero_grad(zero_first):
    """torch's .grad keeps every backward() until zero_grad(): a second loop without it adds to what the first left.
    After a loop that resets .grad (zero_grad() between the forward and backward: the general backward region, which
    keeps .grad), the second loop must not start a fresh sum: it goes to the general region too and adds into .grad."""
    head = ("torch.manual_seed(0)\ninp = torch.linspace(-1, 1, 50).reshape(1, 1, 5, 10)\n"
            "conv = torch.nn.Conv2d(1, 1, 3)\nconv.weight = torch.nn.Parameter(torch.linspace(-0.5, 0.5, 9)"
            ".reshape(1, 1, 3, 3))\nconv.bias = torch.nn.Parameter(torch.tensor([0.1]))\n"
            "sgd = torch.optim.SGD(conv.parameters(), lr=0.05)\n")
    first = _LOOP.format(zero="    sgd.zero_grad()\n" if zero_first else "")
    program = "import torch\n" + head + first + _LOOP.format(zero="") + "w = conv.weight\nb = conv.bias\n"
    run_both(program, ["w", "b"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("args", ["16, 2", "16, 4, 0.0, False", "16, 2, kdim=8, vdim=8"])
def test_multihead_attention_leaves_numpy_stream_alone(args):
    """torch's layers initialise from torch's generator; MindSpore's initializers drew from NumPy's global one, so
    weights written from np.random after building the layer were other numbers."""
    body = (f"import numpy as np\nnp.random.seed(3)\nq = torch.ones(5, 2, 16)\nkv = torch.ones(5, 2, {8 if 'kdim' in args else 16})\n"
            f"attn = torch.nn.MultiheadAttention({args})\n"
            "for p in attn.parameters():\n    p.data = torch.from_numpy(np.random.random(p.shape).astype('float32') - 0.5)\n"
            "attn.eval()\nout, weights = attn(q, kv, kv)\nafter = torch.from_numpy(np.random.random(3))\n")
    run_both("import torch\n" + body, ["out", "weights", "after"], rtol=1e-4, atol=1e-5)


def test_multihead_attention_layers_built_in_a_row_differ():
    from mindport.runtime.layers import MultiheadAttention

    a, b = MultiheadAttention(8, 2), MultiheadAttention(8, 2)
    assert not np.array_equal(a.in_proj_weight.asnumpy(), b.in_proj_weight.asnumpy())


_NET = ("class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 3)\n        self.block = torch.nn.Sequential(self.fc, torch.nn.ReLU(), "
        "torch.nn.Linear(3, 1))\n        self.register_buffer('steps', torch.tensor([3]))\n"
        "        self.register_buffer('scale', torch.tensor([0.5]))\n"
        "    def forward(self, x):\n        return self.block(x) * self.scale\n")


@pytest.mark.parametrize("call", ["named_parameters(prefix='net')", "named_parameters('p', False)",
                                  "named_parameters(remove_duplicate=False)", "named_modules(prefix='m')",
                                  "named_modules(remove_duplicate=False)", "named_modules(None, 'top', True)"])
def test_named_parameters_and_modules_with_arguments(call):
    from mindport import convert_source

    program = "import torch\n" + _NET + f"net = Net()\nnames = [n for n, _ in net.{call}]\n"
    t_space, m_space = {}, {}
    exec(program, t_space)  # noqa: S102 - the test's own program
    code = convert_source(program).code
    exec(code, m_space)  # noqa: S102
    # MindSpore names Dense's parameters as torch does (weight, bias); the module paths must agree
    assert m_space["names"] == t_space["names"], code


@pytest.mark.parametrize("cast", ["net.to(torch.float64)", "net.to(dtype=torch.float64)", "net.double()",
                                  "net = Net().to('cpu', torch.float64)", "net.half()"])
def test_module_to_a_dtype_casts_its_floating_parameters(cast):
    body = (_NET + "torch.manual_seed(0)\nnet = Net()\n" + cast + "\n"
            "kinds = [str(p.dtype).replace('torch.', '') for p in net.parameters()] + [str(net.steps.dtype).replace('torch.', '')]\n"
            "scale = net.scale\nsteps = net.steps\n")
    t_space, m_space, _ = run_both("import torch\n" + body, ["scale", "steps"])
    assert [k.lower() for k in m_space["kinds"]] == t_space["kinds"]


@pytest.mark.parametrize("cast", ["net.double()", "net.half()", "net.float()"])
def test_a_module_cast_as_a_statement_is_one_cast(cast):
    """``net.double()`` on a name known to hold a Module: the device rule writes ``mp_tensor.to(net, ms.float64)``
    and the statement rule keeps it (it read the converted call's receiver, ``mp_tensor``, as the module)."""
    body = (_NET + "torch.manual_seed(0)\nnet = Net()\n" + cast + "\n"
            "kind = str(net.fc.weight.dtype).replace('torch.', '')\nscale = net.scale\nsteps = net.steps\n")
    t_space, m_space, result = run_both("import torch\n" + body, ["scale", "steps"])
    assert f"mp_tensor.to(net, ms.float{cast[4:-2].replace('double', '64').replace('half', '16').replace('float', '32')})" \
        in result.code
    assert m_space["kind"].lower() == t_space["kind"]


def test_optimizer_learning_rate_reads_as_a_float():
    body = ("lin = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)\n"
            "lr = opt.param_groups[0]['lr']\ntext = f'{opt.param_groups[0][\"lr\"]:.3e}'\n"
            "opt.param_groups[0]['lr'] = 0.25\nlr2 = opt.param_groups[0]['lr'] * 2\n")
    from mindport import convert_source

    program = "import torch\n" + body
    t_space, m_space = {}, {}
    exec(program, t_space)  # noqa: S102 - the test's own program
    exec(convert_source(program).code, m_space)  # noqa: S102
    for name in ("lr", "text", "lr2"):
        assert type(m_space[name]) is type(t_space[name]) and m_space[name] == pytest.approx(t_space[name]), name


def _flagged_or_run(program, flagged):
    """Convert ``program``: it is flagged MP102 exactly when ``flagged``; if not, (torch namespace, MindSpore
    namespace) after running it and its conversion, else None."""
    from mindport import convert_source

    result = convert_source(program)
    assert ("MP102" in [d.code for d in result.diagnostics]) is flagged
    if flagged:
        return None
    t_space, m_space = {}, {}
    exec(program, t_space)  # noqa: S102 - the test's own program
    exec(result.code, m_space)  # noqa: S102
    return t_space, m_space


@pytest.mark.parametrize(("line", "flagged"), [("r = format(x, '')", True), ("r = '{}'.format(x)", True),
                                               ("r = format(x, '.2f')", False), ("r = '{:.2f}'.format(x)", False), ("r = '{:.2f}'.format(x.item())", False),
                                               ("r = format(3.5, '.1f')", False)])
def test_a_formatted_tensor_is_flagged(line, flagged):
    """torch: a 0-d tensor formats as its number, any other as 'tensor([...])'; MindSpore refuses a format spec and
    writes numpy's text: no silent difference."""
    x = "torch.tensor(3.25)" if ".2f" in line else "torch.tensor([1.0, 2.0])"
    spaces = _flagged_or_run(f"import torch\nx = {x}\n{line}\n", flagged)
    if spaces is not None:
        t_space, m_space = spaces
        assert m_space["r"] == t_space["r"]


@pytest.mark.parametrize("loader", ["torch.utils.data.dataloader.DataLoader", "torch.utils.data.DataLoader"])
def test_data_loader_under_its_defining_module(loader):
    body = ("from torch.utils.data import TensorDataset\nx = torch.arange(8, dtype=torch.float32).reshape(4, 2)\n"
            f"batches = [b for (b,) in {loader}(torch.utils.data.dataset.TensorDataset(x), batch_size=2)]\n")
    run_both("import torch\nimport torch.utils.data\n" + body, ["batches"])


@pytest.mark.parametrize("body", [
    "a = torch.tensor([1., 2., 3.])\nc = torch.zeros(3)\nalias = c\ntorch.add(a, a, out=c)\nr = alias\nr2 = c",
    "a = torch.tensor([1., 2., 3.])\nc = torch.tensor([])\nr = torch.exp(a, out=c)\nr2 = c",  # resized
    "a = torch.tensor([1, 2, 3])\nc = torch.zeros(3, dtype=torch.float64)\nr = torch.mul(a, a, out=c)\nr2 = c",
    "x = torch.tensor([[1., 5., 2.], [7., 0., 3.]])\nv, i = torch.zeros(2), torch.zeros(2, dtype=torch.long)\n"
    "r = torch.max(x, 1, out=(v, i))[0]\nr2 = i",
    "a = torch.tensor([[2., 1.], [1., 3.]])\nc = torch.zeros(2, 2)\ntorch.linalg.inv(a, out=c)\nr = c\nr2 = a",
    "a = torch.tensor([1, 2, 3])\nr = torch.copysign(a, -1, out=None)\no = None\nr2 = torch.exp(a * 1., out=o)",
])
def test_out_argument_writes_into_its_tensor(body):
    run_both("import torch\n" + body + "\n", ["r", "r2"], rtol=1e-5, atol=1e-6)


def test_out_argument_of_a_lower_kind_is_refused_as_in_torch():
    from mindspore import Tensor

    from mindport.runtime.inplace import write_out

    with pytest.raises(RuntimeError, match="can't be cast"):
        write_out(Tensor(np.zeros(2, np.int64)), Tensor(np.ones(2, np.float32)))


@pytest.mark.parametrize(("call", "flagged"), [("torch.linalg.svd(a, full_matrices=True)", True),
                                               ("torch.linalg.svd(a, True)", True),
                                               ("torch.linalg.svd(a)", False),
                                               ("torch.linalg.svd(a, full_matrices=False)", False)])
def test_full_svd_written_out_is_flagged(call, flagged):
    """The columns of U past min(m, n) are an arbitrary basis: MindSpore's differ from torch's (a 5x3 matrix)."""
    spaces = _flagged_or_run(f"import torch\na = torch.linspace(-1, 2, 15).reshape(5, 3) ** 2\nu, s, vh = {call}\n",
                             flagged)
    if spaces is not None:
        t_space, m_space = spaces
        k = 3  # the first min(m, n) singular vectors, up to sign
        np.testing.assert_allclose(np.abs(m_space["u"].asnumpy()[:, :k]), np.abs(t_space["u"].numpy()[:, :k]),
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(m_space["s"].asnumpy(), t_space["s"].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("body", [
    "x = torch.arange(12).reshape(3, 4)\nr = torch.narrow(x, 1, torch.tensor(1), 2)\nr2 = x.narrow(0, -2, 2)",
    "x = torch.arange(12.).reshape(3, 4)\nr = torch.narrow_copy(x, 0, 1, 2)\nr2 = x.narrow_copy(1, torch.tensor(-3), 3)",
    "x = torch.tensor([1., 4., 9., 16., 25.])\nr = torch.diff(x, n=2)\nr2 = x.diff(3, prepend=torch.tensor([0.]))",
    "x = torch.arange(12.).reshape(3, 4) ** 2\nr = torch.diff(x, 2, dim=0, append=x[:1])\nr2 = x.diff(dim=1)",
    "x = torch.tensor([1, 2, 3])\nr = torch.expand_copy(x, size=(2, 3))\nr2 = torch.expand_copy(x[:, None], (3, -1, 4))",
    "x = torch.tensor([[1., 2.], [3., 4.]])\nr = torch.torch.tril(x)\nr2 = torch.torch.finfo(torch.float32).eps * x",
])
def test_narrow_diff_expand_copy_and_torch_torch(body):
    run_both("import torch\n" + body + "\n", ["r", "r2"])


@pytest.mark.parametrize("body", [
    "x = torch.tensor([[1., 2.], [3., 4.]])\nc = torch.zeros(2)\nr = torch.sum(x, 0, out=c)\nr2 = c",
    "x = torch.tensor([[1., 2.], [3., 4.]])\nc = torch.zeros(())\ntorch.mean(x, out=c)\nr = c\nr2 = torch.prod(x, 1, out=torch.zeros(2))",
    "x = torch.tensor([3., -1., 2.])\nc = torch.zeros(3)\nr = torch.clamp_max(x, 1., out=c)\nr2 = torch.softmax(x, 0, out=torch.zeros(3))",
])
def test_out_argument_of_reductions(body):
    run_both("import torch\n" + body + "\n", ["r", "r2"])


@pytest.mark.parametrize("call", ["torch.tensor_split(x, indices=[1, 3])", "torch.tensor_split(x, sections=3, dim=1)",
                                  "torch.tensor_split(x, 2)", "x.tensor_split(indices=[2], dim=1)",
                                  "torch.hsplit(x, sections=2)", "torch.vsplit(x, indices=[1])",
                                  "torch.dsplit(x[None], indices=[1, 2])"])
def test_split_overload_keywords(call):
    body = f"x = torch.arange(24.).reshape(4, 6)\nr = list({call})\n"
    run_both("import torch\n" + body, ["r"])


def test_packed_sequence_double_is_not_a_module_cast():
    body = ("data = torch.tensor([1.0, 2.0, 3.0, 4.0])\npacked = torch.nn.utils.rnn.PackedSequence(data, "
            "torch.tensor([2, 2]))\nr = packed.double().data\nlin = torch.nn.Linear(2, 2).double()\n"
            "r2 = lin.weight.dtype == torch.float64\n")
    t_space, m_space, _ = run_both("import torch\n" + body, ["r"])
    assert t_space["r2"] is True and bool(m_space["r2"]) is True
