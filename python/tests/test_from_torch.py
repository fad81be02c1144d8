"""`fusetune from-torch` end to end on real models (needs torch: skipped without it; runs on the
GPU machine through scripts/gpu_check.sh, and anywhere torch is installed, no GPU needed):
KernelBench's two preset models and python/examples/four_blocks.py give the specs fusetune's
own presets are, with every conv found."""
import json
import os
import subprocess
import sys

try:
    import pytest
except ImportError:  # the GPU machine's python3: run as a script (below)
    pytest = None

torch = pytest.importorskip("torch") if pytest else __import__("torch")

HERE = os.path.dirname(__file__)
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, ROOT)

from fusetune_torch.from_torch import main  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kb_style_models import KB31, KB32, KB_DROPOUT, KB_V2  # noqa: E402


def specs_of(tmp_path, source, target, shape, *more):
    f = tmp_path / "model.py"
    f.write_text(source)
    out, js = tmp_path / "specs.txt", tmp_path / "blocks.json"
    rc = main([f"{f}:{target}", "--input-shape", shape, "-o", str(out), "--json", str(js), *more])
    lines = [ln.split("#")[0].strip() for ln in out.read_text().splitlines()]
    return rc, [ln for ln in lines if ln], json.loads(js.read_text())


def test_kernelbench_presets(tmp_path):
    rc, specs, _ = specs_of(tmp_path, KB31, "Model", "128,64,128,128")
    assert rc == 0 and specs == ["conv2d(n=128,c=64,h=128,w=128,k=128,r=3,s=3,stride=1,pad=0,dilation=1,bias=true)"
                                 " | min(0.5) | add(param[k]) | mul(2)"]
    rc, specs, _ = specs_of(tmp_path, KB32, "Model", "64,64,256,256")
    assert rc == 0 and specs == ["conv2d(n=64,c=64,h=256,w=256,k=128,r=3,s=3,stride=1,pad=0,dilation=1,bias=true)"
                                 " | mul(2) | reduce_min(channel)"]


def test_four_blocks(tmp_path):
    with open(os.path.join(ROOT, "examples", "four_blocks.py")) as f:
        rc, specs, js = specs_of(tmp_path, f.read(), "FourBlocks", "8,32,64,64")
    assert rc == 0
    assert [s.split(" | ", 1)[1] for s in specs] == [
        "mul(param[k]) | add(param[k]) | relu",
        "mul(param[k]) | gelu",
        "clamp(-1,1) | sigmoid",
        "silu | reduce_max(channel) | mul(0.5)",
    ]
    assert [b["conv"] for b in js["blocks"]] == ["conv1", "conv2", "conv3", "conv4"]
    # the values passed from block to block stay channels-last; the model's input and output do not
    assert [(b["layout"]["in"], b["layout"]["out"]) for b in js["blocks"]] == [
        ("nchw", "nhwc"), ("nhwc", "nhwc"), ("nhwc", "nhwc"), ("nhwc", "nchw")]
    assert ",bias=true,out=nhwc)" in specs[0] and ",in=nhwc)" in specs[3]
    with open(os.path.join(ROOT, "examples", "four_blocks.py")) as f:
        rc, nchw, _ = specs_of(tmp_path, f.read(), "FourBlocks", "8,32,64,64", "--layout", "nchw")
    assert rc == 0 and nchw == [s.replace(",in=nhwc", "").replace(",out=nhwc", "") for s in specs]
    assert js["blocks"][0]["params"] == [{"kind": "bn_scale", "path": "bn1"}, {"kind": "bn_shift", "path": "bn1"}]
    assert js["unmatched"] == []


def test_the_specs_parse_in_fusetune(tmp_path):
    fusetune = os.environ.get("FUSETUNE", os.path.join(ROOT, "..", "build", "fusetune"))
    if not os.path.exists(fusetune):
        if pytest:
            pytest.skip("no build/fusetune")
        return
    with open(os.path.join(ROOT, "examples", "four_blocks.py")) as f:
        specs_of(tmp_path, f.read(), "FourBlocks", "8,32,64,64")
    for line in (tmp_path / "specs.txt").read_text().splitlines():
        spec = line.split("#")[0].strip()
        if spec:
            # a query of an empty database parses the spec: 4 (nothing stored), 2 for a bad spec
            r = subprocess.run([fusetune, "query", spec, "--db", str(tmp_path / "t.db")], capture_output=True, text=True)
            assert r.returncode in (0, 4), r.stderr


def whole(tmp_path, source, *more):
    """from-torch on a KernelBench-style file (shapes from its get_inputs()): (exit status, spec
    lines, the JSON's model entry, stderr lines are not read)."""
    f = tmp_path / "model.py"
    f.write_text(source)
    out, js = tmp_path / "specs.txt", tmp_path / "blocks.json"
    rc = main([f"{f}:Model", "-o", str(out), "--json", str(js), *more])
    lines = [ln.split("#")[0].strip() for ln in out.read_text().splitlines()]
    return rc, [ln for ln in lines if ln], json.loads(js.read_text()), out.read_text()


def test_kernelbench_style_models_map_whole_in_training_mode(tmp_path):
    fusetune = os.environ.get("FUSETUNE", os.path.join(ROOT, "..", "build", "fusetune"))
    for name, (source, want) in KB_V2.items():
        rc, specs, js, _ = whole(tmp_path, source, "--train")
        assert rc == 0 and specs == [want], (name, specs)
        assert js["model"]["spec"] == want
        if os.path.exists(fusetune):  # the C++ parser is the authority: 4 = parsed, nothing stored
            r = subprocess.run([fusetune, "query", want, "--db", str(tmp_path / "t.db")], capture_output=True, text=True)
            assert r.returncode in (0, 4), (name, r.stderr)


def test_active_dropout_is_refused_with_its_file_line(tmp_path, capsys):
    rc, specs, js, text = whole(tmp_path, KB_DROPOUT, "--train")
    assert rc == 1 and specs == []
    assert js["model"]["refused"].startswith("model.py:10: nn.Dropout (dropout): dropout in training mode (p=0.2)")
    assert "# not mapped: model.py:10: nn.Dropout" in text
    assert "not mapped: model.py:10" in capsys.readouterr().err
    rc, specs, _, _ = whole(tmp_path, KB_DROPOUT)  # eval mode: dropout is the identity
    assert rc == 0 and specs == ["linear(m=8,k=16,n=32) | softmax(1)"]


def test_eval_mode_folds_batch_norm_as_before(tmp_path):
    source, _ = KB_V2["conv_batch_norm_train_mish"]
    rc, specs, _, _ = whole(tmp_path, source, "--input-shape", "2,3,10,10")
    assert rc == 0 and specs == ["conv2d(n=2,c=3,h=10,w=10,k=8,r=3,s=3,stride=1,pad=0,dilation=1,bias=true)"
                                 " | mish | mul(param[k]) | add(param[k])"]


def test_the_rewrites_compute_what_the_model_computes():
    """The exact rewrites, checked on numbers: InstanceNorm2d of x.unsqueeze(1).unsqueeze(1) is a layer
    norm over the features without affine; the decomposed mish and hardswish are torch's; x*0.5 + x is
    x*1.5 (to rounding)."""
    import torch.nn.functional as F
    torch.manual_seed(0)
    x = torch.randn(64, 257, dtype=torch.float64) * 3
    inorm = torch.nn.InstanceNorm2d(257, eps=1e-5).double()(x.unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1)
    assert torch.allclose(inorm, F.layer_norm(x, (257,), eps=1e-5), rtol=0, atol=1e-12)
    assert torch.allclose(torch.tanh(F.softplus(x)) * x, F.mish(x), rtol=0, atol=1e-12)
    assert torch.allclose(x * torch.clamp((x + 3) / 6, 0, 1), F.hardswish(x), rtol=0, atol=1e-12)
    assert torch.allclose(x * 0.5 + x, x * 1.5, rtol=1e-15, atol=0)
    assert torch.equal(F.adaptive_avg_pool2d(x.view(8, 8, 257, 1), 1).squeeze(-1).squeeze(-1),
                       x.view(8, 8, 257, 1).mean(dim=(2, 3)))


if __name__ == "__main__":  # without pytest: every test in a fresh temporary directory
    import pathlib
    import tempfile
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            with tempfile.TemporaryDirectory() as d:
                if fn.__code__.co_argcount == 2:  # capsys: pytest's only
                    continue
                fn(*([pathlib.Path(d)] if fn.__code__.co_argcount else []))
            print(f"ok   {name}")
