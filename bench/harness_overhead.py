"""Client CPU per streamed request: epbench against peer load generators, same server, same load.

    python bench/harness_overhead.py                      # guidellm + aiperf, 1 repetition
    python bench/harness_overhead.py --reps 3 --peers aiperf --n1 400 --n2 1600

What it measures. Each client is one command (its whole process tree). The script starts it,
reaps it with `os.wait4`, and reads the kernel's user + system CPU seconds of that process and
of every descendant it waited for. Peers start several processes and import heavy libraries,
so whole-run CPU at small N is mostly start-up; the figure quoted is the MARGINAL cost:
run N1 and N2 requests and take (cpu(N2) - cpu(N1)) / (N2 - N1). Milliseconds per request are
also CPU seconds per 1,000 requests. Tools run interleaved (all tools at N1, then all at N2,
per repetition) against one server that stays up, so drift on this shared machine hits all of
them alike; the ratio is reported per repetition and as the median.

The server is GuideLLM's own `guidellm mock-server` (a third party to epbench: TTFT 50 ms,
ITL 5 ms, 64 tokens, one SSE event per token), or `--server emulator` for epbench's emulator.
The load: concurrency 16, 128 input tokens, 64 output tokens, no warm-up.

Peers live in virtualenvs of their own under bench/.peers/ (gitignored), created on first
use; they are never dependencies of epbench. GuideLLM pulls torch, so the local CPU wheel
(`torch==2.13.0`) is installed first. Both peers want a Hugging Face tokenizer and nothing can
be downloaded: bench/make_tokenizer.py trains a small byte-level BPE into bench/.cache/.

`--variants` adds epbench itself with uvloop hidden (a shim on PYTHONPATH makes `import uvloop`
fail, so the runner falls back to asyncio's own loop): the measured price of that choice.
`--baselines` adds two minimal clients written here (a plain httpx AsyncClient streaming loop,
on asyncio and on uvloop) for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = ROOT / "bench" / ".peers"
CACHE_DIR = ROOT / "bench" / ".cache"
# What the baseline clients send when no server was asked (their own --model flag).
DEFAULT_MODEL = "mock-model"


@dataclass(frozen=True)
class PeerSpec:
    """A peer load generator and how to install it into its own virtualenv."""

    name: str
    executable: str
    install_steps: tuple[tuple[str, ...], ...]

    @property
    def venv(self) -> Path:
        return PEERS_DIR / self.name

    @property
    def bin(self) -> Path:
        return self.venv / "bin" / self.executable


# Every version is pinned, the libraries the peers load included: a peer that moves on moves
# the figure (GuideLLM's mock server renamed its model once and the bench stopped running).
PEERS: dict[str, PeerSpec] = {
    # torch first: `pip install torch==2.13.0` takes the CPU wheel on this machine's disk,
    # where an unpinned torch pulled in by guidellm would be a multi-GB CUDA download.
    "guidellm": PeerSpec(
        "guidellm", "guidellm",
        (("torch==2.13.0",),
         ("guidellm==0.8.1", "tokenizers==0.23.3", "transformers==5.24.0")),
    ),
    "aiperf": PeerSpec("aiperf", "aiperf",
                      (("aiperf==0.13.0", "tokenizers==0.23.3", "transformers==5.24.0"),)),
}


@dataclass(frozen=True)
class Load:
    concurrency: int = 16
    input_tokens: int = 128
    output_tokens: int = 64


@dataclass
class Sample:
    tool: str
    requests: int
    cpu_s: float
    wall_s: float
    completed: int | None
    returncode: int


@dataclass
class Figures:
    samples: list[Sample] = field(default_factory=list)

    def marginal_ms(self, tool: str, rep: int, n1: int, n2: int) -> float:
        """Marginal client CPU in ms per request for one repetition."""
        mine = [s for s in self.samples if s.tool == tool]
        low = [s for s in mine if s.requests == n1][rep]
        high = [s for s in mine if s.requests == n2][rep]
        return (high.cpu_s - low.cpu_s) / (n2 - n1) * 1000.0


# ---------------------------------------------------------------- environments


def ensure_peer(spec: PeerSpec) -> Path:
    """Create the peer's virtualenv and install it on first use; return its executable."""
    marker = spec.venv / ".epbench-installed"
    wanted = json.dumps(spec.install_steps)
    if marker.is_file() and marker.read_text() == wanted and spec.bin.exists():
        return spec.bin
    print(f"# installing {spec.name} into {spec.venv} (first use; this takes minutes)",
          flush=True)
    if not (spec.venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(spec.venv)], check=True)
    pip = str(spec.venv / "bin" / "pip")
    for step in spec.install_steps:
        subprocess.run([pip, "install", "-q", *step], check=True)
    marker.write_text(wanted)
    return spec.bin


def ensure_tokenizer(python: Path) -> Path:
    """The local tokenizer folder, trained once with a peer venv's python."""
    out = CACHE_DIR / "tokenizer"
    if not (out / "tokenizer.json").is_file():
        subprocess.run([str(python), str(ROOT / "bench" / "make_tokenizer.py"), str(out)],
                       check=True, env=_offline_env())
    return out


def _offline_env(hub_offline: bool = True) -> dict[str, str]:
    """The environment for peers: no telemetry; the Hugging Face hub offline where it can be.

    AIPerf is the exception (`hub_offline=False`): in offline mode it looks a tokenizer up only
    in the hub cache and rejects a local folder. It loads the folder without any network.
    """
    env = dict(os.environ)
    env.update({"TOKENIZERS_PARALLELISM": "false", "DO_NOT_TRACK": "1"})
    if hub_offline:
        env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "HF_DATASETS_OFFLINE": "1"})
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"server did not listen on port {port} within {timeout_s}s")


# ---------------------------------------------------------------- the server


def start_mock_server(load: Load, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """GuideLLM's mock server (a third-party OpenAI-compatible server) on a free port."""
    guidellm = ensure_peer(PEERS["guidellm"])
    port = free_port()
    command = [str(guidellm), "mock-server", "--host", "127.0.0.1", "--port", str(port),
               "--ttft-ms", "50", "--itl-ms", "5", "--output-tokens", str(load.output_tokens)]
    proc = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            env=_offline_env())
    wait_for_port(port, proc)
    return proc, port


def start_emulator_server(log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """epbench's own emulator as a separate process (`epbench emulate`)."""
    port = free_port()
    command = [sys.executable, "-m", "epbench.cli", "emulate", "--port", str(port)]
    proc = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=ROOT)
    wait_for_port(port, proc)
    return proc, port


# ---------------------------------------------------------------- the clients


def served_model(port: int) -> str:
    """The first model id the server lists on /v1/models: the name every client sends.

    GuideLLM's mock server names its model itself (0.8.1: `llama-3.1-8b-instruct`) and
    epbench's preflight refuses a model the server does not list, so the name is asked, never
    assumed."""
    url = f"http://127.0.0.1:{port}/v1/models"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            doc = json.loads(answer.read())
        return str(doc["data"][0]["id"])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise SystemExit(f"{url}: no model id to send ({type(exc).__name__}: {exc})") from None


def epbench_command(port: int, model: str, load: Load, n: int, work: Path,
                    tool: str) -> list[str]:
    endpoint = work / "endpoint.yaml"
    endpoint.write_text(
        "kind: endpoint\nschema_version: 1\nid: harness-mock\nprovider: bench\n"
        f"model: {{name: {json.dumps(model)}}}\napi: openai-chat\n"
        f"base_url: http://127.0.0.1:{port}/v1\napi_key_env: null\n"
        "division: self-hosted\nregion: local\n"
        "pricing: {usd_per_hour: 1.0, effective_date: '2026-01-01'}\n"
    )
    workload = work / f"workload-{n}.yaml"
    workload.write_text(
        "kind: serving-workload\nschema_version: 1\nid: harness-overhead\nversion: '1.0'\n"
        "description: harness overhead benchmark load\nseed: 1\n"
        f"prompts: {{input_tokens: {{distribution: fixed, value: {load.input_tokens}}}, "
        f"max_tokens: {load.output_tokens}, ignore_eos: true}}\n"
        f"load: {{pattern: concurrency, concurrency: [{load.concurrency}], "
        f"requests_per_point: {n}, warmup_requests: 0}}\n"
        "timeout_s: 120\n"
    )
    return [sys.executable, "-m", "epbench.cli", "run", "--endpoint", str(endpoint),
            "--workload", str(workload), "--out", str(work / f"{tool}-out-{n}"),
            "--no-progress"]


def aiperf_command(port: int, model: str, load: Load, n: int, work: Path,
                   tokenizer: Path) -> list[str]:
    return [str(PEERS["aiperf"].bin), "profile", "-m", model,
            "--url", f"http://127.0.0.1:{port}", "--endpoint-type", "chat", "--streaming",
            "--concurrency", str(load.concurrency), "--request-count", str(n),
            "--tokenizer", str(tokenizer),
            "--synthetic-input-tokens-mean", str(load.input_tokens),
            "--synthetic-input-tokens-stddev", "0",
            "--output-tokens-mean", str(load.output_tokens),
            "--artifact-dir", str(work / f"aiperf-{n}"), "--ui-type", "none"]


def guidellm_command(port: int, model: str, load: Load, n: int, work: Path,
                     tokenizer: Path) -> list[str]:
    return [str(PEERS["guidellm"].bin), "run",
            "--backend", f"kind=openai_http,target=http://127.0.0.1:{port},model={model}",
            "--profile", f"kind=concurrent,streams={load.concurrency}",
            "--data", f"kind=synthetic_text,prompt_tokens={load.input_tokens},"
                      f"output_tokens={load.output_tokens}",
            "--tokenizer", f"kind=hf_auto,model={tokenizer}",
            "--constraint", f"kind=max_requests,count={n}",
            "--disable-console-interactive",
            "--output", f"kind=json,path={work / f'guidellm-{n}.json'}"]


def baseline_command(kind: str, port: int, model: str, load: Load, n: int) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--baseline-client", kind,
            "--url", f"http://127.0.0.1:{port}/v1/chat/completions", "--model", model,
            "--n", str(n), "--concurrency", str(load.concurrency),
            "--input-tokens", str(load.input_tokens), "--output-tokens", str(load.output_tokens)]


def completed_requests(tool: str, n: int, work: Path) -> int | None:
    """How many requests the tool reports as successful (None if its output is not found)."""
    try:
        if tool.startswith("epbench"):
            total = 0
            for result in (work / f"{tool}-out-{n}").rglob("result.json"):
                doc = json.loads(result.read_text())
                total += sum(p["requests"]["completed"] for p in doc["points"])
            return total
        if tool == "aiperf":
            doc = json.loads((work / f"aiperf-{n}" / "profile_export_aiperf.json").read_text())
            count = doc.get("request_count", {})
            return int(count.get("avg", count) if isinstance(count, dict) else count)
        if tool == "guidellm":
            doc = json.loads((work / f"guidellm-{n}.json").read_text())
            return int(doc["benchmarks"][0]["metrics"]["request_totals"]["successful"])
    except (OSError, KeyError, IndexError, TypeError, ValueError):
        return None
    return None


def _no_uvloop_shim() -> Path:
    """A folder whose `uvloop` module fails to import, to run epbench on asyncio's own loop."""
    shim = CACHE_DIR / "no-uvloop"
    shim.mkdir(parents=True, exist_ok=True)
    (shim / "uvloop.py").write_text('raise ImportError("uvloop hidden by harness_overhead")\n')
    return shim


def measure(tool: str, command: list[str], n: int, work: Path) -> Sample:
    """Run one client command to completion; CPU of its whole reaped process tree."""
    log = work / f"{tool}-{n}.log"
    env = _offline_env(hub_offline=tool != "aiperf")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if tool == "epbench-no-uvloop":
        env["PYTHONPATH"] = str(_no_uvloop_shim()) + os.pathsep + env["PYTHONPATH"]
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                cwd=work, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    completed = None if tool.startswith("baseline") else completed_requests(tool, n, work)
    if tool.startswith("baseline"):
        text = log.read_text(errors="replace").strip().splitlines()
        completed = int(text[-1].split()[-1]) if text and text[-1].startswith("ok ") else None
    sample = Sample(tool, n, usage.ru_utime + usage.ru_stime, wall, completed, proc.returncode)
    print(f"# {tool:18s} n={n:5d} cpu={sample.cpu_s:7.2f}s wall={wall:6.1f}s "
          f"completed={completed} rc={proc.returncode}", flush=True)
    if proc.returncode != 0:
        print(f"#   {tool} failed; last lines of {log}:", flush=True)
        for line in log.read_text(errors="replace").splitlines()[-8:]:
            print(f"#   {line}", flush=True)
    return sample


# ---------------------------------------------------------------- minimal baseline clients


def run_baseline_client(kind: str, url: str, model: str, n: int, concurrency: int,
                        input_tokens: int, output_tokens: int) -> None:
    """A minimal streaming client: the floor of what httpx (+uvloop) costs per request."""
    import httpx

    async def main() -> int:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        done = 0
        counter = iter(range(n))
        async with httpx.AsyncClient(limits=limits, timeout=120) as client:
            async def worker() -> None:
                nonlocal done
                for i in counter:
                    body = {"model": model, "stream": True, "max_tokens": output_tokens,
                            "stream_options": {"include_usage": True},
                            "messages": [{"role": "user",
                                          "content": f"{i} " + "word " * input_tokens}]}
                    first = None
                    async with client.stream("POST", url, json=body) as response:
                        buffer = b""
                        async for chunk in response.aiter_bytes():
                            buffer += chunk
                            while b"\n\n" in buffer:
                                event, buffer = buffer.split(b"\n\n", 1)
                                if first is None and b'"content"' in event:
                                    first = time.perf_counter_ns()
                    if response.status_code == 200:
                        done += 1
            await asyncio.gather(*(worker() for _ in range(concurrency)))
        return done

    if kind == "httpx-uvloop":
        import uvloop

        done = uvloop.run(main())
    else:
        done = asyncio.run(main())
    print(f"ok {done}")


# ---------------------------------------------------------------- the benchmark


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", default="guidellm,aiperf",
                        help="Comma-separated peers (guidellm, aiperf); '' for none.")
    parser.add_argument("--server", choices=["mock", "emulator"], default="mock")
    parser.add_argument("--n1", type=int, default=400)
    parser.add_argument("--n2", type=int, default=1600)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--baselines", action="store_true",
                        help="Also measure minimal httpx / httpx+uvloop clients.")
    parser.add_argument("--variants", action="store_true",
                        help="Also measure epbench without uvloop (asyncio's default loop).")
    parser.add_argument("--no-epbench", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    parser.add_argument("--baseline-client", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--url", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--model", default=DEFAULT_MODEL, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=16, help=argparse.SUPPRESS)
    parser.add_argument("--input-tokens", type=int, default=128, help=argparse.SUPPRESS)
    parser.add_argument("--output-tokens", type=int, default=64, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.baseline_client:
        run_baseline_client(args.baseline_client, args.url, args.model, args.n,
                            args.concurrency,
                            args.input_tokens, args.output_tokens)
        return 0

    load = Load()
    peers = [p for p in args.peers.split(",") if p]
    unknown = [p for p in peers if p not in PEERS]
    if unknown:
        parser.error(f"unknown peer(s): {', '.join(unknown)}; known: {', '.join(PEERS)}")
    for name in peers:
        ensure_peer(PEERS[name])
    tokenizer = ensure_tokenizer(PEERS[peers[0]].venv / "bin" / "python") if peers else None

    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    work = CACHE_DIR / f"run-{stamp}"
    work.mkdir(parents=True, exist_ok=True)
    if args.server == "mock":
        server, port = start_mock_server(load, work / "server.log")
    else:
        server, port = start_emulator_server(work / "server.log")
    model = served_model(port)

    tools = ([] if args.no_epbench else ["epbench"]) + peers
    if args.variants:
        tools.append("epbench-no-uvloop")
    if args.baselines:
        tools += ["baseline-httpx", "baseline-httpx-uvloop"]
    print(f"# {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')} server={args.server} "
          f"port={port} concurrency={load.concurrency} in={load.input_tokens} "
          f"out={load.output_tokens} model={model} n1={args.n1} n2={args.n2} reps={args.reps} "
          f"python={platform.python_version()} cpus={os.cpu_count()} work={work}", flush=True)

    figures = Figures()
    try:
        for rep in range(args.reps):
            for n in (args.n1, args.n2):
                for tool in tools:
                    rep_work = work / f"rep{rep}"
                    rep_work.mkdir(exist_ok=True)
                    if tool in ("epbench", "epbench-no-uvloop"):
                        command = epbench_command(port, model, load, n, rep_work, tool)
                    elif tool == "aiperf":
                        assert tokenizer is not None
                        command = aiperf_command(port, model, load, n, rep_work, tokenizer)
                    elif tool == "guidellm":
                        assert tokenizer is not None
                        command = guidellm_command(port, model, load, n, rep_work,
                                                   tokenizer)
                    else:
                        command = baseline_command(tool.removeprefix("baseline-"), port, model,
                                                   load, n)
                    figures.samples.append(measure(tool, command, n, rep_work))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()

    report: dict[str, object] = {"date": stamp, "server": args.server, "n1": args.n1,
                                 "n2": args.n2, "reps": args.reps, "load": load.__dict__,
                                 "ms_per_request": {}, "ratios": {}}
    per_tool: dict[str, list[float]] = {
        tool: [figures.marginal_ms(tool, r, args.n1, args.n2) for r in range(args.reps)]
        for tool in tools
    }
    for tool, values in per_tool.items():
        median = statistics.median(values)
        report["ms_per_request"][tool] = values  # type: ignore[index]
        print(f"{tool}: marginal client CPU {median:.2f} ms/request "
              f"(= CPU s per 1,000 requests; per rep: "
              f"{', '.join(f'{v:.2f}' for v in values)})")
    if "epbench" in per_tool:
        for tool in tools:
            if tool == "epbench":
                continue
            ratios = [e / p for e, p in zip(per_tool["epbench"], per_tool[tool], strict=True)]
            report["ratios"][tool] = ratios  # type: ignore[index]
            print(f"ratio epbench/{tool} cpu_per_request: {statistics.median(ratios):.2f} "
                  f"(per rep: {', '.join(f'{r:.2f}' for r in ratios)}; "
                  f"epbench {statistics.median(per_tool['epbench']):.2f} ms/request, "
                  f"{tool} {statistics.median(per_tool[tool]):.2f} ms/request)")
    incomplete = [s for s in figures.samples
                  if s.returncode != 0 or (s.completed is not None and s.completed != s.requests)]
    for s in incomplete:
        print(f"# warning: {s.tool} n={s.requests} completed={s.completed} rc={s.returncode}")
    if args.json:
        report["samples"] = [s.__dict__ for s in figures.samples]
        args.json.write_text(json.dumps(report, indent=2))
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
