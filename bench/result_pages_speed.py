"""CPU per result page, the page path on main against this tree's, side by side.

    python bench/result_pages_speed.py                     # 2,000 results of /tmp/scale10
    python bench/result_pages_speed.py --results 500 --tree /tmp/scale10

Loads the tables of a results tree (generator.cached_tables, its build cache under
/tmp/pages/cache), takes the first N rows of `runs`, and in this one process renders and
writes their pages twice: with the run-page modules and template of `git show main:...`
(loaded into modules of their own here) and with this tree's, each into its own temporary
folder, timed with time.process_time (CPU of this process: less sensitive to the shared load
than wall time). Both write into the same shell: the built page of the first result split
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

from generator import render, run_pages  # noqa: E402
from generator.cached_checks import cached_tables  # noqa: E402
from generator.plain_json import records  # noqa: E402

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
    source = _git_show(rev, OLD_FILES[1]).replace("from generator.render import",
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


def timed(name: str, work: Any) -> float:
    gc.collect()
    start = time.process_time()
    count = work()
    spent = time.process_time() - start
    print(f"{name}: {count} pages, {spent:.2f} s CPU, {spent / count * 1000:.3f} ms a page")
    return spent / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=Path("/tmp/scale10"))
    parser.add_argument("--results", type=int, default=2000)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/pages/cache"))
    parser.add_argument("--rev", default="main", help="the old code (default: main)")
    args = parser.parse_args()
    results = args.tree / "results"
    start = time.process_time()
    tables = cached_tables(results, args.tree, args.cache)
    print(f"tables of {len(tables.runs)} results: {time.process_time() - start:.1f} s CPU")
    on_front = render.frontier_by_run(tables.points)
    rows = [{**r, "frontier": on_front.get(str(r["run_id"]), [])}
            for r in records(tables.runs.iloc[:args.results])]
    with tempfile.TemporaryDirectory(prefix="epb-pages-", dir="/tmp") as tmp:
        old = old_modules(args.rev, Path(tmp) / "old-code")
        shell = shell_from(old, rows, results, args.tree / "_site")
        old_out, new_out = Path(tmp) / "old", Path(tmp) / "new"

        def old_path() -> int:
            return int(old._write_pages_out(old._render_bodies(rows, results), old_out,
                                            old.Shell(shell.head, shell.tail)))

        def new_path() -> int:
            return run_pages.render_and_write(rows, results, new_out, shell)

        for out in (old_out, new_out):  # warm both (templates compiled, caches filled)
            out.mkdir()
        old._write_pages_out(old._render_bodies(rows[:20], results), Path(tmp) / "w1",
                             old.Shell(shell.head, shell.tail))
        run_pages.render_and_write(rows[:20], results, Path(tmp) / "w2", shell)
        spent_old = timed(f"old ({args.rev})", old_path)
        spent_new = timed("new (this tree)", new_path)
        same = sum((old_out / "runs" / str(r["run_id"]) / "index.html").stat().st_size
                   for r in rows) / len(rows)
        print(f"mean old page {same / 1000:.1f} KB")
    print(f"ratio old/new: {spent_old / spent_new:.2f}x (target >= 2.5x)")
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
