"""In-place writes through torch views, enumerated from torch itself (issues 27/30: no half-converted line).

In torch, ``v = y[0]; v += 1`` (or ``v.add_(1)``, ``v.zero_()``, ``v.copy_(z)``, ``v[...] = 5``, ``v.clamp_()`` ...)
changes ``y``: basic indexing and every view-returning operation (torch's schemas mark their result as an alias of
the receiver, ``Tensor(a) self -> Tensor(a)``) share the base's storage. MindSpore's tensors share no storage this
way, so the converted write reached ``v`` only and a later read of ``y`` was silently the old values.

The table: every view-returning ``torch.Tensor`` operation (read at test time from ``torch.ops.aten``'s schemas, each
either a case below or a stated reason) x every in-place write form x a read afterwards (of the base, of the view,
and of the caller's tensor passed in as the base). Each case is converted with mindport's converter, run on
MindSpore and compared with torch's numbers:

- RIGHT: the MindSpore run gives torch's numbers;
- LOUD: the conversion flags the case's lines with an MP code, or the MindSpore run raises;
- SILENT: runs, no flag, different numbers.

A case torch itself refuses (a write through ``expand``: "more than one element of the written-to tensor refers to a
single memory location") is not counted. ``python tests/converter/test_views_written_in_place.py`` prints the figures
(``--by view`` / ``--by write`` for the breakdown, ``--silent`` for the silent cases).
"""
from __future__ import annotations

import collections
import sys
import textwrap

import numpy as np
import pytest
from tests.source_module import load_source

# (case name, the torch aten operation it covers, the statement(s) binding ``v`` to a view of ``y``, base kind)
VIEWS = [
    ("getitem_int", "select", "v = y[0]", "real"),
    ("getitem_slice", "slice", "v = y[:, 1:]", "real"),
    ("getitem_step", "slice", "v = y[:, :, ::2]", "real"),
    ("getitem_ellipsis", "select", "v = y[..., 1]", "real"),
    ("getitem_none", "unsqueeze", "v = y[None, 1]", "real"),
    ("getitem_negative", "slice", "v = y[-1, 1:3]", "real"),
    ("getitem_list", None, "v = y[[0, 1], 1]", "real"),  # advanced indexing: a copy in torch too
    ("narrow", "narrow", "v = y.narrow(1, 0, 2)", "real"),
    ("torch.narrow", "narrow", "v = torch.narrow(y, 2, 1, 2)", "real"),
    ("select", "select", "v = y.select(2, 1)", "real"),
    ("torch.select", "select", "v = torch.select(y, 0, 1)", "real"),
    ("diagonal", "diagonal", "v = y.diagonal(0, 1, 2)", "real"),
    ("torch.diagonal", "diagonal", "v = torch.diagonal(y, dim1=1, dim2=2)", "real"),
    ("t", "t", "v = y[0].t()", "real"),
    ("torch.t", "t", "v = torch.t(y[1])", "real"),
    ("T", "permute", "v = y[0].T", "real"),
    ("mT", "mT", "v = y.mT", "real"),
    ("H", "adjoint", "v = y[0].H", "real"),
    ("mH", "mH", "v = y.mH", "real"),
    ("adjoint", "adjoint", "v = y.adjoint()", "real"),
    ("transpose", "transpose", "v = y.transpose(0, 2)", "real"),
    ("torch.transpose", "transpose", "v = torch.transpose(y, 1, 2)", "real"),
    ("swapaxes", "swapaxes", "v = y.swapaxes(1, 2)", "real"),
    ("swapdims", "swapdims", "v = y.swapdims(0, 1)", "real"),
    ("permute", "permute", "v = y.permute(2, 0, 1)", "real"),
    ("torch.permute", "permute", "v = torch.permute(y, (1, 2, 0))", "real"),
    ("movedim", "movedim", "v = y.movedim(0, 2)", "real"),
    ("moveaxis", "moveaxis", "v = y.moveaxis(2, 0)", "real"),
    ("view", "view", "v = y.view(6, 4)", "real"),
    ("view_flat", "view", "v = y.view(-1)", "real"),
    ("view_as", "view_as", "v = y.view_as(y)", "real"),
    ("reshape", "reshape", "v = y.reshape(6, 4)", "real"),
    ("torch.reshape", "reshape", "v = torch.reshape(y, (3, 8))", "real"),
    ("reshape_copy", "reshape", "v = y.transpose(0, 1).reshape(-1)", "real"),  # torch copies here
    ("reshape_as", "reshape_as", "v = y.reshape_as(y)", "real"),
    ("flatten", "flatten", "v = y.flatten()", "real"),
    ("flatten_1", "flatten", "v = y.flatten(1)", "real"),
    ("torch.flatten", "flatten", "v = torch.flatten(y, 0, 1)", "real"),
    ("flatten_copy", "flatten", "v = y.permute(2, 1, 0).flatten()", "real"),  # torch copies here
    ("ravel", "ravel", "v = y.ravel()", "real"),
    ("unflatten", "unflatten", "v = y.unflatten(2, (2, 2))", "real"),
    ("unsqueeze", "unsqueeze", "v = y.unsqueeze(1)", "real"),
    ("torch.unsqueeze", "unsqueeze", "v = torch.unsqueeze(y, -1)", "real"),
    ("squeeze", "squeeze", "v = y[:1].squeeze(0)", "real"),
    ("squeeze_dim", "squeeze", "v = y[:, 1:2].squeeze(1)", "real"),
    ("torch.squeeze", "squeeze", "v = torch.squeeze(y[:, :, :1])", "real"),
    ("expand", "expand", "v = y[:, :1].expand(2, 3, 4)", "real"),
    ("expand_as", "expand_as", "v = y[:, :1].expand_as(y)", "real"),
    ("broadcast_to", "broadcast_to", "v = y.broadcast_to(2, 3, 4)", "real"),
    ("unfold", "unfold", "v = y.unfold(2, 2, 2)", "real"),
    ("detach", "detach", "v = y.detach()", "real"),
    ("data", None, "v = y.data", "real"),
    ("contiguous", "contiguous", "v = y.contiguous()", "real"),
    ("to", "to", "v = y.to(torch.float32)", "real"),
    ("float", "to", "v = y.float()", "real"),
    ("cpu", "cpu", "v = y.cpu()", "real"),
    ("conj", "conj", "v = y.conj()", "real"),
    ("resolve_conj", "resolve_conj", "v = y.resolve_conj()", "real"),
    ("resolve_neg", "resolve_neg", "v = y.resolve_neg()", "real"),
    ("positive", "positive", "v = y.positive()", "real"),
    ("chunk", "chunk", "v = y.chunk(2, 2)[1]", "real"),
    ("torch.chunk", "chunk", "v = torch.chunk(y, 2, 0)[0]", "real"),
    ("split", "split", "v = y.split(2, 2)[0]", "real"),
    ("split_list", "split", "v = y.split([1, 2], 1)[1]", "real"),
    ("torch.split", "split", "v = torch.split(y, 1, 0)[1]", "real"),
    ("split_with_sizes", "split_with_sizes", "v = y.split_with_sizes([1, 2], 1)[1]", "real"),
    ("unbind", "unbind", "v = y.unbind(1)[2]", "real"),
    ("torch.unbind", "unbind", "v = torch.unbind(y)[0]", "real"),
    ("tensor_split", "tensor_split", "v = y.tensor_split(2, 2)[1]", "real"),
    ("hsplit", "hsplit", "v = y.hsplit(3)[1]", "real"),
    ("vsplit", "vsplit", "v = y.vsplit(2)[0]", "real"),
    ("dsplit", "dsplit", "v = y.dsplit(2)[1]", "real"),
    ("unpack_chunk", "chunk", "a, v = y.chunk(2, 2)", "real"),
    ("unpack_unbind", "unbind", "v, b = y.unbind(0)", "real"),
    ("as_strided", "as_strided", "v = y.as_strided((2, 2), (4, 1), 1)", "real"),
    ("view_of_view", "slice", "w = y[1]\n    v = w[:, 2:]", "real"),
    ("chain_transpose_index", "transpose", "v = y.transpose(0, 1)[1]", "real"),
    ("chain_view_slice_t", "view", "v = y.view(6, 4)[2:].t()", "real"),
    ("real", "real", "v = y.real", "complex"),
    ("imag", "imag", "v = y.imag", "complex"),
    ("view_as_real", None, "v = torch.view_as_real(y)", "complex"),
]

# torch operations whose schema says the result may alias the receiver, and that the table has no case for
LEFT_OUT = {
    "ccol_indices": "sparse tensors", "col_indices": "sparse tensors", "crow_indices": "sparse tensors",
    "row_indices": "sparse tensors", "indices": "sparse tensors", "values": "sparse tensors",
    "coalesce": "sparse tensors", "cuda": "a CUDA device (no MindSpore counterpart of the device move)",
    "pin_memory": "needs an accelerator", "slice_inverse": "an internal operation of torch's compiler",
}

WRITES = [
    ("+=", "v += 1"),
    ("*=", "v *= 2"),
    ("/=", "v /= 4"),
    ("-=", "v -= 0.5"),
    ("add_", "v.add_(1)"),
    ("mul_", "v.mul_(3)"),
    ("zero_", "v.zero_()"),
    ("fill_", "v.fill_(7.0)"),
    ("copy_", "v.copy_(v * 2 + 1)"),
    ("setitem_all", "v[...] = 5.0"),
    ("setitem_first", "v[0] = -1.0"),
    ("clamp_", "v.clamp_(-1, 1)"),
    ("masked_fill_", "v.masked_fill_(v > 0, 0.0)"),
    ("relu_", "v.relu_()"),
    ("F.relu_inplace", "F.relu(v, inplace=True)"),
    ("init.constant_", "nn.init.constant_(v, 0.25)"),
]

READS = ("base", "view", "caller")


def _base(kind):
    real = np.linspace(-2, 3, 24, dtype=np.float32).reshape(2, 3, 4)
    return real if kind == "real" else (real + 1j * real[::-1]).astype(np.complex64)


def _source(views=VIEWS):
    """One torch module per view: a function per (write, read); the cases by function name."""
    modules = {}
    for view, _, bind, kind in views:
        lines = ["import torch", "import torch.nn as nn", "import torch.nn.functional as F", ""]
        cases = {}
        for w, (write, stmt) in enumerate(WRITES):
            for read, ret in (("base", "y"), ("view", "v")):
                name = f"case_{w}_{read}"
                lines += ["", f"def {name}(y):", f"    {bind}", f"    {stmt}", f"    return {ret}", ""]
                cases[name] = (write, read)
        modules[view] = ("\n".join(lines) + "\n", cases, kind)
    return modules


def _lines(code, name):
    """The source lines of function ``name`` (first, last)."""
    lines = code.splitlines()
    first = next(i for i, line in enumerate(lines, 1) if line.startswith(f"def {name}("))
    last = first
    while last < len(lines) and (lines[last].startswith(" ") or not lines[last].strip()):
        last += 1
    return first, last


def _same(got, want):
    got = np.asarray(got)
    return got.shape == want.shape and np.allclose(got, want, atol=1e-5, equal_nan=True)


def run_table(tmp_path, views=VIEWS):
    """{(view, write, read): "RIGHT" | "LOUD" | "SILENT" | "TORCH-REFUSES"} for every case."""
    import mindspore as ms
    import torch

    from mindport import convert_source

    outcome = {}
    for view, (source, cases, kind) in _source(views).items():
        stem = "vw_" + view.replace(".", "_")
        t_mod = load_source(source, tmp_path, stem + "_torch")
        result = convert_source(source, f"{stem}.py")
        flagged_lines = {d.line for d in result.diagnostics}
        try:
            m_mod = load_source(result.code, tmp_path, stem + "_ms")
        except Exception:  # noqa: BLE001 - the converted module does not even import: loud
            m_mod = None
        for name, (write, read) in cases.items():
            first, last = _lines(source, name)
            flagged = any(first <= line <= last for line in flagged_lines)
            base = _base(kind)
            t_arg = torch.tensor(base.copy())
            try:
                with torch.no_grad():
                    t_out = getattr(t_mod, name)(t_arg)
            except RuntimeError:
                for r in ((read,) if read == "view" else ("base", "caller")):
                    outcome[(view, write, r)] = "TORCH-REFUSES"
                continue
            wants = {read: t_out.numpy().copy()} if read == "view" else \
                {"base": t_out.numpy().copy(), "caller": t_arg.numpy().copy()}
            if m_mod is None:
                for r in wants:
                    outcome[(view, write, r)] = "LOUD"
                continue
            m_arg = ms.Tensor(base.copy())
            try:
                m_out = getattr(m_mod, name)(m_arg)
                gots = {read: m_out.asnumpy()} if read == "view" else \
                    {"base": m_out.asnumpy(), "caller": m_arg.asnumpy()}
            except Exception:  # noqa: BLE001 - raised: loud
                gots = None
            for r, want in wants.items():
                if gots is not None and _same(gots[r], want):
                    outcome[(view, write, r)] = "RIGHT"
                elif flagged or gots is None:
                    outcome[(view, write, r)] = "LOUD"
                else:
                    outcome[(view, write, r)] = "SILENT"
    return outcome


def aliasing_operations_of_torch():
    """The ``torch.Tensor`` operations whose aten schema returns an alias of the receiver (``Tensor(a) self ->
    Tensor(a)``): torch's own list of what shares storage with its input."""
    import torch

    names = set()
    for name in dir(torch.Tensor):
        if name.startswith("_"):
            continue
        op = getattr(torch.ops.aten, name, None)
        try:
            overloads = op.overloads()
        except Exception:  # noqa: BLE001 - not an aten operation
            continue
        for overload in overloads:
            schema = getattr(op, overload)._schema
            if schema.arguments and schema.arguments[0].alias_info is not None \
                    and not schema.arguments[0].alias_info.is_write \
                    and any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns):
                names.add(name)
    return names


def test_every_aliasing_operation_of_torch_has_a_case_or_a_reason():
    covered = {op for _, op, _, _ in VIEWS if op is not None}
    found = aliasing_operations_of_torch()
    assert len(found) > 40  # the schemas were read
    assert found <= covered | set(LEFT_OUT), sorted(found - covered - set(LEFT_OUT))


def test_each_case_binds_a_view_or_an_alias_in_torch():
    """Each view statement makes ``v`` share ``y``'s storage in torch (but the copies named as such)."""
    import torch

    copies = {"reshape_copy", "flatten_copy", "getitem_list"}
    for view, _, bind, kind in VIEWS:
        y = torch.tensor(_base(kind))
        scope = {"torch": torch, "y": y}
        exec(textwrap.dedent(bind.replace("\n    ", "\n")), scope)  # noqa: S102 - the table's own statements
        shares = scope["v"].untyped_storage().data_ptr() == y.untyped_storage().data_ptr() or \
            (scope["v"]._base is not None and scope["v"]._base is y._base) or scope["v"]._base is y
        assert shares == (view not in copies), view


def test_no_write_through_a_view_is_silently_lost(tmp_path):
    outcome = run_table(tmp_path)
    counts = collections.Counter(outcome.values())
    silent = sorted(k for k, v in outcome.items() if v == "SILENT")
    assert counts["RIGHT"] > 0
    assert not silent, (dict(counts), silent[:40])


def _main(argv):
    import pathlib
    import tempfile

    by = argv[argv.index("--by") + 1] if "--by" in argv else None
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, tmp)
        outcome = run_table(pathlib.Path(tmp))
    counts = collections.Counter(outcome.values())
    counted = {k: v for k, v in outcome.items() if v != "TORCH-REFUSES"}
    print(f"cases {len(counted)} (torch refuses {counts['TORCH-REFUSES']} more): RIGHT {counts['RIGHT']} / "
          f"LOUD {counts['LOUD']} / SILENT {counts['SILENT']}")
    if by:
        index = {"view": 0, "write": 1, "read": 2}[by]
        groups = collections.defaultdict(collections.Counter)
        for key, value in counted.items():
            groups[key[index]][value] += 1
        for key, c in groups.items():
            print(f"  {key:24} RIGHT {c['RIGHT']:4} LOUD {c['LOUD']:4} SILENT {c['SILENT']:4}")
    if "--silent" in argv:
        for key, value in sorted(counted.items()):
            if value == "SILENT":
                print("  SILENT", *key)


if __name__ == "__main__":
    _main(sys.argv[1:])
