// SPDX-License-Identifier: MIT
#include "sim/report/text_width.hpp"

#include "sim/report/table.hpp"
#include "sim/report/text_sink.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

namespace rsim {
namespace {

int width_index() {
  static const int index = std::ios_base::xalloc();
  return index;
}

}  // namespace

std::ostream& operator<<(std::ostream& out, TextWidth width) {
  out.iword(width_index()) = static_cast<long>(width.columns);
  return out;
}

std::size_t text_width(std::ostream& out) {
  const long columns = out.iword(width_index());
  return columns > 0 ? static_cast<std::size_t>(columns) : 0;
}

std::string wrap_text(const std::string& text, std::size_t width, const std::string& first,
                      const std::string& rest) {
  std::istringstream words_in(text);
  std::vector<std::string> words;
  for (std::string word; words_in >> word;) {
    words.push_back(word);
  }
  std::string result;
  std::string line = first;
  std::size_t line_width = display_width(first);
  bool line_has_word = false;
  // A figure stays with its unit: no break after a word that ends in a digit when the next
  // word starts with a letter or '%' ("33.53 ms", "76.2 %").
  const auto joined = [](const std::string& previous, const std::string& next) {
    const char last = previous.back();
    const unsigned char head = static_cast<unsigned char>(next.front());
    return last >= '0' && last <= '9' && (std::isalpha(head) != 0 || head == '%' || head >= 0x80U);
  };
  std::vector<std::string> groups;
  for (std::size_t index = 0; index < words.size(); ++index) {
    if (index > 0 && joined(words[index - 1], words[index])) {
      groups.back() += ' ' + words[index];
    } else {
      groups.push_back(words[index]);
    }
  }
  const std::size_t rest_width = display_width(rest);
  for (const std::string& word : groups) {
    const std::size_t word_width = display_width(word);
    if (width > rest_width && word_width > width - rest_width) {
      // A word no line can hold (a long path): on lines of its own, cut after a '/' where one
      // falls on the line, else at the width.
      if (line_has_word) {
        result += line + '\n';
        line = rest;
        line_width = rest_width;
      }
      std::string remaining = word;
      while (line_width + display_width(remaining) > width) {
        const std::size_t room = width > line_width ? width - line_width : 1;
        std::size_t cut = 0;
        std::size_t slash = 0;
        for (std::size_t at = 0, shown = 0; at < remaining.size();) {
          std::size_t next = at + 1;
          while (next < remaining.size() &&
                 (static_cast<unsigned char>(remaining[next]) & 0xC0U) == 0x80U) {
            ++next;
          }
          if (++shown > room) {
            break;
          }
          if (remaining[at] == '/') {
            slash = next;
          }
          cut = next;
          at = next;
        }
        cut = std::max<std::size_t>(slash > 0 ? slash : cut, 1);
        result += line + remaining.substr(0, cut) + '\n';
        remaining.erase(0, cut);
        line = rest;
        line_width = rest_width;
      }
      line += remaining;
      line_width += display_width(remaining);
      line_has_word = true;
      continue;
    }
    if (line_has_word && width > 0 && line_width + 1 + word_width > width) {
      result += line + '\n';
      line = rest;
      line_width = display_width(rest);
      line_has_word = false;
    }
    if (line_has_word) {
      line += ' ';
      ++line_width;
    }
    line += word;
    line_width += word_width;
    line_has_word = true;
  }
  return result + line + '\n';
}

void write_wrapped(std::ostream& out, const std::string& text, const std::string& first,
                   const std::string& rest) {
  if (TextSink* sink = text_sink(out)) {
    const auto begin = first.find_first_not_of(' ');
    const auto end = first.find_last_not_of(' ');
    sink->paragraph(
        begin == std::string::npos ? std::string() : first.substr(begin, end - begin + 1), text);
    return;
  }
  out << wrap_text(text, text_width(out), first, rest);
}

}  // namespace rsim
