"""Reading perf_analyzer's CSV, the server's CPU time, and the serving efficiency, without a server."""

import os
import subprocess
import sys
import time

import pytest

from str_ocr_bench.cpu import cpu_seconds
from str_ocr_bench.perf_analyzer import Measurement, Window, read_csv
from str_ocr_bench.report import efficiency
from str_ocr_bench.sweep import Level

# The header and a row as perf_analyzer 2.51 writes them with -f.
CSV = """Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,\
Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,\
request/response,response wait
16,752.3,40,300,20000,50,18000,40,10,41000,46000,48700,52000,41500,0,0
"""


def test_perf_analyzers_csv_is_read_by_its_own_column_names(tmp_path):
    path = tmp_path / "perf.csv"
    path.write_text(CSV)
    assert read_csv(path) == [Measurement(16, 752.3, 41000, 48700, 52000, 20000, 18000)]


def test_the_window_passes_perf_analyzers_own_options():
    assert Window(2000, 25).args() == ["--measurement-interval", "2000", "--stability-percentage", "25"]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="CPU time is read from /proc (Linux)")
def test_cpu_seconds_count_a_spinning_process_and_not_a_sleeping_one():
    spin = subprocess.Popen([sys.executable, "-c",
                             "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass"])
    sleep = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    start = (cpu_seconds([spin.pid]), cpu_seconds([sleep.pid]))
    time.sleep(1.0)
    spun, slept = cpu_seconds([spin.pid]) - start[0], cpu_seconds([sleep.pid]) - start[1]
    spin.wait(), sleep.wait()
    assert spun > 0.2 and slept < 0.1  # some of a core however busy the machine is; none at all
    assert cpu_seconds([spin.pid]) == 0.0  # a process that is gone counts as nothing


def test_efficiency_is_the_model_alones_cpu_per_image_over_the_servers():
    alone = [{"cpu_seconds_per_image": 0.002}, {"cpu_seconds_per_image": 0.001}]
    level = Level("x", None, 0, 8.0, tritonserver_cpu_seconds_per_image=0.0005, instances_cpu_seconds_per_image=0.0015)
    assert efficiency(level, alone) == pytest.approx(0.5)
    assert efficiency(Level("x", None, 2, 0.0, 0.0, 0.0), alone) == 0.0  # nothing served, nothing to compare
