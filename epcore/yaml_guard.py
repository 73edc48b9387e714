"""YAML files that would hang the loader, refused before loading.

- Alias bombs: a few hundred bytes of anchors and aliases that expand to billions of nodes
  ("billion laughs"). PyYAML's safe loader builds aliases by reference, but anything that walks
  the loaded tree (depth and NaN checks, the schema validator) visits every expanded node and
  never finishes.
- Deep nesting: PyYAML's pure-Python scanner is quadratic in nesting depth (3,000 levels take
  tens of seconds), long before the loader's own depth limit applies.

So before a YAML file is loaded, its event stream is scanned once with libyaml (the C parser,
linear time; the Python one when libyaml is missing), counting the nodes the document would
expand to and its nesting depth.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_NODES = 1_000_000

# libyaml's parser where PyYAML was built with it, else the pure-Python one (epbench.core.documents
# loads with the same parser)
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def scan_yaml(text: str, max_depth: int, limit: int = MAX_NODES) -> tuple[int, int]:
    """(nodes once aliases are resolved, deepest nesting); stops early past either limit.

    Parse errors end the scan early: the loader reports them properly afterwards."""
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]  # [anchor, nodes so far] per open collection
    total = 0
    deepest = 0
    try:
        for event in yaml.parse(text, Loader=SAFE_LOADER):
            if isinstance(event, yaml.AliasEvent):
                size = sizes.get(event.anchor or "", 1)
                stack[-1][1] += size
                total += size
            elif isinstance(event, yaml.ScalarEvent):
                stack[-1][1] += 1
                total += 1
                if event.anchor:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.CollectionStartEvent):
                stack.append([event.anchor, 1])
                total += 1
                deepest = max(deepest, len(stack) - 1)
            elif isinstance(event, yaml.CollectionEndEvent) and len(stack) > 1:
                anchor, size = stack.pop()
                stack[-1][1] += size
                if anchor:
                    sizes[anchor] = size
            if total > limit or deepest > max_depth:
                break
    except yaml.YAMLError as exc:
        # libyaml refuses nesting past its own limit (1,000 levels) while scanning ahead, before
        # it has sent an event of those levels: deeper than any limit of ours
        if getattr(exc, "problem", None) == "exceeded maximum nesting depth":
            deepest = max(deepest, max_depth + 1)
    return total, deepest
