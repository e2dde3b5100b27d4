"""Data movement against NumPy: transpose, slice, dynamic-slice, pad,
concatenate."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlogym_testlib as lib  # noqa: E402

TRIALS = 6


def random_dims(rng, min_rank=1, max_rank=4, max_size=6):
    rank = rng.randint(min_rank, max_rank + 1)
    return tuple(int(d) for d in rng.randint(1, max_size + 1, size=rank))


def values(rng, dims, dtype=np.float32):
    if np.dtype(dtype).kind == "f":
        return np.asarray(rng.randn(*dims), dtype)
    return np.asarray(rng.randint(-50, 50, size=dims), dtype)


def np_pad(x, value, config):
    """XLA pad: interior padding between elements, then edge padding that
    crops when negative."""
    for d, (lo, hi, interior) in enumerate(config):
        n = x.shape[d]
        size = n + max(n - 1, 0) * interior
        shape = list(x.shape)
        shape[d] = size
        y = np.full(shape, value, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[d] = slice(0, size, interior + 1)
        y[tuple(idx)] = x
        if lo >= 0:
            shape[d] = lo
            y = np.concatenate([np.full(shape, value, x.dtype), y], axis=d)
        else:
            idx[d] = slice(-lo, None)
            y = y[tuple(idx)]
        if hi >= 0:
            shape = list(y.shape)
            shape[d] = hi
            y = np.concatenate([y, np.full(shape, value, x.dtype)], axis=d)
        else:
            idx[d] = slice(0, y.shape[d] + hi)
            y = y[tuple(idx)]
        x = y
    return x


class ShapesTest(lib.OracleTestCase):

    def test_transpose(self):
        rng = np.random.RandomState(20)
        for t in range(TRIALS):
            dims = random_dims(rng, max_rank=5, max_size=4)
            perm = rng.permutation(len(dims)).tolist()
            x = values(rng, dims, [np.float32, np.int32][t % 2])
            want = np.transpose(x, perm)
            text = lib.module(["ROOT r = %s transpose(p0), dimensions=%s" % (
                lib.arr_shape(want), lib.ints(perm))], [x])
            with self.subTest(dims=dims, perm=perm):
                self.assertExact(self.run1(text, [x]), want)

    def test_slice(self):
        rng = np.random.RandomState(21)
        for t in range(TRIALS):
            dims = random_dims(rng, max_size=8)
            x = values(rng, dims)
            spec, idx = [], []
            for n in dims:
                start = rng.randint(0, n)
                limit = rng.randint(start + 1, n + 1)
                stride = rng.randint(1, 4)
                spec.append("[%d:%d:%d]" % (start, limit, stride))
                idx.append(slice(start, limit, stride))
            want = x[tuple(idx)]
            text = lib.module(["ROOT r = %s slice(p0), slice={%s}" % (
                lib.arr_shape(want), ", ".join(spec))], [x])
            with self.subTest(dims=dims, slice=spec):
                self.assertExact(self.run1(text, [x]), want)

    def test_dynamic_slice_clamps_starts(self):
        rng = np.random.RandomState(22)
        for t in range(TRIALS):
            dims = random_dims(rng, max_size=7)
            x = values(rng, dims, [np.float32, np.int64][t % 2])
            sizes = [int(rng.randint(1, n + 1)) for n in dims]
            # Out-of-range starts (negative, past the end) are clamped to
            # [0, n - size].
            starts = [int(rng.randint(-3, n + 3)) for n in dims]
            clamped = [min(max(s, 0), n - k)
                       for s, n, k in zip(starts, dims, sizes)]
            want = x[tuple(slice(c, c + k) for c, k in zip(clamped, sizes))]
            idx_params = ["s32[]"] * len(dims)
            text = lib.module([
                "ROOT r = %s dynamic-slice(p0, %s), dynamic_slice_sizes=%s" % (
                    lib.arr_shape(want),
                    ", ".join("p%d" % (i + 1) for i in range(len(dims))),
                    lib.ints(sizes))], [x] + idx_params)
            args = [x] + [np.array(s, np.int32) for s in starts]
            with self.subTest(dims=dims, starts=starts, sizes=sizes):
                self.assertExact(self.run1(text, args), want)

    def test_pad(self):
        rng = np.random.RandomState(23)
        done = 0
        while done < TRIALS + 2:
            dims = random_dims(rng, max_rank=3, max_size=5)
            config = []
            for n in dims:
                while True:
                    lo, hi = rng.randint(-3, 4), rng.randint(-3, 4)
                    interior = rng.randint(0, 3)
                    if n + (n - 1) * interior + lo + hi >= 0:
                        break
                config.append((int(lo), int(hi), int(interior)))
            x = values(rng, dims)
            v = np.array(rng.randn(), np.float32)
            want = np_pad(x, v, config)
            padding = "x".join("%d_%d_%d" % c for c in config)
            text = lib.module(["ROOT r = %s pad(p0, p1), padding=%s" % (
                lib.arr_shape(want), padding)], [x, "f32[]"])
            with self.subTest(dims=dims, padding=padding):
                self.assertExact(self.run1(text, [x, v]), want)
            done += 1

    def test_concatenate(self):
        rng = np.random.RandomState(24)
        for t in range(TRIALS):
            dims = random_dims(rng, max_size=4)
            axis = rng.randint(0, len(dims))
            parts = []
            for _ in range(rng.randint(1, 5)):
                d = list(dims)
                d[axis] = rng.randint(0, 4)
                parts.append(values(rng, d, [np.float32, np.uint8][t % 2]))
            want = np.concatenate(parts, axis=axis)
            text = lib.module([
                "ROOT r = %s concatenate(%s), dimensions={%d}" % (
                    lib.arr_shape(want),
                    ", ".join("p%d" % i for i in range(len(parts))), axis)],
                parts)
            with self.subTest(shapes=[p.shape for p in parts], axis=axis):
                self.assertExact(self.run1(text, parts), want)


if __name__ == "__main__":
    lib.main()
