"""Client CPU per streamed request on each wire API: what the native APIs' translators cost.

    python bench/api_overhead.py                 # 1 repetition, 200 and 800 requests per API
    python bench/api_overhead.py --reps 3 --n1 400 --n2 1600

One emulator (the shipped endpoints/emulator.yaml settings, 64 output tokens per request)
serves all three APIs on loopback in its own process; this process runs epbench's
`EndpointClient` at concurrency 16 against each route in turn (interleaved per repetition, so
drift on a shared machine hits them alike). CPU is `resource.getrusage(RUSAGE_SELF)` user +
system around the requests only, and the figure is the marginal cost:
(cpu(N2) - cpu(N1)) / (N2 - N1). Printed: ms per request per API, and each native API's ratio
to openai-chat (`ratio <api>/openai-chat cpu_per_request: R`).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from epbench.core.documents import load_document  # noqa: E402
from epbench.runner.apis import API_NAMES  # noqa: E402
from epbench.runner.client import EndpointClient  # noqa: E402
from epbench.runner.emulator import start_emulator  # noqa: E402

CONCURRENCY = 16
TOKENS = 64
FAST = {"ttft_ms": 5, "tpot_ms": 2, "tpot_growth": 0.0, "jitter": 0.0, "slots": 64}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _requests(base_url: str, api: str, n: int) -> float:
    client = EndpointClient(base_url, None, None, 60.0, CONCURRENCY, api=api)
    todo = iter(range(n))
    failed = 0

    async def worker() -> None:
        nonlocal failed
        for i in todo:
            body = {"model": "emulated-8b", "max_tokens": TOKENS, "stream": True,
                    "ignore_eos": True,
                    "messages": [{"role": "user", "content": f"request {i} " + "word " * 120}]}
            res = await client.chat(body)
            failed += res.error_class is not None
    start = _cpu()
    try:
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    finally:
        await client.aclose()
    if failed:
        raise SystemExit(f"{api}: {failed} of {n} requests failed")
    return _cpu() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--n1", type=int, default=200)
    parser.add_argument("--n2", type=int, default=800)
    args = parser.parse_args()
    per_api: dict[str, list[float]] = {api: [] for api in API_NAMES}
    endpoint = load_document(ROOT / "endpoints" / "emulator.yaml")
    endpoint["emulator"].update(FAST)
    with start_emulator(endpoint) as emu:
        for _ in range(args.reps):
            small = {api: asyncio.run(_requests(emu.base_url, api, args.n1)) for api in API_NAMES}
            big = {api: asyncio.run(_requests(emu.base_url, api, args.n2)) for api in API_NAMES}
            for api in API_NAMES:
                per_api[api].append((big[api] - small[api]) / (args.n2 - args.n1) * 1000)
    chat = statistics.median(per_api["openai-chat"])
    for api in API_NAMES:
        ms = statistics.median(per_api[api])
        print(f"{api:<20} client CPU {ms:.3f} ms/request (reps: "
              f"{', '.join(f'{v:.3f}' for v in per_api[api])})")
    for api in API_NAMES[1:]:
        print(f"ratio {api}/openai-chat cpu_per_request: "
              f"{statistics.median(per_api[api]) / chat:.2f}")


if __name__ == "__main__":
    main()
