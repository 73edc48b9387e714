"""How the static site scales, each figure printed beside its target.

    python bench/site_scale.py --results 100000  # the continuous benchmark's month
    python bench/site_scale.py --results 2000    # a quicker look

Generates N schema-valid results (tests/browser/site_data.py: 8 endpoints, 3 client regions,
serving sweeps of 6 points, one in five agentic), runs what `epbench build` runs on them
(tables, then the site, timed apart; from an empty build cache), adds one result and builds
again (the incremental build: the cache of the first), each build in a new interpreter as each
`epbench build` is, its imports not timed; then in headless
Debian Chromium: the bytes of data the home page and each board fetch (gzip-compressed, as a
static host serves them), the home page's first render (navigation to the ranked table and
chart drawn), and a filter change on the Serving board (from the <select> change event until
the table is rebuilt and the chart's Vega view has run its changeset, plus one animation
frame). Targets (issue 13): full build < 60 s, rebuild after one new result < 10 s, data per
page < 1 MB compressed, first render < 1 s, filter change median < 50 ms (worst < 100 ms).

With `--keep` on a tree built before, the old site and cache are set aside and deleted only
after the measurements: on ext4 without a journal (the development machine), a file created
within minutes of a mass deletion makes the kernel walk past every recently freed inode, and
creating 300,000 files right after deleting as many took 4-8x the kernel time. Likewise, do not
run this within a few minutes of deleting a large tree (an earlier run's temporary folder).

The 60 s target was met on 2026-12-01 by main b15402c (53.4 s), on a machine of that day; the
machines here differ by up to twice in speed from one day to the next (the same b15402c took
93.9 s on 2026-12-07). `--against COMMIT` therefore also times COMMIT's full build side by side,
just before this tree's: its own code in a git worktree, on results its own
tests/browser/site_data.py writes (as many), in a new interpreter with the same installed
libraries, and prints both builds' wall and CPU seconds, their ratio, and the target scaled to
this machine by the reference (60 s x the reference's time here / its 53.4 s of 2026-12-01).
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser.harness import browser, chromium_path, open_page, serve, wait_for_board  # noqa: E402
from tests.browser.site_data import (  # noqa: E402
    CLIENT_REGIONS,
    ENDPOINTS,
    result_path,
    serving_result,
    write_project_files,
    write_results,
)

MEASURE = """async ([id, value]) => {
  const control = document.getElementById(id);
  const t0 = performance.now();
  control.value = value;
  control.dispatchEvent(new Event('change'));
  await window.epbBoard.idle();
  await new Promise(resolve => requestAnimationFrame(() => resolve()));
  return performance.now() - t0;
}"""


def build(results: Path, out: Path, cache: Path) -> tuple[float, float]:
    """Seconds for the two halves of `epbench build` (epbench.generator.site.build_site's body, run
    in this process, incremental with its build cache in `cache`): the tables (validation and
    aggregation), then the site itself."""
    from epbench.generator.downloads import write_tables
    from epbench.generator.site import (
        build_site_from_tables,
        mkdocs_waiting,
        tables_and_workloads,
    )

    start = time.perf_counter()
    with mkdocs_waiting() as mkdocs:
        tables, workloads = tables_and_workloads(results, ROOT, cache)
        middle = time.perf_counter()
        build_site_from_tables(tables, results, out, ROOT, "", write=write_tables,
                               cache_dir=cache, workloads=workloads, mkdocs=mkdocs)
    return middle - start, time.perf_counter() - middle


def build_in_new_process(results: Path, out: Path, cache: Path) -> tuple[float, float, float]:
    """`build` in a new interpreter, as each `epbench build` runs: no cache a process keeps
    (the parsed workloads, say) carries from the full build into the rebuild. Its imports are
    not timed; its log lines pass through. (tables s, site s, CPU s of the process.)"""
    return timed_build([sys.executable, __file__, "--build", str(results), str(out),
                        str(cache)])


REFERENCE = "b15402c"
"""The commit whose full build met the 60 s target (issue 13)..."""
REFERENCE_SECONDS = 53.4
"""...in this many seconds, on 2026-12-01 (`--results 100000`)."""

_REFERENCE_BUILD = textwrap.dedent("""\
    import json, sys
    from pathlib import Path
    sys.path.insert(0, str(Path(sys.argv[1]) / "bench"))
    import site_scale
    print(json.dumps(site_scale.build(*map(Path, sys.argv[2:5]))))
""")


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, text=True,
                          stdout=subprocess.PIPE).stdout.strip()


def reference_tree(work: Path, commit: str, results: int) -> tuple[Path, Path]:
    """(its folder, its code): COMMIT checked out in a worktree under `work`, beside the
    results and project files its own tests/browser/site_data.py writes (made once)."""
    sha = _git("rev-parse", "--verify", f"{commit}^{{commit}}")
    folder = work / f"against-{sha[:12]}"
    code = folder / "code"
    if not code.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        _git("worktree", "add", "--detach", str(code), sha)
    if not (folder / "results").is_dir():
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                        "sys.path.insert(0, sys.argv[1]); "
                        "from tests.browser.site_data import write_results, write_project_files; "
                        "write_results(Path(sys.argv[2]) / 'results', int(sys.argv[3])); "
                        "write_project_files(Path(sys.argv[2]))",
                        str(code), str(folder), str(results)], check=True,
                       env=_env_for(code))
        print(f"generated {results} results for {sha[:12]} in "
              f"{time.perf_counter() - start:.1f} s")
    return folder, code


def _env_for(code: Path) -> dict[str, str]:
    """The environment of a process that imports COMMIT's packages before the installed ones."""
    return {**os.environ, "PYTHONPATH": str(code)}


def _children_cpu() -> float:
    usage = os.times()
    return usage.children_user + usage.children_system


def timed_build(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float,
                                                                                float]:
    """(tables s, site s, CPU s of the whole process) of one build in a new interpreter."""
    cpu = _children_cpu()
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True, env=env)
    times = json.loads(done.stdout.strip().splitlines()[-1])
    return float(times[0]), float(times[1]), _children_cpu() - cpu


def reference_build(folder: Path, code: Path) -> tuple[float, float, float]:
    """COMMIT's full build of its results, from an empty cache (`timed_build`)."""
    return timed_build([sys.executable, "-c", _REFERENCE_BUILD, str(code),
                        str(folder / "results"), str(folder / "_site"),
                        str(folder / "build-cache")], env=_env_for(code))


BREAKDOWN: list[dict[str, float]] = []


def _measure(page: object, control: str, value: str) -> float:
    elapsed = float(page.evaluate(MEASURE, [control, value]))  # type: ignore[attr-defined]
    BREAKDOWN.append(page.evaluate("() => window.epbBoard.timings"))  # type: ignore[attr-defined]
    return elapsed


def add_one(results: Path, index: int) -> Path:
    """One more serving result (a new run id, also when `--keep` reuses a tree that an
    earlier run added to), as a contributor's pull request would add."""
    from datetime import date

    while True:
        doc = serving_result(index, ENDPOINTS[0], date(2026, 11, 28), CLIENT_REGIONS[0],
                             "alice", random.Random(index))
        path = result_path(results, doc)
        if not path.exists():
            break
        index += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _ok(good: bool) -> str:
    return "OK" if good else "OVER"


def page_data(site: Path) -> None:
    """Bytes of data each page fetches (gzip -6, as a static host compresses JSON), and the
    home page's first render."""
    with serve(site) as base, browser() as chrome:
        one = f"history/?endpoint={ENDPOINTS[0].id}"  # every result of one endpoint's series
        for path in ("", "serving/", "agentic/", "cost/", "history/", one):
            page, log = open_page(chrome)
            start = time.perf_counter()
            page.goto(base + path)
            if path:
                wait_for_board(page)
            else:
                page.wait_for_function("() => document.getElementById('epb-buyer')"
                                       ".dataset.renders", timeout=60000)
            ready = time.perf_counter() - start
            files = [u.removeprefix(base) for u in log.requests
                     if u.startswith(base + "data/") and u.endswith(".json")]
            raw = sum((site / f).stat().st_size for f in files)
            packed = sum(len(gzip.compress((site / f).read_bytes(), 6)) for f in files)
            name = path.strip("/").replace("/?", " ") or "home"
            print(f"{name}: data fetched {packed / 1e6:.2f} MB compressed ({raw / 1e6:.2f} MB "
                  f"raw, {len(files)} files) [target < 1 MB] {_ok(packed < 1e6)}; page ready "
                  f"{ready:.2f} s" + (f" [first render target < 1 s] {_ok(ready < 1)}"
                                      if not path else ""))
            page.context.close()


def filter_times(site: Path, rounds: int) -> tuple[list[float], float, int]:
    """Filter-change times (ms) on the Serving page, page-ready time (s), rows in the table."""
    with serve(site) as base, browser() as chrome:
        page, log = open_page(chrome)
        start = time.perf_counter()
        page.goto(base + "serving/?emulated=1")
        wait_for_board(page)
        ready = time.perf_counter() - start
        total = len(page.evaluate("() => window.epbBoard.visibleRunIds()"))
        options = page.eval_on_selector_all("#epb-f-provider option", "os => os.map(o => o.value)")
        times = []
        for i in range(rounds):
            value = options[1 + i % (len(options) - 1)] if i % 2 == 0 else ""
            times.append(_measure(page, "epb-f-provider", value))
        for chart in ("ttft", "cost", "pareto"):  # every serving chart follows the filter too
            page.click(f"button[data-chart='{chart}']")
            page.evaluate("() => window.epbBoard.idle()")
            times.append(_measure(page, "epb-f-provider", options[1]))
            times.append(_measure(page, "epb-f-provider", ""))
        if log.problems():
            print("browser problems:", log.problems()[:5])
        return times, ready, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=10_000, help="how many results")
    parser.add_argument("--rounds", type=int, default=20, help="filter changes to time")
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep it")
    parser.add_argument("--site", type=Path, default=None,
                        help="only time filters on this already built site")
    parser.add_argument("--build", type=Path, nargs=3, default=None,
                        metavar=("RESULTS", "OUT", "CACHE"),
                        help="only build, in this process, and print the two times as JSON")
    parser.add_argument("--against", metavar="COMMIT", nargs="?", const=REFERENCE,
                        default=None, help="also time COMMIT's full build side by side "
                        f"(default {REFERENCE}, which met the target in {REFERENCE_SECONDS} s)")
    args = parser.parse_args()
    logging.basicConfig(format="  %(message)s")
    logging.getLogger("epbench.generator.site").setLevel(logging.INFO)
    if args.build:
        print(json.dumps(build(*args.build)))
        return 0

    if args.site:
        report_filters(args.site, args.rounds)
        return 0
    with tempfile.TemporaryDirectory(prefix="epbench-scale-") as tmp:
        work = args.keep or Path(tmp)
        results, out = work / "results", work / "_site"
        if not results.is_dir():
            start = time.perf_counter()
            write_results(results, args.results)
            write_project_files(work)
            print(f"generated {args.results} results in {time.perf_counter() - start:.1f} s")
        cache = work / "build-cache"  # (a real build keeps it in epbench.core.paths.user_cache_dir)
        trash = work / f".old-{time.time_ns()}"
        against = (reference_tree(work, args.against, args.results) if args.against
                   else None)
        folders = [cache, out] + ([against[0] / "build-cache", against[0] / "_site"]
                                  if against else [])
        for number, folder in enumerate(folders):  # the full builds start from nothing
            if folder.exists():  # set aside, deleted once everything is measured (see below)
                trash.mkdir(exist_ok=True)
                folder.rename(trash / f"{number}-{folder.name}")
        if against:
            load = os.getloadavg()[0]
            ref_tables, ref_site, ref_cpu = reference_build(*against)
            print(f"reference {args.against}: full build {ref_tables + ref_site:.1f} s (tables "
                  f"{ref_tables:.1f} s + site {ref_site:.1f} s), {ref_cpu:.0f} CPU-s (load "
                  f"average {load:.1f})")
        load = os.getloadavg()[0]
        tables_s, site_s, cpu_s = build_in_new_process(results, out, cache)
        seconds = tables_s + site_s
        pages = sum(1 for _ in (out / "runs").glob("*/index.html"))
        print(f"full build: {seconds:.1f} s for {args.results} results ({pages} result pages): "
              f"tables {tables_s:.1f} s + site {site_s:.1f} s, {cpu_s:.0f} CPU-s [target < 60 s] "
              f"{_ok(seconds < 60)} (load average {load:.1f} on {os.cpu_count()} cores)")
        if against:
            ref_s = ref_tables + ref_site
            scaled = 60 * ref_s / REFERENCE_SECONDS
            print(f"  beside {args.against}: {seconds / ref_s:.2f}x its wall time, "
                  f"{cpu_s / ref_cpu:.2f}x its CPU; the target scaled to this machine "
                  f"(60 s x {ref_s:.1f} / {REFERENCE_SECONDS} s): {scaled:.1f} s "
                  f"{_ok(seconds < scaled)}" + ("" if args.results == 100_000 else
                                                " (the reference figure is of 100,000 results)"))
        add_one(results, args.results)
        load = os.getloadavg()[0]
        tables_s, site_s, _ = build_in_new_process(results, out, cache)
        again = tables_s + site_s
        print(f"rebuild after adding one result: {again:.1f} s (tables {tables_s:.1f} s + site "
              f"{site_s:.1f} s) [target < 10 s] {_ok(again < 10)} (load average {load:.1f})")
        if chromium_path() is None:
            print("browser figures: not measured (no chromium/playwright)")
        else:
            page_data(out)
            report_filters(out, args.rounds)
        shutil.rmtree(trash, ignore_errors=True)
        if against and not args.keep:  # its folder goes with the temporary one
            _git("worktree", "remove", "--force", str(against[1]))
    return 0


def report_filters(site: Path, rounds: int) -> None:
    """Print the filter-change figures for a built site."""
    load = os.getloadavg()[0]
    times, ready, rows = filter_times(site, rounds)
    median, worst = statistics.median(times), max(times)
    print(f"page ready: {ready:.2f} s ({rows} table rows rendered)")
    print(f"filter change -> table and chart updated: median {median:.1f} ms, "
          f"max {worst:.1f} ms over {len(times)} changes [target median < 50 ms, worst "
          f"< 100 ms] {_ok(median < 50 and worst < 100)} (best {min(times):.1f} ms; load average "
          f"{load:.1f} on {os.cpu_count()} cores)")
    parts = ("filter_ms", "table_ms", "reduce_ms", "alt_ms", "vega_ms")
    print("  median per step: " + ", ".join(
        f"{p.removesuffix('_ms')} {statistics.median(b.get(p, 0.0) for b in BREAKDOWN):.1f} ms"
        for p in parts))


if __name__ == "__main__":
    raise SystemExit(main())
