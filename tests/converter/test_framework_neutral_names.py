"""A framework-neutral name of a torch-based package (transformers' tokenizers and configurations: names.
FRAMEWORK_NEUTRAL) is used as any library's: its import stays, its line is converted and not flagged; the package's
torch-based names are still flagged MP106 with their line kept (saurabhaloneai/image-cap's
``nn.Embedding(len(BertTokenizer.from_pretrained(...)), d)`` stayed torch's whole line, and the MindSpore Cell held a
torch Embedding)."""
from __future__ import annotations

import textwrap

import pytest

from mindport import convert_source
from mindport.names import torch_package

SOURCE = textwrap.dedent("""\
    import torch.nn as nn
    from transformers import BertTokenizer, BertModel, AutoConfig, PreTrainedTokenizerFast


    class Decoder(nn.Module):
        def __init__(self, embed_size):
            super().__init__()
            self.embedding = nn.Embedding(len(BertTokenizer.from_pretrained("bert-base-uncased")), embed_size)
            self.config = AutoConfig.from_pretrained("bert-base-uncased")
            self.bert = BertModel.from_pretrained("bert-base-uncased")

        def forward(self, x):
            return self.embedding(x)
""")


def test_tokenizers_and_configs_are_kept_and_their_lines_converted():
    result = convert_source(SOURCE)
    assert "from transformers import BertTokenizer, BertModel, AutoConfig" in result.code, result.code
    assert "nn.Embedding(vocab_size=len(BertTokenizer.from_pretrained(" in result.code, result.code
    assert "import torch" not in result.code and "torch.nn" not in result.code, result.code
    flagged = [d for d in result.diagnostics if d.code == "MP106"]
    assert [d.message.split(":")[0] for d in flagged] == ["transformers.BertModel.from_pretrained"], flagged


@pytest.mark.parametrize("name, package", [
    ("transformers.BertTokenizer", None), ("transformers.AutoTokenizer.from_pretrained", None),
    ("transformers.GPT2TokenizerFast", None), ("transformers.BertConfig", None),
    ("transformers.BertModel", "transformers"), ("transformers.AutoModel.from_pretrained", "transformers"),
    ("transformers", "transformers"), ("timm.layers.Mlp", "timm"),
])
def test_which_names_are_torch_based(name, package):
    assert torch_package(name) == package
