"""`fusetune from-torch FILE.py:Class [--input-shape D0,D1,...] [--init-args JSON] [--train] [--math M]
[--layout chain|nchw] [-o SPECS] [--json FILE]`: a PyTorch model as a spec file for `fusetune tune --spec-file`.

The model is built from Class (with --init-args: a JSON list of positional arguments or an object
of keyword arguments; else, as KernelBench's files do, the file's get_init_inputs()), with every
tensor of a million elements or more on the meta device (a KernelBench weight can be 4 GiB), put in
eval mode (with --train: left in training mode, as KernelBench runs its models: BatchNorm uses batch
statistics, active dropout is refused), traced with torch.fx and shape-propagated on the meta
device. The input shape is --input-shape (any rank), else the shapes of the file's get_inputs()
(made on the meta device): the first input is the model's, the others are input1, input2, ...

A model that is one main operator and its epilogue (KernelBench level 2's shape: model_map.py)
becomes ONE spec line of spec language version 2; a model whose whole is one conv2d chain block is
written as before. Otherwise each conv2d block (match.py) becomes one spec line with its module paths
in a comment; every conv that is not matched is listed with the reason, and a model that is not
mapped whole gets one line naming the op and its file line, in the file as a comment and on stderr. With --layout chain
(the default) a value that passes from one block straight into the convs of others stays
channels-last between them (`out=nhwc` on the first, `in=nhwc` on the others: match.chain_layouts);
--layout nchw keeps every block in PyTorch's default layout. --json writes the
blocks with the graph nodes they replace and where each per-channel operand comes from; for a
model mapped whole, where each parameter, the main operator's weight and bias, and each extra
input come from (init_recipe.py makes an export's init file of them).
As for every fusetune command, "-" for -o or --json is standard output (the spec file's
default); only one of the two may go there.

Exit status: 0 with at least one block, 1 with none, 2 bad usage or a model that cannot be
loaded or traced (one line on stderr).
"""
import argparse
import importlib.util
import json
import os
import sys

from .graph import Ref
from .match import chain_layouts, find_blocks
from .model_map import Refused, map_model
from .spec_text import spec_line

USAGE = 2


class UsageError(Exception):
    pass


def _shape(text):
    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"--input-shape: expected comma-separated integers (N,C,H,W, N,F, ...), got '{text}'") from None
    if min(dims) < 1:
        raise UsageError(f"--input-shape: expected positive integers, got '{text}'")
    return dims


# Tensor factories that get a size: how a model's __init__ (nn.Linear's torch.empty) and a
# KernelBench get_inputs() (torch.rand) make their tensors.
_FACTORIES = ("empty", "zeros", "ones", "rand", "randn", "full")


def _meta_mode(min_elements):
    """A torch function mode that makes every tensor of at least min_elements on the meta device
    (no memory, no time), unless the caller names a device. Small ones stay real: a parameter made
    of torch.tensor(c) keeps its value (fx_adapter reads it)."""
    import math
    import torch
    from torch.overrides import TorchFunctionMode
    factories = {getattr(torch, f) for f in _FACTORIES}

    class MetaForBig(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in factories and kwargs.get("device") is None:
                size = args[0] if len(args) >= 1 and isinstance(args[0], (tuple, list, torch.Size)) else \
                    args[:len(args) - 1] if func is torch.full else args
                if all(isinstance(d, int) for d in size) and math.prod(size) >= min_elements:
                    kwargs["device"] = "meta"
            return func(*args, **kwargs)
    return MetaForBig()


def input_shapes(module_ns):
    """The shapes of get_inputs()'s tensors, made on the meta device."""
    import torch
    with _meta_mode(1):
        inputs = module_ns.get_inputs()
    shapes = [tuple(int(d) for d in t.shape) for t in inputs if isinstance(t, torch.Tensor)]
    if not shapes or len(shapes) != len(inputs):
        raise UsageError("get_inputs() returned something other than tensors: give --input-shape")
    return shapes


def load_model(target, init_args, with_module=False):
    path, sep, cls = target.rpartition(":")
    if not sep or not path or not cls:
        raise UsageError(f"expected FILE.py:Class, got '{target}'")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location("fusetune_user_model", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - the user's file: its own error, on one line
        raise UsageError(f"{path}: {type(e).__name__}: {e}") from None
    if not hasattr(module, cls):
        raise UsageError(f"{path} defines no '{cls}'")
    args, kwargs = [], {}
    if init_args is not None:
        try:
            parsed = json.loads(init_args)
        except ValueError as e:
            raise UsageError(f"--init-args: not JSON: {e}") from None
        if isinstance(parsed, list):
            args = parsed
        elif isinstance(parsed, dict):
            kwargs = parsed
        else:
            raise UsageError("--init-args: a JSON list (positional) or object (keyword arguments)")
    elif hasattr(module, "get_init_inputs"):
        args = list(module.get_init_inputs())
    try:
        with _meta_mode(1 << 20):
            model = getattr(module, cls)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        raise UsageError(f"{cls}(...): {type(e).__name__}: {e}") from None
    return (model, module) if with_module else model


def one_line(text):
    """Text from the model (module names, op targets) as it may stand in a comment or a message:
    a line break there would start a line `tune --spec-file` reads as a spec."""
    return "".join(ch if " " <= ch != "\x7f" else "?" for ch in str(text))


def describe(block):
    params = "; ".join(f"param {i}: {p.describe()}" for i, p in enumerate(block.params))
    return one_line("  # " + " + ".join(block.module_paths) + (f" ({params})" if params else ""))


def block_record(b):
    """Where the block sits in the model, for `fusetune export --format torch-patch`: a comment line
    after the spec line (tune skips it). JSON with ASCII escapes: always one line."""
    return "#@block " + json.dumps({"conv": b.conv_path, "nodes": b.nodes, "output": b.output,
                                    "params": [{"kind": p.kind, "path": p.path} for p in b.params]},
                                   ensure_ascii=True, separators=(",", ":"))


def write_specs(blocks, unmatched, header):
    lines = [one_line(f"# {h}") for h in header]
    for b in blocks:
        lines.append(spec_line(b) + describe(b))
        lines.append(block_record(b))
        if b.ends:
            lines.append(one_line(f"#   (the chain ends there: {b.ends})"))
    for u in unmatched:
        lines.append(one_line(f"# not matched: {u.path}: {u.reason}"))
    return "\n".join(lines) + "\n"


def whole_text(mapped, header):
    """The one spec line of a model mapped whole, with where its operands come from."""
    where = [f"param {i}: {p.path}" + (f" ({p.kind})" if p.kind != "tensor" else "") for i, p in enumerate(mapped.params)]
    where += [f"input: {name}" for name in mapped.inputs]
    comment = f"  # {mapped.main_path}" + (f" ({'; '.join(where)})" if where else "")
    return "\n".join([one_line(f"# {h}") for h in header] + [mapped.spec + one_line(comment)]) + "\n"


def model_json(mapped, refusal):
    if mapped is not None:
        # main_operands and input_operands: where the plan's w, bias and input<j> buffers come from
        # (init_recipe.bind turns them into an init file's bind)
        return {"spec": mapped.spec, "main": mapped.main_path,
                "params": [{"kind": p.kind, "path": p.path} for p in mapped.params], "inputs": mapped.inputs,
                "main_operands": mapped.main_operands, "input_operands": mapped.input_operands}
    return {"refused": refusal}


def blocks_json(blocks, unmatched):
    return {
        "schema": "fusetune.from-torch/1",
        "blocks": [{"spec": spec_line(b), "conv": b.conv_path, "modules": b.module_paths, "nodes": b.nodes,
                    "output": b.output, "layout": {"in": b.in_layout, "out": b.out_layout}, "params": [{"kind": p.kind, "path": p.path} for p in b.params],
                    "ends": b.ends or None} for b in blocks],
        "unmatched": [{"path": u.path, "reason": u.reason} for u in unmatched],
    }


def _is_stdout(path):
    """fusetune's rule for every output path: "-" is standard output (cli/output_args.hpp)."""
    return path == "-"


def _write(path, text):
    if _is_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(path, "w") as f:
            f.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fusetune from-torch", description=__doc__.split("\n\n")[0])
    ap.add_argument("target", help="FILE.py:Class")
    ap.add_argument("--input-shape", help="the model input's shape, any rank (N,C,H,W; N,F; ...); default: the "
                    "shapes of the file's get_inputs()")
    ap.add_argument("--init-args", help="JSON list or object: Class's constructor arguments")
    ap.add_argument("--train", action="store_true",
                    help="keep the model in training mode (KernelBench's): BatchNorm with batch statistics, active "
                         "dropout refused")
    ap.add_argument("--math", choices=["tf32", "fp32"], default="tf32", help="written into the file's tune line")
    ap.add_argument("--layout", choices=["chain", "nchw"], default="chain",
                    help="chain: values passed from block to block stay channels-last; nchw: every block NCHW")
    ap.add_argument("-o", "--output", default="-", help="the spec file, or - for standard output (the default)")
    ap.add_argument("--json", help="also write the blocks as JSON to this file, or - for standard output")
    args = ap.parse_args(argv)
    try:
        if _is_stdout(args.output) and args.json is not None and _is_stdout(args.json):
            raise UsageError("only one document can go to standard output (the spec file, -o's default, and "
                             "--json - name it): give -o FILE or --json FILE")
        shape = _shape(args.input_shape) if args.input_shape is not None else None
        try:
            import torch  # noqa: F401
        except ImportError as e:
            raise UsageError(f"from-torch needs a python3 with torch: {e}") from None
        from .fx_adapter import to_graph
        model, module = load_model(args.target, args.init_args, with_module=True)
        if shape is not None:
            shapes = [shape]
        elif hasattr(module, "get_inputs"):
            try:
                shapes = input_shapes(module)
            except UsageError:
                raise
            except Exception as e:  # noqa: BLE001 - the user's file
                raise UsageError(f"get_inputs(): {type(e).__name__}: {e}") from None
        else:
            raise UsageError(f"{args.target}: no --input-shape and the file has no get_inputs()")
        try:
            graph = to_graph(model, shapes, train=args.train)
        except Exception as e:  # noqa: BLE001 - tracing the user's model
            raise UsageError(f"torch.fx could not trace {args.target}: {type(e).__name__}: "
                             f"{str(e).splitlines()[0] if str(e) else ''}") from None
    except UsageError as e:
        print(f"fusetune from-torch: {e}", file=sys.stderr)
        return USAGE
    mapped, refusal = None, None
    try:
        mapped = map_model(graph)
    except Refused as e:
        refusal = e.line()
    except Exception as e:  # noqa: BLE001 - a graph the mapper did not foresee: the block search still runs
        refusal = f"the whole-model mapping failed ({type(e).__name__}: {e}); conv blocks are still searched"

    blocks, unmatched = find_blocks(graph)
    if args.layout == "chain":
        chain_layouts(graph, blocks)
    out_name = "SPECS" if _is_stdout(args.output) else args.output
    shape_text = args.input_shape if args.input_shape is not None else \
        " ".join(",".join(str(d) for d in s) for s in shapes) + " (get_inputs)"
    command = f"fusetune from-torch {args.target} --input-shape {shape_text}" + (" --train" if args.train else "")
    wrote = "" if _is_stdout(args.output) else f"; wrote {args.output}"
    whole_block = len(blocks) == 1 and not unmatched and covers_model(graph, blocks[0])
    if mapped is not None and not whole_block:
        text = whole_text(mapped, [command, f"the whole model as one spec; tune it with: fusetune tune --spec-file "
                                            f"{out_name} --math {args.math}"])
        _write(args.output, text)
        if args.json is not None:
            _write(args.json, json.dumps(dict(blocks_json([], []), model=model_json(mapped, None)), indent=1) + "\n")
        print(f"fusetune from-torch: the whole model as one spec{wrote}", file=sys.stderr)
        return 0
    header = [command, f"{len(blocks)} block(s); tune them with: fusetune tune --spec-file {out_name} --math {args.math}"]
    text = write_specs(blocks, unmatched, header)
    if refusal is not None and not blocks:
        text += one_line(f"# not mapped: {refusal}") + "\n"
    _write(args.output, text)
    if args.json is not None:
        doc = blocks_json(blocks, unmatched)
        if not whole_block:
            doc["model"] = model_json(None, refusal)
        _write(args.json, json.dumps(doc, indent=1) + "\n")
    for u in unmatched:
        print(one_line(f"fusetune from-torch: not matched: {u.path}: {u.reason}"), file=sys.stderr)
    if refusal is not None and not whole_block:
        print(one_line(f"fusetune from-torch: not mapped: {refusal}"), file=sys.stderr)
    print(f"fusetune from-torch: {len(blocks)} block(s), {len(unmatched)} conv(s) not matched" + wrote, file=sys.stderr)
    return 0 if blocks else 1


def covers_model(graph, block):
    """True when the block is the whole model: its conv reads the model's only input and its
    value is the model's output (today's output for such a model stays as it was)."""
    inputs = [n for n in graph.nodes if n.op == "input"]
    out = next((n for n in graph.nodes if n.op == "output"), None)
    conv = graph.by_name[block.nodes[0]]
    return (len(inputs) == 1 and out is not None and conv.args and conv.args[0] == Ref(inputs[0].name)
            and tuple(out.args) == (Ref(block.output),))


if __name__ == "__main__":
    sys.exit(main())
