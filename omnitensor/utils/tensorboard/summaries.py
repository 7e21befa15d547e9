"""Summary protocol buffers for scalars, histograms, images, text and hyper-parameters,
built with the ``tensorboard`` package's own protos (the format its plugins read)."""
from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np


def _protos() -> Any:
    try:
        from tensorboard.compat.proto import summary_pb2
    except ImportError as e:  # pragma: no cover - exercised without tensorboard installed
        raise ImportError("omnitensor.utils.tensorboard needs the tensorboard package: "
                          "pip install tensorboard") from e
    return summary_pb2


def to_numpy(value: Any) -> np.ndarray:
    """A host array of ``value`` (an omnitensor tensor on any device, array, or number)."""
    from ...core.tensor import Tensor
    if isinstance(value, Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def scalar(tag: str, value: Any, double_precision: bool = False) -> Any:
    arr = to_numpy(value)
    if arr.size != 1:
        raise ValueError(f"add_scalar({tag!r}): expected one value, got shape {arr.shape}")
    pb = _protos()
    v = float(arr.reshape(()))
    return pb.Summary(value=[pb.Summary.Value(tag=tag, simple_value=v)])


def _bucket_limits(values: np.ndarray, bins: Any, max_bins: int | None) -> tuple:
    if isinstance(bins, str) and bins == "tensorflow":
        # TensorFlow's exponential buckets: +-1e-12 * 1.1**k up to 1e20, and 0
        pos = [1e-12]
        while pos[-1] < 1e20:
            pos.append(pos[-1] * 1.1)
        edges = np.array([-x for x in reversed(pos)] + [0.0] + pos)
        counts, edges = np.histogram(values, bins=edges)
    else:
        counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        factor = -(-len(counts) // max_bins)
        pad = (-len(counts)) % factor
        counts = np.pad(counts, (0, pad)).reshape(-1, factor).sum(1)
        edges = np.concatenate([edges[:-1:factor], edges[-1:]])
    # TensorBoard stores the right edge of each bucket; keep the non-empty span only
    nz = np.nonzero(counts)[0]
    if nz.size:
        lo, hi = nz[0], nz[-1] + 1
        counts, edges = counts[lo:hi], edges[lo:hi + 1]
    return counts, edges


def histogram(tag: str, values: Any, bins: Any = "tensorflow",
              max_bins: int | None = None) -> Any:
    arr = to_numpy(values).astype(np.float64).reshape(-1)
    if arr.size == 0:
        raise ValueError(f"add_histogram({tag!r}): the values are empty")
    if not np.isfinite(arr).all():
        raise ValueError(f"add_histogram({tag!r}): the values contain NaN or infinity")
    counts, edges = _bucket_limits(arr, bins, max_bins)
    pb = _protos()
    hist = pb.HistogramProto(min=float(arr.min()), max=float(arr.max()), num=float(arr.size),
                             sum=float(arr.sum()), sum_squares=float((arr * arr).sum()),
                             bucket_limit=[float(e) for e in edges[1:]],
                             bucket=[float(c) for c in counts])
    return pb.Summary(value=[pb.Summary.Value(tag=tag, histo=hist)])


def _png(hwc: np.ndarray) -> bytes:
    """A PNG file of an HxWxC uint8 image (C = 1, 3 or 4), zlib-compressed scanlines."""
    h, w, c = hwc.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    raw = b"".join(b"\x00" + hwc[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def image(tag: str, img: Any, dataformats: str = "CHW") -> Any:
    """torch's convention: float images in [0, 1] are scaled by 255, uint8 kept as is."""
    arr = to_numpy(img)
    fmt = dataformats.upper()
    if sorted(fmt) not in (sorted("CHW"), sorted("HW"), sorted("HWC")) or len(fmt) != arr.ndim:
        raise ValueError(f"add_image({tag!r}): dataformats {dataformats!r} does not describe "
                         f"an image of shape {arr.shape} (use 'CHW', 'HWC' or 'HW')")
    if fmt == "HW":
        arr, fmt = arr[..., None], "HWC"
    arr = np.transpose(arr, [fmt.index(k) for k in "HWC"])
    if arr.shape[2] not in (1, 3, 4):
        raise ValueError(f"add_image({tag!r}): an image has 1, 3 or 4 channels, got "
                         f"{arr.shape[2]}")
    if arr.dtype != np.uint8:
        arr = np.clip(np.asarray(arr, np.float64) * 255.0, 0, 255).round().astype(np.uint8)
    pb = _protos()
    h, w, c = arr.shape
    im = pb.Summary.Image(height=h, width=w, colorspace=c,
                          encoded_image_string=_png(np.ascontiguousarray(arr)))
    return pb.Summary(value=[pb.Summary.Value(tag=tag, image=im)])


def text(tag: str, text_string: str) -> Any:
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    pb = _protos()
    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    tensor = TensorProto(dtype="DT_STRING", string_val=[str(text_string).encode("utf-8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return pb.Summary(value=[pb.Summary.Value(tag=tag + "/text_summary", metadata=meta,
                                              tensor=tensor)])


def hparams(hparam_dict: dict, metric_dict: dict,
            hparam_domain_discrete: dict | None = None) -> tuple[Any, Any, Any]:
    """The experiment, session-start and session-end summaries the HParams plugin reads."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2
    pb = _protos()
    domains = hparam_domain_discrete or {}
    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            v = str(v) if not isinstance(v, bool) else v
        if isinstance(v, bool):
            start.hparams[k].bool_value = v
            dtype = api_pb2.DataType.DATA_TYPE_BOOL
        elif isinstance(v, (int, float)):
            start.hparams[k].number_value = float(v)
            dtype = api_pb2.DataType.DATA_TYPE_FLOAT64
        else:
            start.hparams[k].string_value = v
            dtype = api_pb2.DataType.DATA_TYPE_STRING
        info = api_pb2.HParamInfo(name=k, type=dtype)
        if k in domains:
            info.domain_discrete.extend(struct_pb2.Value(
                **({"number_value": float(x)} if isinstance(x, (int, float)) and
                   not isinstance(x, bool) else {"bool_value": x} if isinstance(x, bool)
                   else {"string_value": str(x)})) for x in domains[k])
        infos.append(info)
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict]
    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)

    def wrap(tag: str, **data: Any) -> Any:
        content = plugin_data_pb2.HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION,
                                                    **data).SerializeToString()
        meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
            plugin_name=metadata.PLUGIN_NAME, content=content))
        return pb.Summary(value=[pb.Summary.Value(tag=tag, metadata=meta)])
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))
    return (wrap(metadata.EXPERIMENT_TAG, experiment=experiment),
            wrap(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            wrap(metadata.SESSION_END_INFO_TAG, session_end_info=end))
