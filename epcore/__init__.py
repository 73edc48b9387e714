"""epbench.core: the ground floor of epbench, which every other package stands on.

It holds what the runner (`runner`), the site generator (`generator`) and the command line
(`epbench`) share: the version, where shipped data lives, the exception tree, safe document
loading, the schema registry, validation findings, price-card arithmetic and the maths
(percentiles, Pareto frontier, throughput windows, pass^k, intervals). It imports nothing of
the project.
"""

from epbench.core.errors import EpbenchError, InputError, RunError

__version__ = "0.1.0"
HARNESS_NAME = "epbench"

__all__ = ["HARNESS_NAME", "EpbenchError", "InputError", "RunError", "__version__"]
