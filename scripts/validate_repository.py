"""Check every model configuration in the repositories the way Triton would, before Triton does.

    .venv/bin/python scripts/validate_repository.py [--model-repository DIR ...]

By default it checks ``model_repository`` and ``model_repository_onnx``, each on its own. Exits 1 and lists
the problems when there are any (``str_ocr_triton.validation`` says what is checked).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from str_ocr_triton.config import ONNX_REPOSITORY, REPOSITORY, default_repository
from str_ocr_triton.validation import validate

DEFAULT_REPOSITORIES = [default_repository(REPOSITORY), default_repository(ONNX_REPOSITORY)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = " and ".join(str(r) for r in DEFAULT_REPOSITORIES)
    parser.add_argument("--model-repository", type=Path, action="append", dest="repositories", metavar="DIR",
                        help=f"a repository to check; repeat for several (default: {defaults})")
    args = parser.parse_args(argv)
    found = 0
    for repository in args.repositories or DEFAULT_REPOSITORIES:
        problems = validate(repository)
        for problem in problems:
            print(f"validate: {problem}", file=sys.stderr)
        count = sum(1 for d in repository.iterdir() if (d / "config.pbtxt").is_file())
        print(f"validate: {count} models, {len(problems)} problem(s) in {repository}")
        found += len(problems)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
