#!/usr/bin/env bash
# Installs everything heed's build, tests and demo need, from Debian 12 packages.
# Non-interactive and idempotent: running it again changes nothing.
set -euo pipefail

packages=(
  g++ cmake make           # toolchain (Debian 12: GCC 12, CMake 3.25)
  libdnnl-dev              # oneDNN 2.6: the math kernels
  ocl-icd-opencl-dev       # asked for by oneDNN's CMake config
  libcli11-dev             # command line
  libspdlog-dev            # logging
  nlohmann-json3-dev       # configs, tokenizer and model metadata
  catch2                   # tests (Catch2 v2)
  pkgconf                  # finds cpp-httplib (it ships a pkg-config file, no CMake config)
  libcpp-httplib-dev       # heed serve's HTTP server (and the tests' and load benchmark's client)
  openmpi-bin libopenmpi-dev  # data-parallel training over processes and machines (mpirun)
)

export DEBIAN_FRONTEND=noninteractive
as_root=()
# sudo drops the environment: the setting is passed on explicitly.
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo env DEBIAN_FRONTEND=noninteractive); fi

"${as_root[@]}" apt-get update
"${as_root[@]}" apt-get install -y --no-install-recommends "${packages[@]}"
