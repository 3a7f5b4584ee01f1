#!/usr/bin/env bash
# Installs every Debian package INA-Sim needs (only the missing ones) and builds
# the project in ./build (Release). Safe to run again: it does only what is left.
# Extra CMake flags: INASIM_CMAKE_ARGS="-DINASIM_WERROR=ON" scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake git
  ns3 libns3-dev libgsl-dev          # ns-3.37; its CMake config needs the ns3 tools package and GSL to link
  libboost-graph-dev libfmt-dev nlohmann-json3-dev libgtest-dev pybind11-dev
  python3 python3-dev python3-numpy python3-pandas python3-matplotlib python3-pytest
  python3-distributed                # sweeps on a Dask cluster (inasim sweep --scheduler)
  python3-scipy python3-tqdm         # confidence intervals (inasim.stats); progress bars in notebooks
  python3-jsonschema                 # tests: `inasim schema` validates every shipped scenario
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

# `import inasim` for Debian's python3: a .pth file naming this checkout's
# package and extension (the last checkout set up wins).
if [ "$(id -u)" = 0 ]; then
  site_dir=$(/usr/bin/python3 -c 'import site; print(next(p for p in site.getsitepackages() if p.startswith("/usr/local")))')
else
  site_dir=$(/usr/bin/python3 -m site --user-site)
fi
mkdir -p "$site_dir"
printf '%s\n%s\n' "$PWD/python" "$PWD/build/python" > "$site_dir/inasim.pth"
echo "setup: built ./build/inasim; /usr/bin/python3 can import inasim ($site_dir/inasim.pth)" >&2
