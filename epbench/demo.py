"""`epbench demo`: the whole flow on the built-in emulator, in one command.

Runs a serving sweep and the agentic suite against the emulator (started and stopped by the
runner on a free loopback port) on OpenAI chat completions, then a serving sweep and one
agentic workload on each native API (Anthropic Messages, OpenAI Responses: the same emulator
speaking them, with reasoning and a prompt cache), a shared-prefix sweep on Anthropic Messages
(its prefix cache at work: hit rate, cache reads and writes), files the results under a demo
submitter,
validates them and builds the site. Together with `epbench.cli` this is the composition layer:
the one place that calls both the runner (`workloads`) and the generator.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import click

from epbench.core.documents import load_document
from epbench.core.errors import RunError
from epbench.core.paths import data_dir, project_dir, resolve_endpoint, resolve_workload
from epbench.runner.progress import auto_mode
from epbench.runner.report import fmt

DEMO_SUBMITTER = "demo"
# Left in the site folder the demo built, holding the demo's results folder: `epbench build`
# into that folder says that it replaces the demo's site (demo_site_note).
DEMO_MARK = ".epbench-demo"
SERVING_WORKLOAD = "chat-short"
# The native APIs: endpoint file, and the agentic workload run on it (tool results go back in
# the API's own shape: several steps, parallel calls).
NATIVE_RUNS = (("emulator-messages", "parallel-stock-quotes"),
               ("emulator-responses", "retail-refund"))
# Prefixes shared by many requests, on an emulator with its prefix cache on: the hit rate and
# TTFT show the cache at work (chat-short's prompts share nothing).
CACHE_RUN = ("emulator-messages", "shared-prefix")
MAX_AT_ONCE = 4  # runs side by side, each with its own emulator process


def _print_serving(result: dict[str, Any]) -> None:
    click.echo(f"\nServing sweep '{result['workload']['id']}' on {result['endpoint']['api']} "
               f"(run {result['run_id']}):")
    click.echo(f"  {'concurrency':>11} {'system_tps':>10} {'tps/user':>9} {'ttft p90 ms':>11} "
               f"{'ttfa p90 ms':>11} {'reasoning':>9} {'cache hit':>12} {'ok':>4} "
               f"{'failed':>6}")
    for point in result["points"]:
        click.echo(
            f"  {fmt(point.get('concurrency', point.get('rate'))):>11} "
            f"{fmt(point['system_tps']):>10} {fmt(point['tps_per_user']):>9} "
            f"{fmt(point['ttft_ms']['p90']):>11} "
            f"{fmt((point.get('ttfa_ms') or {}).get('p90')):>11} "
            f"{fmt(point['tokens'].get('reasoning')):>9} {_cache_hit(point):>12} "
            f"{point['requests']['completed']:>4} {point['requests']['failed']:>6}"
        )
    frontier = ", ".join(
        f"{p['point']} ({p['tps_per_user']:.0f} tok/s/user, {p['system_tps']:.0f} tok/s)"
        for p in result["pareto"]
    )
    click.echo(f"  Pareto frontier: {frontier}")


def _cache_hit(point: dict[str, Any]) -> str:
    """The point's prompt-cache hit rate, or "not reported" (the endpoint did not say: not 0)."""
    cache = point.get("cache") or {}
    if cache.get("hit_rate") is not None:
        return f"{cache['hit_rate']:.1%}"
    return "not reported" if cache.get("reason") == "not_reported" else "-"


def _print_agentic(result: dict[str, Any]) -> None:
    agentic = result["agentic"]
    rate = agentic["success_rate"]
    calls = agentic["calls"]
    bad = sum(v for k, v in calls.items() if k != "ok")
    click.echo(
        f"  {result['workload']['id']:<28} {result['endpoint']['api']:<18} "
        f"success {rate['value']:.0%} "
        f"(95% CI {rate['ci95'][0]:.0%}-{rate['ci95'][1]:.0%}, n={rate['n']}), "
        f"calls ok {calls['ok']}, invalid {bad}, "
        f"decision p90 {fmt(agentic['decision_ms']['p90'])} ms"
    )


def run_demo(out: Path, quick: bool = True) -> Path:
    """Run the demo with `out` as the working folder; return the built site's folder."""
    from epbench.generator.site import build_site
    from epbench.generator.submit import submit_run
    from epbench.runner.entry import run_command

    started = time.monotonic()
    out = out.resolve()
    runs_dir = out / "runs"
    results_dir = runs_dir / "demo-results"
    endpoint = resolve_endpoint("emulator")

    click.echo(f"epbench demo: emulator endpoint {endpoint}")
    click.echo(f"  serving sweep '{SERVING_WORKLOAD}' ({'quick' if quick else 'full'} points), "
               "and the agentic suite, side by side ...")

    def runs(endpoint_path: Path, workload: Path) -> list[Path]:
        return run_command(endpoint=endpoint_path, workload=workload, out=runs_dir, resume=None,
                           quick=quick, client_region="local", shard=None, progress=auto_mode())

    # Every run_command starts its own emulator process: the runs share no server, so they go
    # side by side, at most MAX_AT_ONCE (six emulators starting at once on two loaded cores
    # missed their 20 s start deadline); the longest runs (the serving sweeps) go first.
    # Every figure is still its own journal's, and validated. Measured: "Done in 111 s" (120 s
    # wall) in an empty folder on this 2-core machine, against 232-264 s one after another.
    jobs: list[tuple[str, Path, Path]] = [
        ("serving", endpoint, resolve_workload(SERVING_WORKLOAD)),
        ("agentic", endpoint, data_dir("workloads") / "agentic")]
    natives = [(resolve_endpoint(e), resolve_workload(w)) for e, w in NATIVE_RUNS]
    for native, agentic_workload in natives:
        click.echo(f"  on {load_document(native)['api']}: serving sweep '{SERVING_WORKLOAD}' "
                   f"and agentic workload '{agentic_workload.stem}' ...")
        jobs.append(("serving", native, resolve_workload(SERVING_WORKLOAD)))
    cache_endpoint, cache_workload = CACHE_RUN
    click.echo(f"  serving sweep '{cache_workload}' on {cache_endpoint} (its prefix cache) ...")
    jobs.append(("serving", resolve_endpoint(cache_endpoint), resolve_workload(cache_workload)))
    jobs += [("agentic", native, agentic_workload) for native, agentic_workload in natives]
    with ThreadPoolExecutor(max_workers=MAX_AT_ONCE) as pool:
        futures = [(kind, pool.submit(runs, ep, wl)) for kind, ep, wl in jobs]
        done = [(kind, future.result()) for kind, future in futures]
    serving = [p for kind, paths in done if kind == "serving" for p in paths]
    agentic = [p for kind, paths in done if kind == "agentic" for p in paths]

    submitted: list[Path] = []
    problems = 0
    for result_path in [*serving, *agentic]:
        path, report = submit_run(
            result_path.parent, submitter=DEMO_SUBMITTER, contact=None,
            relationship="independent", results_dir=results_dir,
        )
        submitted.append(path)
        if report.blocking:
            problems += 1
            click.echo(report.render("text"), err=True)
    if problems:
        raise RunError(f"{problems} demo result(s) did not validate; see the lines above")

    for path in serving:
        _print_serving(load_document(path))
    click.echo("\nAgentic suite:")
    for path in agentic:
        _print_agentic(load_document(path))
    click.echo(f"\nValidated {len(submitted)} result(s) under {results_dir}")

    site = build_site(results_dir=results_dir, out_dir=out / "_site", project=project_dir(),
                      base_url="")
    click.echo(f"\nSite: {site / 'index.html'}")
    click.echo("  (emulated results are hidden on the public leaderboard; the demo's links "
               "turn them on with ?emulated=1)")
    (site / DEMO_MARK).write_text(str(results_dir), encoding="utf-8")
    click.echo(serve_hint(site))
    click.echo(f"Done in {time.monotonic() - started:.0f} s.")
    return site


def serve_hint(site: Path) -> str:
    """How to look at the demo's site: a server on loopback only, not on every interface
    (`python -m http.server` alone binds 0.0.0.0)."""
    return (f"  serve it: python -m http.server --bind 127.0.0.1 -d {site} 8000, then open "
            "http://127.0.0.1:8000/?emulated=1")


def demo_site_note(out_dir: Path, results_dir: Path) -> str | None:
    """The line `epbench build` prints when `out_dir` holds the demo's site and this build is of
    other results (it replaces the demo's pages); None otherwise. The mark is removed, since the
    folder no longer holds the demo's site."""
    mark = out_dir / DEMO_MARK
    if not mark.is_file():
        return None
    demo_results = mark.read_text(encoding="utf-8").strip()
    if Path(demo_results).resolve() == results_dir.resolve():
        return None
    mark.unlink()
    return (f"epbench build: {out_dir} held the demo's site (results from {demo_results}); "
            f"it now holds the site of {results_dir} (run `epbench demo` again for the demo's, "
            "or build with --out elsewhere)")
