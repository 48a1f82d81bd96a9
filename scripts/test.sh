#!/usr/bin/env bash
# Installs what is needed, builds with clang (so the libFuzzer targets are built too), checks that
# the build read nothing a fresh machine lacks, and runs the whole test suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --models --cluster --browser --ort   # the model-zoo test exports its models with PyTorch and asks ONNX Runtime where PyTorch differs; batch tests start Slurm and mpirun; report tests open Chromium
BUILD_DIR=build-test bash scripts/build.sh -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DTILEBANK_FUZZ=ON
# A header or library the build read that setup.sh does not install fails here, naming both.
python3 scripts/check_build_packages.py build-test
cd build-test
ctest --output-on-failure -j2 --timeout 600
