"""BFCL's own AST checker, imported from the pinned bfcl-eval wheel, for the agreement test.

The wheel (`bfcl-eval==2026.3.23`, pure Python) is fetched once with pip (`--no-deps
--only-binary=:all:`, its SHA-256 checked) into ~/.cache/epbench-test/bfcl-eval-2026.3.23/ (or
$EPBENCH_TEST_CACHE), outside the checkout, and imported from the wheel file itself (a zip on
`sys.path`). Nothing is installed into the test environment. Two modules are stubbed because
the checker imports them but does not need what they bring:

- `bfcl_eval.constants.model_config` imports every model handler (openai, anthropic, cohere,
  mistralai, google-genai, ...); the checker reads only `MODEL_CONFIG_MAPPING[model]
  .underscore_to_dot`, which is True for the OpenAI-style function-calling handlers epbench
  stands for (dotted names are sent with underscores).
- `filelock` (imported by `bfcl_eval.utils`, from which only `is_empty_output`, BFCL's
  irrelevance rule, is used). Importing `bfcl_eval.utils` makes BFCL's result and lock folders
  under `BFCL_PROJECT_ROOT`, which is pointed into the cache folder while it is imported.

`verdict()` is BFCL's `eval_runner` path for a function-calling model whose first answer is
already decoded (`{name: arguments}` per call, as `decode_ast` of the OpenAI FC handler gives
them): `is_empty_output` for the irrelevance categories, `ast_checker` for the others, with the
entry's raw functions and possible answer, as `evaluate_task` loads them.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

from tests.vllm_env import cache_root

VERSION = "2026.3.23"
PIN = f"bfcl-eval=={VERSION}"
WHEEL = f"bfcl_eval-{VERSION}-py3-none-any.whl"
SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
MODEL = "epbench-fc"


def wheel() -> Path:
    """The pinned wheel, downloaded on first use (pip, no dependencies) and checked."""
    target = cache_root() / f"bfcl-eval-{VERSION}" / WHEEL
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                 "--only-binary=:all:", "-d", tmp, PIN],
                check=True, capture_output=True, timeout=300,
            )
            shutil.move(str(Path(tmp) / WHEEL), target)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    if digest != SHA256:
        raise RuntimeError(f"{target}: SHA-256 {digest}, expected {SHA256} for {PIN}")
    return target


class _Config:
    underscore_to_dot = True


class _Mapping(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> _Config:
        return _Config()


def _stub(name: str, **attrs: Any) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules.setdefault(name, module)


def load() -> types.SimpleNamespace:
    """BFCL's checker modules: `ast_checker`, `Language`, `is_empty_output`."""
    path = str(wheel())
    if path not in sys.path:
        sys.path.append(path)
    _stub("bfcl_eval.constants.model_config", MODEL_CONFIG_MAPPING=_Mapping())
    _stub("filelock", FileLock=object)
    ast = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
    enums = importlib.import_module("bfcl_eval.constants.enums")
    # bfcl_eval.utils's config makes result/ and lock folders under BFCL_PROJECT_ROOT on import
    project = cache_root() / f"bfcl-eval-{VERSION}" / "project"
    before = os.environ.get("BFCL_PROJECT_ROOT")
    os.environ["BFCL_PROJECT_ROOT"] = str(project)
    try:
        utils = importlib.import_module("bfcl_eval.utils")
    finally:
        if before is None:
            del os.environ["BFCL_PROJECT_ROOT"]
        else:
            os.environ["BFCL_PROJECT_ROOT"] = before
    loaded = Path(ast.__file__ or "")
    if path not in str(loaded):
        raise RuntimeError(f"bfcl_eval was imported from {loaded}, not from {path}")
    return types.SimpleNamespace(ast=ast, Language=enums.Language, utils=utils)


def language(category: str, bfcl: types.SimpleNamespace | None) -> Any:
    """BFCL's Language for the category (its name, "java", "javascript" or "python", when
    `bfcl` is None)."""
    name = "java" if category.endswith("_java") else (
        "javascript" if category.endswith("_javascript") else "python")
    return name if bfcl is None else bfcl.Language(name)


def verdict(bfcl: types.SimpleNamespace, category: str, functions: list[dict[str, Any]],
            truth: list[dict[str, Any]] | None, output: list[dict[str, Any]]) -> bool:
    """BFCL's verdict on a decoded first answer for one entry of `category`."""
    if "irrelevance" in category:
        return bool(bfcl.utils.is_empty_output(output))
    result = bfcl.ast.ast_checker(functions, output, truth, language(category, bfcl), category,
                                  MODEL)
    return bool(result["valid"])
