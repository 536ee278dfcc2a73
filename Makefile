# The course's commands. Each one creates or reuses .venv and installs the pinned requirements.
#   make course    run every notebook on the embedded sample, executed copies + HTML in build/
#   make test      the whole test suite (helpers, notebooks under nbval in `smoke`, lint)
#   make check     lint + the tests that execute no notebook and open no browser (minutes)
#   make lab       open JupyterLab on notebooks/
#   make slides    export every notebook to an offline reveal.js deck in build/slides/
#   make site      the course website (Sphinx + myst-nb) in build/site/, offline
#   make test-colab  every notebook in `smoke` on Colab's older stack (requirements-colab.txt)
#   make test-gpu-rehearsal  notebooks 00, 08-11 and the GPU tests with a fake T4 (no GPU needed)
#   make bench-gpu   record every network on every GPU here into results/ (README: Benchmarks)
#   make test-jax    the benchmark on Keras' JAX backend without TensorFlow (requirements-jax.txt)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROFILE ?= sample

.PHONY: course test check test-slow lab sample clean audit slides site bench bench-gpu lock \
        test-colab test-jax test-gpu-rehearsal

# The whole environment from requirements.lock (every package pinned, hashes checked), then the
# helpers themselves, editable, with nothing more.
$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

# After changing requirements.txt: resolve the whole environment again, with hashes.
lock:
	$(PYTHON) -m venv .cache/lock-venv
	.cache/lock-venv/bin/pip install --quiet pip-tools==7.6.2
	.cache/lock-venv/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
	  --no-header --no-emit-index-url --no-emit-find-links -o requirements.lock requirements.txt

# reveal.js, require.js, jQuery and MathJax for the offline decks, pinned in package-lock.json.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# A run cut short goes on with the notebooks not yet built; FORCE=1 runs every notebook again.
course: $(VENV)/.installed node_modules/.installed
	$(PY) -m tools.run_course --profile $(PROFILE) $(if $(FORCE),--force)
	$(PY) -m tools.export_slides --profile $(PROFILE)
	$(PY) -m tools.build_site --profile $(PROFILE)

# The course website in build/site/ from the last `make course` (runs only what is missing).
site: $(VENV)/.installed node_modules/.installed
	$(PY) -m tools.build_site --profile $(PROFILE)

# Decks from the last `make course` run in build/; notebooks not run there are executed now.
slides: $(VENV)/.installed node_modules/.installed
	$(PY) -m tools.export_slides --profile $(PROFILE)

# nbval runs notebooks/ first, each notebook once on an empty build folder of its own; the slide
# and site tests read those runs (conftest.py). pytest exits 5 when it collected nothing:
# that is a failure here, never a pass.
test: $(VENV)/.installed node_modules/.installed
	$(VENV)/bin/ruff check conftest.py helpers tests tools notebooks
	COURSE_PROFILE=smoke $(PY) -m pytest --nbval-lax --durations=15 \
	  notebooks tests; \
	  rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; exit $$rc

# The edit loop: lint and every test that executes no whole notebook and opens no browser.
check: $(VENV)/.installed
	$(VENV)/bin/ruff check conftest.py helpers tests tools notebooks
	COURSE_PROFILE=smoke $(PY) -m pytest -q -m "not notebooks and not browser and not busy" --durations=5 tests

test-slow: $(VENV)/.installed
	COURSE_PROFILE=sample $(PY) -m pytest --run-slow -m slow tests

lab: $(VENV)/.installed
	$(VENV)/bin/jupyter lab notebooks/

# Dependency audit: needs the vulnerability databases (PyPI's JSON API or OSV) to be reachable.
audit: $(VENV)/.installed
	$(PY) -m pip install --quiet pip-audit==2.10.1
	$(VENV)/bin/pip-audit -r requirements.txt

sample: $(VENV)/.installed
	$(PY) -m tools.build_sample

clean:
	rm -rf build

# Re-record every CPU benchmark (and GPU, where present) into results/; run it on a quiet machine.
bench: $(VENV)/.installed
	COURSE_PROFILE=sample $(PY) -m tools.bench --all --record

# Every GPU of this machine: each network in float32 and mixed precision, the batch sweep,
# utilisation and power timelines, training memory; results/ names the GPU in every file.
bench-gpu: $(VENV)/.installed
	COURSE_PROFILE=sample $(PY) -m tools.bench --all --device gpu --record

# The benchmark on Keras 3's JAX backend in an environment without TensorFlow (JAX's CPU wheel),
# as on a GPU machine that has JAX but cannot install TensorFlow. The root conftest.py (nbval's
# hooks) is left out: this environment has no Jupyter.
JAX_VENV ?= .cache/venv-jax

$(JAX_VENV)/.installed: requirements-jax.txt
	$(PYTHON) -m venv $(JAX_VENV)
	$(JAX_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(JAX_VENV)/bin/python -m pip install --quiet -r requirements-jax.txt
	touch $@

test-jax: $(JAX_VENV)/.installed
	KERAS_BACKEND=jax COURSE_PROFILE=smoke $(JAX_VENV)/bin/python -m pytest --confcutdir=tests \
	  --durations=5 tests/test_bench_jax.py

# Colab keeps its own TensorFlow and Keras (2025: TensorFlow 2.19, Keras 3.10, NumPy 2.0, no
# LiteRT), so the notebooks must run on that older stack too: it goes into a venv of its own, the
# helpers editable beside it, and every notebook runs in `smoke` with the tests of the code that
# differs there (export, GPUtil). COLAB_PYTHON=python3.12 is Colab's own Python.
COLAB_VENV ?= .cache/venv-colab
COLAB_PYTHON ?= $(PYTHON)

$(COLAB_VENV)/.installed: requirements-colab.txt pyproject.toml
	$(COLAB_PYTHON) -m venv $(COLAB_VENV)
	$(COLAB_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(COLAB_VENV)/bin/python -m pip install --quiet -r requirements-colab.txt
	$(COLAB_VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $@

test-colab: $(COLAB_VENV)/.installed
	COURSE_PROFILE=smoke $(COLAB_VENV)/bin/python -m pytest --nbval-lax --durations=15 \
	  notebooks tests/test_export.py tests/test_hardware.py tests/test_monitor.py; \
	  rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; exit $$rc

# The GPU rehearsal: notebooks 00 and 08-11 and the GPU code's tests with a fake nvidia-smi first
# on PATH and, in every Python process (notebook kernels, subprocesses, pytest), a TensorFlow that
# lists one Tesla T4 whose work runs on the CPU (tests/fake_gpu.py, through the sitecustomize.py
# of tests/gpu_rehearsal_site).
test-gpu-rehearsal: $(VENV)/.installed
	PATH="$(CURDIR)/tests/fake_bin:$$PATH" FAKE_NVIDIA_SMI_GPUS="Tesla T4" \
	  PYTHONPATH="$(CURDIR)/tests/gpu_rehearsal_site" COURSE_PROFILE=smoke \
	  $(PY) -m pytest --nbval-lax --durations=10 notebooks/00_*.ipynb notebooks/08_*.ipynb \
	  notebooks/09_*.ipynb notebooks/10_*.ipynb notebooks/11_*.ipynb tests/test_gpu_rehearsal.py \
	  tests/test_hardware.py tests/test_monitor.py tests/test_plots.py tests/test_peak.py \
	  tests/test_distributed.py tests/test_memory.py
