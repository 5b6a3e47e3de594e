#!/usr/bin/env bash
# Builds the library the launcher preloads into tritonserver to reap replaced stubs (str_ocr_server.compat.stub_reaper):
#   bash scripts/build_reaper.sh SOURCE OUTPUT      (make setup; the image's build, against its own C library)
set -euo pipefail
source=$1 output=$2
command -v "${CC:-cc}" >/dev/null || { echo "build_reaper: no C compiler (${CC:-cc}): install gcc" >&2; exit 1; }
"${CC:-cc}" -O2 -Wall -Wextra -Werror -shared -fPIC -o "$output" "$source" -ldl -pthread
