"""Batch-generic saved programs: one graph for every batch size, verified by three captures.

A captured graph is concrete: its reshape targets, slice bounds and value shapes hold the
example's batch size. torch's traced modules run other batch sizes; so that a *saved* program
(no Python left to capture again) does too, :func:`generalize` captures the model at two more
batch sizes (every tensor argument whose first axis has the example's batch size, tiled along
it) and compares the three graphs' JSON trees. When they agree in everything but integers
(and integer-valued floats: a mean's divisor), each integer that changes is fitted as
``c + a * batch`` from two captures and must predict the third exactly; the result is a
template with ``{"$sym": [c, a]}`` in those places. Anything else that differs (the ops, a
constant array, a float that is not a count) means the graph depends on the batch size in a
way a template cannot hold: the program then stays specialized to its example, and says so
when called with another size.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

__all__ = ["generalize", "solve", "instantiate", "check_template", "NoFit"]

SYM, SYMF = "$sym", "$symf"


class NoFit(Exception):
    """The captures disagree in something a template cannot express."""


def _fit(vals: list[Any], sizes: list[int]) -> tuple[int, int]:
    v0, v1, v2 = (int(v) for v in vals)
    ds = sizes[1] - sizes[0]
    if (v1 - v0) % ds:
        raise NoFit
    a = (v1 - v0) // ds
    c = v0 - a * sizes[0]
    if c + a * sizes[2] != v2 or a == 0:
        raise NoFit
    return c, a


def unify(trees: list[Any], sizes: list[int]) -> Any:
    """The template of ``trees`` (JSON values captured at ``sizes``), or :class:`NoFit`."""
    t0 = trees[0]
    if any(type(t) is not type(t0) for t in trees):
        raise NoFit
    if isinstance(t0, bool) or t0 is None or isinstance(t0, str):
        if any(t != t0 for t in trees):
            raise NoFit
        return t0
    if isinstance(t0, int):
        if all(t == t0 for t in trees):
            return t0
        return {SYM: list(_fit(trees, sizes))}
    if isinstance(t0, float):
        if all(t == t0 or (t != t and t0 != t0) for t in trees):
            return t0
        if all(float(t).is_integer() for t in trees):
            return {SYMF: list(_fit(trees, sizes))}
        raise NoFit
    if isinstance(t0, list):
        if any(len(t) != len(t0) for t in trees):
            raise NoFit
        return [unify([t[i] for t in trees], sizes) for i in range(len(t0))]
    if isinstance(t0, dict):
        if any(t.keys() != t0.keys() for t in trees):
            raise NoFit
        return {k: unify([t[k] for t in trees], sizes) for k in t0}
    raise NoFit


def instantiate(tree: Any, n: int) -> Any:
    """The template at batch size ``n``."""
    if isinstance(tree, dict):
        if set(tree) == {SYM}:
            c, a = tree[SYM]
            return int(c) + int(a) * n
        if set(tree) == {SYMF}:
            c, a = tree[SYMF]
            return float(int(c) + int(a) * n)
        return {k: instantiate(v, n) for k, v in tree.items()}
    if isinstance(tree, list):
        return [instantiate(v, n) for v in tree]
    return tree


def check_template(tmpl: dict) -> None:
    """Refuse a template read from a file whose symbolic entries are not ``[c, a]`` with
    integers ``c`` and ``a != 0`` of sane size (``solve`` divides by ``a``)."""
    from ._program import ProgramError

    def walk(tree: Any, depth: int) -> None:
        if depth > 256:
            raise ProgramError("omnitensor.jit.load: invalid program: template nested too "
                               "deeply")
        if isinstance(tree, dict):
            if SYM in tree or SYMF in tree:
                ca = tree.get(SYM, tree.get(SYMF))
                if len(tree) != 1 or not (isinstance(ca, list) and len(ca) == 2 and all(
                        isinstance(x, int) and not isinstance(x, bool) and abs(x) < 1 << 40
                        for x in ca) and ca[1] != 0):
                    raise ProgramError(f"omnitensor.jit.load: invalid program: template "
                                       f"entry {str(tree)[:80]}")
                return
            for v in tree.values():
                walk(v, depth + 1)
        elif isinstance(tree, list):
            for v in tree:
                walk(v, depth + 1)
    for part in ("key", "graph", "out_spec"):
        walk(tmpl[part], 0)
    if not isinstance(tmpl["key"], list):
        raise ProgramError("omnitensor.jit.load: invalid program: template key")


def _first_sym(template: Any, tree: Any) -> int | None:
    """The batch size that makes the first symbolic entry of ``template`` equal ``tree``."""
    if isinstance(template, dict) and set(template) == {SYM}:
        c, a = template[SYM]
        if isinstance(tree, int) and not isinstance(tree, bool) and (tree - c) % a == 0:
            return (tree - c) // a
        return None
    if isinstance(template, dict) and isinstance(tree, dict) and template.keys() == tree.keys():
        for k in template:
            n = _first_sym(template[k], tree[k])
            if n is not None:
                return n
    if isinstance(template, list) and isinstance(tree, list) and len(template) == len(tree):
        for a, b in zip(template, tree):
            n = _first_sym(a, b)
            if n is not None:
                return n
    return None


def solve(key_template: Any, key: str) -> int | None:
    """The batch size at which ``key_template`` is the call signature ``key``, or None."""
    tree = json.loads(key)
    n = _first_sym(key_template, tree)
    if n is None or n < 1 or instantiate(key_template, n) != tree:
        return None
    return n


def _strip_random(graph_json: dict) -> dict:
    """random_bits' key and counter come from the generator at each replay: not part of
    what must agree between captures."""
    for node in graph_json["nodes"]:
        if node[0] == "random_bits":
            args = node[1]["$t"]
            args[1], args[2] = 0, 0
    return graph_json


def generalize(entries: list[Any], keys: list[str], sizes: list[int]) -> dict:
    """A template (``{"key", "graph", "out_spec", "consts"}``) from three captured entries
    of one model at batch ``sizes``; raises :class:`NoFit`."""
    import copy
    graphs = []
    for e in entries:
        g = copy.copy(e.graph)
        g.constants, g.breaks, g.break_regions = {}, [], []
        graphs.append(_strip_random(json.loads(g.to_json())))
    template = unify(graphs, sizes)
    key = unify([json.loads(k) for k in keys], sizes)
    out_spec = unify([e.out_spec for e in entries], sizes)
    ids = [sorted(e.consts) for e in entries]
    if any(i != ids[0] for i in ids):
        raise NoFit
    for vid in ids[0]:
        arrs = [e.consts[vid] for e in entries]
        if any(a.shape != arrs[0].shape or not np.array_equal(a, arrs[0], equal_nan=True)
               for a in arrs):
            raise NoFit
    if _first_sym(key, json.loads(keys[0])) is None:
        raise NoFit                     # the batch size appears nowhere in the signature
    return {"key": key, "graph": template, "out_spec": out_spec,
            "n_args": entries[0].n_args}
