"""CPU of writing the public downloads (`generator.downloads.write_tables`), before and after
the formats moved to orjson and Arrow, side by side in one process on the same tables.

    PYTHONPATH=$PWD python bench/downloads_speed.py [--results /tmp/scale10/results]

Builds the tables once (the build cache in `--cache`), then writes every part with the
writer of commit `BEFORE` (its `downloads.py` and `plain_json.py` loaded from git into
modules of their own) and with the current one, each into its own folder, `--reps` times in
alternation, into empty folders and again over the files just written (creating a file costs
about 0.2 ms of system CPU here, the same for both writers); prints the CPU seconds
(time.process_time: user + system of this process) of each, the ratios (target: at least 4)
and the load average, then checks that both folders
read back to the same values: every JSON table row for row (`read_table`), and every CSV
cell as text, as the same number, the same boolean or the same JSON value.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "ca53945"
"""The last commit with the writer of json.dumps, the csv module and `plain_rows`."""
WHERE = {True: "into empty folders", False: "over the last files"}
TABLES = ("runs", "points", "agentic", "history", "endpoints")


def old_writer() -> types.ModuleType:
    """`generator.downloads` as of `BEFORE`, with the `plain_json` of that commit."""
    def source(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{BEFORE}:{path}"],
                              check=True, capture_output=True, text=True).stdout

    plain = types.ModuleType("old_plain_json")
    exec(compile(source("generator/plain_json.py"), "old_plain_json.py", "exec"),
         plain.__dict__)
    sys.modules["old_plain_json"] = plain
    text = source("generator/downloads.py").replace(
        "from generator.plain_json import plain_rows", "from old_plain_json import plain_rows")
    module = types.ModuleType("old_downloads")
    sys.modules["old_downloads"] = module
    exec(compile(text, "old_downloads.py", "exec"), module.__dict__)
    return module


def cpu(write: Any, tables: Any, out: Path, fresh: bool) -> tuple[float, float]:
    """User and system CPU seconds of one `write(tables, out)` (time.process_time is their
    sum), into an empty folder (`fresh`: every file created) or over the files of the last
    write (every file truncated and written again)."""
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    start = resource.getrusage(resource.RUSAGE_SELF)
    write(tables, out)
    end = resource.getrusage(resource.RUSAGE_SELF)
    return end.ru_utime - start.ru_utime, end.ru_stime - start.ru_stime


def same_json(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def same_cell(a: str, b: str) -> bool:
    """Two CSV cells that say the same: equal text, numbers, booleans or JSON values."""
    if a == b:
        return True
    if a.lower() in ("true", "false") and b.lower() in ("true", "false"):
        return a.lower() == b.lower()
    try:
        return float(a) == float(b)
    except ValueError:
        pass
    try:
        return same_json(json.loads(a), json.loads(b))
    except ValueError:
        return False


def compare(downloads: Any, old: Path, new: Path) -> list[str]:
    problems = []
    for name in TABLES:
        if name == "endpoints":
            rows_old = json.loads((old / "endpoints.json").read_text(encoding="utf-8"))
            rows_new = json.loads((new / "endpoints.json").read_text(encoding="utf-8"))
        else:
            rows_old, rows_new = (downloads.read_table(old, name),
                                  downloads.read_table(new, name))
        if not same_json(rows_old, rows_new):
            problems.append(f"{name}: JSON rows differ")
        csv_old, csv_new = downloads.read_csv(old, name), downloads.read_csv(new, name)
        if len(csv_old) != len(csv_new):
            problems.append(f"{name}: CSV has {len(csv_new)} rows, was {len(csv_old)}")
        if csv_old and csv_new and list(csv_old[0]) != list(csv_new[0]):
            problems.append(f"{name}: CSV columns differ")
            continue
        bad = [(i, k, row[k], other[k])
               for i, (row, other) in enumerate(zip(csv_old, csv_new, strict=False))
               for k in row if not same_cell(row[k], other[k])]
        if bad:
            problems.append(f"{name}: {len(bad)} CSV cells differ, e.g. {bad[:3]}")
        print(f"  {name}: {len(rows_new)} rows, {len(csv_new)} CSV rows checked")
    csv_files = sorted(p.relative_to(old) for p in old.rglob("*.csv"))
    same = sum((old / p).read_bytes() == (new / p).read_bytes() for p in csv_files)
    print(f"  CSV files byte for byte the same as before: {same} of {len(csv_files)}")
    return problems


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("/tmp/scale10/results"))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/dl/cache"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/dl/out"))
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()

    from generator import downloads
    from generator.cached_checks import cached_tables

    start = time.perf_counter()
    tables = cached_tables(args.results, ROOT, args.cache)
    print(f"tables: {time.perf_counter() - start:.1f} s wall; rows: " + ", ".join(
        f"{n} {len(getattr(tables, n))}" for n in TABLES))
    old = old_writer()
    runs: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    for rep in range(args.reps):
        for fresh in (True, False):
            line = []
            for name, write in (("before", old.write_tables), ("after", downloads.write_tables)):
                user, system = cpu(write, tables, args.out / name, fresh)
                runs.setdefault((name, fresh), []).append((user, system))
                line.append(f"{name} {user + system:.2f} s (user {user:.2f} + system "
                            f"{system:.2f})")
            print(f"  rep {rep + 1}, {WHERE[fresh]}: " + ", ".join(line))
    ratios = []
    for fresh in (True, False):
        b = min(sum(t) for t in runs["before", fresh])
        a = min(sum(t) for t in runs["after", fresh])
        user = min(t[0] for t in runs["before", fresh]) / min(t[0] for t in runs["after", fresh])
        ratios.append(b / a)
        print(f"write_tables, every part, {WHERE[fresh]}, best of {args.reps}: before {b:.2f} s"
              f" CPU, after {a:.2f} s CPU: {b / a:.1f}x less CPU (target 4x); user CPU alone "
              f"{user:.1f}x less")
    print(f"bytes written: before {size(args.out / 'before') / 1e6:.0f} MB, "
          f"after {size(args.out / 'after') / 1e6:.0f} MB")
    print("load average: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    problems = compare(downloads, args.out / "before", args.out / "after")
    for line in problems:
        print("DIFFERENT: " + line)
    print("read back: " + ("the same values" if not problems else "DIFFERENT"))
    return 1 if problems or min(ratios) < 4 else 0


if __name__ == "__main__":
    raise SystemExit(main())
