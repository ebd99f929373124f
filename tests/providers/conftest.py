# The wire-server fixtures come from the pytest11 plugin once hermes is
# installed; importing them here makes these tests work from a plain checkout.
from plugins_providers.pytest_plugin import make_wire_server, wire_server  # noqa: F401
