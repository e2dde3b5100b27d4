"""Reductions against NumPy."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlogym_testlib as lib  # noqa: E402

TRIALS = 8


class ReduceTest(lib.OracleTestCase):

    def reduce(self, rng, dtype, op, init, fn, exact):
        type_name = lib.NP_TO_HLO[np.dtype(dtype)]
        comp = lib.scalar_computation("reducer", op, type_name)
        for t in range(TRIALS):
            rank = rng.randint(1, 5)
            dims = tuple(int(d) for d in rng.randint(1, 7, size=rank))
            k = rng.randint(1, rank + 1)
            axes = sorted(rng.choice(rank, size=k, replace=False).tolist())
            if np.dtype(dtype).kind == "f":
                x = np.asarray(rng.randn(*dims), dtype)
            else:
                x = np.asarray(rng.randint(-20, 20, size=dims), dtype)
            want = fn(x, tuple(axes))
            kept = [n for d, n in enumerate(dims) if d not in axes]
            text = lib.module([
                "init = %s[] constant(%s)" % (type_name, init),
                "ROOT r = %s reduce(p0, init), dimensions=%s, to_apply="
                "reducer" % (lib.shape_str(type_name, kept), lib.ints(axes))],
                [x], comp)
            with self.subTest(op=op, dims=dims, axes=axes):
                got = self.run1(text, [x])
                if exact:
                    self.assertExact(got, want)
                else:
                    # Summation order differs: allow a few ulps per term.
                    self.assertClose(got, want, rtol=1e-5, atol=5e-4)

    def test_sum_f32(self):
        rng = np.random.RandomState(30)
        self.reduce(rng, np.float32, "add", "0",
                    lambda x, a: np.sum(x.astype(np.float64), axis=a).astype(
                        np.float32), exact=False)

    def test_sum_s32(self):
        rng = np.random.RandomState(31)
        self.reduce(rng, np.int32, "add", "0",
                    lambda x, a: np.sum(x, axis=a, dtype=np.int32), exact=True)

    def test_max_f32(self):
        rng = np.random.RandomState(32)
        self.reduce(rng, np.float32, "maximum", "-inf",
                    lambda x, a: np.max(x, axis=a), exact=True)

    def test_max_with_nan(self):
        x = np.array([[1, np.nan, 3], [4, 5, 6]], np.float32)
        comp = lib.scalar_computation("reducer", "maximum", "f32")
        text = lib.module([
            "init = f32[] constant(-inf)",
            "ROOT r = f32[2] reduce(p0, init), dimensions={1}, "
            "to_apply=reducer"], [x], comp)
        self.assertExact(self.run1(text, [x]),
                         np.array([np.nan, 6], np.float32))

    def test_min_s64(self):
        rng = np.random.RandomState(33)
        self.reduce(rng, np.int64, "minimum", "9223372036854775807",
                    lambda x, a: np.min(x, axis=a), exact=True)


if __name__ == "__main__":
    lib.main()
