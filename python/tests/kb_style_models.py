"""Two models written here in KernelBench's problem-file format (a `Model` class and
`get_init_inputs()`), with the operations of KernelBench level 2's problems 31 and 32, the two
presets: the Python tests' stand-ins for those files (the repository holds no copy of
KernelBench's; the bench scripts read them from a checkout, `$KERNELBENCH`)."""
import textwrap

KB31 = textwrap.dedent('''
    import torch, torch.nn as nn
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, constant_value, bias_shape, scaling_factor):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.constant_value = constant_value
            self.bias = nn.Parameter(torch.randn(bias_shape))
            self.scaling_factor = scaling_factor
        def forward(self, x):
            x = self.conv(x)
            x = torch.min(x, torch.tensor(self.constant_value, device=x.device))
            x = x + self.bias
            x = x * self.scaling_factor
            return x
    def get_init_inputs():
        return [64, 128, 3, 0.5, (128, 1, 1), 2.0]
''')
KB32 = textwrap.dedent('''
    import torch, torch.nn as nn
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.scale_factor = scale_factor
        def forward(self, x):
            x = self.conv(x)
            x = x * self.scale_factor
            x = torch.min(x, dim=1, keepdim=True)[0]
            return x
    def get_init_inputs():
        return [64, 128, 3, 2.0]
''')

# One small model per construct of spec language version 2 that `from-torch --train` maps, in
# KernelBench's format (get_inputs() gives the input shapes), with the spec each must give.
KB_V2 = {
    "convt3d_residual": ('''
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(4, 8, 3, stride=2, padding=1, output_padding=1)
        self.bias = nn.Parameter(torch.randn(bias_shape))
    def forward(self, x):
        x = self.conv_transpose(x)
        original_x = x.clone().detach()
        x = x + self.bias
        x = x + original_x
        x = x * original_x
        return x + original_x
def get_inputs():
    return [torch.rand(2, 4, 4, 8, 8)]
def get_init_inputs():
    return [(8, 1, 1, 1)]
''', "conv_transpose3d(n=2,c=4,d=4,h=8,w=8,k=8,t=3,r=3,s=3,stride=2,pad=1,out_pad=1,dilation=1,bias=true)"
     " | as a | add(param[k]) | add(a) | mul(a) | add(a)"),
    "linear_pool1d": ('''
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.matmul = nn.Linear(16, 32)
        self.max_pool = nn.MaxPool1d(4)
    def forward(self, x):
        x = self.matmul(x)
        x = self.max_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.sum(x, dim=1)
        return x * 0.5
def get_inputs():
    return [torch.rand(8, 16)]
def get_init_inputs():
    return []
''', "linear(m=8,k=16,n=32) | max_pool1d(4) | reduce_sum(1,keepdim=false) | mul(0.5)"),
    "linear_instance_norm_two_inputs": ('''
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bmm = nn.Linear(16, 32)
        self.instance_norm = nn.InstanceNorm2d(32, eps=1e-5)
    def forward(self, x, y):
        x = self.bmm(x)
        x = self.instance_norm(x.unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1)
        x = x + y
        return x * y
def get_inputs():
    return [torch.rand(8, 16), torch.rand(8, 32)]
def get_init_inputs():
    return []
''', "linear(m=8,k=16,n=32) | layer_norm(1,affine=false) | add(input1) | mul(input1)"),
    "conv_batch_norm_train_mish": ('''
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8, eps=1e-3)
    def forward(self, x):
        x = self.conv(x)
        x = torch.multiply(torch.tanh(torch.nn.functional.softplus(x)), x)
        return self.bn(x)
def get_inputs():
    return [torch.rand(2, 3, 10, 10)]
def get_init_inputs():
    return []
''', "conv2d(n=2,c=3,h=10,w=10,k=8,r=3,s=3,stride=1,pad=0,dilation=1,bias=true) | mish | batch_norm(eps=0.001)"),
    "matmul_weight_t_hardswish": ('''
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(32, 16))
        self.scale = nn.Parameter(torch.tensor(scale))
    def forward(self, x):
        x = torch.matmul(x, self.weight.T)
        x = x * torch.clamp((x + 3) / 6, 0, 1)
        x = x * self.scale
        return torch.sum(x, dim=1, keepdim=True)
def get_inputs():
    return [torch.rand(8, 16)]
def get_init_inputs():
    return [1.5]
''', "linear(m=8,k=16,n=32,bias=false) | hardswish | mul(1.5) | reduce_sum(1)"),
    "conv3d_gap_squeeze": ('''
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(3, 8, 3, groups=1)
        self.norm = nn.GroupNorm(4, 8)
    def forward(self, x):
        x = self.conv(x)
        x = self.norm(x)
        x = torch.sigmoid(x) * x
        x = torch.nn.functional.adaptive_avg_pool3d(x, 1)
        return x.squeeze(-1).squeeze(-1).squeeze(-1)
def get_inputs():
    return [torch.rand(2, 3, 6, 8, 8)]
def get_init_inputs():
    return []
''', "conv3d(n=2,c=3,d=6,h=8,w=8,k=8,t=3,r=3,s=3,stride=1,pad=0,dilation=1,bias=true) | group_norm(4) | silu"
     " | reduce_mean(spatial,keepdim=false)"),
}
KB_DROPOUT = '''
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.matmul = nn.Linear(16, 32)
        self.dropout = nn.Dropout(0.2)
    def forward(self, x):
        x = self.matmul(x)
        x = self.dropout(x)
        return torch.softmax(x, dim=1)
def get_inputs():
    return [torch.rand(8, 16)]
def get_init_inputs():
    return []
'''
