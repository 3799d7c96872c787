"""The converter rule TensorIdiomTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/tensor_idioms.md shows both."""
from __future__ import annotations

import ast
import builtins
import operator

import libcst as cst

from mindport.migrator.native_facts import BoolFacts, mask_argument, module_functions, operand_holds
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.rules.format_specs import spec_arguments
from mindport.migrator.scopes import OWN_METHOD_KINDS, operand_kind, receiver_kind, value_kind
from mindport.migrator.syntax import code_of, decorator_func, method, method_call
from mindport.migrator.walk import parse_expression, walk

_GRAD_CONTEXTS = ("torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled")
_AUTOCASTS = ("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast")
# a profiler's label around a block: no effect on what the block computes (pixel-nerf's ResnetFC)
_PROFILE_LABELS = ("torch.autograd.profiler.record_function", "torch.profiler.record_function")
_GRAD_DECORATORS = ("torch.no_grad", "torch.inference_mode", "torch.enable_grad")


class TensorIdiomTransform(Rule):
    """``.cpu().numpy()``/``.detach().numpy()`` -> ``.asnumpy()``; ``x.size(i)`` -> ``x.shape[i]``;
    ``with torch.no_grad():`` and an autocast turned off (``enabled=False``) -> its body (MindSpore records no graph in
    a forward pass; a graph compiles no Python context manager), and the decorator applied by hand,
    ``torch.no_grad()(build)``, -> ``build``, except a no_grad before a backward in
    its block (``.backward()``, ``torch.autograd.grad``), where it is part of the differentiated code and stays as
    ``mindport.runtime.training.no_grad()`` (a frozen encoder, a target network: no gradient flows into it); ``z.real``/``z.imag``
    (properties in torch, methods in MindSpore) -> ``z.real()``/``z.imag()`` on evident tensors (``z.T.imag`` too);
    ``~x`` on a tensor (MindSpore's ``~`` is a logical not for every dtype) -> ``torch.bitwise_not``'s target
    (bit inversion for integers), except where ``x`` is bool: by construction (a comparison, ``isnan``, ``.bool()``,
    ``dtype=torch.bool``, ``&`` of bools, a local name only ever bound to one: ``native_facts.BoolFacts``) or as the
    mask of ``masked_fill``/``masked_select``/``masked_scatter`` (torch refuses any other), where ``~`` stays; so it
    does on a converted ``any``/``all``, always a bool (``~mask.any(dim=-1)``; :meth:`_converted_truth`);
    ``format(t)``/``"{}".format(t)`` of an evident tensor is converted and flagged MP102 as a warning (torch's text
    of a tensor is not MindSpore's; the statement stays converted, its tensors being MindSpore's at run time:
    ``assert torch.isfinite(y0).all(), "bad {}".format(y0)`` -> ``assert mp_math.all(ops.isfinite(y0)), ...``);
    ``lengths >> 2`` and ``<<`` on a tensor (a MindSpore Tensor has no shift operators) -> ``ops.bitwise_right_shift(lengths, 2)``,
    through the mapping entry of ``torch.bitwise_right_shift``; a numpy value on the left of a tensor
    (``np.log(10000) / d * torch.arange(n)``: numpy's operator would give an ndarray) -> ``ops.mul(a, t)``; a Python
    complex number with another operand (``A * -1j``: MindSpore's operators take no Python complex, and a real tensor
    times a complex one has no kernel) -> ``mp_math.complex_operation('*', A, (-0.0, -1.0))``, which computes in
    complex as torch does (plain Python arithmetic when no tensor is involved; ``3 * 2j`` is left as it is); the
    number is written as the pair of its parts, because GRAPH_MODE holds no complex constant ("Unsupported Constant
    type : 1j": S4D's and GSS's ``-exp(log_A_real) + 1j * A_imag``); the same for the
    arithmetic of a value evidently complex (a name a function bound to a complex number, ``view_as_complex``, an FFT,
    a complex ``dtype=``, or arithmetic, methods and torch functions of one: S4D's ``dtA = A * dt.unsqueeze(-1)``;
    its product written ``z.mul(w)``, ``z.multiply(w)`` or ``torch.mul(z, w)`` too: cs336's rotary embeddings),
    which falls back to the plain operator when no complex tensor turns up and multiplies complex tensors out from
    their parts (MindSpore 2.10's complex Mul has no gradient); the builtin ``abs`` of such a value
    (``abs(torch.fft.rfft(x))``: real in torch, complex64 in MindSpore) -> torch.abs's target, the real modulus;
    ``str(x.dtype)`` -> ``mp_tensor.dtype_text(x.dtype)``: torch's text of a dtype (``'torch.float32'``; MindSpore's
    is ``'Float32'``, so ``'float16' in str(p.dtype)`` was silently False), any other object's own ``str`` (a numpy
    array's dtype)."""

    EXAMPLES = (
        Example(
            before="""
                import torch


                def evaluate(model, x):
                    with torch.no_grad():
                        logits = model(x)
                    return logits.argmax(1).cpu().numpy(), logits.size(0)
            """,
            after="""


                def evaluate(model, x):
                    logits = model(x)
                    return logits.argmax(1).asnumpy(), logits.shape[0]
            """,
            note='no_grad blocks keep their body; .cpu().numpy() is .asnumpy(); x.size(i) is x.shape[i].',
        ),
        Example(
            before="""
                import torch


                def train(encoder, head, opt, x, y):
                    with torch.no_grad():
                        features = encoder(x)
                    loss = ((head(features) - y) ** 2).mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    return loss
            """,
            after="""
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train


                def train(encoder, head, opt, x, y):
                    mp_train.train_mode(encoder)
                    mp_train.train_mode(head)
                    def forward_fn():
                        with mp_train.no_grad():
                            features = encoder(x)
                        loss = mp_math.mean(((head(features) - y) ** 2))
                        return loss
                    grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(opt, encoder, head))
                    loss, grads = grad_fn()
                    mp_train.zero_grad(opt)
                    mp_train.backward(grads)
                    opt(mp_train.grads_of(opt))
                    return loss
            """,
            note='a no_grad block before a backward in its block is part of what the training rule differentiates: '
                 'it stays, as mindport.runtime.training.no_grad (a frozen encoder gets no gradient, as in torch).',
        ),
        Example(
            before="""
                import torch


                def spectrum(x):
                    z = torch.fft.fft(x)
                    return z.real, z.imag
            """,
            after="""
                from mindspore import ops


                def spectrum(x):
                    z = ops.fft(x)
                    return z.real(), z.imag()
            """,
            note='real/imag are properties in torch and methods in MindSpore (on evident tensors only).',
        ),
        Example(
            before="""
                import torch


                def rotate(a):
                    return a * -1j, torch.exp(a * (2j * 3.14159)), 3 * 2j
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import math as mp_math


                def rotate(a):
                    return mp_math.complex_operation('*', a, (-0.0, -1.0)), ops.exp(mp_math.complex_operation('*', a, (0.0, 6.28318))), 3 * 2j
            """,
            note='a Python complex number with a tensor computes in complex (complex64, complex128 from float64); '
                 'the number is written as its (real, imag) pair, which a graph holds (no complex constant there).',
        ),
        Example(
            before="""
                import torch


                def flip_bits(n, scores):
                    codes = torch.arange(n, dtype=torch.int32)
                    causal = torch.ones((n, n), dtype=torch.bool).triu(1)
                    return ~codes, ~(codes > 2), scores.masked_fill(~causal, 0.0)
            """,
            after="""
                import mindspore as ms
                from mindspore import ops
                from mindport.runtime import math as mp_math


                def flip_bits(n, scores):
                    codes = ops.arange(start=n, dtype=ms.int32)
                    causal = ops.ones((n, n), dtype=ms.bool_).triu(1)
                    return mp_math.bitwise_not(codes), ~(codes > 2), scores.masked_fill(mask=~causal, value=0.0)
            """,
            note='~ on a MindSpore Tensor is a logical not for every dtype: on an integer tensor torch flips the bits '
                 '(a comparison, and a tensor built as bool, are bool: their ~ stays).',
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._called: set[int] = set()  # attributes that are the function of a call: z.real() is not the property
        self._functions: list[str] = []  # names of the enclosing functions
        self._complex: list[set[str]] = [set()]  # names bound to complex values, per function (module level first)
        self._kept: set[int] = set()  # no_grad blocks inside a backward's forward (see _before_backward)
        self._function_nodes: list[cst.FunctionDef | None] = [None]  # the enclosing functions (None: module level)
        self._bool_facts: dict[int, BoolFacts] = {}
        self._masks: set[int] = set()  # a masked_fill's mask arguments: bool, or torch refuses them
        self._classes: list[cst.ClassDef | None] = [None]  # the enclosing class of each function (BoolFacts)
        self._class_stack: list[tuple] = []  # (class, how many functions enclosed it)

    def visit_Call(self, node: cst.Call) -> None:
        self._called.add(id(node.func))
        if self._grad_wrapper(node):
            self.ctx.handled.add(id(node.func))
            self.ctx.handled.add(id(node.func.func))
        mask = mask_argument(node, self.scope.resolve_torch)
        if mask is not None:
            self._masks.add(id(mask))

    # operators a MindSpore Tensor does not define (no __rshift__/__lshift__): the torch function of the same
    # meaning, through its mapping entry
    OPERATORS = {cst.RightShift: "torch.bitwise_right_shift", cst.LeftShift: "torch.bitwise_left_shift"}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node.name.value)
        self._function_nodes.append(node)
        self._complex.append(set())
        # a method's class; a function nested in a method reads its ``self``
        self._classes.append(self._class_stack[-1] if self._class_stack and self._class_stack[-1][1] == len(
            self._function_nodes) - 1 else self._classes[-1])

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        self._function_nodes.pop()
        self._complex.pop()
        self._classes.pop()
        return updated_node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_stack.append((node, len(self._function_nodes)))

    def leave_ClassDef(self, original_node, updated_node):
        self._class_stack.pop()
        return updated_node

    def leave_Assign(self, original_node, updated_node):
        """``A = -torch.exp(x) + 1j * y``: A holds a complex value from here on (``A * dt`` computes in complex)."""
        complex_value = self._is_complex(original_node.value)
        for target in original_node.targets:
            if isinstance(target.target, cst.Name):
                (self._complex[-1].add if complex_value else self._complex[-1].discard)(target.target.value)
        return updated_node

    def _is_complex(self, expr: cst.BaseExpression) -> bool:
        return _complex_value(expr, self._complex[-1], self.scope)

    # a numpy value on the left of a tensor (np.log(10000) / d * torch.arange(n)): numpy's operator runs first and
    # gives an ndarray (torch defers to the tensor); the MindSpore function gives the tensor, in the tensor's dtype
    NUMPY_LEFT = {cst.Multiply: "mindspore.ops.mul", cst.Add: "mindspore.ops.add", cst.Subtract: "mindspore.ops.sub",
                  cst.Divide: "mindspore.ops.div"}

    # a Python complex number with a tensor (A * -1j): MindSpore's operators take no Python complex, and a real
    # tensor times a complex one has no kernel; the runtime computes in complex as torch does
    COMPLEX_OPERATORS = {cst.Multiply: "*", cst.Divide: "/", cst.Add: "+", cst.Subtract: "-", cst.Power: "**"}

    def leave_BinaryOperation(self, original_node, updated_node):
        symbol = self.COMPLEX_OPERATORS.get(type(original_node.operator))
        left, right = original_node.left, original_node.right
        if symbol and (self._is_complex(left) or self._is_complex(right)) \
                and not (_number_literal(left) and _number_literal(right)) \
                and not (_complex_literal(left) and _complex_literal(right)):
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.math.complex_operation"),
                            args=[cst.Arg(cst.SimpleString(repr(symbol))), cst.Arg(_parts_pair(updated_node.left)),
                                  cst.Arg(_parts_pair(updated_node.right))])
        function = self.NUMPY_LEFT.get(type(original_node.operator))
        # torch source only: a MindSpore call's result is "foreign" to the scopes as numpy's is, so converted code
        # must convert to itself
        if function and self.ctx.imports("numpy") and not self.ctx.imports("mindspore") \
                and value_kind(original_node.left, self.scope) == "foreign" \
                and _evident_tensor(original_node.right, self.scope):
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr(function),
                            args=[cst.Arg(updated_node.left), cst.Arg(updated_node.right)])
        api = self.OPERATORS.get(type(original_node.operator))
        if api is None or receiver_kind(original_node.left, self.scope) != "tensor":
            return updated_node
        if operand_kind(original_node.left, self.scope) == "param" and self._functions[-1:] != ["forward"]:
            return updated_node  # `dim >> 1` on a parameter of __init__ or a helper: as likely a Python int
        entry = self.ctx.registry.lookup(api)
        target = entry.resolve(self.ctx.options.target)[0] if entry is not None and entry.supported else None
        if target is None:
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Call(func=self.ctx.target_expr(target),
                        args=[cst.Arg(updated_node.left), cst.Arg(updated_node.right)])

    def leave_UnaryOperation(self, original_node, updated_node):
        # ~ on a MindSpore Tensor is a logical not whatever the dtype (~5 is False; torch: -6): torch.bitwise_not,
        # through its mapping entry (bit inversion for integers, logical not for bool)
        if not isinstance(original_node.operator, cst.BitInvert) \
                or receiver_kind(original_node.expression, self.scope) != "tensor" \
                or id(original_node) in self._masks or self._is_bool(original_node.expression) \
                or self._converted_truth(original_node.expression):
            return updated_node  # ~(codes > 2), x.masked_fill(~m, 0): a bool mask, MindSpore's logical not is torch's
        if operand_kind(original_node.expression, self.scope) == "param" and self._functions[-1:] != ["forward"]:
            return updated_node  # `~flags` on a parameter of __init__ or a helper: as likely a Python int
        entry = self.ctx.registry.lookup("torch.bitwise_not")
        target = entry.resolve(self.ctx.options.target)[0] if entry is not None and entry.supported else None
        if target is None:
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Call(func=self.ctx.target_expr(target), args=[cst.Arg(updated_node.expression)])

    def _converted_truth(self, expr) -> bool:
        """``x.any(dim)``, ``torch.all(x)``: whatever ``x``'s dtype, the converted call gives a bool (MindSpore's
        ReduceAny/ReduceAll and ``mp_math.any``/``all`` do; a NumPy receiver's own method a bool array): ``~`` of it
        is MindSpore's logical not, as the runtime's bitwise_not of a bool would be. (torch gives uint8 for a uint8
        input; the converted any/all do not, with or without this.)"""
        if not isinstance(expr, cst.Call) or any(a.star for a in expr.args):
            return False
        if self.scope.resolve_torch(expr.func) in ("torch.any", "torch.all"):
            return True
        return isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("any", "all") \
            and self.scope.resolve_torch(expr.func) is None and receiver_kind(expr.func.value, self.scope) == "tensor"

    def _is_bool(self, expr) -> bool:
        """A bool tensor by construction (``BoolFacts``, read from the enclosing function's code)."""
        function = self._function_nodes[-1]
        facts = self._bool_facts.get(id(function))
        if facts is None:
            module = getattr(self, "_module", None)
            facts = self._bool_facts[id(function)] = BoolFacts(
                function, self.scope.resolve_torch, module_functions(module),
                self._classes[-1][0] if self._classes[-1] is not None else None, module)
        return facts.is_bool(expr)

    def leave_Attribute(self, original_node, updated_node):
        if original_node.attr.value not in ("real", "imag") or id(original_node) in self._called \
                or receiver_kind(original_node.value, self.scope) != "tensor":
            return updated_node  # numpy arrays have the same properties: only evident tensors
        self.ctx.converted_sites += 1
        return cst.Call(func=updated_node)

    def _grad_wrapper(self, node: cst.Call) -> bool:
        """``torch.no_grad()(fn)``: the decorator applied by hand (a builder run without recording, a ctor under
        no_grad); MindSpore records nothing outside a gradient function, so it is ``fn`` itself."""
        inner = node.func
        return isinstance(inner, cst.Call) and not inner.args and len(node.args) == 1 \
            and node.args[0].keyword is None and not node.args[0].star \
            and self.scope.resolve_torch(inner.func) in _GRAD_DECORATORS

    def _dtype_text(self, node: cst.Call) -> bool:
        """``str(x.dtype)``: the builtin ``str`` of a ``.dtype`` read."""
        return isinstance(node.func, cst.Name) and node.func.value == "str" and self.scope.resolve(node.func) is None \
            and len(node.args) == 1 and node.args[0].keyword is None and node.args[0].star == "" \
            and isinstance(node.args[0].value, cst.Attribute) and node.args[0].value.attr.value == "dtype"

    def leave_Call(self, original_node, updated_node):
        if self._grad_wrapper(original_node):
            self.ctx.converted_sites += 1
            value = updated_node.args[0].value
            if not value.lpar and not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # (lambda: m)()
            return value
        self._flag_format(original_node)
        if self._dtype_text(original_node):
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.dtype_text"),
                            args=[cst.Arg(updated_node.args[0].value)])
        if (operands := self._complex_product(original_node, updated_node)) is not None:
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr("mindport.runtime.math.complex_operation"),
                            args=[cst.Arg(cst.SimpleString("'*'")), *(cst.Arg(_parts_pair(o)) for o in operands)])
        if self._complex_builtin_abs(original_node):
            entry = self.ctx.registry.lookup("torch.abs")
            self.ctx.converted_sites += 1
            return cst.Call(func=self.ctx.target_expr(entry.resolve(self.ctx.options.target)[0]),
                            args=[cst.Arg(updated_node.args[0].value)])
        func = updated_node.func
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func.value) is not None:
            return updated_node
        name = func.attr.value
        if name in ("numpy", "detach", "size") and receiver_kind(original_node.func.value, self.scope) in OWN_METHOD_KINDS:
            return updated_node  # self.alphabet.size(), self.size(): the object's own method, not a tensor's
        if name == "numpy" and not updated_node.args:
            receiver = func.value
            while (inner := method_call(receiver, "detach") or method_call(receiver, "cpu")) is not None \
                    and not inner.args:
                receiver = receiver(inner)
            self.ctx.converted_sites += 1
            return method(receiver, "asnumpy")
        if name == "detach" and not updated_node.args:
            ops = self.ctx.alias_for("mindspore.ops")
            self.ctx.converted_sites += 1
            return cst.Call(func=parse_expression(f"{ops}.stop_gradient"), args=[cst.Arg(func.value)])
        if name == "size" and len(updated_node.args) <= 1 and all(
            a.keyword is None or a.keyword.value == "dim" for a in updated_node.args
        ):
            self.ctx.converted_sites += 1
            if self._functions[-1:] == ["__init__"] and self._parameter_attribute(original_node.func.value):
                # data.word_alphabet.size() in __init__: a config object's member, a tensor or the project's own
                # object (NCRF++'s Alphabet): decided on the value (mp_tensor.size_of). Only in __init__, which
                # GRAPH_MODE never compiles; a helper forward calls keeps x.shape
                return cst.Call(func=self.ctx.target_expr("mindport.runtime.tensor.size_of"),
                                args=[cst.Arg(func.value), *(cst.Arg(a.value) for a in updated_node.args)])
            shape = cst.Attribute(value=func.value, attr=cst.Name("shape"))
            if not updated_node.args:
                return shape
            return cst.Subscript(value=shape, slice=[cst.SubscriptElement(cst.Index(updated_node.args[0].value))])
        return updated_node

    def _complex_product(self, original, updated):
        """The operands of ``z.mul(w)`` / ``z.multiply(w)`` / ``torch.mul(z, w)`` where a side is evidently complex
        (cs336's RoPE: ``view_as_complex(x).mul(rotation)``), as ``z * w`` is taken (leave_BinaryOperation):
        ``complex_operation``, whose product has a gradient (MindSpore 2.10's complex Mul has none); else None."""
        args = original.args
        if any(a.keyword is not None or a.star for a in args):
            return None
        func = original.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("mul", "multiply") and len(args) == 1 \
                and self.scope.resolve(func.value) is None:
            operands = (func.value, args[0].value)
            converted = (updated.func.value, updated.args[0].value) if isinstance(updated.func, cst.Attribute) \
                and len(updated.args) == 1 else None
        elif self.scope.resolve_torch(func) in ("torch.mul", "torch.multiply") and len(args) == 2:
            operands = (args[0].value, args[1].value)
            converted = tuple(a.value for a in updated.args) if len(updated.args) == 2 else None
        else:
            return None
        if converted is None or not any(self._is_complex(o) for o in operands):
            return None
        return converted

    def _parameter_attribute(self, expr) -> bool:
        """``data.word_alphabet``, ``data.feature_alphabets[idx]``: a member of a function parameter (not ``self``),
        of unknown kind: what it holds is known only at run time."""
        if receiver_kind(expr, self.scope) != "other":
            return False
        member = False
        while isinstance(expr, (cst.Attribute, cst.Subscript)):
            member = member or isinstance(expr, cst.Attribute)
            expr = expr.value
        return member and isinstance(expr, cst.Name) and self.scope.kind_of(expr.value) == "param"

    def _complex_builtin_abs(self, node: cst.Call) -> bool:
        """``abs(xf)`` of an evidently complex value (TimeMixer's ``freq = abs(torch.fft.rfft(x))``): torch's
        ``__abs__`` is the real modulus, MindSpore's keeps the complex dtype (TopK then refuses it): torch.abs's
        target."""
        return isinstance(node.func, cst.Name) and node.func.value == "abs" and self.scope.resolve(node.func) is None \
            and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star \
            and self._is_complex(node.args[0].value)

    def _flag_format(self, node: cst.Call) -> None:
        """``format(t)`` and ``"{}".format(t)`` of an evident tensor, without a spec: torch writes
        ``tensor([1., 2., 3.])``, MindSpore ``[1. 2. 3.]`` (with a spec, FormatSpecTransform gives torch's number)."""
        func = node.func
        with_spec = spec_arguments(node, self.scope)  # formatted with a spec: FormatSpecTransform converts them
        if isinstance(func, cst.Name) and func.value == "format" and self.scope.resolve(func) is None:
            values = [a.value for i, a in enumerate(node.args[:1]) if i not in with_spec]
        elif isinstance(func, cst.Attribute) and func.attr.value == "format" \
                and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString)):
            values = [a.value for i, a in enumerate(node.args) if i not in with_spec]
        else:
            return
        if any(_evident_tensor(value, self.scope) for value in values):
            self.remark(node, "MP102", "a tensor formatted without a spec: torch writes 'tensor([1., 2., 3.])' "
                      "(a 0-d one 'tensor(3.2500)'), MindSpore '[1. 2. 3.]'", "format t.item() for a number; for the text of a tensor, accept "
                      "MindSpore's or write it out", "torch.Tensor.__format__")

    def visit_With(self, node: cst.With) -> None:
        if self._grad_context(node):
            self.ctx.handled.add(id(node.items[0].item))

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if self.scope.resolve_torch(decorator_func(node)) in _GRAD_DECORATORS:
            self.ctx.handled.add(id(node.decorator))
            self.ctx.handled.add(id(decorator_func(node)))

    def _grad_context(self, node: cst.With) -> bool:
        """``with torch.no_grad():`` and its kin, and an autocast turned off (``with
        torch.cuda.amp.autocast(enabled=False):`` in Nystromformer's forward), and a profiler's label (``with
        profiler.record_function("resblock"):`` in pixel-nerf's ResnetFC): blocks that change nothing in a
        MindSpore forward, flattened (a graph compiles no Python context manager: torch's record_function kept in
        a forward failed GRAPH_MODE, "Only support jit_class instance"; the label is not in MindSpore's profile)."""
        items = node.items
        if not (len(items) == 1 and isinstance(items[0].item, cst.Call) and items[0].asname is None):
            return False
        qual = self.scope.resolve_torch(items[0].item.func)
        return qual in _GRAD_CONTEXTS or qual in _PROFILE_LABELS or (qual in _AUTOCASTS and any(
            a.keyword is not None and a.keyword.value == "enabled" and isinstance(a.value, cst.Name)
            and a.value.value == "False" for a in items[0].item.args))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._before_backward(node.body)

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node
        self._before_backward(node.body)

    def _before_backward(self, body) -> None:
        """``with torch.no_grad():`` blocks followed in their block by a backward (``.backward()``,
        ``torch.autograd.grad``): inside the code the training rule differentiates, they stay, as
        ``mindport.runtime.training.no_grad`` (what they compute is a constant for the gradient)."""
        if not any(isinstance(stmt, cst.With) for stmt in body):  # no block to keep: no walk for a backward
            return
        later = False
        for stmt in reversed(body):
            if isinstance(stmt, cst.With) and later and self._grad_context(stmt) and \
                    self.scope.resolve_torch(stmt.items[0].item.func) in ("torch.no_grad", "torch.inference_mode"):
                self._kept.add(id(stmt))
            later = later or _runs_backward(stmt)

    def leave_With(self, original_node, updated_node):
        if id(original_node) in self._kept:
            self.ctx.converted_sites += 1
            call = parse_expression(f"{self.ctx.alias_for('mindport.runtime.training')}.no_grad()")
            return updated_node.with_changes(items=[updated_node.items[0].with_changes(item=call)])
        if self._grad_context(original_node):
            self.ctx.converted_sites += 1
            body = updated_node.body
            statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
            if statements and original_node.leading_lines:
                statements[0] = statements[0].with_changes(
                    leading_lines=[*original_node.leading_lines, *statements[0].leading_lines])
            return cst.FlattenSentinel(statements)
        return updated_node

    def leave_Decorator(self, original_node, updated_node):
        if self.scope.resolve_torch(decorator_func(original_node)) in _GRAD_DECORATORS:
            self.ctx.converted_sites += 1
            return cst.RemoveFromParent()
        return updated_node


def _runs_backward(stmt) -> bool:
    """The statement calls ``.backward(...)`` or ``autograd.grad(...)`` (at any depth)."""
    found = []

    class _Walk(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and (func.attr.value == "backward" or (
                    func.attr.value == "grad" and isinstance(func.value, cst.Attribute)
                    and func.value.attr.value == "autograd")):
                found.append(node)

    walk(stmt, _Walk())
    return bool(found)


def _complex_literal(expr: cst.BaseExpression) -> bool:
    """A Python complex number written out: ``1j``, ``-0.5j``, ``(1 + 2j)``, ``complex(0, 1)``."""
    if isinstance(expr, cst.Imaginary):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return _complex_literal(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _number_literal(expr) and (_complex_literal(expr.left) or _complex_literal(expr.right))
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "complex" \
        and all(_number_literal(a.value) for a in expr.args)


# torch functions whose result is complex, or real whatever their input
_COMPLEX_RESULT = ("torch.complex", "torch.view_as_complex", "torch.polar", "torch.fft.fft", "torch.fft.ifft",
                   "torch.fft.fft2", "torch.fft.ifft2", "torch.fft.fftn", "torch.fft.ifftn", "torch.fft.rfft",
                   "torch.fft.rfft2", "torch.fft.rfftn", "torch.fft.ihfft", "torch.stft")
_COMPLEX_DTYPES = ("torch.cfloat", "torch.cdouble", "torch.complex64", "torch.complex128", "torch.chalf",
                   "torch.complex32")
_REAL_RESULT = {"abs", "absolute", "angle", "real", "imag", "view_as_real", "isnan", "isinf", "isfinite", "isclose",
                "allclose", "equal", "eq", "ne", "norm", "numel", "is_complex", "size", "dim", "irfft", "irfft2",
                "irfftn", "hfft", "istft", "float", "double", "half", "long", "int", "bool", "item", "tolist"}


def _complex_value(expr: cst.BaseExpression, names: set[str], scope) -> bool:
    """``expr`` evidently holds a complex value (torch source): a complex number, a name bound to one, a torch call
    that makes one (``torch.view_as_complex``, ``torch.fft.fft``, a complex ``dtype=``), or arithmetic, a method or a
    torch function of one (``A * dt``, ``z.unsqueeze(-1)``, ``torch.exp(z)``, ``rearrange(z, 'n -> n 1')``) other than
    those with a real result (``z.real``, ``z.abs()``, ``torch.view_as_real(z)``, ``irfft(z)``)."""
    if _complex_literal(expr):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in names
    passed = operand_holds(expr, lambda e: _complex_value(e, names, scope))
    if passed is not None:
        return passed
    if not isinstance(expr, cst.Call):
        return False
    qual = scope.resolve(expr.func)
    if qual in _COMPLEX_RESULT:
        return True
    if any(a.keyword is not None and a.keyword.value == "dtype" and scope.resolve(a.value) in _COMPLEX_DTYPES
           for a in expr.args):
        return True
    if (isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _REAL_RESULT) \
            or (qual is not None and qual.rsplit(".", 1)[-1] in _REAL_RESULT):
        return False
    if qual is not None:  # a torch function of a complex value; einops rearranges what it is given
        return (qual.startswith("torch.") or qual.split(".", 1)[0] == "einops") \
            and any(_complex_value(a.value, names, scope) for a in expr.args)
    return isinstance(expr.func, cst.Attribute) and _complex_value(expr.func.value, names, scope)


def _parts_pair(expr: cst.BaseExpression) -> cst.BaseExpression:
    """A complex number written out (``1j``, ``-1j``, ``1.j * 2``) as the pair of its parts, ``(0.0, 1.0)``: a graph
    holds no complex constant ("Unsupported Constant type : 1j", S4D's ``A = -exp(log_A_real) + 1j * A_imag``), and
    ``complex_operation`` takes the pair for the number (the same value: PyNative's results are unchanged). Any other
    operand is returned as it is."""
    if not _complex_literal(expr):
        return expr
    try:
        value = builtins.complex(_evaluate(ast.parse(code_of(expr).strip(), mode="eval").body))
    except (ValueError, TypeError, ZeroDivisionError, OverflowError, SyntaxError):
        return expr
    return parse_expression(f"({value.real!r}, {value.imag!r})")


def _evaluate(node):
    """Number-literal arithmetic (``-1j``, ``2j * 3.14159``, ``complex(0, 1)``), evaluated as Python would."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, builtins.complex)) \
            and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left, right = _evaluate(node.left), _evaluate(node.right)
        return {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                ast.Div: operator.truediv}[type(node.op)](left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "complex" \
            and not node.keywords:
        return builtins.complex(*(_evaluate(a) for a in node.args))
    raise ValueError("not number arithmetic")


def _number_literal(expr: cst.BaseExpression) -> bool:
    """Arithmetic of number literals only (``2``, ``-1j``, ``(1 + 2j)``): Python computes it, no tensor is involved."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return _number_literal(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _number_literal(expr.left) and _number_literal(expr.right)
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "complex" \
        and all(_number_literal(a.value) for a in expr.args)


def _evident_tensor(expr: cst.BaseExpression, scope) -> bool:
    """A torch call's result, or a name bound to one (a function parameter is not evidence)."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Call):
        return value_kind(expr, scope) == "tensor" and not isinstance(expr.func, cst.Name)
    if isinstance(expr, cst.Name):
        # the name's kind at this use (scopes.line_kinds): a notebook-style file's numpy cell binds ``y =
        # np.random.randn(...)`` and a later torch cell ``y = torch.randn(...)``; in the numpy cell ``y_pred - y`` is
        # numpy's (zinsmatt/example.py: ops.sub there ran before MindSpore was imported)
        return (getattr(scope, "use_kinds", {}).get(id(expr)) or scope.kind_of(expr.value)) == "tensor"
    if isinstance(expr, cst.BinaryOperation):
        return _evident_tensor(expr.left, scope) or _evident_tensor(expr.right, scope)
    return False
