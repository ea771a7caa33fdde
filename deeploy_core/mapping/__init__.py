"""Operator mapping: parsers, type checkers, templates, bindings, mappers and layers."""

from deeploy_core.mapping.added import PluginMappers
from deeploy_core.mapping.binding import NodeBinding, NodeMapper
from deeploy_core.mapping.kernel_runtime import KernelRuntime
from deeploy_core.mapping.layer import Layer
from deeploy_core.mapping.mismatch import Mismatch, NodeMismatch
from deeploy_core.mapping.parser import NodeParser, OperatorRepresentation, attribute, constant_values, is_present
from deeploy_core.mapping.template import NodeTemplate
from deeploy_core.mapping.typecheck import NodeTypeChecker
from deeploy_core.mapping import tflite_parameters

__all__ = [
    "KernelRuntime",
    "Layer",
    "Mismatch",
    "NodeBinding",
    "NodeMapper",
    "NodeMismatch",
    "NodeParser",
    "NodeTemplate",
    "NodeTypeChecker",
    "OperatorRepresentation",
    "PluginMappers",
    "attribute",
    "constant_values",
    "is_present",
    "tflite_parameters",
]
