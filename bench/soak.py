"""Does the runner's memory stay flat however many requests it serves?

    python bench/soak.py [--minutes 10] [--streams 64] [--tokens 32]

Starts the emulator (fast settings, one slot per stream) and drives it for `--minutes` with
the serving runner's own request path (`ServingRunner._one`: request body, client, retries,
journal line, progress) from `--streams` closed-loop workers, each sending its next request
as soon as its last one finished, every request journaled to a scratch events.jsonl. The
runner's resident memory (VmRSS of this process) is read at start (after the first 5% of the
time, once connections and caches are warm), in the middle and at the end, and printed with
the ratio end/middle: a runner that kept something per request would grow between the middle
and the end by as much as it did before the middle. Target: ratio under 1.05.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from epbench.core.documents import load_document  # noqa: E402
from epbench.core.journal_file import Journal  # noqa: E402
from epbench.core.paths import shipped_endpoints_dir  # noqa: E402
from epbench.runner.bounds import Bounds  # noqa: E402
from epbench.runner.client import EndpointClient  # noqa: E402
from epbench.runner.context import RunContext  # noqa: E402
from epbench.runner.emulator import start_emulator  # noqa: E402
from epbench.runner.entry import run_async  # noqa: E402
from epbench.runner.plan import Plan, PlannedRequest  # noqa: E402
from epbench.runner.progress import PointProgress  # noqa: E402
from epbench.runner.runner import ServingRunner  # noqa: E402
from epbench.runner.workload import ServingWorkload  # noqa: E402


def rss_mb() -> float:
    """This process's resident set size (VmRSS), in MB."""
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def workload(tokens: int) -> ServingWorkload:
    return ServingWorkload(
        path=Path("soak.yaml"), doc={}, sha256="0" * 64, id="soak", version="1", seed=1,
        pattern="concurrency", load={}, prompts={"max_tokens": tokens, "ignore_eos": True},
    )


async def soak(base_url: str, folder: Path, seconds: float, streams: int, tokens: int) -> None:
    endpoint = load_document(shipped_endpoints_dir() / "emulator.yaml")
    client = EndpointClient(base_url, None, None, 30.0, streams, bounds=Bounds(timeout_s=30.0))
    with Journal(folder / "events.jsonl") as journal:
        ctx = RunContext(run_id="soak", run_dir=folder, endpoint=endpoint, base_url=base_url,
                         client=client, journal=journal)
        plan = Plan("soak", "soak", "0" * 64, "concurrency", 1, False, [])
        runner = ServingRunner(ctx, workload(tokens), plan)
        bar = PointProgress("soak", 0, "off")
        start = time.monotonic()
        marks = {"start": 0.05, "middle": 0.5}
        samples: dict[str, tuple[float, int]] = {}
        sent = 0

        async def worker(index: int) -> None:
            nonlocal sent
            seq = 0
            while time.monotonic() - start < seconds:
                req = PlannedRequest(f"w{index}-{seq:08d}", "c", seq, False, 128)
                await runner._one(req, None, bar)
                seq += 1
                sent += 1

        async def sampler() -> None:
            for name, share in marks.items():
                await asyncio.sleep(max(0.0, start + share * seconds - time.monotonic()))
                samples[name] = (rss_mb(), sent)

        try:
            await asyncio.gather(sampler(), *(worker(i) for i in range(streams)))
        finally:
            await client.aclose()
        samples["end"] = (rss_mb(), sent)
    for name in ("start", "middle", "end"):
        mb, count = samples[name]
        print(f"rss {name}: {mb:.1f} MB after {count} requests")
    failed = sum(1 for line in (folder / "events.jsonl").open() if '"class":"ok"' not in line)
    print(f"requests: {sent} ({sent / seconds:.0f}/s), failed: {failed}")
    ratio = samples["end"][0] / samples["middle"][0]
    print(f"ratio end/middle rss: {ratio:.3f} (target < 1.05)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--streams", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=32)
    args = parser.parse_args()
    document = load_document(shipped_endpoints_dir() / "emulator.yaml")
    document["emulator"].update(slots=args.streams, ttft_ms=2, prefill_ms_per_1k_tokens=1,
                                tpot_ms=1, tpot_growth=0.0, jitter=0.0)
    with tempfile.TemporaryDirectory(prefix="epbench-soak-") as tmp, \
            start_emulator(document) as emulator:
        run_async(soak(emulator.base_url, Path(tmp), args.minutes * 60, args.streams,
                       args.tokens))
    return 0


if __name__ == "__main__":
    sys.exit(main())
