"""The Wilson score interval of a proportion (the agentic success rate's ci95).

    p      = successes / n
    centre = (p + z²/(2n)) / (1 + z²/n)
    half   = z · sqrt(p(1-p)/n + z²/(4n²)) / (1 + z²/n)
    ci95   = [max(0, centre - half), min(1, centre + half)]   with z = 1.959963984540054
    n = 0 gives [0, 1]
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval for a proportion; (0, 1) when n is 0."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
