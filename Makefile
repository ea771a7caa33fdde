# One-command setup: every target creates .venv and installs the core and every plugin from this checkout.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PLUGIN_PROJECTS := $(sort $(dir $(wildcard plugins/*/pyproject.toml)))
STAMP := $(VENV)/.installed

.PHONY: demo test docs clean

$(STAMP): pyproject.toml $(wildcard plugins/*/pyproject.toml)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]' $(addprefix -e ,$(PLUGIN_PROJECTS))
	touch $@

demo: $(STAMP)
	$(BIN)/deeploy-core plugins --all

test: $(STAMP)
	$(BIN)/python -m pytest

docs: $(STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) docs/_build .pytest_cache
