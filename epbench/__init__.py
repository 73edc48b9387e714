"""epbench: an open, continuous benchmark and leaderboard for LLM inference endpoints.

This small package is the neutral base that both halves of the flow stand on:
`workloads` (the runner) and `generator` (results in, site out) each import it, and
never each other. It holds the version, where data files live, the exception tree,
validation findings and the schema loader. The command-line entry point
(`epbench.cli`) is the one module that imports both halves, lazily per sub-command.
"""

from epbench.errors import EpbenchError, InputError, RunError

__version__ = "0.1.0"
HARNESS_NAME = "epbench"

__all__ = ["HARNESS_NAME", "EpbenchError", "InputError", "RunError", "__version__"]
