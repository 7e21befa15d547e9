"""torch.overrides' __torch_function__ helpers: the same torch-style library code, run on
real torch and on omnitensor's torch face, answers the same. (omnitensor's own ops do not
dispatch to __torch_function__; only code that calls these helpers does.)"""
import threading
import types

import pytest

torch = pytest.importorskip("torch")

import omnitensor  # noqa: E402
import omnitensor._C  # noqa: E402
import omnitensor.nn.functional  # noqa: E402
import omnitensor.overrides  # noqa: E402


def _faces():
    real = types.SimpleNamespace(Tensor=torch.Tensor, overrides=torch.overrides,
                                 C=torch._C, F=torch.nn.functional, tensor=torch.tensor,
                                 Parameter=torch.nn.Parameter)
    ours = types.SimpleNamespace(Tensor=omnitensor.Tensor, overrides=omnitensor.overrides,
                                 C=omnitensor._C, F=omnitensor.nn.functional,
                                 tensor=omnitensor.tensor, Parameter=omnitensor.nn.Parameter)
    return real, ours


def _scenario(m):
    """torch-style library code and the subclasses it meets; plain values come back."""
    ov = m.overrides

    def scale(x, factor=2.0):
        if ov.has_torch_function((x,)):
            return ov.handle_torch_function(scale, (x,), x, factor=factor)
        return x * factor

    def pair(a, b):
        if m.F.has_torch_function_variadic(a, b):
            return m.F.handle_torch_function(pair, (a, b), a, b)
        return a + b

    class Logged(m.Tensor):  # a subclass that records, then runs func with the protocol off
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func in (scale, pair):  # torch's own ops reach here too; omnitensor's do not
                cls.seen.append((func.__name__, sorted(t.__name__ for t in types)))
            with m.C.DisableTorchFunctionSubclass():
                ret = func(*args, **(kwargs or {}))
            return ret.as_subclass(cls) if isinstance(ret, m.Tensor) else ret

    class Deferring(m.Tensor):  # defers to Tensor's default through super()
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)

    class Picky(Logged):  # declines, so the next type in line is asked
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is pair:
                cls.seen.append(("picky", func.__name__))
                return NotImplemented
            return super().__torch_function__(func, types, args, kwargs)

    class Plain(m.Tensor):  # inherits Tensor's default __torch_function__
        pass

    class Opted(m.Tensor):
        __torch_function__ = m.C._disabled_torch_function_impl

    class Like:  # not a Tensor at all
        def __init__(self, v):
            self.v = v

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is scale:
                return ("like", args[0].v * (kwargs or {}).get("factor", 2.0))
            return NotImplemented

    class OldStyle:  # __torch_function__ as a plain method: torch's deprecation warning
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return "old"

    t = m.tensor([1.0, 2.0])
    lg = t.as_subclass(Logged)
    out = {}
    r = scale(lg, factor=3.0)
    out["logged"] = (type(r).__name__, r.tolist(), list(Logged.seen))
    Logged.seen.clear()
    r = pair(t.as_subclass(Picky), lg)  # Picky (the subclass) first, then Logged
    out["picky"] = (type(r).__name__, r.tolist(), list(Logged.seen))
    Logged.seen.clear()
    r = scale(t.as_subclass(Deferring), 4.0)
    out["deferring"] = (type(r).__name__, r.tolist())
    with pytest.raises(TypeError) as e:  # Tensor's default declines a foreign type
        pair(t.as_subclass(Deferring), t.as_subclass(Plain))
    out["deferring_foreign"] = str(e.value).count("Deferring")
    out["plain"] = (ov.has_torch_function((t.as_subclass(Plain),)),
                    type(scale(t.as_subclass(Plain))).__name__)
    out["exact"] = (ov.has_torch_function((t, 1, None, "s")), type(scale(t)).__name__,
                    ov.has_torch_function_unary(m.Parameter(t)))
    out["opted"] = ov.has_torch_function((t.as_subclass(Opted),))
    out["like"] = (ov.has_torch_function_unary(Like(4.0)), scale(Like(4.0), factor=0.5))
    with pytest.warns(DeprecationWarning, match="plain method is deprecated"):
        out["old_style"] = scale(OldStyle())
    with pytest.raises(TypeError) as e:
        pair(Like(1.0), t)
    out["typeerror"] = str(e.value).split(" on types")[0].split("'")[1].rsplit(".", 1)[1]
    out["types_listed"] = [w.strip(" []'>").rsplit(".", 1)[-1]
                           for w in str(e.value).split(":", 1)[1].split(",")]
    out["tensor_like"] = [ov.is_tensor_like(v) for v in
                          (t, lg, Like(1.0), 6, None, object(), m.Parameter(t))]
    out["method"] = (ov.is_tensor_method_or_property(m.Tensor.add),
                     ov.is_tensor_method_or_property(scale))
    with m.C.DisableTorchFunction():
        out["disabled"] = (ov.has_torch_function((lg,)), m.C._is_torch_function_enabled(),
                           m.C._has_torch_function((Like(1.0),)),
                           type(scale(lg)).__name__)
    with m.C.DisableTorchFunctionSubclass():
        out["disabled_subclass"] = m.C._has_torch_function_unary(lg)
    out["enabled_again"] = (m.C._is_torch_function_enabled(), m.C._has_torch_function((lg,)),
                            m.C._has_torch_function_variadic(t, lg))
    return out


def test_torch_style_code_answers_as_on_torch():
    real, ours = _faces()
    want, got = _scenario(real), _scenario(ours)
    assert got == want
    assert want["picky"][2][0] == ("picky", "pair")  # the scenario exercises fallthrough


def test_disable_is_per_thread():
    ov, C = omnitensor.overrides, omnitensor._C

    class Sub(omnitensor.Tensor):
        pass

    x = omnitensor.tensor([1.0]).as_subclass(Sub)
    seen = []
    with C.DisableTorchFunction():
        th = threading.Thread(target=lambda: seen.append(ov.has_torch_function((x,))))
        th.start()
        th.join()
        assert not ov.has_torch_function((x,))
    assert seen == [True] and ov.has_torch_function((x,))


def test_torch_face_exposes_overrides():
    import omnitensor.torch_face as face
    assert face.overrides is omnitensor.overrides
    assert omnitensor.nn.functional.has_torch_function is omnitensor.overrides.has_torch_function
