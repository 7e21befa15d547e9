"""The small torch surface real scripts touch: Tensor.type, legacy tensor types, device
predicates, range/bool-list indexing, Size, set_printoptions, DataParallel, flags."""
import numpy as np
import pytest

import omnitensor as ot


def test_tensor_type_names_and_conversions(device):
    x = ot.tensor([1.5, 2.5], device=device)
    prefix = "torch." if device == "cpu" else f"torch.{ot.device(device).type}."
    assert x.type() == prefix + "FloatTensor"
    assert ot.arange(3, device=device).type() == prefix + "LongTensor"
    y = x.type(ot.int64)
    assert y.dtype is ot.int64 and y.device == x.device
    z = x.type("torch.DoubleTensor" if device == "cpu" else prefix + "DoubleTensor")
    assert z.dtype is ot.float64 and z.device == x.device
    assert x.type(ot.float32) is x
    if device == "cpu":
        assert x.type(ot.LongTensor).dtype is ot.int64
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.NotATensor")


def test_device_predicates(device):
    x = ot.ones(2, device=device)
    kind = ot.device(device).type
    assert x.is_cpu == (kind == "cpu") and x.is_cuda == (kind == "cuda")
    assert x.is_opencl == (kind == "opencl") and x.is_sycl == (kind == "sycl")
    assert not (x.is_mps or x.is_xpu or x.is_sparse or x.is_quantized or x.is_meta)
    assert x.get_device() == (-1 if kind == "cpu" else ot.device(device).index)
    assert repr(x.layout) == "omnitensor.strided"


def test_data_ptr_identifies_shared_memory(device):
    x = ot.zeros(8, device=device)
    assert isinstance(x.data_ptr(), int)
    assert x.view(2, 4).data_ptr() == x.data_ptr()
    assert ot.zeros(8, device=device).data_ptr() != x.data_ptr()


def test_legacy_tensor_types():
    a = ot.LongTensor([1, 2, 3])
    assert a.dtype is ot.int64 and a.tolist() == [1, 2, 3]
    b = ot.FloatTensor(2, 3)
    assert b.shape == (2, 3) and b.dtype is ot.float32
    assert ot.FloatTensor(ot.Size([4])).shape == (4,)
    assert ot.BoolTensor([True, False]).dtype is ot.bool
    assert ot.ByteTensor([1]).dtype is ot.uint8 and ot.IntTensor([1]).dtype is ot.int32
    assert ot.DoubleTensor([1.0]).dtype is ot.float64
    assert isinstance(b, ot.FloatTensor) and not isinstance(b, ot.LongTensor)
    assert isinstance(a, ot.LongTensor) and not isinstance(1, ot.LongTensor)
    with pytest.raises(TypeError, match="sizes"):
        ot.FloatTensor(2, "x")


def test_range_and_bool_list_index(device):
    torch = pytest.importorskip("torch")
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    x, t = ot.tensor(base, device=device), torch.tensor(base)
    for key in [range(1, 3), (slice(None), range(0, 6, 2)), [True, False, True, False],
                (range(2), range(3, 5))]:
        np.testing.assert_array_equal(x[key].cpu().numpy(), t[key].numpy())
    y = x.clone()
    y[range(2)] = 0.0
    tt = t.clone()
    tt[range(2)] = 0.0
    np.testing.assert_array_equal(y.cpu().numpy(), tt.numpy())


def test_size_is_a_tuple_with_numel():
    x = ot.ones(2, 3, 4)
    s = x.size()
    assert isinstance(s, ot.Size) and isinstance(s, tuple) and s == (2, 3, 4)
    assert s.numel() == 24 and s[1:].numel() == 12 and isinstance(s[1:], ot.Size)
    assert x.size(1) == 3 and ot.numel(x) == 24 and x.numel() == 24
    assert repr(s) == "omnitensor.Size([2, 3, 4])"


def test_set_printoptions():
    x = ot.tensor([1.123456, 2.5])
    try:
        ot.set_printoptions(precision=2)
        assert repr(x) == "tensor([1.12, 2.50])"
        ot.set_printoptions(sci_mode=True)
        assert "e+00" in repr(x)
        ot.set_printoptions(threshold=5, edgeitems=1)
        assert "..." in repr(ot.arange(10))
    finally:
        ot.set_printoptions(profile="default")
    assert repr(x) == "tensor([1.1235, 2.5000])"
    with pytest.raises(ValueError, match="unknown profile"):
        ot.set_printoptions(profile="huge")


def test_top_level_switches():
    ot.set_float32_matmul_precision("high")
    assert ot.get_float32_matmul_precision() == "high"
    ot.set_float32_matmul_precision("highest")
    with pytest.raises(ValueError):
        ot.set_float32_matmul_precision("low")
    ot.use_deterministic_algorithms(True)
    assert ot.are_deterministic_algorithms_enabled()
    ot.use_deterministic_algorithms(False)
    assert ot.is_tensor(ot.ones(1)) and not ot.is_tensor([1])
    assert ot.typename(ot.ones(1)) == "torch.FloatTensor"
    assert ot.from_numpy(np.ones(2)).dtype is ot.float64
    assert ot.as_tensor([1, 2]).dtype is ot.int64
    assert isinstance(ot.float32, ot.dtype)
    assert ot.ones(2, 2).to(memory_format=ot.channels_last).shape == (2, 2)


def test_no_grad_as_decorator():
    @ot.no_grad()
    def f(x):
        return x * 2

    x = ot.ones(2, requires_grad=True)
    assert not f(x).requires_grad and (x * 2).requires_grad


def test_new_methods(device):
    x = ot.ones(2, dtype=ot.float64, device=device)
    for y in (x.new_zeros(3), x.new_ones((3,)), x.new_full((3,), 7.0), x.new_empty(3),
              x.new_tensor([1.0, 2.0, 3.0])):
        assert y.shape == (3,) and y.dtype is ot.float64 and y.device == x.device


def test_data_parallel_is_a_transparent_wrapper(device):
    torch = pytest.importorskip("torch")
    model = ot.nn.Linear(3, 2).to(device)
    dp = ot.nn.DataParallel(model)
    x = ot.randn(4, 3, device=device)
    assert dp.module is model
    assert ot.allclose(dp(x), model(x))
    assert ot.allclose(ot.nn.parallel.data_parallel(model, x), model(x))
    tdp = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(dp.state_dict()) == list(tdp.state_dict())  # 'module.weight', 'module.bias'
    with pytest.raises(NotImplementedError, match="DistributedDataParallel"):
        ot.nn.DataParallel(model, device_ids=[0, 1])


def test_flatten_parameters_only_on_recurrent_layers():
    torch = pytest.importorskip("torch")
    assert hasattr(torch.nn.LSTM(2, 2), "flatten_parameters") == \
        hasattr(ot.nn.LSTM(2, 2), "flatten_parameters")
    assert hasattr(torch.nn.Linear(2, 2), "flatten_parameters") == \
        hasattr(ot.nn.Linear(2, 2), "flatten_parameters")


def test_variable_is_the_tensor():
    x = ot.ones(2)
    v = ot.autograd.Variable(x, requires_grad=True)
    assert v.requires_grad and isinstance(v, ot.autograd.Variable)
    assert ot.autograd.Variable(x) is x
    with pytest.raises(TypeError, match="has to be a tensor"):
        ot.autograd.Variable([1.0])
