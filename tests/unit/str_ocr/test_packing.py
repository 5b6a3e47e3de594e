import pytest
import torch

from str_ocr.packing import ColumnCounts, column_counts, pad_to_width, padding_waste, plan_groups, stack_padded


def test_equal_widths_share_one_group_without_padding():
    groups = plan_groups([100] * 6, [2] * 6)
    assert len(groups) == 1 and groups[0].width == 100
    assert padding_waste(groups, [100] * 6, [2] * 6) == 0


def test_very_different_widths_are_not_padded_together():
    widths, counts = [40, 400, 42, 410, 44], [1] * 5
    groups = plan_groups(widths, counts, max_padding=0.25)
    assert sorted(sorted(g.members) for g in groups) == [[0, 2, 4], [1, 3]]
    assert padding_waste(groups, widths, counts) < 0.05


def test_column_counts_add_up_and_give_the_padding_between_two_readings():
    groups = plan_groups([40, 44], [2, 1], max_padding=0.25)
    counts = column_counts(groups, [40, 44], [2, 1])
    assert counts == ColumnCounts(real=124, computed=132) and counts.padding == 8
    running = ColumnCounts(real=1000, computed=1100)
    assert (running + counts) - running == counts


@pytest.mark.parametrize("max_padding", [0.0, 0.1, 0.25, 1.0])
def test_every_group_respects_the_padding_bound(max_padding):
    gen = torch.Generator().manual_seed(0)
    widths = torch.randint(20, 500, (200,), generator=gen).tolist()
    counts = torch.randint(1, 4, (200,), generator=gen).tolist()
    groups = plan_groups(widths, counts, max_padding=max_padding, max_lines=16)
    assert sorted(i for g in groups for i in g.members) == list(range(200))
    for g in groups:
        real = sum(widths[i] * counts[i] for i in g.members)
        lines = sum(counts[i] for i in g.members)
        assert g.width == max(widths[i] for i in g.members)
        assert lines * g.width <= (1 + max_padding) * real + 1e-9
        assert lines <= 16 or len(g.members) == 1


def test_a_request_larger_than_max_lines_is_not_split():
    groups = plan_groups([100, 100], [10, 1], max_lines=4)
    assert [g.members for g in groups] == [(0,), (1,)]


def test_padding_is_zeros_on_the_right():
    line = torch.arange(1, 7, dtype=torch.float32).reshape(1, 1, 2, 3)
    padded = pad_to_width(line, 5)
    assert padded.shape == (1, 1, 2, 5)
    assert torch.equal(padded[..., :3], line) and not padded[..., 3:].any()
    assert pad_to_width(line, 3) is line
    assert stack_padded([line, pad_to_width(line, 4)], 5).shape == (2, 1, 2, 5)
