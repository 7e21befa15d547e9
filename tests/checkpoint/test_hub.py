"""omnitensor.hub and omnitensor.utils.model_zoo, offline: local paths and file:// URLs,
the cache directory (TORCH_HOME / XDG_CACHE_HOME as torch), check_hash, map_location,
weights_only, hubconf.py repositories (local, and GitHub ones already in the cache), and
the clear error an http(s) URL gives without network."""
from __future__ import annotations

import hashlib
import os
import zipfile

import pytest

import omnitensor as ot
from omnitensor import hub
from omnitensor.serialization import WeightsOnlyError

torch = pytest.importorskip("torch")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    monkeypatch.setattr(hub, "_hub_dir", None)
    return tmp_path / "torch_home"


def _checkpoint(tmp_path, name="weights.pth"):
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    path = tmp_path / "src" / name
    path.parent.mkdir(exist_ok=True)
    torch.save(lin.state_dict(), path)
    return path, lin


def test_get_dir_follows_torch_home_xdg_and_set_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert hub.get_dir() == str(tmp_path / "th" / "hub")
    hub.set_dir(tmp_path / "mine")
    assert hub.get_dir() == str(tmp_path / "mine")


def test_load_state_dict_from_file_url_caches(tmp_path, home, device):
    src, lin = _checkpoint(tmp_path)
    sd = hub.load_state_dict_from_url(src.as_uri(), map_location=device)
    cached = home / "hub" / "checkpoints" / "weights.pth"
    assert cached.exists() and str(sd["weight"].device) == str(ot.device(device))
    assert sd["weight"].cpu().tolist() == lin.weight.tolist()
    src.unlink()  # the second call is served from the cache
    again = hub.load_state_dict_from_url(src.as_uri())
    assert again["bias"].tolist() == lin.bias.tolist()
    from omnitensor.utils import model_zoo
    assert model_zoo.load_url is hub.load_state_dict_from_url


def test_local_path_model_dir_and_file_name(tmp_path, home):
    src, lin = _checkpoint(tmp_path)
    sd = hub.load_state_dict_from_url(str(src), model_dir=str(tmp_path / "md"),
                                      file_name="renamed.pth")
    assert (tmp_path / "md" / "renamed.pth").exists()
    assert sd["weight"].tolist() == lin.weight.tolist()


def test_check_hash(tmp_path, home):
    src, _ = _checkpoint(tmp_path)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    good = src.with_name(f"weights-{digest[:10]}.pth")
    src.rename(good)
    assert "weight" in hub.load_state_dict_from_url(good.as_uri(), check_hash=True)
    bad = good.with_name("weights-0123456789.pth")
    good.rename(bad)
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(bad.as_uri(), check_hash=True)
    assert not (home / "hub" / "checkpoints" / bad.name).exists()  # no broken file left
    assert not [p for p in (home / "hub" / "checkpoints").iterdir() if "partial" in p.name]


def test_weights_only_is_the_default(tmp_path, home):
    torch.save(torch.nn.Linear(2, 2), tmp_path / "whole.pth")
    with pytest.raises(WeightsOnlyError):
        hub.load_state_dict_from_url((tmp_path / "whole.pth").as_uri())
    model = hub.load_state_dict_from_url((tmp_path / "whole.pth").as_uri(), weights_only=False)
    assert isinstance(model, ot.nn.Linear)


def test_a_zip_wrapping_an_old_checkpoint(tmp_path, home):
    torch.save({"w": torch.ones(2)}, tmp_path / "old.pth", _use_new_zipfile_serialization=False)
    with zipfile.ZipFile(tmp_path / "old.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(tmp_path / "old.pth", "old.pth")
    assert hub.load_state_dict_from_url((tmp_path / "old.zip").as_uri())["w"].tolist() == [1, 1]


def test_offline_http_url_says_what_to_do(tmp_path, home):
    with pytest.raises(RuntimeError, match="cannot download .*file:// URL"):
        hub.load_state_dict_from_url("http://127.0.0.1:9/resnet18-f37072fd.pth",
                                     progress=False)
    assert not list((home / "hub" / "checkpoints").iterdir())


HUBCONF = '''
"""A hub repository."""
import os
import omnitensor as ot
from omnitensor import hub

dependencies = ["numpy"]


def tiny(pretrained=False, scale=1.0):
    """A tiny linear model."""
    model = ot.nn.Linear(3, 2)
    if pretrained:
        here = os.path.dirname(__file__)
        model.load_state_dict(hub.load_state_dict_from_url(
            "file://" + os.path.join(here, "weights.pth")))
    with ot.no_grad():
        model.weight.mul_(scale)
    return model


def _helper():
    return 0


def needs_missing():
    return None
'''


def _repo(path, deps=None):
    path.mkdir(parents=True)
    text = HUBCONF if deps is None else HUBCONF.replace('["numpy"]', repr(deps))
    (path / "hubconf.py").write_text(text)
    return path


def test_hub_load_from_a_local_directory(tmp_path, home):
    repo = _repo(tmp_path / "repo")
    src, lin = _checkpoint(tmp_path)
    os.replace(src, repo / "weights.pth")
    model = hub.load(str(repo), "tiny", pretrained=True, scale=2.0, source="local")
    assert model.weight.tolist() == (lin.weight * 2).tolist()
    with pytest.raises(RuntimeError, match="Cannot find callable nope"):
        hub.load(str(repo), "nope", source="local")
    with pytest.raises(ValueError, match="Unknown source"):
        hub.load(str(repo), "tiny", source="ftp")
    missing = _repo(tmp_path / "repo2", deps=["no_such_package_26"])
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_26"):
        hub.load(str(missing), "tiny", source="local")


def test_list_and_help_of_a_cached_github_repository(tmp_path, home):
    _repo(home / "hub" / "someone_tinyrepo_main")
    assert hub.list("someone/tinyrepo:main") == ["needs_missing", "tiny"]
    assert hub.help("someone/tinyrepo", "tiny") == "A tiny linear model."  # ref from the cache
    model = hub.load("someone/tinyrepo:main", "tiny")
    assert isinstance(model, ot.nn.Linear)


def test_an_untrusted_repository_is_not_run_without_consent(tmp_path, home):
    (home / "hub").mkdir(parents=True)
    with pytest.raises(RuntimeError, match="trust_repo=True"):
        hub.list("stranger/repo:main", trust_repo=False)
    with pytest.raises(RuntimeError, match="cannot download"):  # trusted, then offline
        hub.list("stranger/repo:main", trust_repo=True)
    assert "stranger_repo" in (home / "hub" / "trusted_list").read_text()
