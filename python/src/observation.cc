// Bindings of the graph observation (HloEnv's HloGraph schema) as zero-copy
// numpy views, and of the summary vector.
#include "hlogym/env/observation.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "hlogym/env/env.h"
#include "hlogym/env/opcode_tables.h"
#include "hlogym/ir/str_util.h"

namespace hlogym_python {
namespace {

using hlogym::EdgeFeatures;
using hlogym::Env;
using hlogym::NodeFeatures;
using hlogym::Observation;
using hlogym::OpcodeNumbering;
using ObsPtr = std::shared_ptr<const Observation>;

OpcodeNumbering ParseNumbering(const std::string& s) {
  if (s == "hlogym") return OpcodeNumbering::kHloGym;
  if (s == "hloenv") return OpcodeNumbering::kHloEnv;
  ThrowInvalidArgument(hlogym::StrCat("unknown opcode numbering '", s,
                                      "' (known: hlogym, hloenv)"));
}

// Every array of one observation shares one capsule per access; the
// capsule keeps the C++ observation alive for as long as any view lives.
template <typename T>
py::array View(const ObsPtr& obs, const std::vector<T>& v) {
  return MakeView<T>(v.data(), {static_cast<py::ssize_t>(v.size())},
                     OwnerCapsule(obs));
}

// Per-edge slots (dims, layouts, lehmercodes) as an (E, 8) view.
py::array SlotView(const ObsPtr& obs, const std::vector<int64_t>& v) {
  const py::ssize_t rows =
      static_cast<py::ssize_t>(v.size()) / EdgeFeatures::kSlots;
  return MakeView<int64_t>(v.data(), {rows, EdgeFeatures::kSlots},
                           OwnerCapsule(obs));
}

struct NodeFeaturesView {
  ObsPtr obs;
  const NodeFeatures& f() const { return obs->node_features; }
};

struct EdgeFeaturesView {
  ObsPtr obs;
  bool in = true;
  const EdgeFeatures& f() const {
    return in ? obs->in_edge_features : obs->out_edge_features;
  }
};

// A property returning a view of one vector member of the features.
template <typename ViewT, typename T, typename Features>
void Field(py::class_<ViewT>& c, const char* name,
           std::vector<T> Features::*member, const char* doc) {
  c.def_property_readonly(
      name, [member](const ViewT& v) { return View(v.obs, v.f().*member); },
      doc);
}

}  // namespace

std::shared_ptr<Observation> BuildObservationOf(const hlogym::Module& module,
                                                const std::string& numbering,
                                                bool hloenv_out_tensor_sizes) {
  hlogym::ObservationOptions options;
  options.numbering = ParseNumbering(numbering);
  options.hloenv_out_tensor_sizes = hloenv_out_tensor_sizes;
  py::gil_scoped_release release;
  return std::make_shared<Observation>(
      ValueOrThrow(hlogym::BuildObservation(module, options)));
}

py::array SummaryOf(const hlogym::Module& module,
                    const std::string& numbering) {
  const OpcodeNumbering n = ParseNumbering(numbering);
  std::vector<float> v;
  {
    py::gil_scoped_release release;
    v = ValueOrThrow(hlogym::SummaryFeatures(module, n));
  }
  return VectorToNumpy(std::move(v));
}

void RegisterObservation(py::module_& m) {
  py::class_<NodeFeaturesView> nodes(m, "NodeFeatures",
                                     "Per-node features (length N unless "
                                     "noted); numpy views into the "
                                     "observation.");
  Field(nodes, "uids", &NodeFeatures::uids, "int32 instruction unique ids");
  nodes.def_property_readonly(
      "names",
      [](const NodeFeaturesView& v) {
        py::list names(v.f().names.size());
        for (size_t i = 0; i < v.f().names.size(); ++i) {
          names[i] = py::str(v.f().names[i]);
        }
        return names;
      },
      "instruction names (list[str], a new list per access)");
  Field(nodes, "gids", &NodeFeatures::gids,
        "uint64 computation position (entry = 0)");
  Field(nodes, "fused_comp_ids", &NodeFeatures::fused_comp_ids,
        "uint64 gid of a fusion's fused computation, 0 for other nodes");
  Field(nodes, "num_users", &NodeFeatures::num_users, "int32 out-degree");
  Field(nodes, "num_operands", &NodeFeatures::num_operands,
        "int32 in-degree (unique operands)");
  Field(nodes, "opcodes", &NodeFeatures::opcodes,
        "int32 opcode numbers in the chosen numbering");
  Field(nodes, "opcode_attrs", &NodeFeatures::opcode_attrs,
        "int32 concatenated per-node attribute vectors");
  Field(nodes, "num_opcode_attrs", &NodeFeatures::num_opcode_attrs,
        "int32, 2N: (int count, one-hot width) per node");
  Field(nodes, "is_alternative", &NodeFeatures::is_alternative, "uint8");
  Field(nodes, "is_in_fusion", &NodeFeatures::is_in_fusion, "uint8");
  Field(nodes, "in_tensor_sizes", &NodeFeatures::in_tensor_sizes, "int64");
  Field(nodes, "out_tensor_sizes", &NodeFeatures::out_tensor_sizes, "int64");
  Field(nodes, "has_max_in_tensor", &NodeFeatures::has_max_in_tensor, "uint8");
  Field(nodes, "has_max_out_tensor", &NodeFeatures::has_max_out_tensor,
        "uint8");
  Field(nodes, "normalized_num_group_inst",
        &NodeFeatures::normalized_num_group_inst,
        "float32 1 / instructions of the computation (0 in the entry)");
  nodes.def("__len__",
            [](const NodeFeaturesView& v) { return v.f().uids.size(); });

  py::class_<EdgeFeaturesView> edges(
      m, "EdgeFeatures",
      "Per-edge features in CSR order; dims, layouts and lehmercodes are "
      "(E, 8) views.");
  Field(edges, "uids", &EdgeFeatures::uids, "int64 (src uid << 32) | dst uid");
  Field(edges, "srcs", &EdgeFeatures::srcs, "int32 producer node indices");
  Field(edges, "dsts", &EdgeFeatures::dsts, "int32 consumer node indices");
  edges.def_property_readonly(
      "dims",
      [](const EdgeFeaturesView& v) { return SlotView(v.obs, v.f().dims); },
      "int64 (E, 8) producer dimensions, -1 padded");
  edges.def_property_readonly(
      "layouts",
      [](const EdgeFeaturesView& v) { return SlotView(v.obs, v.f().layouts); },
      "int64 (E, 8) producer minor_to_major, -1 padded");
  edges.def_property_readonly(
      "lehmercodes",
      [](const EdgeFeaturesView& v) {
        return SlotView(v.obs, v.f().lehmercodes);
      },
      "int64 (E, 8) Lehmer codes of the layouts");
  Field(edges, "types", &EdgeFeatures::types,
        "uint8 0: entry, 1: same non-entry computation, 2: across");
  Field(edges, "dtypes", &EdgeFeatures::dtypes,
        "int32 XLA PrimitiveType number of the producer");
  edges.def(
      "get_tensor_size",
      [](const EdgeFeaturesView& v, int64_t edge) {
        if (edge < 0 || edge >= v.f().size()) {
          throw py::index_error(hlogym::StrCat("edge ", edge, " out of range (",
                                               v.f().size(), " edges)"));
        }
        return v.f().TensorSize(edge);
      },
      py::arg("edge"), "|product of the 8 dims slots| of one edge");
  edges.def("__len__", [](const EdgeFeaturesView& v) { return v.f().size(); });

  py::class_<Observation, std::shared_ptr<Observation>> obs(m, "Observation",
                                                            R"doc(
The graph observation of a module (HloEnv's HloGraph). Arrays are zero-copy
views of this object's C++ buffers (they keep it alive); writing to them
changes this observation only, never the environment.)doc");
  auto csr = [&obs](const char* name, auto member, const char* doc) {
    obs.def_property_readonly(
        name,
        [member](const std::shared_ptr<Observation>& o) {
          return View(ObsPtr(o), (*o).*member);
        },
        doc);
  };
  csr("out_edge_offsets", &Observation::out_edge_offsets,
      "uint64 (N+1) CSR row pointers of users");
  csr("out_edge_indices", &Observation::out_edge_indices,
      "uint64 user node of each out-edge");
  csr("in_edge_offsets", &Observation::in_edge_offsets,
      "uint64 (N+1) CSR row pointers of unique operands");
  csr("in_edge_indices", &Observation::in_edge_indices,
      "uint64 operand node of each in-edge");
  csr("alternative_indices", &Observation::alternative_indices,
      "int32 node indices of the alternatives nodes (decision order)");
  csr("opcode_attr_counts", &Observation::opcode_attr_counts,
      "int32 (ints, one-hot width) per opcode number");
  obs.def_property_readonly("node_features",
                            [](const std::shared_ptr<Observation>& o) {
                              return NodeFeaturesView{o};
                            })
      .def_property_readonly("in_edge_features",
                             [](const std::shared_ptr<Observation>& o) {
                               return EdgeFeaturesView{o, true};
                             })
      .def_property_readonly("out_edge_features",
                             [](const std::shared_ptr<Observation>& o) {
                               return EdgeFeaturesView{o, false};
                             })
      .def_property_readonly("num_nodes", &Observation::num_nodes)
      .def_property_readonly(
          "num_edges",
          [](const Observation& o) { return o.in_edge_features.size(); })
      .def("__repr__", [](const Observation& o) {
        return hlogym::StrCat("<hlogym.Observation nodes=", o.num_nodes(),
                              " edges=", o.in_edge_features.size(),
                              " alternatives=", o.alternative_indices.size(),
                              ">");
      });

  py::class_<Env, std::shared_ptr<Env>> env =
      py::reinterpret_borrow<py::class_<Env, std::shared_ptr<Env>>>(
          m.attr("Env"));
  env.def(
         "observation",
         [](const Env& e, const std::string& numbering,
            bool hloenv_out_tensor_sizes) {
           return BuildObservationOf(e.module(), numbering,
                                     hloenv_out_tensor_sizes);
         },
         py::arg("numbering") = "hlogym",
         py::arg("hloenv_out_tensor_sizes") = false,
         "The graph observation (numbering: 'hlogym' or 'hloenv').")
      .def(
          "summary",
          [](const Env& e, const std::string& numbering) {
            return SummaryOf(e.module(), numbering);
          },
          py::arg("numbering") = "hlogym",
          "Fixed-size float32 vector: opcode counts, then the summary "
          "statistics (see SUMMARY_STATS).");

  m.def(
      "num_opcodes",
      [](const std::string& n) {
        return hlogym::NumOpcodes(ParseNumbering(n));
      },
      py::arg("numbering") = "hlogym");
  m.def(
      "opcode_name",
      [](int32_t number, const std::string& n) {
        return std::string(hlogym::OpcodeNumberName(number, ParseNumbering(n)));
      },
      py::arg("number"), py::arg("numbering") = "hlogym",
      "Opcode text of a number ('' when out of range).");
  m.def(
      "summary_size",
      [](const std::string& n) {
        return hlogym::SummaryFeatureSize(ParseNumbering(n));
      },
      py::arg("numbering") = "hlogym");
  // Names of the statistics after the opcode counts, in order.
  m.attr("SUMMARY_STATS") = py::make_tuple(
      "nodes", "edges", "alternatives", "computations", "fusion_computations",
      "entry_nodes", "entry_parameters", "total_tensor_size", "max_tensor_size",
      "total_bytes", "max_bytes", "max_operands", "max_users");
  static_assert(hlogym::kNumSummaryStats == 13,
                "SUMMARY_STATS lists every SummaryStat");
}

}  // namespace hlogym_python
