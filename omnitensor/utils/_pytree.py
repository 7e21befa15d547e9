"""``omnitensor.utils._pytree``: torch's ``torch.utils._pytree``, nested containers as trees.

A pytree is a leaf or a container node whose children are pytrees. Nodes are the types
registered here: ``tuple``, ``list``, ``dict``, ``collections.OrderedDict``,
``collections.defaultdict``, ``collections.deque`` and every namedtuple, plus what
:func:`register_pytree_node` adds; everything else (tensors, numbers, ``None``) is a leaf.
``tree_flatten`` returns the leaves in order and a :class:`TreeSpec` that
``tree_unflatten`` rebuilds the tree from; ``tree_map`` and friends are built on those two.
Dicts keep their insertion order. Names, signatures and the JSON of
``treespec_dumps`` follow torch's module, so code written against it (``torch.func``,
x-transformers, optimizer and checkpoint utilities) runs unchanged.
"""
from __future__ import annotations

import collections
import dataclasses
import json
from typing import Any, Callable, Iterable, Iterator, NamedTuple

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext",
           "ToDumpableContextFn", "FromDumpableContextFn", "PyTreeSpec", "TreeSpec",
           "LeafSpec", "keystr", "key_get", "register_pytree_node", "tree_is_leaf",
           "tree_flatten", "tree_flatten_with_path", "tree_unflatten", "tree_iter",
           "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map",
           "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all",
           "tree_any", "tree_all_only", "tree_any_only", "treespec_dumps", "treespec_loads",
           "treespec_pprint", "is_namedtuple", "is_namedtuple_class",
           "is_namedtuple_instance", "is_structseq", "is_structseq_class",
           "is_structseq_instance", "SequenceKey", "MappingKey", "GetAttrKey"]

PyTree = Any
Context = Any
DumpableContext = Any
FlattenFn = Callable[[PyTree], "tuple[list[Any], Context]"]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
KeyEntry = Any

#: the protocol version written by :func:`treespec_dumps` (torch's)
DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1


# ----------------------------------------------------------------------------- keys
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The position of a child in a sequence node."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The key of a child in a mapping node."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute name of a child (namedtuples, dataclasses)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


def keystr(kp: tuple) -> str:
    """A key path as a string: ``[0]['a'].x``."""
    return "".join(str(k) for k in kp)


def key_get(obj: Any, kp: tuple) -> Any:
    """The subtree of ``obj`` at key path ``kp``."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ----------------------------------------------------------------------------- nodes
class NodeDef(NamedTuple):
    type: Any
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Callable | None


class _SerializeNodeDef(NamedTuple):
    typ: Any
    serialized_type_name: str
    to_dumpable_context: ToDumpableContextFn | None
    from_dumpable_context: FromDumpableContextFn | None


SUPPORTED_NODES: dict[Any, NodeDef] = {}
SUPPORTED_SERIALIZED_TYPES: dict[Any, _SerializeNodeDef] = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict[str, Any] = {}


def register_pytree_node(cls: type, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                         serialized_type_name: str | None = None,
                         to_dumpable_context: ToDumpableContextFn | None = None,
                         from_dumpable_context: FromDumpableContextFn | None = None,
                         flatten_with_keys_fn: Callable | None = None) -> None:
    """Make ``cls`` a pytree node: ``flatten_fn(obj) -> (children, context)`` and
    ``unflatten_fn(children, context) -> obj``; ``flatten_with_keys_fn(obj) ->
    ([(key, child)...], context)`` enables the ``*_with_path`` functions;
    ``serialized_type_name`` and the dumpable-context pair enable ``treespec_dumps``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    if (to_dumpable_context is None) != (from_dumpable_context is None):
        raise ValueError("register_pytree_node: to_dumpable_context and "
                         "from_dumpable_context must both be given or both be None")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    name = serialized_type_name or f"{cls.__module__}.{cls.__qualname__}"
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context,
                                                        from_dumpable_context)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def _register_pytree_node(cls: type, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn,
                          to_str_fn: Any = None, maybe_from_str_fn: Any = None, *,
                          to_dumpable_context: ToDumpableContextFn | None = None,
                          from_dumpable_context: FromDumpableContextFn | None = None,
                          flatten_with_keys_fn: Callable | None = None) -> None:
    """torch's older name of :func:`register_pytree_node` (the string functions, which
    torch deprecated, are not supported)."""
    if to_str_fn is not None or maybe_from_str_fn is not None:
        raise ValueError("_register_pytree_node: to_str_fn and maybe_from_str_fn are no "
                         "longer supported (as torch); use to_dumpable_context and "
                         "from_dumpable_context")
    register_pytree_node(cls, flatten_fn, unflatten_fn,
                         to_dumpable_context=to_dumpable_context,
                         from_dumpable_context=from_dumpable_context,
                         flatten_with_keys_fn=flatten_with_keys_fn)


def is_namedtuple_class(cls: Any) -> bool:
    """A subclass of tuple made by ``collections.namedtuple`` or ``typing.NamedTuple``."""
    return isinstance(cls, type) and issubclass(cls, tuple) and \
        isinstance(getattr(cls, "_fields", None), tuple) and callable(getattr(cls, "_make",
                                                                              None))


def is_namedtuple_instance(obj: Any) -> bool:
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj: Any) -> bool:
    """A namedtuple class or instance."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_class(cls: Any) -> bool:
    """A C structseq type (``os.stat_result``, torch's ``return_types``)."""
    return isinstance(cls, type) and issubclass(cls, tuple) and all(
        isinstance(getattr(cls, a, None), int) for a in
        ("n_sequence_fields", "n_fields", "n_unnamed_fields"))


def is_structseq_instance(obj: Any) -> bool:
    return is_structseq_class(type(obj))


def is_structseq(obj: Any) -> bool:
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


class _NamedTupleNode:
    """The node type every namedtuple flattens as (its class is the context)."""


class _StructSeqNode:
    """The node type every structseq flattens as (its class is the context)."""


def _node_type(tree: Any) -> Any:
    typ = type(tree)
    if typ in SUPPORTED_NODES:
        return typ
    if is_namedtuple_class(typ):
        return _NamedTupleNode
    if is_structseq_class(typ):
        return _StructSeqNode
    return typ


_get_node_type = _node_type  # torch's private name (libraries walk SUPPORTED_NODES with it)
_is_namedtuple_instance = is_namedtuple_instance


# the builtin containers' flatten/unflatten functions, under torch's private names
# (libraries register their own types with these: transformers' ModelOutput uses
# _dict_flatten / _dict_unflatten / _dict_flatten_with_keys)
def _tuple_flatten(t: tuple) -> tuple[list, Context]:
    return list(t), None


def _tuple_unflatten(values: Iterable[Any], context: Context) -> tuple:
    return tuple(values)


def _seq_flatten_with_keys(xs: Any) -> tuple[list, Context]:
    return [(SequenceKey(i), v) for i, v in enumerate(xs)], None


_tuple_flatten_with_keys = _list_flatten_with_keys = _seq_flatten_with_keys


def _list_flatten(xs: list) -> tuple[list, Context]:
    return list(xs), None


def _list_unflatten(values: Iterable[Any], context: Context) -> list:
    return list(values)


def _dict_flatten(d: dict) -> tuple[list, Context]:
    return list(d.values()), list(d.keys())


def _dict_unflatten(values: Iterable[Any], context: Context) -> dict:
    return dict(zip(context, values))


def _dict_flatten_with_keys(d: dict) -> tuple[list, Context]:
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _ordereddict_flatten(d: dict) -> tuple[list, Context]:
    return list(d.values()), list(d.keys())


def _ordereddict_unflatten(values: Iterable[Any], context: Context) -> dict:
    return collections.OrderedDict(zip(context, values))


_ordereddict_flatten_with_keys = _dict_flatten_with_keys


def _register_builtins() -> None:
    register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten,
                         serialized_type_name="builtins.tuple",
                         flatten_with_keys_fn=_tuple_flatten_with_keys)
    register_pytree_node(list, _list_flatten, _list_unflatten,
                         serialized_type_name="builtins.list",
                         flatten_with_keys_fn=_list_flatten_with_keys)
    register_pytree_node(dict, _dict_flatten, _dict_unflatten,
                         serialized_type_name="builtins.dict",
                         flatten_with_keys_fn=_dict_flatten_with_keys)
    register_pytree_node(collections.OrderedDict, _ordereddict_flatten,
                         _ordereddict_unflatten,
                         serialized_type_name="collections.OrderedDict",
                         flatten_with_keys_fn=_ordereddict_flatten_with_keys)
    register_pytree_node(collections.defaultdict,
                         lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
                         lambda xs, c: collections.defaultdict(c[0], zip(c[1], xs)),
                         serialized_type_name="collections.defaultdict",
                         to_dumpable_context=lambda c: _defaultdict_dumpable(c),
                         from_dumpable_context=lambda d: _defaultdict_context(d),
                         flatten_with_keys_fn=lambda d: (
                             [(MappingKey(k), v) for k, v in d.items()],
                             [d.default_factory, list(d.keys())]))
    register_pytree_node(collections.deque, lambda d: (list(d), d.maxlen),
                         lambda xs, maxlen: collections.deque(xs, maxlen=maxlen),
                         serialized_type_name="collections.deque",
                         flatten_with_keys_fn=lambda d: (
                             [(SequenceKey(i), v) for i, v in enumerate(d)], d.maxlen))
    named_keys = lambda t: ([(GetAttrKey(f), v) for f, v in zip(t._fields, t)],
                            type(t))
    register_pytree_node(_NamedTupleNode, lambda t: (list(t), type(t)),
                         lambda xs, cls: cls(*xs),
                         serialized_type_name="collections.namedtuple",
                         flatten_with_keys_fn=named_keys)
    register_pytree_node(_StructSeqNode, lambda t: (list(t), type(t)),
                         lambda xs, cls: cls(xs),
                         serialized_type_name="structseq",
                         flatten_with_keys_fn=lambda t: (
                             [(SequenceKey(i), v) for i, v in enumerate(t)], type(t)))


_register_builtins()


# ---------------------------------------------------------------------------- TreeSpec
class TreeSpec:
    """The structure of a pytree: the node ``type``, its ``context`` (dict keys, a
    namedtuple's class...) and one spec per child (``children_specs``); a leaf's spec
    has type None and no children."""

    def __init__(self, type: Any, context: Context,  # noqa: A002 (torch's name)
                 children_specs: list) -> None:
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self) -> bool:
        return self.type is None and not self.children_specs

    def children(self) -> list:
        return list(self.children_specs)

    def child(self, index: int) -> "TreeSpec":
        return self.children_specs[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type is other.type or self.type == other.type) and \
            self.context == other.context and self.children_specs == other.children_specs

    def __hash__(self) -> int:
        return hash((self.type, self.num_nodes, self.num_leaves))

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        name = "namedtuple" if self.type is _NamedTupleNode else getattr(
            self.type, "__name__", str(self.type))
        inner = ",\n".join(" " * (indent + 2) + c.__repr__(indent + 2)
                           for c in self.children_specs).lstrip()
        return f"TreeSpec({name}, {self.context!r}, [{inner}])"

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The tree of this structure with ``leaves`` in order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds "
                             f"{self.num_leaves} items ({self}).")
        return self._build(iter(leaves))

    def _build(self, it: Iterator[Any]) -> PyTree:
        if self.is_leaf():
            return next(it)
        children = [c._build(it) for c in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)

    def flatten_up_to(self, tree: PyTree) -> list:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this
        structure at least down to them)."""
        out: list = []
        self._up_to(tree, out)
        return out

    def _up_to(self, tree: PyTree, out: list) -> None:
        if self.is_leaf():
            out.append(tree)
            return
        typ = _node_type(tree)
        if typ is not self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got "
                             f"{type(tree)!r}.")
        children, context = SUPPORTED_NODES[typ].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got "
                             f"{len(children)}.")
        if context != self.context:
            raise ValueError(f"Node context mismatch for custom node type {self.type!r}: "
                             f"{context!r} != {self.context!r}")
        for c, spec in zip(children, self.children_specs):
            spec._up_to(c, out)


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_leaves = 1


PyTreeSpec = TreeSpec
_LEAF = LeafSpec()
_LEAF_SPEC = _LEAF  # torch's private name


# ------------------------------------------------------------------------- flattening
def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf (not a registered node, or ``is_leaf`` says so)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


def _flatten(tree: PyTree, is_leaf: Any, leaves: list) -> TreeSpec:
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return _LEAF
    typ = _node_type(tree)
    children, context = SUPPORTED_NODES[typ].flatten_fn(tree)
    return TreeSpec(typ, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                 ) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its structure."""
    leaves: list = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The tree of structure ``treespec`` holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be "
                        f"instance of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
              ) -> Iterator[Any]:
    """The leaves of ``tree``, lazily."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)
    for c in children:
        yield from tree_iter(c, is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list:
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                   ) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """A tree of ``tree``'s structure holding ``func(leaf, *corresponding leaves of
    rests)``; each of ``rests`` has ``tree``'s structure (or a deeper one)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """Call ``func`` on the leaves for its side effects (in-place updates); returns
    ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    collections.deque(map(func, *flat), maxlen=0)
    return tree


def _only(type_or_types_or_pred: Any) -> Callable[[Any], bool]:
    if isinstance(type_or_types_or_pred, type) or (
            isinstance(type_or_types_or_pred, tuple) and
            all(isinstance(t, type) for t in type_or_types_or_pred)):
        types = type_or_types_or_pred
        return lambda x: isinstance(x, types)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError(f"expected a type, a tuple of types or a predicate, got "
                    f"{type_or_types_or_pred!r}")


def tree_map_only(type_or_types_or_pred: Any, func: Callable[..., Any], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree_map`` applying ``func`` only to the leaves of the given type(s) (or matching
    the predicate); the other leaves are kept."""
    pred = _only(type_or_types_or_pred)
    return tree_map(lambda x: func(x) if pred(x) else x, tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred: Any, func: Callable[..., Any], tree: PyTree,
                   is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    pred = _only(type_or_types_or_pred)
    return tree_map_(lambda x: func(x) if pred(x) else x, tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types: Any, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    only = _only(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if only(x))


def tree_any_only(type_or_types: Any, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    only = _only(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if only(x))


# ---------------------------------------------------------------------- with key paths
def _with_path(tree: PyTree, is_leaf: Any, prefix: tuple, out: list) -> TreeSpec:
    if tree_is_leaf(tree, is_leaf):
        out.append((prefix, tree))
        return _LEAF
    typ = _node_type(tree)
    node = SUPPORTED_NODES[typ]
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {typ}. Please pass "
                         f"a flatten_with_keys_fn argument to register_pytree_node.")
    keyed, context = node.flatten_with_keys_fn(tree)
    return TreeSpec(typ, context, [_with_path(c, is_leaf, prefix + (k,), out)
                                   for k, c in keyed])


def tree_flatten_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                           ) -> tuple[list[tuple[tuple, Any]], TreeSpec]:
    """``([(key path, leaf)...], treespec)``."""
    out: list = []
    spec = _with_path(tree, is_leaf, (), out)
    return out, spec


def tree_leaves_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                          ) -> list[tuple[tuple, Any]]:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
                       is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree_map`` whose ``func`` also gets each leaf's key path first."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    flat = [[p for p, _ in pairs], [x for _, x in pairs]] + \
        [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


# ----------------------------------------------------------------------- serialization
def _spec_to_json(spec: TreeSpec) -> dict:
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    ser = SUPPORTED_SERIALIZED_TYPES.get(spec.type)
    if ser is None or spec.type in (_NamedTupleNode, _StructSeqNode):
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered "
                                  f"(register it with serialized_type_name and the "
                                  f"dumpable-context functions)")
    if ser.to_dumpable_context is not None:  # stored as it is (torch's format)
        ctx = ser.to_dumpable_context(spec.context)
    else:
        try:
            ctx = json.dumps(spec.context)
        except TypeError as e:
            raise TypeError(f"treespec_dumps: the context of a {spec.type} node is not JSON "
                            f"serializable ({e}); register to_dumpable_context") from None
    return {"type": ser.serialized_type_name, "context": ctx,
            "children_spec": [_spec_to_json(c) for c in spec.children_specs]}


def _json_to_spec(obj: dict) -> TreeSpec:
    if obj["type"] is None:
        return LeafSpec()
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE.get(obj["type"])
    if typ is None:
        raise NotImplementedError(f"treespec_loads: unknown serialized type "
                                  f"{obj['type']!r}; register it first")
    ser = SUPPORTED_SERIALIZED_TYPES[typ]
    ctx = obj["context"]
    ctx = json.loads(ctx) if ser.from_dumpable_context is None else \
        ser.from_dumpable_context(ctx)
    return TreeSpec(typ, ctx, [_json_to_spec(c) for c in obj["children_spec"]])


def _defaultdict_dumpable(context: Any) -> dict:
    factory = context[0]
    return {"default_factory_module": factory.__module__,
            "default_factory_name": factory.__qualname__, "dict_context": context[1]}


def _defaultdict_context(dumpable: dict) -> list:
    return [_builtin_factory(dumpable["default_factory_module"],
                             dumpable["default_factory_name"]), dumpable["dict_context"]]


def _builtin_factory(module: str, name: str) -> Any:
    """A defaultdict factory named in a serialized spec: builtins only (loading never
    imports or runs other code)."""
    import builtins
    factory = getattr(builtins, name, None) if module == "builtins" else None
    if not isinstance(factory, type):
        raise ValueError(f"treespec_loads: defaultdict factory {module}.{name} is not a "
                         f"builtin type; only builtin factories are loaded")
    return factory


def treespec_dumps(treespec: TreeSpec, protocol: int | None = None) -> str:
    """``treespec`` as a JSON string (torch's format: ``[protocol, spec]``)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"treespec_dumps(treespec, protocol): Expected `treespec` to be "
                        f"instance of TreeSpec but got item of type {type(treespec)}.")
    protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL if protocol is None else protocol
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return json.dumps([protocol, _spec_to_json(treespec)])


def treespec_loads(serialized: str) -> TreeSpec:
    """The TreeSpec that :func:`treespec_dumps` wrote."""
    protocol, obj = json.loads(serialized)
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return _json_to_spec(obj)


def treespec_pprint(treespec: TreeSpec) -> str:
    """A readable picture of the structure: the tree with ``*`` for every leaf."""
    return repr(treespec.unflatten(_Star() for _ in range(treespec.num_leaves)))


class _Star:
    def __repr__(self) -> str:
        return "*"
