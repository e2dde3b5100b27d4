"""Array files produced by NumPy itself, read by `hlogym run`, and the files
hlogym writes, read back by NumPy. The module is the identity (its root is a
tuple of its parameters), so only parameter passing is exercised."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlogym_testlib as lib  # noqa: E402


def identity(params):
    n = len(params)
    body = ["ROOT t = (%s) tuple(%s)" % (
        ", ".join(p if isinstance(p, str) else lib.arr_shape(p)
                  for p in params), ", ".join("p%d" % i for i in range(n)))]
    return lib.module(body, params)


def sample(dtype, shape, rng):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.rand(*shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        v = rng.randint(-100 if dtype.kind == "i" else 0, 100, size=shape)
        out = v.astype(dtype)
        if out.size >= 2:  # the extremes survive too
            out.flat[0] = info.min
            out.flat[1] = info.max
        return out
    if dtype.kind == "f":
        out = np.asarray(rng.randn(*shape)).astype(dtype)
        if out.size >= 4:
            out.flat[0] = np.inf
            out.flat[1] = -np.inf
            out.flat[2] = np.nan
            out.flat[3] = -0.0
        return out
    re = np.asarray(rng.randn(*shape))
    im = rng.randn(*shape)
    return (re + 1j * im).astype(dtype)


DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
          np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64,
          np.complex64, np.complex128]


class NumpyFilesTest(lib.OracleTestCase):

    def test_every_dtype_npz(self):
        rng = np.random.RandomState(0)
        arrays = [sample(dt, (2, 3), rng) for dt in DTYPES]
        arrays.append(sample(np.float32, (), rng))
        arrays.append(sample(np.int32, (0, 4), rng))
        outs = self.run_module(identity(arrays), arrays)
        self.assertEqual(len(outs), len(arrays))
        for a, o in zip(arrays, outs):
            self.assertExact(o, a, str(a.dtype))

    def test_deflated_npz(self):
        rng = np.random.RandomState(1)
        arrays = [sample(np.float32, (50, 7), rng), sample(np.int64, (9,),
                                                          rng)]
        outs = self.run_module(identity(arrays), arrays, compressed=True)
        for a, o in zip(arrays, outs):
            self.assertExact(o, a)

    def test_byte_orders_fortran_and_versions(self):
        rng = np.random.RandomState(2)
        d = os.path.join(self.tmp, "in")
        os.makedirs(d)
        cases = []
        for dt in [">i2", ">i4", ">u8", ">f2", ">f4", ">f8", ">c8", ">c16",
                   "<i8", "|u1", "|i1", "|b1"]:
            cases.append(("order " + dt, sample(np.dtype(dt), (3, 2), rng),
                          None, False))
        for dt in [np.float32, np.int16, np.complex128]:
            cases.append(("fortran", sample(dt, (3, 4, 2), rng), None, True))
        for version in [(1, 0), (2, 0), (3, 0)]:
            cases.append(("version %s" % (version,),
                          sample(np.float64, (4,), rng), version, False))
        params = []
        for i, (label, a, version, fortran) in enumerate(cases):
            path = os.path.join(d, "param%d.npy" % i)
            if fortran:
                a = np.asfortranarray(a)
            with open(path, "wb") as f:
                if version:
                    np.lib.format.write_array(f, a, version=version)
                else:
                    np.save(f, a)
            params.append(lib.arr_shape(a.astype(a.dtype.newbyteorder("="))))
        hlo = self.write("m.hlo", identity(params))
        out = os.path.join(self.tmp, "outdir")
        p = lib.run_hlogym(["run", hlo, "--inputs", d, "--outputs", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        for i, (label, a, version, fortran) in enumerate(cases):
            o = np.load(os.path.join(out, "out%d.npy" % i))
            self.assertFalse(o.dtype.byteorder == ">", label)
            self.assertExact(o, a.astype(a.dtype.newbyteorder("=")), label)

    def test_narrow_types(self):
        # bf16 and f8 parameters read float16/32/64 arrays, rounded to
        # nearest even; outputs come back as float32. s4/u4 travel as
        # int8/uint8.
        rng = np.random.RandomState(3)
        x32 = rng.randn(64).astype(np.float32)
        x32[:4] = [np.inf, -np.inf, np.nan, 1.00390625]  # the last is a tie
        x64 = x32.astype(np.float64)
        x16 = rng.randn(8).astype(np.float16)
        s4 = rng.randint(-8, 8, size=(5,)).astype(np.int8)
        u4 = rng.randint(0, 16, size=(5,)).astype(np.uint8)
        params = ["bf16[64]", "bf16[64]", "bf16[8]", "s4[5]", "u4[5]",
                  "f8e4m3fn[3]"]
        e4m3 = np.array([1.0625, 448.0, -0.3], np.float32)
        outs = self.run_module(identity(params),
                               [x32, x64, x16, s4, u4, e4m3])
        self.assertExact(outs[0], lib.bf16_round(x32))
        self.assertExact(outs[1], lib.bf16_round(x32))
        self.assertExact(outs[2], lib.bf16_round(x16.astype(np.float32)))
        self.assertEqual(outs[0][3], np.float32(1.0))
        self.assertExact(outs[3], s4)
        self.assertExact(outs[4], u4)
        # f8e4m3fn: 3 mantissa bits; 1.0625 is a tie between 1 and 1.125.
        self.assertExact(outs[5], np.array([1.0, 448.0, -0.3125],
                                           np.float32))

    def test_tuple_parameters_and_tokens(self):
        params = ["(f32[2], (s32[], token[]))", "token[]", "u8[3]"]
        a = np.array([1.5, -2], np.float32)
        b = np.array(7, np.int32)
        c = np.array([1, 2, 3], np.uint8)
        text = lib.module([
            "g0 = f32[2] get-tuple-element(p0), index=0",
            "g1 = (s32[], token[]) get-tuple-element(p0), index=1",
            "g2 = s32[] get-tuple-element(g1), index=0",
            "ROOT t = (s32[], u8[3], f32[2], token[]) tuple(g2, p2, g0, p1)",
        ], params)
        outs = self.run_module(text, [a, b, c])
        self.assertEqual(len(outs), 3)
        self.assertExact(outs[0], b)
        self.assertExact(outs[1], c)
        self.assertExact(outs[2], a)


class CliTest(lib.OracleTestCase):

    def test_generated_inputs_are_pinned(self):
        # The same values as the C++ unit test pins for seed 0, leaf 0.
        outs = self.run_module(identity(["f32[2,2]", "s32[8]"]), None)
        self.assertExact(outs[0], np.array(
            [[0.7966432571411133, -0.36707019805908203],
             [-1.1917774677276611, 0.7156631350517273]], np.float32))
        self.assertExact(outs[1], np.array([4, -3, -2, -3, -2, 1, -4, -4],
                                           np.int32))
        other = self.run_module(identity(["f32[2,2]", "s32[8]"]), None,
                                extra_args=["--seed", "5"])
        self.assertFalse(np.array_equal(other[0], outs[0]))

    def test_run_summary_and_print(self):
        hlo = self.write("m.hlo", identity(["f32[3]"]))
        npz = os.path.join(self.tmp, "in.npz")
        np.savez(npz, param0=np.array([1, 2, 6], np.float32))
        p = lib.run_hlogym(["run", hlo, "--inputs", npz, "--print"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("inputs: 1 arrays from " + npz, p.stdout)
        self.assertRegex(p.stdout, r"run: [0-9.]+ ms")
        self.assertIn("out0 f32[3]: min 1 max 6 mean 3; first: 1, 2, 6",
                      p.stdout)
        self.assertIn("out0 = {1, 2, 6}", p.stdout)

    def test_run_errors(self):
        hlo = self.write("m.hlo", identity(["f32[2,3]", "f32[2,3]"]))
        npz = os.path.join(self.tmp, "in.npz")
        np.savez(npz, param0=np.zeros((2, 3), np.float32),
                 param1=np.zeros((3,), np.float64))
        p = lib.run_hlogym(["run", hlo, "--inputs", npz])
        self.assertEqual(p.returncode, 1)
        self.assertIn(npz + ":param1: expected f32[2,3] (as float32), got "
                      "float64 (3,)", p.stderr)
        p = lib.run_hlogym(["run", hlo, "--inputs",
                            os.path.join(self.tmp, "nope.npz")])
        self.assertEqual(p.returncode, 1)
        self.assertIn("nope.npz: no such file or directory", p.stderr)
        np.savez(npz, param0=np.zeros((2, 3), np.float32))
        p = lib.run_hlogym(["run", hlo, "--inputs", npz])
        self.assertEqual(p.returncode, 1)
        self.assertIn(":param1: missing", p.stderr)
        bad = self.write("bad.hlo", "HloModule m\nENTRY e {\n  ROOT x = "
                         "f32[2] add(f32[2] parameter(0), f32[3] "
                         "parameter(1))\n}\n")
        p = lib.run_hlogym(["run", bad])
        self.assertEqual(p.returncode, 1)
        self.assertIn("bad.hlo", p.stderr)

    def test_compare(self):
        a = self.write("a.hlo", lib.module(
            ["ROOT r = f32[4] add(p0, p1)"], ["f32[4]", "f32[4]"]))
        b = self.write("b.hlo", lib.module(
            ["ROOT r = f32[4] add(p1, p0)"], ["f32[4]", "f32[4]"]))
        c = self.write("c.hlo", lib.module(
            ["ROOT r = f32[4] subtract(p0, p1)"], ["f32[4]", "f32[4]"]))
        d = self.write("d.hlo", lib.module(
            ["ROOT r = f32[4] add(p0, p0)"], ["f32[4]", "f32[5]"]))
        p = lib.run_hlogym(["compare", a, b])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("MATCH: 1 buffers, 0 mismatching", p.stdout)
        p = lib.run_hlogym(["compare", a, c, "--seed", "3"])
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("out0 f32[4]: MISMATCH", p.stdout)
        self.assertIn("MISMATCH: 1 buffers, 1 mismatching", p.stdout)
        # A huge tolerance accepts anything finite.
        p = lib.run_hlogym(["compare", a, c, "--atol", "100"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        p = lib.run_hlogym(["compare", a, d])
        self.assertEqual(p.returncode, 2)
        self.assertIn("entry parameter 1 is f32[5], in " + a + " it is f32[4]",
                      p.stderr)
        p = lib.run_hlogym(["compare", a, os.path.join(self.tmp, "x.hlo")])
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    lib.main()
