"""The tool-call quality gate: is an endpoint's success rate on a quality workload below a
share of the model's reference success rate, beyond chance?

The test (one-sided, on two independent binomial samples of task trials):

    H0: p_endpoint >= SHARE * p_reference      H1: p_endpoint < SHARE * p_reference

Each proportion is estimated with the Agresti-Caffo adjustment (one success and one failure
added to each sample: p~ = (s + 1) / (n + 2)), which keeps the variance positive when a
sample is all successes (a reference often is). The statistic

    z = (pe - SHARE pr) / sqrt(pe (1 - pe) / (ne + 2) + SHARE^2 pr (1 - pr) / (nr + 2))

is compared with the standard normal: p = Phi(z). The endpoint is below the reference when
p < ALPHA. Inputs: successes and trials of the endpoint's result and of the reference result
(the `success_rate` value times its `n`). SHARE = 0.97 and ALPHA = 0.01.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from epbench.core.metrics.wilson import wilson

SHARE = 0.97
ALPHA = 0.01
REASON = "tool-call quality below the reference"


def normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


@dataclass(frozen=True)
class QualityGate:
    """One endpoint's result against its model's reference result on one workload."""

    successes: int
    n: int
    reference_successes: int
    reference_n: int
    z: float
    p_value: float

    @property
    def below(self) -> bool:
        return self.p_value < ALPHA

    @property
    def rate(self) -> float:
        return self.successes / self.n if self.n else 0.0

    @property
    def reference_rate(self) -> float:
        return self.reference_successes / self.reference_n if self.reference_n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """Wilson 95% interval of the endpoint's success rate."""
        return wilson(self.successes, self.n)

    @property
    def reference_interval(self) -> tuple[float, float]:
        return wilson(self.reference_successes, self.reference_n)


def quality_gate(
    successes: int, n: int, reference_successes: int, reference_n: int, share: float = SHARE
) -> QualityGate:
    """The one-sided test of the module docstring for one endpoint result."""
    if n <= 0 or reference_n <= 0:
        raise ValueError("both samples need at least one trial")
    pe = (successes + 1) / (n + 2)
    pr = (reference_successes + 1) / (reference_n + 2)
    var = pe * (1 - pe) / (n + 2) + share * share * pr * (1 - pr) / (reference_n + 2)
    z = (pe - share * pr) / math.sqrt(var)
    return QualityGate(successes, n, reference_successes, reference_n, z, normal_cdf(z))


def successes_of(rate: float, n: int) -> int:
    """Successes behind a published success rate and its n."""
    return round(rate * n)
