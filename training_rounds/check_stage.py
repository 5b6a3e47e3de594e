"""Whether a round's candidate passes a stage as the rules of rounds 71 to 74 write it, from read_stage.sh's JSON.

    python training_rounds/check_stage.py ROUND LETTER STAGE

Both stages: each held-out variable-width set better than E, the fixed sets read as E reads them (no line read
otherwise: the second weights never read them), no set more than 0.30 points below E. Stage 1: the mean gain over E
on the four held-out sets larger than the served pair's. Stage 2: the mean gain on the two held-out variable-width
sets larger than the served pair's, and no current or training set further below base than E alone.
"""

import argparse
import json
from pathlib import Path

ROUNDS = Path(__file__).resolve().parent


def read_against(prefix: str, name: str) -> dict[str, dict]:
    """Each set's comparison with the ``--against`` weights, from stage file ``name``."""
    path = ROUNDS / f"{prefix}-{name}.json"
    if not path.exists():
        raise SystemExit(f"{path} is missing: read the stage first (read_stage.sh)")
    return {set_name: figures["against"] for set_name, figures in json.loads(path.read_text())["sets"].items()}


def points(figures: dict) -> float:
    return 100 * figures["difference"]


def net_lines(sets: dict[str, dict], names: list[str]) -> int:
    """Lines gained less lines lost over ``names``: whole lines, so that a tie is a tie (the sets are the same size)."""
    return sum(sets[name]["only_evaluated"] - sets[name]["only_against"] for name in names)


def passes_against_e(candidate: dict[str, dict]) -> bool:
    variable = [name for name in candidate if name.startswith("held-out") and "variable" in name]
    fixed = [name for name in candidate if "fixed" in name]
    return (all(points(candidate[name]) > 0 for name in variable)
            and all(candidate[name]["only_evaluated"] == candidate[name]["only_against"] == 0 for name in fixed)
            and min(points(figures) for figures in candidate.values()) >= -0.30)


def passes_against_base(with_candidate: dict[str, dict], alone: dict[str, dict], letter: str) -> bool:
    """The rule's words read literally: a current or training set at or above base passes, one below it passes if E
    alone reads it as far below or further."""
    passes = True
    for name in (name for name in with_candidate if name.startswith(("current", "training"))):
        ours, theirs = points(with_candidate[name]), points(alone[name])
        print(f"against base {name:40s} E+{letter} {ours:+.2f}  E {theirs:+.2f}")
        passes = passes and (ours >= 0 or ours >= theirs)
    return passes


def main(round_name: str, letter: str, stage: int) -> bool:
    prefix = f"{round_name}/stage{stage}"
    candidate, served = read_against(prefix, f"E+{letter}-against-e"), read_against(prefix, "E+served-against-e")
    for name in candidate:
        print(f"{name:45s} E+{letter} {points(candidate[name]):+.2f}  served {points(served[name]):+.2f}")
    compared = [name for name in candidate if name.startswith("held-out") and (stage == 1 or "variable" in name)]
    ours, theirs = net_lines(candidate, compared), net_lines(served, compared)
    print(f"over the {len(compared)} held-out sets compared: E+{letter} {ours:+d} lines, served {theirs:+d}")
    passes = passes_against_e(candidate) and ours > theirs
    if stage == 2:
        passes = passes_against_base(read_against(prefix, f"E+{letter}-against-base"),
                                     read_against(prefix, "E-against-base"), letter) and passes
    print("PASS" if passes else "FAIL")
    return passes


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("round", help="the round's folder in training_rounds/, e.g. round74")
    parser.add_argument("letter", help="the candidate's letter, as read_stage.sh named its files")
    parser.add_argument("stage", type=int, choices=[1, 2])
    args = parser.parse_args()
    raise SystemExit(0 if main(args.round, args.letter, args.stage) else 1)
