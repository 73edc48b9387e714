"""Agentic tool-call workloads: the format's model, tools as data, the streaming tool-call
assembler, call classification, checks, the multi-turn executor and its metrics.

Public face: `run_agentic` (executor), `validate_workload_semantics` (semantics),
`StreamAssembler` / `assemble` (assembler), `load_workload` (model).
"""
