"""Which CUDA kernels PyTorch runs for an NCHW conv (cudnn.benchmark=True, TF32 allowed), with
their median device times from the profiler: the two problems of issue 9's NCHW-conv acceptance.

    CUDNN_FRONTEND_LOG_INFO=1 CUDNN_FRONTEND_LOG_FILE=frontend.log python3 bench/torch_conv_kernels.py

(the frontend log lists the engine configurations PyTorch's search built, by cuDNN's name).
"""
import statistics
import sys
from collections import defaultdict

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = True
for (n, c, h, w, k, r) in [(128, 16, 192, 192, 64, 3), (256, 8, 128, 128, 64, 3)]:
    x = torch.rand(n, c, h, w, device="cuda"); wt = torch.rand(k, c, r, r, device="cuda") - 0.5
    with torch.no_grad():
        for _ in range(5): F.conv2d(x, wt)
        torch.cuda.synchronize()
        print(f"== c={c}: benchmark done", file=sys.stderr, flush=True)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(20): F.conv2d(x, wt)
            torch.cuda.synchronize()
    per = defaultdict(list)
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            per[ev.name].append(ev.device_time)
    print(f"\n## n={n} c={c} h={h} w={w} k={k} r={r}")
    for name, t in per.items():
        print(f"- {len(t)/20:.1f}x median {statistics.median(t):.1f} us: {name}")
