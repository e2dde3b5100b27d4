"""gather and scatter in embedding patterns, and sort, against NumPy."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlogym_testlib as lib  # noqa: E402

TRIALS = 6


class GatherScatterTest(lib.OracleTestCase):

    def test_embedding_lookup(self):
        rng = np.random.RandomState(60)
        for t in range(TRIALS):
            vocab, dim = rng.randint(2, 12), rng.randint(1, 6)
            idx_dims = tuple(int(n) for n in rng.randint(1, 5,
                                                         size=rng.randint(1, 3)))
            table = np.asarray(rng.randn(vocab, dim), np.float32)
            ids = rng.randint(0, vocab, size=idx_dims).astype(np.int32)
            # Out-of-range starts are clamped so the slice fits: -2 reads
            # row 0, vocab + 3 reads the last row.
            ids.reshape(-1)[0] = -2
            ids.reshape(-1)[-1] = vocab + 3
            want = table[np.clip(ids, 0, vocab - 1)]
            r = len(idx_dims)
            text = lib.module([
                "ROOT r = %s gather(p0, p1), offset_dims={%d}, "
                "collapsed_slice_dims={0}, start_index_map={0}, "
                "index_vector_dim=%d, slice_sizes={1,%d}" % (
                    lib.arr_shape(want), r, r, dim)], [table, ids])
            with self.subTest(vocab=vocab, dim=dim, ids=idx_dims):
                self.assertExact(self.run1(text, [table, ids]), want)

    def test_lookup_with_index_vector(self):
        # indices s32[N,1] with index_vector_dim=1, as JAX emits.
        rng = np.random.RandomState(61)
        table = np.asarray(rng.randn(7, 3), np.float32)
        ids = np.array([[3], [0], [6], [3]], np.int32)
        text = lib.module([
            "ROOT r = f32[4,3] gather(p0, p1), offset_dims={1}, "
            "collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,3}"], [table, ids])
        self.assertExact(self.run1(text, [table, ids]), table[ids[:, 0]])

    def test_scatter_add(self):
        rng = np.random.RandomState(62)
        comp = lib.scalar_computation("add", "add", "f32")
        for t in range(TRIALS):
            vocab, dim = rng.randint(2, 10), rng.randint(1, 5)
            idx_dims = tuple(int(n) for n in rng.randint(1, 6,
                                                         size=rng.randint(1, 3)))
            table = np.asarray(rng.randn(vocab, dim), np.float32)
            # Duplicates accumulate; out-of-bounds updates are skipped.
            ids = rng.randint(-1, vocab + 1, size=idx_dims).astype(np.int32)
            updates = np.asarray(rng.randn(*idx_dims, dim), np.float32)
            want = table.astype(np.float64)
            valid = (ids >= 0) & (ids < vocab)
            np.add.at(want, ids[valid], updates[valid].astype(np.float64))
            r = len(idx_dims)
            text = lib.module([
                "ROOT r = f32[%d,%d] scatter(p0, p1, p2), "
                "update_window_dims={%d}, inserted_window_dims={0}, "
                "scatter_dims_to_operand_dims={0}, index_vector_dim=%d, "
                "to_apply=add" % (vocab, dim, r, r)], [table, ids, updates],
                comp)
            with self.subTest(vocab=vocab, dim=dim, ids=ids.tolist()):
                self.assertClose(self.run1(text, [table, ids, updates]),
                                 want.astype(np.float32), 1e-6, 1e-6)

    def test_scatter_add_integers_exact(self):
        comp = lib.scalar_computation("add", "add", "s32")
        table = np.zeros((5,), np.int32)
        ids = np.array([[1], [4], [1], [9], [-1], [1]], np.int32)
        upd = np.array([1, 2, 3, 4, 5, 6], np.int32)
        text = lib.module([
            "ROOT r = s32[5] scatter(p0, p1, p2), update_window_dims={}, "
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
            "index_vector_dim=1, to_apply=add"], [table, ids, upd], comp)
        self.assertExact(self.run1(text, [table, ids, upd]),
                         np.array([0, 10, 0, 0, 2], np.int32))


class SortTest(lib.OracleTestCase):

    def comparator(self, key_type, value_type, direction):
        return ("cmp {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                "  c = %s[] parameter(2)\n  d = %s[] parameter(3)\n"
                "  ROOT r = pred[] compare(a, b), direction=%s\n}\n" % (
                    key_type, key_type, value_type, value_type, direction))

    def test_multi_operand_float_keys(self):
        rng = np.random.RandomState(70)
        for t in range(TRIALS):
            dims = tuple(int(n) for n in rng.randint(1, 7,
                                                     size=rng.randint(1, 4)))
            axis = rng.randint(0, len(dims))
            direction = ["LT", "GT"][t % 2]
            keys = np.asarray(rng.randn(*dims), np.float32)
            vals = rng.randint(-1000, 1000, size=dims).astype(np.int32)
            order = np.argsort(keys if direction == "LT" else -keys,
                               axis=axis, kind="stable")
            want_k = np.take_along_axis(keys, order, axis)
            want_v = np.take_along_axis(vals, order, axis)
            text = lib.module([
                "ROOT r = (%s, %s) sort(p0, p1), dimensions={%d}, "
                "is_stable=true, to_apply=cmp" % (
                    lib.arr_shape(keys), lib.arr_shape(vals), axis)],
                [keys, vals], self.comparator("f32", "s32", direction))
            with self.subTest(dims=dims, axis=axis, direction=direction):
                outs = self.run_module(text, [keys, vals])
                self.assertEqual(len(outs), 2)
                self.assertExact(outs[0], want_k)
                self.assertExact(outs[1], want_v)

    def test_stable_with_ties(self):
        rng = np.random.RandomState(71)
        for t in range(TRIALS):
            n = rng.randint(2, 40)
            keys = rng.randint(0, 4, size=(3, n)).astype(np.int32)
            vals = np.asarray(rng.randn(3, n), np.float32)
            order = np.argsort(keys, axis=1, kind="stable")
            text = lib.module([
                "ROOT r = (s32[3,%d], f32[3,%d]) sort(p0, p1), "
                "dimensions={1}, is_stable=true, to_apply=cmp" % (n, n)],
                [keys, vals], self.comparator("s32", "f32", "LT"))
            with self.subTest(n=n):
                outs = self.run_module(text, [keys, vals])
                self.assertExact(outs[0], np.take_along_axis(keys, order, 1))
                self.assertExact(outs[1], np.take_along_axis(vals, order, 1))


if __name__ == "__main__":
    lib.main()
