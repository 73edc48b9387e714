"""The runner's peak memory against answers of the largest deltas the caps allow.

    python bench/stream_memory.py                          # 64 answers x 8 deltas of 4 MiB
    python bench/stream_memory.py --streams 64 --deltas 63 # every byte the response cap allows
    python bench/stream_memory.py --streams 4 --deltas 65 --size 3900000

A loopback server (tests/hostile_servers.py) sends `--streams` concurrent answers of
`--deltas` text deltas, each SSE event `--size` bytes; one `EndpointClient` in a child process
reads them all (tests/stream_memory.py). Prints the child's peak resident memory (VmHWM), the
time and each answer's class, beside the 1 GB target (issue 21).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.stream_memory import MIB, measure

TARGET_MB = 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=64)
    parser.add_argument("--deltas", type=int, default=8)
    parser.add_argument("--size", type=int, default=4 * MIB - 16,
                        help="bytes of each event before its blank line (max_event_bytes: 4 MiB)")
    args = parser.parse_args()
    peak = measure(args.streams, args.deltas, args.size, timeout_s=3600)
    label = f"{args.streams} answers x {args.deltas} deltas of {args.size} bytes"
    print(peak.line(label))
    print(f"peak RSS {peak.peak_mb:.0f} MB, target < {TARGET_MB} MB: "
          f"{'ok' if peak.peak_mb < TARGET_MB else 'OVER'}")
    return 0 if peak.peak_mb < TARGET_MB else 1


if __name__ == "__main__":
    raise SystemExit(main())
