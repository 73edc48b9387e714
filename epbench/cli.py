"""The `epbench` command: a thin layer over the runner (`runner`) and the generator.

This is the one module that imports both halves of the flow, lazily per sub-command, so that
`epbench validate` never loads httpx and `epbench run` never loads pandas. Errors a user can
cause (EpbenchError) print as one line and exit 1 (2 for usage); bugs still raise.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from epbench import __version__
from epbench.core.errors import EpbenchError
from epbench.generator.importers import IMPORTERS


class _Group(click.Group):
    """Turns EpbenchError into one line on stderr and exit code 1."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except EpbenchError as exc:
            click.echo(f"epbench: error: {exc}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("epbench: interrupted", err=True)
            ctx.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="epbench")
def main() -> None:
    """epbench: benchmark LLM inference endpoints and publish a static leaderboard."""


@main.command()
@click.option("--endpoint", "endpoint", default=None,
              help="Endpoint file, or the id of one under endpoints/ (default: emulator).")
@click.option("--workload", "workload", default=None,
              help="Workload file or id (serving or agentic), or a folder of agentic workloads.")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Folder that holds runs/<run-id>/ (default: ./runs).")
@click.option("--resume", "resume", type=click.Path(path_type=Path), default=None,
              help="A run folder to finish: its plan names the endpoint and workload, and "
                   "requests already in its journal are not sent again.")
@click.option("--quick", is_flag=True, help="Shorter points (demos, CI); every point kept.")
@click.option("--client-region", default=None, envvar="EPBENCH_CLIENT_REGION",
              help="Where this client runs, recorded in the result.")
@click.option("--shard", default=None, metavar="I/N",
              help="Run only shard I of N of the plan; join shards with `epbench merge`.")
@click.option("--no-progress", is_flag=True, help="No progress bars or progress lines.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the end-of-run summary as JSON instead of a table.")
@click.option("--url", "--base-url", "url", default=None,
              help="A run without YAML: the endpoint's base URL (e.g. http://127.0.0.1:8000/v1);"
                   " the endpoint and workload files it means are written into the run folder.")
@click.option("--model", default=None, help="With --url: the model name the API takes.")
@click.option("--api", default="openai-chat", show_default=True,
              type=click.Choice(["openai-chat", "openai-responses", "anthropic-messages"]),
              help="With --url: the API the endpoint speaks.")
@click.option("--api-key-env", default=None, metavar="NAME",
              help="With --url: the environment variable that holds the API key.")
@click.option("--concurrency", default=None, metavar="N[,N...]",
              help="With --url: a closed-loop sweep over these concurrencies (default 1).")
@click.option("--rate", default=None, metavar="RPS[,RPS...]",
              help="With --url: open-loop Poisson arrivals at these rates instead.")
@click.option("--input-tokens", "--isl", "input_tokens", default=128, show_default=True,
              type=click.IntRange(1, 1_000_000), help="With --url: prompt length in tokens.")
@click.option("--output-tokens", "--osl", "output_tokens", default=128, show_default=True,
              type=click.IntRange(1, 131072), help="With --url: max_tokens asked for.")
@click.option("--requests", default=None, type=click.IntRange(1, 1_000_000),
              help="With --url: requests per point (default 64).")
@click.option("--duration", default=None, type=click.FloatRange(min=0, min_open=True),
              help="With --url and --rate: seconds of arrivals per point at the highest rate.")
@click.option("--warmup", default=2, show_default=True, type=click.IntRange(0, 100000),
              help="With --url: warm-up requests per point, not measured.")
@click.option("--seed", default=1, show_default=True, type=int,
              help="With --url: the seed of prompts and arrivals.")
def run(endpoint: str | None, workload: str | None, out: Path | None, resume: Path | None,
        quick: bool, client_region: str | None, shard: str | None, no_progress: bool,
        as_json: bool, url: str | None, model: str | None, api: str, api_key_env: str | None,
        concurrency: str | None, rate: str | None, input_tokens: int, output_tokens: int,
        requests: int | None, duration: float | None, warmup: int, seed: int) -> None:
    """Run one workload against one endpoint and write runs/<run-id>/result.json.

    Exit status: 0 when the run measured what it set out to; 1 when it could not start (bad
    input, the preflight found the endpoint unreachable, the key refused or the model
    unknown); 3 when it ran but every request of a point failed, or no agentic trial got
    past the endpoint; 130 when interrupted (finish it with --resume RUN_DIR).
    """
    import json

    from epbench.core.paths import resolve_endpoint, resolve_workload
    from epbench.runner.entry import run_command
    from epbench.runner.report import render, report

    inputs = None
    if url is not None:
        if endpoint or workload or resume:
            raise click.UsageError("--url replaces --endpoint and --workload (and --resume)")
        inputs = _quick_inputs(url, model, api, api_key_env, concurrency, rate, input_tokens,
                               output_tokens, requests, duration, warmup, seed, out)
        endpoint, workload = (str(p) for p in inputs)
    elif model is not None:
        raise click.UsageError("--model goes with --url (an endpoint file names its model)")
    if workload is None and resume is None:
        raise click.UsageError("give --workload (and --endpoint), --url URL --model M, "
                               "or --resume RUN_DIR")
    if resume is None and endpoint is None:
        endpoint = "emulator"
    from epbench.runner.progress import auto_mode

    mode = "off" if no_progress else auto_mode()
    results = run_command(
        endpoint=resolve_endpoint(endpoint) if endpoint else None,
        workload=resolve_workload(workload) if workload else None,
        out=out.resolve() if out is not None else None,
        resume=resume.resolve() if resume is not None else None,
        quick=quick,
        client_region=client_region,
        shard=shard,
        progress=mode,
    )
    if inputs is not None:
        from epbench.runner.quick_path import keep_inputs

        for path in results:
            keep_inputs(inputs, path.parent)
    summaries = [report(json.loads(p.read_text(encoding="utf-8")), str(p)) for p in results]
    if as_json:
        click.echo(json.dumps(summaries if len(summaries) != 1 else summaries[0], indent=1))
    else:
        click.echo("\n\n".join(render(s) for s in summaries))
    if any(s["problems"] for s in summaries):
        sys.exit(3)


def _quick_inputs(url: str, model: str | None, api: str, api_key_env: str | None,
                  concurrency: str | None, rate: str | None, input_tokens: int,
                  output_tokens: int, requests: int | None, duration: float | None,
                  warmup: int, seed: int, out: Path | None) -> tuple[Path, Path]:
    """The endpoint and workload files of a run without YAML (epbench.runner.quick_path)."""
    from epbench.runner.quick_path import QuickRun, parse_list, write_inputs

    if not model:
        raise click.UsageError("--url needs --model (the model name the API takes)")
    if concurrency and rate:
        raise click.UsageError("give --concurrency or --rate, not both")
    spec = QuickRun(
        url=url, model=model, api=api, api_key_env=api_key_env,
        concurrency=tuple(int(c) for c in parse_list(concurrency, int, "--concurrency"))
        if concurrency else (1,),
        rates=parse_list(rate, float, "--rate") if rate else (),
        input_tokens=input_tokens, output_tokens=output_tokens, requests=requests,
        duration_s=duration, warmup=warmup, seed=seed,
    )
    return write_inputs(spec, (out or Path("runs")).resolve())


@main.group()
def endpoint() -> None:
    """Endpoint files: `epbench endpoint new` writes a commented one to fill in."""


@endpoint.command("new")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--url", "--base-url", "url", default="http://127.0.0.1:8000/v1", show_default=True,
              help="The endpoint's base URL.")
@click.option("--model", default="my-model", show_default=True, help="The model name.")
@click.option("--division", type=click.Choice(["self-hosted", "serviced"]),
              default="self-hosted", show_default=True,
              help="self-hosted: priced per hour; serviced: priced per million tokens.")
@click.option("--api", default="openai-chat", show_default=True,
              type=click.Choice(["openai-chat", "openai-responses", "anthropic-messages"]))
@click.option("--api-key-env", default=None, metavar="NAME",
              help="The environment variable that holds the API key.")
@click.option("--id", "endpoint_id", default=None, help="The endpoint id (default: from URL).")
def endpoint_new(path: Path, url: str, model: str, division: str, api: str,
                 api_key_env: str | None, endpoint_id: str | None) -> None:
    """Write a commented endpoint file to PATH (refuses to overwrite one)."""
    from epbench.runner.quick_path import endpoint_text

    if path.exists():
        raise click.UsageError(f"{path} exists; give another path")
    path.write_text(endpoint_text(url, model, api, api_key_env, division, endpoint_id),
                    encoding="utf-8")
    click.echo(f"wrote {path}: fill in the fields marked 'fill it in', then "
               f"`epbench validate {path}`")


@main.command()
@click.option("--config", "config", type=click.Path(path_type=Path), default=None,
              help="Endpoint file with an emulator: block (default: the shipped emulator).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int, help="0 picks a free port.")
@click.option("--workloads", "workload_dirs", multiple=True, type=click.Path(path_type=Path),
              help="Agentic workload folders the emulator can play (default: the shipped ones).")
def emulate(config: Path | None, host: str, port: int, workload_dirs: tuple[Path, ...]) -> None:
    """Run the endpoint emulator: chat completions, Responses and Messages on one server."""
    from epbench.core.paths import resolve_endpoint
    from epbench.runner.emulator import serve

    serve(
        config=resolve_endpoint(str(config) if config else "emulator"),
        host=host,
        port=port,
        workload_dirs=list(workload_dirs) or None,
    )


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True)
@click.option("--changed-since", default=None, metavar="REF",
              help="Check only files a branch adds or changes since REF (git).")
@click.option("--output", "output", type=click.Path(path_type=Path), default=None,
              help="Write the report here instead of standard output.")
def validate(paths: tuple[Path, ...], fmt: str, changed_since: str | None,
             output: Path | None) -> None:
    """Check results, workloads and endpoint files; exit 1 if anything is rejected."""
    from epbench.generator.validate import validate_paths
    from epbench.runner.agentic.semantics import validate_workload_semantics

    report = validate_paths(
        list(paths) or [Path(".")],
        changed_since=changed_since,
        workload_semantics=validate_workload_semantics,
    )
    text = report.render(fmt)
    if output:
        output.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=not text.endswith("\n"))
    sys.exit(1 if report.blocking else 0)


@main.command()
@click.option("--results", "results_dir", type=click.Path(path_type=Path), default=None,
              help="Results folder (default: ./results).")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Site folder (default: ./_site).")
@click.option("--base-url", default="", help="Public URL of the site, for permalinks.")
@click.option("--no-cache", is_flag=True,
              help="Build everything from the committed files, with no build cache (the "
                   "cache otherwise lives in $XDG_CACHE_HOME/epbench, never in the checkout).")
def build(results_dir: Path | None, out: Path | None, base_url: str, no_cache: bool) -> None:
    """Build the static leaderboard site from results/, workloads/ and endpoints/."""
    from epbench.core.paths import project_dir
    from epbench.demo import demo_site_note
    from epbench.generator.site import build_site

    root = project_dir()
    results_dir = results_dir or root / "results"
    out = out or root / "_site"
    note = demo_site_note(out, results_dir)
    if note:
        click.echo(note)
    site = build_site(
        results_dir=results_dir,
        out_dir=out,
        project=root,
        base_url=base_url,
        incremental=not no_cache,
    )
    click.echo(f"site: {site / 'index.html'}")


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--submitter", required=True, help="Your id: the folder under results/.")
@click.option("--contact", default=None, help="How to reach you (e-mail or GitHub handle).")
@click.option("--relationship", type=click.Choice(["provider", "customer", "independent"]),
              default="independent", show_default=True)
@click.option("--results", "results_dir", type=click.Path(path_type=Path), default=None)
def submit(run_dir: Path, submitter: str, contact: str | None, relationship: str,
           results_dir: Path | None) -> None:
    """Copy a run's result to its place under results/, fill the submitter block, validate it."""
    from epbench.core.paths import project_dir
    from epbench.generator.submit import submit_run

    path, report = submit_run(
        run_dir,
        submitter=submitter,
        contact=contact,
        relationship=relationship,
        results_dir=results_dir or project_dir() / "results",
    )
    click.echo(report.render("text"), nl=False)
    click.echo(f"submitted: {path}")
    sys.exit(1 if report.blocking else 0)


IMPORT_HELP = "Convert another tool's output into epbench results.\n\nFORMAT is one of:\n\n\b\n" + \
    "\n".join(f"  {i.kind}: PATH is {i.reads}" for i in IMPORTERS.values())


@main.command(name="import", help=IMPORT_HELP, short_help="Convert another tool's output into "
              "epbench results.")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(list(IMPORTERS)))
@click.argument("path", type=click.Path(path_type=Path, exists=True))
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="Where to write the results (e.g. results/<submitter>), or for bfcl the "
                   "workloads (e.g. workloads/agentic/).")
@click.option("--submitter", default=None, help="Submitter id for the imported results.")
@click.option("--date", "date", default=None, metavar="YYYY-MM-DD",
              help="When the run happened (UTC), for sources that do not record it.")
@click.option("--sample", type=click.IntRange(min=1), default=None,
              help="bfcl: keep a seeded sample of N tasks per category.")
@click.option("--seed", type=int, default=0, show_default=True, help="bfcl: the sample's seed.")
def import_(fmt: str, path: Path, out: Path, submitter: str | None, date: str | None,
            sample: int | None, seed: int) -> None:
    if IMPORTERS[fmt].writes == "workloads":
        from epbench.generator.importers import import_workloads

        for written in import_workloads(fmt, path, out, sample=sample, seed=seed,
                                        echo=click.echo):
            click.echo(str(written))
        return
    from datetime import UTC, datetime

    from epbench.core.errors import InputError
    from epbench.generator.importers import import_results

    when = None
    if date is not None:
        try:
            when = datetime.fromisoformat(date)
        except ValueError:
            raise InputError(f"--date {date!r}: write it as YYYY-MM-DD or an ISO date-time") \
                from None
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
    for written in import_results(fmt, path, out, submitter=submitter, when=when):
        click.echo(str(written))


@main.command()
@click.option("--endpoints", "endpoints_dir", type=click.Path(path_type=Path), default=None)
@click.option("--endpoint", "only_endpoint", default=None, help="Only this endpoint id.")
@click.option("--workload", "only_workload", default=None, help="Only this workload id.")
@click.option("--region", "only_region", default=None, help="Only runners in this client region.")
@click.option("--shards", default=1, show_default=True, type=int,
              help="Split each run into this many matrix jobs.")
@click.option("--allowlist", type=click.Path(path_type=Path), default=None,
              help="Endpoint secrets, hosts and runner labels maintainers allow "
                   "(default: .github/benchmark-allowlist.yaml beside the endpoints folder).")
def matrix(endpoints_dir: Path | None, only_endpoint: str | None, only_workload: str | None,
           only_region: str | None, shards: int, allowlist: Path | None) -> None:
    """Print the GitHub Actions matrix (JSON) for endpoints with `schedule: enabled`."""
    from epbench.core.paths import project_dir
    from epbench.runner.matrix import build_matrix

    click.echo(
        build_matrix(
            endpoints_dir or project_dir() / "endpoints",
            endpoint=only_endpoint,
            workload=only_workload,
            region=only_region,
            shards=shards,
            allowlist=allowlist,
        ).to_json()
    )


@main.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="The run folder to write (events.jsonl and result.json).")
def merge(run_dirs: tuple[Path, ...], out: Path) -> None:
    """Join the journals of a run's shards into one result."""
    from epbench.runner.merge import merge_runs

    click.echo(str(merge_runs(list(run_dirs), out)))


@main.command()
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Working folder (default: the current directory).")
@click.option("--full", is_flag=True, help="Full-length points instead of --quick ones.")
def demo(out: Path | None, full: bool) -> None:
    """Start the emulator, run a serving sweep and the agentic suite, validate, build the site."""
    from epbench.demo import run_demo

    run_demo(out or Path(os.getcwd()), quick=not full)


if __name__ == "__main__":  # pragma: no cover
    main()
