"""The formulas the methodology page shows, read from the code that computes them.

Each entry is a module or function whose docstring states its formula (epbench.core.metrics, the
price-card arithmetic in epbench.core.pricing, the normalizations in epbench.generator.cost).
The page prints the docstrings as they are on every build, so it cannot describe other maths
than the code runs; tests/generator/test_formulas_doc.py fails when an entry loses its formula.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from epbench.core import pricing, summary
from epbench.core.metrics import (
    capacity,
    latency,
    pareto,
    passk,
    percentiles,
    quality,
    throughput,
    wilson,
)
from epbench.core.paths import source_path
from epbench.generator import cost


@dataclass(frozen=True)
class Formula:
    """One formula block: an anchor name, where it lives in the code, and its text."""

    name: str
    source: str
    text: str


# Section of the methodology page -> the code whose docstrings it shows, in page order.
SECTIONS: dict[str, tuple[Any, ...]] = {
    "request": (latency,),
    "point": (throughput, percentiles, pareto, summary.cache_block),
    "agentic": (wilson, passk, cost.usd_per_task, cost.usd_per_successful_task,
                cost.retry_spend_share, quality, capacity),
    "cost": (pricing.request_cost_usd, pricing.hourly_cost_usd, pricing.cost_usd,
             cost.point_cost_usd, cost.point_cost_uncached_usd, cost.usd_per_mtok_output,
             cost.blended_usd_per_mtok, cost.output_tokens_per_usd, cost.usd_per_1k_requests,
             cost.tokens_per_kwh),
}


def formula(obj: Any) -> Formula:
    """The Formula of a module (its docstring) or a function (its docstring)."""
    if isinstance(obj, ModuleType):
        name = obj.__name__.rsplit(".", 1)[1]
        source = source_path(obj.__name__)
    else:
        name = obj.__name__
        source = f"{obj.__module__}.{obj.__qualname__}"
    text = inspect.getdoc(obj)
    if not text:
        raise ValueError(f"{source} has no docstring to show as its formula")
    return Formula(name, source, text)


def sections() -> dict[str, list[Formula]]:
    """Every section's formulas."""
    return {section: [formula(obj) for obj in objs] for section, objs in SECTIONS.items()}
