"""pass^k: the chance that k trials of a task, drawn without replacement from its n, all pass.

    pass^k(task)  = C(c, k) / C(n, k)     for a task with c successes in n counted trials
                                          (tau-bench's unbiased estimator; 0 when c < k)
    pass^k        = mean over tasks of pass^k(task)   (tasks with n = 0 left out)
    k             = 1 .. the smallest n among the tasks, so every task counts for every k
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb


def pass_hat_k_task(successes: int, trials: int, k: int) -> float:
    """C(c, k) / C(n, k) for one task; 0 when c < k. Needs 1 <= k <= n."""
    if not 1 <= k <= trials:
        raise ValueError(f"k={k} outside 1..{trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes out of {trials} trials")
    return comb(successes, k) / comb(trials, k)


def pass_hat_k(tasks: Sequence[tuple[int, int]]) -> dict[str, float]:
    """`{"1": .., "2": .., ...}` over tasks given as (successes, trials); tasks with no
    counted trial are left out; empty when no task has one."""
    counted = [(c, n) for c, n in tasks if n > 0]
    if not counted:
        return {}
    k_max = min(n for _, n in counted)
    return {
        str(k): sum(pass_hat_k_task(c, n, k) for c, n in counted) / len(counted)
        for k in range(1, k_max + 1)
    }
