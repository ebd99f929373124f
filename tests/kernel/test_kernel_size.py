"""The layers' limits (scripts/kernel_size.py), kept holding."""

import importlib.util

import pytest

from tests.conftest import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("kernel_size", ROOT / "scripts" / "kernel_size.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SIZE = _script()
FOUND = SIZE.report()


def test_the_kernel_imports_only_the_standard_library_pluggy_and_itself():
    assert FOUND["kernel_imports"] == {}
    assert SIZE.imported(ROOT / "hermes" / "host" / "plugins.py") >= {"hermes", "kernel"}  # the walk sees imports


@pytest.mark.parametrize("layer", ["kernel", "host", "program", "commands plugin"])
def test_every_layer_keeps_its_limit(layer):
    size = FOUND["layers"][layer]
    assert size["files"] >= 3 and size["lines"] <= size["max_lines"], size
    assert size["max_code"] is None or size["code"] <= size["max_code"], size


def test_no_python_file_of_the_project_is_over_600_lines():
    assert FOUND["files_over_limit"] == {}
    assert len(SIZE.python_files()) > 50  # the walk sees the project
