#!/usr/bin/env bash
# NVIDIA's perf_analyzer comes in tritonclient's wheel (pinned in requirements.txt) as <venv>/bin/perf_analyzer.
# It links libcudart.so.12 even without a GPU; the nvidia-cuda-runtime-cu12 wheel holds that library, inside
# the virtualenv. This puts a wrapper in its place that adds that folder to the library path, so that
# `<venv>/bin/perf_analyzer ARGS` runs as NVIDIA documents it. Idempotent.
set -euo pipefail
venv=${1:-.venv}
binary="$venv/bin/perf_analyzer"
real="$venv/bin/perf_analyzer.real"
if [ -f "$binary" ] && ! grep -q "perf_analyzer.real" "$binary" 2>/dev/null; then
  mv -f "$binary" "$real"  # pip wrote a new binary (first setup, or a new tritonclient)
fi
[ -x "$real" ] || { echo "setup: $real is missing: is tritonclient in requirements.txt?" >&2; exit 1; }
cudart=$("$venv/bin/python" -c 'import nvidia.cuda_runtime, os; print(os.path.join(nvidia.cuda_runtime.__path__[0], "lib"))')
cat > "$binary" <<WRAPPER
#!/bin/sh
# NVIDIA's perf_analyzer (perf_analyzer.real, from tritonclient's wheel) with the CUDA runtime library it links.
LD_LIBRARY_PATH="$cudart\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$(cd "$(dirname "$real")" && pwd)/perf_analyzer.real" "\$@"
WRAPPER
chmod +x "$binary"
"$binary" --version >/dev/null 2>&1 || "$binary" --help >/dev/null 2>&1 || {
  echo "setup: perf_analyzer does not start: $("$binary" --help 2>&1 | head -n 1)" >&2; exit 1; }
