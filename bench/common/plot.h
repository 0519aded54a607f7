// Helpers shared by the benchmarks that draw their figures with a Python
// script (bench/*_plot.py, matplotlib from Debian's python3-matplotlib).
#ifndef RONDO_BENCH_COMMON_PLOT_H_
#define RONDO_BENCH_COMMON_PLOT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/common/report.h"

namespace rondo::bench {

// `path` made absolute from the directory `bazel run` was started in
// (BUILD_WORKING_DIRECTORY), else from the current directory; "" stays "".
std::string UserPath(const std::string& path);

// `rel` (a workspace path such as "bench/coll/bcast_rondo") in this binary's
// runfiles or the source tree; "" if absent.
std::string FindRunfile(const char* argv0, const std::string& rel);

// FindRunfile, else `rel` next to this binary in bazel-out/<cfg>/bin, as an
// absolute path (jobs may run from another directory). Throws
// std::runtime_error naming `rel` when it is nowhere.
std::string FindProgram(const char* argv0, const std::string& rel);

// `s` quoted for a POSIX shell command line.
std::string ShellQuote(const std::string& s);

// Runs `script_rel` (a workspace path such as "bench/overlap/overlap_plot.py",
// found in this binary's runfiles or the source tree) with a python3 that can
// import matplotlib, as `python3 SCRIPT ARGS...`. Without the script or
// matplotlib it says so on stdout and returns 0 (plots are optional);
// returns 1 when the script fails. `program` prefixes the messages.
int RunPythonScript(const char* argv0, const std::string& program,
                    const std::string& script_rel,
                    const std::vector<std::string>& args);

// RunPythonScript with the arguments JSON_PATH PLOT_DIR.
// Runs `script_rel` (a path in the workspace, e.g.
// "bench/splittree/splittree_plot.py", found in this binary's runfiles or the
// source tree) with a python3 that can import matplotlib, as `script JSON_PATH
// PLOT_DIR`. Without the script or matplotlib it says so on stdout and returns
// 0 (plots are optional); returns 1 when the script fails. `program`
// prefixes the messages.
int RunPlotScript(const char* argv0, const std::string& program,
                  const std::string& script_rel, const std::string& json_path,
                  const std::string& plot_dir);

// The end of a benchmark that draws its figures from its JSON: writes
// `report` to `json_arg` (made absolute with UserPath; when empty and a
// plot directory is given, PLOT_DIR/<program>.json), then, with a plot
// directory (created), runs `script_rel` as RunPlotScript does. Returns
// the script's status (0 without a plot directory).
int WriteJsonAndPlot(const char* argv0, const std::string& program,
                     const Report& report, const nlohmann::json& machine_extra,
                     const std::string& json_arg,
                     const std::string& plot_dir_arg,
                     const std::string& script_rel);

}  // namespace rondo::bench

#endif  // RONDO_BENCH_COMMON_PLOT_H_
