#!/usr/bin/env bash
# Installs the Debian 12 packages tilebank builds, tests and benchmarks with. Idempotent.
#   setup.sh            what the build needs
#   setup.sh --models   and PyTorch, torchvision and ONNX for Python, which scripts/export_models.py
#                       exports the demo's, the benchmark's, the zoo's and the tests' models with
#                       (scripts/test.sh installs these)
#   setup.sh --cluster  and Slurm, munge and Open MPI, which batch tuning runs on and its tests start
#                       (scripts/cluster/local_slurm.sh; scripts/test.sh installs these too)
#   setup.sh --browser  and Chromium, which the report tests open the HTML reports in (headless)
#   setup.sh --ort      and Node.js with npm's onnxruntime-node 1.30.0 in bench/ort/node_modules: ONNX
#                       Runtime's CPU provider, the anchor of the benches and the zoo (never linked)
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git python3   # ninja: scripts/build.sh compiles every layer's sources in parallel
  iproute2   # GDAT: scripts/netns_cluster.sh (network namespaces, veth, tc tbf)
  liblmdb-dev lmdb-utils libflatbuffers-dev flatbuffers-compiler libcli11-dev libxxhash-dev
  nlohmann-json3-dev doctest-dev libsqlite3-dev
  libhalide14-0-dev libdnnl-dev libopenblas-dev libhwy-dev   # the engine: Halide JIT, Impl-mode libraries, SIMD kernels
  ocl-icd-opencl-dev   # oneDNN's CMake config requires OpenCL (Debian builds it with the GPU runtime; only a Recommends)
  libeigen3-dev   # the search strategies' cost model
  clang libclang-rt-14-dev   # libFuzzer targets
  libonnx-dev libprotobuf-dev libonnx-testdata   # ONNX backend node tests
  python3-dev pybind11-dev python3-numpy python3-pytest   # the Python extension (python/) and its tests
)
model_packages=(python3-torch python3-torchvision python3-onnx)
cluster_packages=(slurm-wlm munge openmpi-bin)
ort_packages=(nodejs npm)
ort=0
for option in "$@"; do
  case "$option" in
    --models) packages+=("${model_packages[@]}") ;;
    --cluster) packages+=("${cluster_packages[@]}") ;;
    --browser) packages+=(chromium fonts-dejavu-core) ;;   # fonts: the screenshots show their text
    --ort)  # Debian's nodejs and npm, unless a Node.js with npm is there already (another source's conflicts with them)
      command -v node >/dev/null && command -v npm >/dev/null || packages+=("${ort_packages[@]}")
      ort=1 ;;
    *) echo "setup.sh: unknown option $option (--models, --cluster, --browser, --ort)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ((ort)) && [ ! -d "$(dirname "$0")/../bench/ort/node_modules/onnxruntime-node" ]; then
  # --ignore-scripts: the package's install script fetches GPU binaries from a host these machines
  # cannot reach; the CPU library ships inside the package.
  (cd "$(dirname "$0")/../bench/ort" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
