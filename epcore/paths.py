"""Where epbench finds its data: the checkout it runs from, or the copies inside the wheel.

Inside a checkout (an editable install, or running from the source tree) the checkout's own
`schemas/`, `workloads/`, `endpoints/`, `results/` and `site/` are used: they are what
contributors edit. From a plain wheel the packaged copies under `epcore/_data/` are used for
what ships (schemas, site sources, endpoint files, workload definitions), and the current
directory holds what a user produces (`runs/`, `results/`, `_site/`).
"""

from __future__ import annotations

import os
from pathlib import Path

from epbench.core.errors import InputError

_PACKAGE_DIR = Path(__file__).resolve().parent
_DATA_DIR = _PACKAGE_DIR.parent / "_data"


# Import name -> the repository folder it lives in (epbench/ links to each; pyproject.toml).
SOURCE_FOLDERS = {"epbench.core": "epcore", "epbench.runner": "runner",
                  "epbench.generator": "generator"}


def source_path(module: str) -> str:
    """The repository path of a module, as a reader finds it: `epbench.core.metrics.latency`
    is `epcore/metrics/latency.py`."""
    for name, folder in SOURCE_FOLDERS.items():
        if module == name or module.startswith(name + "."):
            return "/".join([folder, *module.split(".")[2:]]) + ".py"
    return module.replace(".", "/") + ".py"


def checkout_root() -> Path | None:
    """The source checkout this package was imported from, or None for an installed wheel."""
    root = _PACKAGE_DIR.parent
    if (root / "pyproject.toml").is_file() and (root / "schemas").is_dir():
        return root
    return None


def shipped(name: str) -> Path:
    """One shipped data folder (`schemas`, `site`, `endpoints`, `workloads`): the checkout's
    own copy when running from a checkout, else the copy packaged in the wheel.

    This is the one place that knows where shipped data lives; nothing imports a Python
    package to find a data file.
    """
    root = checkout_root()
    if root is not None:
        return root / name
    return _DATA_DIR / name


def schemas_dir() -> Path:
    """The JSON Schemas."""
    return shipped("schemas")


def site_sources_dir() -> Path:
    """Jinja templates, assets, Markdown docs and mkdocs config of the site."""
    return shipped("site")


def shipped_endpoints_dir() -> Path:
    """The endpoint files that ship with epbench (the emulator and templates)."""
    return shipped("endpoints")


def workloads_dir() -> Path:
    """The shipped workload definitions (`serving/` and `agentic/`)."""
    return shipped("workloads")


def data_dir(name: str, project: Path | None = None) -> Path:
    """A data folder (`workloads`, `endpoints`, ...) of the user's project when it has one,
    else the shipped copy: the one "project folder first, then what ships" rule."""
    own = (project if project is not None else project_dir()) / name
    return own if own.is_dir() else shipped(name)


def project_dir(cwd: Path | None = None) -> Path:
    """The folder that user data (results/, runs/, _site/) is read from and written to.

    The checkout root when running from one and the current directory is inside it;
    otherwise the current directory.
    """
    here = (cwd or Path.cwd()).resolve()
    root = checkout_root()
    if root is not None and (here == root or root in here.parents):
        return root
    return here


def user_cache_dir() -> Path:
    """Where epbench keeps what it may recompute (the build cache, remembered verdicts):
    never inside a checkout. `EPBENCH_CACHE_DIR` when set; on GitHub Actions the job's own
    `RUNNER_TEMP` (emptied before and after each job); else `$XDG_CACHE_HOME/epbench`
    (an absolute path only, as the XDG spec says), default `~/.cache/epbench`."""
    given = os.environ.get("EPBENCH_CACHE_DIR")
    if given:
        return Path(given)
    runner_temp = os.environ.get("RUNNER_TEMP")
    if os.environ.get("GITHUB_ACTIONS") == "true" and runner_temp:
        return Path(runner_temp) / "epbench"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "epbench"


def yaml_files(folder: Path, nested: bool = False) -> list[Path]:
    """The YAML files in `folder` and, when `nested`, in its sub-folders one level down (such
    as workloads/agentic/bfcl/): the files a run can name by id, and the ones the workloads
    catalogue lists."""
    if not folder.is_dir():
        return []
    files = [*folder.glob("*.y*ml"), *(folder.glob("*/*.y*ml") if nested else ())]
    return sorted(p for p in files if p.suffix in {".yaml", ".yml"} and p.is_file())


def _ids(folders: list[Path], nested: bool = False) -> list[str]:
    """The ids (file stems) of the YAML files in `folders` (and their sub-folders)."""
    return sorted({p.stem for folder in folders for p in yaml_files(folder, nested)})


def resolve_endpoint(spec: str, cwd: Path | None = None) -> Path:
    """An endpoint given as a path (relative to `cwd`, default the working directory), or as
    an id looked up in ./endpoints then the shipped ones; InputError listing the ids that
    exist when it is neither."""
    base = cwd or Path.cwd()
    candidate = base / spec
    if candidate.suffix in {".yaml", ".yml", ".json"} or candidate.exists():
        if not candidate.exists():
            raise InputError(f"{spec}: no such endpoint file")
        return candidate.resolve()
    folders = [project_dir(cwd) / "endpoints", shipped_endpoints_dir()]
    for folder in folders:
        for suffix in (".yaml", ".yml"):
            path = folder / f"{spec}{suffix}"
            if path.is_file():
                return path
    known = ", ".join(_ids(folders)) or "none"
    raise InputError(f"--endpoint {spec}: no such endpoint file or id; endpoint ids: {known}")


def resolve_workload(spec: str, cwd: Path | None = None) -> Path:
    """A workload given as a path (relative to `cwd`, default the working directory), or as an
    id looked up under serving/ then agentic/ (and their sub-folders, such as agentic/bfcl/);
    InputError listing the ids that exist."""
    base = cwd or Path.cwd()
    candidate = base / spec
    if candidate.suffix in {".yaml", ".yml", ".json"} or candidate.exists():
        if not candidate.exists():
            raise InputError(f"{spec}: no such workload file")
        return candidate.resolve()
    roots = [project_dir(cwd) / "workloads", workloads_dir()]
    for kind in ("serving", "agentic"):
        for root in roots:
            path = root / kind / f"{spec}.yaml"
            if path.is_file():
                return path
            nested = sorted((root / kind).glob(f"*/{spec}.yaml"))  # e.g. agentic/bfcl/
            if nested:
                return nested[0]
    serving = ", ".join(_ids([r / "serving" for r in roots], nested=True)) or "none"
    agentic = ", ".join(_ids([r / "agentic" for r in roots], nested=True)) or "none"
    raise InputError(
        f"--workload {spec}: no such workload file or id; "
        f"serving ids: {serving}; agentic ids: {agentic}"
    )


def workload_ids(project: Path | None = None) -> set[str]:
    """Every workload id a run can name: the project's workloads, then the shipped ones."""
    roots = [(project if project is not None else project_dir()) / "workloads", workloads_dir()]
    return set(_ids([r / kind for r in roots for kind in ("serving", "agentic")], nested=True))
