"""CPU of writing the public downloads (`epbench.generator.downloads.write_tables`), before and
after
a change, side by side in one process on the same tables.

    PYTHONPATH=$PWD python bench/downloads_speed.py [--results /tmp/scale10/results]
        [--project DIR] [--before REF] [--times N] [--target RATIO]

Builds the tables once (the build cache in `--cache`; `--times N` repeats every dated table's
rows N times in memory, the shape of N times the results), then writes every part with the
writer of commit `--before` (default `BEFORE`, the writer before orjson and Arrow; its
`downloads.py` with the `plain_json.py` or `download_formats.py` it imports, loaded from git
into modules of their own) and with the current one, each into its own folder, `--reps`
times in alternation, into empty folders and again over the files just written (creating a
file costs about 0.2 ms of system CPU here, the same for both writers); prints the CPU
seconds (user + system of this process) of each, the ratios (exit 1 under `--target`, 4 by
default) and the load average, then checks that both folders read back to the same values:
every JSON table row for row (`read_table`), and every CSV cell as text, as the same number,
the same boolean or the same JSON value; and counts the files byte for byte the same (a
`--before` writer of the same formats must match every file). `--before 227eae5` is the
hand-written `download_formats` writer that polars replaced (download format 1: its CSV
booleans, list spacing and dict cells differ from format 2's bytes, not in value), e.g.
`--before 227eae5 --target 0.67` passes while polars takes at most 1.5x its CPU.
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


def old_writer(ref: str = BEFORE) -> types.ModuleType:
    """`epbench.generator.downloads` as of commit `ref`, with the `plain_json` or `download_formats`
    of that commit."""
    def source(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
                              check=True, capture_output=True, text=True).stdout

    text = source("generator/downloads.py")
    for name, line, alias in (
            ("plain_json", "from generator.plain_json import plain_rows",
             "from old_plain_json import plain_rows"),
            ("plain_json", "from epbench.generator.plain_json import plain_rows",
             "from old_plain_json import plain_rows"),
            ("download_formats", "from generator import download_formats",
             "import old_download_formats as download_formats"),
            ("download_formats", "from epbench.generator import download_formats",
             "import old_download_formats as download_formats")):
        if line in text:
            helper = types.ModuleType(f"old_{name}")
            sys.modules[helper.__name__] = helper
            exec(compile(source(f"generator/{name}.py"), f"old_{name}.py", "exec"),
                 helper.__dict__)
            text = text.replace(line, alias)
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
    """The same JSON value; a dict or a list of dicts written as its JSON text (download
    format 2) is the same as the value it is the text of."""
    if isinstance(a, dict | list) and isinstance(b, str) and (
            isinstance(a, dict) or any(isinstance(x, dict) for x in a)):
        try:
            return same_json(a, json.loads(b))
        except ValueError:
            return False
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
    for kind in ("*.csv", "*"):
        files = sorted(p.relative_to(old) for p in old.rglob(kind) if p.is_file())
        same = sum((new / p).is_file() and (old / p).read_bytes() == (new / p).read_bytes()
                   for p in files)
        extra = sum(1 for p in new.rglob(kind) if p.is_file()) - len(files)
        print(f"  {'CSV files' if kind != '*' else 'all files'} byte for byte the same as "
              f"before: {same} of {len(files)}" + (f" ({extra} more files now)" if extra else ""))
    return problems


class Repeated:
    """The tables with every dated table's rows `times` times over (the endpoints and the
    result sha256s as they are)."""

    def __init__(self, tables: Any, times: int) -> None:
        import pandas as pd
        for name in TABLES:
            frame = getattr(tables, name)
            setattr(self, name, frame if name == "endpoints" or times == 1
                    else pd.concat([frame] * times, ignore_index=True))
        self.sources = getattr(tables, "sources", {})


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("/tmp/scale10/results"))
    parser.add_argument("--project", type=Path, default=ROOT,
                        help="the endpoints/ and workloads/ the results name")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/dl/cache"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/dl/out"))
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--before", default=BEFORE, help="git commit of the writer before")
    parser.add_argument("--times", type=int, default=1, help="repeat every dated table's rows")
    parser.add_argument("--target", type=float, default=4.0, help="least CPU ratio to pass")
    args = parser.parse_args()

    from epbench.generator import downloads
    from epbench.generator.build.cached_checks import cached_tables

    start = time.perf_counter()
    tables = Repeated(cached_tables(args.results, args.project, args.cache), args.times)
    print(f"tables: {time.perf_counter() - start:.1f} s wall; rows: " + ", ".join(
        f"{n} {len(getattr(tables, n))}" for n in TABLES))
    old = old_writer(args.before)
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
              f" CPU, after {a:.2f} s CPU: {b / a:.2f}x less CPU (target {args.target}x); user CPU "
              f"alone {user:.2f}x less")
    print(f"bytes written: before {size(args.out / 'before') / 1e6:.0f} MB, "
          f"after {size(args.out / 'after') / 1e6:.0f} MB")
    print("load average: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    problems = compare(downloads, args.out / "before", args.out / "after")
    for problem in problems:
        print("DIFFERENT: " + problem)
    print("read back: " + ("the same values" if not problems else "DIFFERENT"))
    return 1 if problems or min(ratios) < args.target else 0


if __name__ == "__main__":
    raise SystemExit(main())
