"""The converter never writes a file that does not parse: a rule that produced broken syntax (a converter bug, as
``os.environ["LOCAL_RANK"] = v`` once became a call on the left of ``=``) gives MP299 and the source unchanged."""
from __future__ import annotations

import libcst as cst

from mindport import convert_source
from mindport.migrator.rules.tensor_idioms import TensorIdiomTransform


def test_a_conversion_that_would_not_parse_gives_the_source_back_with_mp299(monkeypatch):
    source = "import torch\n\nx = torch.zeros(2).numpy()\n"

    def broken(self, original_node, updated_node):  # an injected rule bug: a call as an assignment target
        bad = cst.Assign(targets=[cst.AssignTarget(cst.parse_expression("f()"))], value=cst.Integer("1"))
        return updated_node.with_changes(body=[*updated_node.body, cst.SimpleStatementLine(body=[bad])])

    monkeypatch.setattr(TensorIdiomTransform, "leave_Module", broken, raising=False)
    result = convert_source(source)
    assert result.code == source
    assert [d.code for d in result.diagnostics] == ["MP299"] and "would not parse" in result.diagnostics[0].message


def test_the_environment_variable_writes_of_a_launcher_stay_writes():
    source = 'import os\n\nos.environ["LOCAL_RANK"] = str(0)\nrank = int(os.environ["LOCAL_RANK"])\n'
    result = convert_source(source)
    assert 'os.environ["LOCAL_RANK"] = str(0)' in result.code and result.diagnostics == []
    compile(result.code, "<converted>", "exec")


def test_device_attributes_assigned_to_stay_assignments():
    """``self.is_cuda = ...`` and ``args.device = ...`` (timm's loaders and distributed setup) assign the object's own
    attributes: the device rule rewrites reads of a tensor's ``is_cuda``/``device`` only (the written calls on the
    left of ``=`` made three timm files MP299)."""
    source = ("import torch\n\n\nclass Loader:\n    def __init__(self, device, args, x):\n"
              "        self.is_cuda = device.type == 'cuda'\n        args.device, self.device = 'cpu', x.device\n"
              "        self.moved = x.is_cuda\n")
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    # a parameter named device is torch's device, here its designation string: its type read from the string
    assert "self.is_cuda = str(device).partition(\":\")[0] == 'cuda'" in result.code, result.code
    assert "args.device, self.device = 'cpu', mp_tensor.device(x)" in result.code
    compile(result.code, "<converted>", "exec")


def test_a_replacement_inside_an_f_string_takes_the_other_quote():
    """``f"... ({torch.cuda.device_count()})"`` (a DDP launcher's error message) becomes a call with a string
    argument, ``ms.hal.device_count("GPU")``: the f-string's own quote inside its braces does not parse before Python
    3.12, and the whole file was copied unconverted (MP299). The string in braces takes the other quote; the value
    reads the same (0 without a GPU, as torch: MindSpore's device_count raises when its package has no GPU backend)."""
    source = ('import torch\n\nn = f"GPUs ({torch.cuda.device_count()}) {torch.float32}"\n'
              "m = f'{torch.cuda.device_count()}'\n")
    result = convert_source(source)
    assert not [d for d in result.diagnostics if d.code == "MP299"], [d.format() for d in result.diagnostics]
    # (since batch26 the count is mp_framework.cuda_device_count(), a call without a string: the quote rule is kept)
    assert "f\"GPUs ({mp_framework.cuda_device_count()}) {ms.float32}\"" in result.code, result.code
    namespace: dict = {}
    exec(compile(result.code, "converted", "exec"), namespace)
    import torch

    assert namespace["m"] == str(torch.cuda.device_count())  # 0 here, where MindSpore's device_count raised


def test_a_rule_that_fails_at_one_site_costs_that_statement_only(monkeypatch):
    """A rule's internal error at one call (GwcNet's conditional padding once crashed a transform) flags that
    statement (MP298), which keeps its torch form; the rest of the file is converted, not copied unchanged."""
    from mindport.migrator.rules.table_calls import TableCallTransform

    source = ("import torch\n\n\ndef f(x):\n    y = torch.tanh(x)\n    z = torch.sigmoid(x)\n    return y + z\n")
    original = TableCallTransform.leave_Call

    def failing(self, original_node, updated_node):  # an injected rule bug at the tanh call only
        if cst.Module(body=[]).code_for_node(original_node.func) == "torch.tanh":
            raise KeyError("injected")
        return original(self, original_node, updated_node)

    monkeypatch.setattr(TableCallTransform, "leave_Call", failing)
    result = convert_source(source)
    assert [d.code for d in result.diagnostics] == ["MP298"], [d.format() for d in result.diagnostics]
    assert "KeyError" in result.diagnostics[0].message
    assert "y = torch.tanh(x)" in result.code and "torch.sigmoid" not in result.code and "sigmoid(x)" in result.code
    assert "import torch" in result.code
    compile(result.code, "<converted>", "exec")
