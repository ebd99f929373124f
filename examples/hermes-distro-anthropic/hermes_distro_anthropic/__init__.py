"""An example hermes distro: Anthropic only, no shell tools."""

from pathlib import Path

# hermes reads the distro from this file (an entry point may also name a mapping).
DISTRO = str(Path(__file__).with_name("distro.yaml"))


def main() -> None:
    from hermes.cli.entry import distro_main  # not hermes.cli.app: --help and plugins list start faster

    distro_main("anthropic-only", prog_name="hermes-anthropic")
