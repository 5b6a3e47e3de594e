#!/usr/bin/env bash
# `make image`: the image that fits this machine, each step timed, its size at the end.
#
#   bash docker/build.sh [auto|ngc|cpu]     IMAGE=name (default str-ocr-triton)
#
# auto: NGC's tritonserver base where it can be pulled (tagged IMAGE:ngc), else the CPU image on a Debian base
# (IMAGE:cpu); auto also tags the result IMAGE:latest. The CPU base is made here without a registry
# (docker/base_image.sh), or is debian:bookworm-slim where that cannot be done but a pull can.
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:-auto}
image=${IMAGE:-str-ocr-triton}
local_base=str-ocr-debian:bookworm
ngc_base=$(sed -n 's/^ARG BASE_IMAGE=//p' Dockerfile)
log=build/image.log

say() { echo "image: $*" >&2; }

timed() {  # timed NAME COMMAND...: run it, then say how long it took; its status
  local name=$1 start rc=0
  shift
  start=$(date +%s.%N)
  say "$name ..."
  "$@" || rc=$?
  say "$name: $([ $rc -eq 0 ] && echo done || echo "failed ($rc)") in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
  return $rc
}

have_or_pull() { docker image inspect "$1" >/dev/null 2>&1 || timeout 1800 docker pull -q "$1" >/dev/null 2>&1; }

cpu_base() {  # the Debian base: made here, else pulled
  if bash docker/base_image.sh "$local_base"; then
    base=$local_base
  elif have_or_pull debian:bookworm-slim; then
    say "no base could be made here; debian:bookworm-slim was pulled"
    base=debian:bookworm-slim
  else
    say "no Debian base: neither made here (docker/base_image.sh) nor pulled"
    return 1
  fi
}

stage_wheels() {  # this machine's local wheels (pip's PIP_FIND_LINKS) of the versions requirements.txt pins
  find docker/wheels -name '*.whl' -delete
  local folder wheel name version
  for folder in ${PIP_FIND_LINKS:-}; do
    [ -d "$folder" ] || continue
    for wheel in "$folder"/*.whl; do
      [ -f "$wheel" ] || continue
      IFS=- read -r name version _ <<<"$(basename "$wheel")"
      grep -qix "${name//_/[-_]}==${version%%+*}" requirements.txt || continue
      ln -f "$wheel" docker/wheels/ 2>/dev/null || cp "$wheel" docker/wheels/
      say "brings $(basename "$wheel") from $folder"
    done
  done
}

build() {  # build FLAVOUR BASE
  mkdir -p build
  # The classic builder where BuildKit (buildx) is missing, as with Debian's docker.io.
  local buildkit=${DOCKER_BUILDKIT:-$(docker buildx version >/dev/null 2>&1 && echo 1 || echo 0)}
  if ! DOCKER_BUILDKIT=$buildkit docker build --force-rm -t "$image:$1" --build-arg "BASE_IMAGE=$2" . >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    say "the build failed; its whole log: $log"
    return 1
  fi
}

timed "Docker engine" bash docker/engine.sh
flavour=$want
if [ "$want" = auto ]; then
  flavour=cpu
  timed "NGC base ($ngc_base)" have_or_pull "$ngc_base" && flavour=ngc || say "NGC's base cannot be pulled here: the CPU image"
fi
if [ "$flavour" = ngc ]; then
  base=$ngc_base
  find docker/wheels -name '*.whl' -delete
else
  timed "Debian base" cpu_base
  stage_wheels
fi
timed "$image:$flavour on $base (log: $log)" build "$flavour" "$base"
[ "$want" = auto ] && docker tag "$image:$flavour" "$image:latest"
size=$(docker image inspect --format '{{.Size}}' "$image:$flavour")
say "$image:$flavour: $(awk -v b="$size" 'BEGIN { printf "%.2f GB", b / 1e9 }')"
