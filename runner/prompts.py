"""Synthetic, seeded prompts: unique per request, lengths drawn from the workload, no tokenizer.

A prompt of n "tokens" is n words: the request id first, then n-1 words drawn from a fixed
list of short common English words by a generator seeded with (workload seed, request id).
Short common words are about one token each in every mainstream tokenizer, which is all the
length needs to be: the endpoint's own usage counts are what results report. The request id
leads, so no two requests share a prefix and no prefix cache can serve one from another.

Shared prefixes (`prompts.shared_prefix`): the user message is the prefix, a blank line, then
the request's own prompt. A prefix is its name, then seeded words from a generator seeded with
(workload seed, prefix name): requests that name the same prefix send identical leading text,
and two prefixes differ from their first word.

The text is a pure function of (seed, request id, length, prefix name): plan.json stores only
the length and the name, and `--resume` rebuilds the same prompts.
"""

from __future__ import annotations

import random

from epbench.core.workload_plan import draw_length

__all__ = ["WORDS", "draw_length", "messages", "prefix_text", "prompt_text"]

_WORD_TEXT = """
the of and to in is it you that he was for on are with as his they be at one have this
from or had by hot word but what some we can out other were all there when up use your
how said an each she which do their time if will way about many then them write would
like so these her long make thing see him two has look more day could go come did number
sound no most people my over know water than call first who may down side been now find
any new work part take get place made live where after back little only round man year
came show every good me give our under name very through just form sentence great think
say help low line differ turn cause much mean before move right boy old too same tell
does set three want air well also play small end put home read hand port large spell add
even land here must big high such follow act why ask men change went light kind off need
house picture try us again animal point mother world near build self earth father head
stand own page should country found answer school grow study still learn plant cover
food sun four between state keep eye never last let thought city tree cross farm hard
start might story saw far sea draw left late run while press close night real life few
north open seem together next white children begin got walk example ease paper group
always music those both mark often letter until mile river car feet care second book
carry took science eat room friend began idea fish mountain stop once base hear horse
cut sure watch color face wood main enough plain girl usual young ready above ever red
list though feel talk bird soon body dog family direct pose leave song measure door
product black short numeral class wind question happen complete ship area half rock
order fire south problem piece told knew pass since top whole king space
"""
WORDS: tuple[str, ...] = tuple(_WORD_TEXT.split())


def prompt_text(seed: int, request_id: str, n_tokens: int) -> str:
    """The prompt for one request: its id, then n_tokens-1 seeded words."""
    rng = random.Random(f"{seed}:{request_id}")
    words = rng.choices(WORDS, k=max(0, n_tokens - 1))
    return " ".join([request_id, *words])


def prefix_text(seed: int, name: str, n_words: int) -> str:
    """A shared prefix: its name, then n_words-1 seeded words."""
    rng = random.Random(f"{seed}:prefix:{name}")
    return " ".join([f"prefix-{name}", *rng.choices(WORDS, k=max(0, n_words - 1))])


def messages(
    seed: int, request_id: str, n_tokens: int, system_prompt: str | None,
    prefix: tuple[str, int] | None = None,
) -> list[dict[str, str]]:
    """The chat `messages` for one request; `prefix` is (name, words) of its shared prefix."""
    out = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    text = prompt_text(seed, request_id, n_tokens)
    if prefix is not None:
        text = prefix_text(seed, prefix[0], prefix[1]) + "\n\n" + text
    out.append({"role": "user", "content": text})
    return out
