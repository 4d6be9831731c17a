// SPDX-License-Identifier: MIT
// The fuzz targets' main() where libFuzzer is not there (g++ builds): replays every input it is
// given, then mutates them at random (no coverage feedback) until the time budget is spent.
// It takes libFuzzer's spelling of the options it shares, so CTest runs either binary alike:
//   TARGET [-max_total_time=S] [-seed=N] [-max_len=N] [-dict=FILE] PATH...
// (PATH: a file or a folder, read recursively). Before each input runs it is written to
// fuzz-TARGET.input in the starting folder; a crash leaves it there to reproduce with
// `TARGET fuzz-TARGET.input`.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

using Input = std::vector<std::uint8_t>;

Input read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return Input(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

/// libFuzzer's dictionary format: one `"token"` per line, optionally `name="token"`, with \\, \"
/// and \xNN escapes; # starts a comment.
std::vector<Input> read_dictionary(const std::filesystem::path& path) {
  std::vector<Input> tokens;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    const auto open = line.find('"');
    const auto close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) {
      continue;
    }
    Input token;
    for (std::size_t i = open + 1; i < close; ++i) {
      if (line[i] == '\\' && i + 1 < close) {
        ++i;
        if (line[i] == 'x' && i + 2 < close) {
          token.push_back(static_cast<std::uint8_t>(std::stoi(line.substr(i + 1, 2), nullptr, 16)));
          i += 2;
          continue;
        }
      }
      token.push_back(static_cast<std::uint8_t>(line[i]));
    }
    tokens.push_back(token);
  }
  return tokens;
}

class Mutator {
 public:
  Mutator(std::uint64_t seed, std::vector<Input> dictionary, std::size_t max_len)
      : random_(seed), dictionary_(std::move(dictionary)), max_len_(max_len) {}

  Input mutate(const std::vector<Input>& corpus) {
    Input input = corpus[pick(corpus.size())];
    const std::size_t steps = 1 + pick(4);
    for (std::size_t step = 0; step < steps; ++step) {
      apply(input, corpus);
    }
    if (input.size() > max_len_) {
      input.resize(max_len_);
    }
    return input;
  }

 private:
  std::size_t pick(std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(random_);
  }

  void insert(Input& input, const Input& bytes) {
    input.insert(input.begin() + static_cast<std::ptrdiff_t>(pick(input.size() + 1)), bytes.begin(),
                 bytes.end());
  }

  void apply(Input& input, const std::vector<Input>& corpus) {
    // Numbers at the edges of what rsim reads: zero, negatives, overflow of int64 and double,
    // denormals, and the non-finite spellings.
    static const std::vector<std::string_view> kNumbers{
        "0",          "-1",         "1e308", "1e309", "5e-324", "1e-320", "9223372036854775807",
        "2147483648", "4294967296", "nan",   "inf",   "-inf",   ".nan",   ".inf",
        "1e15",       "0.0"};
    switch (pick(input.empty() ? 3 : 9)) {
      case 0: {
        const auto& number = kNumbers[pick(kNumbers.size())];
        insert(input, Input(number.begin(), number.end()));
        break;
      }
      case 1:
        if (!dictionary_.empty()) {
          insert(input, dictionary_[pick(dictionary_.size())]);
        }
        break;
      case 2: {
        const Input& other = corpus[pick(corpus.size())];
        if (!other.empty()) {
          const std::size_t from = pick(other.size());
          const std::size_t length = 1 + pick(std::min<std::size_t>(other.size() - from, 64));
          insert(input, Input(other.begin() + static_cast<std::ptrdiff_t>(from),
                              other.begin() + static_cast<std::ptrdiff_t>(from + length)));
        }
        break;
      }
      case 3:
        input[pick(input.size())] ^= static_cast<std::uint8_t>(1U << pick(8));
        break;
      case 4:
        input[pick(input.size())] = static_cast<std::uint8_t>(pick(256));
        break;
      case 5: {
        const std::size_t from = pick(input.size());
        const std::size_t length = 1 + pick(std::min<std::size_t>(input.size() - from, 16));
        input.erase(input.begin() + static_cast<std::ptrdiff_t>(from),
                    input.begin() + static_cast<std::ptrdiff_t>(from + length));
        break;
      }
      case 6: {  // replace a run of digits with an edge number
        std::size_t at = pick(input.size());
        while (at < input.size() && (input[at] < '0' || input[at] > '9')) {
          ++at;
        }
        std::size_t end = at;
        while (end < input.size() &&
               ((input[end] >= '0' && input[end] <= '9') || input[end] == '.')) {
          ++end;
        }
        const auto& number = kNumbers[pick(kNumbers.size())];
        input.erase(input.begin() + static_cast<std::ptrdiff_t>(at),
                    input.begin() + static_cast<std::ptrdiff_t>(end));
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), number.begin(), number.end());
        break;
      }
      case 7: {
        const std::size_t from = pick(input.size());
        const std::size_t length = 1 + pick(std::min<std::size_t>(input.size() - from, 32));
        const Input copy(input.begin() + static_cast<std::ptrdiff_t>(from),
                         input.begin() + static_cast<std::ptrdiff_t>(from + length));
        insert(input, copy);
        break;
      }
      default:
        input.resize(pick(input.size()));
        break;
    }
  }

  std::mt19937_64 random_;
  std::vector<Input> dictionary_;
  std::size_t max_len_;
};

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  double max_total_time = 0;
  std::uint64_t seed = 1;
  std::size_t max_len = 4096;
  std::vector<Input> dictionary;
  std::vector<fs::path> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&](std::string_view flag) { return std::string(arg.substr(flag.size())); };
    if (arg.rfind("-max_total_time=", 0) == 0) {
      max_total_time = std::stod(value("-max_total_time="));
    } else if (arg.rfind("-seed=", 0) == 0) {
      seed = std::stoull(value("-seed="));
    } else if (arg.rfind("-max_len=", 0) == 0) {
      max_len = std::stoull(value("-max_len="));
    } else if (arg.rfind("-dict=", 0) == 0) {
      dictionary = read_dictionary(value("-dict="));
    } else if (arg.rfind('-', 0) == 0) {
      continue;  // a libFuzzer option this driver does not model (-timeout, -rss_limit_mb, …)
    } else {
      paths.emplace_back(arg);
    }
  }
  std::vector<fs::path> files;
  for (const fs::path& path : paths) {
    if (fs::is_directory(path)) {
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) {
          files.push_back(entry.path());
        }
      }
    } else {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());
  const std::string target = fs::path(argv[0]).filename().string();
  const fs::path record = fs::absolute("fuzz-" + target + ".input");
  LLVMFuzzerInitialize(&argc, &argv);  // after reading the inputs: it may change the folder

  std::vector<Input> corpus;
  for (const fs::path& file : files) {
    corpus.push_back(read_file(file));
  }
  const auto run = [&](const Input& input) {
    std::ofstream(record, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(input.data()),
               static_cast<std::streamsize>(input.size()));
    LLVMFuzzerTestOneInput(input.data(), input.size());
  };
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::size_t executions = 0;
  for (const Input& input : corpus) {
    run(input);
    ++executions;
  }
  const std::size_t replayed = executions;
  if (corpus.empty()) {
    corpus.emplace_back();
  }
  Mutator mutator(seed, std::move(dictionary), max_len);
  while (elapsed() < max_total_time) {
    run(mutator.mutate(corpus));
    ++executions;
  }
  fs::remove(record);
  std::printf("%s: %zu inputs replayed, %zu mutated in %.1f s (seed %llu): no finding\n",
              target.c_str(), replayed, executions - replayed, elapsed(),
              static_cast<unsigned long long>(seed));
  return 0;
}
