"""torch.distributed's stores (HashStore, PrefixStore, FileStore, TCPStore) against
torch's own: the same script of operations on each, compared result by result (values,
counters, compare_set's rules, queues, timeouts and their error types), and FileStore and
TCPStore shared by two real processes."""
from __future__ import annotations

import datetime
import os
import subprocess
import sys
import textwrap

import pytest

import omnitensor.distributed as odist

tdist = pytest.importorskip("torch.distributed")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHORT = datetime.timedelta(seconds=0.2)


def _script(s, dist) -> list:
    """Run torch's Store API on ``s``; each step's result, or its error's class name."""
    out: list = []

    def step(fn):
        try:
            out.append(fn())
        except Exception as e:  # noqa: BLE001 - the error type is the result compared
            out.append(("error", type(e).__name__))
    step(lambda: s.set("a", "x"))
    step(lambda: s.get("a"))
    step(lambda: s.set("b", b"\x00\xffbin"))
    step(lambda: s.get("b"))
    step(lambda: s.add("c", 3))
    step(lambda: s.add("c", -5))
    step(lambda: s.get("c"))
    step(lambda: s.compare_set("a", "x", "y"))
    step(lambda: s.compare_set("a", "q", "z"))
    step(lambda: s.compare_set("new", "", "v"))
    step(lambda: s.compare_set("new2", "zz", "v"))
    step(lambda: s.check(["a", "b"]))
    step(lambda: s.check(["a", "nope"]))
    step(lambda: s.delete_key("a"))
    step(lambda: s.delete_key("a"))
    step(lambda: s.append("ap", "12"))
    step(lambda: s.append("ap", b"34"))
    step(lambda: s.get("ap"))
    step(lambda: s.multi_set(["m1", "m2"], ["v1", b"v2"]))
    step(lambda: s.multi_get(["m1", "m2"]))
    step(lambda: s.set("", "empty key"))
    step(lambda: s.get(""))
    step(lambda: s.set("ev", ""))
    step(lambda: s.get("ev"))
    step(lambda: s.queue_push("q", "1"))
    step(lambda: s.queue_push("q", b"2"))
    step(lambda: s.queue_len("q"))
    step(lambda: s.queue_pop("q"))
    step(lambda: s.queue_pop("q", block=False))
    step(lambda: s.queue_pop("q", block=False))
    step(lambda: s.queue_len("q"))
    step(lambda: s.has_extended_api())
    step(lambda: sorted(s.list_keys()))
    step(lambda: s.num_keys())
    step(lambda: s.set_timeout(SHORT))
    step(lambda: s.timeout)
    step(lambda: s.get("missing"))
    step(lambda: s.wait(["missing"]))
    step(lambda: s.wait(["b", "c"]))
    step(lambda: s.wait(["missing"], datetime.timedelta(seconds=0.1)))
    step(lambda: s.queue_pop("q"))
    return out


def _stores(dist, tmp, tag):
    yield "hash", dist.HashStore()
    base = dist.HashStore()
    base.set("outside", "1")
    yield "prefix", dist.PrefixStore("pre", base)
    yield "file", dist.FileStore(str(tmp / f"{tag}.store"), 1)
    yield "tcp", dist.TCPStore("127.0.0.1", 0, 1, True, datetime.timedelta(seconds=10))


def test_stores_follow_torchs(tmp_path) -> None:
    """Every store kind answers as torch's HashStore (PrefixStore as torch's PrefixStore).
    torch's own FileStore and TCPStore differ from its HashStore only where they leak
    internals (a refcount key counted by num_keys/list_keys, deleted keys that stay
    "deleted" True, RuntimeError timeouts, no queues on FileStore): not copied here."""
    ours = dict(_stores(odist, tmp_path, "ours"))
    theirs = dict(_stores(tdist, tmp_path, "torch"))
    for kind in ours:
        ref = theirs[kind] if kind in ("hash", "prefix") else tdist.HashStore()
        got, want = _script(ours[kind], odist), _script(ref, tdist)
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, f"{kind} store, step {i}: omnitensor {g!r}, torch {w!r}"
        assert len(got) == len(want)


def test_prefix_store_writes_through(tmp_path) -> None:
    for dist in (odist, tdist):
        base = dist.HashStore()
        p = dist.PrefixStore("run1", base)
        p.set("k", "v")
        assert base.get("run1/k") == b"v" and p.underlying_store is base
        assert sorted(base.list_keys()) == ["run1/k"]


def test_store_errors_are_torchs_classes() -> None:
    assert issubclass(odist.DistStoreError, odist.DistError)
    assert issubclass(odist.QueueEmptyError, odist.DistError)
    assert issubclass(odist.DistNetworkError, odist.DistError)
    assert issubclass(odist.DistBackendError, odist.DistError)
    assert issubclass(odist.DistError, RuntimeError)
    # omnitensor's own distributed errors are DistErrors, as torch's are
    assert issubclass(odist.DistributedError, odist.DistError)
    assert issubclass(odist.DistributedTimeoutError, odist.DistBackendError)
    with pytest.raises(TypeError, match="str or bytes"):
        odist.HashStore().set("k", 3)
    with pytest.raises(ValueError, match="2 keys but 1 values"):
        odist.HashStore().multi_set(["a", "b"], ["x"])
    with pytest.raises(odist.DistNetworkError, match="cannot reach"):
        odist.TCPStore("127.0.0.1", 1, timeout=SHORT)  # nobody listens on port 1


_PEER = """
import datetime, sys
import omnitensor.distributed as dist
kind, where = sys.argv[1], sys.argv[2]
if kind == "file":
    s = dist.FileStore(where, 2)
else:
    s = dist.TCPStore("127.0.0.1", int(where), 2, False, datetime.timedelta(seconds=30))
s.set("from_peer", "hello")
print(s.get("from_main").decode(), s.add("counter", 10), s.queue_pop("jobs").decode())
"""


@pytest.mark.parametrize("kind", ["file", "tcp"])
def test_two_processes_share_a_store(kind, tmp_path) -> None:
    if kind == "file":
        where = str(tmp_path / "shared.store")
        s = odist.FileStore(where, 2)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if kind == "tcp":
        # the master's constructor waits for world_size=2 stores: start the peer first
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        where = str(port)
    peer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_PEER), kind, where],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if kind == "tcp":
        s = odist.TCPStore("127.0.0.1", port, 2, True, datetime.timedelta(seconds=30))
    s.add("counter", 1)
    s.queue_push("jobs", "job1")
    s.set("from_main", "hi")
    assert s.get("from_peer") == b"hello"
    out, err = peer.communicate(timeout=60)
    assert peer.returncode == 0, err
    assert out.split() == ["hi", "11", "job1"]
    assert s.get("counter") == b"11"
