// SPDX-License-Identifier: MIT
#include "harness.hpp"

#include "cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#ifndef RSIM_SOURCE_DIR
#error "the fuzz targets need RSIM_SOURCE_DIR, the folder of the shipped presets"
#endif

namespace rsim::fuzz {

void prepare_workspace() {
  namespace fs = std::filesystem;
  static bool prepared = false;
  if (prepared) {
    return;
  }
  prepared = true;
  const fs::path source(RSIM_SOURCE_DIR);
  const fs::path workspace =
      fs::temp_directory_path() / fmt::format("rsim-fuzz-{}", static_cast<long>(::getpid()));
  fs::remove_all(workspace);
  fs::create_directories(workspace);
  for (const char* folder : {"hardware", "models", "scenarios", "plans"}) {
    if (fs::is_directory(source / folder)) {
      fs::copy(source / folder, workspace / folder, fs::copy_options::recursive);
    } else {
      fs::create_directories(workspace / folder);
    }
  }
  fs::current_path(workspace);
  // Bare preset names resolve in the workspace's copies, not in the build's data folder.
  ::setenv("RSIM_DATA_DIR", workspace.c_str(), 1);
}

std::string write_input(const std::string& relative_path, const std::uint8_t* data,
                        std::size_t size) {
  std::ofstream file(relative_path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return relative_path;
}

void run_and_check(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"rsim"};
  for (const std::string& arg : args) {
    argv.push_back(arg.c_str());
  }
  std::ostringstream out;
  std::ostringstream err;
  const int code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  const auto fail = [&](std::string_view why) {
    std::fprintf(stderr, "rsim fuzz finding: %.*s\n  command: rsim %s\n  exit: %d\n  stderr: %s\n",
                 static_cast<int>(why.size()), why.data(),
                 fmt::format("{}", fmt::join(args, " ")).c_str(), code, err.str().c_str());
    std::abort();
  };
  if (code == 1) {
    fail("exit 1 (an internal error) on user input");
  }
  if (code != 0 && code != 2) {
    fail("an exit code other than 0 or 2");
  }
  if (code == 2 && err.str().find("rsim: ") == std::string::npos) {
    fail("an input error without the 'rsim:' prefix");
  }
}

std::vector<std::string> split_lines(const std::uint8_t* data, std::size_t size,
                                     std::size_t max_lines) {
  std::vector<std::string> lines;
  std::string line;
  for (std::size_t i = 0; i < size && lines.size() < max_lines; ++i) {
    if (data[i] == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line.push_back(static_cast<char>(data[i]));
    }
  }
  if (!line.empty() && lines.size() < max_lines) {
    lines.push_back(line);
  }
  return lines;
}

}  // namespace rsim::fuzz
