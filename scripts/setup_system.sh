#!/usr/bin/env bash
# What the project needs from the system, checked and installed (Debian packages) where missing:
# - the local tritonserver's Python backend stub links the system's shared libpython of the
#   virtualenv's Python version; NVIDIA's perf_analyzer links libb64;
# - the synthetic text lines are drawn in the faces backend_src/str_ocr/fonts.py declares, which names each
#   one's package: the sets the tests draw in, or those named after the Python (`make fonts`: extended);
# - the launcher's stub reaper (backend_src/str_ocr_server/reap_stubs.c) is built with the system's C compiler;
# - the deployment tests run promtool (Debian's prometheus package) on the alerting rules;
# - `make profile` samples the server's processes with Linux perf (Debian's linux-perf);
# - a training run on a CPU may run under jemalloc, and the test of its data processes' decay needs it.
set -euo pipefail
python=${1:-python3}
font_sets=("${@:2}")
root=$(cd "$(dirname "$0")/.." && pwd)
version=$("$python" -c 'import sys; print(f"{sys.version_info.major}.{sys.version_info.minor}")')

missing=()
libraries=$(ldconfig -p)  # read once: `ldconfig -p | grep -q` fails under pipefail when grep stops reading early
grep -q "libpython${version}.so.1.0" <<< "$libraries" || missing+=("libpython${version}")
grep -q "libb64.so.0d" <<< "$libraries" || missing+=(libb64-0d)  # NVIDIA's perf_analyzer links it
grep -q "libjemalloc.so.2" <<< "$libraries" || missing+=(libjemalloc2)  # the trainer's allocator test runs under it
# A command substitution, not `< <(...)`, so that the script stops when fonts.py fails.
fonts=$("$python" "$root/backend_src/str_ocr/fonts.py" missing-packages "${font_sets[@]}")
[ -z "$fonts" ] || mapfile -t -O "${#missing[@]}" missing <<< "$fonts"
command -v cc >/dev/null || missing+=(gcc libc6-dev)  # builds the launcher's stub reaper
command -v promtool >/dev/null || missing+=(prometheus)
command -v perf >/dev/null || missing+=(linux-perf)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "setup: cannot install them here: run 'sudo apt-get install ${missing[*]}' (or your system's equivalent)" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
ldconfig
# Only promtool is wanted from the prometheus package: stop the server its installation may have started.
if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
