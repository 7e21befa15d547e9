"""``SummaryWriter``: torch.utils.tensorboard's writer over tensorboard's ``EventFileWriter``."""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any

from . import summaries


class SummaryWriter:
    """Writes TensorBoard event files under ``log_dir`` (default
    ``runs/<date>_<host><comment>``, as torch). ``add_*`` calls queue events; ``flush``
    writes them, ``close`` ends the file; a ``with`` block closes it."""

    def __init__(self, log_dir: str | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        try:
            from tensorboard.summary.writer.event_file_writer import EventFileWriter
        except ImportError as e:
            raise ImportError("SummaryWriter needs the tensorboard package: "
                              "pip install tensorboard") from e
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self._args = dict(max_queue=max_queue, flush_secs=flush_secs,
                          filename_suffix=filename_suffix)
        self._writer_cls = EventFileWriter
        self._writer = EventFileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)
        self._children: dict[str, Any] = {}
        self._closed = False
        if purge_step is not None:  # torch: a restarted run hides events from purge_step on
            self._emit(self._writer, None, purge_step, None, file_version=True)

    # ------------------------------------------------------------------ plumbing
    def get_logdir(self) -> str:
        return self.log_dir

    def _emit(self, writer: Any, summary: Any, step: Any, walltime: Any,
              file_version: bool = False) -> None:
        from tensorboard.compat.proto import event_pb2
        if self._closed:
            raise RuntimeError("SummaryWriter: add_* after close(); create a new writer")
        ev = event_pb2.Event(wall_time=time.time() if walltime is None else float(walltime))
        if step is not None:
            ev.step = int(summaries.to_numpy(step).reshape(()))
        if file_version:
            ev.file_version = "brain.Event:2"
            from tensorboard.compat.proto.event_pb2 import SessionLog
            ev.session_log.status = SessionLog.START
        else:
            ev.summary.CopyFrom(summary)
        writer.add_event(ev)

    def _child(self, path: str) -> Any:
        if path not in self._children:
            a = self._args
            self._children[path] = self._writer_cls(path, a["max_queue"], a["flush_secs"],
                                                    a["filename_suffix"])
        return self._children[path]

    # ------------------------------------------------------------------ summaries
    def add_scalar(self, tag: str, scalar_value: Any, global_step: Any = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One scalar (a number, or a one-element tensor on any device), stored as
        TensorBoard's ``simple_value`` (float32): ``new_style`` and ``double_precision``
        (torch's tensor-proto encodings) are accepted and ignored."""
        self._emit(self._writer, summaries.scalar(tag, scalar_value, double_precision),
                   global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: Any = None,
                    walltime: float | None = None) -> None:
        """Several scalars on one chart: each goes to the run ``log_dir/main_tag_tag``
        under the tag ``main_tag`` (torch's layout)."""
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{tag}")
            self._emit(self._child(path), summaries.scalar(main_tag, value), global_step,
                       walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Any = None,
                      bins: Any = "tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        self._emit(self._writer, summaries.histogram(tag, values, bins, max_bins),
                   global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: Any = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        self._emit(self._writer, summaries.image(tag, img_tensor, dataformats), global_step,
                   walltime)

    def add_text(self, tag: str, text_string: str, global_step: Any = None,
                 walltime: float | None = None) -> None:
        self._emit(self._writer, summaries.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict,
                    hparam_domain_discrete: dict | None = None, run_name: str | None = None,
                    global_step: Any = None) -> None:
        """Hyper-parameters and final metrics of one run (HParams tab): written into a
        sub-run ``log_dir/run_name`` (default: the time), the metrics as its scalars."""
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("add_hparams: hparam_dict and metric_dict must be dicts")
        exp, start, end = summaries.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        path = os.path.join(self.log_dir, run_name or str(time.time()))
        w = self._child(path)
        for s in (exp, start, end):
            self._emit(w, s, None, None)
        for k, v in metric_dict.items():
            self._emit(w, summaries.scalar(k, v), global_step, None)

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """The graph of one call of ``model`` on ``input_to_model`` (a tensor or a tuple of
        them) for TensorBoard's Graphs tab: nodes are the torch ops the call ran, in their
        module scopes (``graph.py``). ``use_strict_trace`` is accepted (nothing is
        scripted)."""
        from tensorboard.compat.proto import event_pb2

        from .graph import graph_def
        gd = graph_def(model, input_to_model)
        if verbose:
            for n in gd.node:
                print(f"{n.name} = {n.op}({', '.join(n.input)})")
        if self._closed:
            raise RuntimeError("SummaryWriter: add_* after close(); create a new writer")
        self._writer.add_event(event_pb2.Event(wall_time=time.time(),
                                               graph_def=gd.SerializeToString()))

    # ------------------------------------------------------------------ lifetime
    def flush(self) -> None:
        for w in (self._writer, *self._children.values()):
            w.flush()

    def close(self) -> None:
        if self._closed:
            return
        for w in (self._writer, *self._children.values()):
            w.flush()
            w.close()
        self._closed = True

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
