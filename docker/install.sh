#!/usr/bin/env bash
# What the image installs, for either base (run by the Dockerfile, as root):
#   install.sh deps DIR     Python packages the server imports -> /opt/venv (the CPU base; empty on NGC's)
#   install.sh reaper DIR   the launcher's stub reaper -> /opt/reaper (DIR also holds build_reaper.sh, reap_stubs.c)
#   install.sh runtime DIR  what the final image needs besides /opt/venv, and its non-root user
# DIR holds requirements.txt (every version pinned) and wheels/ (wheels the build brings; may be empty).
# NGC's base has its server in /opt/tritonserver and a Python with pip; a plain Debian base has neither, and
# gets Debian's python3.11 and the server of the nvidia-pytriton wheel.
set -euo pipefail
step=$1 dir=$2
# What the launcher and the models import besides torch (and protobuf, below); versions from requirements.txt.
PACKAGES=(numpy pillow tritonclient grpcio prometheus_client aiohttp opencv-python-headless)
# The recogniser's CPU engines, and the exporter that makes their graphs from the served weights at load time.
ENGINES=(onnxruntime openvino onnx onnxscript tqdm)
# The text detector's ONNX file comes inside this package; nothing else of it is used, so none of its dependencies.
DETECTOR=rapidocr-onnxruntime
USER_NAME=triton-server  # NGC's non-root user, uid 1000; the CPU image makes the same

ngc() { [ -x /opt/tritonserver/bin/tritonserver ]; }

apt_install() {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
}

pip_install() {  # pip_install PYTHON CONSTRAINTS ARGS...: pinned, nothing cached
  local python=$1 constraints=$2
  shift 2
  "$python" -m pip install --no-cache-dir --no-warn-script-location --find-links "$dir/wheels" -c "$constraints" "$@"
}

without() {  # without PACKAGE: requirements.txt less that package's pin, as a file
  grep -v "^$1==" "$dir/requirements.txt" >"$dir/without-$1.txt"
  echo "$dir/without-$1.txt"
}

cpu_deps() {
  apt_install python3.11 python3.11-venv
  python3.11 -m venv /opt/venv
  # torch: a CPU wheel the build brings (make image stages this machine's), else the CPU index's.
  if ! compgen -G "$dir/wheels/torch-*.whl" >/dev/null; then
    pip_install /opt/venv/bin/python "$dir/requirements.txt" --index-url "${CPU_TORCH_INDEX:?}" torch
  fi
  # nvidia-pytriton asks for tritonclient 2.51's grpc and http extras, whose caps (protobuf<5,
  # geventhttpclient<=2.0.2) requirements.txt overrides with newer releases that the client runs with. So pip
  # resolves from the top-level pins, then every package it installed is set to the version requirements.txt
  # pins, as in the virtualenv.
  local python=/opt/venv/bin/python
  pins "$python" torch nvidia-pytriton "${PACKAGES[@]}" >"$dir/top.txt"
  pip_install "$python" "$dir/top.txt" torch nvidia-pytriton "${PACKAGES[@]}" protobuf
  "$python" -m pip freeze --all | pins "$python" - >"$dir/installed.txt"
  pip_install "$python" "$dir/requirements.txt" --no-deps -r "$dir/installed.txt"
  # onnx wants protobuf 6, which the caps above cannot resolve: the engines come after the re-pin, resolved
  # against requirements.txt's pins (protobuf 6 among them, as in the virtualenv).
  pip_install "$python" "$dir/requirements.txt" "${ENGINES[@]}"
  pip_install "$python" "$dir/requirements.txt" --no-deps "$DETECTOR"
}

PINS_PY='
import re, sys
norm = lambda name: re.sub(r"[-_.]+", "-", re.split(r"[=\[<>]", name)[0]).strip().lower()
names = {norm(n) for n in (sys.stdin.read().split() if sys.argv[2:] == ["-"] else sys.argv[2:])}
print("\n".join(line for line in open(sys.argv[1]).read().splitlines() if "==" in line and norm(line) in names))
'
pins() {  # pins PYTHON NAME...|-: requirements.txt's lines for these packages (with -, names from stdin)
  "$1" -c "$PINS_PY" "$dir/requirements.txt" "${@:2}"
}

ngc_runtime() {
  # A CUDA build of torch for the container's CUDA 12.6 (the cu124 wheels run on its driver).
  python3 -m pip install --no-cache-dir "${NGC_TORCH:?}" --index-url "${NGC_TORCH_INDEX:?}"
  python3 -m pip install --no-cache-dir -c "$(without torch)" "${PACKAGES[@]}" "${ENGINES[@]}" protobuf
  python3 -m pip install --no-cache-dir -c "$(without torch)" --no-deps "$DETECTOR"
}

cpu_runtime() {
  # libpython3.11: the Python backend's stub links it; procps: the launcher finds its processes with pgrep.
  apt_install python3.11 libpython3.11 procps
  useradd --uid 1000 --create-home --shell /usr/sbin/nologin "$USER_NAME"
}

reaper() {
  command -v cc >/dev/null || apt_install gcc libc6-dev
  mkdir -p /opt/reaper
  bash "$dir/build_reaper.sh" "$dir/reap_stubs.c" /opt/reaper/libreap_stubs.so
}

case $step in
  deps) if ngc; then mkdir -p /opt/venv; else cpu_deps; fi ;;
  reaper) reaper ;;
  runtime) if ngc; then ngc_runtime; else cpu_runtime; fi ;;
  *) echo "usage: install.sh deps|reaper|runtime DIR" >&2; exit 2 ;;
esac
