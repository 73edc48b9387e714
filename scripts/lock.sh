#!/bin/sh
# Regenerates .github/locks/privileged.txt: every package the privileged jobs (benchmark.yml,
# pages.yml) install, pinned with the sha256 of every file PyPI has for that version. Those
# jobs hold secrets or the Pages token, so they install only what this lock names
# (`pip install --require-hashes -r .github/locks/privileged.txt`), then epbench itself with
# `--no-deps --no-build-isolation`. Run it after changing pyproject.toml's dependencies, and
# monthly to take upstream fixes; review the diff like code. Needs uv (`pip install uv`).
set -eu
cd "$(dirname "$0")/.."
uv pip compile pyproject.toml .github/locks/privileged.in \
  --generate-hashes --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
  --custom-compile-command "scripts/lock.sh" --upgrade \
  -o .github/locks/privileged.txt
