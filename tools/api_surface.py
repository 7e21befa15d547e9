"""torch's public API against omnitensor's: every public name of the installed torch, in the
modules a torch program uses, exists in omnitensor's torch face (``omnitensor.torch_face``,
what ``import torch`` gives under ``omnitensor.as_torch``) at the same path with torch's parameter
names, or is listed in ``docs/unsupported.md`` with a reason.

    python tools/api_surface.py                 # coverage per module, overall
    python tools/api_surface.py --missing       # also every name neither present nor listed
    python tools/api_surface.py --markdown      # docs/unsupported.md entries for the gaps

A name *matches* when omnitensor has it and, where ``inspect.signature`` works on both,
every parameter torch names is accepted under that name (a ``**kwargs`` accepts any).
Public names: a module's ``__all__``, else its attributes without a leading underscore that
torch defines (not stdlib or typing imports, nor re-exports of torch's top-level names);
``Tensor``: the attributes of ``torch.Tensor`` without a leading underscore.
``docs/unsupported.md`` entries are list items that start with a backquoted path (``*``
matches any text) followed by a colon and the reason.
"""
from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import inspect
import re
import sys
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
UNSUPPORTED = ROOT / "docs" / "unsupported.md"

#: the module paths checked (relative to ``torch``; "" is torch itself)
MODULES = ("", "Tensor", "nn", "nn.functional", "nn.init", "optim", "optim.lr_scheduler",
           "autograd", "func", "linalg", "fft", "special", "distributions", "utils.data",
           "distributed", "amp", "profiler")

_ENTRY = re.compile(r"^\s*[-*]\s+`(torch(?:\.[^`]+)?)`\s*(?:\([^)]*\))?\s*:\s*(\S.*)$")


@dataclasses.dataclass
class Name:
    """One public torch name and how omnitensor answers it: ``status`` is ``match``,
    ``missing`` or ``signature`` (present, lacking some of torch's parameter names)."""
    path: str
    status: str
    detail: str = ""


def _lookup(root: Any, dotted: str) -> tuple[bool, Any]:
    obj = root
    for part in [p for p in dotted.split(".") if p]:
        try:
            obj = getattr(obj, part)
        except Exception:  # a lazy attribute that fails is absent
            return False, None
    return True, obj


#: torch modules whose names other modules import for their own use (typing helpers,
#: __torch_function__ dispatch, TorchScript annotations): not part of the importing API
_HELPER_MODULES = ("torch.overrides", "torch.types", "torch._jit_internal", "torch._ops",
                   "torch._sources", "torch.utils._", "torch._utils")


def _own(obj: Any) -> bool:
    """Whether ``obj``, found in a module without ``__all__``, is that module's public API:
    defined by torch outside its helper modules. Submodules are not counted: which of them
    are attributes depends on what the process imported (tests/compat/test_module_tree.py
    checks omnitensor's module tree)."""
    if isinstance(obj, types.ModuleType):
        return False
    mod = getattr(obj, "__module__", None)
    if not (isinstance(mod, str) and mod.startswith("torch")):
        return False
    return not mod.startswith(_HELPER_MODULES)


def public_names(torch: Any, path: str) -> list[str]:
    """The public names of ``torch.<path>`` (see the module doc)."""
    _ok, mod = _lookup(torch, path)
    if path == "Tensor":
        return sorted(n for n in dir(mod) if not n.startswith("_"))
    names = getattr(mod, "__all__", None)
    if names is not None:
        return sorted(set(names))
    out = []
    for n in dir(mod):
        if n.startswith("_"):
            continue
        obj = getattr(mod, n, None)
        if not _own(obj):
            continue
        if path and isinstance(obj, type) and getattr(torch, n, None) is obj:
            continue  # torch.Tensor, torch.dtype seen again through a submodule
        out.append(n)
    return sorted(out)


def _signature(obj: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def missing_parameters(theirs: Any, ours: Any) -> list[str]:
    """torch's parameter names that ``ours`` does not accept (empty when either has no
    signature, or when ``ours`` takes ``**kwargs``)."""
    st, so = _signature(theirs), _signature(ours)
    if st is None or so is None:
        return []
    if any(p.kind is p.VAR_KEYWORD for p in so.parameters.values()):
        return []
    accepted = set(so.parameters)
    return [n for n, p in st.parameters.items()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and n != "self"
            and not n.startswith("_") and n not in accepted]


def survey(torch: Any, ot: Any, modules: tuple[str, ...] = MODULES) -> dict[str, list[Name]]:
    """Every public torch name of ``modules``, answered."""
    out: dict[str, list[Name]] = {}
    for path in modules:
        rows = []
        for n in public_names(torch, path):
            full = f"{path}.{n}" if path else n
            _ok, theirs = _lookup(torch, full)
            found, ours = _lookup(ot, full)
            if not found:
                rows.append(Name("torch." + full, "missing"))
                continue
            lacking = missing_parameters(theirs, ours)
            rows.append(Name("torch." + full, "signature", "lacks parameter(s) "
                             + ", ".join(lacking)) if lacking else Name("torch." + full,
                                                                          "match"))
        out[path or "torch"] = rows
    return out


def read_unsupported(path: Path = UNSUPPORTED) -> dict[str, str]:
    """``docs/unsupported.md``'s entries: path pattern -> reason."""
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _ENTRY.match(line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def listed(name: str, entries: dict[str, str]) -> str | None:
    """The reason ``name`` is listed for, or None."""
    if name in entries:
        return entries[name]
    for pat, why in entries.items():
        if "*" in pat and fnmatch.fnmatchcase(name, pat):
            return why
    return None


def coverage(rows: list[Name]) -> float:
    return round(100.0 * sum(r.status == "match" for r in rows) / len(rows), 1) if rows else 100.0


def report(result: dict[str, list[Name]], entries: dict[str, str]) -> str:
    """The per-module table: names, matching, listed, unexplained, coverage."""
    lines = [f"{'module':<22} {'names':>6} {'match':>6} {'listed':>7} {'unlisted':>9} "
             f"{'coverage':>9}"]
    everything: list[Name] = []
    for mod, rows in result.items():
        everything += rows
        bad = [r for r in rows if r.status != "match"]
        n_listed = sum(listed(r.path, entries) is not None for r in bad)
        lines.append(f"{mod:<22} {len(rows):>6} {len(rows) - len(bad):>6} {n_listed:>7} "
                     f"{len(bad) - n_listed:>9} {coverage(rows):>8.1f}%")
    lines.append(f"{'overall':<22} {len(everything):>6} "
                 f"{sum(r.status == 'match' for r in everything):>6} {'':>7} {'':>9} "
                 f"{coverage(everything):>8.1f}%")
    return "\n".join(lines)


def unlisted(result: dict[str, list[Name]], entries: dict[str, str]) -> list[Name]:
    """Names neither matching nor listed in docs/unsupported.md."""
    return [r for rows in result.values() for r in rows
            if r.status != "match" and listed(r.path, entries) is None]


def stale(result: dict[str, list[Name]], entries: dict[str, str]) -> list[str]:
    """Exact entries (no ``*``) for names that now match, or that torch no longer has."""
    status = {r.path: r.status for rows in result.values() for r in rows}
    return sorted(p for p in entries if "*" not in p and status.get(p, "match") == "match")


#: names out of omnitensor's scope by design, and why (first match wins); everything else
#: that is absent is a gap to close
CATEGORIES: tuple[tuple[str, str], ...] = (
    (r"\.fbgemm_\w+$",
     "FBGEMM's packed-weight entry points (an x86 library's private format): omnitensor's "
     "quantized tensors (docs/quantized.md) hold plain integers on every device"),
    (r"\.quantized_\w+_cell$"
     r"|^torch\.nn\.(qat|quantizable|quantized|intrinsic)$",
     "quantized tensors (docs/quantized.md) exist, but this op on them is not implemented "
     "yet"),
    (r"\.(cudnn_\w+|miopen_\w+|mkldnn_\w+|to_mkldnn|is_vulkan_available)$",
     "a vendor library's private entry point (cuDNN, MIOpen, oneDNN): omnitensor's backends "
     "choose their own libraries behind the public ops"),
    (r"\.(Sym\w+|sym_\w+)$",
     "symbolic shapes belong to torch.compile's dynamo tracer; omnitensor.compile guards on "
     "concrete shapes (docs/compile.md)"),
    (r"\.(bits\w+|bit|u?int[1-7]|float8_\w+|float4_\w+|complex32)$",
     "sub-byte, float8 and complex32 dtypes: no backend stores them"),
    (r"\.(\w*Storage|storage|untyped_storage|storage_type|set_|is_set_to|"
     r"record_stream)$",
     "torch's storage objects: an omnitensor tensor owns a backend array, not a storage"),
    (r"^torch\.(\w*Type|Script\w*|Graph|Node|Value|Block|Use|Code|CompilationUnit|"
     r"FunctionSchema|Argument\w*|CompleteArgumentSpec|AliasDb|CallStack|ErrorReport|"
     r"ExecutionPlan|GraphExecutorState|Gradient|FileCheck|ConcreteModuleType\w*|"
     r"DeepCopyMemoTable|LiteScriptModule|StaticModule|TracingState|Capsule|"
     r"PyTorchFile\w+|\w*StorageContext|parse_ir|parse_schema|parse_type_comment|"
     r"merge_type_from_type_comment|unify_type_list|import_ir_module\w*|JITException|"
     r"IODescriptor|InferredType|OperatorInfo|LockingLogger|NoopLogger|AggregationType|"
     r"BenchmarkConfig|BenchmarkExecutionStats|ThroughputBenchmark|fork|wait|cpp)$",
     "TorchScript's IR and runtime: omnitensor.jit traces to its own IR "
     "(docs/jit_onnx.md)"),
    (r"^torch\.(DispatchKey\w*|ExcludeDispatchKeyGuard|DisableTorchFunction\w*|Tag)$",
     "the ATen dispatcher's internals: omnitensor dispatches through its own op table"),
    (r"sparse|\.(\w*smm|spmm|hspmm|sspaddmm|saddmm|\w*indices_copy|values_copy)$",
     "sparse layouts beyond omnitensor.core.sparse: not implemented yet"),
    (r"(ipu|xla|maia|mtia|xpu)\w*$", "a device type omnitensor has no backend for"),
)


def why(r: Name) -> str:
    """The reason docs/unsupported.md gives for ``r``."""
    if r.status == "signature":
        return r.detail
    for pattern, reason in CATEGORIES:
        if re.search(pattern, r.path):
            return reason
    return "not implemented yet"


def markdown(names: list[Name]) -> str:
    """docs/unsupported.md list items for ``names``, grouped by module."""
    out, current = [], None
    for r in sorted(names, key=lambda r: (r.path.rpartition(".")[0], r.path)):
        mod = r.path.rpartition(".")[0]
        if mod != current:
            out.append(f"\n### `{mod}`\n")
            current = mod
        out.append(f"- `{r.path}`: {why(r)}")
    return "\n".join(out).lstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--missing", action="store_true", help="list unexplained names")
    p.add_argument("--markdown", action="store_true",
                   help="print docs/unsupported.md entries for the unexplained names")
    args = p.parse_args(argv)
    import torch

    from omnitensor import torch_face  # what `import torch` gives under omnitensor.as_torch
    result = survey(torch, torch_face)
    entries = read_unsupported()
    gaps = unlisted(result, entries)
    if args.markdown:
        print(markdown(gaps), end="")
        return 0
    print(report(result, entries))
    if args.missing:
        for r in gaps:
            print(f"  {r.status:<9} {r.path} {r.detail}")
    old = stale(result, entries)
    if old:
        print(f"{len(old)} docs/unsupported.md entries name what now matches (remove them): "
              + ", ".join(old))
    return 1 if gaps or old else 0


if __name__ == "__main__":
    sys.exit(main())
