"""Classifying each assembled tool call into exactly one validity class.

Precedence, first that applies: `stream_truncated` (the stream was cut, or cut at max_tokens
inside the arguments), `unknown_tool`, `invalid_json` (not JSON, or not an object),
`schema_mismatch` (jsonschema against the tool's `parameters`), `duplicate_id`, `missing_id`,
`ok`. Calls in the last three classes are usable: they get a synthesised id where theirs is
missing or repeated, and the tool runs. The others go back to the model as tool errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from epbench.runner.agentic.assemble import AssembledCall
from epbench.runner.agentic.model import Tool

EXECUTABLE = frozenset({"ok", "missing_id", "duplicate_id"})


@dataclass(frozen=True)
class ClassifiedCall:
    """A call, its class, and the id it carries in the conversation from now on."""

    call_id: str
    name: str
    arguments_text: str
    arguments: dict[str, Any] | None
    cls: str
    problem: str = ""  # why it is invalid: sent back to the model as the tool error

    @property
    def executable(self) -> bool:
        return self.cls in EXECUTABLE


class Classifier:
    """Classifies the calls of one trial (it remembers ids already used in the trial)."""

    def __init__(self, tools: Iterable[Tool], id_factory: Callable[[], str]) -> None:
        self._tools = {t.name: t for t in tools}
        self._validators: dict[str, Draft202012Validator | None] = {}
        self._seen: set[str] = set()
        self._new_id = id_factory

    def _validator(self, name: str) -> Draft202012Validator | None:
        if name not in self._validators:
            try:
                self._validators[name] = Draft202012Validator(self._tools[name].parameters)
            except SchemaError:
                self._validators[name] = None
        return self._validators[name]

    def classify(
        self, calls: list[AssembledCall], *, cut: bool, length: bool
    ) -> list[ClassifiedCall]:
        """Classes for the calls of one response; `cut`: no finish_reason; `length`: stopped
        at max_tokens."""
        out = []
        for call in calls:
            out.append(self._one(call, cut=cut, length=length))
        return out

    def _one(self, call: AssembledCall, *, cut: bool, length: bool) -> ClassifiedCall:
        given = call.id
        text = call.arguments
        parsed, parse_problem = parse_arguments(text)
        cls, problem = "ok", ""
        if cut or (length and parse_problem):
            cls, problem = "stream_truncated", "the call was cut off before it was complete"
        elif call.name not in self._tools:
            known = ", ".join(sorted(self._tools))
            cls, problem = "unknown_tool", f"unknown tool {call.name!r}; the tools are: {known}"
        elif parse_problem:
            cls, problem = "invalid_json", f"arguments are not a JSON object: {parse_problem}"
        else:
            validator = self._validator(call.name)
            errors = (
                sorted(validator.iter_errors(parsed), key=lambda e: list(e.absolute_path))
                if validator
                else []
            )
            if errors:
                where = "/".join(str(p) for p in errors[0].absolute_path)
                cls = "schema_mismatch"
                problem = f"arguments do not fit the parameters of {call.name}: {errors[0].message}"
                problem += f" (at {where})" if where else ""
            elif given is not None and given in self._seen:
                cls = "duplicate_id"
            elif given is None:
                cls = "missing_id"
        call_id = given if given is not None and given not in self._seen else self._new_id()
        self._seen.add(call_id)
        if given is not None:
            self._seen.add(given)
        return ClassifiedCall(call_id, call.name, text, parsed, cls, problem)


def parse_arguments(text: str) -> tuple[dict[str, Any] | None, str]:
    """The arguments object, or None and why not. An empty string counts as `{}` (servers send
    it for tools without parameters)."""
    if text.strip() == "":
        return {}, ""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, str(exc)
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, ""
