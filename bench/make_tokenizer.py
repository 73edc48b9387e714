"""Make a small local tokenizer folder that the peer load generators accept offline.

GuideLLM and AIPerf both want a Hugging Face tokenizer and would download one; nothing can be
downloaded here. This trains a byte-level BPE (vocabulary about 1,000) on generated text with
the `tokenizers` package, wraps it in `transformers.PreTrainedTokenizerFast` with bos/eos/unk
and a trivial chat template, and calls `save_pretrained(DIR)`.

It runs inside a peer's virtualenv (which has `tokenizers` and `transformers`), never in
epbench's own environment:  bench/.peers/aiperf/bin/python bench/make_tokenizer.py DIR
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

_WORD_TEXT = (
    "the a of to and in is it that for on with as was at by be this from or have an they "
    "which one you were all we can her has there been if more when will would who so no "
    "latency token throughput request server client stream model batch queue prefill decode "
    "endpoint benchmark measure second first last time cost price user system answer question"
)
WORDS = _WORD_TEXT.split()
VOCAB_SIZE = 1000
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def _corpus(lines: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        words = [rng.choice(WORDS) for _ in range(rng.randint(5, 30))]
        if rng.random() < 0.3:
            words.append(str(rng.randint(0, 99999)))
        out.append(" ".join(words).capitalize() + rng.choice([".", "?", "!", ","]))
    return out


def make_tokenizer(out_dir: Path) -> Path:
    """Train, wrap and save the tokenizer into `out_dir`; return it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=["<unk>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(_corpus(4000), trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="</s>",
        model_max_length=32768,
    )
    wrapped.chat_template = CHAT_TEMPLATE
    out_dir.mkdir(parents=True, exist_ok=True)
    wrapped.save_pretrained(str(out_dir))
    return out_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_tokenizer.py OUT_DIR")
    print(make_tokenizer(Path(sys.argv[1])))
