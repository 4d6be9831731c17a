#!/usr/bin/env bash
# Installs rsim's build and test dependencies from Debian 12 packages (run as root).
set -euo pipefail
packages=(build-essential cmake ninja-build clang-format clang-tidy
          libyaml-cpp-dev libeigen3-dev libboost-graph-dev libtbb-dev
          catch2 libbenchmark-dev libfmt-dev nlohmann-json3-dev libcli11-dev
          clang libclang-rt-14-dev  # the fuzz preset: clang 14 and its libFuzzer
          librsvg2-bin chromium)  # the last two render the charts and the HTML report in tests
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
