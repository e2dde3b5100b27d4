"""Helpers for the NumPy oracle tests: build HLO text, run `hlogym run`, load
the outputs. The hlogym binary comes from $HLOGYM_BIN (ctest sets it)."""

import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

NP_TO_HLO = {
    np.dtype(np.bool_): "pred",
    np.dtype(np.int8): "s8",
    np.dtype(np.int16): "s16",
    np.dtype(np.int32): "s32",
    np.dtype(np.int64): "s64",
    np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "c64",
    np.dtype(np.complex128): "c128",
}

HLO_TO_NP = {v: k for k, v in NP_TO_HLO.items()}


def hlogym_bin():
    path = os.environ.get("HLOGYM_BIN", "")
    if not path or not os.path.exists(path):
        raise unittest.SkipTest("set HLOGYM_BIN to the hlogym binary")
    return path


def shape_str(dtype_or_name, dims):
    name = dtype_or_name if isinstance(dtype_or_name, str) else NP_TO_HLO[
        np.dtype(dtype_or_name)]
    return "%s[%s]" % (name, ",".join(str(int(d)) for d in dims))


def arr_shape(a):
    return shape_str(a.dtype, a.shape)


def ints(v):
    return "{" + ",".join(str(int(x)) for x in v) + "}"


def scalar_computation(name, op, type_name, extra=""):
    """`name` computing op(x, y) on scalars of `type_name`."""
    return ("%s {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n"
            "  ROOT r = %s[] %s(x, y)%s\n}\n" % (name, type_name, type_name,
                                                 type_name, op, extra))


def module(body, params, computations=""):
    """An HLO module whose entry has parameters p0..pn (of the given arrays'
    shapes or shape strings) and the instruction lines in `body` (the last
    one prefixed with ROOT by the caller)."""
    lines = ["HloModule test", "", computations, "ENTRY main {"]
    for i, p in enumerate(params):
        s = p if isinstance(p, str) else arr_shape(p)
        lines.append("  p%d = %s parameter(%d)" % (i, s, i))
    for b in body:
        lines.append("  " + b)
    lines.append("}")
    return "\n".join(lines) + "\n"


class Run:
    def __init__(self, returncode, stdout, stderr, outputs):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.outputs = outputs


def run_hlogym(args, cwd=None):
    p = subprocess.run([hlogym_bin()] + args, capture_output=True, text=True,
                       cwd=cwd, timeout=300)
    return p


class OracleTestCase(unittest.TestCase):
    """A test case with a scratch directory and run helpers."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hlogym_oracle_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_module(self, text, inputs, compressed=False, extra_args=()):
        """Runs `text` on `inputs` (a list of arrays: param0, param1, ...),
        returns the list of outputs out0, out1, ..."""
        hlo = self.write("m.hlo", text)
        args = ["run", hlo]
        if inputs is not None:
            npz = os.path.join(self.tmp, "in.npz")
            save = np.savez_compressed if compressed else np.savez
            save(npz, **{"param%d" % i: a for i, a in enumerate(inputs)})
            args += ["--inputs", npz]
        out = os.path.join(self.tmp, "out.npz")
        if os.path.exists(out):
            os.remove(out)
        p = run_hlogym(args + ["--outputs", out] + list(extra_args))
        if p.returncode != 0:
            self.fail("hlogym run failed (%d):\n%s\n%s\nmodule:\n%s" %
                      (p.returncode, p.stdout, p.stderr, text))
        with np.load(out) as z:
            n = len(z.files)
            return [z["out%d" % j] for j in range(n)]

    def run1(self, text, inputs, **kw):
        outs = self.run_module(text, inputs, **kw)
        self.assertEqual(len(outs), 1)
        return outs[0]

    def assertExact(self, got, want, msg=None):
        want = np.asarray(want)
        self.assertEqual(got.dtype, want.dtype, msg)
        self.assertEqual(got.shape, want.shape, msg)
        if want.dtype.kind in "fc":
            np.testing.assert_array_equal(got, want, err_msg=msg or "")
            # assert_array_equal treats -0 == 0; the bits must match too
            # (NaN payloads aside).
            g = np.ascontiguousarray(got).reshape(-1)
            w = np.ascontiguousarray(want).reshape(-1)
            gb = g.view(np.uint8).reshape(g.size, g.itemsize)
            wb = w.view(np.uint8).reshape(w.size, w.itemsize)
            same = (gb == wb).all(axis=1) | (np.isnan(g) & np.isnan(w))
            self.assertTrue(np.all(same), "bits differ: %s" % (msg or ""))
        else:
            np.testing.assert_array_equal(got, want, err_msg=msg or "")

    def assertClose(self, got, want, rtol, atol, msg=None):
        want = np.asarray(want)
        self.assertEqual(got.shape, want.shape, msg)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=msg or "")


def bf16_round(x):
    """float32 -> the float32 value of its bf16 rounding (nearest even)."""
    x = np.asarray(x, np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out).astype(np.float32)


def main():
    unittest.main(verbosity=2)
