#!/usr/bin/env bash
# A Docker engine for `make image` and the container tests: quick when one already answers; as root,
# installs Debian's docker.io and starts dockerd in the background where none runs. Exits non-zero, saying
# why, where no engine can be had (the container tests then skip with that reason).
#
#   bash docker/engine.sh            # DOCKERD_LOG (default /var/log/dockerd.log), ENGINE_WAIT seconds (60)
set -euo pipefail
log=${DOCKERD_LOG:-/var/log/dockerd.log}
wait_s=${ENGINE_WAIT:-60}

say() { echo "engine: $*" >&2; }

answers() { command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; }

if answers; then
  say "a Docker engine answers ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  say "no Docker engine answers, and starting one needs root: start dockerd (or Docker Desktop) and add yourself to the docker group"
  exit 1
fi

if ! command -v dockerd >/dev/null; then
  if ! command -v apt-get >/dev/null; then
    say "no Docker engine, and no apt-get to install Debian's docker.io: install Docker for this system"
    exit 1
  fi
  say "installing Debian's docker.io"
  apt-get update -qq
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io >/dev/null; then
    say "apt-get could not install docker.io"
    exit 1
  fi
fi

# overlay2: the driver Docker recommends; the default fallback (vfs) copies every layer in full.
say "starting dockerd (storage driver overlay2; log: $log)"
mkdir -p "$(dirname "$log")"
setsid nohup dockerd --storage-driver=overlay2 >>"$log" 2>&1 </dev/null &
pid=$!
for _ in $(seq "$wait_s"); do
  if answers; then
    say "dockerd $pid answers"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    break
  fi
  sleep 1
done
say "dockerd did not answer within $wait_s s; the end of $log:"
tail -n 15 "$log" >&2 || true
kill "$pid" 2>/dev/null || true
exit 1
