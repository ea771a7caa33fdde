"""The contract of code-transformation extensions: the generated code still validates with the pass inserted."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import onnx
import pytest

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.extensions import CodeTransformationExtension
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.loading import load_plugin_under_test
from deeploy_core.testing.models import CONFORMANCE_MODELS


class CodeTransformationConformance:
    """Subclass with ``plugin``, ``transformation_name``, ``platform`` and ``platform_plugin``.

    Every catalogue model is compiled with the plugin's pass in the chain, built,
    run and compared with ONNX Runtime.
    """

    plugin: ClassVar[Any] = None
    plugin_name: ClassVar[str] = "transformation-under-test"
    transformation_name: ClassVar[str] = ""
    platform: ClassVar[str] = "generic-c"
    platform_plugin: ClassVar[Any] = None
    platform_plugin_name: ClassVar[str] = "platform"

    @pytest.fixture(scope="class")
    @classmethod
    def transformation_host(cls) -> PluginHost:
        host = PluginHost()
        if cls.platform_plugin is not None:
            load_plugin_under_test(host, cls.platform_plugin, cls.platform_plugin_name)
        load_plugin_under_test(host, cls.plugin, cls.plugin_name)
        return host

    def test_transformation_is_registered(self, transformation_host: PluginHost) -> None:
        extension = transformation_host.extension("code_transformation", self.transformation_name)
        assert isinstance(extension, CodeTransformationExtension)
        made = transformation_host.create("code_transformation", self.transformation_name)
        assert callable(getattr(made, "apply", None)), "the factory must return an object with apply(block, ctxt)"

    @pytest.mark.parametrize("model_name", sorted(CONFORMANCE_MODELS))
    def test_models_still_validate(self, model_name: str, transformation_host: PluginHost, tmp_path: Path) -> None:
        path = tmp_path / f"{model_name}.onnx"
        onnx.save(CONFORMANCE_MODELS[model_name](), path)
        generated, result = validate_model(path, CompileOptions(platform=self.platform), transformation_host,
                                           atol=1e-4, rtol=1e-5)
        assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
        self.check_generated(generated.files)

    def check_generated(self, files: dict[str, str]) -> None:
        """Override to assert what the transformation should have left in the code."""
