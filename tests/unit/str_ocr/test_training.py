"""The training script on a tiny configuration, and the weights we ship."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from str_ocr import training as train
from str_ocr import Recognizer, STRModel, load_model, save_checkpoint
from str_ocr.preprocess import TUTORIAL_WIDTH
from str_ocr.fonts import font_files
from str_ocr.synth import TextLineSynth, Variety
from str_ocr.text import greedy_decode
from str_ocr_triton.config import served_weights

TINY = ["--output-channels", "16", "--batch-size", "8", "--workers", "0", "--val-size", "4", "--val-every", "1000",
        "--lr", "3e-3", "--device", "cpu"]


@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_a_few_steps_lower_the_ctc_loss(tmp_path, precision):
    summary = train.main([*TINY, "--steps", "100", "--precision", precision, "--run-dir", str(tmp_path / "run"),
                          "--output", str(tmp_path / "w.pth")])
    assert summary["steps"] == 100
    assert summary["last_loss"] < 0.7 * summary["first_loss"]
    assert load_model(tmp_path / "w.pth", output_channels=16) is not None


def test_bf16_computes_the_network_in_bf16_and_the_loss_alike():
    torch.manual_seed(0)
    model = STRModel(output_channels=16)
    logits = []
    model.Prediction.register_forward_hook(lambda module, inputs, output: logits.append(output.dtype))
    batch = next(iter(train.SyntheticBatches(seed=1, batch_size=8, fixed_fraction=0.0)))
    f32, bf16 = (train.ctc_loss(train.line_log_probs(model, batch, torch.device("cpu"), bf16=b), batch)
                 for b in (False, True))
    assert logits == [torch.float32, torch.bfloat16] and f32.dtype == bf16.dtype == torch.float32
    assert f32.item() != bf16.item() and abs(f32.item() - bf16.item()) < 0.05 * f32.item()


def test_auto_precision_is_bf16_where_the_device_computes_it_natively(monkeypatch):
    cpu = torch.device("cpu")
    assert (train.uses_bf16("f32", cpu), train.uses_bf16("bf16", cpu)) == (False, True)
    for native in (False, True):
        monkeypatch.setattr(train, "torch_native_bf16", lambda native=native: native)
        assert train.uses_bf16("auto", cpu) is native


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="no /proc/cpuinfo here (not Linux): no CPU flags to "
                    "compare torch's answer with")
def test_the_trainer_asks_torch_not_openvino_whether_bf16_is_native():
    # OpenVINO's runtime aborts in a process run under a preloaded jemalloc, as long training runs may be.
    # The kernel may hide a flag the CPU has (clearcpuid=, an old kernel), never show one it lacks: one direction only.
    script = ("import sys, torch; from str_ocr import training; "
              "native = training.uses_bf16('auto', torch.device('cpu')); "
              "flags = set(open('/proc/cpuinfo').read().split()) & {'avx512_bf16', 'amx_bf16'}; "
              "assert native or not flags, f'the CPU has {flags}, and torch says no native bf16'; "
              "assert 'openvino' not in sys.modules, 'the trainer loaded openvino'")
    path = os.pathsep.join(filter(None, [str(Path(train.__file__).parents[1]), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": path})
    assert done.returncode == 0, done.stderr[-2000:]


def test_torch_still_names_the_bf16_capabilities_the_trainer_reads():
    capabilities = torch.cpu.get_capabilities()
    if capabilities.get("architecture") != "x86_64":
        pytest.skip(f"not x86_64 ({capabilities.get('architecture')}): the trainer reads x86's bf16 capabilities")
    assert {"avx512_bf16", "amx_bf16"} <= capabilities.keys(), sorted(capabilities)


def test_training_resumes_from_its_own_checkpoint(tmp_path):
    run = str(tmp_path / "run")
    train.main([*TINY, "--steps", "5", "--run-dir", run])
    assert train.main([*TINY, "--steps", "8", "--run-dir", run])["steps"] == 8


def test_context_layers_over_init_weights_train_at_their_own_rate_and_frozen_batch_norm_keeps_its_statistics(tmp_path):
    torch.manual_seed(3)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "init.pth")
    # Validations between steps, so that one that left batch norm learning again would show in its statistics.
    train.main([*TINY, "--steps", "6", "--init", str(tmp_path / "init.pth"), "--context-layers", "1", "--lr", "1e-9",
                "--context-lr", "1e-2", "--frozen-batch-norm", "--val-every", "2", "--run-dir", str(tmp_path / "run"),
                "--output", str(tmp_path / "w.pth")])
    before, after = load_model(tmp_path / "init.pth", 16).state_dict(), load_model(tmp_path / "w.pth", 16)
    assert after.context_layers == 1
    moved = {key: float((value.float() - before[key].float()).abs().max()) for key, value in after.state_dict().items()
             if key in before}
    assert max(moved.values()) < 1e-6, "the network beneath moved at --lr 1e-9 (or batch norm's statistics did)"
    assert float(after.SequenceModeling.layers[0].linear2.weight.detach().abs().max()) > 1e-3  # zero at the start


def test_a_run_goes_on_from_init_weights_with_context_layers_and_refuses_fewer(tmp_path):
    torch.manual_seed(3)
    save_checkpoint(STRModel(output_channels=16, context_layers=2), tmp_path / "init.pth")
    summary = train.main([*TINY, "--steps", "2", "--init", str(tmp_path / "init.pth"), "--run-dir",
                          str(tmp_path / "run"), "--output", str(tmp_path / "w.pth")])
    assert summary["steps"] == 2 and load_model(tmp_path / "w.pth", 16).context_layers == 2
    with pytest.raises(SystemExit, match="has 2 context layers: pass --context-layers 2"):
        train.main([*TINY, "--steps", "2", "--init", str(tmp_path / "init.pth"), "--context-layers", "1",
                    "--run-dir", str(tmp_path / "fewer")])


def test_a_run_with_context_layers_resumes_with_them_and_only_with_them(tmp_path):
    run = str(tmp_path / "run")
    train.main([*TINY, "--steps", "2", "--context-layers", "1", "--context-lr", "1e-3", "--run-dir", run])
    summary = train.main([*TINY, "--steps", "4", "--context-lr", "1e-3", "--run-dir", run])
    assert summary["steps"] == 4
    with pytest.raises(SystemExit, match="has 1 context layers: resume with --context-layers 1"):
        train.main([*TINY, "--steps", "6", "--context-layers", "2", "--run-dir", run])


def test_a_context_learning_rate_without_context_layers_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        train.parse_args(["--context-layers", "0", "--context-lr", "1e-3"])
    assert "give --context-layers 1 or more" in capsys.readouterr().err


def test_a_run_logs_held_out_figures_and_its_checkpoint_is_whole(tmp_path):
    run = tmp_path / "run"
    train.main([*TINY, "--steps", "4", "--val-every", "2", "--held-out-size", "4", "--crops", "0.5",
                "--fonts", "core", "--earlier-fonts", "training", "--earlier-share", "0.5", "--run-dir", str(run)])
    figures = [json.loads(line) for line in (run / "figures.jsonl").read_text().splitlines()]
    assert [f["step"] for f in figures] == [2, 4]
    assert all(0 <= f["held_out"] <= 1 and 0 <= f["val_acc"] <= 1 and f["loss"] > 0 for f in figures)
    assert (run / "last.pt").is_file() and not list(run.glob("*.partial"))
    assert (run / "figures.png").stat().st_size > 1000


def test_a_run_with_averaged_weights_validates_and_writes_the_average_and_resumes_it(tmp_path):
    run, written = tmp_path / "run", tmp_path / "w.pth"
    averaged = [*TINY, "--average-decay", "0.9", "--val-every", "3", "--held-out-size", "2", "--run-dir", str(run)]
    train.main([*averaged, "--steps", "3"])
    train.main([*averaged, "--steps", "6", "--output", str(written)])
    state = torch.load(run / "last.pt", weights_only=False)
    assert int(state["average"]["n_averaged"]) == 7  # the initial weights, then six steps: the resumed run went on
    assert [json.loads(line)["step"] for line in (run / "figures.jsonl").read_text().splitlines()] == [3, 6]
    average = {key.removeprefix("module."): value for key, value in state["average"].items() if key != "n_averaged"}
    weights = torch.load(written)
    assert weights.keys() == average.keys()
    assert all(torch.equal(weights[key], average[key]) for key in weights)
    floats = [key for key, value in weights.items() if value.is_floating_point()]
    assert not all(torch.equal(weights[key], state["model"][key]) for key in floats)


def test_each_step_moves_the_average_one_minus_the_decay_of_the_way_and_copies_counters(tmp_path):
    torch.manual_seed(3)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "init.pth")
    train.main([*TINY, "--init", str(tmp_path / "init.pth"), "--steps", "1", "--average-decay", "0.9",
                "--run-dir", str(tmp_path / "run"), "--output", str(tmp_path / "w.pth")])
    start = torch.load(tmp_path / "init.pth")
    stepped = torch.load(tmp_path / "run" / "last.pt", weights_only=False)["model"]
    for key, value in torch.load(tmp_path / "w.pth").items():
        expected = 0.9 * start[key] + 0.1 * stepped[key] if value.is_floating_point() else stepped[key]
        assert torch.allclose(value, expected, atol=1e-6), key


def test_a_run_that_averages_resumes_only_with_its_decay(tmp_path):
    run = str(tmp_path / "run")
    train.main([*TINY, "--steps", "2", "--average-decay", "0.9", "--run-dir", run])
    with pytest.raises(SystemExit, match="--average-decay 0.9: resume with that"):
        train.main([*TINY, "--steps", "4", "--run-dir", run])


@pytest.mark.parametrize("decay", ["1", "-0.1"])
def test_an_average_decay_outside_zero_to_one_is_a_usage_error(decay, capsys):
    with pytest.raises(SystemExit):
        train.parse_args(["--average-decay", decay])
    assert "--average-decay must be in [0, 1)" in capsys.readouterr().err


class Counting:
    """A line synthesiser that counts the lines drawn from it."""

    def __init__(self, synth):
        self.synth, self.lines = synth, 0

    def sample(self, width=None):
        self.lines += 1
        return self.synth.sample(width)


def test_earlier_lines_are_mixed_in_at_their_share():
    batches = train.SyntheticBatches(1, 8, 0.0, fonts="held-out", earlier=train.Earlier("core", 0.3))
    current, earlier = Counting(TextLineSynth(1, "held-out")), Counting(TextLineSynth(2, "core"))
    batches._samples([current, earlier], random.Random(0), 300, None)
    assert 0.2 < earlier.lines / (current.lines + earlier.lines) < 0.4


def test_variable_width_lines_can_take_their_own_share_of_earlier_lines():
    batches = train.SyntheticBatches(1, 8, 0.0, fonts="held-out", earlier=train.Earlier("core", 0.8, 0.1))
    shares = {}
    for width in (TUTORIAL_WIDTH, None):
        current, earlier = Counting(TextLineSynth(1, "held-out")), Counting(TextLineSynth(2, "core"))
        batches._samples([current, earlier], random.Random(0), 300, width)
        shares[width] = earlier.lines / (current.lines + earlier.lines)
    assert 0.7 < shares[TUTORIAL_WIDTH] < 0.9 and 0.03 < shares[None] < 0.2


def test_a_variable_width_share_alone_draws_earlier_lines():
    assert len(train.SyntheticBatches(1, 8, 0.0, fonts="held-out", earlier=train.Earlier("core", 0.0, 0.5))
               ._synths(3)) == 2
    assert len(train.SyntheticBatches(1, 8, 0.0, fonts="held-out", earlier=train.Earlier("core", 0.0))._synths(3)) == 1


@pytest.mark.parametrize("flag", ["--earlier-share", "--earlier-share-variable", "--fixed-fraction", "--crops",
                                  "--look-alikes", "--light-on-dark"])
@pytest.mark.parametrize("value", ["1.5", "-0.1"])
def test_shares_outside_0_to_1_are_refused(flag, value, capsys):
    with pytest.raises(SystemExit):
        train.parse_args([flag, value])
    assert f"{flag} must be in [0, 1], got {float(value)}" in capsys.readouterr().err


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_earlier_lines_are_drawn_as_before_but_for_the_runs_shares_of_what_lines_say(share):
    carried = {"look_alikes": share, "random_characters": share / 3, "long_fixed": share / 2, "capitals": share / 4}
    variety = Variety(stretch=1.0, **carried)
    batches = train.SyntheticBatches(1, 8, 0.0, fonts="held-out", variety=variety, earlier=train.Earlier("core", 0.5))
    current, earlier = batches._synths(3)
    assert earlier.fonts == font_files("core") and earlier.variety == Variety(**carried)
    assert current.variety == variety


def test_batches_mark_the_lines_drawn_as_earlier_ones():
    mixed = train.SyntheticBatches(1, 8, 0.5, fonts="core", earlier=train.Earlier("training", 0.5))
    marks = torch.cat([batch.earlier for batch, _ in zip(mixed, range(6))])
    assert marks.dtype == torch.bool and 0 < int(marks.sum()) < len(marks)
    alone = next(iter(train.SyntheticBatches(1, 8, 0.5, fonts="core")))
    assert not alone.earlier.any()


def _two_lines() -> train.Batch:
    synth = TextLineSynth(5, "core")
    return train.collate([synth.sample(TUTORIAL_WIDTH), synth.sample(None)], [True, False])


def test_the_kept_close_loss_counts_the_earlier_lines_own_frames_alone():
    torch.manual_seed(0)
    batch = _two_lines()
    frames = int(batch.input_lengths.max())
    kept = torch.randn(2, frames + 3, 37).log_softmax(2)
    assert train.kept_close_loss(kept, kept, batch).item() == pytest.approx(0, abs=1e-6)
    elsewhere = kept.clone()
    elsewhere[1] = torch.randn(frames + 3, 37).log_softmax(1)  # the line not drawn as an earlier one
    own = int(batch.input_lengths[0])
    elsewhere[0, own:] = torch.randn(frames + 3 - own, 37).log_softmax(1)  # past the earlier line's own frames
    assert train.kept_close_loss(elsewhere, kept, batch).item() == pytest.approx(0, abs=1e-6)
    moved = kept.clone()
    moved[0, 0] = torch.randn(37).log_softmax(0)
    assert train.kept_close_loss(moved, kept, batch).item() > 0


def test_the_kept_close_loss_is_per_character_of_each_earlier_line_averaged_over_them():
    synth = TextLineSynth(7, "core")
    batch = train.collate([synth.sample(None) for _ in range(3)], [True, True, False])
    frames = int(batch.input_lengths.max())
    uniform = torch.full((3, frames, 37), 1 / 37).log()
    certain = torch.full((3, frames, 37), 1e-9)
    certain[:, :, 0] = 1.0
    per_frame = float((certain * (certain.log() - uniform)).sum(2)[0, 0])  # the same divergence at every frame
    expected = sum(per_frame * int(batch.input_lengths[i]) / int(batch.target_lengths[i]) for i in (0, 1)) / 2
    assert train.kept_close_loss(uniform, certain.log(), batch).item() == pytest.approx(expected, rel=1e-4)


def test_a_run_kept_close_to_its_initial_weights_moves_less_from_their_reading(tmp_path):
    torch.manual_seed(4)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "init.pth")
    common = [*TINY, "--init", str(tmp_path / "init.pth"), "--steps", "25", "--fonts", "core",
              "--earlier-fonts", "core", "--earlier-share", "1"]
    train.main([*common, "--run-dir", str(tmp_path / "free"), "--output", str(tmp_path / "free.pth")])
    train.main([*common, "--keep-close-to", str(tmp_path / "init.pth"), "--keep-weight", "30",
                "--run-dir", str(tmp_path / "kept"), "--output", str(tmp_path / "kept.pth")])
    batch = next(iter(train.SyntheticBatches(9, 16, 0.5, fonts="core", earlier=train.Earlier("core", 1.0))))
    cpu = torch.device("cpu")

    def reading(path):  # as the divergence is computed in training: on the batch's own statistics
        args = train.parse_args(["--output-channels", "16", "--earlier-share", "1", "--keep-close-to", str(path)])
        with torch.no_grad():
            return train.line_log_probs(train._kept_close(args, cpu).model, batch, cpu)

    start = reading(tmp_path / "init.pth")
    free, kept = (train.kept_close_loss(reading(tmp_path / f"{run}.pth"), start, batch) for run in ("free", "kept"))
    assert kept < 0.5 * free


@pytest.mark.parametrize("bf16", [False, True])
def test_kept_weights_equal_to_the_run_s_diverge_by_nothing_and_keep_their_statistics(tmp_path, bf16):
    torch.manual_seed(6)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "w.pth")
    args = train.parse_args(["--output-channels", "16", "--earlier-share", "1",
                             "--keep-close-to", str(tmp_path / "w.pth")])
    kept = train._kept_close(args, torch.device("cpu"))
    statistics = {key: value.clone() for key, value in kept.model.state_dict().items() if "running" in key}
    model = load_model(tmp_path / "w.pth", output_channels=16).train()
    batch = next(iter(train.SyntheticBatches(2, 8, 0.0, fonts="core", earlier=train.Earlier("core", 1.0))))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    _, divergence = train._step(model, optimizer, None, batch, torch.device("cpu"), bf16, kept)
    assert divergence == pytest.approx(0, abs=5e-3 if bf16 else 1e-5)  # bf16: rounding, not reading, differs
    assert all(torch.equal(kept.model.state_dict()[key], value) for key, value in statistics.items())


@pytest.mark.parametrize("flags, message", [
    (["--keep-close-to", "w.pth"], "--keep-close-to needs --earlier-share or --earlier-share-variable above 0"),
    (["--keep-close-to", "w.pth", "--earlier-share", "0.5", "--keep-weight", "0"], "--keep-weight must be above 0"),
])
def test_keeping_close_without_earlier_lines_or_weight_is_a_usage_error(flags, message, capsys):
    with pytest.raises(SystemExit):
        train.parse_args(flags)
    assert message in capsys.readouterr().err


def test_a_run_resumes_only_with_the_divergence_it_was_trained_with(tmp_path):
    torch.manual_seed(8)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "w.pth")
    kept = ["--fonts", "core", "--earlier-fonts", "core", "--earlier-share", "0.5",
            "--keep-close-to", str(tmp_path / "w.pth"), "--run-dir", str(tmp_path / "run")]
    train.main([*TINY, *kept, "--steps", "2"])
    with pytest.raises(SystemExit, match="resume with those"):
        train.main([*TINY, *kept, "--keep-weight", "3", "--steps", "4"])
    assert train.main([*TINY, *kept, "--steps", "4"])["steps"] == 4


def _two_lines_of(text: list[int], frames: int, other: list[int] | None = None) -> SimpleNamespace:
    """What ``ctc_loss`` reads of a batch: a line of ``text`` (class indices) and one of ``other`` (default: the
    same), ``frames`` frames each."""
    other = text if other is None else other
    return SimpleNamespace(targets=torch.tensor(text + other), input_lengths=torch.tensor([frames, frames]),
                           target_lengths=torch.tensor([len(text), len(other)]))


def test_hard_lines_count_a_line_read_surely_less_than_one_read_unsurely():
    batch = _two_lines_of([3, 4], frames=6)
    logits = torch.zeros(2, 6, 37)
    logits[0, torch.arange(6), torch.tensor([0, 3, 0, 4, 0, 0])] = 8.0  # the first line read surely as its text
    log_probs = logits.log_softmax(2).requires_grad_()

    def sure_to_unsure_gradient_ratio(gamma: float) -> float:
        log_probs.grad = None
        train.ctc_loss(log_probs, batch, gamma).backward()
        norms = log_probs.grad.flatten(1).norm(dim=1)
        return float(norms[0] / norms[1])

    assert sure_to_unsure_gradient_ratio(2.0) < 0.05 * sure_to_unsure_gradient_ratio(0.0)


def test_hard_lines_read_alike_count_as_without_them():
    torch.manual_seed(3)
    log_probs = torch.randn(1, 8, 37).expand(2, 8, 37).log_softmax(2)
    batch = _two_lines_of([3, 4, 4], frames=8)
    assert train.ctc_loss(log_probs, batch, 2.0).item() == pytest.approx(train.ctc_loss(log_probs, batch).item())


def test_hard_lines_count_each_line_per_character_of_its_own():
    log_probs = torch.full((2, 8, 37), 1 / 37).log()  # every text of a length equally likely
    batch = _two_lines_of([3], frames=8, other=[3, 4, 5, 6])
    per_line = torch.nn.functional.ctc_loss(log_probs.permute(1, 0, 2), batch.targets, batch.input_lengths,
                                            batch.target_lengths, reduction="none")
    weights = (1 - torch.exp(-per_line)) ** 2
    expected = (weights / weights.mean() * per_line / batch.target_lengths).mean()
    assert train.ctc_loss(log_probs, batch, 2.0).item() == pytest.approx(expected.item(), rel=1e-5)


def test_a_step_weighing_hard_lines_reports_the_loss_of_every_line_alike():
    torch.manual_seed(5)
    model = STRModel(output_channels=16).train()
    batch = next(iter(train.SyntheticBatches(seed=4, batch_size=8, fixed_fraction=0.0)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    plain, weighted = (train._step(model, optimizer, None, batch, torch.device("cpu"), False, hard_lines=gamma)[0]
                       for gamma in (0.0, 2.0))
    assert weighted == pytest.approx(plain, rel=1e-5)


def test_a_run_resumes_only_with_the_line_weights_it_was_trained_with(tmp_path):
    run = ["--run-dir", str(tmp_path / "run")]
    train.main([*TINY, *run, "--hard-lines", "1", "--steps", "2"])
    with pytest.raises(SystemExit, match="--hard-lines 1: resume with those"):
        train.main([*TINY, *run, "--steps", "4"])
    assert train.main([*TINY, *run, "--hard-lines", "1", "--steps", "4"])["steps"] == 4


def test_a_checkpoint_from_before_hard_lines_resumes_as_every_line_alike(tmp_path):
    run = tmp_path / "run"
    train.main([*TINY, "--run-dir", str(run), "--steps", "2"])
    state = torch.load(run / "last.pt", weights_only=False)
    del state["args"]["hard_lines"]
    torch.save(state, run / "last.pt")
    with pytest.raises(SystemExit, match="--hard-lines 0: resume with those"):
        train.main([*TINY, "--run-dir", str(run), "--hard-lines", "1", "--steps", "4"])
    assert train.main([*TINY, "--run-dir", str(run), "--steps", "4"])["steps"] == 4


def test_negative_hard_lines_are_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        train.parse_args(["--hard-lines", "-1"])
    assert "--hard-lines must be 0 or more" in capsys.readouterr().err


def test_a_line_s_confidence_is_the_one_its_greedy_decoding_gives_on_its_own_frames():
    torch.manual_seed(8)
    logits = 3 * torch.randn(3, 12, 37)
    batch = SimpleNamespace(input_lengths=torch.tensor([12, 9, 4]))
    confidences = train.line_confidences(logits.log_softmax(2), batch)
    for line, frames, confidence in zip(logits, batch.input_lengths, confidences):
        assert confidence.item() == pytest.approx(greedy_decode(line[:frames].numpy()).confidence, rel=1e-4)


def test_only_the_lines_counted_make_the_loss():
    torch.manual_seed(9)
    log_probs = torch.randn(2, 8, 37).log_softmax(2)
    batch = _two_lines_of([3, 4], frames=8, other=[5, 6, 7])
    per_line = train.line_ctc_losses(log_probs, batch)
    for gamma in (0.0, 1.0):
        assert train.weighed_ctc_loss(per_line, batch, gamma, torch.tensor([False, True])).item() == pytest.approx(
            per_line[1].item() / 3, rel=1e-5)
        assert train.weighed_ctc_loss(per_line, batch, gamma, torch.tensor([False, False])).item() == 0.0


@pytest.mark.parametrize("below, moves", [(0.0, False), (1.0, True)])  # no confidence is below 0
def test_a_step_learns_only_from_the_lines_the_reading_weights_read_again(below, moves):
    torch.manual_seed(5)
    model = STRModel(output_channels=16).train()
    before = [parameter.detach().clone() for parameter in model.parameters()]
    batch = next(iter(train.SyntheticBatches(seed=4, batch_size=8, fixed_fraction=0.0)))
    read_again = train.ReadAgain(STRModel(output_channels=16).eval(), below)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train._step(model, optimizer, None, batch, torch.device("cpu"), False, read_again=read_again)
    moved = any(not torch.equal(b, a) for b, a in zip(before, model.parameters()))
    assert moved is moves


def test_a_step_in_bf16_chooses_its_lines_by_the_reading_weights_in_f32(monkeypatch):
    read_again = train.ReadAgain(STRModel(output_channels=16).eval(), 0.9)
    arithmetic = {}
    real = train.line_log_probs

    def recorded(model, batch, device, bf16=False):
        arithmetic[model is read_again.model] = bf16
        return real(model, batch, device, bf16)

    monkeypatch.setattr(train, "line_log_probs", recorded)
    model = STRModel(output_channels=16).train()
    batch = next(iter(train.SyntheticBatches(seed=4, batch_size=4, fixed_fraction=0.0)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train._step(model, optimizer, None, batch, torch.device("cpu"), True, read_again=read_again)
    assert arithmetic == {False: True, True: False}  # the trained weights in bf16, the reading weights as served


def test_a_run_reading_again_by_weights_resumes_only_with_them(tmp_path):
    save_checkpoint(STRModel(output_channels=32), tmp_path / "first.pth")  # of its own width, not the run's
    run = ["--run-dir", str(tmp_path / "run")]
    counted = ["--read-again-by", str(tmp_path / "first.pth"), "--read-again-below", "0.8"]
    train.main([*TINY, *run, *counted, "--steps", "2"])
    with pytest.raises(SystemExit, match="--read-again-below 0.8 and --hard-lines 0: resume with those"):
        train.main([*TINY, *run, "--steps", "4"])
    with pytest.raises(SystemExit, match="resume with those"):
        train.main([*TINY, *run, *counted[:2], "--steps", "4"])
    assert train.main([*TINY, *run, *counted, "--steps", "4"])["steps"] == 4


@pytest.mark.parametrize("flags, message", [
    (["--read-again-by", "first.pth", "--read-again-below", "0"], "--read-again-below must be in (0, 1]"),
    (["--read-again-by", "first.pth", "--read-again-below", "1.5"], "--read-again-below must be in (0, 1]"),
    (["--read-again-below", "0.8"], "give --read-again-by too"),
])
def test_a_read_again_confidence_outside_0_to_1_or_without_weights_is_a_usage_error(flags, message, capsys):
    with pytest.raises(SystemExit):
        train.parse_args(flags)
    assert message in capsys.readouterr().err


def test_a_line_s_confidence_in_a_training_batch_is_the_one_the_served_recogniser_gives_it():
    torch.manual_seed(10)
    model = STRModel(output_channels=16).eval()
    synth = TextLineSynth(11, font_files("core"), variety=Variety())
    samples = [synth.sample() for _ in range(6)]
    assert len({s.image.shape[1] for s in samples}) > 1, "the lines should be of several widths, padded in the batch"
    batch = train.collate(samples)
    with torch.no_grad():
        trained = train.line_confidences(train.line_log_probs(model, batch, torch.device("cpu")), batch)
    served = [reading.confidence for reading in Recognizer(model).read([s.image for s in samples])]
    assert trained.tolist() == pytest.approx(served, rel=1e-3)


def test_a_run_reads_again_by_its_weights_of_their_own_width_as_served(tmp_path, monkeypatch):
    save_checkpoint(STRModel(output_channels=32), tmp_path / "first.pth")
    seen = []
    step = train._step
    monkeypatch.setattr(train, "_step", lambda *args, **kwargs: seen.append(args[-1]) or step(*args, **kwargs))
    train.main([*TINY, "--run-dir", str(tmp_path / "run"), "--read-again-by", str(tmp_path / "first.pth"),
                "--read-again-below", "0.8", "--steps", "1"])
    (read_again,) = seen
    assert read_again.below == 0.8
    assert not any(module.training for module in read_again.model.modules())  # batch norm on its running statistics
    served = load_model(tmp_path / "first.pth", output_channels=32).state_dict()
    assert all(torch.equal(value, served[key]) for key, value in read_again.model.state_dict().items())


def test_a_run_trained_on_every_line_refuses_to_resume_counting_fewer(tmp_path):
    save_checkpoint(STRModel(output_channels=16), tmp_path / "first.pth")
    run = ["--run-dir", str(tmp_path / "run")]
    train.main([*TINY, *run, "--steps", "2"])
    with pytest.raises(SystemExit, match="no --read-again-by and --hard-lines 0: resume with those"):
        train.main([*TINY, *run, "--read-again-by", str(tmp_path / "first.pth"), "--steps", "4"])


@pytest.fixture(scope="module")
def shipped():
    checkpoint, channels = served_weights()
    return Recognizer(load_model(checkpoint, channels), max_lines=64)


def test_the_shipped_weights_read_generated_lines(shipped):
    synth = TextLineSynth(seed=424242)
    samples = [synth.sample(TUTORIAL_WIDTH if i % 2 else None) for i in range(200)]
    readings = shipped.read([s.image for s in samples])
    exact = sum(r.text == s.text for r, s in zip(readings, samples))
    assert exact >= 180, f"read {exact} of 200 lines exactly"
