"""The init file of a version-2 export (`fusetune export --init FILE`): how the reference model makes
its parameters, unit by unit in its order of creation, and which of them each plan buffer reads.

KernelBench seeds torch's RNG, builds Model(*init_inputs), seeds again, builds ModelNew(*init_inputs)
and compares outputs: ModelNew must draw the same numbers in the same order. It replays the units
(export_templates/torch_model_runtime.py.in's _replay_units is replay_units' twin). derive_units reads
the units off a model built here, then replays them and refuses unless every parameter and buffer,
and the RNG state after each unit and after the last, come out bit for bit the model's.

    {"units": [{"name": "conv", "module": "Conv2d", "args": {...}},            # in creation order
               {"name": "bias", "shape": [16, 1, 1], "law": "randn", "scale": 0.02}],
     "bind": {"w": "conv.weight", "bias": "conv.bias", "param0": "bias", "input1": "input:1"}}

src/export/init_recipe.cpp reads it. bind, check_document and init_document are plain Python (tested
without torch); derive_units and replay_units need torch.
"""
import keyword
import math
import struct

_CONV = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias")
_BATCH = ("num_features", "eps", "momentum", "affine", "track_running_stats")
# The torch.nn classes a unit may be, with the keywords that rebuild one (src/export/init_recipe.cpp's list).
MODULE_ARGS = {
    "Conv1d": _CONV, "Conv2d": _CONV, "Conv3d": _CONV,
    "ConvTranspose1d": _CONV + ("output_padding",), "ConvTranspose2d": _CONV + ("output_padding",),
    "ConvTranspose3d": _CONV + ("output_padding",),
    "Linear": ("in_features", "out_features", "bias"),
    "BatchNorm1d": _BATCH, "BatchNorm2d": _BATCH, "BatchNorm3d": _BATCH,
    "InstanceNorm1d": _BATCH, "InstanceNorm2d": _BATCH, "InstanceNorm3d": _BATCH,
    "GroupNorm": ("num_groups", "num_channels", "eps", "affine"),
    "LayerNorm": ("normalized_shape", "eps", "elementwise_affine", "bias"),
}
LAWS = ("randn", "rand", "ones", "zeros")
MAX_RANK = 8  # the reader's limit on a shape or a list keyword


class InitRefused(Exception):
    """Why no init file can be written for the model: one line that names the attribute."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


# -- the document, without torch ---------------------------------------------------------------

def plain_name(name):
    """An attribute name the reader and the exported module take: ASCII, not private, not a keyword."""
    return (isinstance(name, str) and name.isascii() and name.isidentifier() and not name.startswith("_")
            and not keyword.iskeyword(name) and len(name) <= 64)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _keyword_ok(v):
    """The reader's value types: a bool, a non-negative int, a finite float, a list of non-negative ints."""
    if isinstance(v, bool):
        return True
    if _is_int(v):
        return v >= 0
    if isinstance(v, float):
        return math.isfinite(v)
    return isinstance(v, list) and 0 < len(v) <= MAX_RANK and all(_is_int(x) and x >= 0 for x in v)


def has_learned(unit, attr):
    """Whether module unit has a learned `attr` ("weight" or "bias") with its args."""
    kind, a = unit["module"], unit["args"]
    if attr not in ("weight", "bias"):
        return False
    if kind.startswith("Conv") or kind == "Linear":
        return attr == "weight" or a["bias"]
    if kind == "LayerNorm":
        return a["elementwise_affine"] and (attr == "weight" or a["bias"])
    return a["affine"]  # BatchNorm, InstanceNorm, GroupNorm: weight and bias together


def _check_unit(u):
    if not isinstance(u, dict) or not plain_name(u.get("name")):
        raise InitRefused(f"unit {u!r}: a unit needs a plain attribute name")
    name = u["name"]
    if "module" in u:
        kind, args = u["module"], u.get("args")
        if not isinstance(kind, str) or kind not in MODULE_ARGS:
            raise InitRefused(f"'{name}': {kind!r} is not a module the init file rebuilds")
        if not isinstance(args, dict) or set(args) != set(MODULE_ARGS[kind]):
            raise InitRefused(f"'{name}': nn.{kind} takes exactly the keywords {', '.join(MODULE_ARGS[kind])}")
        bad = [k for k, v in args.items() if not _keyword_ok(v)]
        if bad:
            raise InitRefused(f"'{name}': {bad[0]}={args[bad[0]]!r} is not a bool, non-negative int, finite float or "
                              "list of non-negative ints")
        if set(u) != {"name", "module", "args"}:
            raise InitRefused(f"'{name}': a module unit has name, module and args only")
        return
    shape, scale = u.get("shape"), u.get("scale", 1.0)
    if not isinstance(shape, list) or len(shape) > MAX_RANK or not all(_is_int(d) and d >= 0 for d in shape):
        raise InitRefused(f"'{name}': a parameter's shape is a list of up to {MAX_RANK} non-negative ints")
    if u.get("law") not in LAWS:
        raise InitRefused(f"'{name}': law {u.get('law')!r} is not one of {', '.join(LAWS)}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise InitRefused(f"'{name}': scale {scale!r} is not a finite number")
    if not set(u) <= {"name", "shape", "law", "scale"}:
        raise InitRefused(f"'{name}': a parameter unit has name, shape, law and scale only")


def source(where, units, what):
    """`where` checked as a bind value: "input:<i>" (i >= 1), "<param unit>", "<module unit>.weight|bias"."""
    if not isinstance(where, str):
        raise InitRefused(f"{what}: {where!r} is not a string")
    if where.startswith("input:"):
        i = where[len("input:"):]
        if not (i.isdigit() and i.isascii() and i[0] != "0"):
            raise InitRefused(f"{what} is {where!r}: forward's arguments are input:1, input:2, ... (input:0 is the "
                              "main input, never bound)")
        return where
    parts = where.split(".")
    if len(parts) > 2:
        raise InitRefused(f"{what} is '{where}', inside a nested submodule: the init file makes top-level "
                          "attributes only")
    unit = units.get(parts[0])
    if unit is None:
        raise InitRefused(f"{what} is '{where}', which no unit makes (a plain tensor attribute or a buffer, not an "
                          "nn.Parameter or a module's parameter)")
    if len(parts) == 1:
        if "module" in unit:
            raise InitRefused(f"{what} is the module '{where}' itself, not a tensor")
        return where
    if "module" not in unit:
        raise InitRefused(f"{what} is '{where}', but '{parts[0]}' is a parameter, not a module")
    if not has_learned(unit, parts[1]):
        args = ", ".join(f"{k}={v}" for k, v in unit["args"].items())
        raise InitRefused(f"{what} is '{where}', which nn.{unit['module']}({args}) does not have")
    return where


def check_document(doc):
    """InitRefused naming the first thing in doc that the contract (module docstring) does not allow."""
    if not isinstance(doc, dict) or set(doc) != {"units", "bind"}:
        raise InitRefused("an init file is an object with units and bind")
    if not isinstance(doc["units"], list) or not isinstance(doc["bind"], dict):
        raise InitRefused("units is a list and bind an object")
    units = {}
    for u in doc["units"]:
        _check_unit(u)
        if u["name"] in units:
            raise InitRefused(f"'{u['name']}' is two units")
        units[u["name"]] = u
    for key, where in doc["bind"].items():
        source(where, units, f"bind {key!r}")


def bind(mapped, units):
    """The bind object: from-torch's model JSON (its main_operands, params and input_operands) -> the
    plan's buffer names (w, bias, param0.., input1..) -> where each tensor comes from."""
    if "main_operands" not in mapped:
        raise InitRefused("from-torch's JSON does not say where the main operator's weight comes from "
                          "(main_operands): a from-torch older than this client")
    by_name = {u["name"]: u for u in units}
    out = {}
    for key, where in mapped["main_operands"].items():
        out[key] = source(where, by_name, "the main operator's " + ("weight" if key == "w" else key))
    for i, p in enumerate(mapped.get("params", [])):
        if p["kind"] != "tensor":
            # computed from running statistics, not a tensor of the model: KernelBench runs BatchNorm in
            # training mode, which from-torch maps with --train
            raise InitRefused(f"param{i} is {p['path']}'s eval-mode BatchNorm fold ({p['kind']}), not a tensor of "
                              "the model")
        out[f"param{i}"] = source(p["path"], by_name, f"param{i}")
    for key, where in mapped.get("input_operands", {}).items():
        out[key] = source(where, by_name, key)
    return out


def init_document(units, mapped):
    """The init file's object for units (derive_units) and from-torch's model JSON; checked."""
    check_document({"units": units, "bind": {}})  # the units first: bind reads their args
    doc = {"units": units, "bind": bind(mapped, units)}
    check_document(doc)
    return doc


# -- the units, with torch ---------------------------------------------------------------------

def _replay(units):
    """(name, module or tensor) in order, from the current RNG state: what the exported module does."""
    import torch
    laws = {"randn": torch.randn, "rand": torch.rand, "ones": torch.ones, "zeros": torch.zeros}
    for u in units:  # each made in the yield: the generator keeps no reference, one unit lives at a time
        if "module" in u:
            yield u["name"], getattr(torch.nn, u["module"])(**u["args"])
        elif u.get("scale", 1.0) != 1.0:
            yield u["name"], laws[u["law"]](tuple(u["shape"])) * u["scale"]
        else:
            yield u["name"], laws[u["law"]](tuple(u["shape"]))


def replay_units(units):
    """An ordered dict name -> module or tensor, made from the current RNG state in the units' order."""
    return dict(_replay(units))


def _bits(t):
    import torch
    return t.detach().reshape(-1).view(torch.uint8)


def _same(a, b):
    """Bit for bit (-0.0 is not 0.0, as torch.equal would have it)."""
    import torch
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(_bits(a), _bits(b))


def _f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _scales(c):
    """The float32 values next to c (torch multiplies a float32 tensor by a number in float32), each as
    its shortest decimal: `* 0.02` is found as 0.02."""
    if not math.isfinite(c) or abs(c) > 3.4e38:
        return
    bits = struct.unpack("<i", struct.pack("<f", c))[0]
    for d in (0, -1, 1, -2, 2):
        if not -2**31 <= bits + d < 2**31:
            continue
        f = struct.unpack("<f", struct.pack("<i", bits + d))[0]
        if math.isfinite(f):  # 17 digits always round-trip, so next() finds one
            yield next(float(f"{f:.{k}g}") for k in range(1, 18) if _f32(float(f"{f:.{k}g}")) == f)


def _law(name, p, before, after):
    """A parameter's law and scale: a constant when nothing was drawn between the previous attribute
    and it, else torch.randn or torch.rand of its shape (times a number) from the RNG state `before`."""
    import torch
    flat = p.detach().reshape(-1)
    if torch.equal(before, after):
        bits = flat.view(torch.int32)  # float32 (checked by the caller): -0.0 is not 0.0
        if flat.numel() and not bool((bits == bits[0]).all()):
            raise InitRefused(f"'{name}' draws no random numbers but is not one value repeated (torch.ones or "
                              "torch.zeros times a number)")
        if not flat.numel() or int(bits[0]) == 0:
            return {"law": "zeros"}
        v = float(flat[0])
        return {"law": "ones"} if v == 1.0 else {"law": "ones", "scale": v}
    for law, make in (("randn", torch.randn), ("rand", torch.rand)):
        torch.set_rng_state(before)
        g = make(tuple(p.shape)).reshape(-1)
        if _same(g, flat):
            return {"law": law}
        i = int(g.abs().argmax()) if g.numel() else 0
        if g.numel() and float(g[i]) != 0.0:
            for c in _scales(float(flat[i]) / float(g[i])):
                if _same(g * c, flat):
                    return {"law": law, "scale": c}
    raise InitRefused(f"'{name}' is neither torch.randn nor torch.rand of its shape times a number, drawn where it "
                      "was assigned (made another way, or after other random draws)")


def _owns_tensors(m):
    return next(iter(m.parameters()), None) is not None or next(iter(m.buffers()), None) is not None


def _padding(m):
    # The init does not depend on padding; the string forms become the numbers they stand for, since
    # the reader takes ints (from-torch refuses an uneven 'same' on its own)
    if m.padding == "valid":
        return [0] * len(m.kernel_size)
    if m.padding == "same":
        return [d * (k - 1) // 2 for d, k in zip(m.dilation, m.kernel_size)]
    return [int(x) for x in m.padding]


def _module_args(name, m):
    kind = type(m).__name__
    if kind.startswith("Conv"):
        args = {"in_channels": int(m.in_channels), "out_channels": int(m.out_channels),
                "kernel_size": [int(x) for x in m.kernel_size], "stride": [int(x) for x in m.stride],
                "padding": _padding(m), "dilation": [int(x) for x in m.dilation], "groups": int(m.groups),
                "bias": m.bias is not None}
        if kind.startswith("ConvTranspose"):
            args["output_padding"] = [int(x) for x in m.output_padding]
        return args
    if kind == "Linear":
        return {"in_features": int(m.in_features), "out_features": int(m.out_features), "bias": m.bias is not None}
    if kind == "GroupNorm":
        return {"num_groups": int(m.num_groups), "num_channels": int(m.num_channels), "eps": float(m.eps),
                "affine": bool(m.affine)}
    if kind == "LayerNorm":
        return {"normalized_shape": [int(x) for x in m.normalized_shape], "eps": float(m.eps),
                "elementwise_affine": bool(m.elementwise_affine), "bias": m.bias is not None}
    if m.momentum is None:
        raise InitRefused(f"'{name}': nn.{kind}(momentum=None), which the init file cannot write")
    return {"num_features": int(m.num_features), "eps": float(m.eps), "momentum": float(m.momentum),
            "affine": bool(m.affine), "track_running_stats": bool(m.track_running_stats)}


def _construct(model_cls, init_inputs, seed):
    """model_cls(*init_inputs) after torch.manual_seed(seed), with [(name, RNG state right after)] of
    each attribute the model assigned on itself, in order, the state after the seed, and at the end."""
    import torch
    nn = torch.nn
    events, original = [], nn.Module.__setattr__

    def recording(obj, name, value):
        original(obj, name, value)
        if isinstance(obj, model_cls):  # the model's own attributes (filtered to the model below)
            events.append((obj, name, torch.get_rng_state()))

    nn.Module.__setattr__ = recording
    try:
        torch.manual_seed(seed)
        start = torch.get_rng_state()
        try:
            model = model_cls(*init_inputs)
        except Exception as e:  # noqa: BLE001 - the user's model: its own error, on one line
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise InitRefused(f"Model(*get_init_inputs()) raised {type(e).__name__}: {first}") from None
        end = torch.get_rng_state()
    finally:
        nn.Module.__setattr__ = original
    return model, [(name, state) for obj, name, state in events if obj is model], start, end


def _units(model, events, start):
    import torch
    buffers = [n for n, b in model._buffers.items() if b is not None]
    if buffers:
        raise InitRefused(f"'{buffers[0]}' is a buffer of the model itself: the init file makes parameters and "
                          "modules")
    modules = {n: m for n, m in model._modules.items() if m is not None and _owns_tensors(m)}
    params = {n: p for n, p in model._parameters.items() if p is not None}
    names = [n for n, _ in events]
    for n in list(modules) + list(params):
        if n not in names:
            raise InitRefused(f"'{n}' was not assigned as an attribute (register_parameter, add_module?): its place "
                              "in the creation order is unknown")
        if names.count(n) > 1:
            raise InitRefused(f"'{n}' is assigned more than once in __init__: the init file makes each unit once")
        if not plain_name(n) or hasattr(torch.nn.Module, n):
            raise InitRefused(f"'{n}' is not a plain attribute name the exported module can set")
    units, before = [], start
    for n, state in events:
        if n in modules:
            m = modules[n]
            kind = type(m).__name__
            if kind not in MODULE_ARGS or type(m) is not getattr(torch.nn, kind):
                inner = next(iter(dict(m.named_parameters()) or dict(m.named_buffers())))
                raise InitRefused(f"'{n}' is a {kind} owning '{n}.{inner}': the init file rebuilds conv, linear and "
                                  "norm modules only (a nested submodule is refused)")
            units.append({"name": n, "module": kind, "args": _module_args(n, m)})
        elif n in params:
            p = params[n]
            if p.dtype != torch.float32:
                raise InitRefused(f"'{n}' is {p.dtype}: the init file makes float32 parameters")
            units.append({"name": n, "shape": [int(d) for d in p.shape], **_law(n, p, before, state)})
        before = state
    return units


def _verify(units, model, events, end):
    """Replays the units (the RNG seeded as for the model) and refuses at the first tensor or RNG
    state that is not the model's; one replayed unit is alive at a time."""
    import torch
    state_at = dict(events)
    names = [n for n, _ in events]
    last = 0
    for name, made in _replay(units):
        mine = getattr(model, name)
        if isinstance(made, torch.Tensor):
            pairs = [(name, made, mine)]
        else:
            theirs = {**dict(mine.named_parameters()), **dict(mine.named_buffers())}
            ours = {**dict(made.named_parameters()), **dict(made.named_buffers())}
            if set(theirs) != set(ours):
                raise InitRefused(f"'{name}': the rebuilt nn.{type(made).__name__} holds {sorted(ours)}, the model's "
                                  f"{sorted(theirs)}")
            pairs = [(f"{name}.{k}", t, theirs[k]) for k, t in ours.items()]
        # the RNG first: a draw the units miss also changes this unit's values, and the draw is the cause
        here = names.index(name)
        if not torch.equal(torch.get_rng_state(), state_at[name]):
            between = names[last:here]
            raise InitRefused(f"'{name}': the model drew random numbers the units do not, before it was assigned"
                              + (f" (attributes assigned since the previous unit: {', '.join(between)})"
                                 if between else ""))
        for path, a, b in pairs:
            if not _same(a, b):
                raise InitRefused(f"'{path}': the replay does not make the model's tensor bit for bit (changed after "
                                  "it was made, or made another way)")
        last = here + 1
        del made, mine, pairs
    if not torch.equal(torch.get_rng_state(), end):
        rest = names[last:]
        raise InitRefused("the model draws random numbers after its last unit" +
                          (f" (attributes assigned after it: {', '.join(rest)})" if rest else ""))


def derive_units(model_cls, init_inputs, seed=42):
    """The units of model_cls(*init_inputs) in creation order, checked by replay (module docstring);
    InitRefused with the reason otherwise. Builds the model on the CPU (one copy, plus one unit at a
    time while checking); torch's RNG state is given back as it was."""
    import torch
    saved = torch.get_rng_state()
    try:
        with torch.no_grad():  # as KernelBench builds its models
            model, events, start, end = _construct(model_cls, init_inputs, seed)
            units = _units(model, events, start)
            torch.manual_seed(seed)
            _verify(units, model, events, end)
        return units
    finally:
        torch.set_rng_state(saved)
