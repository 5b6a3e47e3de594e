"""Check every model configuration in the repository the way Triton would, before Triton does.

    .venv/bin/python scripts/validate_repository.py [--model-repository DIR]

Exits 1 and lists the problems when there are any (``str_ocr_server.validation`` says what is checked).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from str_ocr_server.repository import default_repository
from str_ocr_server.validation import validate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-repository", type=Path, default=default_repository())
    args = parser.parse_args(argv)
    problems = validate(args.model_repository)
    for problem in problems:
        print(f"validate: {problem}", file=sys.stderr)
    count = sum(1 for d in args.model_repository.iterdir() if (d / "config.pbtxt").is_file())
    print(f"validate: {count} models, {len(problems)} problem(s) in {args.model_repository}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
