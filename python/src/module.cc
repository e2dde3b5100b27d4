// The `hlogym._hlogym` extension module and its exception hierarchy.
//
// Every absl::Status error raises a subclass of hlogym.HloGymError that
// also derives from the matching builtin, so plain `except ValueError`
// works too:
//   INVALID_ARGUMENT, OUT_OF_RANGE  InvalidArgumentError(ValueError)
//   NOT_FOUND                       NotFoundError(LookupError)
//   FAILED_PRECONDITION             FailedPreconditionError(RuntimeError)
//   UNIMPLEMENTED                   UnimplementedError(NotImplementedError)
//   DEADLINE_EXCEEDED               DeadlineExceededError(TimeoutError)
//   anything else                   InternalError(RuntimeError)
// The exception's `code` attribute is the status code's name.
#include <pybind11/pybind11.h>

#include <string>

#include "common.h"

namespace hlogym_python {
namespace {

struct ErrorTypes {
  PyObject* base = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* not_found = nullptr;
  PyObject* failed_precondition = nullptr;
  PyObject* unimplemented = nullptr;
  PyObject* deadline = nullptr;
  PyObject* internal = nullptr;
};

// Owned for the life of the interpreter (module objects are never freed).
ErrorTypes& Types() {
  static ErrorTypes types;
  return types;
}

PyObject* NewError(py::module_& m, const char* name, PyObject* bases,
                   const char* doc) {
  std::string qualified = std::string("hlogym._hlogym.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases,
                                             /*dict=*/nullptr);
  if (type == nullptr) throw py::error_already_set();
  // The module keeps a reference; ErrorTypes borrows another one.
  Py_INCREF(type);
  m.add_object(name, py::reinterpret_steal<py::object>(type));
  return type;
}

PyObject* Derived(py::module_& m, const char* name, PyObject* builtin,
                  const char* doc) {
  py::tuple bases =
      py::make_tuple(py::handle(Types().base), py::handle(builtin));
  return NewError(m, name, bases.ptr(), doc);
}

PyObject* TypeFor(absl::StatusCode code) {
  const ErrorTypes& t = Types();
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return t.invalid_argument;
    case absl::StatusCode::kNotFound:
      return t.not_found;
    case absl::StatusCode::kFailedPrecondition:
      return t.failed_precondition;
    case absl::StatusCode::kUnimplemented:
      return t.unimplemented;
    case absl::StatusCode::kDeadlineExceeded:
      return t.deadline;
    default:
      return t.internal;
  }
}

void RaiseStatus(absl::StatusCode code, const char* message) {
  PyObject* type = TypeFor(code);
  PyObject* exc = PyObject_CallFunction(type, "s", message);
  if (exc == nullptr) return;  // the call's own error is set
  std::string name = absl::StatusCodeToString(code);
  py::object code_name = py::str(name);
  PyObject_SetAttrString(exc, "code", code_name.ptr());
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
}

}  // namespace

void ThrowInvalidArgument(const std::string& message) {
  throw StatusError(absl::InvalidArgumentError(message));
}

void RegisterErrors(py::module_& m) {
  ErrorTypes& t = Types();
  t.base = NewError(m, "HloGymError", PyExc_Exception,
                    "Base class of every error raised by hlogym.");
  t.invalid_argument =
      Derived(m, "InvalidArgumentError", PyExc_ValueError,
              "A bad argument: a malformed module, a bad action, ...");
  t.not_found = Derived(m, "NotFoundError", PyExc_LookupError,
                        "An unknown name: pass, pipeline, agent, device, "
                        "environment id, or a missing file.");
  t.failed_precondition =
      Derived(m, "FailedPreconditionError", PyExc_RuntimeError,
              "A call in the wrong state, e.g. stepping a finished episode.");
  t.unimplemented = Derived(m, "UnimplementedError", PyExc_NotImplementedError,
                            "A feature that is not supported.");
  t.deadline = Derived(m, "DeadlineExceededError", PyExc_TimeoutError,
                       "A time limit ran out.");
  t.internal = Derived(m, "InternalError", PyExc_RuntimeError,
                       "Any other failure inside the library.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      RaiseStatus(e.code(), e.what());
    }
  });
}

}  // namespace hlogym_python

PYBIND11_MODULE(_hlogym, m) {
  m.doc() =
      "HloGym's C++ core: environments over XLA HLO modules, graph "
      "observations and search agents.";
  hlogym_python::RegisterErrors(m);
  hlogym_python::RegisterEnv(m);
  hlogym_python::RegisterObservation(m);
  hlogym_python::RegisterSearch(m);
}
