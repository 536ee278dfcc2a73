# The course's commands. Each one creates or reuses .venv and installs the pinned requirements.
#   make course    run every notebook on the embedded sample, executed copies + HTML in build/
#   make test      the whole test suite (helpers, notebooks under nbval in `smoke`, lint)
#   make lab       open JupyterLab on notebooks/
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROFILE ?= sample

.PHONY: course test test-slow lab sample clean audit

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -e .
	touch $@

course: $(VENV)/.installed
	$(PY) tools/run_course.py --profile $(PROFILE)

# pytest exits 5 when it collected nothing: that is a failure here, never a pass.
test: $(VENV)/.installed
	$(VENV)/bin/ruff check helpers tests tools notebooks
	COURSE_PROFILE=smoke $(PY) -m pytest --nbval-lax -p no:cacheprovider tests notebooks; \
	  rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; exit $$rc

test-slow: $(VENV)/.installed
	COURSE_PROFILE=sample $(PY) -m pytest --run-slow -m slow tests

lab: $(VENV)/.installed
	$(VENV)/bin/jupyter lab notebooks/

# Dependency audit: needs the vulnerability databases (PyPI's JSON API or OSV) to be reachable.
audit: $(VENV)/.installed
	$(PY) -m pip install --quiet pip-audit==2.10.1
	$(VENV)/bin/pip-audit -r requirements.txt

sample: $(VENV)/.installed
	$(PY) tools/build_sample.py

clean:
	rm -rf build
