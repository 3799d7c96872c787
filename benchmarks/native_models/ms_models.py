"""The four models of torch_models.py written by hand in idiomatic MindSpore 2.x (our own code): nn.Cell layers
with MindSpore's own arguments, ops functions, nn.CellList. benchmarks/native_bench.py times them against the
conversion of torch_models.py. Same architectures and sizes (the benchmark checks the parameter counts)."""
import math

import mindspore as ms
import numpy as np
from mindspore import nn, ops


# ---------------------------------------------------------------------------------------------------- ResNet-18

def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1, has_bias=False)


class BasicBlock(nn.Cell):
    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = conv3x3(in_planes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes, momentum=0.9)
        self.relu = nn.ReLU()
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes, momentum=0.9)
        self.downsample = None
        if stride != 1 or in_planes != planes:
            self.downsample = nn.SequentialCell(
                nn.Conv2d(in_planes, planes, 1, stride=stride, pad_mode="valid", has_bias=False),
                nn.BatchNorm2d(planes, momentum=0.9))

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet18(nn.Cell):
    def __init__(self, num_classes=10, width=16):
        super().__init__()
        self.conv1 = conv3x3(3, width)
        self.bn1 = nn.BatchNorm2d(width, momentum=0.9)
        self.relu = nn.ReLU()
        planes, layers = width, []
        for i, mult in enumerate((1, 2, 4, 8)):
            stride = 1 if i == 0 else 2
            layers.append(nn.SequentialCell(BasicBlock(planes, width * mult, stride), BasicBlock(width * mult, width * mult)))
            planes = width * mult
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.fc = nn.Dense(width * 8, num_classes)

    def construct(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = x.mean(axis=(2, 3))
        return self.fc(x)


# ---------------------------------------------------------------------------------------------------- a small ViT

class Attention(nn.Cell):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Dense(dim, dim * 3)
        self.proj = nn.Dense(dim, dim)

    def construct(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = ops.softmax(ops.matmul(q, k.swapaxes(-2, -1)) * self.scale, axis=-1)
        x = ops.matmul(attn, v).swapaxes(1, 2).reshape(b, n, c)
        return self.proj(x)


class Mlp(nn.Cell):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Dense(dim, hidden)
        self.act = nn.GELU(approximate=False)
        self.fc2 = nn.Dense(hidden, dim)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Cell):
    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.norm1 = nn.LayerNorm((dim,), epsilon=1e-5)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm((dim,), epsilon=1e-5)
        self.mlp = Mlp(dim, dim * mlp_ratio)

    def construct(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Cell):
    def __init__(self, image_size=32, patch_size=4, num_classes=10, dim=64, depth=4, heads=4):
        super().__init__()
        num_patches = (image_size // patch_size) ** 2
        self.patch_embed = nn.Conv2d(3, dim, patch_size, stride=patch_size, pad_mode="valid", has_bias=True)
        self.cls_token = ms.Parameter(ops.zeros((1, 1, dim), ms.float32))
        self.pos_embed = ms.Parameter(ops.randn(1, num_patches + 1, dim) * 0.02)
        self.blocks = nn.CellList([Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm((dim,), epsilon=1e-5)
        self.head = nn.Dense(dim, num_classes)

    def construct(self, x):
        x = self.patch_embed(x).flatten(start_dim=2).swapaxes(1, 2)
        cls = ops.broadcast_to(self.cls_token, (x.shape[0], -1, -1))
        x = ops.cat((cls, x), axis=1) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x)[:, 0])


# ---------------------------------------------------------------------------------------------------- GPT-2 decoder

class CausalSelfAttention(nn.Cell):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Dense(n_embd, 3 * n_embd)
        self.c_proj = nn.Dense(n_embd, n_embd)
        mask = np.tril(np.ones((block_size, block_size), np.float32)).reshape(1, 1, block_size, block_size)
        self.bias = ms.Parameter(ms.Tensor(mask), requires_grad=False)

    def construct(self, x):
        B, T, C = x.shape
        q, k, v = ops.split(self.c_attn(x), C, axis=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).swapaxes(1, 2)
        k = k.view(B, T, self.n_head, hs).swapaxes(1, 2)
        v = v.view(B, T, self.n_head, hs).swapaxes(1, 2)
        att = ops.matmul(q, k.swapaxes(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = ops.softmax(att, axis=-1)
        y = ops.matmul(att, v).swapaxes(1, 2).view(B, T, C)
        return self.c_proj(y)


class GPTBlock(nn.Cell):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm((n_embd,), epsilon=1e-5)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm((n_embd,), epsilon=1e-5)
        self.mlp = nn.SequentialCell(nn.Dense(n_embd, 4 * n_embd), nn.GELU(approximate=True),
                                     nn.Dense(4 * n_embd, n_embd))

    def construct(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Cell):
    def __init__(self, vocab_size=256, block_size=64, n_layer=4, n_head=4, n_embd=64):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.CellList([GPTBlock(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm((n_embd,), epsilon=1e-5)
        self.lm_head = nn.Dense(n_embd, vocab_size, has_bias=False)

    def construct(self, idx):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(ops.arange(0, t, dtype=ms.int32))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


# ---------------------------------------------------------------------------------------------------- UNet

class DoubleConv(nn.Cell):
    def __init__(self, cin, cout):
        super().__init__()
        self.double_conv = nn.SequentialCell(
            conv3x3(cin, cout), nn.BatchNorm2d(cout, momentum=0.9), nn.ReLU(),
            conv3x3(cout, cout), nn.BatchNorm2d(cout, momentum=0.9), nn.ReLU())

    def construct(self, x):
        return self.double_conv(x)


class Down(nn.Cell):
    def __init__(self, cin, cout):
        super().__init__()
        self.maxpool_conv = nn.SequentialCell(nn.MaxPool2d(2, stride=2), DoubleConv(cin, cout))

    def construct(self, x):
        return self.maxpool_conv(x)


class Up(nn.Cell):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.Conv2dTranspose(cin, cin // 2, 2, stride=2, pad_mode="valid", has_bias=True)
        self.conv = DoubleConv(cin, cout)

    def construct(self, x1, x2):
        return self.conv(ops.cat([x2, self.up(x1)], axis=1))


class UNet(nn.Cell):
    def __init__(self, n_channels=3, n_classes=2, base=16):
        super().__init__()
        self.inc = DoubleConv(n_channels, base)
        self.down1 = Down(base, base * 2)
        self.down2 = Down(base * 2, base * 4)
        self.down3 = Down(base * 4, base * 8)
        self.up1 = Up(base * 8, base * 4)
        self.up2 = Up(base * 4, base * 2)
        self.up3 = Up(base * 2, base)
        self.outc = nn.Conv2d(base, n_classes, 1, pad_mode="valid", has_bias=True)

    def construct(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x = self.up1(x4, x3)
        x = self.up2(x, x2)
        return self.outc(self.up3(x, x1))
