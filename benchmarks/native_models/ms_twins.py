"""Hand-written MindSpore twins of two trials ports (benchmarks/trials/modern.json), written as a MindSpore user
writes them (our own code, from the architecture, not from the port): the real repository's torch code converted by
mindport is timed against these by ``native_bench.py --ports``.

* ``SimpleViT``: lucidrains/vit-pytorch's simple_vit (entry ``vit/simple_vit``): patches by reshape/transpose, pre-norm
  attention and MLP blocks, fixed 2-D sin-cos positions, mean pooling.
* ``wideresnet``: weiaicunzai/pytorch-cifar100's WideResNet (entry ``cifar100/wideresnet``): pre-activation wide
  basic blocks (BN-ReLU-conv-BN-ReLU-dropout-conv), a 1x1 conv shortcut where the shape changes.
The parameter counts equal the ports' (native_bench checks it).
"""
from __future__ import annotations

import numpy as np

import mindspore as ms
from mindspore import nn, ops


# ------------------------------------------------------------------------------------------------ SimpleViT
def _sincos_2d(h: int, w: int, dim: int, temperature: float = 10000.0) -> ms.Tensor:
    y, x = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    omega = 1.0 / temperature ** (np.arange(dim // 4) / (dim // 4 - 1))
    y = y.reshape(-1)[:, None] * omega[None, :]
    x = x.reshape(-1)[:, None] * omega[None, :]
    return ms.Tensor(np.concatenate((np.sin(x), np.cos(x), np.sin(y), np.cos(y)), axis=1), ms.float32)


class _Attention(nn.Cell):
    def __init__(self, dim: int, heads: int, dim_head: int):
        super().__init__()
        self.heads, self.dim_head, self.scale = heads, dim_head, dim_head ** -0.5
        self.norm = nn.LayerNorm((dim,))
        self.to_qkv = nn.Dense(dim, heads * dim_head * 3, has_bias=False)
        self.to_out = nn.Dense(heads * dim_head, dim, has_bias=False)

    def construct(self, x):
        b, n, _ = x.shape
        qkv = self.to_qkv(self.norm(x)).reshape(b, n, 3, self.heads, self.dim_head).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = ops.softmax(ops.matmul(q, k.swapaxes(-1, -2)) * self.scale, axis=-1)
        return self.to_out(ops.matmul(attn, v).transpose(0, 2, 1, 3).reshape(b, n, -1))


class SimpleViT(nn.Cell):
    def __init__(self, *, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, channels=3, dim_head=64):
        super().__init__()
        self.p = patch_size
        patch_dim = channels * patch_size * patch_size
        self.patch_norm = nn.LayerNorm((patch_dim,))
        self.patch_dense = nn.Dense(patch_dim, dim)
        self.embed_norm = nn.LayerNorm((dim,))
        self.pos = _sincos_2d(image_size // patch_size, image_size // patch_size, dim)
        self.attns = nn.CellList([_Attention(dim, heads, dim_head) for _ in range(depth)])
        self.mlps = nn.CellList([nn.SequentialCell(nn.LayerNorm((dim,)), nn.Dense(dim, mlp_dim), nn.GELU(False),
                                                   nn.Dense(mlp_dim, dim)) for _ in range(depth)])
        self.norm = nn.LayerNorm((dim,))
        self.head = nn.Dense(dim, num_classes)

    def construct(self, img):
        b, c, h, w = img.shape
        p = self.p
        x = img.reshape(b, c, h // p, p, w // p, p).transpose(0, 2, 4, 3, 5, 1).reshape(b, (h // p) * (w // p), -1)
        x = self.embed_norm(self.patch_dense(self.patch_norm(x))) + self.pos
        for attn, mlp in zip(self.attns, self.mlps):
            x = attn(x) + x
            x = mlp(x) + x
        return self.head(self.norm(x).mean(axis=1))


# ------------------------------------------------------------------------------------------------ WideResNet
class _WideBasic(nn.Cell):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.residual = nn.SequentialCell(
            nn.BatchNorm2d(cin), nn.ReLU(),
            nn.Conv2d(cin, cout, 3, stride, pad_mode="pad", padding=1, has_bias=True),
            nn.BatchNorm2d(cout), nn.ReLU(), nn.Dropout(p=0.5),
            nn.Conv2d(cout, cout, 3, 1, pad_mode="pad", padding=1, has_bias=True))
        self.shortcut = nn.Conv2d(cin, cout, 1, stride, has_bias=True) if cin != cout or stride != 1 else nn.Identity()

    def construct(self, x):
        return self.residual(x) + self.shortcut(x)


class WideResNet(nn.Cell):
    def __init__(self, num_classes: int = 100, depth: int = 40, widen_factor: int = 10):
        super().__init__()
        n, k = (depth - 4) // 6, widen_factor
        self.init_conv = nn.Conv2d(3, 16, 3, 1, pad_mode="pad", padding=1, has_bias=True)
        blocks, cin = [], 16
        for cout, stride in ((16 * k, 1), (32 * k, 2), (64 * k, 2)):
            for i in range(n):
                blocks.append(_WideBasic(cin, cout, stride if i == 0 else 1))
                cin = cout
        self.blocks = nn.SequentialCell(blocks)
        self.bn = nn.BatchNorm2d(cin)
        self.relu = nn.ReLU()
        self.linear = nn.Dense(cin, num_classes)

    def construct(self, x):
        x = self.relu(self.bn(self.blocks(self.init_conv(x))))
        return self.linear(x.mean(axis=(2, 3)))


def wideresnet(depth: int = 40, widen_factor: int = 10) -> WideResNet:
    return WideResNet(100, depth=depth, widen_factor=widen_factor)
