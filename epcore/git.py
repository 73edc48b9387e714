"""Running git on a repository named explicitly, never on one git finds by itself.

The data folders (`results/`, `workloads/`, `endpoints/`) come from pull requests. A pull
request can commit `HEAD`, `objects/`, `refs/` and a `config` that make a data folder look like
a (bare) repository, and git obeys the config of the repository it finds: `gpg.program`,
`core.fsmonitor`, diff drivers and pagers all run programs. So every call here:

- names the repository: `--git-dir <root>/.git --work-tree <root>` and `-C <root>`, where `root`
  is a checkout the caller knows (it holds a `.git` entry, which git never lets anyone commit);
- confines discovery anyway: `GIT_CEILING_DIRECTORIES` is root's parent,
  `safe.bareRepository=explicit`, and the variables that redirect git (`GIT_DIR`, ...) are
  dropped from the environment;
- turns off what could run a program or write: `core.fsmonitor`, hooks, signatures, external
  diff and text conversion, the pager, optional locks, terminal prompts;
- reads pathspecs literally (`--literal-pathspecs`), so a file name is never pathspec magic.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 60
_SAFE_CONFIG = (
    "safe.bareRepository=explicit",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "log.showSignature=false",
    "diff.external=",
    "diff.noprefix=false",
    "diff.relative=false",
    "color.ui=false",
)
# Variables that point git at another repository, config or program than the one named.
_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
         "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CONFIG", "GIT_CONFIG_COUNT",
         "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_EDITOR",
         "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EXEC_PATH",
         "GIT_DISCOVERY_ACROSS_FILESYSTEM")


class GitError(Exception):
    """git could not run, or refused: the message is git's first line of complaint."""


def checkout_of(start: Path) -> Path | None:
    """The nearest folder at or above `start` that holds a `.git` entry (a checkout's top).

    Only a `.git` entry counts: a folder that merely looks like a bare repository (which a
    pull request can commit) is never taken for one."""
    start = Path(os.path.abspath(start))
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def git_env(root: Path) -> dict[str, str]:
    """The environment for a git call on `root`: discovery stops at root."""
    env = {k: v for k, v in os.environ.items() if k not in _DROP and not k.startswith("GIT_TRACE")}
    env["GIT_CEILING_DIRECTORIES"] = str(Path(os.path.abspath(root)).parent)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_LITERAL_PATHSPECS"] = "1"
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    return env


def git_command(root: Path, *args: str) -> list[str]:
    """The argument list: the repository at `root`, named, with the safe settings."""
    root = Path(os.path.abspath(root))
    command = ["git", "-C", str(root), f"--git-dir={root / '.git'}", f"--work-tree={root}",
               "--no-pager", "--literal-pathspecs", "--no-replace-objects"]
    for setting in _SAFE_CONFIG:
        command += ["-c", setting]
    return [*command, *args]


def run_git(root: Path, *args: str, timeout: float = GIT_TIMEOUT_S) -> bytes:
    """git's standard output for `args` on the checkout at `root`; GitError when it fails.

    `root` must hold a `.git` entry (see `checkout_of`); nothing else is ever used."""
    if not os.path.lexists(Path(root) / ".git"):
        raise GitError(f"{root} is not the top of a git checkout (no .git there)")
    try:
        done = subprocess.run(git_command(root, *args), capture_output=True, timeout=timeout,
                              check=False, env=git_env(root), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"cannot run git ({type(exc).__name__}: {exc})") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(lines[0] if lines else f"git exited with {done.returncode}")
    return done.stdout
