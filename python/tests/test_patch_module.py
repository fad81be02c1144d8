"""patch() / unpatch() of `fusetune export --format torch-patch` on real models, on the CPU (needs
torch: skipped without it; runs on the GPU machine through scripts/gpu_check.sh, and anywhere
torch is installed). The module is the export template with its runtime; its tuned ops are
stand-ins that compute each block's spec with torch, so what is checked is the graph surgery:
every block found by from-torch's records and replaced, fed the model's own parameters (a
BatchNorm folded as fusetune folds it), the rest of the model left as it was, unpatch() restoring
it, and the refusals (a model that is not the one from-torch saw, a training BatchNorm)."""
import copy
import json
import os
import re
import sys
import types

try:
    import pytest
except ImportError:  # the GPU machine's python3: run as a script (below)
    pytest = None

torch = pytest.importorskip("torch") if pytest else __import__("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(__file__)
ROOT = os.path.join(HERE, "..")
TEMPLATES = os.path.join(ROOT, "..", "export_templates")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

from fusetune_torch.from_torch import main as from_torch  # noqa: E402

sys.path.insert(0, HERE)
from kb_style_models import KB31, KB32  # noqa: E402

# The spec language's ops (docs/spec-language.md) that the example models use, in torch.
UNARY = {"relu": torch.relu, "gelu": F.gelu, "sigmoid": torch.sigmoid, "silu": F.silu}


class StandInOp:
    """What patch() needs of an _Op: its conv's keyword arguments, check_input, and a call that
    computes the block: conv(x, weight, chan's bias) then the spec's ops with chan's params."""

    def __init__(self, spec, conv, input_shape):
        self.conv, self.input_shape, self.calls = conv, input_shape, 0
        self.stages = [s.strip() for s in spec.split(" | ")[1:]]
        # as fusetune's op: the result channels-last where the spec says out=nhwc
        self.output_layout = "nhwc" if "out=nhwc" in spec.split(" | ")[0] else "nchw"

    def check_input(self, x):
        if tuple(x.shape) != self.input_shape:
            raise ValueError(f"input shape {tuple(x.shape)}: tuned for {self.input_shape}")

    def __call__(self, x, weight, chan):
        self.calls += 1
        k = self.conv["out_channels"]
        parts = list(chan.reshape(-1).split(k)) if chan.numel() else []
        bias = parts.pop(0) if self.conv["bias"] else None
        y = F.conv2d(x, weight, bias, self.conv["stride"], self.conv["padding"], self.conv["dilation"])
        for stage in self.stages:
            m = re.fullmatch(r"(\w+)(?:\((.*)\))?", stage)
            op, args = m.group(1), [a for a in (m.group(2) or "").split(",") if a and a != "channel"]
            vals = [parts.pop(0).view(1, -1, 1, 1) if a == "param[k]" else float(a) for a in args]
            if op in UNARY:
                y = UNARY[op](y)
            elif op == "mul":
                y = y * vals[0]
            elif op == "add":
                y = y + vals[0]
            elif op == "clamp":
                y = torch.clamp(y, vals[0], vals[1])
            elif op == "reduce_max":
                y = torch.amax(y, dim=1, keepdim=True)
            elif op == "reduce_min":
                y = torch.amin(y, dim=1, keepdim=True)
            elif op == "min":
                y = torch.clamp(y, max=vals[0])
            else:
                raise AssertionError(f"the stand-in has no {op}")
        return y.contiguous(memory_format=torch.channels_last) if self.output_layout == "nhwc" else y.contiguous()


def patch_module(tmp_path, model_file, target, shape, init_args=None):
    """The torch-patch module for `target`, as export writes it, with stand-in ops."""
    specs, js = tmp_path / "specs.txt", tmp_path / "blocks.json"
    argv = [f"{model_file}:{target}", "--input-shape", ",".join(map(str, shape)), "-o", str(specs), "--json", str(js)]
    assert from_torch(argv + (["--init-args", init_args] if init_args else [])) == 0
    text = open(os.path.join(TEMPLATES, "torch_patch.py.in")).read()
    runtime = open(os.path.join(TEMPLATES, "torch_runtime.py.in")).read()
    text = text.replace("@HEADER@", "# test").replace("@RUNTIME@", runtime).replace("@OPS@", "").replace("@BLOCKS@", "")
    module = types.ModuleType("patch_under_test")
    exec(compile(text, "patch_under_test.py", "exec"), module.__dict__)
    # The records as export checks and writes them (the spec file's #@block lines).
    lines = specs.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("conv2d("):
            spec = line.split("#")[0].strip()
            rec = json.loads(lines[i + 1][len("#@block "):])
            conv = json.load(open(js))["blocks"][len(module.BLOCKS)]
            assert conv["conv"] == rec["conv"]
            geometry = re.search(r"conv2d\((.*?)\)", spec).group(1)
            g = dict(kv.split("=") for kv in geometry.split(","))
            pair = lambda v: tuple(int(p) for p in v.split("x")) * (1 if "x" in v else 2)  # noqa: E731
            conv_kwargs = dict(in_channels=int(g["c"]), out_channels=int(g["k"]), kernel_size=(int(g["r"]), int(g["s"])),
                               stride=pair(g["stride"]), padding=pair(g["pad"]), dilation=pair(g["dilation"]),
                               bias=g["bias"] == "true")
            op = StandInOp(spec, conv_kwargs, (int(g["n"]), int(g["c"]), int(g["h"]), int(g["w"])))
            module.BLOCKS.append(dict(spec=spec, line=i + 1, op=op, **rec))
    return module


def four_blocks():
    from four_blocks import FourBlocks
    torch.manual_seed(0)
    model = FourBlocks(32).eval()
    # BatchNorm statistics that are not the identity, so the fold is checked.
    model.bn1.running_mean.uniform_(-1, 1)
    model.bn1.running_var.uniform_(0.5, 2)
    model.bn1.weight.data.uniform_(0.5, 1.5)
    model.bn1.bias.data.uniform_(-0.5, 0.5)
    return model


def test_four_blocks_patched_and_unpatched(tmp_path):
    shape = (2, 32, 16, 16)
    m = patch_module(tmp_path, os.path.join(ROOT, "examples", "four_blocks.py"), "FourBlocks", shape)
    assert len(m.BLOCKS) == 4
    model = four_blocks()
    x = torch.rand(*shape)
    with torch.no_grad():
        want = model(x)
    sd = {k: v.clone() for k, v in model.state_dict().items()}
    assert m.patch(model) is model
    assert "forward" in model.__dict__
    gm = model.forward.__self__
    calls = [n for n in gm.graph.nodes if n.op == "call_module"]
    # Only the blocks are left: each conv and its epilogue became one call.
    assert [n.target for n in calls] == [f"fusetune_block{i}" for i in range(4)], [n.target for n in calls]
    with torch.no_grad():
        got = model(x)
    assert [b["op"].calls for b in m.BLOCKS] == [1, 1, 1, 1]
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    # The model's parameters, modules and state_dict are what they were.
    assert list(model.state_dict()) == list(sd) and all(torch.equal(model.state_dict()[k], v) for k, v in sd.items())
    assert "fusetune" not in " ".join(n for n, _ in model.named_modules())
    # The parameters are read on every call: a change reaches the patched forward.
    with torch.no_grad():
        model.scale2.mul_(2)
        model.bn1.running_var.mul_(3)
        want2 = m.unpatch(copy.deepcopy(model))(x)
        got2 = model(x)
    torch.testing.assert_close(got2, want2, rtol=1e-5, atol=1e-6)
    # A second patch is refused; unpatch gives the class's forward back.
    with pytest.raises(ValueError, match="already replaced") if pytest else _raises(ValueError):
        m.patch(model)
    m.unpatch(model)
    assert "forward" not in model.__dict__
    with torch.no_grad():
        torch.testing.assert_close(model(x), want2)
    # Another input shape: the tuned op says so.
    m.patch(model)
    with pytest.raises(ValueError, match="tuned for") if pytest else _raises(ValueError):
        model(torch.rand(1, 32, 16, 16))


def test_channels_last_between_blocks_and_nowhere_else(tmp_path):
    # from-torch chains layouts: the values passed from block to block are channels-last, the
    # model's output is not.
    shape = (2, 32, 16, 16)
    m = patch_module(tmp_path, os.path.join(ROOT, "examples", "four_blocks.py"), "FourBlocks", shape)
    assert [b["op"].output_layout for b in m.BLOCKS] == ["nhwc", "nhwc", "nhwc", "nchw"]
    model = four_blocks()
    x = torch.rand(*shape)
    with torch.no_grad():
        want = model(x)
        got = m.patch(model)(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert got.is_contiguous()
    # Without conv2's block (its line taken out of the spec file), conv1's channels-last output
    # would reach the model's own conv2: patch() hands it over as PyTorch lays it out.
    del m.BLOCKS[1]
    model = four_blocks()
    seen = []
    model.conv2.register_forward_pre_hook(lambda mod, inp: seen.append(inp[0].is_contiguous()))
    with torch.no_grad():
        got = m.patch(model)(x)
    gm = model.forward.__self__
    assert [n.target for n in gm.graph.nodes if n.op == "call_method"] == ["contiguous"]
    assert seen == [True]
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_kernelbench_models_become_one_block(tmp_path):
    # Model 31's torch.tensor(0.5) and model 32's min with indices go with their blocks (the two
    # presets' models, written here in KernelBench's format: python/tests/kb_style_models.py).
    for name, source in (("kb31.py", KB31), ("kb32.py", KB32)):
        shape = (2, 64, 12, 12)
        path = str(tmp_path / name)
        with open(path, "w") as f:
            f.write(source)
        ns = {}
        exec(compile(source, path, "exec"), ns)
        m = patch_module(tmp_path, path, "Model", shape)
        torch.manual_seed(0)
        model = ns["Model"](*ns["get_init_inputs"]()).eval()
        x = torch.rand(*shape)
        with torch.no_grad():
            want = model(x)
            m.patch(model)
            got = model(x)
        nodes = [n for n in model.forward.__self__.graph.nodes]
        assert [n.op for n in nodes] == ["placeholder", "call_module", "output"], [n.format_node() for n in nodes]
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_resnet18_every_block_patched(tmp_path):
    # A model of the kind users bring: 20 conv + BatchNorm (+ relu) blocks, residual adds and a
    # max pool between them (torchvision's ResNet-18; skipped without torchvision).
    if pytest:
        pytest.importorskip("torchvision")
    else:
        try:
            import torchvision  # noqa: F401
        except ImportError:
            return
    model_file = tmp_path / "rn.py"
    model_file.write_text("import torchvision\n"
                          "class ResNet18(torchvision.models.ResNet):\n"
                          "    def __init__(self):\n"
                          "        super().__init__(torchvision.models.resnet.BasicBlock, [2, 2, 2, 2])\n")
    shape = (2, 3, 64, 64)
    m = patch_module(tmp_path, str(model_file), "ResNet18", shape, init_args="[]")
    assert len(m.BLOCKS) == 20
    ns = {}
    exec(compile(model_file.read_text(), str(model_file), "exec"), ns)
    torch.manual_seed(0)
    model = ns["ResNet18"]().eval()
    for mod in model.modules():  # BatchNorm statistics that are not the identity
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 2)
    x = torch.rand(*shape)
    with torch.no_grad():
        want = model(x)
        m.patch(model)
        got = model(x)
    calls = [n.target for n in model.forward.__self__.graph.nodes if n.op == "call_module"]
    assert sum(c.startswith("fusetune_block") for c in calls) == 20
    assert not any(c.endswith(("conv1", "conv2", "bn1", "bn2")) for c in calls), calls
    assert [b["op"].calls for b in m.BLOCKS] == [1] * 20
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_training_batchnorm_is_refused(tmp_path):
    shape = (2, 32, 16, 16)
    m = patch_module(tmp_path, os.path.join(ROOT, "examples", "four_blocks.py"), "FourBlocks", shape)
    model = m.patch(four_blocks())
    model.train()
    with pytest.raises(RuntimeError, match="training mode") if pytest else _raises(RuntimeError):
        model(torch.rand(*shape))


def test_another_model_is_refused_unchanged(tmp_path):
    shape = (2, 32, 16, 16)
    m = patch_module(tmp_path, os.path.join(ROOT, "examples", "four_blocks.py"), "FourBlocks", shape)

    class Other(nn.Module):  # same attribute names, another graph
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(32, 64, 3, padding=1)

        def forward(self, x):
            return self.conv1(x)

    other = Other()
    with pytest.raises(ValueError, match="has no node") if pytest else _raises(ValueError):
        m.patch(other)
    assert "forward" not in other.__dict__
    # Same graph, another conv geometry at the block's path.
    model = four_blocks()
    model.conv3 = nn.Conv2d(64, 128, 3, stride=1, padding=1)
    with pytest.raises(ValueError, match="not the conv that was tuned") if pytest else _raises(ValueError):
        m.patch(model)
    assert "forward" not in model.__dict__


class _raises:
    def __init__(self, kind):
        self.kind = kind

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        assert kind is not None and issubclass(kind, self.kind), f"expected {self.kind.__name__}"
        return True


if __name__ == "__main__":  # without pytest: every test in a fresh temporary directory
    import pathlib
    import tempfile
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            with tempfile.TemporaryDirectory() as d:
                fn(pathlib.Path(d))
            print(f"ok   {name}")
