"""Where a served inference's CPU time goes: Linux ``perf`` over ``tritonserver`` and the stubs, by library,
and ``py-spy`` over the stubs' Python, by what the code is doing.

It answers what the serving efficiency (``str_ocr_bench.sweep``) leaves open: of the CPU seconds the server's
processes spend per image beyond the model alone's best, how much is the network run at the batch sizes
serving gets, how much the Python around it in the stub, and how much ``tritonserver`` itself.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import tritonclient.grpc as grpcclient

from str_ocr.contract import RECOGNIZER
from str_ocr_client.stats import execution_counts
from str_ocr_server.process import ServerProcess

from . import perf_analyzer
from .cpu import cpu_seconds

NETWORK_KERNELS = "network kernels (the engine: torch, ONNX Runtime, OpenVINO; oneDNN, BLAS, OpenMP, TBB)"
FORWARD_PASS = "the network's forward pass (the engine's run)"
LIBRARY_KINDS = [  # (kind, pattern of a shared object's name), first match wins
    # oneDNN generates its convolution kernels at run time: perf sees them as "[JIT] tid N".
    (NETWORK_KERNELS, r"libtorch|libc10|libgomp|libiomp|libmkl|libdnnl|openblas|sleef|onnxruntime|"
                      r"libopenvino|libtbb|\[JIT\]"),
    ("Python interpreter, numpy", r"python3|libpython|_multiarray|numpy|c_python_backend_utils"),
    ("Triton (server core, frontends, Python backend, stub)", r"tritonserver|libtriton|triton_python_backend_stub"),
    ("gRPC, protobuf, HTTP", r"grpc|protobuf|evhtp|libevent|libssl|libcrypto|libz\b"),
    ("C/C++ runtime, allocator", r"libc[.-]|libstdc\+\+|libm[.-]|ld-linux|libpthread|malloc|jemalloc|tcmalloc"),
    ("kernel", r"\[kernel|\[vdso|kallsyms"),
]
STUB_WORK = [  # (what the stub is doing, a pattern of a frame that says so), first match wins
    (FORWARD_PASS, r"STRModel\.forward|Session\.run|CompiledModel\.__call__"),
    ("the recogniser around it (checks, normalising, packing, padding)", r"Recognizer\."),
    ("the adapter and the backend's Python API (requests, tensors, responses)", ""),
]


def kind_of_library(name: str) -> str:
    return next((kind for kind, pattern in LIBRARY_KINDS if re.search(pattern, name)), "other")


def library_shares(report: str) -> dict[str, float]:
    """Share of samples by library kind, from ``perf report --stdio --sort dso`` text."""
    shares: Counter[str] = Counter()
    for line in report.splitlines():
        if match := re.match(r"\s*([\d.]+)%\s+(\S.*?)\s*$", line):
            shares[kind_of_library(match[2])] += float(match[1]) / 100
    return dict(shares)


def stub_shares(collapsed: str) -> dict[str, float]:
    """Share of the stubs' Python samples by what they were doing, from py-spy's raw (collapsed) stacks."""
    counts: Counter[str] = Counter()
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            counts[next(work for work, frame in STUB_WORK if re.search(frame, stack))] += int(count)
    total = sum(counts.values())
    return {work: n / total for work, n in counts.items()} if total else {}


def tool(name: str) -> str:
    """``name`` from this virtualenv's ``bin`` (py-spy), else from PATH (perf)."""
    found = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if not found:
        raise SystemExit(f"profile: no `{name}` on PATH: `make setup` installs it (py-spy from requirements.txt, perf "
                         "from Debian's linux-perf)")
    return found


@dataclass(frozen=True)
class Profile:
    images: int
    executions: int
    tritonserver_cpu_seconds: float
    stubs_cpu_seconds: float
    tritonserver_libraries: dict[str, float]
    stub_libraries: dict[str, float]
    stub_python: dict[str, float]


def _record(pids: list[int], seconds: float, data: Path) -> subprocess.Popen:
    data.unlink(missing_ok=True)  # else perf keeps the previous run's as DATA.old
    return subprocess.Popen([tool("perf"), "record", "-F", "499", "-p", ",".join(map(str, pids)), "-o", str(data),
                             "--", "sleep", str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _report(data: Path) -> str:
    return subprocess.run([tool("perf"), "report", "-i", str(data), "--stdio", "--sort", "dso",
                           "--percent-limit", "0.1"],
                          capture_output=True, text=True, check=True).stdout


def profile(server: ServerProcess, out: Path, seconds: float = 20, warmup: float = 5, concurrency: int = 16,
            batch_size: int = 2) -> Profile:
    """Load ``server`` with perf_analyzer (the tutorial's request) and profile it for ``seconds``."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("stub-*.collapsed.txt"):  # an earlier run's, with other instances
        old.unlink()
    load = subprocess.Popen([str(perf_analyzer.binary()), "-m", RECOGNIZER, "-b", str(batch_size), "--shape",
                             perf_analyzer.TUTORIAL_SHAPE, "--concurrency-range", f"{concurrency}:{concurrency}",
                             "-u", server.grpc_url, "-i", "grpc", "--measurement-interval", "600000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(warmup)
        triton, stubs = server.triton_pids(), server.stub_pids(RECOGNIZER)
        with grpcclient.InferenceServerClient(server.grpc_url) as client:
            images, executions = execution_counts(client)
            cpu = cpu_seconds(triton), cpu_seconds(stubs)
            recorders = [_record(triton, seconds, out / "tritonserver.perf.data"),
                         _record(stubs, seconds, out / "stubs.perf.data")]
            spies = [subprocess.Popen([tool("py-spy"), "record", "-p", str(pid), "-d", str(int(seconds)), "-r", "97",
                                       "-f", "raw", "-o", str(out / f"stub-{i}.collapsed.txt"), "--nonblocking"],
                                      stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL) for i, pid in enumerate(stubs)]
            for process in recorders + spies:
                process.wait(seconds + 60)
            images_after, executions_after = execution_counts(client)
            spent = cpu_seconds(triton) - cpu[0], cpu_seconds(stubs) - cpu[1]
    finally:  # perf_analyzer runs under a wrapper script: stop the whole group
        os.killpg(load.pid, signal.SIGKILL)
        load.wait(30)
    collapsed = "\n".join(p.read_text() for p in sorted(out.glob("stub-*.collapsed.txt")))
    return Profile(images_after - images, executions_after - executions, *spent,
                   library_shares(_report(out / "tritonserver.perf.data")),
                   library_shares(_report(out / "stubs.perf.data")), stub_shares(collapsed))
