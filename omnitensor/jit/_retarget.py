"""A saved graph made ready for the device it runs on (``jit.load``'s ``map_location``,
or a traced module called on another device)."""
from __future__ import annotations

from typing import Any

from ..core.device import device as as_device

__all__ = ["retarget", "host_consts"]


def retarget(graph: Any, device: str) -> Any:
    """``graph`` for another device: the device index of creation primitives follows, and
    when the graph was captured on a backend that broadcasts natively (NumPy) for one that
    does not, the elementwise operands it left unbroadcast get explicit ``broadcast_to``
    nodes (the primitive contract's operands are broadcast by core; core skips that where
    the backend does it itself)."""
    import copy
    from ..backends.base import BINARY
    from ..compiler.ir import Node, Value
    g = copy.copy(graph)
    g.device = device
    dev = as_device(device)
    index = dev.index or 0
    explicit = not getattr(dev.backend, "native_broadcasting", False)
    elementwise = frozenset(BINARY) | {"where", "assign"}
    slot = {"full": 3, "empty": 2, "arange": 4, "from_numpy": 1, "random_bits": 3}
    next_id = 1 + max([v.id for n in graph.nodes for v in n.outputs] +
                      [i.value.id for i in graph.inputs] + [0])
    nodes = []
    for n in graph.nodes:
        k = slot.get(n.op)
        if k is not None and n.device is None and len(n.args) > k:
            args = list(n.args)
            args[k] = index
            n = Node(n.op, tuple(args), n.kwargs, n.outputs, n.inplace_of, n.region, n.device)
        if explicit and n.op in elementwise and n.device is None:
            shape = n.outputs[0].shape if n.outputs else n.args[0].shape
            args = list(n.args)
            changed = False
            for j, a in enumerate(args):
                if isinstance(a, Value) and tuple(a.shape) != tuple(shape) and \
                        not (n.op == "assign" and j == 0):
                    b = Value(next_id, tuple(shape), a.dtype)
                    next_id += 1
                    nodes.append(Node("broadcast_to", (a, tuple(shape)), {}, (b,), None,
                                      n.region, None))
                    args[j] = b
                    changed = True
            if changed:
                n = Node(n.op, tuple(args), n.kwargs, n.outputs, n.inplace_of, n.region,
                         n.device)
        nodes.append(n)
    g.nodes = nodes
    return g


def host_consts(graph: Any) -> set[int]:
    """Ids of const inputs that primitives read as host arrays (``from_numpy``,
    ``assign_from_host``), not as device arrays."""
    out = set()
    for n in graph.nodes:
        if n.op == "from_numpy" and hasattr(n.args[0], "id"):
            out.add(n.args[0].id)
        elif n.op == "assign_from_host" and len(n.args) > 1 and hasattr(n.args[1], "id"):
            out.add(n.args[1].id)
    return out
