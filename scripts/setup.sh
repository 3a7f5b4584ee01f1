#!/usr/bin/env bash
# Installs every Debian package INA-Sim needs (only the missing ones) and builds
# the project in ./build (Release). Safe to run again: it does only what is left.
# Extra CMake flags: INASIM_CMAKE_ARGS="-DINASIM_WERROR=ON" scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake git
  ns3 libns3-dev libgsl-dev          # ns-3.37; its CMake config needs the ns3 tools package and GSL to link
  libboost-graph-dev libfmt-dev nlohmann-json3-dev libgtest-dev pybind11-dev zlib1g-dev
  python3 python3-dev python3-venv python3-numpy python3-pandas python3-matplotlib python3-pytest
  python3-distributed                # sweeps on a Dask cluster (inasim sweep --scheduler)
  python3-scipy python3-tqdm         # confidence intervals (inasim.stats); progress bars in notebooks
  python3-jsonschema                 # tests: `inasim schema` validates every shipped scenario
  tshark                             # tests: outputs.pcap decoded with tools/inasim.lua
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian's python3 sees the python3-* packages; a pyenv python3 on PATH does not.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 ${INASIM_CMAKE_ARGS:-} >/dev/null
cmake --build build -j"$(nproc)"

# `import inasim`: build/venv, a virtual environment of Debian's python3 (it
# sees the python3-* packages) whose only addition is a path file naming this
# checkout's package and this build's extension. Each checkout has its own, so
# nothing machine-wide follows whichever checkout was set up last; the package
# refuses an extension built from another checkout (python/inasim/__init__.py).
if [ ! -x build/venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages --without-pip build/venv
fi
venv_site=$(build/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n%s\n' "$PWD/python" "$PWD/build/python" > "$venv_site/inasim.pth"
# Earlier versions wrote a machine-wide path file; remove it if it is ours.
for site_dir in $(/usr/bin/python3 -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))'); do
  old="$site_dir/inasim.pth"
  if [ -f "$old" ] && [ "$(wc -l < "$old")" = 2 ] && grep -q '/python$' "$old" && grep -q '/build/python$' "$old"; then
    rm -f "$old" 2>/dev/null && echo "setup: removed the machine-wide $old of an earlier setup" >&2 || true
  fi
done
echo "setup: built ./build/inasim; build/venv/bin/python imports inasim (this checkout)" >&2
