#!/usr/bin/env bash
# Regenerates data/sample_bank.jsonl ("lab1") and data/sample_bank_lab2.jsonl ("lab2") from real
# tuning runs on this machine: every time in them is measured, every policy one the engine chose.
# lab1 tunes data/sample_lab1_ops.json; lab2 tunes data/sample_lab2_ops.json (12 of lab1's
# operators and 3 of its own) with another seed, so that merging the two has decisions to make.
# Takes about ten minutes on 2 cores; run it on a quiet machine and say which in data/README.md.
#   usage: scripts/make_sample_banks.sh [BUILD_DIR]   (default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
tb=${1:-build}/tilebank
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 scripts/make_sample_op_lists.py
for lab in lab1 lab2; do
  seed=$([ "$lab" = lab1 ] && echo 1 || echo 2)
  # exit 1 only when some operator failed to tune; the run's winners are still in the bank
  "$tb" tune -j 2 --singleop "data/sample_${lab}_ops.json" --bank "$work/$lab" --output "$work" --seed "$seed" || [ $? -eq 1 ]
done
"$tb" bank export --bank "$work/lab1" -o data/sample_bank.jsonl
"$tb" bank export --bank "$work/lab2" -o data/sample_bank_lab2.jsonl
"$tb" bank validate --bank "$work/lab1"
"$tb" bank validate --bank "$work/lab2"
wc -l data/sample_bank.jsonl data/sample_bank_lab2.jsonl
