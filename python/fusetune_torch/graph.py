"""A model's dataflow as fusetune's matcher sees it: plain Python, no torch.

The torch side (fx_adapter.py) turns a traced torch.fx graph into these nodes; the matcher
(match.py) and the spec writer (spec_text.py) only read them, so they are tested without torch.

A node's `op` is a short key for what it computes, the same for the function, the method and the
module form of one operation: "conv2d", "batch_norm", "relu", "add", "min", "getitem", ...
(see match.py for the ones fusetune can express). Module forms keep their attributes in `attrs`
(a conv's geometry, a GELU's approximation, a BatchNorm's mode). Arguments are constants (int,
float, bool, None, str, tuples of them) or Ref(name) of another node.
"""
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple


@dataclass(frozen=True)
class Ref:
    """An argument that is another node's value."""
    name: str


@dataclass
class Node:
    name: str
    op: str                      # "input", "output", "param", "const", "conv2d", "relu", ...
    args: Tuple[Any, ...] = ()
    kwargs: Dict[str, Any] = field(default_factory=dict)
    attrs: Dict[str, Any] = field(default_factory=dict)
    path: str = ""               # the module path for module calls and parameters ("layer1.0.conv1")
    shape: Optional[Tuple[int, ...]] = None  # the value's shape, when known (shape propagation)
    value: Any = None            # a constant's value (a number), or a parameter's when it has one element
    loc: str = ""                # FILE:LINE of the model's code that made it, when known


class Graph:
    """Nodes in execution order, with each node's users."""

    def __init__(self, nodes: List[Node]):
        self.nodes = list(nodes)
        self.by_name = {n.name: n for n in self.nodes}
        self.users: Dict[str, List[str]] = {n.name: [] for n in self.nodes}
        for n in self.nodes:
            for a in list(n.args) + list(n.kwargs.values()):
                for r in _refs(a):
                    if r.name in self.users and n.name not in self.users[r.name]:
                        self.users[r.name].append(n.name)

    def node(self, ref):
        return self.by_name[ref.name if isinstance(ref, Ref) else ref]

    def users_of(self, name):
        return [self.by_name[u] for u in self.users.get(name, [])]


def _refs(a):
    if isinstance(a, Ref):
        yield a
    elif isinstance(a, (tuple, list)):
        for x in a:
            yield from _refs(x)
    elif isinstance(a, dict):
        for x in a.values():
            yield from _refs(x)
