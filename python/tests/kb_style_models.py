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
