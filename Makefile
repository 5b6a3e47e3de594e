# The project's commands. Each one sets up what it needs first (`make setup` is idempotent).
VENV   ?= .venv
PYTHON ?= python3
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.setup-done
REAPER := backend_src/str_ocr_server/compat/libreap_stubs.so
CONFIG ?=
PYTEST_ARGS ?=
BENCH_ARGS ?=
ANALYZE_ARGS ?=
PROFILE_ARGS ?=
RPS ?= 2000
P95_MS ?= 50
CAPACITY_ARGS ?=
# make image: auto (NGC's base where it can be pulled, else the CPU image), ngc or cpu.
IMAGE_BASE ?= auto
# make test first starts a Docker engine where one can be had and builds the CPU image the container tests
# run (quick when cached); 0: it does neither (for a quick run of the unit tests, say).
CONTAINERS ?= 1

.PHONY: setup fonts train evaluate declare-faces demo lint test serve bench profile perf analyze capacity detector-onnx \
	peers bench-pages image lock clean

setup: $(STAMP) $(REAPER)

$(STAMP): requirements.txt pyproject.toml scripts/setup_system.sh scripts/setup_perf_analyzer.sh backend_src/str_ocr/fonts.py
	bash scripts/setup_system.sh $(PYTHON)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
		--config-settings editable_mode=compat -e .
	bash scripts/setup_perf_analyzer.sh $(VENV)
	$(PY) -c "from str_ocr_server.triton import find_triton; find_triton()"  # .venv/triton_backends, for plain tritonserver
	touch $@

# The library the launcher preloads into tritonserver to reap the stubs it replaced (str_ocr_server.compat.stub_reaper).
$(REAPER): backend_src/str_ocr_server/compat/reap_stubs.c scripts/build_reaper.sh | $(STAMP)
	bash scripts/build_reaper.sh $< $@

# The extended training faces (str_ocr.fonts; the README says how large): training needs them, serving does not.
fonts: setup
	bash scripts/setup_system.sh $(PYTHON) extended

# e.g. make train TRAIN_ARGS="--init training_rounds/base/str_64ch.pth --fonts extended ..."
# Under jemalloc where it is installed, keeping what the trainer frees for reuse: on a CPU glibc's heap grows with
# every step (docs/model.md, Weights). Expanded when the recipe runs, after setup has installed it.
TRAIN_ARGS ?=
JEMALLOC = $(shell /sbin/ldconfig -p 2>/dev/null | awk '/libjemalloc\.so\.2 / {print $$NF; exit}')
train: setup fonts
	LD_PRELOAD=$(JEMALLOC) MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 $(PY) scripts/train.py $(TRAIN_ARGS)

# The recogniser on every evaluation set, beside RapidOCR's and EasyOCR's recognisers on the same lines
EVAL_ARGS ?= --peers rapidocr,easyocr
evaluate: setup peers
	$(PY) scripts/evaluate.py $(EVAL_ARGS)

# Rewrites backend_src/str_ocr/extended_faces.tsv from the candidate packages scripts/declare_faces.py names
declare-faces: setup $(RAPIDOCR)
	bash scripts/setup_system.sh $(PYTHON) && apt-get update -qq && apt-get install -y -qq --no-install-recommends \
		$$($(PY) scripts/declare_faces.py --packages) >/dev/null
	$(PY) scripts/declare_faces.py

demo: setup
	$(PY) -m client.quickstart

# pyflakes and the line length (pyproject.toml's [tool.ruff]); make test runs it first.
lint: setup
	$(PY) -m ruff check .

# No engine is no failure: the container tests then skip, saying why.
test: setup fonts lint
ifeq ($(CONTAINERS),1)
	@if bash docker/engine.sh; then bash docker/build.sh cpu; \
	else echo "test: no Docker engine here: the container tests will be skipped"; fi
endif
	$(PY) -m pytest $(PYTEST_ARGS)

serve: setup
	$(PY) -m str_ocr_server $(if $(CONFIG),--config-name $(CONFIG))

bench: setup
	$(PY) scripts/sweep.py $(BENCH_ARGS)

# Where serving's CPU goes under the tutorial's load: Linux perf and py-spy, beside the model alone
profile: setup
	$(PY) scripts/profile_serving.py $(PROFILE_ARGS)

# NVIDIA's perf_analyzer, e.g. make perf ARGS="-m text_recognition -b 2 --shape input.1:1,32,100 --concurrency-range 2:16:2"
perf: setup
	$(VENV)/bin/perf_analyzer $(ARGS)

# NVIDIA's Model Analyzer, in a virtualenv of its own (it wants numpy 2 and a newer tritonclient)
ANALYZER := .venv-analyzer/bin/model-analyzer
$(ANALYZER): requirements-analyzer.txt
	$(PYTHON) -m venv .venv-analyzer
	.venv-analyzer/bin/pip install --quiet --disable-pip-version-check -r requirements-analyzer.txt
	touch $@

# RapidOCR, measured beside ocr_page, in a virtualenv of its own (it wants numpy 2 and opencv-python)
RAPIDOCR := .venv-rapidocr/.setup-done
$(RAPIDOCR): requirements-rapidocr.txt
	$(PYTHON) -m venv .venv-rapidocr
	.venv-rapidocr/bin/pip install --quiet --disable-pip-version-check -r requirements-rapidocr.txt
	touch $@

# EasyOCR's recogniser, measured beside the project's (scripts/evaluate.py --peers easyocr), in its own virtualenv
EASYOCR := .venv-easyocr/.setup-done
$(EASYOCR): requirements-easyocr.txt
	$(PYTHON) -m venv .venv-easyocr
	.venv-easyocr/bin/pip install --quiet --disable-pip-version-check -r requirements-easyocr.txt
	touch $@

peers: $(RAPIDOCR) $(EASYOCR)

# Whole images: ocr_page's ways of batching crops under perf_analyzer, beside RapidOCR in-process
PAGES_ARGS ?=
bench-pages: setup $(RAPIDOCR)
	$(PY) scripts/bench_pages.py $(PAGES_ARGS)

analyze: setup $(ANALYZER)
	$(PY) scripts/analyze.py --model-analyzer $(ANALYZER) $(ANALYZE_ARGS)

capacity: setup
	$(PY) scripts/capacity.py --rps $(RPS) --p95-ms $(P95_MS) $(CAPACITY_ARGS)

# text_detection's file for Triton's onnxruntime backend (its configs/onnxruntime.pbtxt), from the pinned package
detector-onnx: setup
	$(PY) -c "from str_ocr.detection import copy_detector; copy_detector('model_repository/text_detection/1/model.onnx')"

image:
	bash docker/build.sh $(IMAGE_BASE)

lock:
	rm -rf /tmp/str-ocr-lock && $(PYTHON) -m venv /tmp/str-ocr-lock
	grep -v "^rapidocr-onnxruntime" requirements.in | /tmp/str-ocr-lock/bin/pip install --quiet -r /dev/stdin
	/tmp/str-ocr-lock/bin/pip install --quiet --no-deps $$(grep -o "^rapidocr-onnxruntime==[0-9.]*" requirements.in)
	{ echo "# Every package pinned; generated from requirements.in by \`make lock\`. Do not edit by hand."; \
	  /tmp/str-ocr-lock/bin/pip freeze --all | grep -v "^pip==" | sed 's/^torch==\([0-9.]*\)+cpu/torch==\1/'; } > requirements.txt

clean:
	rm -rf $(VENV) .venv-analyzer .venv-rapidocr .venv-easyocr .pytest_cache
