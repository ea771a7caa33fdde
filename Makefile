# One-command setup: every target creates .venv and installs the core, every plugin and every example plugin
# (examples/*/pyproject.toml, e.g. the operator plugin, whose tests run with the others) from this checkout.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PLUGIN_PROJECTS := $(sort $(dir $(wildcard plugins/*/pyproject.toml))) $(sort $(dir $(wildcard examples/*/pyproject.toml)))
STAMP := $(VENV)/.installed

.PHONY: demo test docs clean models quant

# setuptools announces every editable install with a 10-line "BuildBackendWarning: Editable installation" (60 lines
# for the six projects) that even pip --quiet passes on; it is information, not a problem, so the install steps
# ignore UserWarnings in the build backend.  Errors still fail the install and are printed.
QUIET_BUILD := PYTHONWARNINGS=ignore::UserWarning

$(STAMP): pyproject.toml $(wildcard plugins/*/pyproject.toml) $(wildcard examples/*/pyproject.toml)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(QUIET_BUILD) $(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]' $(addprefix -e ,$(PLUGIN_PROJECTS))
	touch $@

# The optional test extra for tests/models (torch, torchvision, timm, onnxscript, transformers; exact pins in
# pyproject.toml).
models: $(STAMP)
	$(QUIET_BUILD) $(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[models]'

# The optional test extra for tests/quant (tensorflow-cpu, tf2onnx, ai-edge-litert, brevitas, qonnx; pins and why in
# pyproject.toml).  Also what `validate --reference MODEL.tflite` needs.
quant: $(STAMP)
	$(QUIET_BUILD) $(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[quant]'

EXAMPLE := build/example/tiny_cnn.onnx

demo: $(STAMP)
	$(BIN)/deeploy-core plugins --all
	$(BIN)/python examples/make_tiny_cnn.py $(EXAMPLE)
	$(BIN)/deeploy-core compile $(EXAMPLE) --platform generic-c -o build/example/generic-c --force
	$(BIN)/deeploy-core analyze $(EXAMPLE) --platform generic-c
	$(BIN)/deeploy-core validate $(EXAMPLE) --platform generic-c
	@echo
	@echo "Next steps:"
	@echo "  make -C build/example/generic-c    build the generated folder (libnetwork.a)"
	@echo "  $(BIN)/deeploy-core compile $(EXAMPLE) --platform pulp-cluster -o build/example/pulp-cluster"
	@echo "                                     the same network tiled for the PULP-like cluster"
	@echo "  docs/install.rst, docs/cli.rst     each step explained; every command and option"
	@echo "  make test                          the test suite"

test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadfile --durations=15

docs: $(STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) docs/_build .pytest_cache build
