#!/usr/bin/env bash
# What the image installs, for either base (run by the Dockerfile, as root):
#   install.sh deps DIR     Python packages the server imports -> /opt/venv (the CPU base; empty on NGC's)
#   install.sh runtime DIR  what the final image needs besides /opt/venv, and its non-root user
# DIR holds requirements.txt (every version pinned) and wheels/ (wheels the build brings; may be empty).
# NGC's base has its server in /opt/tritonserver and a Python with pip; a plain Debian base has neither, and
# gets Debian's python3.11 and the server of the nvidia-pytriton wheel.
set -euo pipefail
step=$1 dir=$2
# What the launcher and the models import besides torch (and protobuf, below); versions from requirements.txt.
PACKAGES=(numpy pillow tritonclient grpcio)
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

# nvidia-pytriton asks for tritonclient's grpc extra, which caps protobuf below 5; requirements.txt pins a newer
# protobuf, which that client runs with (as the virtualenv does): resolve without that pin, then install it.
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
  pip_install /opt/venv/bin/python "$(without protobuf)" torch nvidia-pytriton "${PACKAGES[@]}"
  pip_install /opt/venv/bin/python "$dir/requirements.txt" --no-deps protobuf
}

ngc_runtime() {
  # A CUDA build of torch for the container's CUDA 12.6 (the cu124 wheels run on its driver).
  python3 -m pip install --no-cache-dir "${NGC_TORCH:?}" --index-url "${NGC_TORCH_INDEX:?}"
  python3 -m pip install --no-cache-dir -c "$(without torch)" "${PACKAGES[@]}" protobuf
}

cpu_runtime() {
  # libpython3.11: the Python backend's stub links it; procps: the launcher finds its processes with pgrep.
  apt_install python3.11 libpython3.11 procps
  useradd --uid 1000 --create-home --shell /usr/sbin/nologin "$USER_NAME"
}

case $step in
  deps) if ngc; then mkdir -p /opt/venv; else cpu_deps; fi ;;
  runtime) if ngc; then ngc_runtime; else cpu_runtime; fi ;;
  *) echo "usage: install.sh deps|runtime DIR" >&2; exit 2 ;;
esac
