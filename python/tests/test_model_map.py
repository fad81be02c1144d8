"""model_map on hand-built graphs (no torch): each construct and exact rewrite of spec language
version 2 that `from-torch` maps a whole model to, and the refusals with their reasons. Each graph is
what fx_adapter.py makes of a small model in KernelBench's shape."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pytest  # noqa: E402

from fusetune_torch.graph import Graph, Node, Ref  # noqa: E402
from fusetune_torch.model_map import Refused, map_model  # noqa: E402

LINEAR = "linear(m=8,k=16,n=32)"


def build(*nodes, inputs=((8, 16),), main=("linear", {"in_features": 16, "out_features": 32, "bias": True}),
          out_shape=None):
    """input(s) -> main op `m` -> nodes...; the last node is the output. Each node is (name, op, args,
    kwargs, attrs, shape); args may name earlier nodes with Ref."""
    g = [Node(f"x{i}" if i else "x", "input", shape=tuple(s)) for i, s in enumerate(inputs)]
    op, attrs = main
    shape = (inputs[0][0], attrs.get("out_features", 0)) if op == "linear" else out_shape
    g.append(Node("m", op, (Ref("x"),), {}, dict(attrs), path="lin", shape=shape))
    last = "m"
    for n in nodes:
        if isinstance(n, Node):
            g.append(n)
            continue
        name, op, args, kwargs, attrs, shp = n
        g.append(Node(name, op, tuple(args), dict(kwargs), dict(attrs), shape=shp, loc=f"model.py:{len(g)}"))
        if op not in ("param", "const"):
            last = name
    g.append(Node("output", "output", (Ref(last),)))
    return Graph(g)


S = (8, 32)


def spec(g):
    return map_model(g).spec


def test_linear_chain_with_a_per_feature_parameter():
    g = build(Node("b", "param", path="bias", shape=(32,)),
              ("a", "add", (Ref("m"), Ref("b")), {}, {}, S), ("r", "relu", (Ref("a"),), {}, {}, S))
    assert spec(g) == f"{LINEAR} | add(param[k]) | relu"
    assert [p.path for p in map_model(g).params] == ["bias"]


def test_x_times_sigmoid_x_is_silu_and_x_plus_x_is_mul_2():
    g = build(("s", "sigmoid", (Ref("m"),), {}, {}, S), ("p", "mul", (Ref("s"), Ref("m")), {}, {}, S),
              ("d", "add", (Ref("p"), Ref("p")), {}, {}, S))
    assert spec(g) == f"{LINEAR} | silu | mul(2)"


def test_decomposed_mish_and_hardswish():
    g = build(("sp", "softplus", (Ref("m"),), {}, {}, S), ("t", "tanh", (Ref("sp"),), {}, {}, S),
              ("p", "mul", (Ref("t"), Ref("m")), {}, {}, S))
    assert spec(g) == f"{LINEAR} | mish"
    g = build(("a", "add", (Ref("m"), 3), {}, {}, S), ("d", "truediv", (Ref("a"), 6), {}, {}, S),
              ("c", "clamp", (Ref("d"), 0, 1), {}, {}, S), ("p", "mul", (Ref("m"), Ref("c")), {}, {}, S))
    assert spec(g) == f"{LINEAR} | hardswish"
    # x * sigmoid(x + 3) / 6 is NOT hardswish: kept as it is, with the value named
    g = build(("a", "add", (Ref("m"), 3), {}, {}, S), ("s", "sigmoid", (Ref("a"),), {}, {}, S),
              ("p", "mul", (Ref("m"), Ref("s")), {}, {}, S), ("d", "truediv", (Ref("p"), 6), {}, {}, S))
    assert spec(g) == f"{LINEAR} | as a | add(3) | sigmoid | mul(a) | div(6)"


def test_residual_through_clone_detach_and_x_times_half_plus_x():
    g = build(("c", "clone", (Ref("m"),), {}, {}, S), ("dt", "detach", (Ref("c"),), {}, {}, S),
              ("h", "mul", (Ref("m"), 0.5), {}, {}, S), ("r", "add", (Ref("h"), Ref("dt")), {}, {}, S))
    assert spec(g) == f"{LINEAR} | mul(1.5)"
    g = build(("c", "clone", (Ref("m"),), {}, {}, S), ("s", "sigmoid", (Ref("m"),), {}, {}, S),
              ("h", "mul", (Ref("s"), 2.0), {}, {}, S), ("r", "add", (Ref("h"), Ref("c")), {}, {}, S))
    assert spec(g) == f"{LINEAR} | as a | sigmoid | mul(2) | add(a)"


def test_value_minus_its_mean_is_rsub_of_the_named_value():
    g = build(("mu", "mean", (Ref("m"),), {"dim": 1, "keepdim": True}, {}, (8, 1)),
              ("d", "sub", (Ref("m"), Ref("mu")), {}, {}, S))
    assert spec(g) == f"{LINEAR} | as a | reduce_mean(1) | rsub(a)"


def test_reductions_over_size_1_dims_are_dropped_unless_they_squeeze():
    g = build(("s", "sum", (Ref("m"),), {"dim": 1, "keepdim": True}, {}, (8, 1)),
              ("mx", "max", (Ref("s"),), {"dim": 1, "keepdim": True}, {}, None),
              ("v", "getitem", (Ref("mx"), 0), {}, {}, (8, 1)),
              ("l", "logsumexp", (Ref("v"),), {"dim": 1, "keepdim": True}, {}, (8, 1)),
              ("q", "sum", (Ref("l"),), {"dim": 1}, {}, (8,)))
    assert spec(g) == f"{LINEAR} | reduce_sum(1) | reduce_sum(1,keepdim=false)"


def test_1d_pool_between_unsqueeze_and_squeeze_pools_the_features():
    g = build(("u", "unsqueeze", (Ref("m"), 1), {}, {}, (8, 1, 32)),
              ("p", "max_pool1d", (Ref("u"),), {}, {"kernel_size": 4, "stride": 4, "padding": 0, "dilation": 1,
                                                    "ceil_mode": False, "module": "MaxPool1d"}, (8, 1, 8)),
              ("q", "squeeze", (Ref("p"), 1), {}, {}, (8, 8)),
              ("s", "sum", (Ref("q"),), {"dim": 1}, {}, (8,)))
    assert spec(g) == f"{LINEAR} | max_pool1d(4) | reduce_sum(1,keepdim=false)"


def test_instance_norm_of_the_unsqueezed_features_is_a_layer_norm():
    g = build(("u1", "unsqueeze", (Ref("m"), 1), {}, {}, (8, 1, 32)),
              ("u2", "unsqueeze", (Ref("u1"), 1), {}, {}, (8, 1, 1, 32)),
              ("n", "instance_norm2d", (Ref("u2"),), {}, {"eps": 1e-5, "affine": False, "training": True,
                                                         "track_running_stats": False, "module": "InstanceNorm2d"},
               (8, 1, 1, 32)),
              ("q1", "squeeze", (Ref("n"), 1), {}, {}, (8, 1, 32)), ("q2", "squeeze", (Ref("q1"), 1), {}, {}, S),
              ("a", "add", (Ref("q2"), Ref("x1")), {}, {}, S), ("p", "mul", (Ref("a"), Ref("x1")), {}, {}, S),
              inputs=((8, 16), S))
    m = map_model(g)
    assert m.spec == f"{LINEAR} | layer_norm(1,affine=false) | add(input1) | mul(input1)"
    assert m.inputs == ["x1"]


def test_batch_norm_in_the_mode_the_model_is_in():
    bn = {"eps": 1e-3, "affine": True, "track_running_stats": True, "num_features": 32, "module": "BatchNorm1d"}
    g = build(("b", "batch_norm", (Ref("m"),), {}, dict(bn, training=True), S))
    assert spec(g) == f"{LINEAR} | batch_norm(eps=0.001)"
    g = build(("b", "batch_norm", (Ref("m"),), {}, dict(bn, training=False), S))
    m = map_model(g)
    assert m.spec == f"{LINEAR} | mul(param[k]) | add(param[k])"
    assert [p.kind for p in m.params] == ["bn_scale", "bn_shift"]


def test_group_norm_softmax_and_scalar_parameters():
    g = build(Node("w", "param", path="w", shape=(1,)), Node("c", "param", path="c", shape=(), value=2.0),
              ("n", "group_norm", (Ref("m"),), {}, {"num_groups": 4, "num_channels": 32, "eps": 1e-5, "affine": True,
                                                    "module": "GroupNorm"}, S),
              ("a", "mul", (Ref("w"), Ref("n")), {}, {}, S), ("b", "min", (Ref("a"), Ref("c")), {}, {}, S),
              ("s", "softmax", (Ref("b"),), {"dim": -1}, {}, S))
    assert spec(g) == f"{LINEAR} | group_norm(4) | mul(param[1]) | min(2) | softmax(1)"


def test_conv_transpose3d_with_output_padding_and_pooling():
    attrs = {"in_channels": 4, "out_channels": 8, "kernel_size": (3, 3, 3), "stride": (2, 2, 2),
             "padding": (1, 1, 1), "output_padding": (1, 1, 1), "dilation": (1, 1, 1), "groups": 1,
             "padding_mode": "zeros", "bias": True, "module": "ConvTranspose3d"}
    o = (2, 8, 8, 16, 16)
    g = build(Node("b", "param", path="bias", shape=(8, 1, 1, 1)),
              ("a", "add", (Ref("m"), Ref("b")), {}, {}, o),
              ("p", "avg_pool3d", (Ref("a"),), {}, {"kernel_size": 2, "stride": 2, "padding": 0, "ceil_mode": False,
                                                    "count_include_pad": True, "module": "AvgPool3d"}, (2, 8, 4, 8, 8)),
              ("r", "mean", (Ref("p"),), {"dim": [2, 3, 4]}, {}, (2, 8)),
              inputs=((2, 4, 4, 8, 8),), main=("conv_transpose3d", attrs), out_shape=o)
    assert spec(g) == ("conv_transpose3d(n=2,c=4,d=4,h=8,w=8,k=8,t=3,r=3,s=3,stride=2,pad=1,out_pad=1,dilation=1,"
                       "bias=true) | add(param[k]) | avg_pool3d(2) | reduce_mean(spatial,keepdim=false)")


def test_matmul_with_a_transposed_parameter_is_linear_without_bias():
    g = Graph([Node("x", "input", shape=(8, 16)), Node("w", "param", path="weight", shape=(32, 16)),
               Node("wt", "getattr", (Ref("w"), "T"), shape=(16, 32)),
               Node("mm", "matmul", (Ref("x"), Ref("wt")), shape=S),
               Node("d", "truediv", (Ref("mm"), 2), shape=S), Node("output", "output", (Ref("d"),))])
    assert spec(g) == "linear(m=8,k=16,n=32,bias=false) | div(2)"


@pytest.mark.parametrize("nodes,why", [
    ([("d", "dropout", ("REF",), {}, {"p": 0.2, "training": True, "module": "Dropout"}, S)], "dropout in training mode"),
    ([Node("b", "param", path="bias", shape=(1, 32, 1, 1)),
      ("mn", "amin", ("REF",), {"dim": 1, "keepdim": True}, {}, (8, 1)),
      ("a", "add", (Ref("mn"), Ref("b")), {}, {}, (1, 32, 8, 1))], "never change the value's shape"),
    ([("a", "add", ("REF", Ref("x")), {}, {}, S)], "input is read again"),
    ([("p", "max_pool2d", ("REF",), {}, {"kernel_size": 2, "stride": 2, "padding": 0, "dilation": 1,
                                         "ceil_mode": True, "module": "MaxPool2d"}, (4, 16))], "ceil_mode"),
])
def test_refusals_name_the_op_and_its_line(nodes, why):
    fixed = [n if isinstance(n, Node) else (n[0], n[1], tuple(Ref("m") if a == "REF" else a for a in n[2])) + n[3:]
             for n in nodes]
    with pytest.raises(Refused) as e:
        map_model(build(*fixed))
    assert why in e.value.reason
    assert e.value.line().startswith("model.py:")


def test_dropout_in_eval_mode_is_the_identity():
    g = build(("d", "dropout", (Ref("m"),), {}, {"p": 0.2, "training": False, "module": "Dropout"}, S),
              ("r", "relu", (Ref("d"),), {}, {}, S))
    assert spec(g) == f"{LINEAR} | relu"


def test_dropout_of_a_value_proved_zero_is_the_identity_even_in_training_mode():
    # KernelBench 83: min(x, 0) then clamp(0, 1) leaves exactly 0 everywhere, which dropout keeps.
    g = build(("mn", "minimum", (Ref("m"), 0.0), {}, {}, S),
              ("c", "clamp", (Ref("mn"),), {"min": 0.0, "max": 1.0}, {}, S),
              ("d", "dropout", (Ref("c"),), {}, {"p": 0.2, "training": True, "module": "Dropout"}, S))
    assert spec(g) == f"{LINEAR} | min(0) | clamp(0,1)"
    # min(x, 0.5) then clamp(0, 1) leaves [0, 0.5]: the dropout is random there.
    g = build(("mn", "minimum", (Ref("m"), 0.5), {}, {}, S),
              ("c", "clamp", (Ref("mn"),), {"min": 0.0, "max": 1.0}, {}, S),
              ("d", "dropout", (Ref("c"),), {}, {"p": 0.2, "training": True, "module": "Dropout"}, S))
    with pytest.raises(Refused, match="dropout in training mode"):
        map_model(g)


def test_a_second_main_operator_is_refused():
    g = build(("l2", "linear", (Ref("m"),), {}, {"in_features": 32, "out_features": 4, "bias": True}, (8, 4)))
    with pytest.raises(Refused, match="a second main operator"):
        map_model(g)


# -- where the main operator's weight and bias, the parameters and the extra inputs come from ----------
# (from-torch's model JSON carries these; init_recipe.bind turns them into an init file's bind)

def test_main_operands_of_a_module_main_operator():
    g = build(("r", "relu", (Ref("m"),), {}, {}, S))
    m = map_model(g)
    assert m.main_operands == {"w": "lin.weight", "bias": "lin.bias"} and m.input_operands == {}
    g = build(("r", "relu", (Ref("m"),), {}, {}, S),
              main=("linear", {"in_features": 16, "out_features": 32, "bias": False}))
    assert map_model(g).main_operands == {"w": "lin.weight"}  # no bias: no entry


def test_main_operands_of_parameters_read_by_functions():
    # x @ W.T (linear without bias) and x @ W (matmul): the parameter's path either way
    for node, spec_start in ((Node("wt", "getattr", (Ref("w"), "T"), shape=(16, 32)), "linear("),
                             (Node("wt", "clone", (Ref("w"),), shape=(16, 32)), "matmul(")):
        wshape = (32, 16) if node.op == "getattr" else (16, 32)
        g = Graph([Node("x", "input", shape=(8, 16)), Node("w", "param", path="weight", shape=wshape), node,
                   Node("mm", "matmul", (Ref("x"), Ref("wt")), shape=S), Node("output", "output", (Ref("mm"),))])
        m = map_model(g)
        assert m.spec.startswith(spec_start) and m.main_operands == {"w": "weight"}
    # F.linear(x, W, b)
    g = Graph([Node("x", "input", shape=(8, 16)), Node("w", "param", path="weight", shape=(32, 16)),
               Node("b", "param", path="b", shape=(32,)),
               Node("l", "linear_functional", (Ref("x"), Ref("w"), Ref("b")), shape=S),
               Node("output", "output", (Ref("l"),))])
    assert map_model(g).main_operands == {"w": "weight", "bias": "b"}


def test_bmm_of_two_inputs_and_an_extra_input_numbered_as_the_plan_numbers_it():
    # bmm(x, y) + z: y is the main operator's second operand (w = input:1); z is the spec's input2, the
    # plan's first extra input (the parser numbers them in order of first use): input1 -> input:2
    o = (4, 8, 32)
    g = Graph([Node("x", "input", shape=(4, 8, 16)), Node("y", "input", shape=(4, 16, 32)),
               Node("z", "input", shape=o), Node("mm", "bmm", (Ref("x"), Ref("y")), shape=o),
               Node("a", "add", (Ref("mm"), Ref("z")), shape=o), Node("p", "mul", (Ref("a"), Ref("z")), shape=o),
               Node("output", "output", (Ref("p"),))])
    m = map_model(g)
    assert m.spec == "matmul(batch=4,m=8,k=16,n=32) | add(input2) | mul(input2)"
    assert m.main_operands == {"w": "input:1"}
    assert m.input_operands == {"input1": "input:2"}


def test_an_affine_norms_weight_and_bias_are_parameters_in_the_specs_order():
    # The parser numbers a norm's weight and bias with the param operands, in order of appearance
    # (spec/stage_parser.cpp): here param0 = gn.weight, param1 = gn.bias, param2 = scale.
    attrs = {"in_channels": 3, "out_channels": 8, "kernel_size": (3, 3), "stride": (1, 1), "padding": (0, 0),
             "dilation": (1, 1), "groups": 1, "padding_mode": "zeros", "bias": True, "module": "Conv2d"}
    o = (2, 8, 6, 6)
    gn = {"num_groups": 4, "num_channels": 8, "eps": 1e-5, "affine": True, "module": "GroupNorm"}
    g = build(Node("s", "param", path="scale", shape=(8, 1, 1)),
              Node("n", "group_norm", (Ref("m"),), {}, gn, path="gn", shape=o),
              ("a", "mul", (Ref("n"), Ref("s")), {}, {}, o),
              inputs=((2, 3, 8, 8),), main=("conv2d", attrs), out_shape=o)
    m = map_model(g)
    assert m.spec.endswith("| group_norm(4) | mul(param[k])")
    assert [(p.kind, p.path) for p in m.params] == [("tensor", "gn.weight"), ("tensor", "gn.bias"),
                                                    ("tensor", "scale")]
    assert m.main_operands == {"w": "lin.weight", "bias": "lin.bias"}  # build() names the main module "lin"
    # without affine, the norm has no parameters
    g = build(Node("n", "group_norm", (Ref("m"),), {}, dict(gn, affine=False), path="gn", shape=o),
              ("r", "relu", (Ref("n"),), {}, {}, o), inputs=((2, 3, 8, 8),), main=("conv2d", attrs), out_shape=o)
    m = map_model(g)
    assert m.spec.endswith("| group_norm(4,affine=false) | relu") and m.params == []
