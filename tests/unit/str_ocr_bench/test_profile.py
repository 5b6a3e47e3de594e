"""Reading perf's and py-spy's output into where the CPU went."""

from __future__ import annotations

import pytest

from str_ocr_bench.profile import FORWARD_PASS, NETWORK_KERNELS, kind_of_library, library_shares, stub_shares

PERF_REPORT = """\
# Samples: 9K of event 'cpu-clock:pppH'
#
# Overhead  Shared Object
# ........  ......................
#
    41.20%  [JIT] tid 25495
    20.00%  libtorch_cpu.so
     9.10%  libpython3.11.so.1.0
     8.00%  [kernel.kallsyms]
     6.50%  libgomp-a34b3233.so.1
     5.00%  triton_python_backend_stub
     4.00%  libc.so.6
     3.20%  _multiarray_umath.cpython-311-x86_64-linux-gnu.so
     3.00%  libsomething.so
"""


def test_libraries_are_sorted_into_kinds():
    assert kind_of_library("libtorch_cpu.so") == kind_of_library("libgomp-a34b3233.so.1") == NETWORK_KERNELS
    assert (kind_of_library("libonnxruntime.so.1.31.1") == kind_of_library("libopenvino_intel_cpu_plugin.so")
            == NETWORK_KERNELS)
    assert kind_of_library("libtritonserver.so") == kind_of_library("libtriton_python.so")
    assert kind_of_library("libgrpc++.so") == "gRPC, protobuf, HTTP"
    assert kind_of_library("[kernel.kallsyms]") == "kernel"
    assert kind_of_library("libc.so.6") != kind_of_library("libcrypto.so.3")


def test_perf_report_shares_add_up_by_kind():
    shares = library_shares(PERF_REPORT)
    assert shares[NETWORK_KERNELS] == pytest.approx(0.677)
    assert shares["Python interpreter, numpy"] == pytest.approx(0.123)
    assert shares["other"] == pytest.approx(0.03)
    assert sum(shares.values()) == pytest.approx(1.0)


def test_stub_stacks_are_sorted_by_the_innermost_activity_they_are_in():
    collapsed = "\n".join([
        "TritonPythonModel.execute (model.py:67);Recognizer.__call__ (r.py:1);STRModel.forward (m.py:3) 70",
        "TritonPythonModel.execute (model.py:67);Recognizer.__call__ (r.py:1);normalize (p.py:9) 20",
        "TritonPythonModel.execute (model.py:60);get_input_tensor_by_name (u.py:5) 10",
        "Recognizer.__call__ (r.py:1);OnnxRuntimeEngine.__call__ (e.py:73);Session.run (ort.py:395) 35",
        "Recognizer.__call__ (r.py:1);OpenVinoEngine.__call__ (e.py:95);CompiledModel.__call__ (ie_api.py:1) 35",
        "not a stack line",
    ])
    shares = stub_shares(collapsed)
    assert shares == pytest.approx({FORWARD_PASS: 140 / 170,
                                    "the recogniser around it (checks, normalising, packing, padding)": 20 / 170,
                                    "the adapter and the backend's Python API "
                                    "(requests, tensors, responses)": 10 / 170})
    assert stub_shares("") == {}
