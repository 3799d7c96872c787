"""First contact, batch 10 (session 40): classes of failure met on repositories no corpus of ours named, each as a
fixture of our own proven by ``prove_models`` with real torch and real MindSpore (PyNative and GRAPH_MODE)."""
from __future__ import annotations

from tests.discovery._prove import prove_files

ATTEND = '''
from collections import namedtuple
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend

Config = namedtuple("Config", ["enable_flash", "enable_math", "enable_mem_efficient"])


class Attend(nn.Module):
    def __init__(self, flash=True):
        super().__init__()
        self.flash = flash
        self.cpu_config = Config(True, True, True)

    def forward(self, q, k, v):
        config = self.cpu_config
        to_backend = dict(enable_flash=SDPBackend.FLASH_ATTENTION, enable_mem_efficient=SDPBackend.EFFICIENT_ATTENTION,
                          enable_math=SDPBackend.MATH)
        backends = [to_backend[name] for name, on in config._asdict().items() if on]
        with torch.nn.attention.sdpa_kernel(backends):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=False, dropout_p=0.0)
        with torch.backends.cuda.sdp_kernel(**config._asdict()):
            return out + F.scaled_dot_product_attention(q, k, v, is_causal=True)


if __name__ == "__main__":
    q = torch.randn(2, 4, 16, 8)
    Attend()(q, q, q)
'''


def test_attention_kernel_choice_and_a_namedtuple_config_compile_in_a_graph(tmp_path):
    # lucidrains/iTransformer's Attend: ``with sdpa_kernel(backends)`` built from ``config._asdict()``; the port
    # matched in PyNative but GRAPH_MODE failed ("'NamedTuple' object has no attribute '_asdict'", then torch's
    # context manager in a graph): ms-failed. KernelChoiceTransform, NamedTupleDictTransform, the sdpa entries.
    result = prove_files(tmp_path, {"attend.py": ATTEND}, None)["attend.py:Attend"]
    assert result["status"] == "proven", result
    assert [d["graph"] for d in result["draws"]][0] == "ok", result["draws"]
    port = (tmp_path / "out" / "attend.py").read_text()
    assert "import torch" not in port and "_asdict" not in port and "with " not in port
