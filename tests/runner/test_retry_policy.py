"""The one transport retry policy that serving and agentic runs share."""

from __future__ import annotations

from epbench.runner.agentic.model import AGENTIC_RETRY
from epbench.runner.retry import MAX_RETRY_AFTER_S, RetryPolicy


def test_backoff_doubles_from_its_base_and_stops_at_its_cap():
    policy = RetryPolicy(enabled=True, backoff_s=0.5, backoff_max_s=3.0, honour_retry_after=False)
    assert [policy.delay_s(n, None) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 3.0]


def test_retry_after_wins_when_honoured_but_a_hostile_one_is_capped():
    policy = RetryPolicy(enabled=True, backoff_s=0.5)
    assert policy.delay_s(1, 7.0) == 7.0
    assert policy.delay_s(1, 10_000.0) == MAX_RETRY_AFTER_S
    assert RetryPolicy(honour_retry_after=False).delay_s(1, 7.0) == 0.5


def test_serving_retries_are_off_unless_the_workload_turns_them_on():
    assert RetryPolicy().enabled is False
    on = RetryPolicy().with_block({"enabled": True, "max_retries": 5})
    assert (on.enabled, on.max_retries, on.backoff_s) == (True, 5, 0.5)


def test_agentic_retries_are_on_by_default_and_a_block_overrides_them():
    assert AGENTIC_RETRY.enabled is True
    off = AGENTIC_RETRY.with_block({"enabled": False})
    assert (off.enabled, off.backoff_s, off.backoff_max_s) == (False, 0.25, 8.0)
