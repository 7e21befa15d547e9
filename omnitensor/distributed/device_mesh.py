"""``torch.distributed.device_mesh``: ranks arranged as an n-D array; each dimension's
1-D slices are process groups (``mesh.get_group("dp")``), made with ``new_group`` when
the mesh is built (every rank builds the same mesh, as torch requires). Sub-meshes
(``mesh["tp"]``, ``mesh["dp", "tp"]``) reuse those groups: slicing communicates nothing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    """An n-D array ``mesh`` of global ranks for ``device_type`` devices, with optional
    ``mesh_dim_names``; ``get_group(dim)`` is the group of the ranks that differ from this
    one only along ``dim``."""

    def __init__(self, device_type: str, mesh: Any = None, *,
                 mesh_dim_names: tuple[str, ...] | None = None,
                 backend_override: Any = None, _groups: list | None = None) -> None:
        from .group import get_rank, new_group
        arr = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        if arr.ndim == 0 or arr.size == 0:
            raise ValueError("DeviceMesh: mesh must be a non-empty n-D array of ranks")
        if len(set(arr.ravel().tolist())) != arr.size:
            raise RuntimeError(f"DeviceMesh cannot have duplicate values, but found "
                               f"{arr.tolist()}")
        if mesh_dim_names is not None and len(mesh_dim_names) != arr.ndim:
            raise RuntimeError(f"mesh_dim_names should have same length as mesh dims! Found "
                               f"{len(mesh_dim_names)} instead of {arr.ndim}.")
        self.device_type = device_type
        self._arr = arr
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names else None
        self._rank = get_rank()
        where = np.argwhere(arr == self._rank)
        self._coord = tuple(int(c) for c in where[0]) if len(where) else None
        if _groups is not None:
            self._groups = _groups
            return
        self._groups = []
        for dim in range(arr.ndim):  # every rank creates every slice, in the same order
            mine = None
            moved = np.moveaxis(arr, dim, -1).reshape(-1, arr.shape[dim])
            for ranks in moved.tolist():
                g = new_group(ranks, backend=None if backend_override is None else
                              dict(backend_override).get(dim))
                if self._rank in ranks:
                    mine = g
            self._groups.append(mine)

    # ----------------------------------------------------------------- queries
    @property
    def mesh(self) -> Any:
        from ..core.ops.creation import tensor
        return tensor(self._arr, device="cpu")

    @property
    def ndim(self) -> int:
        return int(self._arr.ndim)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self._arr.shape)

    def _dim(self, mesh_dim: int | str | None) -> int:
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions. "
                                   f"Optional kwarg `mesh_dim` needs to be specified when "
                                   f"device_mesh.ndim > 1.")
            return 0
        if isinstance(mesh_dim, str):
            if not self.mesh_dim_names or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available "
                               f"mesh dimensions are: mesh_dim_names={self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        return int(mesh_dim)

    def get_group(self, mesh_dim: int | str | None = None) -> Any:
        """The process group along ``mesh_dim`` through this rank."""
        return self._groups[self._dim(mesh_dim)]

    def get_all_groups(self) -> list:
        return [self._groups[d] for d in range(self.ndim)]

    def size(self, mesh_dim: int | None = None) -> int:
        return int(self._arr.size if mesh_dim is None else self._arr.shape[mesh_dim])

    def get_rank(self) -> int:
        return self._rank

    def get_local_rank(self, mesh_dim: int | str | None = None) -> int:
        """This rank's index along ``mesh_dim``."""
        if self._coord is None:
            raise RuntimeError("get_local_rank: this rank is not in the mesh")
        return self._coord[self._dim(mesh_dim)]

    def get_coordinate(self) -> tuple[int, ...] | None:
        """This rank's index in the mesh (None when it is not in it)."""
        return self._coord

    def __getitem__(self, mesh_dim_names: str | tuple[str, ...]) -> "DeviceMesh":
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else \
            tuple(mesh_dim_names)
        dims = [self._dim(n) for n in names]
        if self._coord is None:
            raise RuntimeError("DeviceMesh slicing: this rank is not in the mesh")
        index = tuple(slice(None) if d in dims else c for d, c in enumerate(self._coord))
        sub = np.transpose(self._arr[index], np.argsort(np.argsort(dims))) \
            if len(dims) > 1 else self._arr[index]
        return DeviceMesh(self.device_type, sub, mesh_dim_names=names,
                          _groups=[self._groups[d] for d in dims])

    def __repr__(self) -> str:
        names = f", mesh_dim_names={self.mesh_dim_names}" if self.mesh_dim_names else ""
        return f"DeviceMesh('{self.device_type}', {self._arr.tolist()}{names})"


def init_device_mesh(device_type: str, mesh_shape: tuple[int, ...], *,
                     mesh_dim_names: tuple[str, ...] | None = None,
                     backend_override: Any = None) -> DeviceMesh:
    """A mesh of every rank of the world, in order, with shape ``mesh_shape``."""
    from .group import get_world_size
    world = get_world_size()
    if int(np.prod(mesh_shape)) != world:
        raise RuntimeError(f"init_device_mesh: mesh_shape {tuple(mesh_shape)} holds "
                           f"{int(np.prod(mesh_shape))} ranks, the world has {world}")
    if mesh_dim_names is not None and len(set(mesh_dim_names)) != len(mesh_dim_names):
        raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated "
                           f"mesh_dim_name in mesh_dim_names {mesh_dim_names}")
    return DeviceMesh(device_type, np.arange(world).reshape(mesh_shape),
                      mesh_dim_names=mesh_dim_names, backend_override=backend_override)
