#!/usr/bin/env bash
# Installs rsim's dependencies from Debian 12 packages (run as root).
#   tools/install-deps.sh          what building and running rsim need
#   tools/install-deps.sh --test   and what the test command needs besides: Catch2, clang 14 with
#                                  libFuzzer, clang-format/clang-tidy, Google Benchmark, and the
#                                  renderers of the chart and HTML tests (librsvg, Chromium),
#                                  python3 (the GPU measurement script's grid test), and the
#                                  Python module's build and tests: pybind11, pytest, pandas,
#                                  dask, distributed, venv and pip (pip install .)
set -euo pipefail
packages=(build-essential cmake ninja-build
          libyaml-cpp-dev libeigen3-dev libboost-graph-dev libtbb-dev
          libfmt-dev nlohmann-json3-dev libcli11-dev)
case "${1:-}" in
  "") ;;
  --test)
    packages+=(catch2 clang-format clang-tidy libbenchmark-dev
               clang libclang-rt-14-dev  # the clang and fuzz presets: clang 14 and its libFuzzer
               librsvg2-bin chromium     # render the charts and the HTML report in tests
               python3                   # tools/measure/measure_gpu.py's grid test
               pybind11-dev python3-dev  # the Python module (python/), built by the clang preset
               python3-pytest python3-pandas python3-dask python3-distributed python3-yaml
               python3-venv python3-pip python3-setuptools python3-wheel)  # pip install .
    ;;
  *)
    echo "tools/install-deps.sh: unknown option '$1' (expected none, or --test)" >&2
    exit 2
    ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
