"""epbench: the command line, the top floor.

`epbench.cli` (the `epbench` command), `epbench.demo` and `epbench.clidoc` are the only modules
that know both the runner (`runner`) and the site generator (`generator`); those two stand side
by side on the base package `epbench.core` and never import each other.
"""

from epbench.core import HARNESS_NAME, EpbenchError, InputError, RunError, __version__

__all__ = ["HARNESS_NAME", "EpbenchError", "InputError", "RunError", "__version__"]
