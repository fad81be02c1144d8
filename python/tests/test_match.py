"""The matcher and the spec writer on hand-built graphs (no torch): what is matched, what ends
a chain, what is reported and why. Each graph is what fx_adapter.py makes of a small model."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from fusetune_torch.graph import Graph, Node, Ref  # noqa: E402
from fusetune_torch.match import chain_layouts, find_blocks  # noqa: E402
from fusetune_torch.spec_text import spec_line  # noqa: E402
from fusetune_torch.from_torch import write_specs  # noqa: E402

CONV = {"in_channels": 64, "out_channels": 128, "kernel_size": (3, 3), "stride": (1, 1), "padding": (0, 0),
        "dilation": (1, 1), "groups": 1, "padding_mode": "zeros", "bias": True}


def chain(*ops, conv=None, shape=(128, 64, 128, 128), extra=()):
    """input -> conv -> ops... -> output; each op (op, args-after-x, kwargs, attrs) takes the previous value."""
    nodes = [Node("x", "input", shape=shape), Node("conv", "conv2d", (Ref("x"),), attrs=dict(conv or CONV), path="conv")]
    nodes += list(extra)
    prev = "conv"
    for i, (op, args, kwargs, attrs) in enumerate(ops):
        name = f"n{i}"
        nodes.append(Node(name, op, (Ref(prev),) + tuple(args), dict(kwargs), dict(attrs), path=attrs.get("_path", "")))
        prev = name
    nodes.append(Node("out", "output", (Ref(prev),)))
    return Graph(nodes)


def one_block(g):
    blocks, unmatched = find_blocks(g)
    assert len(blocks) == 1, unmatched
    return blocks[0]


def test_kernelbench_31():
    # x = conv(x); x = torch.min(x, torch.tensor(0.5, device=x.device)); x = x + self.bias; x * 2.0
    # As torch.fx traces it: the `x.device` read is a second user of the conv's node, which must
    # not count as a fork (seen on the H200 on 2026-12-02, docs/runs/2026-12-02/call25-bench-fp32-problems.tar.xz).
    g = chain(("min", (Ref("c05"),), {}, {}), ("add", (Ref("bias"),), {}, {}), ("mul", (2.0,), {}, {}),
              extra=[Node("dev", "getattr", (Ref("conv"), "device")),
                     Node("c05", "const", value=0.5, kwargs={"device": Ref("dev")}),
                     Node("bias", "param", path="bias", shape=(128, 1, 1))])
    b = one_block(g)
    assert spec_line(b) == ("conv2d(n=128,c=64,h=128,w=128,k=128,r=3,s=3,stride=1,pad=0,dilation=1,bias=true)"
                            " | min(0.5) | add(param[k]) | mul(2)")
    assert [p.path for p in b.params] == ["bias"]
    assert b.nodes == ["conv", "n0", "n1", "n2"] and b.output == "n2" and b.ends == ""


def test_kernelbench_32_min_over_channels_with_its_values():
    g = chain(("mul", (2.0,), {}, {}), ("min", (), {"dim": 1, "keepdim": True}, {}), ("getitem", (0,), {}, {}),
              shape=(64, 64, 256, 256))
    b = one_block(g)
    assert spec_line(b).endswith(" | mul(2) | reduce_min(channel)")
    assert b.output == "n2"


def test_batchnorm_folds_into_per_channel_mul_and_add():
    g = chain(("batch_norm", (), {}, {"training": False, "track_running_stats": True, "_path": "bn"}),
              ("relu", (), {}, {}))
    b = one_block(g)
    assert spec_line(b).endswith(" | mul(param[k]) | add(param[k]) | relu")
    assert [(p.kind, p.path) for p in b.params] == [("bn_scale", "bn"), ("bn_shift", "bn")]
    assert b.module_paths == ["conv", "bn"]


def test_training_batchnorm_ends_the_chain_with_the_reason():
    g = chain(("batch_norm", (), {}, {"training": True, "_path": "bn"}))
    blocks, unmatched = find_blocks(g)
    assert not blocks
    assert "training mode" in unmatched[0].reason and unmatched[0].path == "conv"


def test_operand_order_and_named_arguments():
    # 1.5 - x: the value is the second operand
    nodes = [Node("x", "input", shape=(1, 64, 8, 8)), Node("conv", "conv2d", (Ref("x"),), attrs=CONV, path="conv"),
             Node("a", "sub", (1.5, Ref("conv"))), Node("b", "truediv", (3.0, Ref("a"))),
             Node("c", "leaky_relu", (Ref("b"),), {"negative_slope": 0.2}), Node("d", "clamp", (Ref("c"),), {"min": -1.0}),
             Node("e", "gelu", (Ref("d"),), {"approximate": "tanh"}), Node("f", "softplus", (Ref("e"), 2.0)),
             Node("g", "pow", (Ref("f"), 2)), Node("out", "output", (Ref("g"),))]
    b = one_block(Graph(nodes))
    assert spec_line(b).split(" | ")[1:] == ["rsub(1.5)", "rdiv(3)", "leaky_relu(0.2)", "max(-1)", "gelu_tanh",
                                           "softplus(2,20)", "square"]


def test_ops_after_the_reduction_take_scalars_only():
    g = chain(("amax", (1, True), {}, {}), ("add", (Ref("p"),), {}, {}),
              extra=[Node("p", "param", path="p", shape=(128, 1, 1))])
    b = one_block(g)
    assert spec_line(b).endswith(" | reduce_max(channel)")
    assert "one channel is left" in b.ends


def test_metadata_reads_are_not_uses_of_the_value():
    # y = conv(x); s = y.size(); d = y.dtype; relu(y): one use of y's value
    g = chain(("relu", (), {}, {}), extra=[Node("sz", "size", (Ref("conv"),)),
                                            Node("dt", "getattr", (Ref("conv"), "dtype"))])
    assert spec_line(one_block(g)).endswith(" | relu")
    # an attribute that is not metadata still forks the chain
    g = chain(("relu", (), {}, {}), extra=[Node("t", "getattr", (Ref("conv"), "T"))])
    blocks, unmatched = find_blocks(g)
    assert not blocks and "used 2 times" in unmatched[0].reason


def test_forks_and_unknown_ops_end_the_chain():
    nodes = [Node("x", "input", shape=(2, 64, 16, 16)), Node("conv", "conv2d", (Ref("x"),), attrs=CONV, path="conv"),
             Node("r", "relu", (Ref("conv"),)), Node("s", "sigmoid", (Ref("r"),)), Node("t", "tanh", (Ref("r"),)),
             Node("m", "mul", (Ref("s"), Ref("t"))), Node("out", "output", (Ref("m"),))]
    b = one_block(Graph(nodes))
    assert spec_line(b).endswith(" | relu") and b.output == "r" and "used 2 times" in b.ends
    g = chain(("module:PixelShuffle", (), {}, {"_path": "ps"}))
    blocks, unmatched = find_blocks(g)
    assert not blocks and "not an epilogue op" in unmatched[0].reason


def test_convs_fusetune_cannot_compute_are_reported():
    for attrs, why in ((dict(CONV, groups=2), "groups=2"), (dict(CONV, padding_mode="reflect"), "padding_mode"),
                       (dict(CONV, padding="same", stride=(2, 2)), "stride"), (dict(CONV, in_channels=3), "channels")):
        blocks, unmatched = find_blocks(chain(("relu", (), {}, {}), conv=attrs))
        assert not blocks and why in unmatched[0].reason, (attrs, unmatched)
    b = one_block(chain(("relu", (), {}, {}), conv=dict(CONV, padding="same", dilation=(2, 1))))
    assert "pad=2x1" in spec_line(b) and "dilation=2x1" in spec_line(b)


def test_operands_that_are_not_scalars_or_per_channel():
    g = chain(("add", (Ref("w"),), {}, {}), extra=[Node("w", "param", path="w", shape=(128,))])
    blocks, unmatched = find_blocks(g)
    assert not blocks and "(128,)" in unmatched[0].reason
    g = chain(("mul", (Ref("s"),), {}, {}), extra=[Node("s", "param", path="s", shape=(1,), value=0.25)])
    assert spec_line(one_block(g)).endswith(" | mul(0.25)")


def test_every_conv_is_matched_or_listed_once():
    nodes = [Node("x", "input", shape=(2, 64, 16, 16))]
    prev = "x"
    for i in range(3):
        nodes += [Node(f"c{i}", "conv2d", (Ref(prev),), attrs=dict(CONV, in_channels=64, out_channels=64), path=f"l{i}"),
                  Node(f"r{i}", "relu" if i != 1 else "module:Foo", (Ref(f"c{i}"),), path=f"act{i}", shape=(2, 64, 16, 16))]
        prev = f"r{i}"
    nodes.append(Node("out", "output", (Ref(prev),)))
    blocks, unmatched = find_blocks(Graph(nodes))
    assert [b.conv_path for b in blocks] == ["l0", "l2"] and [u.path for u in unmatched] == ["l1"]


def test_module_forms_and_identities():
    g = chain(("relu6", (), {}, {"_path": "act"}), ("identity", (), {}, {}), ("dropout", (), {}, {}),
              ("clamp", (), {"max": 0.25}, {}), ("hardtanh", (), {}, {"min_val": -2.0, "max_val": 2.0}),
              ("gelu", (), {}, {"approximate": "none"}), ("softplus", (), {}, {"beta": 1.0, "threshold": 20.0}))
    b = one_block(g)
    assert spec_line(b).split(" | ")[1:] == ["hardtanh(0,6)", "min(0.25)", "hardtanh(-2,2)", "gelu", "softplus(1,20)"]
    assert b.module_paths == ["conv", "act"]


def test_model_text_in_comments_stays_on_one_line():
    from fusetune_torch.from_torch import write_specs
    g = chain(("relu", (), {}, {"_path": "act\nconv2d(n=1,c=1,h=1,w=1,k=1,r=1) | relu"}))
    bad = Node("conv", "conv2d", (Ref("x"),), attrs=dict(CONV, groups=2), path="evil\nconv2d(n=9,c=9,h=9,w=9,k=9,r=1)")
    g2 = Graph([Node("x", "input", shape=(1, 64, 8, 8)), bad, Node("r", "relu", (Ref("conv"),)),
                Node("out", "output", (Ref("r"),))])
    blocks, _ = find_blocks(g)
    _, unmatched = find_blocks(g2)
    text = write_specs(blocks, unmatched, ["header\nline"])
    specs = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert len(specs) == 1 and specs[0].startswith("conv2d(n=128") and "#" in specs[0]
    assert all(ln.startswith("#") for ln in text.splitlines() if "n=9" in ln or "header" in ln)


def test_each_spec_line_has_its_block_record():
    # `export --format torch-patch` finds each block in the model by this record: the line after
    # its spec, one line of JSON whatever the model's names hold.
    g = chain(("batch_norm", (), {}, {"training": False, "track_running_stats": True, "_path": "bn\n1"}),
              ("relu", (), {}, {}))
    b = one_block(g)
    text = write_specs([b], [], ["header"])
    lines = text.splitlines()
    spec_at = next(i for i, ln in enumerate(lines) if ln.startswith("conv2d("))
    assert lines[spec_at + 1].startswith("#@block {")
    rec = json.loads(lines[spec_at + 1][len("#@block "):])
    assert rec == {"conv": "conv", "nodes": ["conv", "n0", "n1"], "output": "n1",
                   "params": [{"kind": "bn_scale", "path": "bn\n1"}, {"kind": "bn_shift", "path": "bn\n1"}]}
    assert len(text.splitlines()) == len(text.split("\n")) - 1  # no line break from the model's names


def _stack(acts, tail=(), reduce_last=False):
    """x -> [conv_i -> act_i] for each act -> tail ops -> output; 64 channels throughout."""
    conv = dict(CONV, in_channels=64, out_channels=64)
    nodes, prev = [Node("x", "input", shape=(2, 64, 16, 16))], "x"
    for i, act in enumerate(acts):
        nodes += [Node(f"c{i}", "conv2d", (Ref(prev),), attrs=conv, path=f"l{i}"),
                  Node(f"a{i}", act, (Ref(f"c{i}"),), shape=(2, 64, 16, 16))]
        prev = f"a{i}"
    if reduce_last:
        nodes.append(Node("red", "amax", (Ref(prev),), {"dim": 1, "keepdim": True}))
        prev = "red"
    for j, (op, args) in enumerate(tail):
        nodes.append(Node(f"t{j}", op, (Ref(prev),) + tuple(args)))
        prev = f"t{j}"
    nodes.append(Node("out", "output", (Ref(prev),)))
    return Graph(nodes)


def test_values_between_blocks_stay_channels_last():
    # conv -> relu -> conv -> gelu -> conv -> silu -> amax: the two values passed from block to
    # block are NHWC; the model's input and its (reduced) output are as PyTorch lays them out.
    g = _stack(["relu", "gelu", "silu"], reduce_last=True)
    blocks, _ = chain_layouts(g, find_blocks(g)[0]), None
    assert [(b.in_layout, b.out_layout) for b in blocks] == [("nchw", "nhwc"), ("nhwc", "nhwc"), ("nhwc", "nchw")]
    lines = [spec_line(b) for b in blocks]
    assert lines[0].startswith("conv2d(n=2,c=64,") and ",bias=true,out=nhwc) | relu" in lines[0]
    assert ",bias=true,in=nhwc,out=nhwc) | gelu" in lines[1]
    assert ",bias=true,in=nhwc) | silu | reduce_max(channel)" in lines[2]


def test_values_other_ops_read_stay_nchw():
    # the last block's output feeds a non-block op (and the model's output): NCHW
    g = _stack(["relu", "tanh"])
    blocks = chain_layouts(g, find_blocks(g)[0])
    assert [(b.in_layout, b.out_layout) for b in blocks] == [("nchw", "nhwc"), ("nhwc", "nchw")]
    # a value read by a block's conv and by another op: NCHW on both sides
    nodes = list(_stack(["relu", "tanh"]).nodes)
    out = nodes.pop()
    nodes += [Node("extra", "module:Foo", (Ref("a0"),)), Node("sum", "add", (Ref(out.args[0].name), Ref("extra"))),
              Node("out", "output", (Ref("sum"),))]
    g = Graph(nodes)
    blocks, _ = find_blocks(g)
    chain_layouts(g, blocks)
    assert [b.conv_path for b in blocks] == ["l0", "l1"]
    assert all((b.in_layout, b.out_layout) == ("nchw", "nchw") for b in blocks)
    # a block whose next conv is not a block (module:Foo ends its chain with nothing fused): NCHW
    g = _stack(["relu", "module:Foo"])
    blocks, unmatched = find_blocks(g)
    chain_layouts(g, blocks)
    assert [b.conv_path for b in blocks] == ["l0"] and [u.path for u in unmatched] == ["l1"]
    assert (blocks[0].in_layout, blocks[0].out_layout) == ("nchw", "nchw")


def test_a_reduced_value_stays_nchw_and_nchw_layout_changes_nothing():
    g = _stack(["relu"], reduce_last=True)
    blocks = chain_layouts(g, find_blocks(g)[0])
    assert (blocks[0].in_layout, blocks[0].out_layout) == ("nchw", "nchw")
    assert "in=" not in spec_line(blocks[0]) and "out=" not in spec_line(blocks[0])
    g = _stack(["relu", "gelu"])
    blocks, _ = find_blocks(g)  # without chain_layouts (from-torch --layout nchw)
    assert all("nhwc" not in spec_line(b) for b in blocks)
