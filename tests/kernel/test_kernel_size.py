"""The kernel's size limits (scripts/kernel_size.py), kept holding."""

import importlib.util

from tests.conftest import ROOT


def _report():
    spec = importlib.util.spec_from_file_location("kernel_size", ROOT / "scripts" / "kernel_size.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, module.report()


def test_no_kernel_file_is_over_600_lines():
    module, found = _report()
    over = {name: size["lines"] for name, size in found["files"].items() if size["lines"] > module.MAX_FILE_LINES}
    assert not over, f"kernel files over {module.MAX_FILE_LINES} lines: {over}"


def test_every_kernel_module_belongs_to_a_concern_of_the_size_report():
    _, found = _report()
    assert all(size["concern"] for size in found["files"].values()), \
        [name for name, size in found["files"].items() if not size["concern"]]
    assert found["total"]["lines"] == sum(size["lines"] for size in found["concerns"].values())
    assert 0 < found["total"]["code"] < found["total"]["lines"]


def test_no_concern_of_the_kernel_is_over_its_budget_of_code_lines():
    module, found = _report()
    assert set(module.BUDGET) == set(module.CONCERNS)
    over = {c: f"{size['code']} > {size['budget']}" for c, size in found["concerns"].items()
            if size["code"] > size["budget"]}
    assert not over, f"over budget (raise BUDGET in scripts/kernel_size.py only with a reason): {over}"
    assert found["total"]["code"] <= found["total"]["budget"] == sum(module.BUDGET.values())
