// SPDX-License-Identifier: MIT
// rsim._rsim: the C++ library behind the Python module. One entry point, the command line run
// in-process: the Python layer (rsim/__init__.py) builds the arguments and reads the JSON, so
// what Python returns is what `rsim … --format json` prints, key for key.
#include "cli.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// Runs `rsim ARGS…` with the GIL released (sweeps and searches run on their own threads, and
// other Python threads — Dask's workers — go on meanwhile). A sweep or search installs its own
// SIGINT handler while it runs, so Ctrl-C stops it (exit 130) even with the GIL released.
py::tuple run(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"rsim"};
  for (const std::string& arg : args) {
    argv.push_back(arg.c_str());
  }
  std::ostringstream out;
  std::ostringstream err;
  int code = 0;
  {
    const py::gil_scoped_release release;
    code = rsim::run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  }
  return py::make_tuple(code, py::bytes(out.str()), py::bytes(err.str()));
}

}  // namespace

PYBIND11_MODULE(_rsim, module) {
  module.doc() = "rsim's C++ library: the command line, run in-process";
  module.def("run", &run, py::arg("args"),
             "Run `rsim ARGS...` in-process: (exit code, stdout bytes, stderr bytes)");
}
