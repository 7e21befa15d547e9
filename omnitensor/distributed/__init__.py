"""``omnitensor.distributed``: torch.distributed's API over MPI (every device) and NCCL (cuda).

Start ranks with ``omnitensor-run -n 4 train.py`` (a wrapper of ``mpiexec``), then::

    import omnitensor.distributed as dist
    dist.init_process_group()          # mpi for cpu/opencl/sycl tensors, nccl for cuda
    dist.all_reduce(t)                 # in place, like torch
    model = omnitensor.nn.parallel.DistributedDataParallel(model)

Importing this package imports neither mpi4py (which would initialise MPI) nor CuPy: the
transports load in ``init_process_group`` and on first use. See ``collectives.py`` for
the semantics, ``mpi_backend.py``/``nccl_backend.py`` for the transports, ``ddp.py`` for
DistributedDataParallel and ``run.py`` for the launcher.
"""
from __future__ import annotations

from typing import Any

from .collectives import (all_gather, all_gather_into_tensor, all_reduce, all_to_all,
                          all_to_all_single, barrier, broadcast, gather, get_global_rank,
                          get_group_rank, get_process_group_ranks, irecv, isend, recv,
                          reduce, reduce_scatter, reduce_scatter_tensor, scatter, send)
from .c10d_info import (BackendConfig, DebugLevel, GroupName, breakpoint, get_debug_level,
                        get_default_backend_for_device, get_node_local_rank,
                        is_backend_available, is_gloo_available, is_mpi_available,
                        is_nccl_available, is_torchelastic_launched, is_ucc_available,
                        is_xccl_available, reduce_op, set_debug_level,
                        set_debug_level_from_env, supports_complex)
from .comm_hooks import BuiltinCommHookType, GradBucket
from .coalesced import (all_gather_coalesced, all_gather_single, all_reduce_coalesced,
                        monitored_barrier, reduce_scatter_single)
from .device_mesh import DeviceMesh, init_device_mesh
from .group import (GroupMember, ProcessGroup, destroy_process_group, get_backend,
                    get_default_group, get_local_rank, get_rank, get_world_size,
                    init_process_group, is_available, is_initialized, new_group)
from .objects import (all_gather_object, broadcast_object_list, gather_object,
                      scatter_object_list)
from .pg_methods import (AllreduceCoalescedOptions, AllreduceOptions, AllToAllOptions,
                         BarrierOptions, BroadcastOptions, GatherOptions, ReduceOptions,
                         ReduceScatterOptions, ScatterOptions)
from .p2p import P2POp, batch_isend_irecv, recv_object_list, send_object_list
from .registry import Backend, register_backend
from .rendezvous import register_rendezvous_handler, rendezvous
from .store import HashStore, PrefixStore, Store
from .store_shared import FileStore, TCPStore
from .subgroups import (get_backend_config, get_pg_count, new_subgroups,
                        new_subgroups_by_enumeration, shrink_group, split_group)
from .types import (CollectiveMismatchError, DistBackendError, DistError, DistNetworkError,
                    DistributedError, DistributedTimeoutError, DistStoreError,
                    QueueEmptyError, ReduceOp, Work)

__all__ = [
    "init_process_group", "is_initialized", "is_available", "get_rank", "get_world_size",
    "get_local_rank", "get_backend", "destroy_process_group", "new_group", "barrier",
    "ProcessGroup", "GroupMember", "get_default_group", "Backend", "register_backend",
    "ReduceOp", "Work", "DistributedError", "DistributedTimeoutError",
    "CollectiveMismatchError",
    "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
    "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
    "all_to_all_single", "send", "recv", "isend", "irecv",
    "broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list",
    "get_process_group_ranks", "get_global_rank", "get_group_rank",
    "DistributedDataParallel",
    "Store", "HashStore", "PrefixStore", "FileStore", "TCPStore", "DistError",
    "DistBackendError", "DistNetworkError", "DistStoreError", "QueueEmptyError",
    "DebugLevel", "GroupName", "get_debug_level", "set_debug_level",
    "set_debug_level_from_env", "is_mpi_available", "is_gloo_available",
    "is_nccl_available", "is_ucc_available", "is_xccl_available", "is_backend_available",
    "is_torchelastic_launched", "get_default_backend_for_device", "get_node_local_rank",
    "supports_complex", "reduce_op", "BackendConfig", "breakpoint",
    "AllreduceOptions", "AllreduceCoalescedOptions", "BroadcastOptions", "ReduceOptions",
    "GatherOptions", "ScatterOptions", "ReduceScatterOptions", "AllToAllOptions",
    "BarrierOptions",
    "all_reduce_coalesced", "all_gather_coalesced", "all_gather_single",
    "reduce_scatter_single", "monitored_barrier",
    "P2POp", "batch_isend_irecv", "send_object_list", "recv_object_list",
    "new_subgroups", "new_subgroups_by_enumeration", "split_group", "shrink_group",
    "get_pg_count", "get_backend_config", "rendezvous", "register_rendezvous_handler",
    "DeviceMesh", "init_device_mesh", "GradBucket", "BuiltinCommHookType",
]


def __getattr__(name: str) -> Any:
    # DDP imports autograd/nn pieces: load it only when asked for
    if name == "DistributedDataParallel":
        from .ddp import DistributedDataParallel
        return DistributedDataParallel
    raise AttributeError(f"module 'omnitensor.distributed' has no attribute {name!r}")
