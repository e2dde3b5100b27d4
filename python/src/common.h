// Shared helpers of the extension module: Status to Python exceptions and
// zero-copy numpy views.
#ifndef HLOGYM_PYTHON_SRC_COMMON_H_
#define HLOGYM_PYTHON_SRC_COMMON_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlogym/env/observation.h"
#include "hlogym/ir/module.h"

namespace hlogym_python {

namespace py = pybind11;

// Carries an absl::Status out of a binding; the translator registered in
// RegisterErrors() turns it into the matching hlogym.*Error.
class StatusError : public std::exception {
 public:
  explicit StatusError(const absl::Status& status)
      : code_(status.code()),
        message_(status.message().data(), status.message().size()) {}
  absl::StatusCode code() const { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  absl::StatusCode code_;
  std::string message_;
};

inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw StatusError(status);
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) throw StatusError(value.status());
  return *std::move(value);
}

// Raises hlogym.<kind> from binding code (e.g. "InvalidArgumentError").
[[noreturn]] void ThrowInvalidArgument(const std::string& message);

// A numpy view of `size` elements at `data`, kept alive by `owner` (a
// capsule holding a shared_ptr). Empty views point at a static element so
// that every view is a view (no array owns its data).
template <typename T>
py::array MakeView(const T* data, std::vector<py::ssize_t> shape,
                   py::handle owner) {
  static const T kEmpty{};
  const T* ptr = data == nullptr ? &kEmpty : data;
  return py::array_t<T>(std::move(shape), ptr, owner);
}

// A capsule owning a copy of `p`.
template <typename T>
py::capsule OwnerCapsule(std::shared_ptr<T> p) {
  return py::capsule(new std::shared_ptr<T>(std::move(p)), [](void* v) {
    delete static_cast<std::shared_ptr<T>*>(v);
  });
}

// Moves `v` into a numpy array without copying its elements.
template <typename T>
py::array VectorToNumpy(std::vector<T> v) {
  auto owned = std::make_shared<std::vector<T>>(std::move(v));
  const py::ssize_t n = static_cast<py::ssize_t>(owned->size());
  const T* data = owned->data();
  return MakeView<T>(data, {n}, OwnerCapsule(std::move(owned)));
}

// Observations of a module (observation.cc); `numbering` is "hlogym" or
// "hloenv". Both release the GIL while building.
std::shared_ptr<hlogym::Observation> BuildObservationOf(
    const hlogym::Module& module, const std::string& numbering,
    bool hloenv_out_tensor_sizes);
py::array SummaryOf(const hlogym::Module& module, const std::string& numbering);

// Registration of each part of the module (one file each).
void RegisterErrors(py::module_& m);
void RegisterEnv(py::module_& m);
void RegisterObservation(py::module_& m);
void RegisterSearch(py::module_& m);

}  // namespace hlogym_python

#endif  // HLOGYM_PYTHON_SRC_COMMON_H_
