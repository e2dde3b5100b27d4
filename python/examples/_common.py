"""Shared bits of the examples: the module argument and the report line."""

import pathlib
import sys

DEFAULT_MODULE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "transformer_encoder.hlo"


def module_argument():
    """The module path from the command line, else the shipped example."""
    return sys.argv[1] if len(sys.argv) > 1 else str(DEFAULT_MODULE)


def report(label, seconds, baseline, unoptimized):
    print(
        f"{label}: {seconds * 1e6:.2f} us modelled vs {baseline * 1e6:.2f} us for the "
        f"xla-gpu baseline ({baseline / seconds:.3f}x; unoptimized {unoptimized * 1e6:.2f} us)"
    )
