"""The converter rule KernelChoiceTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/kernel_choice.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule

# the runtime's no-effect context: an entry targeting it is a choice of torch's kernels (the tables say which)
_NO_EFFECT = "mindport.runtime.framework.kernel_choice"


class KernelChoiceTransform(GraphMethodRule):
    """In a model's methods, ``with torch.nn.attention.sdpa_kernel(backends):`` (and ``torch.backends.cuda.
    sdp_kernel(...)``, every entry whose target is ``mp_framework.kernel_choice``) -> the block's body alone.

    The block chooses which of torch's attention kernels ``scaled_dot_product_attention`` may run: speed and rounding,
    not meaning, and MindSpore picks its own kernel (the tables map the call to ``mp_framework.kernel_choice``, a
    context manager that does nothing). In a static graph (GRAPH_MODE, ``@jit``) a Python context manager does not
    compile, so lucidrains' ``Attend.flash_attn`` (iTransformer, x-transformers) failed there; the body alone
    compiles and computes the same. Only a ``with`` of that one item and no ``as`` target; outside a model's methods
    the block keeps its form (the runtime's context manager runs in PyNative).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn
                import torch.nn.functional as F
                from torch.nn.attention import SDPBackend, sdpa_kernel


                class Attend(nn.Module):
                    def __init__(self, causal=False):
                        super().__init__()
                        self.causal = causal

                    def forward(self, q, k, v):
                        backends = [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]
                        # the kernels torch may use
                        with sdpa_kernel(backends):
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
                        return out


                def attend(q, k, v):
                    with sdpa_kernel([SDPBackend.MATH]):
                        return F.scaled_dot_product_attention(q, k, v)
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import framework as mp_framework


                class Attend(nn.Cell):
                    def __init__(self, causal=False):
                        super().__init__()
                        self.causal = causal

                    def construct(self, q, k, v):
                        backends = [mp_framework.SDPBackend.FLASH_ATTENTION, mp_framework.SDPBackend.MATH]
                        # the kernels torch may use
                        out = mp_F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
                        return out


                def attend(q, k, v):
                    with mp_framework.kernel_choice(backends=[mp_framework.SDPBackend.MATH]):
                        return mp_F.scaled_dot_product_attention(q, k, v)
            """,
            note="In the model the block's body stands alone; a function outside one keeps the (inert) block.",
        ),
    )

    def leave_With(self, original_node, updated_node):
        if not self.compiled or len(original_node.items) != 1 or original_node.items[0].asname is not None \
                or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        call = original_node.items[0].item
        qual = self.scope.resolve_torch(call.func) if isinstance(call, cst.Call) else None
        entry = self.ctx.registry.lookup(qual) if qual is not None else None
        if entry is None or entry.resolve(self.ctx.options.target)[0] != _NO_EFFECT:
            return updated_node
        body = list(updated_node.body.body)
        if not body:
            return updated_node
        body[0] = body[0].with_changes(leading_lines=[*updated_node.leading_lines, *body[0].leading_lines])
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(body)
