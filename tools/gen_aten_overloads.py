"""Write omnitensor/aten/overloads.txt: each ATen operator of the installed torch with its
overload names (``add Tensor Scalar out ...``; ``default`` for the unnamed overload), the
names ``torch.ops.aten.<op>.<overload>`` accepts and ``overloads()`` lists.

Run with real torch importable (not under omnitensor.as_torch): python tools/gen_aten_overloads.py
"""
from __future__ import annotations

import pathlib

import torch

OUT = pathlib.Path(__file__).resolve().parents[1] / "omnitensor" / "aten" / "overloads.txt"


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


if __name__ == "__main__":
    main()
