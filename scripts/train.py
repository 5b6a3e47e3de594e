"""Train the recogniser with CTC on synthetic text lines (``str_ocr.training`` says how;
``training_rounds/commands.md`` has the runs that made the shipped weights).

    .venv/bin/python scripts/train.py --output-channels 64 --steps 40000 --run-dir runs/str64 [--init PATH]
"""

from str_ocr.training import main

if __name__ == "__main__":
    main()
