#!/usr/bin/env bash
# The main job: a real model (MobileNetV2, exported by PyTorch at opset 17) run with default
# policies, tuned: operators first (OPAT, a small budget: a few minutes on 2 cores, bf16 allowed
# where the CPU has it), then subgraphs (SGAT, each fusion judged against the tuned operators), run tuned and checked against PyTorch's output; the sample operator list tuned into a fresh bank and
# again (all hits); then the bank tools: load two machines' sample banks, merge them, query, diff,
# validate, and check that export -> import -> export round-trips.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --models
BUILD_TARGETS=tilebank bash scripts/build.sh -DTILEBANK_BENCH=OFF   # only the command line: the demo runs nothing else
model=$(/usr/bin/python3 scripts/export_models.py mobilenet_v2 2>/dev/null)
tb=build/tilebank
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
soc=$(head -1 data/sample_bank.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["soc_version"])')
set -x
$tb run -m "$model/model.onnx" --data "$model/test_data_set_0" --bank "$work/model" --repeat 20          # default policies
# OPAT; bf16 kernels may be tried where the CPU computes bf16 natively (README: precision)
$tb tune -j 2 -m "$model/model.onnx" --bank "$work/model" --output "$work" --trials 12 --time-budget 240 --precision-mode allow_fp32_to_bf16
$tb tune -j 1 -m "$model/model.onnx" --bank "$work/model" --output "$work"                              # SGAT: fused subgraphs
$tb run -m "$model/model.onnx" --data "$model/test_data_set_0" --bank "$work/model" --repeat 20          # tuned, checked against PyTorch
$tb report "$work"/aoe_result_*.json -o build/demo_tuning_report.html                           # both jobs: trials, knobs, tasks over time
$tb report --bank "$work/model" --model "$model/model.onnx" -o build/demo_bank_report.html       # the bank and the model's coverage
$tb tune --job-type 2 --singleop data/ops_sample.json --bank "$work/tuned" --output "$work"
$tb tune -j 2 --singleop data/ops_sample.json --bank "$work/tuned" --output "$work"   # every winner is now a hit
$tb bank stats --bank "$work/tuned"
$tb bank query --bank "$work/tuned" data/ops_sample.json || [ $? -eq 1 ]  # 1: ops whose default was not beaten have no entry
$tb bank import data/sample_bank.jsonl --bank "$work/lab1"
$tb bank import data/sample_bank_lab2.jsonl --bank "$work/lab2"
$tb bank stats --bank "$work/lab1" --soc "$soc"
$tb bank merge "$work/lab2" --into "$work/lab1"
$tb bank diff "$work/lab1@1" "$work/lab1" --soc "$soc" || [ $? -eq 1 ]
$tb bank query --bank "$work/lab1" --soc "$soc" data/query_ops.json || [ $? -eq 1 ]  # 1: some op has no entry
$tb bank query --bank "$work/lab1" --soc "$soc" --fallback nearest \
  '{"op":"MatMul","input_desc":[{"shape":[100,768],"type":"float"},{"shape":[768,768],"type":"float"}],"output_desc":[{"shape":[100,768],"type":"float"}]}'
$tb bank validate --bank "$work/lab1" --soc "$soc"
$tb bank export --bank "$work/lab2" --soc "$soc" -o "$work/lab2.jsonl"
cmp "$work/lab2.jsonl" data/sample_bank_lab2.jsonl
set +x
echo "demo finished: merged bank validates clean and the export round-trips"
echo "reports: build/demo_tuning_report.html (MobileNetV2's SGAT and OPAT jobs), build/demo_bank_report.html (its bank)"
