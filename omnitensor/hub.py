"""torch's ``torch.hub``: checkpoints by URL, models from ``hubconf.py`` repositories.

* :func:`load_state_dict_from_url` downloads a checkpoint once into
  ``<hub dir>/checkpoints`` and loads it with :func:`omnitensor.load`. URLs are read with
  ``urllib``: ``https://``, ``http://``, ``file://``, and plain local paths too. Unlike
  torch (whose default here is ``weights_only=False``), the default is
  ``weights_only=True``: a downloaded file is data and runs no code unless asked to.
* :func:`load`, :func:`list` and :func:`help` import a repository's ``hubconf.py`` and
  call its entry points. **That runs the repository's code**, as in torch: it is code you
  chose to run. ``source="local"`` takes a directory; ``source="github"`` takes
  ``owner/name[:ref]``, uses ``<hub dir>/owner_name_ref`` when it is cached, and otherwise
  downloads the repository's zip (asking first, as torch does, unless ``trust_repo``).
* :func:`get_dir` is ``$TORCH_HOME/hub`` (``TORCH_HOME`` defaults to
  ``$XDG_CACHE_HOME/torch``, that to ``~/.cache``), unless :func:`set_dir` chose another.
"""
from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib.util
import io
import os
import re
import shutil
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zipfile
from pathlib import Path
from typing import Any, Iterator

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_hub_dir: str | None = None


# ----------------------------------------------------------------- directories
def _get_torch_home() -> str:
    return os.path.expanduser(os.getenv(
        ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir() -> str:
    """The hub cache directory: :func:`set_dir`'s, else ``$TORCH_HOME/hub``."""
    return _hub_dir if _hub_dir is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Use ``d`` as the hub cache directory from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


# ----------------------------------------------------------------- downloads
def _as_url(url: str) -> str:
    """A URL for ``url``: a plain path to an existing file becomes a ``file://`` URL."""
    if not urllib.parse.urlparse(url).scheme and os.path.exists(url):
        return Path(url).resolve().as_uri()
    return url


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Copy what ``url`` names to ``dst`` (through a temporary ``.partial`` file, so a
    broken download never replaces a good file); with ``hash_prefix``, the file's SHA256
    must start with it."""
    dst = os.path.expanduser(dst)
    tmp = f"{dst}.{uuid.uuid4().hex}.partial"
    req = urllib.request.Request(_as_url(url), headers={"User-Agent": "omnitensor.hub"})
    sha256 = hashlib.sha256()
    try:
        with urllib.request.urlopen(req) as source, open(tmp, "wb") as out:
            total = source.headers.get("Content-Length") if hasattr(source, "headers") else None
            done = 0
            while True:
                chunk = source.read(READ_DATA_CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                sha256.update(chunk)
                done += len(chunk)
                if progress and total and sys.stderr.isatty():
                    sys.stderr.write(f"\r{done}/{total} bytes")
        if hash_prefix is not None and not sha256.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                               f'"{sha256.hexdigest()}")')
        shutil.move(tmp, dst)
    except urllib.error.URLError as e:
        raise RuntimeError(
            f"cannot download {url}: {e.reason}. Without network access, put the file in "
            f"{os.path.dirname(dst) or '.'} as {os.path.basename(dst)}, or pass a local path "
            f"or a file:// URL") from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _legacy_zip_member(path: str) -> bytes | None:
    """The one file of a zip that wraps a pre-1.6 checkpoint (torch's hub unpacks these),
    read in memory, never extracted; None when ``path`` is no such zip."""
    if not zipfile.is_zipfile(path):
        return None
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        if len(infos) != 1 or infos[0].is_dir() or infos[0].filename.endswith("data.pkl"):
            return None
        info = infos[0]
        if info.file_size > 1000 * max(info.compress_size, 1) + (1 << 20):
            raise RuntimeError(f"{path}: its member {info.filename!r} claims "
                               f"{info.file_size} bytes from {info.compress_size}: refused "
                               f"(a zip bomb)")
        return zf.read(info)


def load_state_dict_from_url(url: str, model_dir: str | None = None,
                             map_location: Any = None, progress: bool = True,
                             check_hash: bool = False, file_name: str | None = None,
                             weights_only: bool | None = None) -> Any:
    """The checkpoint at ``url``, downloaded once into ``model_dir`` (default
    ``<hub dir>/checkpoints``) and loaded with :func:`omnitensor.load` (``map_location``
    and ``weights_only`` as there; ``weights_only`` defaults to True). ``check_hash``: the
    file name must be ``name-<sha256 prefix>.ext`` and the download must match it."""
    from . import serialization
    model_dir = model_dir if model_dir is not None else os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        match = HASH_REGEX.search(filename) if check_hash else None
        if check_hash and match is None:
            raise RuntimeError(f"check_hash=True needs a file name of the form "
                               f"name-<sha256 prefix>.ext; {filename!r} has no hash")
        download_url_to_file(url, cached, match.group(1) if match else None, progress)
    wo = True if weights_only is None else weights_only
    inner = _legacy_zip_member(cached)
    source: Any = cached if inner is None else io.BytesIO(inner)
    return serialization.load(source, map_location=map_location, weights_only=wo)


# ----------------------------------------------------------------- repositories
@contextlib.contextmanager
def _on_sys_path(path: str) -> Iterator[None]:
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir: str) -> Any:
    """Import ``repo_dir/hubconf.py`` (this runs it: the repository's own code)."""
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{repo_dir} has no {MODULE_HUBCONF}")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    with _on_sys_path(repo_dir):
        spec.loader.exec_module(module)
    return module


def _entry(module: Any, model: str) -> Any:
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [d for d in getattr(module, VAR_DEPENDENCY, None) or []
               if importlib.util.find_spec(d) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(module, model, None) if model in dir(module) else None
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _parse_repo(github: str) -> tuple[str, str, str]:
    info, _, ref = github.partition(":")
    owner, slash, name = info.partition("/")
    if not slash or not owner or not name or "/" in name:
        raise ValueError(f"a GitHub repository is 'owner/name[:ref]', got {github!r}")
    if not ref:  # torch asks GitHub for main vs master; offline, the cache decides
        ref = next((r for r in ("main", "master")
                    if os.path.isdir(os.path.join(get_dir(), f"{owner}_{name}_{r}"))), "")
        if not ref:
            ref = _default_branch(owner, name)
    return owner, name, ref


def _default_branch(owner: str, name: str) -> str:
    try:
        with urllib.request.urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
            return "main"
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return "master"
        raise
    except urllib.error.URLError as e:
        raise RuntimeError(f"It looks like there is no internet connection and the repo "
                           f"{owner}/{name} could not be found in the cache "
                           f"({get_dir()})") from e


def _check_trusted(owner: str, name: str, cached_name: str, trust_repo: Any) -> None:
    """torch's trust check: a repository not trusted before is run only after a yes."""
    hub_dir = get_dir()
    listing = os.path.join(hub_dir, "trusted_list")
    trusted = set()
    if os.path.exists(listing):
        with open(listing) as f:
            trusted = {line.strip() for line in f}
    owner_name = f"{owner}_{name}"
    # a checkout already in the cache was trusted when it was fetched (torch's rule)
    is_trusted = (owner_name in trusted or owner in _TRUSTED_REPO_OWNERS
                  or os.path.isdir(os.path.join(hub_dir, cached_name)))
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        if not sys.stdin or not sys.stdin.isatty():
            raise RuntimeError(f"The repository {owner_name} is not in the list of trusted "
                               f"repositories ({listing}); pass trust_repo=True to run its "
                               f"hubconf.py if you trust it")
        answer = input(f"The repository {owner_name} does not belong to the list of trusted "
                       f"repositories and as such cannot be downloaded. Do you trust this "
                       f"repository and wish to add it to the trusted list of repositories "
                       f"(y/N)?")
        if answer.lower() not in ("y", "yes"):
            raise RuntimeError("Untrusted repository.")
    if not is_trusted:
        os.makedirs(hub_dir, exist_ok=True)
        with open(listing, "a") as f:
            f.write(owner_name + "\n")


def _safe_extract(zf: zipfile.ZipFile, target: str) -> None:
    root = Path(target).resolve()
    for member in zf.infolist():
        out = (root / member.filename).resolve()
        if not out.is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
    zf.extractall(root)


def _repo_dir(github: str, force_reload: bool, trust_repo: Any, verbose: bool) -> str:
    """The cached checkout of ``github``, downloaded first when absent."""
    owner, name, ref = _parse_repo(github)
    cached_name = f"{owner}_{name}_{ref.replace('/', '_')}"
    hub_dir = get_dir()
    repo_dir = os.path.join(hub_dir, cached_name)
    _check_trusted(owner, name, cached_name, trust_repo)
    if not force_reload and os.path.isdir(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    os.makedirs(hub_dir, exist_ok=True)
    archive = os.path.join(hub_dir, f"{ref.replace('/', '_')}.zip")
    download_url_to_file(f"https://github.com/{owner}/{name}/zipball/{ref}", archive,
                         progress=False)
    try:
        with zipfile.ZipFile(archive) as zf:
            top = zf.infolist()[0].filename.split("/")[0]
            _safe_extract(zf, hub_dir)
    finally:
        os.remove(archive)
    if os.path.isdir(repo_dir):
        shutil.rmtree(repo_dir)
    shutil.move(os.path.join(hub_dir, top), repo_dir)
    return repo_dir


def list(github: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo: Any = "check", verbose: bool = True) -> builtins.list[str]:
    """The entry points (public callables) of a repository's ``hubconf.py``."""
    module = _import_hubconf(_repo_dir(github, force_reload, trust_repo, verbose))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github: str, model: str, force_reload: bool = False,  # noqa: A001
         skip_validation: bool = False, trust_repo: Any = "check") -> str | None:
    """The docstring of entry point ``model``."""
    module = _import_hubconf(_repo_dir(github, force_reload, trust_repo, True))
    return _entry(module, model).__doc__


def load(repo_or_dir: str, model: str, *args: Any, source: str = "github",
         trust_repo: Any = "check", force_reload: bool = False, verbose: bool = True,
         skip_validation: bool = False, **kwargs: Any) -> Any:
    """``model(*args, **kwargs)`` from the ``hubconf.py`` of a GitHub repository
    (``source="github"``, ``owner/name[:ref]``) or a local directory (``source="local"``).
    Importing ``hubconf.py`` runs the repository's code."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    repo_dir = repo_or_dir if source == "local" else _repo_dir(repo_or_dir, force_reload,
                                                               trust_repo, verbose)
    module = _import_hubconf(repo_dir)
    with _on_sys_path(repo_dir):
        return _entry(module, model)(*args, **kwargs)
