"""Graph observations: HloEnv's schema, exact dtypes and shapes, zero-copy
views, lifetime, hand-computed values; the summary vector."""

import gc

import numpy as np
import pytest

import hlogym
from conftest import SHARED

CSR = {
    "out_edge_offsets": np.uint64,
    "out_edge_indices": np.uint64,
    "in_edge_offsets": np.uint64,
    "in_edge_indices": np.uint64,
    "alternative_indices": np.int32,
    "opcode_attr_counts": np.int32,
}
NODE = {
    "uids": np.int32,
    "gids": np.uint64,
    "fused_comp_ids": np.uint64,
    "num_users": np.int32,
    "num_operands": np.int32,
    "opcodes": np.int32,
    "opcode_attrs": np.int32,
    "num_opcode_attrs": np.int32,
    "is_alternative": np.uint8,
    "is_in_fusion": np.uint8,
    "in_tensor_sizes": np.int64,
    "out_tensor_sizes": np.int64,
    "has_max_in_tensor": np.uint8,
    "has_max_out_tensor": np.uint8,
    "normalized_num_group_inst": np.float32,
}
EDGE = {
    "uids": np.int64,
    "srcs": np.int32,
    "dsts": np.int32,
    "dims": np.int64,
    "layouts": np.int64,
    "lehmercodes": np.int64,
    "types": np.uint8,
    "dtypes": np.int32,
}


def test_plain_module_values():
    # Post-order of the entry, instructions in text order: p0, p1, e, a, n, t.
    obs = hlogym.Env(SHARED).observation("hloenv")
    assert obs.num_nodes == 6 and obs.num_edges == 6
    nf = obs.node_features
    assert nf.names == ["p0", "p1", "e", "a", "n", "t"]
    # HloEnv's opcode numbers: parameter 75, exponential 47, add 1,
    # negate 72, tuple 115.
    assert nf.opcodes.tolist() == [75, 75, 47, 1, 72, 115]
    assert obs.in_edge_offsets.tolist() == [0, 0, 0, 1, 3, 4, 6]
    assert obs.in_edge_indices.tolist() == [0, 2, 1, 2, 3, 4]
    assert obs.out_edge_offsets.tolist() == [0, 1, 2, 4, 5, 6, 6]
    assert obs.out_edge_indices.tolist() == [2, 3, 3, 4, 5, 5]
    assert nf.num_operands.tolist() == [0, 0, 1, 2, 1, 2]
    assert nf.num_users.tolist() == [1, 1, 2, 1, 1, 0]
    assert nf.gids.tolist() == [0] * 6
    assert nf.fused_comp_ids.tolist() == [0] * 6
    assert nf.in_tensor_sizes.tolist() == [0, 0, 1024, 2048, 1024, 2048]
    assert nf.has_max_in_tensor.tolist() == [0, 0, 0, 1, 0, 1]
    assert nf.is_alternative.tolist() == [0] * 6
    assert nf.is_in_fusion.tolist() == [0] * 6
    assert nf.normalized_num_group_inst.tolist() == [0.0] * 6
    assert len(obs.alternative_indices) == 0
    assert len(obs.opcode_attr_counts) == 2 * 118
    assert hlogym.num_opcodes("hloenv") == 118
    assert hlogym.opcode_name(115, "hloenv") == "tuple"
    ie = obs.in_edge_features
    assert ie.srcs.tolist() == [0, 2, 1, 2, 3, 4]
    assert ie.dsts.tolist() == [2, 3, 3, 4, 5, 5]
    assert ie.dims.shape == (6, 8)
    assert ie.dims[0].tolist() == [1024] + [-1] * 7
    assert ie.dtypes.tolist() == [11] * 6  # XLA's F32
    assert ie.types.tolist() == [0] * 6
    assert ie.get_tensor_size(0) == 1024
    with pytest.raises(IndexError):
        ie.get_tensor_size(6)
    uids = nf.uids.astype(np.int64)
    assert ie.uids[0] == (uids[0] << 32) | uids[2]
    oe = obs.out_edge_features
    assert oe.srcs.tolist() == [0, 1, 2, 2, 3, 4]
    assert oe.dsts.tolist() == [2, 3, 3, 4, 5, 5]


def test_out_tensor_size_conventions():
    env = hlogym.Env(SHARED)
    own = env.observation().node_features.out_tensor_sizes
    hloenv = env.observation(hloenv_out_tensor_sizes=True).node_features.out_tensor_sizes
    # The tuple's own size counts 1; HloEnv's: size x users (0 for the root).
    assert own.tolist() == [1024, 1024, 1024, 1024, 1024, 1]
    assert hloenv.tolist() == [1024, 1024, 2048, 1024, 1024, 0]


def test_dtypes_shapes_and_zero_copy_at_a_pause():
    env = hlogym.Env(SHARED)
    env.start_pipeline("general-fusion-vertical")
    obs = env.observation()
    n = obs.num_nodes
    for name, dtype in CSR.items():
        arr = getattr(obs, name)
        assert arr.dtype == dtype, name
        assert arr.ndim == 1, name
        assert arr.flags.owndata is False and arr.base is not None, name
    nf = obs.node_features
    for name, dtype in NODE.items():
        arr = getattr(nf, name)
        assert arr.dtype == dtype, name
        assert arr.flags.owndata is False and arr.base is not None, name
        if name not in ("opcode_attrs", "num_opcode_attrs"):
            assert arr.shape == (n,), name
    assert nf.num_opcode_attrs.shape == (2 * n,)
    assert nf.num_opcode_attrs.sum() == len(nf.opcode_attrs)
    assert isinstance(nf.names, list) and len(nf.names) == n
    assert all(isinstance(s, str) for s in nf.names)
    for features in (obs.in_edge_features, obs.out_edge_features):
        e = len(features)
        for name, dtype in EDGE.items():
            arr = getattr(features, name)
            assert arr.dtype == dtype, name
            assert arr.flags.owndata is False, name
            assert arr.shape == ((e, 8) if name in ("dims", "layouts", "lehmercodes") else (e,)), name
    # CSR consistency.
    assert len(obs.out_edge_offsets) == n + 1
    assert len(obs.in_edge_offsets) == n + 1
    assert obs.out_edge_offsets[-1] == len(obs.out_edge_indices) == len(obs.out_edge_features)
    assert obs.in_edge_offsets[-1] == len(obs.in_edge_indices) == len(obs.in_edge_features)
    assert np.array_equal(np.diff(obs.in_edge_offsets).astype(np.int32), nf.num_operands)
    assert np.array_equal(np.diff(obs.out_edge_offsets).astype(np.int32), nf.num_users)
    # The alternatives: decision order, names, opcode, flags.
    alt = obs.alternative_indices
    assert len(alt) == 4
    assert np.array_equal(np.flatnonzero(nf.is_alternative), np.sort(alt))
    assert [nf.names[i] for i in alt] == env.alternative_names()
    alt_opcode = [k for k in range(hlogym.num_opcodes()) if hlogym.opcode_name(k) == "alternatives"]
    assert len(alt_opcode) == 1
    assert set(nf.opcodes[alt].tolist()) == {alt_opcode[0]}
    # Each alternatives node's in-edges are its choices.
    assert np.diff(obs.in_edge_offsets)[alt].tolist() == env.choice_counts().tolist()


def test_views_share_one_buffer_and_outlive_everything():
    env = hlogym.Env(SHARED)
    obs = env.observation()
    a = obs.in_edge_offsets
    b = obs.in_edge_offsets
    assert a.ctypes.data == b.ctypes.data  # the same C++ buffer
    a[0] = 0  # writable; the environment is not affected
    dims = obs.in_edge_features.dims
    opcodes = obs.node_features.opcodes
    expected = opcodes.tolist()
    del obs, env
    gc.collect()
    # The arrays keep the C++ observation alive.
    assert opcodes.tolist() == expected
    assert dims[0, 0] == 1024


def test_numbering_errors_and_sizes():
    env = hlogym.Env(SHARED)
    with pytest.raises(ValueError, match="unknown opcode numbering 'xla'"):
        env.observation("xla")
    assert len(env.observation().opcode_attr_counts) == 2 * hlogym.num_opcodes("hlogym")


def test_summary():
    env = hlogym.Env(SHARED)
    s = env.summary("hloenv")
    k = hlogym.num_opcodes("hloenv")
    assert s.dtype == np.float32
    assert s.shape == (hlogym.summary_size("hloenv"),) == (k + len(hlogym.SUMMARY_STATS),)
    assert s.flags.owndata is False
    counts = s[:k]
    assert counts[75] == 2 and counts[47] == 1 and counts[1] == 1
    assert counts[72] == 1 and counts[115] == 1 and counts.sum() == 6
    stats = dict(zip(hlogym.SUMMARY_STATS, s[k:].tolist()))
    assert stats["nodes"] == 6
    assert stats["edges"] == 6
    assert stats["alternatives"] == 0
    assert stats["computations"] == 1
    assert stats["fusion_computations"] == 0
    assert stats["entry_nodes"] == 6
    assert stats["entry_parameters"] == 2
    assert stats["max_operands"] == 2
    assert stats["max_users"] == 2
    # The tuple counts 1 as a tensor and its leaves' bytes (2 x 4096).
    assert stats["max_tensor_size"] == 1024
    assert stats["total_tensor_size"] == 5 * 1024 + 1
    assert stats["max_bytes"] == 8192
    assert stats["total_bytes"] == 5 * 4096 + 8192
