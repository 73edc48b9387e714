"""Make a tiny Qwen2-style model folder that `vllm serve` loads offline: nothing is downloaded.

The tokenizer is bench/make_tokenizer.py's byte-level BPE (trained on seeded words), with
`<|im_start|>`, `<|im_end|>` (the eos) and the added tokens `<tool_call>`, `</tool_call>`,
`<tool_response>`, `</tool_response>` that vLLM's `hermes` tool parser looks up, and a
Qwen2.5-style chat template with tools. The model is a `Qwen2ForCausalLM` with seeded random
weights; `--size tiny` (2 layers, hidden 128, about 0.4 M parameters, for the tests) or
`--size timing` (6 layers, hidden 768, about 43 M parameters, about 10 ms a token on these
CPUs, for timing runs against a vLLM server that does real work per token).

It runs inside the vLLM virtualenv (torch, transformers, tokenizers):
    ~/.cache/epbench-test/vllm-0.32.0/bin/python bench/make_vllm_model.py DIR [--size tiny]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_tokenizer import _corpus  # one corpus for every local tokenizer

SEED = 20261201
VOCAB_SIZE = 600
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
SIZES = {
    "tiny": {"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
             "num_key_value_heads": 2, "intermediate_size": 256},
    "timing": {"hidden_size": 768, "num_hidden_layers": 6, "num_attention_heads": 12,
               "num_key_value_heads": 12, "intermediate_size": 2048},
}
# Qwen2.5's template, shortened: the system prompt lists the tools inside <tools>, an
# assistant's tool calls are <tool_call>{json}</tool_call>, tool results are <tool_response>.
CHAT_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n"
    "{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}\n\n{% endif %}"
    "# Tools\n\nYou may call one or more functions.\n<tools>"
    "{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}\n</tools>\n"
    "Return each call as <tool_call>\n{\"name\": <name>, \"arguments\": <args>}\n</tool_call>"
    "<|im_end|>\n"
    "{% elif messages[0]['role'] == 'system' %}"
    "<|im_start|>system\n{{ messages[0]['content'] }}<|im_end|>\n{% endif %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}"
    "{% elif message['role'] == 'tool' %}<|im_start|>user\n<tool_response>\n"
    "{{ message['content'] }}\n</tool_response><|im_end|>\n"
    "{% elif message['role'] == 'assistant' and message.get('tool_calls') %}"
    "<|im_start|>assistant\n{{ message['content'] or '' }}"
    "{% for call in message['tool_calls'] %}{% set f = call['function'] if call['function'] "
    "is defined else call %}\n<tool_call>\n{\"name\": \"{{ f['name'] }}\", \"arguments\": "
    "{{ f['arguments'] if f['arguments'] is string else f['arguments'] | tojson }}}"
    "\n</tool_call>{% endfor %}<|im_end|>\n"
    "{% else %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] if message['content'] is string else '' }}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def make_model(out_dir: Path, size: str = "tiny") -> Path:
    import torch
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(_corpus(4000, seed=SEED), trainer=trainer)
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in TOOL_TOKENS])
    wrapped = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>",
                                      pad_token="<|endoftext|>", model_max_length=32768)
    wrapped.chat_template = CHAT_TEMPLATE
    out_dir.mkdir(parents=True, exist_ok=True)
    wrapped.save_pretrained(str(out_dir))

    vocab = -(-len(wrapped) // 64) * 64
    torch.manual_seed(SEED)
    config = Qwen2Config(
        vocab_size=vocab, max_position_embeddings=4096, tie_word_embeddings=False,
        eos_token_id=wrapped.convert_tokens_to_ids("<|im_end|>"),
        bos_token_id=None, pad_token_id=wrapped.pad_token_id, torch_dtype="float32",
        **SIZES[size],
    )
    model = Qwen2ForCausalLM(config)
    _never_generated(model, _unprintable(wrapped, vocab) + _whitespace(wrapped))
    model.save_pretrained(str(out_dir), safe_serialization=True)
    return out_dir


def _whitespace(tokenizer: Any) -> list[int]:
    """Whitespace-only tokens: a JSON grammar allows whitespace between tokens, and a random
    model that favours a space fills max_tokens with it (`{"city"` then 50 spaces) instead of
    finishing the call."""
    return [i for i in range(len(tokenizer))
            if (text := tokenizer.decode([i])) and not text.strip()]


def _unprintable(tokenizer: Any, vocab: int) -> list[int]:
    """Tokens that give no text of their own: the 128 byte tokens 0x80-0xFF (a UTF-8 lead or
    continuation byte alone), the special tokens other than the eos (`<|endoftext|>`,
    `<|im_start|>`, dropped from the text) and the padding ids past the tokenizer. Random
    weights chain them: one request per sweep point got 16 x token 149 (byte 0xD6, a lead byte
    with no continuation), vLLM held every byte back as not yet whole UTF-8, and the reply had
    16 output tokens and no text (epbench rightly counts it as `empty`, a failed request)."""
    eos = tokenizer.eos_token_id
    bad = [i for i in range(len(tokenizer)) if i != eos
           and ((text := tokenizer.decode([i])) == "" or "\ufffd" in text)]
    return bad + list(range(len(tokenizer), vocab))


def _never_generated(model: Any, rows: list[int]) -> None:
    """The given tokens get a logit far below every other, so greedy decoding never picks
    them (and sampling at temperature 1 almost never). Hidden dimension 0 is held at 1 (every
    embedding has it, no layer writes to it), so after the final norm it is always positive,
    and these rows of the output layer read only it, times -50."""
    import torch

    with torch.no_grad():
        model.model.embed_tokens.weight[:, 0] = 1.0
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight[0, :] = 0.0
            layer.mlp.down_proj.weight[0, :] = 0.0
        model.lm_head.weight[rows, :] = 0.0
        model.lm_head.weight[rows, 0] = -50.0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    args = parser.parse_args()
    print(make_model(args.out_dir, args.size))
