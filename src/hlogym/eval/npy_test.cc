#include "hlogym/eval/npy.h"

#include <zip.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

Shape S(const char* text) {
  auto s = ParseShape(text);
  EXPECT_TRUE(s.ok()) << text;
  return s.ok() ? *s : Shape();
}

Literal Const(const std::string& shape, const std::string& value) {
  auto m = ParseModule("HloModule m\nENTRY e {\n  ROOT c = " + shape +
                       " constant(" + value + ")\n}\n");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return Literal();
  return (*m)->entry_computation()->root_instruction()->literal();
}

// A fresh, empty directory under the test temp dir.
std::string TempPath(const std::string& name) {
  fs::path p = fs::path(::testing::TempDir()) /
               StrCat("hlogym_npy_test_", static_cast<int64_t>(getpid())) /
               name;
  fs::remove_all(p);
  fs::create_directories(p.parent_path());
  return p.string();
}

// .npy bytes with a hand-written header; the header is padded to 64 bytes.
std::string MakeNpy(int major, const std::string& dict,
                    const std::string& data) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (size_t k = 0; k < prefix - 8; ++k) {
    out.push_back(static_cast<char>((header.size() >> (8 * k)) & 0xFF));
  }
  return out + header + data;
}

template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return s;
}

std::string Reverse(std::string s, size_t unit) {
  for (size_t i = 0; i + unit <= s.size(); i += unit) {
    std::reverse(s.begin() + i, s.begin() + i + unit);
  }
  return s;
}

TEST(NpyTest, Descr) {
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kPred), "|b1");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kS4), "|i1");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kS8), "|i1");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kS64), "<i8");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kU1), "|u1");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kU32), "<u4");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kF16), "<f2");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kBF16), "<f4");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kF8E4M3FN), "<f4");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kF64), "<f8");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kC64), "<c8");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kC128), "<c16");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kToken), "");
}

TEST(NpyTest, EncodedLayout) {
  Literal l = Const("f32[2,3]", "{ {1, 2, 3}, {4, 5, 6} }");
  auto bytes = EncodeNpy(l);
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), 128u + 24u);
  EXPECT_EQ(bytes->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(static_cast<uint8_t>((*bytes)[8]), 118);  // header length
  EXPECT_EQ((*bytes)[9], 0);
  const std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(bytes->substr(10, 118),
            dict + std::string(117 - dict.size(), ' ') + "\n");
  EXPECT_EQ(bytes->substr(128), Bytes<float>({1, 2, 3, 4, 5, 6}));
  // Scalars and 1-D arrays use Python's tuple spelling.
  auto scalar = EncodeNpy(Const("s32[]", "7"));
  ASSERT_TRUE(scalar.ok());
  EXPECT_NE(scalar->find("'shape': (), }"), std::string::npos);
  auto vec = EncodeNpy(Const("pred[3]", "{true, false, true}"));
  ASSERT_TRUE(vec.ok());
  EXPECT_NE(vec->find("{'descr': '|b1', 'fortran_order': False, 'shape': "
                      "(3,), }"),
            std::string::npos);
  EXPECT_EQ(vec->substr(128), std::string("\x01\x00\x01", 3));
}

// Every element type survives a write and a read.
TEST(NpyTest, RoundTripEveryType) {
  for (int ti = 0; ti < static_cast<int>(PrimitiveType::kNumTypes); ++ti) {
    const PrimitiveType t = static_cast<PrimitiveType>(ti);
    if (!IsArrayType(t)) continue;
    SCOPED_TRACE(std::string(PrimitiveTypeName(t)));
    for (const DimVector& dims :
         {DimVector{}, DimVector{5}, DimVector{2, 3, 4}, DimVector{0, 3}}) {
      Shape shape(t, dims);
      auto lit = GenerateArray(shape, 1, 0);
      ASSERT_TRUE(lit.ok());
      auto bytes = EncodeNpy(*lit);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      auto back = DecodeNpy(*bytes, shape, "x.npy");
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, *lit);
    }
  }
  // Extreme values and specials.
  for (auto [shape, value] : std::vector<std::pair<std::string, std::string>>{
           {"s4[3]", "{-8, 7, -1}"},
           {"u4[2]", "{15, 0}"},
           {"s2[2]", "{-2, 1}"},
           {"u1[2]", "{1, 0}"},
           {"s64[2]", "{-9223372036854775808, 9223372036854775807}"},
           {"u64[1]", "{18446744073709551615}"},
           {"f32[4]", "{inf, -inf, nan, -0}"},
           {"bf16[3]", "{3.389e+38, -inf, nan}"},
           {"f8e4m3fn[3]", "{448, -nan, -0}"},
           {"f8e8m0fnu[2]", "{5.877e-39, nan}"},
           {"f4e2m1fn[2]", "{-6, 0.5}"},
           {"c128[1]", "{(1e300, -inf)}"}}) {
    Literal lit = Const(shape, value);
    auto bytes = EncodeNpy(lit);
    ASSERT_TRUE(bytes.ok()) << shape;
    auto back = DecodeNpy(*bytes, lit.shape(), "x.npy");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, lit) << shape << " " << back->ToString();
  }
}

TEST(NpyTest, FormatVersionsAndByteOrders) {
  const std::string dict =
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
  Literal want = Const("s32[2]", "{1, -2}");
  for (int major : {1, 2, 3}) {
    auto l = DecodeNpy(MakeNpy(major, dict, Bytes<int32_t>({1, -2})),
                       S("s32[2]"), "v.npy");
    ASSERT_TRUE(l.ok()) << major << " " << l.status();
    EXPECT_EQ(*l, want);
  }
  // Big-endian integers, floats and complex numbers (per component).
  auto be = DecodeNpy(
      MakeNpy(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,)}",
              Reverse(Bytes<int32_t>({1, -2}), 4)),
      S("s32[2]"), "be.npy");
  ASSERT_TRUE(be.ok()) << be.status();
  EXPECT_EQ(*be, want);
  auto bc = DecodeNpy(
      MakeNpy(1, "{'descr': '>c8', 'fortran_order': False, 'shape': (1,)}",
              Reverse(Bytes<float>({1.5f, -2.0f}), 4)),
      S("c64[1]"), "bc.npy");
  ASSERT_TRUE(bc.ok()) << bc.status();
  EXPECT_EQ(bc->GetComplex(0), std::complex<double>(1.5, -2.0));
  auto bh = DecodeNpy(
      MakeNpy(1, "{'descr': '>f2', 'fortran_order': False, 'shape': ()}",
              std::string("\x3c\x00", 2)),
      S("f16[]"), "bh.npy");
  ASSERT_TRUE(bh.ok()) << bh.status();
  EXPECT_EQ(bh->GetAsDouble(0), 1.0);
  // Native order '=' and the '?' bool spelling; double-quoted keys.
  auto nat = DecodeNpy(
      MakeNpy(1,
              "{\"descr\": \"=u2\", \"fortran_order\": False, \"shape\": "
              "(1, 1)}",
              Bytes<uint16_t>({513})),
      S("u16[1,1]"), "n.npy");
  ASSERT_TRUE(nat.ok()) << nat.status();
  EXPECT_EQ(nat->GetAsInt64(0), 513);
  auto b = DecodeNpy(
      MakeNpy(1, "{'descr': '?', 'fortran_order': False, 'shape': (3,)}",
              std::string("\x00\x02\x01", 3)),
      S("pred[3]"), "b.npy");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, Const("pred[3]", "{false, true, true}"));
}

TEST(NpyTest, FortranOrder) {
  // Column-major [[1, 2, 3], [4, 5, 6]] is 1 4 2 5 3 6.
  auto l = DecodeNpy(
      MakeNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
              Bytes<float>({1, 4, 2, 5, 3, 6})),
      S("f32[2,3]"), "f.npy");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(*l, Const("f32[2,3]", "{ {1, 2, 3}, {4, 5, 6} }"));
  // Rank 3: element (i,j,k) at i + 2j + 4k.
  std::vector<int16_t> col(2 * 2 * 3);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) col[i + 2 * j + 4 * k] = 100 * i + 10 * j + k;
  std::string data(reinterpret_cast<const char*>(col.data()), col.size() * 2);
  auto l3 = DecodeNpy(
      MakeNpy(1,
              "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 2, 3), }",
              data),
      S("s16[2,2,3]"), "f3.npy");
  ASSERT_TRUE(l3.ok()) << l3.status();
  for (int64_t e = 0; e < 12; ++e) {
    const int64_t i = e / 6, j = (e / 3) % 2, k = e % 3;
    EXPECT_EQ(l3->GetAsInt64(e), 100 * i + 10 * j + k);
  }
}

TEST(NpyTest, NarrowFloatsRoundToNearestEven) {
  // bf16 neighbours of 1: 1, 1.0078125, 1.015625. Halfway points go to the
  // even mantissa.
  auto l = DecodeNpy(
      MakeNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,)}",
              Bytes<double>({1.00390625, 1.01171875, 1.0039063, -0.0})),
      S("bf16[4]"), "b.npy");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->GetAsDouble(0), 1.0);
  EXPECT_EQ(l->GetAsDouble(1), 1.015625);
  EXPECT_EQ(l->GetAsDouble(2), 1.0078125);
  EXPECT_EQ(l->GetBits(3), 0x8000u);
  // From float16 and float32.
  auto h = DecodeNpy(
      MakeNpy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1,)}",
              std::string("\x00\x3e", 2)),  // 1.5
      S("f8e4m3fn[1]"), "h.npy");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->GetAsDouble(0), 1.5);
  auto f = DecodeNpy(
      MakeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
              Bytes<float>({0.3f, 7.0f})),
      S("f4e2m1fn[2]"), "f.npy");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->GetAsDouble(0), 0.5);  // 0.3 is nearer 0.5 than 0
  EXPECT_EQ(f->GetAsDouble(1), 6.0);  // overflow saturates (no inf/nan)
}

TEST(NpyTest, Errors) {
  const std::string f64x3 =
      MakeNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
              Bytes<double>({1, 2, 3}));
  auto shape = DecodeNpy(f64x3, S("f32[2,3]"), "param1.npy");
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().message(),
            "param1.npy: expected f32[2,3] (as float32), got float64 (3,)");
  auto dims = DecodeNpy(f64x3, S("f64[2]"), "p.npy");
  EXPECT_EQ(dims.status().message(),
            "p.npy: expected f64[2] (as float64), got float64 (3,)");
  auto narrow = DecodeNpy(
      MakeNpy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': ()}",
              Bytes<int32_t>({1})),
      S("bf16[]"), "n.npy");
  EXPECT_EQ(narrow.status().message(),
            "n.npy: expected bf16[] (as float16, float32 or float64), got "
            "int32 ()");
  auto range = DecodeNpy(
      MakeNpy(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,)}",
              std::string("\x01\x09", 2)),
      S("s4[2]"), "r.npy");
  EXPECT_EQ(range.status().message(),
            "r.npy: value 9 at flat index 1 does not fit s4 [-8, 7]");
  auto urange = DecodeNpy(
      MakeNpy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1,)}",
              std::string("\x04", 1)),
      S("u2[1]"), "u.npy");
  EXPECT_EQ(urange.status().message(),
            "u.npy: value 4 at flat index 0 does not fit u2 [0, 3]");
  EXPECT_EQ(
      DecodeNpy("PK\x03\x04 not npy", S("f32[]"), "z.npy").status().message(),
      "z.npy: not a NumPy .npy file (bad magic)");
  std::string v4 = f64x3;
  v4[6] = 4;
  EXPECT_EQ(DecodeNpy(v4, S("f64[3]"), "v.npy").status().message(),
            "v.npy: unsupported .npy format version 4.0 (supported: 1.0, 2.0, "
            "3.0)");
  EXPECT_EQ(DecodeNpy(f64x3.substr(0, f64x3.size() - 1), S("f64[3]"), "t.npy")
                .status()
                .message(),
            "t.npy: data holds 23 bytes, float64 (3,) needs 24");
  auto structured =
      DecodeNpy(MakeNpy(1,
                        "{'descr': [('a', '<f4')], 'fortran_order': False, "
                        "'shape': (1,)}",
                        "abcd"),
                S("f32[1]"), "s.npy");
  EXPECT_EQ(structured.status().message(),
            "s.npy: malformed .npy header: structured dtypes are not "
            "supported at header offset 10");
  auto unicode = DecodeNpy(
      MakeNpy(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}",
              std::string(12, 'a')),
      S("f32[1]"), "u.npy");
  EXPECT_EQ(unicode.status().message(),
            "u.npy: unsupported dtype '<U3' (supported: bool, int8..int64, "
            "uint8..uint64, float16/32/64, complex64/128)");
  auto no_shape =
      DecodeNpy(MakeNpy(1, "{'descr': '<f4', 'fortran_order': False}", ""),
                S("f32[]"), "h.npy");
  EXPECT_EQ(no_shape.status().message(),
            "h.npy: malformed .npy header: no tuple 'shape'");
  EXPECT_FALSE(EncodeNpy(Literal::Unknown(S("f32[2]"))).ok());
  EXPECT_FALSE(EncodeNpy(Literal(S("(f32[2])"))).ok());
  EXPECT_EQ(ReadNpy("/nonexistent/x.npy", S("f32[]")).status().message(),
            "/nonexistent/x.npy: cannot open file");
}

TEST(NpyTest, AnyType) {
  auto l = DecodeNpyAnyType(
      MakeNpy(1, "{'descr': '>u8', 'fortran_order': False, 'shape': (1, 2)}",
              Reverse(Bytes<uint64_t>({5, 1ull << 63}), 8)),
      "a.npy");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->shape().ToString(false), "u64[1,2]");
  EXPECT_EQ(l->GetAsUint64(1), 1ull << 63);
}

TEST(NpyTest, LargeHeaderUsesVersion2) {
  // Each dimension of size 1 adds "1, " to the header: ranks around 21800
  // cross the 64 KiB limit of format 1.0.
  int writes_v1 = 0, writes_v2 = 0;
  for (int64_t rank : {21700, 21790, 21800, 21810, 21830, 22000}) {
    Literal l(Shape(PrimitiveType::kF32, DimVector(rank, 1)));
    l.SetFromDouble(0, 2.5);
    auto bytes = EncodeNpy(l);
    ASSERT_TRUE(bytes.ok());
    const int major = (*bytes)[6];
    const size_t prefix = major == 1 ? 10 : 12;
    EXPECT_EQ((bytes->size() - 4) % 64, 0u) << rank;
    EXPECT_EQ((*bytes)[bytes->size() - 5], '\n') << rank;
    (major == 1 ? writes_v1 : writes_v2)++;
    EXPECT_GE(bytes->size(), prefix + 4);
    auto back = DecodeNpy(*bytes, l.shape(), "big.npy");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, l);
  }
  EXPECT_GT(writes_v1, 0);
  EXPECT_GT(writes_v2, 0);
}

TEST(NpyTest, NpzRoundTripAndDeflate) {
  const std::string path = TempPath("a.npz");
  Literal a = Const("f32[2]", "{1, 2}");
  Literal b = Const("s8[]", "-3");
  std::vector<std::pair<std::string, const Literal*>> arrays = {{"x", &a},
                                                                {"y", &b}};
  ASSERT_TRUE(WriteNpz(arrays, path).ok());
  auto members = ReadNpz(path);
  ASSERT_TRUE(members.ok()) << members.status();
  ASSERT_EQ(members->size(), 2u);
  EXPECT_EQ((*members)[0].first, "x");
  EXPECT_EQ((*members)[1].first, "y");
  EXPECT_EQ(*DecodeNpy((*members)[0].second, a.shape(), "x"), a);
  EXPECT_EQ(*DecodeNpy((*members)[1].second, b.shape(), "y"), b);

  // A deflated archive, as numpy.savez_compressed writes.
  const std::string dpath = TempPath("d.npz");
  Literal ramp(S("f64[64]"));
  for (int i = 0; i < 64; ++i) ramp.SetFromDouble(i, i % 4);
  std::string bytes = *EncodeNpy(ramp);
  int err = 0;
  zip_t* za = zip_open(dpath.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(za, nullptr);
  zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
  zip_int64_t idx = zip_file_add(za, "param0.npy", src, 0);
  ASSERT_GE(idx, 0);
  zip_set_file_compression(za, idx, ZIP_CM_DEFLATE, 9);
  ASSERT_EQ(zip_close(za), 0);
  EXPECT_LT(fs::file_size(dpath), bytes.size());
  auto args = ReadArguments(dpath, {S("f64[64]")});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ((*args)[0].GetAsDouble(63), 3.0);

  // An archive of nothing.
  const std::string epath = TempPath("e.npz");
  ASSERT_TRUE(WriteOutputs(Literal(Shape::Tuple({})), epath).ok());
  auto empty = ReadNpz(epath);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(ReadNpz(TempPath("missing.npz")).ok());
}

TEST(NpyTest, ArgumentsAndOutputsNaming) {
  std::vector<Shape> params = {S("f32[2]"), S("(s32[], token[], (pred[1]))"),
                               S("token[]"), S("bf16[3]")};
  auto args = GenerateInputs(params, 3);
  ASSERT_TRUE(args.ok());
  for (const char* where : {"args_dir", "args.npz"}) {
    SCOPED_TRACE(where);
    const std::string path = TempPath(where);
    ASSERT_TRUE(WriteArguments(*args, path).ok());
    if (std::string(where) == "args_dir") {
      EXPECT_TRUE(fs::exists(fs::path(path) / "param3.npy"));
    } else {
      auto members = ReadNpz(path);
      ASSERT_TRUE(members.ok());
      std::vector<std::string> names;
      for (auto& [n, b] : *members) names.push_back(n);
      EXPECT_EQ(names, (std::vector<std::string>{"param0", "param1", "param2",
                                                 "param3"}));
    }
    auto back = ReadArguments(path, params);
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_EQ(back->size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ((*back)[i], (*args)[i]) << i;
    // Fewer parameters than files: the extra one is reported.
    auto fewer = ReadArguments(path, {params[0], params[1]});
    ASSERT_FALSE(fewer.ok());
    EXPECT_NE(fewer.status().message().find("param3"), absl::string_view::npos)
        << fewer.status();
    // More parameters than files: the missing one is reported.
    std::vector<Shape> more = params;
    more.push_back(S("f32[]"));
    auto missing = ReadArguments(path, more);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.status().message().find("param4"),
              absl::string_view::npos)
        << missing.status();
  }
  auto wrong = ReadArguments(TempPath("args.npz"), params);
  EXPECT_EQ(wrong.status().message(),
            StrCat(TempPath("args.npz"), ": no such file or directory"));

  // Outputs: leaves of the result, depth-first, tokens skipped.
  Literal result = Const("(f32[2], (s32[], pred[]))", "({1, 2}, (3, true))");
  const std::string out = TempPath("out.npz");
  ASSERT_TRUE(WriteOutputs(result, out).ok());
  auto members = ReadNpz(out);
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 3u);
  EXPECT_EQ((*members)[2].first, "out2");
  EXPECT_EQ(*DecodeNpy((*members)[1].second, S("s32[]"), "o"),
            Const("s32[]", "3"));
  const std::string dir = TempPath("outdir/nested");
  ASSERT_TRUE(WriteOutputs(result, dir).ok());
  auto o0 = ReadNpy((fs::path(dir) / "out0.npy").string(), S("f32[2]"));
  ASSERT_TRUE(o0.ok()) << o0.status();
  EXPECT_EQ(*o0, Const("f32[2]", "{1, 2}"));
}

TEST(NpyTest, UnexpectedNpzMember) {
  const std::string path = TempPath("bad.npz");
  Literal a = Const("f32[]", "1");
  std::vector<std::pair<std::string, const Literal*>> arrays = {
      {"param0", &a}, {"weights", &a}};
  ASSERT_TRUE(WriteNpz(arrays, path).ok());
  auto r = ReadArguments(path, {S("f32[]")});
  EXPECT_EQ(r.status().message(),
            StrCat(path,
                   ": unexpected member 'weights' (the entry has 1 parameter "
                   "arrays, named param0, param1, ...)"));
  auto typed = ReadArguments(path, {S("s32[]")});
  ASSERT_FALSE(typed.ok());
  auto opaque = ReadArguments(path, {Shape::Opaque()});
  EXPECT_EQ(opaque.status().message(),
            "parameter 0 has a opaque[] value, which cannot be read from an "
            "array file");
}

}  // namespace
}  // namespace hlogym
