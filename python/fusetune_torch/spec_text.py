"""A block (match.py) as one line of fusetune's spec language (docs/spec-language.md)."""
from .match import Block, Param


def _pair(p):
    return str(p[0]) if p[0] == p[1] else f"{p[0]}x{p[1]}"


def _number(v):
    # repr is Python's shortest round-trip form; fusetune canonicalizes it to fp32's anyway
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def conv_text(c, layouts=""):
    return (f"conv2d(n={c['n']},c={c['c']},h={c['h']},w={c['w']},k={c['k']},r={c['r']},s={c['s']},"
            f"stride={_pair(c['stride'])},pad={_pair(c['pad'])},dilation={_pair(c['dilation'])},"
            f"bias={'true' if c['bias'] else 'false'}{layouts})")


def stage_text(stage):
    if stage.op.startswith("reduce_"):
        return f"{stage.op}(channel)"
    if not stage.args:
        return stage.op
    args = ",".join("param[k]" if isinstance(a, Param) else _number(a) for a in stage.args)
    return f"{stage.op}({args})"


def layout_words(block: Block):
    """`,in=nhwc` / `,out=nhwc` where chain_layouts chose channels-last (NCHW is the default)."""
    return "".join(f",{key}={layout}" for key, layout in (("in", block.in_layout), ("out", block.out_layout))
                   if layout != "nchw")


def spec_line(block: Block):
    return " | ".join([conv_text(block.conv, layout_words(block))] + [stage_text(s) for s in block.stages])
