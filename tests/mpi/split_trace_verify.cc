// split_trace_verify: reads the engine traces (RONDO_TRACE, Chrome JSON) of
// a split-tree run and checks that every collective step of tree level
// <= S ran inline on the application thread and every step above S on a
// progress thread.
//   split_trace_verify --s S TRACE.json...
// Prints a summary; exits 1 (with the offending events) on a violation, or
// when a side that must appear is missing (S >= 1: application steps;
// S < H: progress steps), 2 on bad arguments or unreadable files.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  int s = -1;
  std::vector<std::string> files;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--s" && a + 1 < argc) {
      s = std::atoi(argv[++a]);
    } else {
      files.push_back(arg);
    }
  }
  if (s < 0 || files.empty()) {
    std::fprintf(stderr, "usage: split_trace_verify --s S TRACE.json...\n");
    return 2;
  }
  int64_t app = 0, progress = 0, bad = 0, max_level = 0;
  std::map<std::string, int64_t> by_thread;
  for (const std::string& f : files) {
    std::ifstream in(f);
    if (!in) {
      std::fprintf(stderr, "split_trace_verify: cannot read %s\n", f.c_str());
      return 2;
    }
    nlohmann::json doc;
    try {
      in >> doc;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "split_trace_verify: %s: %s\n", f.c_str(),
                   e.what());
      return 2;
    }
    for (const auto& ev : doc["traceEvents"]) {
      const std::string name = ev.value("name", "");
      const std::string cat = ev.value("cat", "");
      if (cat != "run" && cat != "inline") continue;
      std::string::size_type at = name.find(".L");
      if (name.rfind("coll.up.L", 0) != 0 && name.rfind("coll.down.L", 0) != 0)
        continue;
      const int level = std::atoi(name.c_str() + at + 2);
      if (level > max_level) max_level = level;
      const std::string thread = ev["args"].value("thread", "?");
      ++by_thread[name + " " + thread + " " + cat];
      const bool on_app = thread == "app" && cat == "inline";
      const bool on_progress = thread == "progress" && cat == "run";
      const bool ok = level <= s ? on_app : on_progress;
      if (level <= s) app += ok; else progress += ok;
      if (!ok) {
        if (++bad <= 10)
          std::printf("FAIL %s: %s (level %d, S %d) ran on thread %s (%s)\n",
                      f.c_str(), name.c_str(), level, s, thread.c_str(),
                      cat.c_str());
      }
    }
  }
  for (const auto& [k, v] : by_thread) std::printf("  %-40s %lld\n", k.c_str(),
                                                   static_cast<long long>(v));
  if (s >= 1 && app == 0) {
    std::printf("FAIL no step ran on an application thread with S = %d\n", s);
    ++bad;
  }
  if (s < max_level && progress == 0) {
    std::printf("FAIL no step ran on a progress thread with S = %d\n", s);
    ++bad;
  }
  if (max_level == 0) {
    std::printf("FAIL no collective step in the traces\n");
    ++bad;
  }
  std::printf("split_trace_verify: %s (S = %d: %lld steps on application "
              "threads, %lld on progress threads, %lld misplaced)\n",
              bad ? "FAILED" : "ok", s, static_cast<long long>(app),
              static_cast<long long>(progress), static_cast<long long>(bad));
  return bad ? 1 : 0;
}
