"""The import graph of omnitensor, measured from the source (AST: nothing is imported).

Prints module and edge counts, the import cycles (strongly connected components) among
module-level imports and counting function-level imports too, imports that run from a lower
layer to a higher one (errors < envvars < kernels < backends < core < autograd < the rest),
and the function-level imports per layer and per file; ``--list`` adds every function-level
import of an omnitensor module. Edges to a module's own parent packages are left out (Python runs
a package's ``__init__`` first; that is no dependency of the code). The layer contracts
themselves are enforced by import-linter (``.importlinter``, ``tests/test_layers.py``).

    python tools/import_graph.py [--list]
"""
from __future__ import annotations

import ast
import collections
import os
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "omnitensor"
ORDER = ["errors", "envvars", "kernels", "backends", "core", "autograd"]


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        name = ".".join(rel.parts)
        mods[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return mods


def _targets(mods: dict, cur: str, is_pkg: bool, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = cur if is_pkg else cur.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        mod = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
        names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]
    out = []
    for n in names:
        while n and n not in mods:
            n = n.rpartition(".")[0]
        if n and n != cur and not cur.startswith(n + "."):
            out.append(n)
    return out


def measure() -> dict:
    """Module-level and function-level edges, and the function-level import statements."""
    mods = _modules()
    top: dict = collections.defaultdict(set)
    lazy: dict = collections.defaultdict(set)
    statements: list = []
    for m, path in mods.items():
        tree = ast.parse(path.read_text())
        is_pkg = path.name == "__init__.py"

        def visit(node: ast.AST, func: str | None, typing_only: bool, m: str = m,
                  path: Path = path, is_pkg: bool = is_pkg) -> None:
            for ch in ast.iter_child_nodes(node):
                if isinstance(ch, (ast.Import, ast.ImportFrom)) and not typing_only:
                    targets = _targets(mods, m, is_pkg, ch)
                    (lazy if func else top)[m].update(targets)
                    if func and targets:
                        statements.append((m, f"{path.relative_to(PKG.parent)}:{ch.lineno}",
                                           func, ast.unparse(ch)))
                inner = ch.name if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    else None
                guard = isinstance(ch, ast.If) and "TYPE_CHECKING" in ast.unparse(ch.test)
                visit(ch, func or inner, typing_only or guard)
        visit(tree, None, False)
    return {"mods": mods, "top": top, "lazy": lazy, "statements": statements}


def cycles(mods: dict, graph: dict) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict = {}
    low: dict = {}
    on: set = set()
    stack: list = []
    found = []
    counter = 0
    for root in sorted(mods):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def _layer(m: str) -> str:
    parts = m.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


def _rank(m: str) -> int:
    layer = _layer(m)
    return ORDER.index(layer) if layer in ORDER else len(ORDER)


def report(listing: bool = False) -> str:
    g = measure()
    mods, top, lazy, statements = g["mods"], g["top"], g["lazy"], g["statements"]
    both = {m: top[m] | lazy[m] for m in mods}
    out = [f"modules: {len(mods)}",
           f"module-level import edges: {sum(len(v) for v in top.values())}",
           f"function-level import statements (of omnitensor modules): {len(statements)}",
           f"files with function-level imports: {len({s[0] for s in statements})}",
           "", "== cycles among module-level imports =="]
    out += [f"{len(c)} {c}" for c in cycles(mods, top)] or ["none"]
    out += ["", "== cycles counting function-level imports too =="]
    out += [f"{len(c)} {c}" for c in cycles(mods, both)] or ["none"]
    out += ["", "== upward imports (lower layer -> higher), [M] module-level, [F] in a function =="]
    up = []
    for m in sorted(mods):
        for kind, edges in (("M", top), ("F", lazy)):
            for t in sorted(edges.get(m, ())):
                if _rank(m) < len(ORDER) and _rank(t) > _rank(m):
                    up.append(f"[{kind}] {m} -> {t}")
    out += up or ["none"]
    out += ["", "== function-level import statements per layer =="]
    per = collections.Counter(_layer(s[0]) for s in statements)
    out += [f"{k}: {v}" for k, v in per.most_common()]
    out += ["", "== function-level import statements per file (top 25) =="]
    per_file = collections.Counter(s[0] for s in statements)
    out += [f"{n:4d} {m}" for m, n in per_file.most_common(25)]
    if listing:
        out += ["", "== every function-level import of an omnitensor module =="]
        out += [f"{where}: [{func}] {text}" for _, where, func, text in sorted(statements)]
    return "\n".join(out)


if __name__ == "__main__":
    os.chdir(PKG.parent)
    print(report("--list" in sys.argv[1:]))
