// SPDX-License-Identifier: MIT
#pragma once

// Where a text report's paragraphs and tables go when not to characters: a stream can carry a
// TextSink (as it carries a TextWidth), and write_wrapped and TextTable::print hand it their
// paragraph or table whole. The HTML report renders the text report's every table and
// paragraph this way, from the same writers: no figure of the text is missing from the HTML.

#include <ostream>
#include <string>

namespace rsim {

class TextTable;

class TextSink {
 public:
  TextSink() = default;
  TextSink(const TextSink&) = delete;
  TextSink& operator=(const TextSink&) = delete;
  virtual ~TextSink() = default;
  /// A paragraph; `lead` is its first line's prefix without its spaces (a field's name:
  /// "result"), empty for a plain paragraph.
  virtual void paragraph(const std::string& lead, const std::string& text) = 0;
  virtual void table(const TextTable& table) = 0;
};

/// `out << SinkTo{&sink}` routes the stream's paragraphs and tables to `sink` (nullptr: back to
/// characters). The sink must outlive its use on the stream.
struct SinkTo {
  TextSink* sink = nullptr;
};
std::ostream& operator<<(std::ostream& out, SinkTo to);

/// The stream's sink, or nullptr.
TextSink* text_sink(std::ostream& out);

}  // namespace rsim
