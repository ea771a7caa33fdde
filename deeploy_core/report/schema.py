"""The published JSON Schema of ``report.json``, shipped inside the package.

The schema is a file of its own (``report.schema.json``, package data) rather
than a Python structure so that users read, diff and feed it to any validator
as it is published (``deeploy-core schema report`` prints it).  Validating
against it needs a JSON Schema library, which only the test extra installs:
the compiler itself never validates, so nothing here imports one.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

SCHEMA_FILE = "report.schema.json"
"""The schema's file name beside this module."""

DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema draft the schema is written in (its ``$schema``)."""


def report_schema_text() -> str:
    """The schema exactly as shipped (UTF-8 JSON ending in a newline)."""
    return (resources.files("deeploy_core") / "report" / SCHEMA_FILE).read_text(encoding="utf-8")


def report_schema() -> dict[str, Any]:
    """The schema as a JSON object."""
    schema: dict[str, Any] = json.loads(report_schema_text())
    return schema
