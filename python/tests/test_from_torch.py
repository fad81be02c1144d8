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
from kb_style_models import KB31, KB32  # noqa: E402


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


if __name__ == "__main__":  # without pytest: every test in a fresh temporary directory
    import pathlib
    import tempfile
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            with tempfile.TemporaryDirectory() as d:
                fn(pathlib.Path(d))
            print(f"ok   {name}")
