"""CPU of validating one result file and deriving its table rows: this tree against a base.

    python bench/check_speed.py [--results /tmp/scale10/results] [--files 2000]
                                [--base main] [--rounds 3]

What `epbench build` does per result in its worker: `epbench.generator.validate.check_file` (load,
secret scan, schema, semantic checks) and then its rows, `epbench.generator.tables.RowMaker`
(`tables.RowCheck` runs both).
The same first `--files` results (sorted by path) are timed with time.process_time() in one
process, for the code of `--base` (checked out with `git worktree add --detach` into a
temporary folder, removed afterwards) and for this tree, each in a fresh subprocess whose
import path starts with its tree. The sides alternate for `--rounds` rounds and the lowest CPU
of each side is kept (the machine is shared: other work lengthens CPU time a little too).
A warm-up pass over 50 files (schema compilation, workload index, imports) is not timed.

It also checks that both sides produce the same findings and the same rows for every file
(rows compared as lists in column order, the form a base whose rows were dicts is turned
into), and exits 1 when they do not. Output: ms per file of each side, the ratio, the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WARM_UP = 50


def child(tree: str, results: str, files: int, out: str) -> None:
    """Time check_file + RowMaker over the files with the code of `tree`; write a summary."""
    sys.path.insert(0, tree)
    import hashlib
    import time
    from datetime import UTC, datetime

    import epbench.generator
    from epbench.generator.tables import RowMaker
    from epbench.generator.validate import _index_for, check_file
    assert Path(epbench.generator.__file__).resolve().is_relative_to(Path(tree).resolve()), \
        epbench.generator.__file__
    results_dir = Path(results)
    paths = sorted(results_dir.rglob("*.json"))[:files]
    now = datetime(2026, 11, 30, tzinfo=UTC)
    post = RowMaker(results_dir, results_dir.parent, build=1)
    indexes: dict[object, object] = {}

    def one(path: Path) -> tuple[Any, object]:
        checked = check_file(path, str(path), None, _index_for(path, indexes), now)
        if checked.document is None:
            return checked, "rejected"
        rows = post(checked)
        checked.document = None  # as the build's worker drops it
        return checked, rows

    for path in paths[:WARM_UP]:
        one(path)
    outcomes = []
    start = time.process_time()
    for path in paths:
        outcomes.append(one(path))
    cpu = time.process_time() - start
    digest = hashlib.sha256()
    for checked, rows in outcomes:
        digest.update(repr(sorted(
            (f.pointer, f.check, f.severity, f.message, f.fix) for f in checked.findings
        )).encode())
        digest.update(repr(listed(rows)).encode())
    rejected = sum(1 for _, rows in outcomes if rows == "rejected")
    Path(out).write_text(json.dumps({"cpu": cpu, "files": len(paths), "digest":
                                     digest.hexdigest(), "rejected": rejected}))


def listed(rows: Any) -> Any:
    """Rows as lists in column order (a tree whose RowMaker gave dicts by column name)."""
    from epbench.generator.tables import TABLE_COLUMNS

    if not hasattr(rows, "runs"):
        return rows  # "rejected", or None for a file that gives no rows
    return [[r if isinstance(r, list) else [r.get(c) for c in TABLE_COLUMNS[name]]
             for r in getattr(rows, name)] for name in ("runs", "points", "agentic")]


def run_side(tree: Path, args: argparse.Namespace) -> dict[str, float | str]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [sys.executable, __file__, "--child", str(tree), "--results", args.results,
             "--files", str(args.files), "--out", out.name],
            check=True, env={**os.environ, "PYTHONPATH": str(tree)},
        )
        return dict(json.loads(Path(out.name).read_text()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", default="/tmp/scale10/results")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--base", default="main")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.results, args.files, args.out)
        return 0
    with tempfile.TemporaryDirectory(prefix="check-speed-") as scratch:
        base = Path(scratch) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--quiet", "--detach",
                        str(base), args.base], check=True)
        try:
            best: dict[str, dict[str, float | str]] = {}
            for _ in range(args.rounds):
                for name, tree in ((args.base, base), ("this tree", ROOT)):
                    got = run_side(tree, args)
                    if name not in best or float(got["cpu"]) < float(best[name]["cpu"]):
                        best[name] = got
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(base)], check=True)
    old, new = best[args.base], best["this tree"]
    files = int(old["files"])
    old_ms = float(old["cpu"]) / files * 1000
    new_ms = float(new["cpu"]) / files * 1000
    print(f"files: {files} (rejected {old['rejected']} / {new['rejected']}), "
          f"rounds: {args.rounds}, lowest CPU of each side")
    print(f"{args.base:>10}: {old_ms:.3f} ms CPU a file (check_file + RowMaker)")
    print(f"{'this tree':>10}: {new_ms:.3f} ms CPU a file")
    print(f"ratio this/{args.base}: {new_ms / old_ms:.2f}")
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    same = old["digest"] == new["digest"]
    print("findings and rows: " + ("identical" if same else "DIFFERENT"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
