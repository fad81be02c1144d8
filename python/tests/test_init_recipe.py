"""The init file of a version-2 export (python/fusetune_torch/init_recipe.py): bind and the contract's
checks without torch; with torch (skipped without it; run on the GPU machine), units derived from
KernelBench-style models written here, and their replay against the model, bit for bit, RNG state
included, as KernelBench builds Model and then ModelNew from one seed."""
import json
import os
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from fusetune_torch.init_recipe import (InitRefused, bind, check_document, derive_units,  # noqa: E402
                                        init_document, replay_units)

try:
    import torch
    MODULE_SETATTR = torch.nn.Module.__setattr__  # derive_units wraps it while the model is built
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (python/tests run with it on the GPU machine)")

CONV = {"name": "conv", "module": "Conv2d", "args": {"in_channels": 3, "out_channels": 16, "kernel_size": [3, 3],
                                                    "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
                                                    "groups": 1, "bias": True}}
BIAS = {"name": "bias", "shape": [16, 1, 1], "law": "randn", "scale": 0.02}
GN = {"name": "gn", "module": "GroupNorm", "args": {"num_groups": 8, "num_channels": 16, "eps": 1e-05, "affine": True}}
UNITS = [CONV, BIAS, GN]
# from-torch's model JSON for conv -> + bias -> group_norm -> + y (forward(x, y))
MAPPED = {"spec": "conv2d(...) | add(param[k]) | group_norm(8) | add(input1)", "main": "conv",
          "params": [{"kind": "tensor", "path": "bias"}, {"kind": "tensor", "path": "gn.weight"},
                     {"kind": "tensor", "path": "gn.bias"}],
          "inputs": ["y"], "main_operands": {"w": "conv.weight", "bias": "conv.bias"},
          "input_operands": {"input1": "input:1"}}


# -- without torch ---------------------------------------------------------------------------------

def test_bind_names_every_plan_buffer_source():
    assert bind(MAPPED, UNITS) == {"w": "conv.weight", "bias": "conv.bias", "param0": "bias",
                                   "param1": "gn.weight", "param2": "gn.bias", "input1": "input:1"}
    doc = init_document(UNITS, MAPPED)
    assert doc == {"units": UNITS, "bind": bind(MAPPED, UNITS)}
    assert json.loads(json.dumps(doc)) == doc  # plain JSON, as written for `fusetune export --init`


def test_a_matmul_of_two_inputs_binds_w_to_forwards_argument():
    mapped = {"main_operands": {"w": "input:1"}, "params": [], "input_operands": {"input1": "input:2"}}
    assert bind(mapped, []) == {"w": "input:1", "input1": "input:2"}


@pytest.mark.parametrize("change,why", [
    ({"params": [{"kind": "bn_scale", "path": "bn"}]}, "param0 is bn's eval-mode BatchNorm fold (bn_scale)"),
    ({"params": [{"kind": "tensor", "path": "block.0.weight"}]},
     "param0 is 'block.0.weight', inside a nested submodule"),
    ({"params": [{"kind": "tensor", "path": "const"}]}, "param0 is 'const', which no unit makes"),
    ({"params": [{"kind": "tensor", "path": "conv"}]}, "param0 is the module 'conv' itself"),
    ({"params": [{"kind": "tensor", "path": "bias.weight"}]}, "'bias' is a parameter, not a module"),
    ({"params": [{"kind": "tensor", "path": "gn.running_mean"}]}, "does not have"),
    ({"main_operands": {"w": "input:0"}}, "input:0 is the main input"),
])
def test_bind_refuses_what_no_unit_makes(change, why):
    with pytest.raises(InitRefused) as e:
        bind(dict(MAPPED, **change), UNITS)
    assert why in e.value.reason and "\n" not in e.value.reason


def test_bind_refuses_a_bias_the_module_does_not_have_and_an_old_from_torch():
    no_bias = dict(CONV, args=dict(CONV["args"], bias=False))
    with pytest.raises(InitRefused, match="the main operator's bias is 'conv.bias', which nn.Conv2d"):
        bind(MAPPED, [no_bias, BIAS, GN])
    no_affine = dict(GN, args=dict(GN["args"], affine=False))
    with pytest.raises(InitRefused, match="param1 is 'gn.weight'"):
        bind(MAPPED, [CONV, BIAS, no_affine])
    with pytest.raises(InitRefused, match="main_operands"):
        bind({k: v for k, v in MAPPED.items() if k != "main_operands"}, UNITS)


@pytest.mark.parametrize("unit,why", [
    ({"name": "seq", "module": "Sequential", "args": {}}, "'Sequential' is not a module the init file rebuilds"),
    ({"name": "lin", "module": "Linear", "args": {"in_features": 4, "out_features": 2}}, "exactly the keywords"),
    ({"name": "lin", "module": "Linear", "args": {"in_features": -4, "out_features": 2, "bias": True}},
     "in_features=-4"),
    ({"name": "ln", "module": "LayerNorm", "args": {"normalized_shape": [], "eps": 1e-5, "elementwise_affine": True,
                                                   "bias": True}}, "normalized_shape=[]"),
    ({"name": "gn", "module": "GroupNorm", "args": {"num_groups": 2, "num_channels": 4, "eps": float("nan"),
                                                   "affine": True}}, "eps=nan"),
    ({"name": "bn", "module": "BatchNorm1d", "args": {"num_features": 4, "eps": 1e-5, "momentum": None,
                                                     "affine": True, "track_running_stats": True}}, "momentum=None"),
    ({"name": "p", "shape": [4], "law": "normal"}, "law 'normal'"),
    ({"name": "p", "shape": [4], "law": "randn", "scale": True}, "scale True"),
    ({"name": "p", "shape": [4.0], "law": "randn"}, "shape is a list"),
    ({"name": "p", "shape": [4], "law": "randn", "dtype": "float16"}, "name, shape, law and scale only"),
    ({"name": "_p", "shape": [4], "law": "ones"}, "plain attribute name"),
    ({"name": "a.b", "shape": [4], "law": "ones"}, "plain attribute name"),
    ({"name": "class", "shape": [4], "law": "ones"}, "plain attribute name"),
])
def test_the_contract_refuses_units_the_reader_would(unit, why):
    with pytest.raises(InitRefused) as e:
        check_document({"units": [unit], "bind": {}})
    assert why in e.value.reason


def test_the_contract_refuses_two_units_of_one_name_and_other_keys():
    with pytest.raises(InitRefused, match="'bias' is two units"):
        check_document({"units": [BIAS, BIAS], "bind": {}})
    with pytest.raises(InitRefused, match="units and bind"):
        check_document({"units": [], "bind": {}, "version": 1})
    check_document({"units": [dict(BIAS, shape=[])], "bind": {"param0": "bias"}})  # a 0-dim parameter is fine


# -- with torch: models written here in KernelBench's format -------------------------------------------

def model_class(source):
    ns = {}
    exec(textwrap.dedent(source), ns)  # noqa: S102 - the test's own model
    return ns["Model"]


CONV_THEN_PARAM = '''
    import torch, torch.nn as nn
    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, bias_shape, scaling_factor):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
            self.scaling_factor = scaling_factor
            self.relu = nn.ReLU()
            self.bias = nn.Parameter(torch.randn(bias_shape))
'''
PARAM_THEN_CONV = '''
    import torch, torch.nn as nn
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.bias = nn.Parameter(torch.randn(8, 1, 1))
            self.conv = nn.Conv2d(3, 8, 3, bias=False)
'''
SCALED = '''
    import torch, torch.nn as nn
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.gemm = nn.Linear(16, 32)
            self.bias = nn.Parameter(torch.randn(32) * 0.02)
            self.gate = nn.Parameter(torch.rand(1, 32) * -3.5)
            self.scale = nn.Parameter(torch.tensor(1.5))
            self.shift = nn.Parameter(torch.zeros(32))
            self.one = nn.Parameter(torch.ones(32, 1))
'''
LINEAR_NORMS = '''
    import torch, torch.nn as nn
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.matmul = nn.Linear(64, 32, bias=False)
            self.dropout = nn.Dropout(0.1)
            self.group_norm = nn.GroupNorm(4, 32, eps=1e-3)
            self.bn = nn.BatchNorm1d(32, eps=1e-5, momentum=0.2)
            self.ln = nn.LayerNorm(32, elementwise_affine=True, bias=False)
            self.inorm = nn.InstanceNorm1d(32)
'''
CONVT3D = '''
    import torch, torch.nn as nn
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose3d(4, 8, 3, stride=2, padding=1, output_padding=1, groups=2)
            self.bn = nn.BatchNorm3d(8)
            self.bias = nn.Parameter(torch.randn(8, 1, 1, 1))
'''


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.reshape(-1).view(torch.uint8),
                                                                     b.reshape(-1).view(torch.uint8))


def kernelbench_replay(model_cls, init_inputs, units, seed=42):
    """KernelBench's procedure with a ModelNew that replays the units: seed, Model; seed, replay.
    Asserts every tensor, and the RNG state after, bit for bit."""
    torch.manual_seed(seed)
    model = model_cls(*init_inputs)
    after_model = torch.get_rng_state()
    torch.manual_seed(seed)
    made = replay_units(units)
    assert torch.equal(torch.get_rng_state(), after_model)
    want = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    got = {}
    for name, value in made.items():
        if isinstance(value, torch.Tensor):
            got[name] = value
        else:
            got.update({f"{name}.{k}": t for k, t in [*value.named_parameters(), *value.named_buffers()]})
    assert set(got) == set(want)
    for k in want:
        assert same(got[k], want[k]), k


@needs_torch
def test_conv_then_a_randn_parameter():
    cls = model_class(CONV_THEN_PARAM)
    init = [3, 16, 3, (16, 1, 1), 2.0]
    units = derive_units(cls, init)
    assert units == [{"name": "conv", "module": "Conv2d", "args": {
        "in_channels": 3, "out_channels": 16, "kernel_size": [3, 3], "stride": [1, 1], "padding": [0, 0],
        "dilation": [1, 1], "groups": 1, "bias": True}},
        {"name": "bias", "shape": [16, 1, 1], "law": "randn"}]  # ReLU owns nothing: left out
    kernelbench_replay(cls, init, units)
    kernelbench_replay(cls, init, units, seed=7)  # the units do not depend on the seed they were found with


@needs_torch
def test_a_parameter_made_before_the_conv_comes_first():
    cls = model_class(PARAM_THEN_CONV)
    units = derive_units(cls, [])
    assert [u["name"] for u in units] == ["bias", "conv"] and units[1]["args"]["bias"] is False
    kernelbench_replay(cls, [], units)


@needs_torch
def test_scaled_random_and_constant_parameters():
    cls = model_class(SCALED)
    units = derive_units(cls, [])
    by = {u["name"]: u for u in units}
    assert by["bias"] == {"name": "bias", "shape": [32], "law": "randn", "scale": 0.02}
    assert by["gate"] == {"name": "gate", "shape": [1, 32], "law": "rand", "scale": -3.5}
    assert by["scale"] == {"name": "scale", "shape": [], "law": "ones", "scale": 1.5}
    assert by["shift"] == {"name": "shift", "shape": [32], "law": "zeros"}
    assert by["one"] == {"name": "one", "shape": [32, 1], "law": "ones"}
    assert [u["name"] for u in units] == ["gemm", "bias", "gate", "scale", "shift", "one"]
    kernelbench_replay(cls, [], units)
    check_document({"units": units, "bind": {}})


@needs_torch
def test_linear_group_norm_batch_norm_layer_norm():
    cls = model_class(LINEAR_NORMS)
    units = derive_units(cls, [])
    # Dropout and an InstanceNorm1d without affine or running statistics own nothing: left out
    assert [(u["name"], u["module"]) for u in units] == [("matmul", "Linear"), ("group_norm", "GroupNorm"),
                                                         ("bn", "BatchNorm1d"), ("ln", "LayerNorm")]
    by = {u["name"]: u["args"] for u in units}
    assert by["matmul"] == {"in_features": 64, "out_features": 32, "bias": False}
    assert by["group_norm"] == {"num_groups": 4, "num_channels": 32, "eps": 1e-3, "affine": True}
    assert by["bn"] == {"num_features": 32, "eps": 1e-5, "momentum": 0.2, "affine": True, "track_running_stats": True}
    assert by["ln"] == {"normalized_shape": [32], "eps": 1e-5, "elementwise_affine": True, "bias": False}
    kernelbench_replay(cls, [], units)


@needs_torch
def test_conv_transpose3d_with_output_padding_and_groups():
    cls = model_class(CONVT3D)
    units = derive_units(cls, [])
    assert units[0]["args"] == {"in_channels": 4, "out_channels": 8, "kernel_size": [3, 3, 3], "stride": [2, 2, 2],
                                "padding": [1, 1, 1], "dilation": [1, 1, 1], "groups": 2, "bias": True,
                                "output_padding": [1, 1, 1]}
    kernelbench_replay(cls, [], units)


@needs_torch
@pytest.mark.parametrize("body,why", [
    ("self.block = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())",
     "'block' is a Sequential owning 'block.0.weight'"),
    ("self.conv = nn.Conv2d(3, 8, 3)\nself.noise = torch.randn(4)",
     "draws random numbers after its last unit (attributes assigned after it: noise)"),
    ("self.conv = nn.Conv2d(3, 8, 3)\nself.noise = torch.randn(3)\nself.lin = nn.Linear(4, 4)",
     "'lin': the model drew random numbers the units do not, before it was assigned (attributes assigned since the "
     "previous unit: noise)"),
    ("self.conv = nn.Conv2d(3, 8, 3)\nself.bias = nn.Parameter(torch.randn(1000) / 3)",
     "'bias' is neither torch.randn nor torch.rand"),
    ("self.conv = nn.Conv2d(3, 8, 3)\nwith torch.no_grad():\n    self.conv.bias.mul_(2)",
     "'conv.bias': the replay does not make the model's tensor"),
    ("self.conv = nn.Conv2d(3, 8, 3)\nself.register_buffer('mask', torch.ones(8))",
     "'mask' is a buffer of the model itself"),
    ("self.register_parameter('w', nn.Parameter(torch.randn(8)))", "'w' was not assigned as an attribute"),
    ("self.w = nn.Parameter(torch.arange(8.0))", "'w' draws no random numbers but is not one value repeated"),
    ("self.w = nn.Parameter(torch.randn(8, dtype=torch.float64))", "'w' is torch.float64"),
    ("self.bn = nn.BatchNorm2d(8, momentum=None)", "'bn': nn.BatchNorm2d(momentum=None)"),
    ("self.conv = nn.Conv2d(3, 8, 3)\nx = torch.rand(3)\nself.bias = nn.Parameter(torch.randn(8))",
     "'bias' is neither torch.randn nor torch.rand"),
])
def test_refusals_name_the_attribute(body, why):
    source = "import torch, torch.nn as nn\nclass Model(nn.Module):\n  def __init__(self):\n    super().__init__()\n"
    cls = model_class(source + textwrap.indent(body, "    ") + "\n")
    state = torch.get_rng_state()
    with pytest.raises(InitRefused) as e:
        derive_units(cls, [])
    assert why in e.value.reason, e.value.reason
    assert "\n" not in e.value.reason
    assert torch.equal(torch.get_rng_state(), state)  # the caller's RNG is left as it was
    assert torch.nn.Module.__setattr__ is MODULE_SETATTR  # the recorder is gone


@needs_torch
def test_from_torch_json_to_an_init_document(tmp_path):
    """from-torch's model JSON for a KernelBench-style file and the units derived from its Model: the
    bind every plan buffer of the spec needs."""
    from fusetune_torch.from_torch import main
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from kb_style_models import KB_V2
    for name, want in {
        "convt3d_residual": {"w": "conv_transpose.weight", "bias": "conv_transpose.bias", "param0": "bias"},
        "linear_instance_norm_two_inputs": {"w": "bmm.weight", "bias": "bmm.bias", "input1": "input:1"},
        "conv3d_gap_squeeze": {"w": "conv.weight", "bias": "conv.bias", "param0": "norm.weight",
                               "param1": "norm.bias"},
        "conv_batch_norm_train_mish": {"w": "conv.weight", "bias": "conv.bias", "param0": "bn.weight",
                                       "param1": "bn.bias"},
        "matmul_weight_t_hardswish": {"w": "weight"},
    }.items():
        source, _ = KB_V2[name]
        f = tmp_path / f"{name}.py"
        f.write_text(source)
        js = tmp_path / f"{name}.json"
        assert main([f"{f}:Model", "--train", "-o", str(tmp_path / "specs.txt"), "--json", str(js)]) == 0
        ns = {}
        exec(source, ns)  # noqa: S102 - the test's own model
        units = derive_units(ns["Model"], ns["get_init_inputs"]())
        doc = init_document(units, json.loads(js.read_text())["model"])
        assert doc["bind"] == want, name
        kernelbench_replay(ns["Model"], ns["get_init_inputs"](), units)


@needs_torch
def test_the_kernelbench_client_writes_the_init_file_or_says_why_not(tmp_path):
    from fusetune_torch import kernelbench as kb
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from kb_style_models import KB_V2
    source, _ = KB_V2["convt3d_residual"]
    model_doc = {"spec": "conv_transpose3d(...) | ...", "params": [{"kind": "tensor", "path": "bias"}],
                 "main_operands": {"w": "conv_transpose.weight", "bias": "conv_transpose.bias"},
                 "input_operands": {}}
    problem, init = tmp_path / "1_Problem.py", str(tmp_path / "1_init.json")
    problem.write_text(source)
    assert kb.write_init(str(problem), source, model_doc, 42, init) == (init, None)
    with open(init) as f:
        doc = json.load(f)
    check_document(doc)
    assert [u["name"] for u in doc["units"]] == ["conv_transpose", "bias"]
    assert doc["bind"] == {"w": "conv_transpose.weight", "bias": "conv_transpose.bias", "param0": "bias"}
    noisy = source.replace("self.bias = nn.Parameter(torch.randn(bias_shape))",
                           "self.bias = nn.Parameter(torch.randn(bias_shape))\n        self.noise = torch.randn(3)")
    assert noisy != source
    path, why = kb.write_init(str(problem), noisy, model_doc, 42, str(tmp_path / "2_init.json"))
    assert path is None and why.startswith("init file: the model draws random numbers after its last unit")
    assert not (tmp_path / "2_init.json").exists()
