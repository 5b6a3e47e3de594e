"""Whether a round's candidate passes a stage as the rules of rounds 45 to 74 write it, from read_stage.sh's JSON.

    python training_rounds/check_stage.py ROUND LETTER STAGE

Both stages: each held-out variable-width set better than E, the fixed sets as E's, no set more than 0.30 points
below E. Stage 1: the mean gain over E on the four held-out sets larger than the served pair's. Stage 2: the mean
gain on the two held-out variable-width sets larger than the served pair's, and no current or training set further
below base than E alone.
"""

import json
import sys
from pathlib import Path


def gains(prefix: Path, name: str) -> dict[str, float]:
    """Each set's difference, in points, to the weights read ``name``'s JSON was read against."""
    sets = json.loads(Path(f"{prefix}-{name}.json").read_text())["sets"]
    return {set_name: 100 * figures["against"]["difference"] for set_name, figures in sets.items()}


def main(round_name: str, letter: str, stage: str) -> bool:
    prefix = Path("training_rounds") / round_name / f"stage{stage}"
    candidate, served = gains(prefix, f"E+{letter}-against-e"), gains(prefix, "E+served-against-e")
    for name in candidate:
        print(f"{name:45s} E+{letter} {candidate[name]:+.2f}  served {served[name]:+.2f}")
    held_out = [name for name in candidate if name.startswith("held-out")]
    variable = [name for name in held_out if "variable" in name]
    passes = (all(candidate[name] > 0 for name in variable) and min(candidate.values()) >= -0.30
              and all(candidate[name] == 0 for name in candidate if "fixed" in name))
    compared = held_out if stage == "1" else variable
    mean, served_mean = (sum(figures[name] for name in compared) / len(compared) for figures in (candidate, served))
    print(f"mean over {len(compared)} held-out sets: E+{letter} {mean:+.4f}  served {served_mean:+.4f}")
    passes = passes and mean > served_mean
    if stage == "2":
        with_candidate, alone = gains(prefix, f"E+{letter}-against-base"), gains(prefix, "E-against-base")
        for name in (name for name in with_candidate if name.startswith(("current", "training"))):
            print(f"against base {name:40s} E+{letter} {with_candidate[name]:+.2f}  E {alone[name]:+.2f}")
            passes = passes and (with_candidate[name] >= 0 or with_candidate[name] >= alone[name])
    print("PASS" if passes else "FAIL")
    return passes


if __name__ == "__main__":
    sys.exit(0 if main(*sys.argv[1:4]) else 1)
