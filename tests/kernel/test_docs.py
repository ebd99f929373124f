"""Every hook is documented in CONTRIBUTING.md with its exact signature (datasette's rule)."""

import inspect

from kernel import hookspecs
from tests.conftest import ROOT


def test_every_hookspec_is_in_contributing_with_its_signature():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    missing = []
    for name, spec in vars(hookspecs).items():
        if inspect.isfunction(spec) and hasattr(spec, "hermes_spec"):
            signature = f"`{name}({', '.join(inspect.signature(spec).parameters)})`"
            if signature not in text:
                missing.append(signature)
    assert not missing, f"document these hooks in CONTRIBUTING.md: {missing}"
