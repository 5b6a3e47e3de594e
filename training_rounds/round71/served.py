"""What was served when round 71's explorations were read (round 70's ``O`` as the second weights), the lines they
read, and those lines read as served."""
from str_ocr.contract import LINE_STRETCH, READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import Rereading, rereadings
from str_ocr.text import Reading

SECOND = "training_rounds/round70/str_64ch.pth"
LIMITS = LineLimits(stretch=LINE_STRETCH)
COUNT = 2000


def held_out_variable_sets():
    """Each held-out variable-width set of seed 8769, ``COUNT`` lines, as (name, samples)."""
    return [(name, samples) for name, samples in draw_group("held-out", 8769, COUNT).items() if "variable" in name]


def read_as_served(first_reader, second_reader, lines) -> tuple[list[Reading], list[Rereading], list[list[Reading]]]:
    """``lines`` read once by ``first_reader``, and the unsure ones again by both, as served: the first readings, the
    plans (``rereadings``) and each plan's readings."""
    first = first_reader(lines)
    plans = rereadings(lines, first, READ_AGAIN_BELOW, LIMITS, second=True)
    return first, plans, [first_reader(plans[0].resampled), second_reader(plans[1].resampled)]
