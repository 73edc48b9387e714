"""CPU per result page, the page path on main against this tree's, side by side.

    python bench/result_pages_speed.py                     # 2,000 results of /tmp/scale10
    python bench/result_pages_speed.py --results 500 --tree /tmp/scale10

Loads the tables of a results tree (generator.cached_tables, its build cache under
/tmp/pages/cache), takes the first N rows of `runs`, and in this one process renders and
writes their pages twice: with the run-page modules and template of `git show main:...`
(loaded into modules of their own here) and with this tree's, each into its own temporary
folder, in alternating rounds, timed as CPU of this process (user and system, whose sum is
time.process_time: less sensitive to the shared load than wall time); the best round of each
counts. Both write into the same shell: the built page of the first result split
around its fragment. Prints ms per page for each, the ratio, and the load average. Target
(issue 13, item 6): the new path at least 2.5x cheaper.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from epbench.generator import render, run_pages  # noqa: E402
from epbench.generator.build.cached_checks import cached_tables  # noqa: E402
from epbench.generator.plain_json import records  # noqa: E402

OLD_FILES = ("generator/render.py", "generator/run_pages.py", "site/templates/result.html.j2")


def _git_show(rev: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def old_modules(rev: str, folder: Path) -> types.ModuleType:
    """run_pages of `rev`, over the render module and result template of `rev`."""
    templates = folder / "templates"
    templates.mkdir(parents=True)
    (templates / "result.html.j2").write_text(_git_show(rev, OLD_FILES[2]), encoding="utf-8")
    old_render = types.ModuleType("epb_old_render")
    sys.modules[old_render.__name__] = old_render
    exec(compile(_git_show(rev, OLD_FILES[0]), f"{rev}:{OLD_FILES[0]}", "exec"),
         old_render.__dict__)
    env = old_render.environment(templates)
    old_render.environment = lambda *_: env  # its own template, not this tree's
    source = _git_show(rev, OLD_FILES[1]).replace("from epbench.generator.render import",
                                                  "from epb_old_render import")
    old_pages = types.ModuleType("epb_old_run_pages")
    sys.modules[old_pages.__name__] = old_pages
    exec(compile(source, f"{rev}:{OLD_FILES[1]}", "exec"), old_pages.__dict__)
    return old_pages


def shell_from(old: types.ModuleType, rows: list[dict[str, Any]], results: Path,
               site: Path) -> run_pages.Shell:
    """The shell the first row's built page sits in (its fragment, title and path cut out)."""
    row = rows[0]
    page = (site / "runs" / str(row["run_id"]) / "index.html").read_text(encoding="utf-8")
    (body,) = old._render_bodies([row], results)
    if body.html not in page:
        raise SystemExit(f"{site}: the built page of {row['run_id']} is not main's fragment "
                         "in a shell; rebuild the site of the tree first")
    head, tail = page.split(body.html, 1)
    title = body.title.replace("&#39;", "'").replace("&#34;", '"')
    head = head.replace(f"runs/{row['run_id']}/", f"{run_pages.SHELL_DIR}/")
    return run_pages.Shell(head.replace(title, run_pages.SHELL_TITLE),
                           tail.replace(title, run_pages.SHELL_TITLE))


def timed(work: Any, *args: Any) -> tuple[float, float]:
    """(user, system) CPU seconds of this process for `work(*args)`."""
    gc.collect()
    before = os.times()
    work(*args)
    after = os.times()
    return after.user - before.user, after.system - before.system


def old_path(old: types.ModuleType, rows: list[dict[str, Any]], results: Path, out: Path,
             shell: run_pages.Shell) -> None:
    old._write_pages_out(old._render_bodies(rows, results), out,
                         old.Shell(shell.head, shell.tail))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=Path("/tmp/scale10"))
    parser.add_argument("--results", type=int, default=2000)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/pages/cache"))
    parser.add_argument("--rev", default="main", help="the old code (default: main)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("/tmp/pages"),
                        help="where the pages are written (a tmpfs such as /dev/shm leaves "
                             "out the disk's file-system work, which varies with the load)")
    args = parser.parse_args()
    results = args.tree / "results"
    start = time.process_time()
    tables = cached_tables(results, args.tree, args.cache)
    print(f"tables of {len(tables.runs)} results: {time.process_time() - start:.1f} s CPU")
    on_front = render.frontier_by_run(tables.points)
    rows = [{**r, "frontier": on_front.get(str(r["run_id"]), [])}
            for r in records(tables.runs.iloc[:args.results])]
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="epb-pages-", dir=args.out) as tmp:
        old = old_modules(args.rev, Path(tmp) / "old-code")
        shell = shell_from(old, rows, results, args.tree / "_site")
        runs: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
        for round_ in range(args.rounds):  # alternated, so neither gains from going second
            old_out, new_out = Path(tmp) / f"old{round_}", Path(tmp) / f"new{round_}"
            runs["old"].append(timed(old_path, old, rows, results, old_out, shell))
            runs["new"].append(timed(run_pages.render_and_write, rows, results, new_out, shell))
        pages = [Path("runs", str(r["run_id"]), "index.html") for r in rows]
        size = sum((old_out / p).stat().st_size for p in pages) / len(rows)
        differ = sum((old_out / p).read_bytes() != (new_out / p).read_bytes() for p in pages)
        differ_raw = sum((old_out / r["result_path"]).read_bytes()
                         != (new_out / r["result_path"]).read_bytes() for r in rows)
    n = len(rows)
    print(f"{n} pages, mean page {size / 1000:.1f} KB, best of {args.rounds} rounds each "
          "(CPU of this process, ms a page):")
    best = {}
    for name, label in (("old", f"old ({args.rev})"), ("new", "new (this tree)")):
        user, system = min(runs[name], key=sum)
        best[name] = (user, system)
        print(f"  {label:16} {(user + system) / n * 1e3:.3f} ms  "
              f"(user {user / n * 1e3:.3f}, system {system / n * 1e3:.3f})")
    print(f"pages that differ from the old path's, byte for byte: {differ} "
          f"(raw copies: {differ_raw})")
    ratio = sum(best["old"]) / sum(best["new"])
    user_ratio = best["old"][0] / best["new"][0]
    print(f"ratio old/new: {ratio:.2f}x (target >= 2.5x); user CPU alone {user_ratio:.2f}x")
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
