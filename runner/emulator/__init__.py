"""The endpoint emulator: a server that behaves like a batching engine, on OpenAI chat
completions, OpenAI Responses and Anthropic Messages.

Public face:
- `serve(config, host, port, workload_dirs)`: `epbench emulate`, blocking.
- `start_emulator(endpoint_doc, workload_dirs, port)`: a child process on loopback, returned
  as an `EmulatorProcess` (context manager with `base_url`, `root_url`, `stop()`).
- `Script`: what the agentic player returns for a request.
- `FAULT_KINDS`, `FAULT_CLASSES`: the faults it injects and the client class each maps to.
- `count_prompt_tokens`: the emulator's token rule for prompts (ceil(chars / 4)).

See DESIGN.md beside this file.
"""

from epbench.runner.emulator.faults import FAULT_CLASSES, FAULT_KINDS
from epbench.runner.emulator.process import EmulatorProcess, start_emulator
from epbench.runner.emulator.script import Script
from epbench.runner.emulator.server import serve
from epbench.runner.emulator.settings import EmulatorSettings, load_endpoint
from epbench.runner.emulator.tokens import count_prompt_tokens

__all__ = [
    "FAULT_CLASSES",
    "FAULT_KINDS",
    "EmulatorProcess",
    "EmulatorSettings",
    "Script",
    "count_prompt_tokens",
    "load_endpoint",
    "serve",
    "start_emulator",
]
