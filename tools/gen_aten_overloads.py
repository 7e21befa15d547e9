"""Write omnitensor/aten/overloads.txt: each ATen operator of the installed torch with its
overload names (``add Tensor Scalar out ...``; ``default`` for the unnamed overload), the
names ``torch.ops.aten.<op>.<overload>`` accepts and ``overloads()`` lists; and
omnitensor/aten/out_arguments.txt: the public functions of torch, torch.linalg and torch.fft
that take ``out=`` (an ATen overload of theirs writes out arguments), with the most out
tensors one takes (a tuple result takes a tuple), which the torch face binds out= from.

Run with real torch importable (not under omnitensor.as_torch): python tools/gen_aten_overloads.py
"""
from __future__ import annotations

import pathlib

import torch

OUT = pathlib.Path(__file__).resolve().parents[1] / "omnitensor" / "aten" / "overloads.txt"
OUT_ARGS = OUT.with_name("out_arguments.txt")
#: the torch modules whose functions are ATen's ``<prefix><name>`` operators
MODULES = (("torch", torch, ""), ("torch.linalg", torch.linalg, "linalg_"),
           ("torch.fft", torch.fft, "fft_"))


def out_arguments() -> list[str]:
    """``module name count`` for each public function taking out= (see the docstring)."""
    counts: dict[str, int] = {}
    for schema in torch._C._jit_get_all_schemas():
        ns, _, name = schema.name.partition("::")
        n = sum(1 for a in schema.arguments if a.is_out)
        if ns == "aten" and n:
            counts[name] = max(counts.get(name, 0), n)
    rows = []
    for label, module, prefix in MODULES:
        for name in sorted(dir(module)):
            if not name.startswith("_") and callable(getattr(module, name)) and \
                    not isinstance(getattr(module, name), type) and prefix + name in counts:
                rows.append(f"{label} {name} {counts[prefix + name]}")
    return rows


def main() -> None:
    table: dict[str, list[str]] = {}
    for schema in torch._C._jit_get_all_schemas():
        ns, _, name = schema.name.partition("::")
        if ns != "aten":
            continue
        table.setdefault(name, []).append(schema.overload_name or "default")
    lines = [f"# ATen operators and their overload names, from torch {torch.__version__} "
             f"(tools/gen_aten_overloads.py)"]
    lines += [" ".join([name, *dict.fromkeys(ovs)]) for name, ovs in sorted(table.items())]
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{OUT}: {len(table)} operators")
    rows = out_arguments()
    OUT_ARGS.write_text(f"# torch functions taking out= and their most out tensors, from torch "
                        f"{torch.__version__} (tools/gen_aten_overloads.py)\n" +
                        "\n".join(rows) + "\n")
    print(f"{OUT_ARGS}: {len(rows)} functions")


if __name__ == "__main__":
    main()
