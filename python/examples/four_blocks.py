"""A model of four conv blocks with different epilogue kinds, for `fusetune from-torch`:
    fusetune from-torch python/examples/four_blocks.py:FourBlocks --input-shape 8,32,64,64
(the acceptance model of issue 14: one with BatchNorm, one with a channel reduction)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FourBlocks(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        self.conv1 = nn.Conv2d(c, 64, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(64)
        self.conv2 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.scale2 = nn.Parameter(torch.randn(64, 1, 1))
        self.conv3 = nn.Conv2d(64, 128, 3, stride=2, padding=1)
        self.conv4 = nn.Conv2d(128, 128, 1)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))               # conv + BatchNorm + relu
        x = F.gelu(self.conv2(x) * self.scale2)            # per-channel scale, gelu
        x = torch.clamp(self.conv3(x), -1.0, 1.0).sigmoid()  # clamp, sigmoid (method form)
        y = self.conv4(x)
        return torch.amax(F.silu(y), dim=1, keepdim=True) * 0.5  # silu, max over channels, scalar


def get_init_inputs():
    return [32]


def get_inputs():
    return [torch.rand(8, 32, 64, 64)]
