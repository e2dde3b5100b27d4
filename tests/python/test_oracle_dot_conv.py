"""dot (general dimension numbers) and convolution against NumPy."""

import os
import string
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlogym_testlib as lib  # noqa: E402

TRIALS = 8


class DotTest(lib.OracleTestCase):

    def random_dot(self, rng, dtype):
        nb, nc = rng.randint(0, 3), rng.randint(1, 3)
        nlf, nrf = rng.randint(0, 3), rng.randint(0, 3)
        size = lambda: int(rng.randint(1, 5))  # noqa: E731
        batch = [size() for _ in range(nb)]
        contract = [size() for _ in range(nc)]
        lfree = [size() for _ in range(nlf)]
        rfree = [size() for _ in range(nrf)]
        letters = iter(string.ascii_letters)
        bl = [next(letters) for _ in batch]
        cl = [next(letters) for _ in contract]
        lfl = [next(letters) for _ in lfree]
        rfl = [next(letters) for _ in rfree]
        # Each operand's dimensions in a random order.
        lhs_items = list(zip(bl + cl + lfl, batch + contract + lfree))
        rhs_items = list(zip(bl + cl + rfl, batch + contract + rfree))
        lhs_items = [lhs_items[i] for i in rng.permutation(len(lhs_items))]
        rhs_items = [rhs_items[i] for i in rng.permutation(len(rhs_items))]
        lhs_labels = [c for c, _ in lhs_items]
        rhs_labels = [c for c, _ in rhs_items]
        lhs_dims = [n for _, n in lhs_items]
        rhs_dims = [n for _, n in rhs_items]
        if np.dtype(dtype).kind == "f":
            a = np.asarray(rng.randn(*lhs_dims), dtype)
            b = np.asarray(rng.randn(*rhs_dims), dtype)
        else:
            a = np.asarray(rng.randint(-5, 5, size=lhs_dims), dtype)
            b = np.asarray(rng.randint(-5, 5, size=rhs_dims), dtype)
        # Free dimensions keep their order within each operand.
        out_labels = (bl + [c for c in lhs_labels if c in lfl] +
                      [c for c in rhs_labels if c in rfl])
        spec = "%s,%s->%s" % ("".join(lhs_labels), "".join(rhs_labels),
                              "".join(out_labels))
        wide = np.float64 if np.dtype(dtype).kind == "f" else np.int64
        want = np.einsum(spec, a.astype(wide), b.astype(wide)).astype(dtype)
        attrs = "lhs_batch_dims=%s, lhs_contracting_dims=%s, " \
                "rhs_batch_dims=%s, rhs_contracting_dims=%s" % (
                    lib.ints([lhs_labels.index(c) for c in bl]),
                    lib.ints([lhs_labels.index(c) for c in cl]),
                    lib.ints([rhs_labels.index(c) for c in bl]),
                    lib.ints([rhs_labels.index(c) for c in cl]))
        text = lib.module(["ROOT r = %s dot(p0, p1), %s" % (
            lib.arr_shape(np.asarray(want)), attrs)], [a, b])
        return text, a, b, np.asarray(want), spec

    def test_dot_general_f32(self):
        rng = np.random.RandomState(40)
        for t in range(TRIALS):
            text, a, b, want, spec = self.random_dot(rng, np.float32)
            with self.subTest(spec=spec, lhs=a.shape, rhs=b.shape):
                self.assertClose(self.run1(text, [a, b]), want, 1e-5, 1e-5)

    def test_dot_general_s32(self):
        rng = np.random.RandomState(41)
        for t in range(TRIALS):
            text, a, b, want, spec = self.random_dot(rng, np.int32)
            with self.subTest(spec=spec, lhs=a.shape, rhs=b.shape):
                self.assertExact(self.run1(text, [a, b]), want)

    def test_matmul(self):
        rng = np.random.RandomState(42)
        a = np.asarray(rng.randn(16, 33), np.float32)
        b = np.asarray(rng.randn(33, 8), np.float32)
        text = lib.module(["ROOT r = f32[16,8] dot(p0, p1), "
                           "lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}"], [a, b])
        want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        self.assertClose(self.run1(text, [a, b]), want, 1e-5, 1e-5)


def conv_reference(x, k, stride, pad, lhs_dil, rhs_dil, groups):
    """Explicit loops; x is [batch, spatial..., features], k is
    [spatial..., in_features/groups, out_features]; float64."""
    nsp = x.ndim - 2
    batch, cin = x.shape[0], x.shape[-1]
    ksp, cout = k.shape[:nsp], k.shape[-1]
    cg, og = cin // groups, cout // groups
    in_sp = x.shape[1:-1]
    out_sp = []
    for d in range(nsp):
        padded = (in_sp[d] - 1) * lhs_dil[d] + 1 + pad[d][0] + pad[d][1]
        window = (ksp[d] - 1) * rhs_dil[d] + 1
        out_sp.append(max(0, (padded - window) // stride[d] + 1)
                      if padded >= window else 0)
    out = np.zeros([batch] + out_sp + [cout], np.float64)
    for opos in np.ndindex(*out_sp):
        for kpos in np.ndindex(*ksp):
            ipos = []
            ok = True
            for d in range(nsp):
                c = opos[d] * stride[d] + kpos[d] * rhs_dil[d] - pad[d][0]
                if c < 0 or c % lhs_dil[d] != 0 or c // lhs_dil[d] >= in_sp[d]:
                    ok = False
                    break
                ipos.append(c // lhs_dil[d])
            if not ok:
                continue
            xv = x[(slice(None),) + tuple(ipos)]        # [batch, cin]
            kv = k[tuple(kpos)]                         # [cg, cout]
            for g in range(groups):
                out[(slice(None),) + opos + (slice(g * og, (g + 1) * og),)] += (
                    xv[:, g * cg:(g + 1) * cg] @ kv[:, g * og:(g + 1) * og])
    return out


class ConvolutionTest(lib.OracleTestCase):

    def run_conv(self, rng, nsp, layout):
        groups = int(rng.choice([1, 1, 2, 3]))
        cg, og = rng.randint(1, 3), rng.randint(1, 3)
        batch = rng.randint(1, 3)
        while True:
            in_sp = [int(rng.randint(3, 8)) for _ in range(nsp)]
            ksp = [int(rng.randint(1, 4)) for _ in range(nsp)]
            stride = [int(rng.randint(1, 3)) for _ in range(nsp)]
            pad = [(int(rng.randint(-1, 3)), int(rng.randint(-1, 3)))
                   for _ in range(nsp)]
            lhs_dil = [int(rng.choice([1, 1, 2])) for _ in range(nsp)]
            rhs_dil = [int(rng.choice([1, 1, 2])) for _ in range(nsp)]
            x = np.asarray(rng.randn(batch, *in_sp, groups * cg), np.float32)
            k = np.asarray(rng.randn(*ksp, cg, groups * og), np.float32)
            want = conv_reference(x.astype(np.float64), k.astype(np.float64),
                                  stride, pad, lhs_dil, rhs_dil, groups)
            if all(n > 0 for n in want.shape[1:-1]):
                break
        sp = "".join(str(i) for i in range(nsp))
        if layout == "nhwc":
            labels = "b%sf_%sio->b%sf" % (sp, sp, sp)
            xin, kin, w = x, k, want
        else:  # features and batch first: bf01_oi01->bf01
            labels = "bf%s_oi%s->bf%s" % (sp, sp, sp)
            to_first = [0, nsp + 1] + list(range(1, nsp + 1))
            xin = np.ascontiguousarray(np.transpose(x, to_first))
            kin = np.ascontiguousarray(np.transpose(
                k, [nsp + 1, nsp] + list(range(nsp))))
            w = np.transpose(want, to_first)
        window = "size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s" % (
            "x".join(map(str, ksp)), "x".join(map(str, stride)),
            "x".join("%d_%d" % p for p in pad), "x".join(map(str, lhs_dil)),
            "x".join(map(str, rhs_dil)))
        text = lib.module([
            "ROOT r = %s convolution(p0, p1), window={%s}, dim_labels=%s, "
            "feature_group_count=%d" % (lib.shape_str("f32", w.shape), window,
                                        labels, groups)], [xin, kin])
        with self.subTest(labels=labels, x=xin.shape, k=kin.shape,
                          window=window, groups=groups):
            self.assertClose(self.run1(text, [xin, kin]),
                             w.astype(np.float32), 1e-5, 1e-5)

    def test_conv2d_nhwc(self):
        rng = np.random.RandomState(50)
        for t in range(TRIALS):
            self.run_conv(rng, 2, "nhwc")

    def test_conv2d_nchw(self):
        rng = np.random.RandomState(51)
        for t in range(TRIALS):
            self.run_conv(rng, 2, "nchw")

    def test_conv1d(self):
        rng = np.random.RandomState(52)
        for t in range(TRIALS):
            self.run_conv(rng, 1, "nhwc")


if __name__ == "__main__":
    lib.main()
