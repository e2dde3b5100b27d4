"""Elementwise ops and broadcast against NumPy."""

import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlogym_testlib as lib  # noqa: E402

TRIALS = 6


def random_dims(rng, max_rank=4, max_size=5):
    rank = rng.randint(0, max_rank + 1)
    return tuple(int(d) for d in rng.randint(1, max_size + 1, size=rank))


def floats(rng, dims, specials=True):
    x = np.asarray(rng.randn(*dims) * 3).astype(np.float32)
    if specials and x.size >= 4:
        flat = x.reshape(-1)
        pos = rng.choice(x.size, size=min(4, x.size), replace=False)
        for p, v in zip(pos, [np.nan, np.inf, -np.inf, 0.0]):
            flat[p] = v
    return x


class ElementwiseTest(lib.OracleTestCase):

    def binary(self, op, fn, specials=True):
        rng = np.random.RandomState(zlib.crc32(op.encode()))
        for t in range(TRIALS):
            dims = random_dims(rng)
            a, b = floats(rng, dims, specials), floats(rng, dims, specials)
            s = lib.arr_shape(a)
            text = lib.module(["ROOT r = %s %s(p0, p1)" % (s, op)], [a, b])
            with self.subTest(trial=t, shape=s), np.errstate(all="ignore"):
                self.assertExact(self.run1(text, [a, b]), fn(a, b))

    def test_add(self):
        self.binary("add", np.add)

    def test_multiply(self):
        self.binary("multiply", np.multiply)

    def test_divide(self):
        self.binary("divide", np.divide)

    def test_maximum_propagates_nan(self):
        rng = np.random.RandomState(4)
        for t in range(TRIALS):
            dims = random_dims(rng)
            a = floats(rng, dims, specials=False)
            b = floats(rng, dims, specials=False)
            if a.size:
                a.reshape(-1)[0] = np.nan
                b.reshape(-1)[-1] = np.nan
            s = lib.arr_shape(a)
            text = lib.module(["ROOT r = %s maximum(p0, p1)" % s], [a, b])
            with self.subTest(trial=t, shape=s):
                self.assertExact(self.run1(text, [a, b]), np.maximum(a, b))

    def unary(self, op, fn, rtol, atol):
        rng = np.random.RandomState(zlib.crc32(op.encode()))
        for t in range(TRIALS):
            dims = random_dims(rng)
            a = floats(rng, dims)
            s = lib.arr_shape(a)
            text = lib.module(["ROOT r = %s %s(p0)" % (s, op)], [a])
            with self.subTest(trial=t, shape=s), np.errstate(all="ignore"):
                want = fn(a.astype(np.float64)).astype(np.float32)
                got = self.run1(text, [a])
                self.assertEqual(got.dtype, np.float32)
                self.assertClose(got, want, rtol, atol)

    def test_exponential(self):
        self.unary("exponential", np.exp, 2e-6, 1e-30)

    def test_tanh(self):
        self.unary("tanh", np.tanh, 2e-6, 1e-7)

    def test_compare(self):
        rng = np.random.RandomState(7)
        fns = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less,
               "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal}
        for t, (direction, fn) in enumerate(sorted(fns.items())):
            dims = random_dims(rng)
            a = floats(rng, dims)
            b = np.where(rng.rand(*dims) < 0.3, a, floats(rng, dims))
            b = np.asarray(b, np.float32)
            text = lib.module(["ROOT r = %s compare(p0, p1), direction=%s" % (
                lib.shape_str("pred", dims), direction)], [a, b])
            with self.subTest(direction=direction, dims=dims):
                self.assertExact(self.run1(text, [a, b]), fn(a, b))
        # Integers too.
        a = rng.randint(-3, 3, size=(4, 5)).astype(np.int32)
        b = rng.randint(-3, 3, size=(4, 5)).astype(np.int32)
        text = lib.module(["ROOT r = pred[4,5] compare(p0, p1), direction=LE"],
                          [a, b])
        self.assertExact(self.run1(text, [a, b]), a <= b)

    def test_select(self):
        rng = np.random.RandomState(8)
        for t in range(TRIALS):
            dims = random_dims(rng)
            p = np.asarray(rng.rand(*dims) < 0.5)
            a, b = floats(rng, dims), floats(rng, dims)
            text = lib.module(["ROOT r = %s select(p0, p1, p2)" %
                               lib.arr_shape(a)], [p, a, b])
            with self.subTest(trial=t, dims=dims):
                self.assertExact(self.run1(text, [p, a, b]), np.where(p, a, b))

    def test_convert(self):
        rng = np.random.RandomState(9)
        f = np.asarray(rng.uniform(-1000, 1000, size=(3, 7)), np.float32)
        f[0, :4] = [0.5, -0.5, 2.9999, -2.9999]
        i = rng.randint(-2**31, 2**31 - 1, size=(3, 7)).astype(np.int32)
        i[0, :3] = [16777217, -16777219, 2**31 - 1]  # f32 rounding ties
        big = np.array([70000, 65520, 65519, 1e-8, -3.0e-5, np.inf, np.nan],
                       np.float32)
        d = rng.randn(6) * 1e3
        cases = [
            ("s32[3,7]", f, "f32[3,7]", np.trunc(f).astype(np.int32)),
            ("f32[3,7]", i, "s32[3,7]", i.astype(np.float32)),
            ("f16[7]", big, "f32[7]", big.astype(np.float16)),
            ("s8[3,7]", i, "s32[3,7]", i.astype(np.int8)),  # wraps
            ("f32[6]", d, "f64[6]", d.astype(np.float32)),
            ("f32[3,7]", f > 0, "pred[3,7]", (f > 0).astype(np.float32)),
            ("pred[3,7]", np.round(f / 500), "f32[3,7]",
             np.round(f / 500) != 0),
            ("u8[3,7]", i % 200, "s32[3,7]", (i % 200).astype(np.uint8)),
        ]
        for to, x, frm, want in cases:
            x = np.asarray(x, lib.HLO_TO_NP[frm.split("[")[0]])
            text = lib.module(["ROOT r = %s convert(p0)" % to], [frm])
            with self.subTest(to=to, frm=frm):
                self.assertExact(self.run1(text, [x]), want)
        # f32 -> bf16 -> f32 rounds to nearest even.
        x = np.asarray(rng.randn(64), np.float32)
        x[:3] = [1.00390625, 1.01171875, np.nan]
        text = lib.module(["b = bf16[64] convert(p0)",
                           "ROOT r = f32[64] convert(b)"], ["f32[64]"])
        self.assertExact(self.run1(text, [x]), lib.bf16_round(x))

    def test_broadcast(self):
        rng = np.random.RandomState(10)
        for t in range(TRIALS):
            out_dims = random_dims(rng, max_rank=4)
            rank = len(out_dims)
            k = rng.randint(0, rank + 1)
            kept = sorted(rng.choice(rank, size=k, replace=False).tolist())
            in_dims = tuple(out_dims[d] for d in kept)
            x = floats(rng, in_dims)
            # NumPy: put the operand's dims at `kept`, size 1 elsewhere.
            view = x.reshape([out_dims[d] if d in kept else 1
                              for d in range(rank)])
            want = np.broadcast_to(view, out_dims)
            text = lib.module(["ROOT r = %s broadcast(p0), dimensions=%s" % (
                lib.shape_str("f32", out_dims), lib.ints(kept))], [x])
            with self.subTest(trial=t, out=out_dims, kept=kept):
                self.assertExact(self.run1(text, [x]), want)


if __name__ == "__main__":
    lib.main()
