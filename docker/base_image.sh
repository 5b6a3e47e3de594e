#!/usr/bin/env bash
# A Debian bookworm base image made without a registry: `mmdebstrap --variant=minbase` piped into
# `docker import`. It carries how this machine reaches the package registries (its Debian sources and apt
# Acquire settings, its CA certificates, its pip configuration), so that apt-get and pip work inside a build
# where they work here. Skipped when the tag already exists (REBUILD=1 makes it again).
#
#   bash docker/base_image.sh [TAG]      # default str-ocr-debian:bookworm
set -euo pipefail
tag=${1:-str-ocr-debian:bookworm}

say() { echo "base: $*" >&2; }

if [ "${REBUILD:-0}" != 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  say "$tag exists"
  exit 0
fi
if ! command -v mmdebstrap >/dev/null; then
  [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null || { say "mmdebstrap is missing: install it (Debian package mmdebstrap)"; exit 1; }
  say "installing mmdebstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi

options=(--variant=minbase --quiet)
# Debian's archive as this machine reaches it (the default mirror otherwise).
sources=()
for file in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  [ -s "$file" ] && grep -q '^[^#]' "$file" && { sources=("$file"); break; }
done
# This machine's own apt Acquire settings (proxy, validity of snapshot mirrors; not those a package
# installed), in the image's apt too.
for file in /etc/apt/apt.conf /etc/apt/apt.conf.d/*; do
  [ -f "$file" ] && grep -q '^Acquire::' "$file" && ! dpkg -S "$file" >/dev/null 2>&1 && options+=("--aptopt=$file")
done
# The CA bundle pip and apt trust here, and its local additions (kept if ca-certificates is installed later).
copy_in() {  # copy_in SOURCE... TARGET_DIR: files that exist here, into the image
  local target=${*: -1} found=()
  for source in "${@:1:$#-1}"; do [ -e "$source" ] && found+=("$source"); done
  [ ${#found[@]} -eq 0 ] && return
  options+=("--customize-hook=mkdir -p \"\$1$target\"" "--customize-hook=copy-in ${found[*]} $target")
}
copy_in /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs
copy_in /usr/local/share/ca-certificates/* /usr/local/share/ca-certificates
copy_in /etc/pip.conf /etc
copy_in /etc/xdg/pip /etc/xdg
# pip's environment here, except the local wheel folders: those travel in the build context (docker/wheels).
changes=(--change 'CMD ["bash"]')
while IFS='=' read -r name value; do
  [[ $name == PIP_* && $name != PIP_FIND_LINKS ]] && changes+=(--change "ENV $name=$value")
done < <(env)

say "building $tag: mmdebstrap --variant=minbase bookworm | docker import"
mmdebstrap "${options[@]}" bookworm - "${sources[@]}" | docker import "${changes[@]}" - "$tag" >/dev/null
say "$tag: $(docker image inspect --format '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1 / 1e6}')"
