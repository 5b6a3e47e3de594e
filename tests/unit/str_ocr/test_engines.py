"""Every engine reads packed lines as torch reads each line alone, and the exported graphs are cached."""

from __future__ import annotations

import pytest
import torch

from str_ocr import Recognizer, STRModel, load_model, normalize
from str_ocr import engines
from str_ocr.engines import ENGINES, OpenVinoEngine, build_engine, choose_engine, choose_precision, native_bf16
from str_ocr.graphs import CACHE_ENV, exported_graphs
from str_ocr.synth import TextLineSynth
from str_ocr_triton.config import served_weights

from .test_ragged import BF16_LOGIT_TOLERANCE, LOGIT_TOLERANCE, with_trained_context

CPU = torch.device("cpu")
EXPORTED = [e for e in ENGINES if e != "torch"]


@pytest.fixture(scope="module", params=["served", "context-toggled"])
def model(request):
    """The served weights, and their network the other way round as to context layers: without them if the served
    weights have some, else with two trained-looking ``FrameContext`` layers over their frames."""
    served = load_model(*served_weights())
    if request.param == "served":
        return served
    toggled = STRModel(output_channels=served.output_channels, context_layers=0 if served.context_layers else 2).eval()
    toggled.load_state_dict(served.state_dict(), strict=False)  # the layers one lacks are dropped or left as made
    return toggled if served.context_layers else with_trained_context(toggled)


@pytest.fixture(scope="module")
def graph_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graphs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(folder))
        yield folder


@pytest.fixture(scope="module")
def lines():
    synth = TextLineSynth(seed=41)
    return [synth.sample() for _ in range(60)]


@pytest.mark.parametrize("engine", EXPORTED)
def test_packed_lines_read_on_each_engine_as_torch_reads_them_alone(engine, model, graph_cache, lines):
    requests = [normalize(s.image)[None, None] for s in lines]
    packed = Recognizer(build_engine(model, engine, CPU, threads=1), max_padding=10.0, max_lines=64)(requests)
    alone = Recognizer(model, max_padding=0)
    worst = max(float((logits - alone([r])[0]).abs().max()) for r, logits in zip(requests, packed))
    assert worst <= LOGIT_TOLERANCE, f"{engine}: packed logits differ from torch's alone by {worst:.2e}"
    texts = Recognizer(build_engine(model, engine, CPU, threads=1), max_padding=10.0).read([s.image for s in lines])
    assert [r.text for r in texts] == [r.text for r in alone.read([s.image for s in lines])]


@pytest.mark.skipif(not native_bf16(), reason="this CPU has no native bf16, so OpenVINO's bf16 is not offered here")
def test_packed_lines_read_in_bf16_as_each_line_alone_in_bf16(model, graph_cache, lines):
    engine = build_engine(model, "openvino", CPU, threads=1, precision="bf16")
    requests = [normalize(s.image)[None, None] for s in lines]
    packed = Recognizer(engine, max_padding=10.0, max_lines=64)(requests)
    alone = Recognizer(engine, max_padding=0)
    worst = max(float((logits - alone([r])[0]).abs().max()) for r, logits in zip(requests, packed))
    assert worst <= BF16_LOGIT_TOLERANCE, f"bf16 packed logits differ from bf16's alone by {worst:.2e}"
    texts = Recognizer(engine, max_padding=10.0).read([s.image for s in lines])
    assert [r.text for r in texts] == [r.text for r in alone.read([s.image for s in lines])]


@pytest.mark.parametrize("engine", EXPORTED)
def test_a_batch_of_one_width_runs_the_plain_graph_with_torchs_logits(engine, model, graph_cache):
    batch = torch.rand(5, 1, 32, 100) * 2 - 1
    with torch.inference_mode():
        expected = model(batch)
    torch.testing.assert_close(build_engine(model, engine, CPU, threads=1)(batch, None), expected,
                               rtol=1e-3, atol=LOGIT_TOLERANCE)


def test_the_graphs_are_exported_once_per_set_of_weights(model, graph_cache):
    first = exported_graphs(model)
    stamps = {kind: path.stat().st_mtime_ns for kind, path in first.items()}
    assert set(first) == {"plain", "masked"} and all(p.parent.parent == graph_cache for p in first.values())
    again = exported_graphs(model)
    assert again == first and {k: p.stat().st_mtime_ns for k, p in again.items()} == stamps


@pytest.mark.parametrize("native", [True, False], ids=["native-bf16", "no-bf16"])
def test_auto_picks_openvino_bf16_on_a_cpu_with_native_bf16_onnx_runtime_on_another_and_torch_on_a_gpu(native,
                                                                                                       monkeypatch):
    monkeypatch.setattr(engines, "native_bf16", lambda: native)
    assert choose_engine("auto", CPU) == ("openvino" if native else "onnxruntime")
    assert choose_precision("auto", choose_engine("auto", CPU)) == ("bf16" if native else "f32")
    assert choose_engine("auto", CPU, precision="f32") == "onnxruntime"
    assert choose_engine("auto", CPU, precision="bf16") == "openvino"  # whose error says what to change if need be
    assert choose_precision("auto", "onnxruntime") == choose_precision("auto", "torch") == "f32"
    assert choose_precision("f32", "openvino") == "f32"
    assert choose_engine("auto", torch.device("cuda", 0)) == "torch"
    with pytest.raises(ValueError, match="CPU instances only"):
        choose_engine("onnxruntime", torch.device("cuda", 0))
    with pytest.raises(ValueError, match="one of torch, onnxruntime, openvino"):
        choose_engine("tensorrt", CPU)


def test_bf16_only_on_openvino_and_only_where_the_cpu_has_it(model, graph_cache):
    with pytest.raises(ValueError, match="'openvino' only"):
        build_engine(model, "onnxruntime", CPU, threads=1, precision="bf16")
    import openvino

    if "BF16" not in openvino.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"):
        with pytest.raises(ValueError, match="use precision 'auto' or 'f32'"):
            OpenVinoEngine(exported_graphs(model), threads=1, precision="bf16")
        return
    batch = torch.rand(8, 1, 32, 100) * 2 - 1
    with torch.inference_mode():
        expected = model(batch).argmax(-1)
    agreed = (build_engine(model, "openvino", CPU, 1, "bf16")(batch, None).argmax(-1) == expected).float().mean()
    assert float(agreed) > 0.9, f"bf16 agrees with f32 on {float(agreed):.0%} of the time steps"
