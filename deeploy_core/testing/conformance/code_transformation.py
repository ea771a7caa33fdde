"""The contract of code-transformation extensions: opt-in, reported, and the code still validates with the pass.

A transformation is opt-in: installing its plugin must leave every compile
that does not name it byte-identical.  Selected (``--code-transformation``),
it runs on every layer, report.json lists it in each layer's chain, and the
generated code still builds, runs and matches ONNX Runtime.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.extensions import CodeTransformationExtension
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.loading import load_plugin_under_test
from deeploy_core.testing.models import CONFORMANCE_MODELS


class CodeTransformationConformance:
    """Subclass with ``plugin``, ``transformation_name``, ``platform`` and ``platform_plugin``.

    Every catalogue model is compiled with and without the plugin installed
    (same code unless the pass is selected), then with the pass selected,
    built, run and compared with ONNX Runtime.
    """

    plugin: ClassVar[Any] = None
    plugin_name: ClassVar[str] = "transformation-under-test"
    transformation_name: ClassVar[str] = ""
    platform: ClassVar[str] = "generic-c"
    platform_plugin: ClassVar[Any] = None
    platform_plugin_name: ClassVar[str] = "platform"

    @classmethod
    def platform_host(cls) -> PluginHost:
        """A host with the platform only (the plugin under test not installed)."""
        host = PluginHost()
        if cls.platform_plugin is not None:
            load_plugin_under_test(host, cls.platform_plugin, cls.platform_plugin_name)
        return host

    @pytest.fixture(scope="class")
    @classmethod
    def transformation_host(cls) -> PluginHost:
        host = cls.platform_host()
        load_plugin_under_test(host, cls.plugin, cls.plugin_name)
        return host

    def selected(self) -> CompileOptions:
        """The options of a compile that selects the transformation under test."""
        return CompileOptions(platform=self.platform, code_transformations=(self.transformation_name,))

    def test_transformation_is_registered(self, transformation_host: PluginHost) -> None:
        extension = transformation_host.extension("code_transformation", self.transformation_name)
        assert isinstance(extension, CodeTransformationExtension)
        made = transformation_host.create("code_transformation", self.transformation_name)
        assert callable(getattr(made, "apply", None)), "the factory must return an object with apply(block, ctxt)"

    @pytest.mark.parametrize("model_name", sorted(CONFORMANCE_MODELS))
    def test_installing_changes_nothing_until_selected(self, model_name: str, transformation_host: PluginHost,
                                                       tmp_path: Path) -> None:
        path = tmp_path / f"{model_name}.onnx"
        onnx.save(CONFORMANCE_MODELS[model_name](), path)
        _, without = compile_model(path, CompileOptions(platform=self.platform), self.platform_host())
        _, installed = compile_model(path, CompileOptions(platform=self.platform), transformation_host)
        assert installed.files == without.files, "an installed, unselected transformation changed the code"
        assert installed.report == without.report
        assert all(self.transformation_name not in layer["code_transformations"]
                   for layer in installed.report["layers"])

    @pytest.mark.parametrize("model_name", sorted(CONFORMANCE_MODELS))
    def test_models_still_validate(self, model_name: str, transformation_host: PluginHost, tmp_path: Path) -> None:
        path = tmp_path / f"{model_name}.onnx"
        onnx.save(CONFORMANCE_MODELS[model_name](), path)
        generated, result = validate_model(path, self.selected(), transformation_host, atol=1e-4, rtol=1e-5)
        assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
        for layer in generated.report["layers"]:
            assert layer["code_transformations"].count(self.transformation_name) == 1, \
                f"layer {layer['node']!r} ran {layer['code_transformations']}"
        self.check_generated(generated.files)

    def check_generated(self, files: dict[str, str]) -> None:
        """Override to assert what the transformation should have left in the code."""
