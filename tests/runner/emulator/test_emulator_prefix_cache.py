"""The emulator's prefix cache: blocks keyed by their whole prefix, least recently used out."""

from __future__ import annotations

from epbench.runner.emulator.prefix_cache import PrefixCache, prompt_text

# 2 tokens a block at 4 characters a token: 8 characters a block
BLOCK = 8


def cache(capacity: int = 100) -> PrefixCache:
    return PrefixCache(block_tokens=2, capacity_blocks=capacity, chars_per_token=4.0)


def test_a_new_prompt_writes_its_full_blocks_and_the_same_prompt_then_reads_them() -> None:
    c = cache()
    text = "a" * BLOCK * 3 + "tail"  # three full blocks and a partial one, never cached
    first = c.visit(text)
    assert (first.read, first.written) == (0, 6)
    again = c.visit(text)
    assert (again.read, again.written) == (6, 0)
    assert len(c) == 3


def test_a_shared_prefix_is_read_up_to_where_the_prompts_part() -> None:
    c = cache()
    prefix = "".join(chr(ord("a") + i) * BLOCK for i in range(4))  # four distinct blocks
    c.visit(prefix + "x" * BLOCK * 2)
    other = c.visit(prefix + "y" * BLOCK * 2)
    assert (other.read, other.written) == (8, 4)


def test_a_block_is_found_only_after_the_same_prefix() -> None:
    c = cache()
    c.visit("a" * BLOCK + "b" * BLOCK)
    # block "b" alone, or after another first block, is a different key
    assert c.visit("b" * BLOCK).read == 0
    assert c.visit("c" * BLOCK + "b" * BLOCK).read == 0


def test_the_least_recently_used_block_is_evicted_when_the_cache_is_full() -> None:
    c = cache(capacity=2)
    one, two, three = "1" * BLOCK, "2" * BLOCK, "3" * BLOCK
    c.visit(one)
    c.visit(two)
    assert c.visit(one).read == 2  # one is now the most recently used; two is the oldest
    c.visit(three)  # evicts two
    assert len(c) == 2
    assert c.visit(one).read == 2
    assert c.visit(two).read == 0


def test_the_prompt_text_is_what_the_token_rule_counts_message_by_message() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image"}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
    ]
    assert prompt_text(messages) == "syspartf{}"
