"""Shared modules and helpers of the hlogym Python tests."""

import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(
    os.environ.get("HLOGYM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2])
)
EXAMPLES = SOURCE_DIR / "examples"

# e has two users (a and n): general fusion offers e into a and e into n as
# multi-output fusions, 4 alternatives nodes with 2 choices each.
SHARED = """
HloModule shared
ENTRY main {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  e = f32[1024] exponential(p0)
  a = f32[1024] add(e, p1)
  n = f32[1024] negate(e)
  ROOT t = (f32[1024], f32[1024]) tuple(a, n)
}
"""

# A chain of elementwise ops that general fusion can fuse step by step.
CHAIN = """
HloModule chain
ENTRY main {
  p0 = f32[256,128] parameter(0)
  p1 = f32[256,128] parameter(1)
  e = f32[256,128] exponential(p0)
  m = f32[256,128] multiply(e, p1)
  t = f32[256,128] tanh(m)
  s = f32[256,128] subtract(t, p0)
  ROOT r = f32[256,128] negate(s)
}
"""


def firsts(counts):
    """Operand 1 (the first candidate) wherever there is one."""
    return [1 if c > 1 else 0 for c in counts]


@pytest.fixture
def transformer_path():
    path = EXAMPLES / "transformer_encoder.hlo"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return str(path)
