"""`fusetune from-torch FILE.py:Class --input-shape N,C,H,W [--init-args JSON] [--math M]
[--layout chain|nchw] [-o SPECS] [--json FILE]`: the conv blocks of a PyTorch model as a spec file for `fusetune tune --spec-file`.

The model is built from Class (with --init-args: a JSON list of positional arguments or an object
of keyword arguments; else, as KernelBench's files do, the file's get_init_inputs()), put in eval
mode, traced with torch.fx and shape-propagated with fake tensors on the input shape. Each block
(match.py) becomes one spec line with its module paths in a comment; every conv that is not
matched is listed with the reason, in the file as a comment and on stderr. With --layout chain
(the default) a value that passes from one block straight into the convs of others stays
channels-last between them (`out=nhwc` on the first, `in=nhwc` on the others: match.chain_layouts);
--layout nchw keeps every block in PyTorch's default layout. --json writes the
blocks with the graph nodes they replace and where each per-channel operand comes from.
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

from .match import chain_layouts, find_blocks
from .spec_text import spec_line

USAGE = 2


class UsageError(Exception):
    pass


def _shape(text):
    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"--input-shape: expected N,C,H,W integers, got '{text}'") from None
    if len(dims) != 4 or min(dims) < 1:
        raise UsageError(f"--input-shape: expected four positive integers N,C,H,W, got '{text}'")
    return dims


def load_model(target, init_args):
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
        return getattr(module, cls)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        raise UsageError(f"{cls}(...): {type(e).__name__}: {e}") from None


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
    ap.add_argument("--input-shape", required=True, help="N,C,H,W of the model's input")
    ap.add_argument("--init-args", help="JSON list or object: Class's constructor arguments")
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
        shape = _shape(args.input_shape)
        try:
            import torch  # noqa: F401
        except ImportError as e:
            raise UsageError(f"from-torch needs a python3 with torch: {e}") from None
        from .fx_adapter import to_graph
        model = load_model(args.target, args.init_args)
        try:
            graph = to_graph(model, shape)
        except Exception as e:  # noqa: BLE001 - tracing the user's model
            raise UsageError(f"torch.fx could not trace {args.target}: {type(e).__name__}: "
                             f"{str(e).splitlines()[0] if str(e) else ''}") from None
    except UsageError as e:
        print(f"fusetune from-torch: {e}", file=sys.stderr)
        return USAGE
    blocks, unmatched = find_blocks(graph)
    if args.layout == "chain":
        chain_layouts(graph, blocks)
    out_name = "SPECS" if _is_stdout(args.output) else args.output
    header = [f"fusetune from-torch {args.target} --input-shape {args.input_shape}",
              f"{len(blocks)} block(s); tune them with: fusetune tune --spec-file {out_name} --math {args.math}"]
    text = write_specs(blocks, unmatched, header)
    _write(args.output, text)
    if args.json is not None:
        _write(args.json, json.dumps(blocks_json(blocks, unmatched), indent=1) + "\n")
    for u in unmatched:
        print(one_line(f"fusetune from-torch: not matched: {u.path}: {u.reason}"), file=sys.stderr)
    print(f"fusetune from-torch: {len(blocks)} block(s), {len(unmatched)} conv(s) not matched"
          + ("" if _is_stdout(args.output) else f"; wrote {args.output}"), file=sys.stderr)
    return 0 if blocks else 1


if __name__ == "__main__":
    sys.exit(main())
